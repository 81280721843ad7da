/work/main/obj/core/compile.o: core/compile.c core/compile.h core/buf.h \
 core/ir.h core/arena.h core/diag.h core/dtypes.h core/machine.h \
 core/options.h
core/compile.h:
core/buf.h:
core/ir.h:
core/arena.h:
core/diag.h:
core/dtypes.h:
core/machine.h:
core/options.h:

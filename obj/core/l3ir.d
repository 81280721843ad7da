/work/main/obj/core/l3ir.o: core/l3ir.c core/compile.h core/buf.h \
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

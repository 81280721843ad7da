/work/main/obj/core/artifacts.o: core/artifacts.c core/compile.h \
 core/buf.h core/ir.h core/arena.h core/diag.h core/dtypes.h \
 core/machine.h core/options.h
core/compile.h:
core/buf.h:
core/ir.h:
core/arena.h:
core/diag.h:
core/dtypes.h:
core/machine.h:
core/options.h:

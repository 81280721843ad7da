/work/main/obj/core/options.o: core/options.c core/options.h core/ir.h \
 core/arena.h core/buf.h core/diag.h core/dtypes.h core/machine.h
core/options.h:
core/ir.h:
core/arena.h:
core/buf.h:
core/diag.h:
core/dtypes.h:
core/machine.h:

/work/main/obj/core/layout.o: core/layout.c core/layout.h core/buf.h \
 core/ir.h core/arena.h core/diag.h core/dtypes.h core/machine.h
core/layout.h:
core/buf.h:
core/ir.h:
core/arena.h:
core/diag.h:
core/dtypes.h:
core/machine.h:

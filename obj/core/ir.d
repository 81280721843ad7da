/work/main/obj/core/ir.o: core/ir.c core/ir.h core/arena.h core/buf.h \
 core/diag.h core/dtypes.h core/num.h core/ops.h
core/ir.h:
core/arena.h:
core/buf.h:
core/diag.h:
core/dtypes.h:
core/num.h:
core/ops.h:

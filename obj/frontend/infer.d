/work/main/obj/frontend/infer.o: frontend/infer.c frontend/infer.h \
 core/ir.h core/arena.h core/buf.h core/diag.h core/dtypes.h core/ops.h
frontend/infer.h:
core/ir.h:
core/arena.h:
core/buf.h:
core/diag.h:
core/dtypes.h:
core/ops.h:

/work/main/obj/frontend/infer_move.o: frontend/infer_move.c \
 frontend/infer.h core/ir.h core/arena.h core/buf.h core/diag.h \
 core/dtypes.h core/ops.h
frontend/infer.h:
core/ir.h:
core/arena.h:
core/buf.h:
core/diag.h:
core/dtypes.h:
core/ops.h:

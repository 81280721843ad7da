/work/main/obj/planners/mask_lower.o: planners/mask_lower.c \
 planners/plan.h core/compile.h core/buf.h core/ir.h core/arena.h \
 core/diag.h core/dtypes.h core/machine.h core/options.h core/layout.h \
 frontend/infer.h core/ir.h core/ops.h
planners/plan.h:
core/compile.h:
core/buf.h:
core/ir.h:
core/arena.h:
core/diag.h:
core/dtypes.h:
core/machine.h:
core/options.h:
core/layout.h:
frontend/infer.h:
core/ir.h:
core/ops.h:

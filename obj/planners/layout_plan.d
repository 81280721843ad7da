/work/main/obj/planners/layout_plan.o: planners/layout_plan.c \
 planners/plan.h core/compile.h core/buf.h core/ir.h core/arena.h \
 core/diag.h core/dtypes.h core/machine.h core/options.h core/layout.h \
 core/ops.h frontend/infer.h core/ir.h
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
core/ops.h:
frontend/infer.h:
core/ir.h:

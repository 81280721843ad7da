/work/main/obj/planners/location.o: planners/location.c planners/plan.h \
 core/compile.h core/buf.h core/ir.h core/arena.h core/diag.h \
 core/dtypes.h core/machine.h core/options.h core/layout.h core/ops.h
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

/work/main/obj/scheduler/sim.o: scheduler/sim.c scheduler/scheduler.h \
 core/compile.h core/buf.h core/ir.h core/arena.h core/diag.h \
 core/dtypes.h core/machine.h core/options.h core/layout.h core/ops.h \
 planners/plan.h core/version.h /work/main/gen/sim_model_id.h
scheduler/scheduler.h:
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
planners/plan.h:
core/version.h:
/work/main/gen/sim_model_id.h:

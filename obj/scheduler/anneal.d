/work/main/obj/scheduler/anneal.o: scheduler/anneal.c \
 scheduler/sched_impl.h scheduler/scheduler.h core/compile.h core/buf.h \
 core/ir.h core/arena.h core/diag.h core/dtypes.h core/machine.h \
 core/options.h core/layout.h core/ops.h
scheduler/sched_impl.h:
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

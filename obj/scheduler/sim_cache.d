/work/main/obj/scheduler/sim_cache.o: scheduler/sim_cache.c \
 scheduler/scheduler.h core/compile.h core/buf.h core/ir.h core/arena.h \
 core/diag.h core/dtypes.h core/machine.h core/options.h core/layout.h
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

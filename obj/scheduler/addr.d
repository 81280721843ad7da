/work/main/obj/scheduler/addr.o: scheduler/addr.c scheduler/scheduler.h \
 core/compile.h core/buf.h core/ir.h core/arena.h core/diag.h \
 core/dtypes.h core/machine.h core/options.h core/layout.h
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

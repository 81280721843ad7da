/work/main/obj/driver/dashboard.o: driver/dashboard.c driver/driver.h \
 core/compile.h core/buf.h core/ir.h core/arena.h core/diag.h \
 core/dtypes.h core/machine.h core/options.h core/ops.h \
 scheduler/scheduler.h core/layout.h
driver/driver.h:
core/compile.h:
core/buf.h:
core/ir.h:
core/arena.h:
core/diag.h:
core/dtypes.h:
core/machine.h:
core/options.h:
core/ops.h:
scheduler/scheduler.h:
core/layout.h:

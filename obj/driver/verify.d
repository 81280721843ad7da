/work/main/obj/driver/verify.o: driver/verify.c driver/driver.h \
 core/compile.h core/buf.h core/ir.h core/arena.h core/diag.h \
 core/dtypes.h core/machine.h core/options.h core/ops.h planners/plan.h \
 core/layout.h frontend/infer.h core/ir.h
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
planners/plan.h:
core/layout.h:
frontend/infer.h:
core/ir.h:

/work/main/obj/scheduler/address.o: scheduler/address.c \
 scheduler/scheduler.h core/compile.h core/buf.h core/ir.h core/arena.h \
 core/diag.h core/dtypes.h core/machine.h core/options.h core/layout.h \
 isa/app.h core/arena.h core/buf.h core/ir.h core/machine.h
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
isa/app.h:
core/arena.h:
core/buf.h:
core/ir.h:
core/machine.h:

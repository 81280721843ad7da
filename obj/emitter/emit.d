/work/main/obj/emitter/emit.o: emitter/emit.c emitter/emit.h \
 core/compile.h core/buf.h core/ir.h core/arena.h core/diag.h \
 core/dtypes.h core/machine.h core/options.h isa/isa.h \
 emitter/emit_impl.h core/buf.h core/layout.h isa/app.h core/arena.h \
 core/ir.h core/machine.h emitter/memo.h emitter/params.h \
 scheduler/scheduler.h core/ops.h core/version.h isa/vsm.h isa/isa.h \
 isa/timing.h
emitter/emit.h:
core/compile.h:
core/buf.h:
core/ir.h:
core/arena.h:
core/diag.h:
core/dtypes.h:
core/machine.h:
core/options.h:
isa/isa.h:
emitter/emit_impl.h:
core/buf.h:
core/layout.h:
isa/app.h:
core/arena.h:
core/ir.h:
core/machine.h:
emitter/memo.h:
emitter/params.h:
scheduler/scheduler.h:
core/ops.h:
core/version.h:
isa/vsm.h:
isa/isa.h:
isa/timing.h:

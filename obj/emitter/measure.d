/work/main/obj/emitter/measure.o: emitter/measure.c emitter/emit.h \
 core/compile.h core/buf.h core/ir.h core/arena.h core/diag.h \
 core/dtypes.h core/machine.h core/options.h isa/isa.h \
 emitter/emit_impl.h core/buf.h core/layout.h isa/app.h core/arena.h \
 core/ir.h core/machine.h emitter/memo.h core/ops.h isa/timing.h \
 isa/isa.h isa/vsm.h
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
core/ops.h:
isa/timing.h:
isa/isa.h:
isa/vsm.h:

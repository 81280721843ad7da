/work/main/obj/emitter/window.o: emitter/window.c emitter/emit_impl.h \
 core/compile.h core/buf.h core/ir.h core/arena.h core/diag.h \
 core/dtypes.h core/machine.h core/options.h core/buf.h core/layout.h \
 isa/app.h core/arena.h core/ir.h core/machine.h emitter/resize.h \
 frontend/infer.h core/ops.h
emitter/emit_impl.h:
core/compile.h:
core/buf.h:
core/ir.h:
core/arena.h:
core/diag.h:
core/dtypes.h:
core/machine.h:
core/options.h:
core/buf.h:
core/layout.h:
isa/app.h:
core/arena.h:
core/ir.h:
core/machine.h:
emitter/resize.h:
frontend/infer.h:
core/ops.h:

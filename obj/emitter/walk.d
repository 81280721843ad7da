/work/main/obj/emitter/walk.o: emitter/walk.c emitter/emit_impl.h \
 core/compile.h core/buf.h core/ir.h core/arena.h core/diag.h \
 core/dtypes.h core/machine.h core/options.h core/buf.h core/layout.h \
 isa/app.h core/arena.h core/ir.h core/machine.h core/ops.h
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
core/ops.h:

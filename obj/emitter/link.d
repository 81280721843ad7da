/work/main/obj/emitter/link.o: emitter/link.c emitter/emit.h \
 core/compile.h core/buf.h core/ir.h core/arena.h core/diag.h \
 core/dtypes.h core/machine.h core/options.h isa/isa.h isa/app.h \
 core/arena.h core/buf.h core/ir.h core/layout.h core/machine.h \
 isa/timing.h isa/isa.h isa/mv.h core/ops.h isa/vsm.h
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
isa/app.h:
core/arena.h:
core/buf.h:
core/ir.h:
core/layout.h:
core/machine.h:
isa/timing.h:
isa/isa.h:
isa/mv.h:
core/ops.h:
isa/vsm.h:

/work/main/obj/emitter/params.o: emitter/params.c emitter/params.h \
 core/compile.h core/buf.h core/ir.h core/arena.h core/diag.h \
 core/dtypes.h core/machine.h core/options.h isa/app.h core/arena.h \
 core/buf.h core/ir.h core/layout.h core/machine.h core/options.h
emitter/params.h:
core/compile.h:
core/buf.h:
core/ir.h:
core/arena.h:
core/diag.h:
core/dtypes.h:
core/machine.h:
core/options.h:
isa/app.h:
core/arena.h:
core/buf.h:
core/ir.h:
core/layout.h:
core/machine.h:
core/options.h:

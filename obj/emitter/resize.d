/work/main/obj/emitter/resize.o: emitter/resize.c emitter/resize.h \
 core/compile.h core/buf.h core/ir.h core/arena.h core/diag.h \
 core/dtypes.h core/machine.h core/options.h core/ir.h core/ops.h
emitter/resize.h:
core/compile.h:
core/buf.h:
core/ir.h:
core/arena.h:
core/diag.h:
core/dtypes.h:
core/machine.h:
core/options.h:
core/ir.h:
core/ops.h:

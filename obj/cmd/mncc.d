/work/main/obj/cmd/mncc.o: cmd/mncc.c driver/app_asm.h core/buf.h \
 driver/driver.h core/compile.h core/buf.h core/ir.h core/arena.h \
 core/diag.h core/dtypes.h core/machine.h core/options.h emitter/emit.h \
 isa/isa.h core/ops.h core/version.h
driver/app_asm.h:
core/buf.h:
driver/driver.h:
core/compile.h:
core/buf.h:
core/ir.h:
core/arena.h:
core/diag.h:
core/dtypes.h:
core/machine.h:
core/options.h:
emitter/emit.h:
isa/isa.h:
core/ops.h:
core/version.h:

/work/main/obj/driver/app_asm.o: driver/app_asm.c driver/app_asm.h \
 core/buf.h isa/app.h core/arena.h core/ir.h core/arena.h core/buf.h \
 core/diag.h core/dtypes.h core/layout.h core/ir.h core/machine.h \
 core/machine.h core/diag.h frontend/onnx_load.h core/version.h isa/vsm.h \
 isa/isa.h
driver/app_asm.h:
core/buf.h:
isa/app.h:
core/arena.h:
core/ir.h:
core/arena.h:
core/buf.h:
core/diag.h:
core/dtypes.h:
core/layout.h:
core/ir.h:
core/machine.h:
core/machine.h:
core/diag.h:
frontend/onnx_load.h:
core/version.h:
isa/vsm.h:
isa/isa.h:

/work/main/obj/cmd/mnemu.o: cmd/mnemu.c core/diag.h emu/emu.h core/buf.h \
 isa/isa.h core/machine.h isa/timing.h isa/isa.h emu/emu_app.h emu/emu.h \
 core/ir.h core/arena.h core/buf.h core/diag.h core/dtypes.h \
 frontend/onnx_load.h core/version.h isa/vsm.h
core/diag.h:
emu/emu.h:
core/buf.h:
isa/isa.h:
core/machine.h:
isa/timing.h:
isa/isa.h:
emu/emu_app.h:
emu/emu.h:
core/ir.h:
core/arena.h:
core/buf.h:
core/diag.h:
core/dtypes.h:
frontend/onnx_load.h:
core/version.h:
isa/vsm.h:

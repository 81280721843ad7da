/work/main/obj/emu/emu_app.o: emu/emu_app.c emu/emu_app.h emu/emu.h \
 core/buf.h isa/isa.h core/machine.h isa/timing.h isa/isa.h core/ir.h \
 core/arena.h core/buf.h core/diag.h core/dtypes.h isa/app.h core/arena.h \
 core/layout.h core/ir.h core/machine.h core/diag.h isa/vsm.h
emu/emu_app.h:
emu/emu.h:
core/buf.h:
isa/isa.h:
core/machine.h:
isa/timing.h:
isa/isa.h:
core/ir.h:
core/arena.h:
core/buf.h:
core/diag.h:
core/dtypes.h:
isa/app.h:
core/arena.h:
core/layout.h:
core/ir.h:
core/machine.h:
core/diag.h:
isa/vsm.h:

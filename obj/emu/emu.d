/work/main/obj/emu/emu.o: emu/emu.c emu/emu_impl.h emu/emu.h core/buf.h \
 isa/isa.h core/machine.h isa/timing.h isa/isa.h core/diag.h \
 emu/emu_num.h core/num.h core/ir.h core/arena.h core/buf.h core/diag.h \
 core/dtypes.h isa/mv.h isa/vsm.h
emu/emu_impl.h:
emu/emu.h:
core/buf.h:
isa/isa.h:
core/machine.h:
isa/timing.h:
isa/isa.h:
core/diag.h:
emu/emu_num.h:
core/num.h:
core/ir.h:
core/arena.h:
core/buf.h:
core/diag.h:
core/dtypes.h:
isa/mv.h:
isa/vsm.h:

/work/main/obj/isa/app.o: isa/app.c core/num.h isa/app.h core/arena.h \
 core/buf.h core/ir.h core/arena.h core/buf.h core/diag.h core/dtypes.h \
 core/layout.h core/ir.h core/machine.h core/machine.h core/diag.h \
 core/dtypes.h core/fb.h isa/vsm.h isa/isa.h
core/num.h:
isa/app.h:
core/arena.h:
core/buf.h:
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
core/dtypes.h:
core/fb.h:
isa/vsm.h:
isa/isa.h:

/work/main/obj/cmd/mndump.o: cmd/mndump.c isa/app.h core/arena.h \
 core/buf.h core/ir.h core/arena.h core/buf.h core/diag.h core/dtypes.h \
 core/layout.h core/ir.h core/machine.h core/machine.h core/diag.h
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

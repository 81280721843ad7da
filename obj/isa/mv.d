/work/main/obj/isa/mv.o: isa/mv.c isa/mv.h isa/isa.h core/machine.h \
 core/diag.h
isa/mv.h:
isa/isa.h:
core/machine.h:
core/diag.h:

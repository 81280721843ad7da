/work/main/obj/isa/timing.o: isa/timing.c isa/timing.h isa/isa.h \
 core/machine.h isa/mv.h
isa/timing.h:
isa/isa.h:
core/machine.h:
isa/mv.h:

/work/main/obj/isa/isa.o: isa/isa.c isa/isa.h
isa/isa.h:

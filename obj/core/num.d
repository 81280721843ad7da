/work/main/obj/core/num.o: core/num.c core/num.h
core/num.h:

/work/main/obj/core/diag.o: core/diag.c core/diag.h
core/diag.h:

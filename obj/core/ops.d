/work/main/obj/core/ops.o: core/ops.c core/ops.h
core/ops.h:

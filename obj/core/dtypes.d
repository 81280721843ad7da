/work/main/obj/core/dtypes.o: core/dtypes.c core/dtypes.h
core/dtypes.h:

/work/main/obj/core/buf.o: core/buf.c core/buf.h core/diag.h
core/buf.h:
core/diag.h:

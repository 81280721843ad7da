/work/main/obj/core/arena.o: core/arena.c core/arena.h core/buf.h \
 core/diag.h
core/arena.h:
core/buf.h:
core/diag.h:

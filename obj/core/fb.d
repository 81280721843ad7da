/work/main/obj/core/fb.o: core/fb.c core/fb.h core/arena.h core/buf.h \
 core/diag.h
core/fb.h:
core/arena.h:
core/buf.h:
core/diag.h:

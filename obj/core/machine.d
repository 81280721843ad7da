/work/main/obj/core/machine.o: core/machine.c core/machine.h core/buf.h \
 core/diag.h
core/machine.h:
core/buf.h:
core/diag.h:

/work/main/obj/isa/vsm_bin.o: isa/vsm_bin.c core/diag.h isa/vsm.h \
 core/buf.h isa/isa.h
core/diag.h:
isa/vsm.h:
core/buf.h:
isa/isa.h:

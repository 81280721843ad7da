/work/main/obj/isa/vsm_text.o: isa/vsm_text.c core/diag.h isa/vsm.h \
 core/buf.h isa/isa.h
core/diag.h:
isa/vsm.h:
core/buf.h:
isa/isa.h:

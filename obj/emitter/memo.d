/work/main/obj/emitter/memo.o: emitter/memo.c emitter/memo.h core/diag.h
emitter/memo.h:
core/diag.h:

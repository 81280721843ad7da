/work/main/obj/frontend/bind.o: frontend/bind.c frontend/bind.h core/ir.h \
 core/arena.h core/buf.h core/diag.h core/dtypes.h core/options.h \
 core/ir.h frontend/onnx_load.h core/buf.h
frontend/bind.h:
core/ir.h:
core/arena.h:
core/buf.h:
core/diag.h:
core/dtypes.h:
core/options.h:
core/ir.h:
frontend/onnx_load.h:
core/buf.h:

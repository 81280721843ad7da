/work/main/obj/frontend/onnx_load.o: frontend/onnx_load.c \
 frontend/onnx_load.h core/buf.h core/ir.h core/arena.h core/buf.h \
 core/diag.h core/dtypes.h /work/main/gen/onnx.pb-c.h core/ops.h
frontend/onnx_load.h:
core/buf.h:
core/ir.h:
core/arena.h:
core/buf.h:
core/diag.h:
core/dtypes.h:
/work/main/gen/onnx.pb-c.h:
core/ops.h:

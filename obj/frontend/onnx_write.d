/work/main/obj/frontend/onnx_write.o: frontend/onnx_write.c \
 frontend/onnx_write.h core/compile.h core/buf.h core/ir.h core/arena.h \
 core/diag.h core/dtypes.h core/machine.h core/options.h \
 /work/main/gen/onnx.pb-c.h core/ops.h core/version.h
frontend/onnx_write.h:
core/compile.h:
core/buf.h:
core/ir.h:
core/arena.h:
core/diag.h:
core/dtypes.h:
core/machine.h:
core/options.h:
/work/main/gen/onnx.pb-c.h:
core/ops.h:
core/version.h:

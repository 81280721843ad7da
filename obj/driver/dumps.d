/work/main/obj/driver/dumps.o: driver/dumps.c driver/driver.h \
 core/compile.h core/buf.h core/ir.h core/arena.h core/diag.h \
 core/dtypes.h core/machine.h core/options.h frontend/onnx_write.h
driver/driver.h:
core/compile.h:
core/buf.h:
core/ir.h:
core/arena.h:
core/diag.h:
core/dtypes.h:
core/machine.h:
core/options.h:
frontend/onnx_write.h:

/work/main/obj/driver/passes.o: driver/passes.c driver/driver.h \
 core/compile.h core/buf.h core/ir.h core/arena.h core/diag.h \
 core/dtypes.h core/machine.h core/options.h frontend/onnx_write.h \
 frontend/bind.h core/ir.h core/options.h frontend/infer.h core/ops.h \
 frontend/onnx_load.h core/buf.h planners/plan.h core/layout.h \
 scheduler/scheduler.h emitter/emit.h isa/isa.h emitter/params.h \
 isa/app.h core/arena.h core/machine.h
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
frontend/bind.h:
core/ir.h:
core/options.h:
frontend/infer.h:
core/ops.h:
frontend/onnx_load.h:
core/buf.h:
planners/plan.h:
core/layout.h:
scheduler/scheduler.h:
emitter/emit.h:
isa/isa.h:
emitter/params.h:
isa/app.h:
core/arena.h:
core/machine.h:

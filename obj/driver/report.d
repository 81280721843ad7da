/work/main/obj/driver/report.o: driver/report.c driver/driver.h \
 core/compile.h core/buf.h core/ir.h core/arena.h core/diag.h \
 core/dtypes.h core/machine.h core/options.h core/version.h
driver/driver.h:
core/compile.h:
core/buf.h:
core/ir.h:
core/arena.h:
core/diag.h:
core/dtypes.h:
core/machine.h:
core/options.h:
core/version.h:

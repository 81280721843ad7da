# mncc — plain Makefile, explicit source lists.
#   make            build build/mncc (installs missing Debian packages first)
#   make demo       compile the bundled example model and print a summary
#   make check      every test (unit, golden, bad input, ONNX test-data sweep, ASan/UBSan)
#   make SAN=1      the same build with -fsanitize=address,undefined, in build/san (SAN=thread: build/tsan)
#   make bench      the benchmark tables (bench/suite.py): compile time, onnxruntime, scaling, schedules, mnemu

CC      ?= cc
ONNX_PROTO ?= /usr/include/onnx/onnx.proto
PYTHON  ?= /usr/bin/python3

ifeq ($(FUZZ),1)
# libFuzzer harnesses (make fuzz): every object built with clang for coverage and
# ASan+UBSan; the harnesses link libFuzzer's main
CC       = clang
BUILD   ?= build/fuzz
SANFLAGS = -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
OPT      = -O1 -g
else ifeq ($(SAN),thread)
# ThreadSanitizer (make check-tsan): Node Simulation's and Code Emit's threads
BUILD   ?= build/tsan
SANFLAGS = -fsanitize=thread
OPT      = -O1 -g
else ifeq ($(SAN),1)
BUILD   ?= build/san
SANFLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
OPT      = -O1 -g
else
BUILD   ?= build
SANFLAGS =
OPT      = -O2 -g
endif

CFLAGS_ALL = -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-missing-field-initializers \
             $(OPT) $(SANFLAGS) -pthread $(CFLAGS)
LDLIBS_ALL = $(SANFLAGS) -pthread -lprotobuf-c -lcjson -lzstd -lm $(LDFLAGS) $(LDLIBS)

# The folders, each on the ones below it (README, "Source layout"); a file is compiled
# with the include paths of its own folder and of those below only, so that an include
# of a higher layer fails to build:
#   core       the IR, its types and the machine (arena, diagnostics, options, layouts,
#              FlatBuffers, TensorProto files, the codegen dir's writer)
#   isa        VSM: the instruction table, its text and binary forms, the MV port model
#              and timing, GPFNApp
#   frontend   ONNX in and out, static shapes and constant folding
#   emu        mnemu's machine (on core and isa only)
#   planners   dtype, location, layout, Time-Slice and the graph lowerings
#   scheduler  Node Simulation, the schedulers, the address planner (Code Emit's timing
#              reached through MNCompile.code)
#   emitter    Code Emit and the linker
#   driver     the pass table, report.json, the dashboard, the verifier
#   cmd, tests everything
CORE_SRCS     = core/arena.c core/buf.c core/diag.c core/dtypes.c core/ir.c core/num.c core/ops.c core/machine.c \
                core/options.c core/version.c core/fb.c core/layout.c core/compile.c core/artifacts.c core/l3ir.c
ISA_SRCS      = isa/isa.c isa/mv.c isa/timing.c isa/vsm_text.c isa/vsm_bin.c isa/app.c
FRONTEND_SRCS = frontend/attrs.c frontend/bind.c frontend/onnx_load.c frontend/onnx_write.c frontend/infer.c frontend/infer_move.c frontend/unroll.c frontend/fold.c
EMU_SRCS      = emu/emu.c emu/emu_debug.c emu/emu_units.c emu/emu_mv.c emu/emu_app.c emu/emu_pool.c
PLANNER_SRCS  = planners/dtype.c planners/cse.c planners/bn_fold.c planners/gemm_fuse.c planners/noop_lower.c planners/pad_fold.c planners/shuffle_lower.c planners/bn_lower.c planners/lrn_lower.c planners/rnn_lower.c planners/einsum_lower.c planners/loss_lower.c planners/mod_lower.c planners/softmax_lower.c planners/stack_take.c planners/panel_lower.c planners/conv1d_lower.c planners/group_expand.c planners/convt_lower.c planners/d2s_lower.c planners/pool_lower.c planners/fc_lower.c planners/gemv_lower.c planners/conv_lower.c planners/mask_lower.c planners/resize_split.c planners/io_view.c planners/resize.c planners/location.c \
                planners/layout_plan.c planners/turn_plan.c planners/embed_plan.c planners/stencil_plan.c planners/tile_plan.c planners/time_slice.c
SCHED_SRCS    = scheduler/sim.c scheduler/sim_cache.c scheduler/sched.c scheduler/anneal.c scheduler/materialize.c scheduler/addr.c scheduler/address.c
EMIT_SRCS     = emitter/emit.c emitter/walk.c emitter/elementwise.c emitter/cast.c emitter/measure.c emitter/gather.c emitter/transfer.c emitter/window.c emitter/stencil.c emitter/rows.c emitter/rowmove.c emitter/blockmove.c emitter/turn.c emitter/quadmove.c emitter/exchange.c emitter/embed.c emitter/treereduce.c emitter/tile.c emitter/tile_chan.c emitter/tile_retile.c emitter/matmul.c emitter/allgather.c emitter/memo.c \
                emitter/link.c emitter/params.c
DRIVER_SRCS   = driver/app_asm.c driver/dumps.c driver/passes.c driver/report.c driver/dashboard.c driver/verify.c
COMPILER_SRCS = $(CORE_SRCS) $(ISA_SRCS) $(FRONTEND_SRCS) $(EMU_SRCS) $(PLANNER_SRCS) $(SCHED_SRCS) $(EMIT_SRCS) $(DRIVER_SRCS)
INC_core      = $(BUILD)/gen core
INC_isa       = core isa
INC_frontend  = $(BUILD)/gen core frontend
INC_emu       = core isa emu
INC_planners  = core frontend planners
INC_scheduler = $(BUILD)/gen core isa frontend planners scheduler
INC_emitter   = core isa frontend planners scheduler emitter
INC_driver    = $(BUILD)/gen core isa frontend emu planners scheduler emitter driver
INC_cmd       = $(INC_driver)
INC_tests     = $(INC_driver)
GEN_SRCS      = $(BUILD)/gen/onnx.pb-c.c
MNCC_SRCS     = cmd/mncc.c cmd/batch.c
MNEMU_SRCS    = cmd/mnemu.c
MNDUMP_SRCS   = cmd/mndump.c
UNIT_SRCS     = tests/unit/unit_main.c tests/unit/test_ir.c tests/unit/test_infer.c tests/unit/test_layout.c tests/unit/test_sched.c
SWEEP_SRCS    = tests/sweep/load_sweep.c
MUTATE_SRCS   = tests/sweep/mutate.c
RT_SRCS       = tests/vsm/roundtrip.c
FUZZ_TARGETS  = onnx app vsm config

LIB_OBJS   = $(COMPILER_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/onnx.pb-c.o
MNCC_OBJS  = $(MNCC_SRCS:%.c=$(BUILD)/obj/%.o)
MNEMU_OBJS = $(MNEMU_SRCS:%.c=$(BUILD)/obj/%.o)
MNDUMP_OBJS = $(MNDUMP_SRCS:%.c=$(BUILD)/obj/%.o)
UNIT_OBJS  = $(UNIT_SRCS:%.c=$(BUILD)/obj/%.o)
SWEEP_OBJS = $(SWEEP_SRCS:%.c=$(BUILD)/obj/%.o)
MUTATE_OBJS = $(MUTATE_SRCS:%.c=$(BUILD)/obj/%.o)
RT_OBJS = $(RT_SRCS:%.c=$(BUILD)/obj/%.o)

.PHONY: all deps test-deps zoo-deps same npm-deps demo check check-fast check-san check-tsan unit golden sweep bench bench-quick bench-figures zoo-compile regen-golden clean conformance readme-conformance readme-presets real install fuzz zoo
all: $(BUILD)/mncc $(BUILD)/mnemu $(BUILD)/mndump

$(BUILD)/.deps-ok: mk/deps.sh
	@mkdir -p $(BUILD)
	@sh mk/deps.sh
	@touch $@
deps: $(BUILD)/.deps-ok
test-deps:
	@sh mk/deps.sh --test

zoo-deps:
	@sh mk/deps.sh --zoo

# the artifacts of this tree's build against those of revision BASE (default HEAD), over
# the test models, the bench graphs and torchvision exports: byte-identical but for
# timings (tests/same/compare.py; QUICK=1 takes every eighth test model)
BASE ?= HEAD
same: zoo-deps $(BUILD)/mncc
	@$(PYTHON) tests/same/compare.py $(BASE) --head $(BUILD)/mncc $(if $(QUICK),--quick)

# the proto comes with libonnx-dev, which deps installs: on a fresh machine the file is
# not there yet when make first looks, so it is made by installing the packages
$(ONNX_PROTO): | $(BUILD)/.deps-ok
	@test -f $@ || { echo "mncc: $@ is missing (Debian package libonnx-dev; or set ONNX_PROTO=PATH)"; exit 1; }
$(BUILD)/gen/onnx.pb-c.c $(BUILD)/gen/onnx.pb-c.h: $(ONNX_PROTO) | $(BUILD)/.deps-ok
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen --proto_path=$(dir $(ONNX_PROTO)) $(ONNX_PROTO)

$(BUILD)/obj/gen/onnx.pb-c.o: $(BUILD)/gen/onnx.pb-c.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(OPT) $(SANFLAGS) -w -I$(BUILD)/gen -c $< -o $@

# Node Simulation's cache key names the cost model by its source, so that a changed
# estimator never reads entries an older one wrote
$(BUILD)/gen/sim_model_id.h: scheduler/sim.c planners/layout_plan.c
	@mkdir -p $(BUILD)/gen
	@printf '#define MN_SIM_MODEL_ID "%s"\n' "$$(cat $^ | sha256sum | cut -c1-16)" > $@.tmp && mv $@.tmp $@
# and its cache of nodes timed from their emitted code names every source that code and
# its timing come from
$(BUILD)/gen/code_model_id.h: $(wildcard core/*.[ch] isa/*.[ch] frontend/*.[ch] planners/*.[ch] scheduler/*.[ch] emitter/*.[ch])
	@mkdir -p $(BUILD)/gen
	@printf '#define MN_CODE_MODEL_ID "%s"\n' "$$(cat $^ | sha256sum | cut -c1-16)" > $@.tmp && mv $@.tmp $@
$(BUILD)/obj/scheduler/sim.o: $(BUILD)/gen/sim_model_id.h $(BUILD)/gen/code_model_id.h

$(BUILD)/obj/%.o: %.c $(BUILD)/gen/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(addprefix -I,$(INC_$(firstword $(subst /, ,$*)))) -MMD -MP -c $< -o $@

$(BUILD)/libmncc.a: $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/mncc: $(MNCC_OBJS) $(BUILD)/libmncc.a
	$(CC) -o $@ $^ $(LDLIBS_ALL)
$(BUILD)/mnemu: $(MNEMU_OBJS) $(BUILD)/libmncc.a
	$(CC) -o $@ $^ $(LDLIBS_ALL)
$(BUILD)/mndump: $(MNDUMP_OBJS) $(BUILD)/libmncc.a
	$(CC) -o $@ $^ $(LDLIBS_ALL)
$(BUILD)/unit_tests: $(UNIT_OBJS) $(BUILD)/libmncc.a
	$(CC) -o $@ $^ $(LDLIBS_ALL)
$(BUILD)/load_sweep: $(SWEEP_OBJS) $(BUILD)/libmncc.a
	$(CC) -o $@ $^ $(LDLIBS_ALL)
$(BUILD)/mutate: $(MUTATE_OBJS) $(BUILD)/libmncc.a
	$(CC) -o $@ $^ $(LDLIBS_ALL)
$(BUILD)/vsm_roundtrip: $(RT_OBJS) $(BUILD)/libmncc.a
	$(CC) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/fuzz_%: $(BUILD)/obj/tests/fuzz/fuzz_%.o $(BUILD)/libmncc.a
	$(CC) -fsanitize=fuzzer -o $@ $^ $(LDLIBS_ALL)

# the emulator's per-PE loops (emu_units.c above all) are the hot path: let the
# compiler vectorise them fully
$(BUILD)/obj/emu/emu.o: CFLAGS += -O3 -ffp-contract=off -fno-math-errno
$(BUILD)/obj/emu/emu_units.o: CFLAGS += -O3 -ffp-contract=off -fno-math-errno

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# the MLP's compile summary, then a small CNN (examples/cnn) compiled, run on mnemu and
# compared with PyTorch's output for the same input
demo: $(BUILD)/mncc $(BUILD)/mnemu
	$(BUILD)/mncc examples/mlp.onnx -o $(BUILD)/demo --input-shape x=4,4,4 --summary
	$(BUILD)/mncc examples/cnn/model.onnx -o $(BUILD)/demo_cnn --summary
	$(BUILD)/mnemu $(BUILD)/demo_cnn/model.app --inputs examples/cnn --expect examples/cnn --stats

# Everything `make check` runs; the sanitizer build repeats the fast suites, and the
# ThreadSanitizer build compiles graphs large enough for every thread Code Emit starts
# and runs mnemu on three threads.
check: test-deps
	@$(MAKE) --no-print-directory check-fast
	@$(MAKE) --no-print-directory check-san
	@$(MAKE) --no-print-directory check-tsan

check-tsan:
	@$(MAKE) --no-print-directory SAN=thread BUILD=build/tsan build/tsan/mncc build/tsan/mnemu
	@sh tests/tsan/run.sh build/tsan/mncc build/tsan/mnemu

check-fast: $(BUILD)/mncc $(BUILD)/mnemu $(BUILD)/mndump $(BUILD)/unit_tests $(BUILD)/load_sweep $(BUILD)/mutate $(BUILD)/vsm_roundtrip
	@sh tests/run_all.sh $(BUILD)

check-san:
	@$(MAKE) --no-print-directory SAN=1 BUILD=build/san build/san/mncc build/san/mnemu build/san/mndump build/san/unit_tests build/san/load_sweep build/san/mutate build/san/vsm_roundtrip
	@MNCC_SAN=1 sh tests/run_all.sh build/san

# every ONNX backend test model through mncc and mnemu, on mncore2 and tiny and with each
# scheduler; per configuration a JSON file and a summary line
CONF_DIRS = /usr/share/libonnx-testdata/data/node /usr/share/libonnx-testdata/data/pytorch-converted \
            /usr/share/libonnx-testdata/data/pytorch-operator /usr/share/libonnx-testdata/data/simple
# Real models (openwakeword-js), the generated 60-node bench nets and a 3000-node conv net
# (whose schedule keeps LM0 room for the gathers' scratch), compiled and run on
# mnemu, against onnxruntime-node's outputs (npm packages into build/real, fetched once;
# install scripts skipped: the CPU library is inside the package)
real: npm-deps $(BUILD)/mncc $(BUILD)/mnemu
	@mkdir -p build/real/gen
	@for k in convnet transformer mlp; do $(PYTHON) bench/gen_graph.py $$k 60 build/real/gen/$${k}_60.onnx >/dev/null 2>&1; done
	@$(PYTHON) bench/gen_graph.py convnet 3000 build/real/gen/convnet_3000.onnx >/dev/null 2>&1 # LM0 kept for scratch
	@$(PYTHON) tests/real/run.py $(BUILD)/mncc $(BUILD)/mnemu build/real build/real/node_modules/openwakeword-js/models build/real/gen
	@MNCC_NODE_MODULES=build/real/node_modules $(PYTHON) tests/python/run.py $(BUILD) --ort

# torchvision's CNNs, transformers, language and recurrent models (python3-torch modules, tests/zoo/export.py)
# through the Python entry point: exported and compiled at O2 on mncore2 by mncc.compile, run under mnemu
# --strict and compared with onnxruntime; a table and `N passed, M failed` (tests/zoo/run.py; ZOO="resnet18
# mobilenet" takes those only)
zoo: zoo-deps npm-deps $(BUILD)/mncc $(BUILD)/mnemu
	@$(PYTHON) tests/zoo/run.py $(BUILD)/mncc $(BUILD)/mnemu build/real $(ZOO)

npm-deps: test-deps
	@MNCC_EXTRA_PKGS=nodejs sh mk/deps.sh --test
	@command -v npm >/dev/null || MNCC_EXTRA_PKGS=npm sh mk/deps.sh --test # Debian's nodejs comes without npm
	@mkdir -p build/real
	@cp tests/real/package.json build/real/package.json
	@[ -d build/real/node_modules/onnxruntime-node ] && [ -d build/real/node_modules/openwakeword-js ] || \
		(cd build/real && npm install --ignore-scripts --no-audit --no-fund --no-package-lock --loglevel=error)

conformance: test-deps $(BUILD)/mncc $(BUILD)/mnemu
	@$(PYTHON) tests/conformance/run.py --machine mncore2 --json $(BUILD)/conformance.json $(CONF_DIRS) | tail -n 2
	@$(PYTHON) tests/conformance/run.py --machine tiny --json $(BUILD)/conformance_tiny.json $(CONF_DIRS) | tail -n 2
	@for s in always_from_dram spill_opt auto_recompute_sa; do \
	    $(PYTHON) tests/conformance/run.py --machine tiny -O scheduler=$$s --json $(BUILD)/conformance_tiny_$$s.json $(CONF_DIRS) | tail -n 2 || exit 1; done
	@$(PYTHON) tests/conformance/run.py --machine mncore2 -O float_dtype=mixed --json $(BUILD)/conformance_mixed.json $(CONF_DIRS) | tail -n 2
	@$(PYTHON) tests/conformance/run.py --machine l1b --json $(BUILD)/conformance_l1b.json $(CONF_DIRS) | tail -n 2
	@$(PYTHON) tests/conformance/run.py --machine mncore2 -O link=merge --json $(BUILD)/conformance_merge.json $(CONF_DIRS) | tail -n 2
	@$(PYTHON) tests/conformance/run.py --machine tiny -O link=merge --json $(BUILD)/conformance_tiny_merge.json $(CONF_DIRS) | tail -n 2
	@$(PYTHON) tests/conformance/run.py --machine mncore2 --freeze --json $(BUILD)/conformance_frozen.json $(CONF_DIRS) | tail -n 2
	@$(PYTHON) tests/conformance/table.py /usr/share/libonnx-testdata/data $(BUILD)/conformance.json $(BUILD)/conformance_tiny.json \
	    $(BUILD)/conformance_tiny_spill_opt.json $(BUILD)/conformance_l1b.json > $(BUILD)/conformance_table.md
	@$(PYTHON) tests/conformance/table.py --passing /usr/share/libonnx-testdata/data $(BUILD)/conformance.json $(BUILD)/conformance_tiny.json \
	    $(BUILD)/conformance_tiny_spill_opt.json $(BUILD)/conformance_l1b.json > $(BUILD)/conformance_readme.md
	@echo "conformance: per-op table in $(BUILD)/conformance_table.md; docs/conformance.md's in $(BUILD)/conformance_readme.md (make readme-conformance)"
readme-presets:
	@$(PYTHON) -c 'import sys, subprocess; r = open("docs/usage.md").read(); t = subprocess.run([sys.executable, "mk/presets_table.py"], check=True, capture_output=True, text=True).stdout; a, b = "<!-- preset table: make readme-presets -->", "<!-- end of preset table -->"; i, j = r.index(a) + len(a), r.index(b); open("docs/usage.md", "w").write(r[:i] + "\n" + t + r[j:])'
readme-conformance: $(BUILD)/conformance_readme.md
	@$(PYTHON) -c 'import sys; r = open("docs/conformance.md").read(); t = open(sys.argv[1]).read(); a, b = "<!-- conformance table: make conformance readme-conformance -->", "<!-- end of conformance table -->"; i, j = r.index(a) + len(a), r.index(b); open("docs/conformance.md", "w").write(r[:i] + "\n" + t + r[j:])' $(BUILD)/conformance_readme.md

regen-golden: $(BUILD)/mncc
	@sh tests/golden/run.sh $(BUILD)/mncc --regen $(NAME)

# make bench: the five tables of bench/suite.py (compile time per pass and preset with
# peak memory, against onnxruntime's session creation, scaling to 100k nodes, schedule
# quality per scheduler, emulator throughput); figures, no pass/fail. bench-quick stops at
# 10k nodes. bench-figures: link=merge and simulation_mode=best against the default.
bench: npm-deps $(BUILD)/mncc $(BUILD)/mnemu
	@MNCC=$(BUILD)/mncc MNEMU=$(BUILD)/mnemu $(PYTHON) bench/suite.py
bench-quick: npm-deps $(BUILD)/mncc $(BUILD)/mnemu
	@MNCC=$(BUILD)/mncc MNEMU=$(BUILD)/mnemu $(PYTHON) bench/suite.py --quick
# zoo-compile: table 2 on the zoo's models (exported by make zoo): mncc -O2 against
# onnxruntime's session creation, alternating fresh processes, medians
zoo-compile: zoo-deps npm-deps $(BUILD)/mncc $(BUILD)/mnemu
	@/usr/bin/python3 tests/zoo/export.py build/zoo/models >/dev/null
	@MNCC=$(BUILD)/mncc MNEMU=$(BUILD)/mnemu $(PYTHON) bench/suite.py --zoo

bench-figures: $(BUILD)/mncc $(BUILD)/mnemu
	@MNCC=$(BUILD)/mncc MNEMU=$(BUILD)/mnemu $(PYTHON) bench/figures.py

# make fuzz [FUZZ_SECONDS=60]: each libFuzzer harness (tests/fuzz/) from a seed corpus
# of the test models, apps, programs and machine files, for FUZZ_SECONDS each; a crash
# is kept under build/fuzz/crashes/ and fails the run (tests/fuzz/regress/ holds the
# ones found, replayed by make check)
FUZZ_SECONDS ?= 60
fuzz:
	@MNCC_EXTRA_PKGS="clang libclang-rt-14-dev" sh mk/deps.sh
	@$(MAKE) --no-print-directory FUZZ=1 BUILD=build/fuzz $(FUZZ_TARGETS:%=build/fuzz/fuzz_%)
	@sh tests/fuzz/run.sh build/fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# make install PREFIX=DIR: the three programs, the presets and machine files (which the
# installed mncc finds beside itself, in PREFIX/share/mncc/presets), the man page, and the
# Python package (python/mncc) where Debian's python3 looks for PREFIX's modules (PYTHON_SITE),
# told where the programs went (_install.py)
PREFIX ?= /usr/local
PRESET_FILES = $(wildcard presets/*.json)
MACHINE_FILES = $(wildcard presets/machines/*.json)
PY_FILES = $(wildcard python/mncc/*.py) python/mncc/ort_ref.js
PYTHON_SITE ?= $(PREFIX)/lib/$(if $(filter /usr,$(PREFIX)),python3,$(shell $(PYTHON) -c 'import sys; print("python%d.%d" % sys.version_info[:2])'))/dist-packages
install: $(BUILD)/mncc $(BUILD)/mnemu $(BUILD)/mndump
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/mncc/presets/machines $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BUILD)/mncc $(BUILD)/mnemu $(BUILD)/mndump $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(PRESET_FILES) $(DESTDIR)$(PREFIX)/share/mncc/presets/
	install -m 644 $(MACHINE_FILES) $(DESTDIR)$(PREFIX)/share/mncc/presets/machines/
	install -m 644 docs/mncc.1 $(DESTDIR)$(PREFIX)/share/man/man1/mncc.1
	install -d $(DESTDIR)$(PYTHON_SITE)/mncc
	install -m 644 $(filter-out python/mncc/_install.py,$(PY_FILES)) $(DESTDIR)$(PYTHON_SITE)/mncc/
	printf 'BINDIR = "%s"  # written by make install\n' "$(PREFIX)/bin" > $(DESTDIR)$(PYTHON_SITE)/mncc/_install.py

clean:
	rm -rf build

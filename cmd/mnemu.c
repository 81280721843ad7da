/* mnemu: runs VSM programs (--vsm) on the emulated machine.
 * Exit codes: 0 success, 1 bad input or run-time error, 2 usage error. */
#include "diag.h"
#include "emu.h"
#include "emu_app.h"
#include "onnx_load.h"
#include "version.h"
#include "vsm.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>
#include <errno.h>
#include <sys/stat.h>

static void usage(FILE *f) {
    fprintf(
        f,
        "usage: mnemu --vsm FILE.vsm [--machine NAME|PATH] [--strict] [--stats] [--json] [--trace FILE] [--threads N]\n"
        "       mnemu APP --inputs DIR [-o OUTDIR] [--expect DIR] [--machine NAME|PATH] [--strict] [--stats] [--json]\n"
        "             [--trace FILE] [--threads N]\n"
        "--threads N runs each instruction's PEs on N threads (default 0: one per online core, at most 8);\n"
        "outputs, cycles and figures are the same for every N.\n"
        "--trace writes a Chrome/Perfetto trace-event file: one event per executed line and MV transfer.\n"
        "--strict starts memory undefined and stops when undefined data reaches an output,\n"
        "an address or a mask (docs/vsm.md, section 10).\n"
        "       mnemu --version | --help\n"
        "APP mode reads DIR/input_K.pb (graph-input order), places inputs and parameters in DRAM,\n"
        "runs the program and writes OUTDIR/output_K.pb; --expect compares each output with DIR/output_K.pb\n"
        "(rtol 1e-3, atol 1e-4; a line each, exit 1 when one disagrees).\n"
        "Assembles FILE.vsm, runs it on every PE of the machine (default mncore2) and prints\n"
        "the output of its d get commands; --stats adds cycles, instruction counts, DRAM bytes and each group's DRAM "
        "and PDM traffic.\n");
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *b = xmalloc(cap);
    for (size_t r; (r = fread(b + n, 1, cap - n - 1, f)) > 0;) {
        n += r;
        if (cap - n < 2) b = xrealloc(b, cap *= 2);
    }
    fclose(f);
    b[n] = 0;
    if (len) *len = n;
    return b;
}

static void print_stats(const char *machine, double clock, const EmuStats *s, double secs, bool json) {
    static const char *units[U_UNIT_COUNT] = {"nop",    "wait",  "noforward", "alu",  "mau",
                                              "mwrite", "mread", "l1bm",      "l2bm", "mv"};
    if (json) {
        printf("{\"machine\": \"%s\", \"steps\": %lld, \"cycles\": %lld, \"model_cycles\": %lld, \"stall_cycles\": "
               "%lld, \"dram_bytes\": %lld, \"pe_element_ops\": %lld, "
               "\"lm0_peak_lw\": %lld, \"lm1_peak_lw\": %lld, \"insns\": {",
               machine, (long long)s->steps, (long long)s->cycles, (long long)s->model_cycles,
               (long long)s->stall_cycles, (long long)s->dram_bytes, (long long)s->pe_element_ops,
               (long long)s->lm_peak_lw[0], (long long)s->lm_peak_lw[1]);
        for (int u = 0; u < U_UNIT_COUNT; u++)
            printf("%s\"%s\": %lld", u ? ", " : "", units[u], (long long)s->insns[u]);
        printf("}, \"groups\": [");
        for (int g = 0; g < s->groups; g++)
            printf(
                "%s{\"dram_bytes\": %lld, \"dram_busy_cycles\": %lld, \"pdm_bytes\": %lld, \"pdm_busy_cycles\": %lld}",
                g ? ", " : "", 8 * (long long)s->dram_lw[g], (long long)s->dram_busy[g], 8 * (long long)s->pdm_lw[g],
                (long long)s->pdm_busy[g]);
        printf("], \"link_busy_cycles_max\": %lld, \"wall_seconds\": %.6f}\n", (long long)s->link_busy_max, secs);
        return;
    }
    fprintf(stderr, "mnemu: %s: %lld steps, %lld cycles (%lld stalled), %.3f us at %.0f MHz; DRAM %lld bytes;", machine,
            (long long)s->steps, (long long)s->cycles, (long long)s->stall_cycles,
            clock > 0 ? (double)s->cycles / clock : 0, clock, (long long)s->dram_bytes);
    for (int u = 0; u < U_UNIT_COUNT; u++)
        if (s->insns[u]) fprintf(stderr, " %s %lld", units[u], (long long)s->insns[u]);
    fprintf(stderr, "; peak LM0 %lld LW, LM1 %lld LW; %.3g PE-element ops/s\n", (long long)s->lm_peak_lw[0],
            (long long)s->lm_peak_lw[1], secs > 0 ? (double)s->pe_element_ops / secs : 0);
    for (int g = 0; g < s->groups; g++)
        if (s->dram_lw[g] || s->pdm_lw[g])
            fprintf(stderr,
                    "mnemu: group %d: DRAM %lld bytes, busy %lld cycles (%.0f%%); PDM %lld bytes, busy %lld cycles\n",
                    g, 8 * (long long)s->dram_lw[g], (long long)s->dram_busy[g],
                    s->cycles ? 100.0 * (double)s->dram_busy[g] / (double)s->cycles : 0, 8 * (long long)s->pdm_lw[g],
                    (long long)s->pdm_busy[g]);
    if (s->link_busy_max)
        fprintf(stderr, "mnemu: busiest link between groups: %lld cycles\n", (long long)s->link_busy_max);
}

static bool write_trace(const char *path, MNBuf *t) {
    FILE *f = fopen(path, "w");
    if (!f) return false;
    bool ok = fputs("{\"traceEvents\":[\n", f) >= 0 && (!t->len || fwrite(t->data, 1, t->len, f) == t->len) &&
              fputs("\n],\"displayTimeUnit\":\"ns\"}\n", f) >= 0;
    return fclose(f) == 0 && ok;
}

/* the host's tensors as the test data keeps them: DIR/input_K.pb, OUTDIR/output_K.pb */
typedef struct {
    const char *in_dir, *out_dir, *expect_dir;
    int disagree; /* outputs --expect found out of tolerance */
} PbFiles;

/* --expect: output k against DIR/output_k.pb, elementwise within rtol 1e-3 and atol 1e-4
 * (the conformance tolerance of float models); one line each on stdout */
static bool pb_expect(PbFiles *f, int k, const char *name, const MNTensor *t, char *err, size_t errlen) {
    char path[4200];
    snprintf(path, sizeof path, "%s/output_%d.pb", f->expect_dir, k);
    Arena *a = arena_new(0);
    MNDiag d = {0};
    const MNTensor *r = onnx_load_tensor_file(a, path, &d);
    bool ok = r != NULL;
    if (!r)
        snprintf(err, errlen, "--expect: %s", d.msg);
    else if (r->numel != t->numel) {
        printf("output %d '%s': %lld elements, the reference %lld: disagrees\n", k, name, (long long)t->numel,
               (long long)r->numel);
        f->disagree++;
    } else {
        double worst = 0, top = 0;
        int64_t bad = 0;
        for (int64_t i = 0; i < t->numel; i++) {
            double x = ir_tensor_get_f(t, i), y = ir_tensor_get_f(r, i), e = fabs(x - y);
            if (!(e <= 1e-4 + 1e-3 * fabs(y))) bad++;
            if (e > worst || e != e) worst = e;
            if (fabs(y) > top) top = fabs(y);
        }
        printf("output %d '%s': max |error| %.3g, largest |reference| %.3g: %s (rtol 1e-3, atol 1e-4)\n", k, name,
               worst, top, bad ? "DISAGREES" : "agrees");
        f->disagree += bad > 0;
    }
    arena_free(a);
    return ok;
}

static MNTensor *pb_input(void *ctx, Arena *a, int k, const char *name, char *err, size_t errlen) {
    const PbFiles *f = ctx;
    char path[4200];
    snprintf(path, sizeof path, "%s/input_%d.pb", f->in_dir, k);
    MNDiag d = {0};
    MNTensor *v = onnx_load_tensor_file(a, path, &d);
    if (!v) snprintf(err, errlen, "input %d (%s): %s", k, name, d.msg);
    return v;
}

static bool pb_output(void *ctx, int k, const char *name, const MNTensor *t, char *err, size_t errlen) {
    PbFiles *f = ctx;
    if (f->expect_dir && !pb_expect(f, k, name, t, err, errlen)) return false;
    if (!f->out_dir) return true;
    if (k == 0 && mkdir(f->out_dir, 0777) && errno != EEXIST) {
        snprintf(err, errlen, "%s: cannot create: %s", f->out_dir, strerror(errno));
        return false;
    }
    MNBuf pb = {0};
    onnx_tensor_to_pb(t, name, &pb);
    char path[4200];
    snprintf(path, sizeof path, "%s/output_%d.pb", f->out_dir, k);
    FILE *o = fopen(path, "wb");
    bool w = o && fwrite(pb.data, 1, pb.len, o) == pb.len;
    if (o && fclose(o)) w = false;
    buf_free(&pb);
    if (!w) snprintf(err, errlen, "%s: cannot write", path);
    return w;
}

static int run_app(const char *path, const char *machine, const char *inputs, const char *outdir, const char *expect,
                   bool stats, bool json, bool strict, int threads, const char *trace_path) {
    size_t len;
    char *buf = slurp(path, &len);
    if (!buf) {
        fprintf(stderr, "mnemu: error: %s: cannot read\n", path);
        return 1;
    }
    char err[1024] = "";
    MNBuf out = {0};
    EmuStats st = {0};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    MNBuf trace = {0};
    PbFiles files = {inputs, outdir, expect, 0};
    EmuHost host = {pb_input, outdir || expect ? pb_output : NULL, &files};
    bool ok = emu_run_app((const uint8_t *)buf, len, strict, threads, trace_path ? &trace : NULL, machine, &host, &out,
                          &st, err, sizeof err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (out.len) fwrite(out.data, 1, out.len, stdout);
    buf_free(&out);
    free(buf);
    if (ok && trace_path && !write_trace(trace_path, &trace)) {
        fprintf(stderr, "mnemu: error: %s: cannot write the trace\n", trace_path);
        ok = false;
        snprintf(err, sizeof err, "trace not written");
    }
    buf_free(&trace);
    if (!ok) {
        fprintf(stderr, "mnemu: error: %s: %s\n", path, err);
        return 1;
    }
    if (stats)
        print_stats(machine ? machine : "(from the app)", 750, &st,
                    (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9, json);
    return files.disagree ? 1 : 0;
}

int main(int argc, char **argv) {
    const char *vsm = NULL, *machine = NULL, *app = NULL, *inputs = NULL, *outdir = NULL, *trace_path = NULL,
               *expect = NULL;
    bool stats = false, json = false, strict = false;
    int threads = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--version")) {
            printf("mnemu %s\n", mncc_version);
            return 0;
        }
        if (!strcmp(argv[i], "--vsm") && i + 1 < argc)
            vsm = argv[++i];
        else if (!strcmp(argv[i], "--machine") && i + 1 < argc)
            machine = argv[++i];
        else if (!strcmp(argv[i], "--stats"))
            stats = true;
        else if (!strcmp(argv[i], "--strict"))
            strict = true;
        else if (!strcmp(argv[i], "--trace") && i + 1 < argc)
            trace_path = argv[++i];
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            char *end;
            long t = strtol(argv[++i], &end, 10);
            if (*end || t < 0 || t > 64) {
                fprintf(stderr, "mnemu: --threads takes 0 to 64, not '%s'\n", argv[i]);
                return 2;
            }
            threads = (int)t;
        } else if (!strcmp(argv[i], "--inputs") && i + 1 < argc)
            inputs = argv[++i];
        else if (!strcmp(argv[i], "-o") && i + 1 < argc)
            outdir = argv[++i];
        else if (!strcmp(argv[i], "--expect") && i + 1 < argc)
            expect = argv[++i];
        else if (argv[i][0] != '-' && !app)
            app = argv[i];
        else if (!strcmp(argv[i], "--json")) {
            json = true;
            stats = true;
        } else {
            fprintf(stderr, "mnemu: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if ((!vsm) == (!app) || (app && !inputs)) {
        usage(stderr);
        return 2;
    }
    char err[1024];
    if (app) return run_app(app, machine, inputs, outdir, expect, stats, json, strict, threads, trace_path);
    MNMachine m;
    if (!machine) machine = "mncore2";
    if (!machine_load(machine, &m, err, sizeof err)) {
        fprintf(stderr, "mnemu: error: %s\n", err);
        return 1;
    }
    char *text = slurp(vsm, NULL);
    if (!text) {
        fprintf(stderr, "mnemu: error: %s: cannot read\n", vsm);
        return 1;
    }
    VProgram p;
    if (!vsm_parse(vsm, text, &p, err, sizeof err)) {
        fprintf(stderr, "mnemu: error: %s\n", err);
        free(text);
        return 1;
    }
    free(text);
    /* run what the assembler produced: text -> GPFNBin -> program */
    MNBuf bin = {0};
    vsm_encode(&p, &bin);
    VProgram src = p;
    if (!vsm_decode((const uint8_t *)bin.data, bin.len, &p, err, sizeof err)) {
        fprintf(stderr, "mnemu: internal error: %s\n", err);
        return 1;
    }
    for (int i = 0; i < p.nsteps && i < src.nsteps; i++)
        p.steps[i].line = src.steps[i].line; /* messages name source lines */
    vsm_program_free(&src);
    buf_free(&bin);
    Emu *e = emu_new(&m, err, sizeof err);
    if (!e) {
        fprintf(stderr, "mnemu: error: %s\n", err);
        vsm_program_free(&p);
        return 1;
    }
    emu_set_threads(e, threads);
    if (strict && !emu_set_strict(e)) {
        fprintf(stderr, "mnemu: error: cannot allocate the --strict shadow memory\n");
        emu_free(e);
        vsm_program_free(&p);
        return 1;
    }
    MNBuf out = {0}, trace = {0};
    bool trace_failed = false;
    if (trace_path) emu_set_trace(e, &trace);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    bool ok = emu_run(e, &p, &out, err, sizeof err);
    if (ok && trace_path && !write_trace(trace_path, &trace)) {
        fprintf(stderr, "mnemu: error: %s: cannot write the trace\n", trace_path);
        trace_failed = true;
    }
    buf_free(&trace);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (out.len) fwrite(out.data, 1, out.len, stdout);
    int rc = 0;
    if (!ok) {
        fprintf(stderr, "mnemu: error: %s: %s\n", vsm, err);
        rc = 1;
    } else if (stats)
        print_stats(m.name, m.clock_mhz, emu_stats(e),
                    (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9, json);
    buf_free(&out);
    emu_free(e);
    vsm_program_free(&p);
    return rc ? rc : trace_failed;
}

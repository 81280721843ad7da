/* The pass driver: the pipeline of DESIGN.md as one table, run in order over one
 * MNGraph. Each pass is a plain function of the compilation; after each the driver
 * records figures in report.json (rewritten every time) and dumps the graph when
 * asked (--dump-after PASS writes layout.PASS.txt in l3ir format).
 *
 * Today the table ends with the sliced location planner; Node Simulation, the
 * scheduler, the address planner and the emitter of later stages slot in after it.
 * The dump of time_slice is taken before it runs (the graph just before the split). */
#include "driver.h"
#include "onnx_write.h"
#include "infer.h"
#include "onnx_load.h"
#include "plan.h"
#include "scheduler.h"
#include "emit.h"
#include "params.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include <time.h>
#include <malloc.h>

typedef bool (*MNPassFn)(MNCompile *c);

/* ---- load ---- */

static bool pass_load(MNCompile *c) {
    c->g = onnx_load_file(c->arena, c->model_path, &c->diag);
    if (!c->g) return false;
    c->nodes_loaded = c->g->nnodes;
    mn_log(c, 0, "loaded %d nodes, %d values, opset %lld, %d inputs, %d outputs", c->g->nnodes, c->g->nvalues,
           (long long)c->g->opset, c->g->ninputs, c->g->noutputs);
    return true;
}

/* ---- static shapes and constant folding ---- */

static bool bind_inputs(MNCompile *c) {
    MNGraph *g = c->g;
    const MNOptions *o = c->opt;
    for (int i = 0; i < o->nshapes; i++) {
        const MNInputShape *s = &o->shapes[i];
        MNValue *v = NULL;
        for (int k = 0; k < g->ninputs && !v; k++)
            if (!strcmp(g->inputs[k]->name, s->name)) v = g->inputs[k];
        if (!v) {
            char names[600] = "";
            size_t n = 0;
            for (int k = 0; k < g->ninputs && n < sizeof names - 80; k++)
                n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", k ? ", " : "", g->inputs[k]->name);
            return diag_error(&c->diag, DIAG_INVALID, "%s: --input-shape names '%s', which is not a graph input (inputs: %s)", g->file,
                              s->name, n ? names : "none");
        }
        MNType *t = &v->type;
        if (t->rank >= 0 && t->rank != s->rank)
            return diag_error(&c->diag, DIAG_INVALID, "%s: %s: --input-shape gives %d dims, the model declares %d", g->file, v->name,
                              s->rank, t->rank);
        for (int k = 0; t->rank >= 0 && k < s->rank; k++)
            if (t->dims[k] >= 0 && t->dims[k] != s->dims[k])
                return diag_error(&c->diag, DIAG_INVALID, "%s: %s: --input-shape sets dim %d to %lld, the model fixes it at %lld",
                                  g->file, v->name, k, (long long)s->dims[k], (long long)t->dims[k]);
        const char **params = t->rank >= 0 ? t->dim_param : NULL;
        ir_type_set(g, t, t->elem, s->rank, s->dims);
        t->dim_param = params;
    }
    /* Inputs frozen to a value become initializers; the rest of the graph folds. */
    for (int i = 0; i < o->nvalues; i++) {
        const MNInputValue *iv = &o->values[i];
        int at = -1;
        for (int k = 0; k < g->ninputs && at < 0; k++)
            if (!strcmp(g->inputs[k]->name, iv->name)) at = k;
        if (at < 0) return diag_error(&c->diag, DIAG_INVALID, "%s: --input-value names '%s', which is not a graph input", g->file, iv->name);
        MNValue *v = g->inputs[at];
        MNTensor *t = onnx_load_tensor_file(c->arena, iv->path, &c->diag);
        if (!t) return false;
        if (t->elem != v->type.elem)
            return diag_error(&c->diag, DIAG_INVALID, "%s: %s: --input-value has type %s, the input is %s", g->file, v->name,
                              onnx_type_name(t->elem), onnx_type_name(v->type.elem));
        bool fits = v->type.rank < 0 || v->type.rank == t->rank;
        for (int k = 0; fits && k < v->type.rank; k++) fits = v->type.dims[k] < 0 || v->type.dims[k] == t->dims[k];
        if (!fits)
                return diag_error(&c->diag, DIAG_INVALID, "%s: %s: --input-value shape [%s] does not fit the declared shape", g->file, v->name,
                                  ir_dims_str(c->arena, t->rank, t->dims));
        ir_type_set(g, &v->type, t->elem, t->rank, t->dims);
        v->konst = t;
        v->is_input = false;
        v->is_initializer = true;
        memmove(g->inputs + at, g->inputs + at + 1, sizeof(MNValue *) * (size_t)(g->ninputs - at - 1));
        g->ninputs--;
    }
    for (int i = 0; i < g->ninputs; i++) {
        MNValue *v = g->inputs[i];
        MNType *t = &v->type;
        if (t->rank < 0)
            return diag_error(&c->diag, DIAG_INVALID, "%s: %s: the model gives no shape; pass --input-shape %s=...", g->file, v->name, v->name);
        for (int k = 0; k < t->rank; k++)
            if (t->dims[k] < 0) {
                if (t->dim_param && t->dim_param[k])
                    return diag_error(&c->diag, DIAG_INVALID, "%s: %s: dim %d '%s' is dynamic; pass --input-shape %s=...", g->file, v->name, k,
                                      t->dim_param[k], v->name);
                return diag_error(&c->diag, DIAG_INVALID, "%s: %s: dim %d is dynamic; pass --input-shape %s=...", g->file, v->name, k, v->name);
            }
        if (ir_shape_numel(t) == -2)
            return diag_error(&c->diag, DIAG_INVALID, "%s: %s: element count of shape [%s] overflows 64 bits", g->file, v->name,
                              ir_dims_str(c->arena, t->rank, t->dims));
    }
    return true;
}

static bool pass_static_shapes(MNCompile *c) {
    MNGraph *g = c->g;
    if (!bind_inputs(c)) return false;
    if (!infer_graph(g, &c->diag, c->opt->ival[MN_OPT_fold_max_elems], &c->nodes_folded)) return false;
    if (arena_over_limit(c->arena))
        return diag_error(&c->diag, DIAG_RESOURCE, "%s: compilation exceeded the memory limit (memory_limit_mb=%lld)", g->file,
                          (long long)c->opt->ival[MN_OPT_memory_limit_mb]);
    mn_log(c, 0, "all shapes static; folded %d nodes into constants", c->nodes_folded);
    return true;
}

/* ---- dead code ---- */

static bool pass_dce(MNCompile *c) {
    MNGraph *g = c->g;
    ir_recount_uses(g);
    int removed = 0;
    for (int i = g->nnodes - 1; i >= 0; i--) {
        MNNode *n = g->nodes[i];
        bool used = false;
        for (int k = 0; k < n->nout; k++) used |= n->out[k] && n->out[k]->nuses > 0;
        if (used) continue;
        n->dead = true;
        removed++;
        for (int k = 0; k < n->nin; k++)
            if (n->in[k]) n->in[k]->nuses--;
    }
    ir_compact(g);
    c->nodes_dead = removed;
    mn_log(c, 0, "removed %d nodes whose results are never used", removed);
    return true;
}

/* ---- the pipeline ---- */

typedef struct {
    const char *name;
    MNPassFn fn;
    int stage; /* what the invariant checker may assume after it (compile.h) */
} MNPass;

static const MNPass pipeline[] = {
    {"load", pass_load, 0},
    {"static_shapes", pass_static_shapes, 1},
    {"dce", pass_dce, 1},
    {"conv_lowering", plan_conv_lowering, 1},
    {"matmul_split", plan_matmul_split, 1},
    {"mask_lowering", plan_mask_lowering, 1},
    {"dtype", plan_dtype, 2},
    {"location_initial", plan_location_initial, 2},
    {"layout", plan_layout, 3},
    {"location", plan_location, 4},
    {"time_slice", plan_time_slice, 4},
    {"location_sliced", plan_location_sliced, 5},
    {"param_images", emit_param_images, 5}, /* started here, taken by Code Emit */
    {"node_simulation", sched_node_simulation, 5},
    {"schedule", sched_schedule, 6},
    {"address", sched_address, 7},
    {"emit", emit_program, 7},
};
#define NPASSES ((int)(sizeof pipeline / sizeof pipeline[0]))

const char *const *mn_pass_names(int *n) {
    static const char *names[NPASSES];
    for (int i = 0; i < NPASSES; i++) names[i] = pipeline[i].name;
    *n = NPASSES;
    return names;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static bool wants_dump(const MNOptions *o, const char *pass) {
    return o->ival[MN_OPT_dump_all] || opt_dump_after_has(o, pass);
}

static bool dump_graph(MNCompile *c, const char *file) {
    MNBuf b = {0};
    ir_print_l3ir(&b, c->g);
    bool ok = mn_art_write(c, file, b.data ? b.data : "", b.len);
    buf_free(&b);
    return ok;
}

/* compile.stamp (--if-changed): the driver's key, then every external data file the
 * model read with the hash of its bytes, which the next check hashes again */
static bool write_stamp(MNCompile *c) {
    MNBuf b = {0};
    buf_printf(&b, "%s", c->opt->stamp);
    for (int i = 0; c->g && i < c->g->next_files; i++) buf_printf(&b, "external %016llx %s\n", (unsigned long long)mn_file_hash(c->g->ext_files[i]), c->g->ext_files[i]);
    bool ok = mn_art_write(c, "compile.stamp", b.data, b.len);
    buf_free(&b);
    return ok;
}

/* The final graph's dumps, l3ir.txt and l3ir_stripped.onnx (or its zstd frame with
 * compress_dumps), hang on the graph as the address planner leaves it. Code Emit reads
 * that graph and changes none of it that they show (the gather tables it adds are no
 * node's operands, and neither dump lists them): with num_threads > 1 they are built on
 * a thread of their own while the code is emitted, from a copy of the graph's header
 * (emission may grow its list of values), in an arena of their own. */
typedef struct {
    const MNCompile *c;
    MNGraph g;
    Arena *arena;
    MNBuf l3ir, stripped;
    bool zst;
    pthread_t tid;
} Dumps;

static void *build_dumps(void *arg) {
    Dumps *d = arg;
    ir_print_l3ir(&d->l3ir, &d->g);
    onnx_write_model_in(d->arena, d->c, &d->g, true, &d->stripped);
    if (d->zst) {
        size_t cap = ZSTD_compressBound(d->stripped.len);
        MNBuf z = {0};
        buf_reserve(&z, cap);
        size_t got = ZSTD_compress(z.data, cap, d->stripped.data ? d->stripped.data : "", d->stripped.len, 3);
        if (ZSTD_isError(got)) die("zstd: %s", ZSTD_getErrorName(got));
        z.len = got;
        buf_free(&d->stripped);
        d->stripped = z;
    }
    return NULL;
}

static void dumps_init(Dumps *d, const MNCompile *c) {
    memset(d, 0, sizeof *d);
    d->c = c, d->g = *c->g, d->zst = c->opt->ival[MN_OPT_compress_dumps];
    d->arena = arena_new(0);
}

static void dumps_free(Dumps *d) {
    buf_free(&d->l3ir), buf_free(&d->stripped);
    arena_free(d->arena);
}

/* mn_art_write_owned takes the bytes whatever it returns */
static bool write_dumps(MNCompile *c, Dumps *d) {
    bool ok = mn_art_write_owned(c, "l3ir.txt", d->l3ir.data, d->l3ir.len);
    d->l3ir.data = NULL;
    if (ok) {
        ok = mn_art_write_owned(c, d->zst ? "l3ir_stripped.onnx.zst" : "l3ir_stripped.onnx", d->stripped.data, d->stripped.len);
        d->stripped.data = NULL;
    }
    dumps_free(d);
    return ok;
}

int mn_compile(MNCompile *c, const char *model_path, const char *out_dir, const MNOptions *opt) {
    memset(c, 0, sizeof *c);
    c->model_path = model_path;
    c->out_dir = out_dir;
    c->opt = opt;
    c->code = &emit_code_model; /* the scheduler reaches Code Emit's timing through it */
    c->arena = arena_new((size_t)opt->ival[MN_OPT_memory_limit_mb] << 20);
    c->passes = ARENA_ARRAY(c->arena, MNPassRecord, NPASSES);
    if (out_dir) {
        int npass;
        const char *const *names = mn_pass_names(&npass);
        if (!mn_art_prepare_dir(c, names, npass)) return 1;
        if (!mn_art_copy_file(c, "model.onnx", model_path) || !mn_report_write(c)) {
            mn_report_write(c);
            return 1;
        }
    }
    char merr[600];
    if (!machine_load(opt->sval[MN_OPT_machine], &c->machine, merr, sizeof merr)) {
        diag_error(&c->diag, DIAG_INVALID, "%s", merr);
        if (out_dir) mn_dashboard_write(c), mn_report_write(c);
        return 1;
    }
    mn_log(c, 0, "machine %s: %d PEs, LM %lld long words", c->machine.name, c->machine.n_pe, (long long)c->machine.lm0_lw);
    bool ok = true;
    double last_report = now_ms();
    Dumps dumps;
    bool dumping = false; /* the dumps' thread runs */
    for (int i = 0; i < NPASSES && ok; i++) {
        c->cur_pass = pipeline[i].name;
        if (out_dir && c->g && c->g->nnodes >= 256 && !strcmp(pipeline[i].name, "emit") && mn_threads(c) > 1) { /* a small graph's dumps take less than a thread's start */
            dumps_init(&dumps, c);
            if (!(dumping = !pthread_create(&dumps.tid, NULL, build_dumps, &dumps))) dumps_free(&dumps);
        }
        if (opt->progress) fprintf(stderr, "\r\033[Kmncc: pass %d/%d %s", i + 1, NPASSES, pipeline[i].name);
        bool before = !strcmp(pipeline[i].name, "time_slice");
        if (before && out_dir && wants_dump(opt, pipeline[i].name) && !dump_graph(c, "layout.time_slice.txt")) {
            ok = false;
            break;
        }
        double t0 = now_ms();
        ok = pipeline[i].fn(c) && mn_memory_ok(c);
        MNPassRecord *r = &c->passes[c->npasses++]; /* figures were added to it while it ran */
        r->name = pipeline[i].name;
        r->wall_ms = now_ms() - t0;
        r->ok = ok;
        r->nodes = c->g ? ir_node_count_live(c->g) : 0;
        r->values = c->g ? c->g->nvalues : 0;
        if (ok && opt->ival[MN_OPT_verify] && c->g) {
            char verr[600];
            if (!ir_verify(c->g, &c->machine, pipeline[i].stage, verr, sizeof verr)) {
                /* our bug, not the model's: say so, and which pass broke it */
                diag_error(&c->diag, DIAG_INVALID, "%s: internal error: invariant broken after pass %s: %s", model_path, r->name, verr);
                ok = false;
                r->ok = false;
            }
        }
        if (!ok) mn_log(c, 2, "%s", c->diag.msg);
        if (ok && out_dir && !before && wants_dump(opt, r->name)) ok = dump_graph(c, arena_printf(c->arena, "layout.%s.txt", r->name));
        if (ok && !strcmp(r->name, "dce") && opt->sval[MN_OPT_out_onnx][0]) { /* the graph the planners receive */
            MNBuf b = {0};
            ok = onnx_write_model(c, c->g, false, &b) && mn_art_write_path(c, opt->sval[MN_OPT_out_onnx], b.data ? b.data : "", b.len);
            buf_free(&b);
        }
        /* the report as the compile goes (mncc batch shows each child's pass from it), at
         * most every 100 ms: rewriting three files after each of 15 passes was a quarter
         * of a small model's compile */
        if (out_dir && ok && i < NPASSES - 1 && now_ms() - last_report >= 100) { /* after the last pass, the final report follows */
            if (!mn_report_write(c)) ok = false;
            last_report = now_ms();
        }
    }
    emit_params_drop(c); /* what Code Emit did not take, or all of it when it did not run */
    if (dumping) pthread_join(dumps.tid, NULL);
    if (c->sched && !sched_results_write(c)) ok = false; /* the schedule pass did not run to write it */
    if (ok) {
        c->cur_pass = "artifacts";
        if (out_dir && dumping) ok = write_dumps(c, &dumps);
        else if (out_dir) {
            Dumps d;
            dumps_init(&d, c);
            build_dumps(&d);
            ok = write_dumps(c, &d);
        }
        if (ok && out_dir && opt->stamp) ok = write_stamp(c);
        c->finished = ok;
    } else if (dumping)
        dumps_free(&dumps);
    if (opt->progress) fprintf(stderr, "\r\033[K");
    if (out_dir && !mn_art_wait(c)) ok = false; /* a write still going on (model.app) is part of the set */
    if (out_dir && !mn_dashboard_write(c)) ok = false; /* also for a failed compile: it shows the error */
    if (!ok && out_dir && mn_art_remove(c, "model.app")) c->app_status = "removed: the compile failed after writing it";
    if (out_dir) ok = mn_report_write(c) && ok;
    if (!ok && !diag_failed(&c->diag)) die("compile failed without a diagnostic");
    return ok ? 0 : 1;
}

void mn_compile_free(MNCompile *c) {
    mn_art_wait(c);
    free(c->log);
    arena_free(c->arena);
    c->log = NULL;
    c->arena = NULL;
}

/* The pass driver: the pipeline (README, "The pipeline") as one table, run in order
 * over one MNGraph. Each pass is a plain function of the compilation; after each the
 * driver records its figures in report.json (rewritten as the compile goes), checks the
 * invariants with --verify, and dumps the graph when asked (--dump-after PASS writes
 * layout.PASS.txt in l3ir format). What the driver does around a pass besides running
 * it is a column of the table (flags), not a test of its name. The stages below are
 * reached only through their pass functions, and the scheduler reaches Code Emit's
 * timing through MNCompile.code, which the driver sets. */
#include "driver.h"
#include "onnx_write.h"
#include "bind.h"
#include "infer.h"
#include "onnx_load.h"
#include "plan.h"
#include "scheduler.h"
#include "emit.h"
#include "memo.h"
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

static bool pass_static_shapes(MNCompile *c) {
    MNGraph *g = c->g;
    if (!onnx_bind_inputs(g, c->opt, c->arena, &c->diag)) return false;
    if (!infer_graph(g, &c->diag, c->opt->ival[MN_OPT_fold_max_elems], &c->nodes_folded)) return false;
    if (arena_over_limit(c->arena))
        return diag_error(&c->diag, DIAG_RESOURCE, "%s: compilation exceeded the memory limit (memory_limit_mb=%lld)",
                          g->file, (long long)c->opt->ival[MN_OPT_memory_limit_mb]);
    mn_log(c, 0, "all shapes static; folded %d nodes into constants", c->nodes_folded);
    return true;
}

/* ---- dead code ---- */

static bool pass_dce(MNCompile *c) {
    c->nodes_dead = ir_remove_dead(c->g);
    mn_log(c, 0, "removed %d nodes whose results are never used", c->nodes_dead);
    return true;
}

/* ---- the pipeline ---- */

/* what the driver does around a pass besides running it */
enum {
    DUMP_BEFORE = 1, /* --dump-after writes the graph just before it (the graph it cuts) */
    OUT_ONNX = 2, /* -O out_onnx writes the graph after it: what the planners receive */
    DUMPS_DURING = 4, /* the final graph's dumps are built on a thread while it runs */
    CODE = 8, /* makes the program: skipped under plan_only */
};

typedef struct {
    const char *name;
    MNPassFn fn;
    int stage; /* what the invariant checker may assume after it (driver.h, ir_verify) */
    unsigned flags;
} MNPass;

static const MNPass pipeline[] = {
    {"load", pass_load, 0},
    {"static_shapes", pass_static_shapes, 1},
    {"rnn_lowering", plan_rnn_lowering, 1},
    {"stack_takes", plan_stack_takes, 1},
    {"einsum_lowering", plan_einsum_lowering, 1},
    {"loss_lowering", plan_loss_lowering, 1},
    {"mod_lowering", plan_mod_lowering, 1},
    {"softmax_lowering", plan_softmax_lowering, 1},
    {"cse", plan_cse, 1},
    {"bn_folding", plan_bn_folding, 1},
    {"gemm_fusion", plan_gemm_fusion, 1},
    {"dce", pass_dce, 1, OUT_ONNX},
    {"noop_lowering", plan_noop_lowering, 1},
    {"pad_folding", plan_pad_folding, 1},
    {"shuffle_lowering", plan_shuffle_lowering, 1},
    {"bn_lowering", plan_bn_lowering, 1},
    {"lrn_lowering", plan_lrn_lowering, 1},
    {"conv1d_lowering", plan_conv1d_lowering, 1},
    {"group_expand", plan_group_expand, 1},
    {"convt_lowering", plan_convt_lowering, 1},
    {"d2s_lowering", plan_d2s_lowering, 1},
    {"pool_lowering", plan_pool_lowering, 1},
    {"fc_lowering", plan_fc_lowering, 1},
    {"gemv_lowering", plan_gemv_lowering, 1},
    {"conv_lowering", plan_conv_lowering, 1},
    {"panel_lowering", plan_panel_lowering, 1},
    {"mask_lowering", plan_mask_lowering, 1},
    {"resize_split", plan_resize_split, 1},
    {"io_views", plan_io_views, 1},
    {"dtype", plan_dtype, 2},
    {"location_initial", plan_location_initial, 2},
    {"layout", plan_layout, 3},
    {"location", plan_location, 4},
    {"time_slice", plan_time_slice, 4, DUMP_BEFORE},
    {"location_sliced", plan_location_sliced, 5},
    {"param_images", emit_param_images, 5, CODE}, /* started here, taken by Code Emit */
    {"node_simulation", sched_node_simulation, 5},
    {"schedule", sched_schedule, 6},
    {"address", sched_address, 7},
    {"emit", emit_program, 7, DUMPS_DURING | CODE},
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
        if (out_dir) {
            mn_dashboard_write(c);
            mn_report_write(c);
        }
        return 1;
    }
    mn_log(c, 0, "machine %s: %d PEs, LM %lld long words", c->machine.name, c->machine.n_pe,
           (long long)c->machine.lm0_lw);
    c->check_memo = memo_new(); /* freed after the passes */
    bool ok = true;
    double last_report = now_ms();
    Dumps dumps;
    bool dumping = false; /* the dumps' thread runs */
    for (int i = 0; i < NPASSES && ok; i++) {
        c->cur_pass = pipeline[i].name;
        if (out_dir && c->g && c->g->nnodes >= 256 && (pipeline[i].flags & DUMPS_DURING) &&
            mn_threads(c) > 1) { /* a small graph's dumps take less than a thread's start */
            driver_dumps_init(&dumps, c);
            if (!(dumping = !pthread_create(&dumps.tid, NULL, driver_build_dumps, &dumps))) driver_dumps_free(&dumps);
        }
        if (opt->progress) fprintf(stderr, "\r\033[Kmncc: pass %d/%d %s", i + 1, NPASSES, pipeline[i].name);
        bool before = pipeline[i].flags & DUMP_BEFORE;
        if (before && out_dir && driver_wants_dump(opt, pipeline[i].name) &&
            !driver_dump_graph(c, arena_printf(c->arena, "layout.%s.txt", pipeline[i].name))) {
            ok = false;
            break;
        }
        double t0 = now_ms();
        bool skip = (pipeline[i].flags & CODE) && opt->ival[MN_OPT_plan_only];
        if (skip) c->app_status = "not written: plan_only (the compile stopped before Code Emit)";
        ok = (skip || pipeline[i].fn(c)) && mn_memory_ok(c);
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
                diag_error(&c->diag, DIAG_INVALID, "%s: internal error: invariant broken after pass %s: %s", model_path,
                           r->name, verr);
                ok = false;
                r->ok = false;
            }
        }
        if (!ok) mn_log(c, 2, "%s", c->diag.msg);
        if (ok && out_dir && !before && driver_wants_dump(opt, r->name))
            ok = driver_dump_graph(c, arena_printf(c->arena, "layout.%s.txt", r->name));
        if (ok && (pipeline[i].flags & OUT_ONNX) && opt->sval[MN_OPT_out_onnx][0]) {
            MNBuf b = {0};
            ok = onnx_write_model(c, c->g, false, &b) &&
                 mn_art_write_path(c, opt->sval[MN_OPT_out_onnx], b.data ? b.data : "", b.len);
            buf_free(&b);
        }
        /* the report as the compile goes (mncc batch shows each child's pass from it), at
         * most every 100 ms: rewriting three files after each of 15 passes was a quarter
         * of a small model's compile */
        if (out_dir && ok && i < NPASSES - 1 &&
            now_ms() - last_report >= 100) { /* after the last pass, the final report follows */
            if (!mn_report_write(c)) ok = false;
            last_report = now_ms();
        }
    }
    emit_params_drop(c); /* what Code Emit did not take, or all of it when it did not run */
    memo_free(c->check_memo);
    c->check_memo = NULL;
    if (dumping) pthread_join(dumps.tid, NULL);
    if (c->sched && !sched_results_write(c)) ok = false; /* the schedule pass did not run to write it */
    if (ok) {
        c->cur_pass = "artifacts";
        if (out_dir && dumping)
            ok = driver_write_dumps(c, &dumps);
        else if (out_dir) {
            Dumps d;
            driver_dumps_init(&d, c);
            driver_build_dumps(&d);
            ok = driver_write_dumps(c, &d);
        }
        if (ok && c->no_program) { /* the dumps show how far it went; the compile has failed */
            c->cur_pass = "emit";
            diag_error(&c->diag, DIAG_UNSUPPORTED, "%s: no program: %s (plan_only=true plans without one)", model_path,
                       c->no_program);
            ok = false;
        }
        if (ok && out_dir && opt->stamp) ok = driver_write_stamp(c);
        c->finished = ok;
    } else if (dumping)
        driver_dumps_free(&dumps);
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

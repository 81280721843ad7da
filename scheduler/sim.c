/* Node Simulation: for every node and every variant that can matter to the scheduler,
 * the cycles it takes and the LM it needs.
 *
 * Variants: the output in LM0 or in LM1; in place (an elementwise output of input 0's
 * size written over input 0, when input 0 dies there: no new LM); double-buffered
 * matrix products (a temp the size of the weights lets the next weight block load
 * while the current one multiplies: a quarter fewer cycles for that much more LM).
 * Each variant also has a cost when two of its LM inputs share a bank: every bank has
 * one read port, so the second operand takes an extra step per long word (docs/vsm.md
 * section 6). The scheduler picks among them once it knows the banks.
 *
 * The estimates come from the machine description: steps per long word of each unit,
 * the matrix unit's 8x8 product per MAB, DRAM latency and bandwidth, and the tree's
 * distribute bandwidths. fake and fast use them alone (fast: only the two bank
 * variants), a quick compile's choice. default (and best, its older name) then times
 * every distinct node's variants from its emitted code on the emulator's timing model
 * (MNCompile.code's measure: the node alone, its inputs at the bottom of the banks), since the
 * estimates alone missed the emitted code by up to a hundredfold (bench/sim_check.py
 * prints estimate / emulated per node kind). A node the emitter cannot take alone keeps
 * the estimates.
 *
 * Results are cached, content-addressed by the node's signature (op, attributes,
 * shapes, dtypes, layouts, locations, the whole machine, compiler version, mode), so a
 * second compile of the same model, or of another with the same layers, reuses them;
 * num_threads simulates nodes on several threads, each writing only its own records,
 * so the results do not depend on the thread count. */
#include "scheduler.h"
#include "ops.h"
#include "plan.h"
#include "version.h"
#include "sim_model_id.h" /* generated: a hash of this file and of the layout switch costs */
#include "code_model_id.h" /* generated: a hash of every source the emitted code and its timing come from */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* FNV-1a, 64 bits (the signature itself is kept in a cache entry to rule out
 * collisions); more() continues a hash, so the machine's part is hashed once. */
static uint64_t more(uint64_t h, const void *p, size_t n) {
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
    return h;
}
uint64_t sim_hash(const void *p, size_t n) { return more(1469598103934665603ull, p, n); }

static int64_t steps(const MNMachine *m, const char *mnemonic, int dflt) {
    for (int i = 0; i < m->nsteps_override; i++)
        if (!strcmp(m->steps_override[i].name, mnemonic)) return m->steps_override[i].steps;
    return dflt;
}

static int64_t lw_of(const MNValue *v) { return v && v->num_lw > 0 ? v->num_lw : 0; }
static bool in_lm(const MNValue *v) { return v && v->loc_kind == MN_LOC_KIND_LM && mn_dtype_bytes(v->dtype); }

int64_t sim_dram_bytes(const MNValue *v) {
    MNLayout l;
    if (layout_get(v, &l)) return layout_dram_lw(&l) * 8;
    int64_t n = ir_shape_numel(&v->type);
    int b = mn_dtype_bytes(v->dtype);
    return n > 0 ? n * (b ? b : 4) : 0;
}

/* DRAM to the L2B memories (latency, then the groups' bandwidth), then down the tree
 * to every PE (L2BM -> L1BM, L1BM -> PE, each level in parallel over its members). */
int64_t sim_dram_cycles(const MNMachine *m, const MNValue *v) {
    double lw = (double)sim_dram_bytes(v) / 8;
    double per_pe = (double)lw_of(v);
    double dram = lw / (m->bw_dram_l2bm * m->groups);
    double l2 = per_pe * m->pe_per_mab * m->mab_per_l1b * m->l1b_per_l2b / m->bw_l2bm_l1bm_distribute;
    double l1 = per_pe * m->pe_per_mab * m->mab_per_l1b / m->bw_l1bm_pe_distribute;
    return m->dram_latency_cycles + (int64_t)ceil(dram + l2 + l1);
}

int64_t sim_move_cycles(const MNMachine *m, const MNValue *v) { return lw_of(v) * m->cycles_per_step; }

/* steps per output long word of an elementwise op */
static int64_t ew_steps(const MNMachine *m, int op) {
    int64_t rcp = steps(m, "frcp", 1), ex = steps(m, "fexp", 1), lg = steps(m, "flog", 1);
    switch (op) {
    case OP_Div:
    case OP_Reciprocal: return rcp + 1;
    case OP_Exp: return ex;
    case OP_Log: return lg;
    case OP_Sqrt: return rcp + 2;
    case OP_Pow: return lg + ex + 1;
    case OP_Sigmoid:
    case OP_HardSwish:
    case OP_HardSigmoid: return ex + rcp + 2;
    case OP_Tanh:
    case OP_Elu:
    case OP_Selu:
    case OP_Celu:
    case OP_Softplus:
    case OP_Softsign:
    case OP_Mish: return ex + rcp + 3;
    case OP_Erf:
    case OP_Gelu: return ex + rcp + 6;
    case OP_Sin:
    case OP_Cos:
    case OP_Tan:
    case OP_Asin:
    case OP_Acos:
    case OP_Atan:
    case OP_Sinh:
    case OP_Cosh:
    case OP_Asinh:
    case OP_Acosh:
    case OP_Atanh: return 12;
    case OP_Mod: return rcp + 3;
    default: return 1;
    }
}

static int64_t numel(const MNValue *v) {
    int64_t n = v ? ir_shape_numel(&v->type) : 0;
    return n > 0 ? n : 0;
}

/* multiply-accumulates of a matrix op, and the weight operand */
static int64_t macs(const MNNode *n, const MNValue **w) {
    const MNValue *o = n->out[0];
    *w = n->nin > 1 ? n->in[1] : NULL;
    switch (n->op) {
    case OP_MatMul:
    case OP_Gemm: {
        const MNValue *a = n->in[0];
        int64_t k = a->type.rank >= 1 ? a->type.dims[a->type.rank - 1] : 1;
        if (n->op == OP_Gemm && ir_attr_int(n, "transA", 0) && a->type.rank == 2) k = a->type.dims[0];
        return numel(o) * k;
    }
    case OP_Conv:
    case OP_ConvTranspose: {
        /* Conv: each output element reads C/group x kernel inputs (W is (M, C/g, k...));
         * ConvTranspose: each input element feeds M/group x kernel outputs (W is (C, M/g, k...)) */
        const MNValue *wt = n->in[1];
        int64_t per = 1;
        for (int i = 1; i < wt->type.rank; i++) per *= wt->type.dims[i];
        return (n->op == OP_Conv ? numel(o) : numel(n->in[0])) * per;
    }
    default: return 0;
    }
}

static SimResource resource_of(const MNNode *n) {
    if (mn_op_has(n->op, MN_GATHER)) return SIM_TREE;
    switch (n->op) {
    case OP_MNCoreDownload:
    case OP_MNCoreUpload:
    case OP_MNCoreInputSplit:
    case OP_MNCoreOutputConcat: return SIM_DRAM;
    case OP_MNCoreLayoutSwitch:
    case OP_MNCoreMove:
    case OP_GatherElements:
    case OP_Resize:
    case OP_Upsample: return SIM_TREE;
    default: return SIM_COMPUTE;
    }
}

/* a fold along axes (a reduction, Softmax, a normalization, a global pool): per long
 * word the op's steps, then a reduction up the tree and the result back */
static int64_t fold_cycles(const MNMachine *m, const MNNode *n, int64_t out_lw) {
    int64_t cps = m->cycles_per_step;
    int64_t per = n->op == OP_Softmax || n->op == OP_LogSoftmax ? steps(m, "fexp", 1) + steps(m, "frcp", 1) + 3
                  : n->op == OP_LayerNormalization || n->op == OP_InstanceNormalization ? steps(m, "frcp", 1) + 6
                                                                                        : 2;
    int64_t tree = 2 * (int64_t)ceil(log2((double)m->n_pe)) * cps;
    return lw_of(n->in[0]) * per * cps + tree + out_lw * cps;
}

/* the cycles of the standard variant */
static int64_t base_cycles(const MNMachine *m, const MNNode *n, int64_t *conflict_extra) {
    int64_t cps = m->cycles_per_step, in_lw = 0, out_lw = 0;
    for (int k = 0; k < n->nin; k++) in_lw += in_lm(n->in[k]) ? lw_of(n->in[k]) : 0;
    for (int k = 0; k < n->nout; k++) out_lw += lw_of(n->out[k]);
    *conflict_extra = 0;
    const MNValue *w;
    int64_t mac = macs(n, &w);
    if (mac) { /* the MAB matrix unit: an 8x8 block (float; 16x16 in half) times 4 vectors in fmmul's steps */
        bool half = n->in[0]->dtype == MN_DT_Half;
        double per_step = (half ? 256.0 : 128.0) / (double)steps(m, "fmmul", 2) * 2;
        double st = (double)mac / ((double)m->n_mab * per_step);
        int64_t load = lw_of(w) * cps; /* weights into the matrix registers, block by block */
        int nlm = 0;
        for (int k = 0; k < n->nin; k++) nlm += in_lm(n->in[k]);
        if (nlm >= 2) *conflict_extra = out_lw * cps;
        return (int64_t)ceil(st) * cps + load + out_lw * cps;
    }
    if (mn_op_has(n->op, MN_REDUCE)) return fold_cycles(m, n, out_lw);
    switch (n->op) {
    case OP_MNCoreDownload: return sim_dram_cycles(m, n->out[0]);
    case OP_MNCoreUpload: return sim_dram_cycles(m, n->in[0]);
    case OP_MNCoreInputSplit:
    case OP_MNCoreOutputConcat: {
        int64_t t = 0;
        const bool split = n->op == OP_MNCoreInputSplit;
        for (int k = 0; k < (split ? n->nout : n->nin); k++) t += sim_dram_cycles(m, split ? n->out[k] : n->in[k]);
        return t;
    }
    case OP_MNCoreLayoutSwitch: {
        MNLayout a, b;
        if (layout_get(n->in[0], &a) && layout_get(n->out[0], &b))
            return (int64_t)ceil(plan_switch_cycles(m, &a, &b, lw_of(n->out[0])));
        return 2 * out_lw * cps;
    }
    case OP_MNCoreMove: return out_lw * cps;
    case OP_MNCoreForget: return 0;
    case OP_MNCoreOutputSum: return (int64_t)(n->nin > 1 ? n->nin - 1 : 1) * out_lw * cps;
    case OP_Softmax:
    case OP_LogSoftmax:
    case OP_Hardmax:
    case OP_LayerNormalization:
    case OP_BatchNormalization:
    case OP_InstanceNormalization:
    case OP_LRN:
    case OP_ArgMax:
    case OP_ArgMin:
    case OP_GlobalAveragePool:
    case OP_GlobalMaxPool: return fold_cycles(m, n, out_lw);
    case OP_MaxPool:
    case OP_AveragePool: {
        const MNAttr *ks = ir_attr(n, "kernel_shape");
        int64_t win = 1;
        for (int i = 0; ks && i < ks->n; i++) win *= ks->ints[i];
        return out_lw * win * cps + lw_of(n->in[0]) * cps;
    }
    default: break;
    }
    if (resource_of(n) == SIM_TREE) /* gathered and re-distributed through L1BM */
        return (int64_t)ceil(2.0 * (double)(in_lw + out_lw) * m->mab_per_l1b * m->pe_per_mab /
                             m->bw_l1bm_pe_distribute) +
               cps;
    int nlm = 0;
    for (int k = 0; k < n->nin; k++) nlm += in_lm(n->in[k]);
    if (nlm >= 2) *conflict_extra = out_lw * cps;
    return out_lw * ew_steps(m, n->op) * cps + cps;
}

static bool elementwise_inplace(const MNNode *n) {
    if (n->nout != 1 || !n->out[0] || n->nin < 1 || !in_lm(n->in[0]) || !in_lm(n->out[0])) return false;
    if (n->in[0]->num_lw != n->out[0]->num_lw || mn_dtype_bytes(n->in[0]->dtype) != mn_dtype_bytes(n->out[0]->dtype))
        return false;
    if (!n->in[0]->lay || !layout_equal(n->in[0], n->out[0])) return false;
    if (n->in[0]->is_input || n->in[0]->konst) return false;
    return mn_op_has(n->op, MN_INPLACE);
}

void sim_node(const MNMachine *m, const MNNode *n, int mode, SimNode *out) {
    memset(out, 0, sizeof *out);
    out->res = resource_of(n);
    int64_t extra, cyc = base_cycles(m, n, &extra), lm = 0;
    for (int k = 0; k < n->nin; k++) lm += in_lm(n->in[k]) ? lw_of(n->in[k]) : 0;
    int64_t out_lw = 0;
    for (int k = 0; k < n->nout; k++) out_lw += in_lm(n->out[k]) ? lw_of(n->out[k]) : 0;
    for (int b = 0; b < 2; b++) out->var[out->nvar++] = (SimVariant){b, false, cyc, cyc + extra, lm + out_lw, 0};
    if (mode == MN_SIM_FAST) return;
    if (elementwise_inplace(n)) out->var[out->nvar++] = (SimVariant){-1, false, cyc, cyc + extra, lm, 0};
    const MNValue *w;
    if (macs(n, &w) && in_lm(w) && lw_of(w) > 0) {
        int64_t fast = cyc - lw_of(w) * m->cycles_per_step / 4 * 3; /* weight loads overlap the products */
        if (fast < 1) fast = 1;
        for (int b = 0; b < 2; b++)
            out->var[out->nvar++] = (SimVariant){b, true, fast, fast + extra, lm + out_lw + lw_of(w), lw_of(w)};
    }
}

static void sig_value(MNBuf *b, const char *tag, int k, const MNValue *v) {
    if (!v) {
        buf_printf(b, "%s%d -\n", tag, k);
        return;
    }
    buf_printf(b, "%s%d %s [", tag, k, onnx_type_name(v->type.elem));
    for (int i = 0; i < v->type.rank; i++) buf_printf(b, i ? ",%lld" : "%lld", (long long)v->type.dims[i]);
    buf_printf(b, "] %s %s lw=%lld loc=%d input=%d const=%d\n", mn_dtype_name(v->dtype), v->layout ? v->layout : "-",
               (long long)v->num_lw, (int)v->loc_kind, v->is_input, v->konst != NULL);
}

static void sig_machine(const MNMachine *m, int mode, MNBuf *b) {
    /* the cost model's own source is part of the key: a rebuilt estimator never reads
     * what an older one cached */
    buf_printf(b, "mncc %s node-simulation %s mode=%d\n", mncc_version, MN_SIM_MODEL_ID, mode);
    /* the whole machine: any figure may change an estimate */
    buf_printf(b,
               "machine %s %d %d %d %d %d lm %lld %lld grf %lld %lld l1bm %lld l2bm %lld dram %lld bits %d %d %d clock "
               "%.17g issue %d %d %d %d %d %d"
               " bw %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g lat %d %d align %d pdm %lld\n",
               m->name, m->groups, m->l2b_per_group, m->l1b_per_l2b, m->mab_per_l1b, m->pe_per_mab,
               (long long)m->lm0_lw, (long long)m->lm1_lw, (long long)m->grf0_lw, (long long)m->grf1_lw,
               (long long)m->l1bm_lw, (long long)m->l2bm_lw, (long long)m->dram_lw, m->half_bits, m->word_bits,
               m->long_bits, m->clock_mhz, m->cycles_per_step, m->mv_issue_steps, m->lm_raw_steps, m->grf_raw_steps,
               m->l1bm_raw_steps, m->l2bm_raw_steps, m->bw_l1bm_pe_broadcast, m->bw_l1bm_pe_distribute,
               m->bw_l2bm_l1bm_broadcast, m->bw_l2bm_l1bm_distribute, m->bw_dram_l2bm, m->bw_pdm, m->bw_l2bm_mv,
               m->bw_cross_group, m->dram_latency_cycles, m->pdm_latency_cycles, m->address_alignment_lw,
               (long long)m->pdm_lw);
    for (int i = 0; i < m->nsteps_override; i++)
        buf_printf(b, "steps %s %d\n", m->steps_override[i].name, m->steps_override[i].steps);
}

static void sig_node(const MNNode *n, MNBuf *b) {
    buf_printf(b, "op %s::%s\n", n->domain, n->op_type);
    ir_attrs_key(b, n); /* other attribute kinds: by name and kind only, as before */
    for (int k = 0; k < n->nin; k++) sig_value(b, "in", k, n->in[k]);
    for (int k = 0; k < n->nout; k++) sig_value(b, "out", k, n->out[k]);
}

/* ---- the pass ---- */

/* Work for the threads: first every node's signature and key (the node's part only:
 * the machine's is the same for all), then one simulation or cache lookup per distinct
 * signature, whose result every node with it shares. Each thread writes only its own
 * slots, so the results are the same for any thread count. */
typedef struct {
    MNCompile *c;
    MNNode **nodes;
    int n, mode, tid, nthreads, phase;
    char **sig; /* per node: its part of the signature */
    uint64_t *key;
    int *uniq, nuniq; /* representatives, one per distinct signature */
    const MNBuf *mtext; /* the machine's part */
    uint64_t mhash;
    SimCache cache; /* per thread: counters summed afterwards */
} Work;

static void *work(void *arg) {
    Work *w = arg;
    SchedState *st = w->c->sched;
    if (w->phase == 0) {
        for (int i = w->tid; i < w->n; i += w->nthreads) {
            MNBuf b = {0};
            sig_node(w->nodes[i], &b);
            w->key[i] = more(w->mhash, b.data, b.len);
            w->sig[i] = b.data;
        }
        return NULL;
    }
    for (int u = w->tid; u < w->nuniq; u += w->nthreads) {
        int i = w->uniq[u];
        MNNode *n = w->nodes[i];
        SimNode *sn = &st->sim[n->sim];
        MNBuf full = {0};
        if (w->cache.dir) {
            buf_append(&full, w->mtext->data, w->mtext->len);
            buf_printf(&full, "%s", w->sig[i]);
        }
        if (!w->cache.dir || !sim_cache_get(&w->cache, full.data, w->key[i], sn)) {
            sim_node(&w->c->machine, n, w->mode, sn);
            if (w->cache.dir) sim_cache_put(&w->cache, full.data, w->key[i], sn);
        }
        sn->key = w->key[i];
        buf_free(&full);
    }
    return NULL;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static int by_sig(const void *a, const void *b, void *ctx) { /* by key, then text */
    const Work *w = ctx;
    int i = *(const int *)a, j = *(const int *)b;
    uint64_t x = w->key[i], y = w->key[j];
    if (x != y) return x < y ? -1 : 1;
    int c = strcmp(w->sig[i], w->sig[j]);
    return c ? c : i - j;
}

static void run_threads(Work *w, int nt, int phase) {
    pthread_t th[64];
    for (int t = 0; t < nt; t++) w[t].phase = phase;
    for (int t = 1; t < nt; t++)
        if (pthread_create(&th[t], NULL, work, &w[t])) die("cannot start a Node Simulation thread");
    work(&w[0]);
    for (int t = 1; t < nt; t++) pthread_join(th[t], NULL);
}

static const char *res_name(SimResource r) { return r == SIM_COMPUTE ? "compute" : r == SIM_DRAM ? "dram" : "tree"; }

/* simulation_result.json's text, as a stream: a 100k-node graph makes a large file. It
 * reads only what the schedule pass leaves alone (the nodes' names, kinds and results,
 * not the graph's node array, which grows), so it may run while that pass does. */
typedef struct SimResults {
    const MNCompile *c;
    MNNode **nodes; /* a copy of the graph's, as Node Simulation saw it */
    int nn;
    MNBuf b;
    pthread_t tid;
    bool threaded;
} SimResults;

static void *results_text(void *arg) {
    SimResults *r = arg;
    const MNCompile *c = r->c;
    MNBuf *b = &r->b;
    char buf[32];
    buf_printf(b,
               "{\n\"mode\": \"%s\",\n\"machine\": ", opt_value_text(c->opt, MN_OPT_simulation_mode, buf, sizeof buf));
    buf_json_string(b, c->machine.name);
    buf_printf(b, ",\n\"nodes\": [");
    for (int i = 0; i < r->nn; i++) {
        const MNNode *n = r->nodes[i];
        const SimNode *sn = &c->sched->sim[n->sim];
        buf_printf(b, "%s\n{\"node\": ", i ? "," : "");
        buf_json_string(b, n->name);
        buf_printf(b, ", \"op\": ");
        buf_json_string(b, n->op_type);
        buf_printf(b, ", \"key\": \"%016llx\", \"resource\": \"%s\", \"variants\": [", (unsigned long long)sn->key,
                   res_name(sn->res));
        for (int k = 0; k < sn->nvar; k++) {
            const SimVariant *v = &sn->var[k];
            buf_printf(b,
                       "%s{\"output\": \"%s\", \"double_buffered\": %s, \"cycles\": %lld, \"cycles_bank_conflict\": "
                       "%lld, \"lm_lw\": %lld, \"temp_lw\": %lld}",
                       k ? ", " : "",
                       v->out_bank < 0 ? "in_place"
                       : v->out_bank   ? "LM1"
                                       : "LM0",
                       v->fast ? "true" : "false", (long long)v->cycles, (long long)v->cycles_conflict,
                       (long long)v->lm_lw, (long long)v->temp_lw);
        }
        buf_printf(b, "]}");
    }
    buf_printf(b, "\n]\n}\n");
    return NULL;
}

bool sched_results_write(MNCompile *c) {
    SimResults *r = c->sched ? c->sched->results : NULL;
    if (!r) return true;
    c->sched->results = NULL;
    if (r->threaded)
        pthread_join(r->tid, NULL);
    else
        results_text(r);
    free(r->nodes);
    bool ok = mn_art_write_owned(c, "simulation_result.json", r->b.data, r->b.len); /* the writer's once it is large */
    free(r);
    return ok;
}

/* the text made on a thread of its own while the schedule is made (a large graph with
 * threads to spare), else at once; written by sched_results_write */
static bool write_results(MNCompile *c, MNNode **nodes, int nn) {
    SimResults *r = xcalloc(1, sizeof *r);
    r->c = c;
    r->nn = nn;
    r->nodes = xmalloc(sizeof(MNNode *) * (size_t)(nn + 1));
    memcpy(r->nodes, nodes, sizeof(MNNode *) * (size_t)nn);
    c->sched->results = r;
    r->threaded = mn_threads(c) >= 2 && nn >= 256 && !pthread_create(&r->tid, NULL, results_text, r);
    return r->threaded || sched_results_write(c);
}

/* The cache directory of this compile: --cache-dir, else the user's cache when writing
 * a codegen dir (in-memory compiles, as in the test sweeps, leave the disk alone). */
static const char *cache_dir(MNCompile *c) {
    const char *d = c->opt->cache_dir;
    if (d) return strcmp(d, "none") && *d ? d : NULL;
    if (!c->out_dir) return NULL;
    const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    if (x && *x) return arena_printf(c->arena, "%s/mncc/sim", x);
    if (h && *h) return arena_printf(c->arena, "%s/.cache/mncc/sim", h);
    return NULL;
}

typedef struct {
    MNNode **piece_node;
    bool *done;
    MNNode **order;
    int *w, nv;
} PieceOrder;

/* put the piece steps that n reads before n (a piece of a piece first its parent's) */
static void place_inputs(PieceOrder *po, const MNNode *n) {
    for (int k = 0; k < n->nin; k++) {
        const MNValue *x = n->in[k];
        if (!x || x->id >= po->nv || !po->piece_node[x->id] || po->done[x->id]) continue;
        po->done[x->id] = true;
        place_inputs(po, po->piece_node[x->id]);
        po->order[(*po->w)++] = po->piece_node[x->id];
    }
}

/* A split becomes one step per piece, placed just before the piece's first reader, so
 * that pieces are cut (from DRAM, usually) when needed rather than all at once: their
 * sum is the whole value that did not fit. Each step keeps the axis and gets the
 * piece's start, which is what the verifier checks windows against. */
static void split_per_piece(MNCompile *c) {
    MNGraph *g = c->g;
    int nn = g->nnodes, nv = g->nvalues, w = 0, cuts = 0;
    MNNode **piece_node = xcalloc((size_t)nv + 1, sizeof(MNNode *)); /* per piece value: its own split */
    bool *done = xcalloc((size_t)nv + 1, sizeof(bool));
    MNNode **order = ARENA_ARRAY(c->arena, MNNode *, 2 * nn + nv + 1);
    MNNode **orig = xmalloc(sizeof(MNNode *) * (size_t)(nn + 1));
    memcpy(orig, g->nodes, sizeof(MNNode *) * (size_t)nn);
    for (int i = 0; i < nn; i++) {
        MNNode *n = orig[i];
        if (n->op != OP_MNCoreInputSplit || n->nout < 2) continue;
        int ax = (int)ir_attr_int(n, "axis", 0);
        const MNAttr *st = ir_attr(n, "starts");
        int64_t at = 0;
        for (int k = 0; k < n->nout; k++) {
            MNValue *p = n->out[k];
            MNNode *q = ir_node_new(g, "MNCoreInputSplit", 1, 1);
            q->name = arena_printf(g->arena, "%s_%d", n->name, k);
            q->domain = "mncore";
            q->in[0] = n->in[0];
            q->out[0] = p;
            p->producer = q;
            p->producer_out = 0;
            q->nattr = 2;
            q->attrs = ARENA_ARRAY(g->arena, MNAttr, 2);
            int64_t *one = ARENA_NEW(g->arena, int64_t);
            *one = st && st->n == n->nout ? st->ints[k] : at;
            at += p->type.dims[ax];
            q->attrs[0] = (MNAttr){.name = "axis", .type = MN_ATTR_INT, .i = ax};
            q->attrs[1] = (MNAttr){.name = "starts", .type = MN_ATTR_INTS, .n = 1, .ints = one};
            piece_node[p->id] = q;
            cuts++;
        }
        n->dead = true;
    }
    PieceOrder po = {piece_node, done, order, &w, nv};
    for (int i = 0; i < nn; i++) {
        MNNode *n = orig[i];
        if (n->dead) continue;
        place_inputs(&po, n);
        order[w++] = n;
    }
    for (int v = 0; v < nv; v++) /* any piece still unplaced (unused): at the end */
        if (piece_node[v] && !done[v]) {
            place_inputs(&po, piece_node[v]);
            done[v] = true;
            order[w++] = piece_node[v];
        }
    g->nnodes = 0;
    for (int i = 0; i < w; i++) g->nodes[g->nnodes++] = order[i];
    ir_recount_uses(g);
    free(piece_node);
    free(done);
    free(orig);
    if (cuts) mn_log(c, 0, "node simulation: %d split pieces, each cut just before its first reader", cuts);
}

/* default and best: each variant's cycles from its emitted code on the emulator's timing
 * model, twice: LM inputs in alternate banks, the first opposite the output (cycles), and
 * in conflict (cycles_conflict): all in one bank, opposite the output, or a single LM
 * input in the output's bank (one read port; a write to the bank being read waits). The
 * schedule takes the second figure in the same cases (sched.c). The output in LM1 takes
 * the figures of the output in LM0, the banks mirrored (two emissions a node, not four:
 * bench/sim_check.py keeps every kind within 25 % with it). The double-buffered variants are
 * not emitted differently, so they take the plain variant's cycles (and keep their extra LM:
 * never preferred). False when the node cannot be emitted alone (it keeps the estimates). */
static bool time_variants(MNCompile *c, const MNNode *n, SimNode *sn) {
    enum { MAXIN = 64 };
    int alt[MAXIN], one[MAXIN];
    if (n->nin > MAXIN || !c->code) return false;
    int64_t plain[2][2] = {{-1, -1}, {-1, -1}};
    bool any = false;
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < sn->nvar; k++) {
            SimVariant *v = &sn->var[k];
            if (v->fast != (pass == 1)) continue;
            if (v->fast ||
                (v->out_bank == 1 && plain[0][0] >= 0)) { /* the output in LM1 is taken to cost what LM0's did */
                int b = v->fast ? v->out_bank : 0;
                if (b >= 0 && plain[b][0] >= 0) {
                    v->cycles = plain[b][0];
                    v->cycles_conflict = plain[b][1];
                }
                if (v->out_bank == 1 && !v->fast) {
                    plain[1][0] = v->cycles;
                    plain[1][1] = v->cycles_conflict;
                }
                continue;
            }
            int start = v->out_bank >= 0 ? 1 - v->out_bank : 0, nl = 0,
                nlm = 0; /* nlm: distinct LM inputs (Mul(x, x) reads one) */
            for (int j = 0; j < n->nin; j++) {
                bool again = false;
                for (int i = 0; i < j; i++) again |= n->in[i] == n->in[j];
                nlm += in_lm(n->in[j]) && !again;
            }
            for (int j = 0; j < n->nin; j++) {
                alt[j] = (start + nl) % 2;
                one[j] = nlm == 1 && v->out_bank >= 0 ? v->out_bank : start;
                nl += in_lm(n->in[j]);
            }
            int64_t cyc = c->code->measure(c, n, alt, v->out_bank);
            if (cyc < 0) continue;
            int64_t cc = nl ? c->code->measure(c, n, one, v->out_bank) : cyc;
            v->cycles = cyc;
            v->cycles_conflict = cc >= cyc ? cc : cyc;
            if (v->out_bank >= 0) {
                plain[v->out_bank][0] = v->cycles;
                plain[v->out_bank][1] = v->cycles_conflict;
            }
            any = true;
        }
    return any;
}

/* A distinct node timed from its code (time_variants), through the cache: its entry is
 * the estimate's signature under the code's own model id (every source emission and
 * timing come from), one key for a node that could be timed and one for a node that kept
 * its estimates; true when it was timed */
static bool timed_cached(MNCompile *c, MNNode *n, SimCache *tc, const MNBuf *mtext, const char *sig) {
    SimNode *sn = &c->sched->sim[n->sim];
    MNBuf full[2] = {{0}, {0}};
    int got = -1;
    for (int t = 0; t < 2 && tc->dir; t++) {
        buf_printf(&full[t], "timed from code %s: %s\n", MN_CODE_MODEL_ID, t ? "no" : "yes");
        buf_append(&full[t], mtext->data, mtext->len);
        buf_printf(&full[t], "%s", sig);
        SimNode cs;
        int64_t misses = tc->misses;
        if (got < 0 && sim_cache_get(tc, full[t].data, sim_hash(full[t].data, full[t].len), &cs)) {
            cs.key = sn->key;
            *sn = cs;
            got = t;
        }
        tc->misses = misses; /* (one miss a node, counted by the caller) */
    }
    bool timed = got >= 0 ? got == 0 : time_variants(c, n, sn);
    if (got < 0 && tc->dir) sim_cache_put(tc, full[!timed].data, sim_hash(full[!timed].data, full[!timed].len), sn);
    buf_free(&full[0]);
    buf_free(&full[1]);
    return timed;
}

bool sched_node_simulation(MNCompile *c) {
    MNGraph *g = c->g;
    split_per_piece(c);
    int mode = (int)c->opt->ival[MN_OPT_simulation_mode];
    bool timed = mode >= MN_SIM_DEFAULT; /* best: the name default had when fast and default estimated alike */
    if (timed) mode = MN_SIM_DEFAULT; /* the estimates first: what cannot be emitted alone keeps them */
    bool fake = mode == MN_SIM_FAKE;
    if (fake) mode = MN_SIM_FAST; /* the fewest variants, and no cache to read or write */
    SchedState *st = ARENA_NEW(c->arena, SchedState);
    c->sched = st;
    st->nsim = g->nnodes;
    st->sim = ARENA_ARRAY(c->arena, SimNode, g->nnodes + 1);
    for (int i = 0; i < g->nnodes; i++) g->nodes[i]->sim = i;
    int nt = mn_threads(c);
    if (nt > g->nnodes) nt = g->nnodes > 0 ? g->nnodes : 1;
    c->cache_dir = fake ? NULL : cache_dir(c);
    int nn = g->nnodes;
    MNBuf mtext = {0};
    sig_machine(&c->machine, mode, &mtext);
    uint64_t mhash = sim_hash(mtext.data, mtext.len);
    char **sig = xcalloc((size_t)nn + 1, sizeof(char *));
    uint64_t *key = xcalloc((size_t)nn + 1, sizeof(uint64_t));
    int *ord = xmalloc(sizeof(int) * (size_t)(nn + 1)), *rep = xmalloc(sizeof(int) * (size_t)(nn + 1)),
        *uniq = xmalloc(sizeof(int) * (size_t)(nn + 1));
    Work *w = xcalloc((size_t)nt, sizeof *w);
    for (int t = 0; t < nt; t++)
        w[t] = (Work){c, g->nodes, nn, mode, t, nt, 0, sig, key, uniq, 0, &mtext, mhash, {c->cache_dir, 0, 0, 0, 0}};
    run_threads(w, nt, 0);
    for (int i = 0; i < nn; i++) ord[i] = i;
    qsort_r(ord, (size_t)nn, sizeof(int), by_sig, &w[0]);
    int nu = 0;
    for (int k = 0; k < nn; k++) {
        int i = ord[k];
        bool same = k > 0 && key[i] == key[ord[k - 1]] && !strcmp(sig[i], sig[ord[k - 1]]);
        if (!same) uniq[nu++] = i;
        rep[i] = uniq[nu - 1];
    }
    /* representatives in node order, so the cache sees the same sequence every time */
    qsort(uniq, (size_t)nu, sizeof(int), cmp_int);
    for (int t = 0; t < nt; t++) w[t].nuniq = nu;
    run_threads(w, nt, 1);
    if (timed) { /* one thread: emission allocates in the compile's arena */
        int ntimed = 0;
        SimCache tc = {c->cache_dir, 0, 0, 0, 0};
        for (int k = 0; k < nu; k++) ntimed += timed_cached(c, g->nodes[uniq[k]], &tc, &mtext, sig[uniq[k]]);
        c->cache_hits += tc.hits;
        c->cache_misses += nu - tc.hits;
        c->cache_corrupt += tc.corrupt;
        c->cache_write_failures += tc.write_failures;
        mn_figure(c, "nodes_timed_from_code", ntimed);
        mn_log(c, 0, "node simulation (timed): %d of %d distinct nodes timed from their emitted code%s", ntimed, nu,
               ntimed < nu ? "; the others (not emitted alone) keep the estimates" : "");
    }
    for (int i = 0; i < nn; i++)
        if (rep[i] != i) st->sim[g->nodes[i]->sim] = st->sim[g->nodes[rep[i]]->sim];
    for (int t = 0; t < nt; t++) {
        c->cache_hits += w[t].cache.hits;
        c->cache_misses += w[t].cache.misses;
        c->cache_corrupt += w[t].cache.corrupt;
        c->cache_write_failures += w[t].cache.write_failures;
    }
    for (int i = 0; i < nn; i++) free(sig[i]);
    free(sig);
    free(key);
    free(ord);
    free(rep);
    free(uniq);
    free(w);
    buf_free(&mtext);
    mn_figure(c, "distinct_signatures", nu);
    int64_t total = 0, variants = 0;
    for (int i = 0; i < g->nnodes; i++) {
        total += st->sim[i].var[0].cycles;
        variants += st->sim[i].nvar;
    }
    mn_figure(c, "nodes_simulated", g->nnodes);
    mn_figure(c, "variants", variants);
    mn_figure(c, "cycles_sum_lm0_variant", total);
    mn_figure(c, "threads", nt);
    if (c->cache_write_failures)
        mn_log(c, 1, "Node Simulation cache %s: %lld entries could not be written", c->cache_dir,
               (long long)c->cache_write_failures);
    mn_log(c, 0, "node simulation: %d nodes, %lld variants, %lld cycles if run one after another; cache %s", g->nnodes,
           (long long)variants, (long long)total, c->cache_dir ? c->cache_dir : "off");
    return !c->out_dir || write_results(c, g->nodes, g->nnodes);
}

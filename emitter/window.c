/* Code Emit: reductions, Softmax, pools and products as window ops.
 *
 * Each output element of these nodes is a fold over K source elements: the reduced set
 * of a reduction, the axis of a Softmax, the window of a pool, the K pairs of a Conv,
 * MatMul or Gemm. The sources go into a scratch as for a gather (emit.c), so that every
 * PE holds all of its L1B's source data, and an index table (a parameter, different per
 * PE) gives for each row and destination word the scratch word to read: element k of the
 * fold, the element itself (Softmax), a bias, or a constant of the scratch's pool (the
 * zero a padded Conv reads, the -inf of a padded MaxPool, an AveragePool's 1/count).
 * A row is fetched 4 words a step by T-indirect reads into GRF, and the fold runs on 4
 * words a step. Output words are independent of each other, so the output may have any
 * layout (even one spread over L1Bs); a source is either replicated on every L1B, or
 * read only on the L1B and L2B where it sits (the layout planner aligns window outputs
 * with their inputs for that), or gathered through the L2BM.
 *
 * Elementwise ops the vector path cannot take (operands of any broadcast, run-time
 * Clip bounds, float comparisons, Pow with a tensor exponent) are windows of one
 * element per operand. A Gather or GatherElements with indices computed at run time
 * folds over the K rows of its axis: row k is kept where index + 1/2 >= k, so the last
 * kept is the indexed one (masked writes; K at most the pool's index constants).
 *
 * This is the vector unit's way, and it says so: a product costs about 8 steps per 4
 * outputs per pair, far from the MAB matrix unit's peak, which no emitter uses yet.
 *
 * Registers (words): GRF0 r0 the accumulator, rB the running maximum, r2B a second
 * operand; GRF1 s0 the fetched row (before the fold, the staging of the constants). A
 * batch is B destination words (128, fewer on a machine with small GRFs: groups of 4);
 * each instruction of a phase runs over all groups,
 * so that a group's result is read at least 2 steps after it was written. */
#include "emit_impl.h"
#include "resize.h"
#include "infer.h"
#include "ops.h"
#include "plan.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
    WK_SUM,
    WK_MEAN,
    WK_MAX,
    WK_MIN,
    WK_PROD,
    WK_L1,
    WK_L2,
    WK_SUMSQ,
    WK_LOGSUM,
    WK_LSE,
    WK_SOFTMAX,
    WK_LOGSOFTMAX,
    WK_MAXPOOL,
    WK_AVGPOOL,
    WK_MAC,
    WK_BN,
    WK_NORM,
    WK_ARGMAX,
    WK_ARGMIN,
    WK_HARDMAX,
    WK_GATHER,
    WK_EW_SUM,
    WK_EW_MAX,
    WK_EW_MIN,
    WK_PRELU,
    WK_CLIP,
    WK_CMP,
    WK_WHERE,
    WK_POW /* elementwise over broadcast operands */
} WKind;

/* the fixed constants, then ArgMax's indices (planners/plan.h: the Gather's limit follows from them) */
enum { POOL_CAP = PLAN_POOL_CAP, POOL_WIDE = 128, K_FIRST_INDEX = PLAN_POOL_FIRST_INDEX };

/* the constants a node may use: staged in GRF1 on the way to the scratch */
static int pool_cap(const MNMachine *m) { return m->grf1_lw < POOL_CAP ? (int)m->grf1_lw : POOL_CAP; }
/* ... and a Resize whose weights need more (cubic): a wider pool, where GRF1 holds it */
static int pool_wide(const MNMachine *m) { return m->grf1_lw < POOL_WIDE ? (int)m->grf1_lw : POOL_WIDE; }

/* destination words per batch: the accumulator, maximum and second operand in GRF0, the
 * fetched row in GRF1 */
static int64_t batch_words(const MNMachine *m) {
    int64_t b = 128, g0 = 2 * m->grf0_lw / 3 / 4 * 4, g1 = 2 * m->grf1_lw / 4 * 4;
    if (g0 < b) b = g0;
    if (g1 < b) b = g1;
    return b;
}

typedef struct {
    const MNNode *n;
    WKind kind;
    int64_t K; /* fold length */
    int terms; /* 2: products of pairs */
    int rows, row_self, row_bias, row_scale;
    int nsrc;
    const MNValue *src[6];
    /* normalizations: scale, bias, mean, variance (BatchNormalization), each a source or
     * (psrc < 0) the constant pk; their rows */
    int psrc[4], prow[4];
    double pk[4], eps;
    int bias_src; /* the bias's source, -1: a constant (bias_k) or none */
    double bias_k, alpha, beta;
    bool mask[MN_MAX_RANK], keep; /* reductions and Softmax */
    MNWindow win; /* pools and Conv */
    bool include_pad;
    int oi; /* the output computed: LayerNormalization also gives Mean and InvStdDev */
    int64_t group;
    int lp; /* LpPool's p */
    const ResizePlan *rs; /* Resize, Upsample */
} Win;

/* the pool w's constants take: POOL_CAP, or a wide one for a Resize with more weights */
static int win_pool(const MNMachine *m, const Win *w) {
    return w->rs && resize_weights(w->rs) + 3 > pool_cap(m) - K_FIRST_INDEX ? pool_wide(m) : pool_cap(m);
}

static bool reduce_kind(int op, WKind *k) {
    switch (op) {
    case OP_ReduceSum: *k = WK_SUM; return true;
    case OP_ReduceMean: *k = WK_MEAN; return true;
    case OP_ReduceMax: *k = WK_MAX; return true;
    case OP_ReduceMin: *k = WK_MIN; return true;
    case OP_ReduceProd: *k = WK_PROD; return true;
    case OP_ReduceL1: *k = WK_L1; return true;
    case OP_ReduceL2: *k = WK_L2; return true;
    case OP_ReduceSumSquare: *k = WK_SUMSQ; return true;
    case OP_ReduceLogSum: *k = WK_LOGSUM; return true;
    case OP_ReduceLogSumExp: *k = WK_LSE; return true;
    default: return false;
    }
}

bool window_op(const MNNode *n) { return mn_op_has(n->op, MN_WIN); }

static int64_t prod(const int64_t *d, int n) {
    int64_t p = 1;
    for (int i = 0; i < n; i++) p *= d[i];
    return p;
}

/* an operand: absent (src stays -1, k its default), a one-element constant (taken into
 * the pool as k), or a source in LM */
static void operand(Win *w, const MNValue *v, int *src, double *k) {
    *src = -1;
    if (!v) return;
    if (v->loc_kind == MN_LOC_KIND_IMM && v->konst && v->konst->numel == 1)
        *k = ir_tensor_get_f(v->konst, 0);
    else
        *src = w->nsrc, w->src[w->nsrc++] = v;
}

/* parameter i of a normalization or elementwise op, in a row of its own */
static void norm_param(Win *w, int i, const MNValue *v, double dflt) {
    w->prow[i] = w->rows++;
    w->pk[i] = dflt;
    operand(w, v, &w->psrc[i], &w->pk[i]);
}

/* the distinct 1/count values of an AveragePool (bounded by the product of each axis's
 * distinct counts), or -1 past POOL_CAP */
static int64_t avg_counts(const Win *w, const MNValue *x, const MNValue *o) {
    int64_t total = 1;
    for (int i = 0; i < w->win.ns; i++) {
        int64_t seen[POOL_CAP], ns = 0, lo = w->include_pad ? -w->win.pb[i] : 0;
        int64_t hi = w->include_pad ? x->type.dims[2 + i] + w->win.pe[i] : x->type.dims[2 + i];
        for (int64_t p = 0; p < o->type.dims[2 + i]; p++) {
            int64_t cnt = 0;
            for (int64_t k = 0; k < w->win.k[i]; k++) {
                int64_t at = p * w->win.s[i] - w->win.pb[i] + k * w->win.d[i];
                cnt += at >= lo && at < hi;
            }
            int j = 0;
            while (j < ns && seen[j] != cnt) j++;
            if (j == ns) {
                if (ns == POOL_CAP) return -1;
                seen[ns++] = cnt;
            }
        }
        total *= ns;
        if (total > POOL_CAP) return -1;
    }
    return total;
}

/* Clip before opset 11: the bounds are attributes, defaulting to the float range */
static double clip_attr(const MNNode *n, int i, double dflt) { return ir_attr_float(n, i == 1 ? "min" : "max", dflt); }

bool window_elementwise(const MNNode *n) { return mn_op_has(n->op, MN_WEW); }

/* what node n folds; why says why not */
static bool win_of(MNCompile *c, MNNode *n, Win *w, const char **why) {
    memset(w, 0, sizeof *w);
    w->n = n;
    w->terms = 1;
    w->row_self = w->row_bias = w->row_scale = -1;
    w->bias_src = -1;
    w->alpha = w->beta = 1;
    const MNValue *x = n->in[0], *o = n->out[0];
    int r = x->type.rank;
    for (int k = 1; k < n->nout; k++)
        if (n->out[k] && n->out[k]->nuses && n->op != OP_LayerNormalization) {
            *why = "a second output that is read";
            return false;
        }
    if (reduce_kind(n->op, &w->kind)) {
        if (!infer_reduce_mask(c->g, n, w->mask)) {
            *why = "axes not known";
            return false;
        }
        w->keep = ir_attr_int(n, "keepdims", 1) != 0;
        w->K = 1;
        for (int i = 0; i < r; i++)
            if (w->mask[i]) w->K *= x->type.dims[i];
        if (w->K == 0)
            return *why = "a reduction over an empty axis",
                   false; /* (a fold of no rows: its identity is not emitted) */
        w->src[w->nsrc++] = x;
        w->rows = (int)w->K;
        return true;
    }
    switch (n->op) {
    case OP_Softmax:
    case OP_LogSoftmax: {
        w->kind = n->op == OP_Softmax ? WK_SOFTMAX : WK_LOGSOFTMAX;
        int64_t ax = ir_attr_int(n, "axis", c->g->opset >= 13 ? -1 : 1);
        if (ax < 0) ax += r;
        if (ax < 0 || ax >= (r ? r : 1)) {
            *why = "axis out of range";
            return false;
        }
        for (int i = 0; i < r; i++)
            w->mask[i] = c->g->opset >= 13 ? i == ax : i >= ax; /* before 13: the input as 2-D at axis */
        w->keep = true;
        w->K = 1;
        for (int i = 0; i < r; i++)
            if (w->mask[i]) w->K *= x->type.dims[i];
        w->src[w->nsrc++] = x;
        w->row_self = (int)w->K;
        w->rows = (int)w->K + 1;
        return true;
    }
    case OP_MaxPool:
    case OP_AveragePool:
    case OP_LpPool:
    case OP_GlobalAveragePool:
    case OP_GlobalMaxPool: {
        if (!infer_window(c->g, n, &w->win)) {
            *why = "a window not known";
            return false;
        }
        if (ir_attr_int(n, "storage_order", 0) && n->nout > 1) {
            *why = "column-major indices";
            return false;
        }
        w->kind = n->op == OP_MaxPool || n->op == OP_GlobalMaxPool ? WK_MAXPOOL
                  : n->op == OP_LpPool                             ? WK_L2
                                                                   : WK_AVGPOOL;
        if (n->op == OP_LpPool) {
            w->lp = (int)ir_attr_int(n, "p", 2);
            if (w->lp != 1 && w->lp != 2) {
                *why = "p other than 1 and 2";
                return false;
            }
            if (w->lp == 1) w->kind = WK_L1;
        }
        w->include_pad = ir_attr_int(n, "count_include_pad", 0) != 0;
        w->K = prod(w->win.k, w->win.ns);
        w->src[w->nsrc++] = x;
        w->rows = (int)w->K;
        if (w->kind == WK_AVGPOOL) {
            if (avg_counts(w, x, o) < 0) {
                *why = "too many distinct window sizes";
                return false;
            }
            w->row_scale = w->rows++;
        }
        return true;
    }
    case OP_Conv:
    case OP_ConvTranspose: {
        if (!infer_window(c->g, n, &w->win)) {
            *why = "a window not known";
            return false;
        }
        w->kind = WK_MAC;
        w->terms = 2;
        w->group = ir_attr_int(n, "group", 1);
        const MNValue *wt = n->in[1];
        w->K = (n->op == OP_Conv ? wt->type.dims[1] : x->type.dims[1] / w->group) * prod(w->win.k, w->win.ns);
        w->src[w->nsrc++] = x;
        w->src[w->nsrc++] = wt;
        w->rows = (int)(2 * w->K);
        if (n->nin > 2 && n->in[2]) {
            operand(w, n->in[2], &w->bias_src, &w->bias_k);
            w->row_bias = w->rows++;
        }
        return true;
    }
    case OP_Resize:
    case OP_Upsample: { /* a weighted sum over the terms of resize.c: (element, weight) pairs */
        ResizePlan *rp = ARENA_NEW(c->arena, ResizePlan);
        if ((*why = resize_plan(n, c->g->opset, rp, &w->K))) return false;
        if (resize_weights(rp) + 3 > pool_wide(&c->machine) - K_FIRST_INDEX) { /* and 0, 1, the extrapolation */
            *why = "more distinct weights than the constant pool";
            return false;
        }
        w->rs = rp;
        w->kind = WK_MAC;
        w->terms = 2;
        w->src[w->nsrc++] = x;
        w->rows = (int)(2 * w->K);
        return true;
    }
    case OP_MatMul:
    case OP_Gemm:
        w->kind = WK_MAC;
        w->terms = 2;
        if (n->op == OP_Gemm) {
            w->K = x->type.dims[ir_attr_int(n, "transA", 0) ? 0 : 1];
            w->alpha = ir_attr_float(n, "alpha", 1);
            w->beta = ir_attr_float(n, "beta", 1);
        } else
            w->K = x->type.dims[r - 1];
        w->src[w->nsrc++] = x;
        w->src[w->nsrc++] = n->in[1];
        w->rows = (int)(2 * w->K);
        if (n->op == OP_Gemm && n->nin > 2 && n->in[2] && w->beta != 0) {
            operand(w, n->in[2], &w->bias_src, &w->bias_k);
            w->row_bias = w->rows++;
        }
        return true;
    case OP_ArgMax:
    case OP_ArgMin: {
        w->kind = n->op == OP_ArgMax ? WK_ARGMAX : WK_ARGMIN;
        int64_t ax = ir_attr_int(n, "axis", 0);
        if (ax < 0) ax += r;
        for (int i = 0; i < r; i++) w->mask[i] = i == ax;
        w->keep = ir_attr_int(n, "keepdims", 1) != 0;
        w->K = x->type.dims[ax];
        if (w->K > pool_cap(&c->machine) - K_FIRST_INDEX) {
            *why = "an axis longer than the constant pool";
            return false;
        }
        w->src[w->nsrc++] = x;
        w->rows = (int)w->K;
        return true;
    }
    case OP_Equal:
    case OP_Less:
    case OP_Greater:
    case OP_LessOrEqual:
    case OP_GreaterOrEqual: /* floats compared, a bool each */
        w->kind = WK_CMP;
        norm_param(w, 0, n->in[0], 0);
        norm_param(w, 1, n->in[1], 0);
        w->K = 1;
        return true;
    case OP_Where: /* the condition's word as an integer, to 0 or 1: x where c - 1/2 >= 0, plus y where 1/2 - c >= 0 */
        w->kind = WK_WHERE;
        for (int i = 0; i < 3; i++) norm_param(w, i, n->in[i], 0);
        w->K = 1;
        w->alpha = -0.5;
        w->beta = 0.5;
        return true;
    case OP_IsNaN: /* x compared with itself: not x >= x */
    case OP_IsInf: /* x >= +inf, plus x <= -inf (a NaN bound where a side is not asked for: never) */
        w->kind = WK_CMP;
        norm_param(w, 0, n->in[0], 0);
        if (n->op == OP_IsNaN)
            norm_param(w, 1, n->in[0], 0);
        else {
            norm_param(w, 1, NULL, ir_attr_int(n, "detect_positive", 1) ? INFINITY : NAN);
            norm_param(w, 2, NULL, ir_attr_int(n, "detect_negative", 1) ? -INFINITY : NAN);
        }
        w->K = 1;
        return true;
    case OP_Gather:
    case OP_GatherElements: {
        /* indices computed at run time: of the axis's K rows of data, the one whose index matches */
        const MNValue *x = n->in[0], *iv = n->nin > 1 ? n->in[1] : NULL;
        if (!iv || (n->op == OP_Gather && emit_konst_of(iv))) {
            *why = "constant indices (a gather)";
            return false;
        }
        int64_t ax = ir_attr_int(n, "axis", 0);
        if (ax < 0) ax += x->type.rank;
        if (ax < 0 || ax >= x->type.rank) {
            *why = "no axis";
            return false;
        }
        w->kind = WK_GATHER;
        w->group = ax;
        w->K = x->type.dims[ax];
        if (w->K > plan_gather_rows_max(&c->machine)) {
            *why = "an axis longer than the constant pool";
            return false;
        }
        w->src[w->nsrc++] = x;
        w->src[w->nsrc++] = iv;
        w->rows = (int)w->K;
        w->row_self = w->rows++;
        w->alpha = -0.5;
        w->beta = (double)w->K;
        w->eps = 0.5; /* an index below 0 counts from the end */
        return true;
    }
    case OP_Pow: /* any exponent: exp(y log|x|) with the sign of x^y for an integer y, NaN for another below 0 */
        if (n->nin != 2 || !n->in[1]) {
            *why = "no exponent";
            return false;
        }
        w->kind = WK_POW;
        norm_param(w, 0, n->in[0], 0);
        norm_param(w, 1, n->in[1], 0);
        w->K = 1;
        w->alpha = 0.5;
        w->beta = -2;
        w->eps = 0x1p24; /* from 2^24 on every float is even */
        return true;
    case OP_Sum:
    case OP_Mean:
    case OP_Max:
    case OP_Min:
    case OP_PRelu:
    case OP_Clip: { /* every operand a row */
        w->kind = n->op == OP_Max     ? WK_EW_MAX
                  : n->op == OP_Min   ? WK_EW_MIN
                  : n->op == OP_PRelu ? WK_PRELU
                  : n->op == OP_Clip  ? WK_CLIP
                                      : WK_EW_SUM;
        int nop = n->op == OP_Clip ? 3 : n->nin;
        if (nop > 4) {
            *why = "more than 4 operands";
            return false;
        }
        for (int i = 0; i < nop; i++) {
            const MNValue *v = i < n->nin ? n->in[i] : NULL;
            double dflt = i == 1 ? -3.4028234663852886e38 : 3.4028234663852886e38; /* Clip's absent bounds */
            norm_param(w, i, v, n->op == OP_Clip && !v ? clip_attr(n, i, dflt) : dflt);
        }
        w->K = n->op == OP_Mean ? nop : 1; /* 1/K is Mean's scale */
        return true;
    }
    case OP_Hardmax: { /* 1 at the first maximum along the axis (before opset 13: of the input as 2-D at axis) */
        w->kind = WK_HARDMAX;
        int64_t ax = ir_attr_int(n, "axis", c->g->opset >= 13 ? -1 : 1);
        if (ax < 0) ax += r;
        w->keep = true;
        w->K = 1;
        for (int i = 0; i < r; i++)
            if ((w->mask[i] = c->g->opset >= 13 ? i == ax : i >= ax)) w->K *= x->type.dims[i];
        if (w->K > pool_cap(&c->machine) - K_FIRST_INDEX) {
            *why = "an axis longer than the constant pool";
            return false;
        }
        w->src[w->nsrc++] = x;
        w->rows = (int)w->K;
        w->row_self = w->rows++;
        return true;
    }
    case OP_BatchNormalization: /* inference: per channel */
        w->kind = WK_BN;
        w->eps = ir_attr_float(n, "epsilon", 1e-5);
        w->src[w->nsrc++] = x;
        w->row_self = w->rows++;
        for (int i = 0; i < 4; i++) norm_param(w, i, n->in[1 + i], 0);
        return true;
    case OP_LayerNormalization:
    case OP_InstanceNormalization: { /* over the axes from axis on / the spatial axes */
        w->kind = WK_NORM;
        w->eps = ir_attr_float(n, "epsilon", 1e-5);
        w->keep = true;
        w->K = 1;
        int64_t ax = n->op == OP_LayerNormalization ? ir_attr_int(n, "axis", -1) : 2;
        if (ax < 0) ax += r;
        for (int i = 0; i < r; i++)
            if ((w->mask[i] = i >= ax)) w->K *= x->type.dims[i];
        w->src[w->nsrc++] = x;
        w->rows = (int)w->K;
        w->row_self = w->rows++;
        norm_param(w, 0, n->in[1], 1);
        norm_param(w, 1, n->nin > 2 ? n->in[2] : NULL, 0);
        return true;
    }
    default: return *why = "no emitter", false;
    }
}

/* ---- the table: which element each row reads ---- */

static bool reduce_entry(const Win *w, const int64_t *idx, int64_t k, EmEntry *en) {
    const MNValue *x = w->src[0];
    int r = x->type.rank, j = 0;
    for (int a = 0; a < r; a++) /* kept axes from the output index */
        if (!w->mask[a])
            en->sidx[a] = w->keep ? idx[a] : idx[j++];
        else if (w->keep)
            j++;
    for (int a = r - 1; a >= 0; a--) /* reduced axes from k, row-major */
        if (w->mask[a]) {
            en->sidx[a] = k % x->type.dims[a];
            k /= x->type.dims[a];
        }
    en->src = 0;
    return true;
}

static void constant(EmEntry *en, double k) { en->src = -1, en->k = k; }

/* term k of a resized element: the input element, then its weight; outside the input
 * (tf_crop_and_resize) 1 times the extrapolation value once, 0 for the other terms */
static bool resize_entry(const Win *w, const int64_t *idx, int64_t k, int term, EmEntry *en) {
    double wt;
    if (!resize_term(w->rs, idx, k, en->sidx, &wt)) {
        constant(en, k ? 0 : term ? resize_extrapolation(w->rs) : 1);
        return true;
    }
    if (wt == 0) /* nothing read, so nothing (an infinity) times 0 */
        constant(en, 0);
    else if (term)
        constant(en, wt);
    else
        en->src = 0;
    return true;
}

static bool pool_entry(const Win *w, const int64_t *idx, int64_t k, EmEntry *en) {
    const MNValue *x = w->src[0];
    en->sidx[0] = idx[0];
    en->sidx[1] = idx[1];
    for (int i = w->win.ns - 1; i >= 0; i--) {
        int64_t kk = k % w->win.k[i];
        k /= w->win.k[i];
        int64_t at = idx[2 + i] * w->win.s[i] - w->win.pb[i] + kk * w->win.d[i];
        if (at < 0 || at >= x->type.dims[2 + i]) {
            constant(en, w->kind == WK_MAXPOOL ? -INFINITY : 0);
            return true;
        }
        en->sidx[2 + i] = at;
    }
    en->src = 0;
    return true;
}

static double avg_scale(const Win *w, const int64_t *idx) {
    const MNValue *x = w->src[0];
    int64_t cnt = 1;
    for (int i = 0; i < w->win.ns; i++) {
        int64_t lo = w->include_pad ? -w->win.pb[i] : 0,
                hi = w->include_pad ? x->type.dims[2 + i] + w->win.pe[i] : x->type.dims[2 + i], c = 0;
        for (int64_t k = 0; k < w->win.k[i]; k++) {
            int64_t at = idx[2 + i] * w->win.s[i] - w->win.pb[i] + k * w->win.d[i];
            c += at >= lo && at < hi;
        }
        cnt *= c;
    }
    return cnt ? 1.0 / (double)cnt : 0;
}

/* pair k of a Conv or ConvTranspose: term 0 the input, 1 the weight */
static bool conv_entry(const Win *w, const int64_t *idx, int64_t k, int term, EmEntry *en) {
    const MNNode *n = w->n;
    const MNValue *x = w->src[0], *wt = w->src[1], *o = n->out[0];
    int ns = w->win.ns;
    int64_t KK = prod(w->win.k, ns), c = k / KK, kk = k % KK, m = idx[1], pos[MN_MAX_RANK], kp[MN_MAX_RANK];
    for (int i = ns - 1; i >= 0; i--) kp[i] = kk % w->win.k[i], kk /= w->win.k[i];
    if (n->op == OP_Conv) {
        int64_t Cg = wt->type.dims[1], grp = m / (o->type.dims[1] / w->group);
        for (int i = 0; i < ns; i++) {
            pos[i] = idx[2 + i] * w->win.s[i] - w->win.pb[i] + kp[i] * w->win.d[i];
            if (pos[i] < 0 || pos[i] >= x->type.dims[2 + i]) {
                constant(en, 0);
                return true;
            }
        }
        if (term == 0) {
            en->src = 0;
            en->sidx[0] = idx[0];
            en->sidx[1] = grp * Cg + c;
            for (int i = 0; i < ns; i++) en->sidx[2 + i] = pos[i];
        } else {
            en->src = 1;
            en->sidx[0] = m;
            en->sidx[1] = c;
            for (int i = 0; i < ns; i++) en->sidx[2 + i] = kp[i];
        }
        return true;
    }
    int64_t Cg = x->type.dims[1] / w->group, Mg = o->type.dims[1] / w->group, grp = m / Mg;
    for (int i = 0; i < ns; i++) { /* o = i * s - pb + kk * d */
        int64_t t = idx[2 + i] + w->win.pb[i] - kp[i] * w->win.d[i];
        if (t < 0 || t % w->win.s[i] || t / w->win.s[i] >= x->type.dims[2 + i]) {
            constant(en, 0);
            return true;
        }
        pos[i] = t / w->win.s[i];
    }
    if (term == 0) {
        en->src = 0;
        en->sidx[0] = idx[0];
        en->sidx[1] = grp * Cg + c;
        for (int i = 0; i < ns; i++) en->sidx[2 + i] = pos[i];
    } else {
        en->src = 1;
        en->sidx[0] = grp * Cg + c;
        en->sidx[1] = m % Mg;
        for (int i = 0; i < ns; i++) en->sidx[2 + i] = kp[i];
    }
    return true;
}

/* pair k of a MatMul (numpy rules: 1-D operands, broadcast batches) or a Gemm */
static bool matmul_entry(const Win *w, const int64_t *idx, int64_t k, int term, EmEntry *en) {
    const MNNode *n = w->n;
    const MNValue *a = w->src[0], *b = w->src[1], *o = n->out[0];
    if (n->op == OP_Gemm) {
        bool ta = ir_attr_int(n, "transA", 0), tb = ir_attr_int(n, "transB", 0);
        en->src = term;
        if (term == 0) {
            en->sidx[0] = ta ? k : idx[0];
            en->sidx[1] = ta ? idx[0] : k;
        } else {
            en->sidx[0] = tb ? idx[1] : k;
            en->sidx[1] = tb ? k : idx[1];
        }
        return true;
    }
    int ra = a->type.rank, rb = b->type.rank, ro = o->type.rank;
    int64_t i = ra >= 2 ? idx[ro - (rb >= 2 ? 2 : 1)] : 0, j = rb >= 2 ? idx[ro - 1] : 0;
    int nb = ro - (ra >= 2) - (rb >= 2); /* the output's batch axes */
    const MNValue *v = term ? b : a;
    int rv = v->type.rank, vb = rv - 2; /* this operand's batch axes, aligned right */
    for (int d = 0; d < vb; d++) en->sidx[d] = v->type.dims[d] == 1 ? 0 : idx[nb - vb + d];
    if (term == 0) {
        if (ra == 1)
            en->sidx[0] = k;
        else {
            en->sidx[ra - 2] = i;
            en->sidx[ra - 1] = k;
        }
    } else {
        if (rb == 1)
            en->sidx[0] = k;
        else {
            en->sidx[rb - 2] = k;
            en->sidx[rb - 1] = j;
        }
    }
    en->src = term;
    return true;
}

static bool bias_entry(const Win *w, const int64_t *idx, EmEntry *en) {
    if (w->bias_src < 0) {
        constant(en, w->bias_k);
        return true;
    }
    const MNValue *bv = w->src[w->bias_src], *o = w->n->out[0];
    en->src = w->bias_src;
    if (w->n->op != OP_Gemm) { /* Conv: per output channel */
        en->sidx[0] = idx[1];
        return true;
    }
    int rc = bv->type.rank; /* Gemm: C broadcast to (M, N) */
    for (int d = 0; d < rc; d++) en->sidx[d] = bv->type.dims[d] == 1 ? 0 : idx[o->type.rank - rc + d];
    return true;
}

/* row k of a Gather or GatherElements: data row k; the last row: the output element's index */
static bool gather_entry(const Win *w, const int64_t *idx, int row, EmEntry *en) {
    const MNValue *x = w->src[0], *iv = w->src[1];
    int ax = (int)w->group, ri = iv->type.rank;
    if (w->n->op == OP_GatherElements) { /* the index of the same place, data along the axis */
        en->src = row == w->row_self ? 1 : 0;
        memcpy(en->sidx, idx, sizeof(int64_t) * (size_t)ri);
        if (row != w->row_self) en->sidx[ax] = row;
        return true;
    }
    if (row == w->row_self) {
        en->src = 1;
        for (int d = 0; d < ri; d++) en->sidx[d] = idx[ax + d];
        return true;
    }
    en->src = 0;
    for (int d = 0; d < x->type.rank; d++) en->sidx[d] = d < ax ? idx[d] : d == ax ? row : idx[d - 1 + ri];
    return true;
}

static bool win_entry(const void *ctx, const int64_t *idx, int row, EmEntry *en) {
    const Win *w = ctx;
    if (w->kind == WK_GATHER) return gather_entry(w, idx, row, en);
    if (row == w->row_self && w->kind == WK_HARDMAX) { /* the element's place along the reduced axes */
        int64_t pos = 0;
        for (int d = 0; d < w->src[0]->type.rank; d++)
            if (w->mask[d]) pos = pos * w->src[0]->type.dims[d] + idx[d];
        constant(en, (double)pos);
        return true;
    }
    if (row == w->row_self) {
        en->src = 0;
        memcpy(en->sidx, idx, sizeof(int64_t) * (size_t)w->n->out[0]->type.rank);
        return true;
    }
    if (row == w->row_scale) {
        constant(en, avg_scale(w, idx));
        return true;
    }
    bool ew = w->kind >= WK_EW_SUM;
    for (int i = 0; i < 4; i++)
        if ((w->kind == WK_BN || w->kind == WK_NORM || ew) && row == w->prow[i] && (i < 2 || w->kind != WK_NORM)) {
            if (w->psrc[i] < 0) {
                constant(en, w->pk[i]);
                return true;
            }
            const MNValue *pv = w->src[w->psrc[i]];
            int rp = pv->type.rank, ro = w->n->out[0]->type.rank;
            en->src = w->psrc[i];
            if (w->n->op != OP_LayerNormalization && !ew)
                en->sidx[0] = idx[1]; /* per channel */
            else /* broadcast onto the normalized axes, aligned at the end */
                for (int d = 0; d < rp; d++) en->sidx[d] = pv->type.dims[d] == 1 ? 0 : idx[ro - rp + d];
            return true;
        }
    if (row == w->row_bias) return bias_entry(w, idx, en);
    int64_t k = row / w->terms;
    int term = row % w->terms;
    switch (w->n->op) {
    case OP_Conv:
    case OP_ConvTranspose: return conv_entry(w, idx, k, term, en);
    case OP_MatMul:
    case OP_Gemm: return matmul_entry(w, idx, k, term, en);
    case OP_Resize:
    case OP_Upsample: return resize_entry(w, idx, k, term, en);
    case OP_MaxPool:
    case OP_AveragePool:
    case OP_LpPool:
    case OP_GlobalAveragePool:
    case OP_GlobalMaxPool: return pool_entry(w, idx, k, en);
    default: return reduce_entry(w, idx, k, en);
    }
}

/* the constants the fold itself reads (its initial value, 1/K, alpha, beta): pool
 * entries 0.. before the table's own */
static int fixed_pool(const Win *w, double *pool) {
    int n = 0;
    switch (w->kind) {
    case WK_MAX:
    case WK_MAXPOOL: pool[n++] = -INFINITY; break;
    case WK_MIN: pool[n++] = INFINITY; break;
    case WK_PROD: pool[n++] = 1; break;
    default: pool[n++] = 0; break;
    }
    pool[n++] = -INFINITY; /* the running maximum's start */
    pool[n++] = w->K ? 1.0 / (double)w->K : 0;
    pool[n++] = w->alpha;
    pool[n++] = w->beta;
    pool[n++] = w->eps;
    pool[n++] = INFINITY;
    pool[n++] = 1;
    if (w->kind == WK_ARGMAX || w->kind == WK_ARGMIN || w->kind == WK_HARDMAX ||
        w->kind == WK_GATHER) /* the indices, as floats */
        for (int64_t k = 0; k < w->K; k++) pool[n++] = (double)k;
    return n;
}

const char *window_why(MNCompile *c, MNNode *n, Walk *wk) {
    Win w;
    const char *why = NULL;
    if (!win_of(c, n, &w, &why)) return why;
    /* every output element reads its rows through an index table entry each: past some
     * 32 million entries (a real CNN's convolutions) the table alone is hundreds of MB,
     * and merely enumerating it took a minute of a compile that then failed */
    int64_t entries = (int64_t)(w.rows > 0 ? w.rows : 1) * ir_shape_numel(&n->out[0]->type);
    if (entries > ((int64_t)1 << 25)) return "a window op of more than 2^25 index entries";
    for (int k = 0; k < w.nsrc; k++)
        if (w.src[k]->dtype != MN_DT_Float &&
            !(w.kind == WK_GATHER && k == 1 && (w.src[k]->dtype == MN_DT_Int || w.src[k]->dtype == MN_DT_Long)) &&
            !(w.kind == WK_WHERE && w.src[k] == w.n->in[0] && w.src[k]->dtype == MN_DT_LongBool))
            return "not a float value in LM";
    int64_t tlw = 0;
    Win wo[3];
    EmUse u[3];
    int nu = 0;
    for (int k = 0; k < n->nout && k < 3; k++) {
        const MNValue *o = n->out[k];
        if (k > 0 && (!o || !o->nuses)) continue;
        wo[nu] = w;
        wo[nu].oi = k;
        u[nu] = (EmUse){o, win_entry, &wo[nu]};
        nu++;
        MNDtype want = w.kind == WK_ARGMAX || w.kind == WK_ARGMIN ? MN_DT_Long
                       : w.kind == WK_CMP                         ? MN_DT_LongBool
                                                                  : MN_DT_Float;
        if (!emit_in_lm(o) || o->dtype != want) return "not a float value in LM";
        if (!o->lay || layout_timed(o)) return "a time-sliced output";
        int64_t t = emit_table_lw(o, 1);
        if (t > tlw) tlw = t;
    }
    if (batch_words(&c->machine) < 4 || pool_cap(&c->machine) < K_FIRST_INDEX + 2)
        return "GRFs too small for a window op";
    return emit_scratch_plan(c, wk, w.src, w.nsrc, win_pool(&c->machine, &w), tlw, w.rows > 0 ? w.rows : 1, u, nu);
}

/* one instruction over the batch's G groups: R, A, M, T, X in fmt are the group's words
 * of the row, accumulator, maximum, second operand and fetched row; K<j> pool constant j */
typedef struct {
    Em *e;
    int64_t G, scr, pool_at, tab, nw;
    int tb;
    int64_t B; /* words per batch: A at r0, M at rB, T at r2B, X at s0 */
    MNValue **tv; /* the output's table, R rows a window; the window in LM (-1 none) */
    int R, cur;
    const Walk *wk;
} Batch;

static void each(const Batch *b, const char *fmt) {
    for (int64_t j = 0; j < b->G; j++) {
        for (const char *p = fmt; *p; p++) {
            int reg = -1;
            const char *file = "r";
            switch (*p) {
            case 'A': reg = 0; break;
            case 'M': reg = (int)b->B; break;
            case 'T': reg = 2 * (int)b->B; break;
            case 'X':
                reg = 0;
                file = "s";
                break;
            case 'K':
                buf_printf(b->e->b, "$m%lld", (long long)(2 * (b->scr + b->pool_at + (p[1] - '0'))));
                p++;
                continue;
            default: buf_append(b->e->b, p, 1); continue;
            }
            buf_printf(b->e->b, "$%s%lldv", file, (long long)(reg + 4 * j));
        }
        buf_printf(b->e->b, "\n");
    }
    if (b->G < 2) buf_printf(b->e->b, "nop\n"); /* a GRF result is read 2 steps later */
}

/* row r of the table for the batch's words from w0, into X (s0) or T (r256) */
static void fetch(Batch *b, int row, int64_t w0, bool into_t) {
    if (row / b->R != b->cur) { /* its window first */
        b->cur = row / b->R;
        emit_table_load(b->e, b->tv[b->cur], b->wk);
    }
    row -= b->cur * b->R;
    for (int64_t j = 0; j < b->G; j++) {
        buf_printf(b->e->b, "lpassa $%s%lldv $t\nnop\n", b->tb ? "ln" : "lm",
                   (long long)(2 * b->tab + 2 * (row * b->nw + w0 + 4 * j)));
        buf_printf(b->e->b, "ipassa $mt%lld $%s%lldv\n", (long long)(2 * b->scr), into_t ? "r" : "s",
                   (long long)((into_t ? 2 * b->B : 0) + 4 * j));
    }
    if (b->G < 2) buf_printf(b->e->b, "nop\n");
}

/* D = 1 where op's flag is set (fmax: X >= T, fmin: X <= T; X wins ties), else 0:
 * a mask register per group, 15 groups at a time. With k >= 0, T is pool constant k,
 * and with src 'T' the first operand is T. With dst 'a', A keeps its value where the
 * flag is not set; with 'z', A becomes 0 where it is set (and keeps it elsewhere). */
static void flag_of(Batch *b, const char *op, char src, int k, char dst) {
    if (dst != 'a' && dst != 'z') each(b, dst == 'A' ? "fpassa K0 A" : "fpassa K0 M");
    for (int64_t j0 = 0; j0 < b->G; j0 += 15) {
        int64_t jn = b->G - j0 < 15 ? b->G - j0 : 15;
        for (int64_t j = j0; j < j0 + jn; j++) {
            char rhs[40];
            if (k >= 0)
                snprintf(rhs, sizeof rhs, "$m%lld", (long long)(2 * (b->scr + b->pool_at + k)));
            else
                snprintf(rhs, sizeof rhs, "$r%lldv", (long long)(2 * b->B + 4 * j));
            buf_printf(b->e->b, "%s $%s%lldv %s $nowrite $omr%lld\n", op, src == 'T' ? "r" : "s",
                       (long long)((src == 'T' ? 2 * b->B : 0) + 4 * j), rhs, (long long)(1 + j - j0));
        }
        for (int64_t j = j0; j < j0 + jn; j++)
            buf_printf(b->e->b, "fpassa $m%lld $r%lldv/$imr%lld\n",
                       (long long)(2 * (b->scr + b->pool_at + (dst == 'z' ? 0 : 7))),
                       (long long)((dst == 'M' ? b->B : 0) + 4 * j), (long long)(1 + j - j0));
        if (jn < 2) buf_printf(b->e->b, "nop\n");
    }
}

static void flag_pass(Batch *b, const char *op, char dst) { flag_of(b, op, 'X', -1, dst); }

static void fold(Win *wp, Batch *bp, const MNValue *o);

void window_emit(Em *e, MNNode *n, const Walk *wk) {
    Win w;
    const char *why;
    if (!win_of(e->c, n, &w, &why)) die("node '%s' was accepted as a window op: %s", n->name, why);
    int rows = w.rows > 0 ? w.rows : 1;
    double pool[POOL_WIDE];
    int npool = fixed_pool(&w, pool);
    int R = wk->trows[wk->pos], nwin = (rows + R - 1) / R;
    MNValue **tv[3] = {NULL, NULL, NULL};
    for (int k = 0; k < n->nout && k < 3; k++) /* every table first: they add to the pool */
        if (k == 0 || (n->out[k] && n->out[k]->nuses)) {
            w.oi = k;
            tv[k] = xcalloc((size_t)nwin, sizeof(MNValue *));
            for (int q = 0; q < nwin; q++)
                tv[k][q] =
                    emit_index_table(e, n, n->out[k], w.src, w.nsrc, wk, q * R, q * R + R < rows ? R : rows - q * R,
                                     win_entry, &w, pool, &npool, win_pool(&e->c->machine, &w));
        }
    Batch b = {e, 0, wk->scr[wk->pos], 0, wk->tab[wk->pos], 0, wk->tbank[wk->pos], 0, NULL, R, -1, wk};
    b.pool_at = emit_scratch_fill(e, w.src, w.nsrc, wk, b.scr);
    emit_scratch_pool(e, b.scr, b.pool_at, pool, npool, false);
    for (int k = 0; k < 3; k++)
        if (tv[k]) {
            w.oi = k;
            b.tv = tv[k];
            b.cur = -1;
            fold(&w, &b, n->out[k]);
            free(tv[k]);
        }
}

/* output o (output w->oi of the node) from the scratch and its table */
static void fold(Win *wp, Batch *bp, const MNValue *o) {
    Win w = *wp;
    Batch b = *bp;
    Em *e = b.e;
    b.nw = 2 * emit_round4(o->num_lw);
    int64_t words = 2 * o->num_lw;
    bool two_pass = w.kind == WK_LSE || w.kind == WK_SOFTMAX || w.kind == WK_LOGSOFTMAX;
    b.B = batch_words(&e->c->machine);
    for (int64_t w0 = 0; w0 < words; w0 += b.B) {
        int64_t wn = words - w0 < b.B ? words - w0 : b.B;
        b.G = (wn + 3) / 4;
        each(&b, "fpassa K0 A");
        if (two_pass) { /* the maximum first, so that exp never overflows */
            each(&b, "fpassa K1 M");
            for (int64_t k = 0; k < w.K; k++) {
                fetch(&b, (int)k, w0, false);
                each(&b, "fmax X M M");
            }
        }
        bool arg = w.kind == WK_ARGMAX || w.kind == WK_ARGMIN || w.kind == WK_HARDMAX || w.kind == WK_GATHER;
        for (int64_t k = 0; k < w.K && !arg; k++) {
            fetch(&b, (int)(k * w.terms), w0, false);
            switch (w.kind) {
            case WK_MAC:
                fetch(&b, (int)(2 * k + 1), w0, true);
                each(&b, "fvmul X T X");
                break;
            case WK_L1:
                each(&b, "fvpassa -X T");
                each(&b, "fmax X T X");
                break;
            case WK_L2:
            case WK_SUMSQ: each(&b, "fvmul X X X"); break;
            case WK_LSE:
            case WK_SOFTMAX:
            case WK_LOGSOFTMAX:
                each(&b, "fvadd X -M X");
                each(&b, "fexp X X");
                break;
            default: break;
            }
            switch (w.kind) {
            case WK_MAX:
            case WK_MAXPOOL: each(&b, "fmax X A A"); break;
            case WK_MIN: each(&b, "fmin X A A"); break;
            case WK_PROD: each(&b, "fvmul X A A"); break;
            default: each(&b, "fvadd X A A"); break;
            }
        }
        if (w.kind == WK_BN) { /* (x - mean) scale / sqrt(var + eps) + bias */
            fetch(&b, w.prow[3], w0, false);
            each(&b, "fvadd X K5 X");
            each(&b, "frsqrt X X");
            fetch(&b, w.prow[0], w0, true);
            each(&b, "fvmul X T M");
            fetch(&b, w.row_self, w0, false);
            fetch(&b, w.prow[2], w0, true);
            each(&b, "fvadd X -T X");
            each(&b, "fvmul X M A");
            fetch(&b, w.prow[1], w0, false);
            each(&b, "fvadd X A A");
        }
        if (w.kind >= WK_EW_SUM) {
            int nop = w.n->op == OP_Clip ? 3 : w.n->nin;
            if (w.kind == WK_CMP) { /* from X >= T and X <= T, as 0 and 1, then a 64-bit bool */
                fetch(&b, w.prow[0], w0, false);
                fetch(&b, w.prow[1], w0, true);
                switch (w.n->op) {
                case OP_IsNaN:
                    flag_pass(&b, "fmax", 'M');
                    each(&b, "fpassa M X");
                    each(&b, "fvadd K7 -X A");
                    break;
                case OP_IsInf:
                    flag_pass(&b, "fmax", 'A');
                    fetch(&b, w.prow[2], w0, true);
                    flag_pass(&b, "fmin", 'M');
                    each(&b, "fpassa M X");
                    each(&b, "fvadd X A A");
                    break;
                case OP_GreaterOrEqual: flag_pass(&b, "fmax", 'A'); break;
                case OP_LessOrEqual: flag_pass(&b, "fmin", 'A'); break;
                case OP_Greater:
                    flag_pass(&b, "fmin", 'M');
                    each(&b, "fpassa M X");
                    each(&b, "fvadd K7 -X A");
                    break;
                case OP_Less:
                    flag_pass(&b, "fmax", 'M');
                    each(&b, "fpassa M X");
                    each(&b, "fvadd K7 -X A");
                    break;
                default:
                    flag_pass(&b, "fmax", 'A');
                    flag_pass(&b, "fmin", 'M');
                    each(&b, "fpassa M X");
                    each(&b, "fvmul X A A");
                    break;
                }
                each(&b, "fftoi A A");
                each(&b, "zero A/1010");
            } else if (w.kind == WK_WHERE) { /* the bool's low word (its value) as an integer */
                fetch(&b, w.prow[0], w0, false);
                each(&b, "fitof X X");
                each(&b, "fvadd X K3 A");
                each(&b, "fvadd -X K4 M");
                fetch(&b, w.prow[1], w0, false);
                each(&b, "frelu A X A");
                fetch(&b, w.prow[2], w0, false);
                each(&b, "frelu M X M");
                each(&b, "fpassa M X");
                each(&b, "fvadd X A A");
            } else if (w.kind == WK_POW) {
                /* N = x's sign bit (its bits >= 0 as an integer clear it: -0 counts as
                 * negative, as IEEE's pow has it, +0 does not), I = y is an integer
                 * (y <= floor y), parity = c - 2 floor(c / 2) of c = min(|y|, 2^24) (so an
                 * infinite y is even, not NaN); the sign S = 1 - 2 parity I N, and the base
                 * |x| (1 - 2 N (1 - I)): x itself, so NaN from the log, when x < 0 and y is
                 * not an integer. GRF0 (A, M, T) has one read port: the second operand of
                 * every step is X or a constant. */
                fetch(&b, w.prow[0], w0, false);
                each(&b, "fpassa K7 A");
                flag_of(&b, "imax", 'X', 0, 'z');
                fetch(&b, w.prow[1], w0, false);
                each(&b, "ffloor X T");
                flag_pass(&b, "fmin", 'M');
                each(&b, "fvpassa -X T");
                each(&b, "fmax X T T");
                each(&b, "fmin T K5 T");
                each(&b, "fpassa T X");
                each(&b, "fvmul X K3 T");
                each(&b, "ffloor T T");
                each(&b, "fvmul T K4 T");
                each(&b, "fvadd X T T");
                each(&b, "fpassa A X");
                each(&b, "fvmul T X T");
                each(&b, "fvmul M X X");
                each(&b, "fvmul T X T");
                each(&b, "fvadd A -X A");
                each(&b, "fvmul T K4 T");
                each(&b, "fvadd T K7 T");
                each(&b, "fvmul A K4 A");
                each(&b, "fvadd A K7 A");
                fetch(&b, w.prow[0], w0, false);
                each(&b, "fvpassa -X M");
                each(&b, "fmax X M M");
                each(&b, "fpassa A X");
                each(&b, "fvmul M X M");
                each(&b, "flog M M");
                fetch(&b, w.prow[1], w0, false);
                each(&b, "fvmul X M A");
                each(&b, "fexp A A");
                each(&b, "fpassa T X");
                each(&b, "fvmul X A A");
                /* y = 0 gives 1 (also for x = 0, where y log|x| is NaN): |y| <= 0 */
                fetch(&b, w.prow[1], w0, false);
                each(&b, "fvpassa -X T");
                each(&b, "fmax X T T");
                flag_of(&b, "fmin", 'T', 0, 'a');
                /* and x = 1 gives 1 (also for a NaN or infinite y): |x - 1| <= 0 */
                fetch(&b, w.prow[0], w0, false);
                each(&b, "fvadd X -K7 X");
                each(&b, "fvpassa -X T");
                each(&b, "fmax X T T");
                flag_of(&b, "fmin", 'T', 0, 'a');
            } else if (w.kind == WK_PRELU) { /* relu(x) + slope min(x, 0) */
                fetch(&b, w.prow[0], w0, false);
                each(&b, "frelu X X A");
                each(&b, "fmin X K0 X");
                fetch(&b, w.prow[1], w0, true);
                each(&b, "fvmul X T X");
                each(&b, "fvadd X A A");
            } else if (w.kind == WK_CLIP) {
                fetch(&b, w.prow[0], w0, false);
                fetch(&b, w.prow[1], w0, true);
                each(&b, "fmax X T X");
                fetch(&b, w.prow[2], w0, true);
                each(&b, "fmin X T A");
            } else {
                fetch(&b, w.prow[0], w0, false);
                each(&b, "fpassa X A");
                for (int i = 1; i < nop; i++) {
                    fetch(&b, w.prow[i], w0, false);
                    each(&b, w.kind == WK_EW_MAX ? "fmax X A A" : w.kind == WK_EW_MIN ? "fmin X A A" : "fvadd X A A");
                }
                if (w.n->op == OP_Mean) each(&b, "fvmul A K2 A");
            }
        }
        /* M = the index + 1/2 (+ K below 0); row k is taken where M >= k, so the last one taken is the index's */
        if (w.kind == WK_GATHER) {
            fetch(&b, w.row_self, w0, false);
            each(&b, "fitof X X");
            flag_of(&b, "fmin", 'X', 3, 'A');
            each(&b, "fvmul A K4 A");
            each(&b, "fvadd X A X");
            each(&b, "fvadd X K5 M");
            each(&b, "fpassa K0 A");
            for (int64_t k = 0; k < w.K; k++) {
                fetch(&b, (int)k, w0, false);
                for (int64_t j0 = 0; j0 < b.G; j0 += 15) {
                    int64_t jn = b.G - j0 < 15 ? b.G - j0 : 15;
                    for (int64_t j = j0; j < j0 + jn; j++)
                        buf_printf(e->b, "fmax $r%lldv $m%lld $nowrite $omr%lld\n", (long long)(b.B + 4 * j),
                                   (long long)(2 * (b.scr + b.pool_at + K_FIRST_INDEX + k)), (long long)(1 + j - j0));
                    for (int64_t j = j0; j < j0 + jn; j++)
                        buf_printf(e->b, "fpassa $s%lldv $r%lldv/$imr%lld\n", (long long)(4 * j), (long long)(4 * j),
                                   (long long)(1 + j - j0));
                    if (jn < 2) buf_printf(e->b, "nop\n");
                }
            }
        } else if (arg) { /* the best so far, and where: ties go to the first (or last) index */
            each(&b, w.kind != WK_ARGMIN ? "fpassa K1 M" : "fpassa K6 M");
            bool last = ir_attr_int(w.n, "select_last_index", 0) != 0;
            for (int64_t q = 0; q < w.K; q++) {
                int64_t k = last ? q : w.K - 1 - q; /* the comparison keeps X on ties: the last one seen wins */
                fetch(&b, (int)k, w0, false);
                for (int64_t j0 = 0; j0 < b.G; j0 += 15) { /* a mask register per group */
                    int64_t jn = b.G - j0 < 15 ? b.G - j0 : 15;
                    for (int64_t j = j0; j < j0 + jn; j++)
                        buf_printf(e->b, "%s $s%lldv $r%lldv $r%lldv $omr%lld\n", w.kind != WK_ARGMIN ? "fmax" : "fmin",
                                   (long long)(4 * j), (long long)(b.B + 4 * j), (long long)(b.B + 4 * j),
                                   (long long)(1 + j - j0));
                    for (int64_t j = j0; j < j0 + jn; j++)
                        buf_printf(e->b, "fpassa $m%lld $r%lldv/$imr%lld\n",
                                   (long long)(2 * (b.scr + b.pool_at + K_FIRST_INDEX + k)), (long long)(4 * j),
                                   (long long)(1 + j - j0));
                    if (jn < 2) buf_printf(e->b, "nop\n"); /* the index is read 2 steps later */
                }
            }
            if (w.kind == WK_HARDMAX) /* 1 - |place - index|, at least 0: 1 where they agree */
            {
                fetch(&b, w.row_self, w0, false);
                each(&b, "fvadd X -A X");
                each(&b, "fvpassa -X T");
                each(&b, "fmax X T X");
                each(&b, "fvadd K7 -X A");
                each(&b, "frelu A A A");
            } else {
                each(&b, "fftoi A A");
                each(&b, "zero A/1010");
            } /* int64: the index in the low word, 0 above */
        }
        if (w.kind == WK_NORM && w.oi == 1) each(&b, "fvmul A K2 A"); /* LayerNormalization's Mean */
        if (w.kind == WK_NORM && w.oi != 1) { /* the mean, then the variance about it, then the element */
            each(&b, "fvmul A K2 M");
            each(&b, "fpassa K0 A");
            for (int64_t k = 0; k < w.K; k++) {
                fetch(&b, (int)k, w0, false);
                each(&b, "fvadd X -M X");
                each(&b, "fvmul X X X");
                each(&b, "fvadd X A A");
            }
            each(&b, "fvmul A K2 A");
            each(&b, "fvadd A K5 A");
            each(&b, "frsqrt A A");
            if (w.oi == 0) {
                fetch(&b, w.row_self, w0, false);
                each(&b, "fvadd X -M X");
                each(&b, "fvmul X A A");
                fetch(&b, w.prow[0], w0, false);
                each(&b, "fvmul X A A");
                fetch(&b, w.prow[1], w0, false);
                each(&b, "fvadd X A A");
            }
        }
        switch (w.kind) {
        case WK_MEAN: each(&b, "fvmul A K2 A"); break;
        case WK_L2:
            each(&b, "frsqrt A A");
            each(&b, "frcp A A");
            break; /* 1/rsqrt: 0 stays 0 */
        case WK_LOGSUM: each(&b, "flog A A"); break;
        case WK_LSE:
            each(&b, "flog A A");
            each(&b, "fpassa M X");
            each(&b, "fvadd X A A");
            break;
        case WK_AVGPOOL:
            fetch(&b, w.row_scale, w0, false);
            each(&b, "fvmul X A A");
            break;
        case WK_SOFTMAX:
            fetch(&b, w.row_self, w0, false);
            each(&b, "fvadd X -M X");
            each(&b, "fexp X X");
            each(&b, "frcp A A");
            each(&b, "fvmul X A A");
            break;
        case WK_LOGSOFTMAX:
            fetch(&b, w.row_self, w0, false);
            each(&b, "flog A A");
            each(&b, "fvadd X -M X");
            each(&b, "fvadd X -A A");
            break;
        case WK_MAC:
            if (w.alpha != 1) each(&b, "fvmul A K3 A");
            if (w.row_bias >= 0) {
                fetch(&b, w.row_bias, w0, false);
                if (w.beta != 1) each(&b, "fvmul X K4 X");
                each(&b, "fvadd X A A");
            }
            break;
        default: break;
        }
        buf_printf(e->b, "nop\n");
        for (int64_t a = 0; a < (wn + 1) / 2; a += 4) {
            int64_t la = w0 / 2 + a;
            char at[40];
            buf_printf(e->b, "lpassa $lr%lldv $%s%sv%s\n", (long long)(2 * a), emit_bank_reg(o), emit_at(e, o, la, at),
                       emit_tail_mask(o->num_lw, la));
        }
        buf_printf(e->b, "nop/3\n");
    }
}

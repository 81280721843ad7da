/* Code Emit: Softmax, LogSoftmax and LayerNormalization along rows that each lie on one MAB.
 *
 * A value whose last axis is packed like a product's K (element d on PE d % 4, word
 * (d / 4) % 2 of long word base + d / 8, for D = 8 A elements) holds each row on one MAB,
 * A consecutive long words per PE from a base address; rows differ in their base and in
 * the MAB, L1B and L2B they sit on (the canonical layout of an (S, D) activation or of an
 * attention's (B, H, S, S) scores). Every MAB then reduces its own rows with no data
 * leaving it: per row base, all MABs at once,
 *
 *   fold     the row's long words into 8 partial results, 4 a step, into two groups
 *            (GRF0 and GRF1, so that a step reads each register file once and a group is
 *            read two steps after it was written); the groups, then the 4 long words of
 *            a group, then the two words of the long word, then the 4 PEs (msl twice:
 *            each PE adds its neighbour's, then the sum of the two beyond) fold into one
 *            value, alike in both words of GRF0 long word 0 on every PE of the MAB;
 *   map      the row through a few vector steps with that value as an operand: long
 *            words from LM into GRF0 a batch at a time (LM's read-after-write distance is
 *            per bank, so reads and writes each run back to back), then the steps, then
 *            the batch into the output.
 *
 * Softmax: max fold, map e^(x - max) into y, sum fold of y, map y / sum. LogSoftmax: the
 * same sum of e^(x - max) (y as its scratch), then map x - max - log sum.
 * LayerNormalization: sum fold of x, map x - mean into y, sum-of-squares fold of y, map
 * y rsqrt(var + eps) scale + bias, scale and bias packed like the row and held by every
 * MAB (the layout planner demands them so).
 *
 * Cost per row base: about A / 4 steps a fold, 26 to finish it, 3 A / 4 + 8 a map (a
 * step per 4 long words each way and per vector step, nops between phases). */
#include "emit_impl.h"
#include "ops.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NB = 8 }; /* chunks of 4 long words a map batch holds in GRF0 (from long word 64) */

typedef struct {
    int64_t A; /* long words per row per PE */
    int64_t nbase, *base; /* the distinct row bases, ascending */
} Rows;

/* The normalized axis n works along, and whether it is the last */
static bool last_axis(const MNCompile *c, const MNNode *n) {
    int r = n->in[0]->type.rank;
    int64_t ax = n->op == OP_LayerNormalization ? ir_attr_int(n, "axis", -1)
                                                : ir_attr_int(n, "axis", c->g->opset >= 13 ? -1 : 1);
    if (ax < 0) ax += r;
    return r >= 1 && ax == r - 1;
}

/* the last axis of l packed 8 to a long word over W and the 4 PEs, its long words
 * consecutive, nothing else on W or the PEs, not cut over time */
static bool packed_last(const MNLayout *l, int64_t D) {
    int r = l->rank;
    if (r < 1 || D % 8 || l->nsub[r - 1] != 3) return false;
    const MNSubaxis *s = l->sub[r - 1];
    if (s[0].level != LV_ADDR || s[0].size != D / 8 || s[0].stride != 1 || s[1].level != LV_W || s[1].size != 2 ||
        s[1].stride != 1 || s[2].level != LV_PE || s[2].size != 4 || s[2].stride != 1)
        return false;
    for (int d = 0; d < r - 1; d++)
        for (int k = 0; k < l->nsub[d]; k++)
            if (l->sub[d][k].level == LV_W || l->sub[d][k].level == LV_PE || l->sub[d][k].level == LV_TIME)
                return false;
    return true;
}

static int cmp64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* v's rows (NULL rows: only whether it has them) */
static bool rows_of(const MNValue *v, Rows *rw) {
    MNLayout l;
    if (!layout_get(v, &l) || l.rank != v->type.rank) return false;
    int r = l.rank;
    int64_t D = v->type.dims[r - 1], R = D ? ir_shape_numel(&v->type) / D : 0;
    if (R < 1 || !packed_last(&l, D)) return false;
    if (!rw) return true;
    rw->A = D / 8;
    rw->base = xmalloc(sizeof(int64_t) * (size_t)R);
    int64_t idx[LAYOUT_MAX_RANK] = {0};
    for (int64_t q = 0; q < R; q++) {
        int64_t t = q;
        for (int d = r - 2; d >= 0; d--) idx[d] = t % v->type.dims[d], t /= v->type.dims[d];
        MNPlace p;
        layout_place(&l, idx, &p);
        rw->base[q] = p.c[LV_ADDR];
    }
    qsort(rw->base, (size_t)R, sizeof(int64_t), cmp64);
    int64_t n = 0;
    for (int64_t q = 0; q < R; q++)
        if (!n || rw->base[q] != rw->base[n - 1]) rw->base[n++] = rw->base[q];
    rw->nbase = n;
    return rw->base[n - 1] + rw->A <= v->num_lw;
}

/* a LayerNormalization's scale or bias: (D) packed like the rows, at long word 0, on every
 * MAB, L1B and L2B */
static bool param_ok(const MNMachine *m, const MNValue *p, int64_t D) {
    MNLayout l;
    if (!p || !emit_in_lm(p) || p->dtype != MN_DT_Float || !layout_get(p, &l)) return false;
    if (p->type.rank < 1 || ir_shape_numel(&p->type) != D || p->type.dims[p->type.rank - 1] != D) return false;
    if (!packed_last(&l, D)) return false;
    for (int d = 0; d < l.rank - 1; d++)
        if (l.nsub[d] && l.sub[d][0].size > 1) return false;
    const MNLevel tree[3] = {LV_MAB, LV_L1B, LV_L2B};
    const int64_t count[3] = {m->mab_per_l1b, m->l1b_per_l2b, m->n_l2b};
    for (int k = 0; k < 3; k++)
        if (count[k] > 1 && !(l.bcast & (1u << tree[k]))) return false;
    return true;
}

bool emit_rows_node(const MNCompile *c, const MNNode *n) {
    if (n->op != OP_Softmax && n->op != OP_LogSoftmax && n->op != OP_LayerNormalization) return false;
    if (n->nin < 1 || !n->in[0] || n->nout < 1 || !n->out[0] || !last_axis(c, n)) return false;
    for (int k = 1; k < n->nout; k++)
        if (n->out[k] && n->out[k]->nuses) return false; /* LayerNormalization's Mean, InvStdDev */
    const MNValue *x = n->in[0], *y = n->out[0];
    if (x->dtype != MN_DT_Float || y->dtype != MN_DT_Float || !layout_equal(x, y)) return false;
    return rows_of(x, NULL);
}

const char *emit_rows_why(const MNCompile *c, const MNNode *n, Walk *w) {
    (void)w;
    const MNValue *x = n->in[0];
    if (!emit_in_lm(x) || !emit_in_lm(n->out[0])) return "not in LM";
    if (n->op == OP_LayerNormalization) {
        int64_t D = x->type.dims[x->type.rank - 1];
        if (n->nin < 2 || !param_ok(&c->machine, n->in[1], D) ||
            (n->nin > 2 && n->in[2] && !param_ok(&c->machine, n->in[2], D)))
            return "a scale or bias not packed like the rows on every MAB";
    }
    Rows rw;
    if (!rows_of(x, &rw)) return "rows past the value";
    free(rw.base);
    return NULL;
}

/* ---- code ---- */

/* operand text of v's long words at [lw, lw + 4) ("v") or at lw alone */
static const char *at(const Em *e, const MNValue *v, int64_t lw, bool four, char *buf) {
    char a[40];
    snprintf(buf, 64, "$%s%s%s", emit_bank_reg(v), emit_at(e, v, lw, a), four ? "v" : "");
    return buf;
}

typedef enum { F_MAX, F_SUM, F_SUMSQ } Fold;

/* fold row base b of v (A long words) into GRF0 long word 0, both words, every PE */
static void fold(Em *e, const MNValue *v, int64_t b, int64_t A, Fold f) {
    const char *op = f == F_MAX ? "fmax" : "fvadd";
    const char *grp[2] = {"$lr0v", "$ls0v"};
    int64_t G = A / 4;
    char X[64];
    for (int64_t j = 0; j < 2; j++) { /* each group's first chunk, or the identity */
        if (j < G) {
            at(e, v, b + 4 * j, true, X);
            if (f == F_SUMSQ)
                buf_printf(e->b, "fvmul %s %s %s\n", X, X, grp[j]);
            else
                buf_printf(e->b, "lpassa %s %s\n", X, grp[j]);
        } else if (f == F_MAX) /* max is idempotent: the row's first long word */
            buf_printf(e->b, "lpassa %s %s\n", at(e, v, b, false, X), grp[j]);
        else
            buf_printf(e->b, "zero %s\n", grp[j]);
    }
    for (int64_t j = 2; j < G; j++) {
        at(e, v, b + 4 * j, true, X);
        if (f == F_SUMSQ)
            buf_printf(e->b, "fvfma %s %s %s %s\n", X, X, grp[j % 2], grp[j % 2]);
        else
            buf_printf(e->b, "%s %s %s %s\n", op, grp[j % 2], X, grp[j % 2]);
    }
    buf_printf(e->b, "nop\n%s $lr0v $ls0v $lr0v\nnop\n", op);
    for (int64_t k = 4 * G; k < A; k++) { /* the long words past the last whole chunk */
        at(e, v, b + k, false, X);
        if (f == F_SUMSQ)
            buf_printf(e->b, "fvfma %s %s $lr0 $lr0\nnop\n", X, X);
        else
            buf_printf(e->b, "%s $lr0 %s $lr0\nnop\n", op, X);
    }
    /* the 4 long words, then the two words, then the 4 PEs */
    buf_printf(e->b, "lpassa $lr0v $ls0v\nnop\n");
    for (int k = 1; k < 4; k++) buf_printf(e->b, "%s $lr0 $ls%d $lr0\nnop\n", op, 2 * k);
    buf_printf(e->b, "lpassa $lr0 $ls8\nnop\n%s $r0 $s9 $r0 $r1\nnop\n", op);
    buf_printf(e->b, "msl $lr0 $ls8\nnop\n%s $lr0 $ls8 $lr0\nnop\n", op);
    buf_printf(e->b, "msl $lr0 $ls8\nnop\nmsl $ls8 $ls10\nnop\n%s $lr0 $ls10 $lr0\nnop\n", op);
}

/* One map over row base b: for each chunk of the row (4 long words, then single ones),
 * the steps with S naming src's long words, T the chunk's GRF0 long words, O dst's, P and
 * Q those of the parameters p and q (at the row's offsets from their long word 0). A
 * step writing O is the last of a batch. */
static void map(Em *e, const MNValue *src, const MNValue *dst, const MNValue *p, const MNValue *q, int64_t b, int64_t A,
                const char *const *steps, int nsteps) {
    int64_t nch = A / 4 + A % 4;
    for (int64_t c0 = 0; c0 < nch; c0 += NB) {
        int64_t c1 = c0 + NB < nch ? c0 + NB : nch;
        for (int s = 0; s < nsteps; s++) {
            for (int64_t c = c0; c < c1; c++) {
                bool four = c < A / 4;
                int64_t off = four ? 4 * c : 4 * (A / 4) + (c - A / 4);
                char opnd[5][64];
                at(e, src, b + off, four, opnd[0]);
                snprintf(opnd[1], 64, "$lr%lld%s", (long long)(128 + 8 * (c - c0)), four ? "v" : "");
                at(e, dst, b + off, four, opnd[2]);
                if (p) at(e, p, off, four, opnd[3]);
                if (q) at(e, q, off, four, opnd[4]);
                for (const char *t = steps[s]; *t; t++) { /* a lone capital is an operand */
                    const char *k = strchr("STOPQ", *t);
                    if (*t && k && (t == steps[s] || t[-1] == ' ' || t[-1] == '-') && (!t[1] || t[1] == ' '))
                        buf_printf(e->b, "%s", opnd[k - "STOPQ"]);
                    else
                        buf_printf(e->b, "%c", *t);
                }
                buf_printf(e->b, "\n");
            }
            if (c1 - c0 < 2) buf_printf(e->b, "nop\n"); /* a GRF word is read two steps after its write */
        }
        buf_printf(e->b, "nop/2\n"); /* the LM written, read next */
    }
}

void emit_rows(Em *e, const MNNode *n) {
    const MNValue *x = n->in[0], *y = n->out[0];
    Rows rw;
    if (!rows_of(x, &rw)) die("node '%s' has no rows", n->name);
    int64_t A = rw.A, D = 8 * A;
    const MNValue *sc = n->op == OP_LayerNormalization ? n->in[1] : NULL;
    const MNValue *bi = sc && n->nin > 2 ? n->in[2] : NULL;
    if (n->op == OP_LayerNormalization)
        buf_printf(e->b, "imm f\"%.9g\" $ls16\nnop\nimm f\"%.9g\" $ls18\nnop\n", 1.0 / (double)D,
                   ir_attr_float(n, "epsilon", 1e-5));
    for (int64_t i = 0; i < rw.nbase; i++) {
        int64_t b = rw.base[i];
        buf_printf(e->b, "nop/2\n");
        if (n->op == OP_LayerNormalization) {
            fold(e, x, b, A, F_SUM);
            buf_printf(e->b, "fvmul $lr0 $ls16 $ls20\nnop\n"); /* the mean */
            const char *center[] = {"fvadd S -$ls20 T", "lpassa T O"};
            map(e, x, y, NULL, NULL, b, A, center, 2);
            fold(e, y, b, A, F_SUMSQ);
            buf_printf(e->b, "fvmul $lr0 $ls16 $lr0\nnop\nfvadd $lr0 $ls18 $lr0\nnop\nfrsqrt $lr0 $ls20\nnop\n");
            /* y rsqrt(var + eps), times the scale, plus the bias */
            const char *norm[] = {"fvmul S $ls20 T", "fvmul T P T", "fvadd T Q T", "lpassa T O"},
                       *norm_nb[] = {"fvmul S $ls20 T", "fvmul T P T", "lpassa T O"};
            map(e, y, y, sc, bi, b, A, bi ? norm : norm_nb, bi ? 4 : 3);
            continue;
        }
        fold(e, x, b, A, F_MAX);
        buf_printf(e->b, "lpassa $lr0 $ls20\nnop\n"); /* the max */
        const char *expo[] = {"fvadd S -$ls20 T", "fexp T T", "lpassa T O"};
        map(e, x, y, NULL, NULL, b, A, expo, 3);
        fold(e, y, b, A, F_SUM);
        if (n->op == OP_Softmax) {
            buf_printf(e->b, "frcp $lr0 $ls22\nnop\n");
            const char *scale[] = {"fvmul S $ls22 T", "lpassa T O"};
            map(e, y, y, NULL, NULL, b, A, scale, 2);
        } else { /* x - (max + log sum) */
            buf_printf(e->b, "flog $lr0 $lr0\nnop\nfvadd $lr0 $ls20 $ls22\nnop\n");
            const char *logs[] = {"fvadd S -$ls22 T", "lpassa T O"};
            map(e, x, y, NULL, NULL, b, A, logs, 2);
        }
    }
    free(rw.base);
}

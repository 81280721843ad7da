/* Code Emit: Softmax, LogSoftmax, LayerNormalization and reductions (ReduceMean, ReduceSum,
 * ReduceMax, ReduceMin, ReduceSumSquare) along rows that each lie on one MAB.
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
 * MAB (the layout planner demands them so). A reduction writes the folded long word, the
 * result in every word of it on every PE, where its output puts the row's element: the
 * layout planner gives it the one an elementwise op beside the rows reads (broadcast over
 * the PEs and words), so Sub(x, ReduceMean(x)) needs no switch.
 *
 * Cost per row base: about A / 4 steps a fold, 26 to finish it, 3 A / 4 + 8 a map (a
 * step per 4 long words each way and per vector step, nops between phases). */
#include "emit_impl.h"
#include "infer.h"
#include "ops.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NB = 8 }; /* chunks of 4 long words a map batch holds in GRF0 (from long word 64) */

typedef struct {
    int64_t A; /* long words per row per PE */
    int rem; /* D % 8: the elements of the row's last long word, the rest padding (0: none) */
    int64_t nbase, *base; /* the distinct row bases, ascending */
} Rows;

/* a reduction the rows fold (its fold, and whether it scales by 1 / D) */
static bool reduce_op(const MNNode *n) {
    return n->op == OP_ReduceMean || n->op == OP_ReduceSum || n->op == OP_ReduceMax || n->op == OP_ReduceMin ||
           n->op == OP_ReduceSumSquare;
}

/* The normalized axis n works along, and whether it is the last */
static bool last_axis(const MNCompile *c, const MNNode *n) {
    int r = n->in[0]->type.rank;
    if (reduce_op(n)) { /* exactly the last axis */
        bool mask[MN_MAX_RANK];
        if (r < 1 || !infer_reduce_mask(c->g, (MNNode *)n, mask)) return false;
        for (int i = 0; i < r; i++)
            if (mask[i] != (i == r - 1)) return false;
        return true;
    }
    int64_t ax = n->op == OP_LayerNormalization ? ir_attr_int(n, "axis", -1)
                                                : ir_attr_int(n, "axis", c->g->opset >= 13 ? -1 : 1);
    if (ax < 0) ax += r;
    return r >= 1 && ax == r - 1;
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
    if (R < 1 || !plan_layout_rows(&l, D)) return false;
    if (!rw) return true;
    rw->A = (D + 7) / 8;
    rw->rem = (int)(D % 8);
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

/* A reduction's output element of each row: on the row's MAB, L1B and L2B (or on every
 * one of a level it is broadcast over), at an address alike for every row of one base;
 * those addresses per base into out (NULL: only whether) */
static bool reduced_at(const MNValue *x, const MNValue *y, const Rows *rw, int64_t *out) {
    MNLayout lx, ly;
    if (!layout_get(x, &lx) || !layout_get(y, &ly) || ly.rank != y->type.rank || layout_extent(&ly, LV_TIME) > 1)
        return false;
    int r = x->type.rank;
    bool keep = y->type.rank == r;
    if (!keep && y->type.rank != r - 1) return false;
    int64_t D = x->type.dims[r - 1], R = ir_shape_numel(&x->type) / D;
    int64_t *got = xmalloc(sizeof(int64_t) * (size_t)rw->nbase);
    for (int64_t i = 0; i < rw->nbase; i++) got[i] = -1;
    int64_t idx[LAYOUT_MAX_RANK] = {0};
    bool ok = true;
    const MNLevel tree[3] = {LV_MAB, LV_L1B, LV_L2B};
    for (int64_t q = 0; q < R && ok; q++) {
        int64_t t = q;
        for (int d = r - 2; d >= 0; d--) idx[d] = t % x->type.dims[d], t /= x->type.dims[d];
        idx[r - 1] = 0;
        MNPlace px, py;
        layout_place(&lx, idx, &px);
        layout_place(&ly, idx, &py); /* (without keepdims, the same leading indices) */
        for (int k = 0; k < 3; k++)
            if (!(ly.bcast & (1u << tree[k])) && px.c[tree[k]] != py.c[tree[k]]) ok = false;
        int64_t lo = 0, hi = rw->nbase; /* the row's base */
        while (hi - lo > 1) {
            int64_t mid = (lo + hi) / 2;
            if (rw->base[mid] <= px.c[LV_ADDR])
                lo = mid;
            else
                hi = mid;
        }
        if (got[lo] >= 0 && got[lo] != py.c[LV_ADDR]) ok = false;
        got[lo] = py.c[LV_ADDR];
        if (py.c[LV_ADDR] >= y->num_lw) ok = false;
    }
    if (ok && out) memcpy(out, got, sizeof(int64_t) * (size_t)rw->nbase);
    qsort(got, (size_t)rw->nbase, sizeof(int64_t), cmp64); /* each base's long word its own (a whole one is */
    for (int64_t i = 1; i < rw->nbase && ok; i++) /* written) */
        if (got[i] >= 0 && got[i] == got[i - 1]) ok = false;
    free(got);
    return ok;
}

/* a LayerNormalization's scale or bias: (D) packed like the rows, at long word 0, on every
 * MAB, L1B and L2B where rows of x are (a level x neither spreads over nor is replicated
 * on holds x at its place 0 only, where the parameter sits too) */
static bool param_ok(const MNMachine *m, const MNValue *p, int64_t D, const MNValue *x) {
    MNLayout lx;
    if (!layout_get(x, &lx)) return false;
    MNLayout l;
    if (!p || !emit_in_lm(p) || p->dtype != MN_DT_Float || !layout_get(p, &l)) return false;
    if (p->type.rank < 1 || ir_shape_numel(&p->type) != D || p->type.dims[p->type.rank - 1] != D) return false;
    if (!plan_layout_rows(&l, D)) return false;
    for (int d = 0; d < l.rank - 1; d++)
        if (l.nsub[d] && l.sub[d][0].size > 1) return false;
    const MNLevel tree[3] = {LV_MAB, LV_L1B, LV_L2B};
    const int64_t count[3] = {m->mab_per_l1b, m->l1b_per_l2b, m->n_l2b};
    for (int k = 0; k < 3; k++)
        if (count[k] > 1 && !(l.bcast & (1u << tree[k])) &&
            ((lx.bcast & (1u << tree[k])) || layout_extent(&lx, tree[k]) > 1))
            return false;
    return true;
}

bool emit_rows_node(const MNCompile *c, const MNNode *n) {
    if (n->op != OP_Softmax && n->op != OP_LogSoftmax && n->op != OP_LayerNormalization && !reduce_op(n)) return false;
    if (n->nin < 1 || !n->in[0] || n->nout < 1 || !n->out[0] || !last_axis(c, n)) return false;
    for (int k = 1; k < n->nout; k++)
        if (n->out[k] && n->out[k]->nuses) return false; /* LayerNormalization's Mean, InvStdDev */
    const MNValue *x = n->in[0], *y = n->out[0];
    if (x->dtype != MN_DT_Float || y->dtype != MN_DT_Float || (!reduce_op(n) && !layout_equal(x, y))) return false;
    return rows_of(x, NULL);
}

const char *emit_rows_why(const MNCompile *c, const MNNode *n, Walk *w) {
    (void)w;
    const MNValue *x = n->in[0];
    if (!emit_in_lm(x) || !emit_in_lm(n->out[0])) return "not in LM";
    if (n->op == OP_LayerNormalization) {
        int64_t D = x->type.dims[x->type.rank - 1];
        if (n->nin < 2 || !param_ok(&c->machine, n->in[1], D, x) ||
            (n->nin > 2 && n->in[2] && !param_ok(&c->machine, n->in[2], D, x)))
            return "a scale or bias not packed like the rows beside every row";
    }
    Rows rw;
    if (!rows_of(x, &rw)) return "rows past the value";
    bool ok = !reduce_op(n) || reduced_at(x, n->out[0], &rw, NULL);
    free(rw.base);
    return ok ? NULL : "a reduced row's output off its MAB";
}

/* ---- code ---- */

/* operand text of v's long words at [lw, lw + 4) ("v") or at lw alone */
static const char *at(const Em *e, const MNValue *v, int64_t lw, bool four, char *buf) {
    char a[40];
    snprintf(buf, 64, "$%s%s%s", emit_bank_reg(v), emit_at(e, v, lw, a), four ? "v" : "");
    return buf;
}

typedef enum { F_MAX, F_MIN, F_SUM, F_SUMSQ } Fold;

/* fold row base b of v (A long words) into GRF0 long word 0, both words, every PE */
static void fold(Em *e, const MNValue *v, int64_t b, int64_t A, Fold f) {
    const char *op = f == F_MAX ? "fmax" : f == F_MIN ? "fmin" : "fvadd";
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
        } else if (f == F_MAX || f == F_MIN) /* idempotent: the row's first long word */
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

/* A row of D elements not a multiple of 8 ends in a long word whose lanes past D are
 * padding, holding anything. Before a fold reads the row, they take the fold's neutral
 * value (a reduction's own padding, nobody else's elements): -inf for a max (a Softmax's
 * e^(x - max) is then 0 there, so its sum and output need nothing more), +inf for a min,
 * 0 for a sum. Mask 3 enables exactly those lanes on every PE: lane w of PE p holds
 * element 4 w + p of the long word, padding when 4 w + p >= rem, a flag of p - (rem - 4 w)
 * per 32-bit lane. */
void emit_pad_setup(Em *e, int rem) {
    buf_printf(e->b, "imm i\"%d\" $s40\nimm i\"%d\" $s41\nimm i\"-8388608\" $ls%d\n", rem, rem - 4, EM_PAD_NEG);
    buf_printf(e->b, "imm i\"2139095040\" $ls%d\nzero $ls%d\nnop\n", EM_PAD_POS, EM_PAD_ZERO);
    buf_printf(e->b, "isub $subpeid $ls40 $nowrite $omr3\nnop\n");
}

void emit_pad_lw(Em *e, const MNValue *v, int64_t lw, int k) {
    char O[64];
    buf_printf(e->b, "lpassa $ls%d %s/$imr3\n", k, at(e, v, lw, false, O));
}

/* the padding lanes of every row of v (bases b) to the neutral value in GRF1 word k, then
 * the LM write settles once */
static void pad_rows(Em *e, const MNValue *v, const int64_t *b, int64_t nb, int64_t A, int k) {
    for (int64_t i = 0; i < nb; i++) emit_pad_lw(e, v, b[i] + A - 1, k);
    buf_printf(e->b, "nop/2\n");
}

void emit_rows(Em *e, const MNNode *n) {
    const MNValue *x = n->in[0], *y = n->out[0];
    Rows rw;
    if (!rows_of(x, &rw)) die("node '%s' has no rows", n->name);
    int64_t A = rw.A, D = x->type.dims[x->type.rank - 1];
    bool padded = rw.rem != 0;
    if (padded) { /* the input's padding, once for every row: the neutral value of its first fold */
        Fold f0 = n->op == OP_ReduceMax ? F_MAX : n->op == OP_ReduceMin ? F_MIN : F_SUM;
        if (n->op == OP_Softmax || n->op == OP_LogSoftmax) f0 = F_MAX;
        emit_pad_setup(e, rw.rem);
        pad_rows(e, x, rw.base, rw.nbase, A, f0 == F_MAX ? EM_PAD_NEG : f0 == F_MIN ? EM_PAD_POS : EM_PAD_ZERO);
    }
    const MNValue *sc = n->op == OP_LayerNormalization ? n->in[1] : NULL;
    const MNValue *bi = sc && n->nin > 2 ? n->in[2] : NULL;
    if (n->op == OP_LayerNormalization)
        buf_printf(e->b, "imm f\"%.9g\" $ls16\nnop\nimm f\"%.9g\" $ls18\nnop\n", 1.0 / (double)D,
                   ir_attr_float(n, "epsilon", 1e-5));
    int64_t *oat = NULL;
    if (reduce_op(n)) {
        oat = xmalloc(sizeof(int64_t) * (size_t)rw.nbase);
        if (!reduced_at(x, y, &rw, oat)) die("node '%s' has no reduced rows", n->name);
        if (n->op == OP_ReduceMean) buf_printf(e->b, "imm f\"%.9g\" $ls16\nnop\n", 1.0 / (double)D);
    }
    for (int64_t i = 0; i < rw.nbase; i++) {
        int64_t b = rw.base[i];
        buf_printf(e->b, "nop/2\n");
        if (oat) { /* the whole long word: every word of it on every PE is the row's result */
            char O[64];
            Fold f = n->op == OP_ReduceMax         ? F_MAX
                     : n->op == OP_ReduceMin       ? F_MIN
                     : n->op == OP_ReduceSumSquare ? F_SUMSQ
                                                   : F_SUM;
            fold(e, x, b, A, f);
            if (n->op == OP_ReduceMean) buf_printf(e->b, "fvmul $lr0 $ls16 $lr0\nnop\n");
            buf_printf(e->b, "lpassa $lr0 %s\n", at(e, y, oat[i], false, O));
            continue;
        }
        if (n->op == OP_LayerNormalization) {
            fold(e, x, b, A, F_SUM);
            buf_printf(e->b, "fvmul $lr0 $ls16 $ls20\nnop\n"); /* the mean */
            const char *center[] = {"fvadd S -$ls20 T", "lpassa T O"};
            map(e, x, y, NULL, NULL, b, A, center, 2);
            if (padded) pad_rows(e, y, &b, 1, A, EM_PAD_ZERO); /* (- mean there) */
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
    if (oat) buf_printf(e->b, "nop/2\n");
    free(oat);
    free(rw.base);
}

/* Panel lowering: a product whose B is computed on the machine (a run-time B that neither
 * the host nor a constant image can lay out in DRAM for streaming) and is too large to be
 * copied to every MAB, the matrix unit's only way to read a run-time B, is cut into
 * products that each fit:
 *
 *   Y = A B   becomes   Y = Concat_p (Sum_c A[:, c] B[c, p])   along N,
 *
 * panels p of Np columns and chunks c of Kc rows of B, each B[c, p] packed for the matrix
 * unit on every MAB within a quarter of LM0 (the matrix path's budget for B), the chunks' partial
 * products added. A[:, c] cuts A's packed last axis at multiples of 8 (a copy of long
 * words); each panel's product lies on A's rows, so the Concat along N puts long words
 * beside each other on the same PEs. Without it such a product had no program at any
 * size past 64 x 64 floats. A Gemm's bias is added after the Concat; a Gemm with alpha or
 * beta other than 1 is left as it is. Where B is the transpose of rows made on the machine
 * (a Gemm's transB, a Transpose before a MatMul), each panel takes its block of the rows
 * and turns it (a Transpose writing the panel's B layout itself, as attention's Kᵀ is
 * written: emitter/rowmove.c), whatever B's size: the whole transpose would move every
 * element between PEs at once. */
#include "plan.h"
#include "ops.h"
#include <string.h>

static bool is_product(const MNNode *n) { return n->op == OP_Gemm || n->op == OP_MatMul; }

/* x[starts..ends) along axes, as this opset spells a Slice (attributes before 10) */
static MNValue *cut(MNGraph *g, const MNNode *n, MNValue *x, int na, const int64_t *axes, const int64_t *st,
                    const int64_t *en, int *k) {
    int64_t dims[MN_MAX_RANK];
    for (int d = 0; d < x->type.rank; d++) dims[d] = x->type.dims[d];
    for (int i = 0; i < na; i++) dims[axes[i]] = en[i] - st[i];
    MNValue *y = plan_value_new(g, arena_printf(g->arena, "%s_cut%d", n->name, *k), x->type.elem, x->type.rank, dims);
    MNNode *s = plan_node_new(g, "Slice", arena_printf(g->arena, "%s_cut%d", n->name, *k), g->opset < 10 ? 1 : 4, y);
    s->in[0] = x;
    if (g->opset < 10) {
        ir_attr_set_ints(g, s, "starts", st, na);
        ir_attr_set_ints(g, s, "ends", en, na);
        ir_attr_set_ints(g, s, "axes", axes, na);
    } else {
        s->in[1] = plan_ints_konst(g, arena_printf(g->arena, "%s_cut%d_starts", n->name, *k), na, st);
        s->in[2] = plan_ints_konst(g, arena_printf(g->arena, "%s_cut%d_ends", n->name, *k), na, en);
        s->in[3] = plan_ints_konst(g, arena_printf(g->arena, "%s_cut%d_axes", n->name, *k), na, axes);
    }
    (*k)++;
    return y;
}

static bool lower(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    MNValue *a = n->nin >= 2 ? n->in[0] : NULL, *b = n->nin >= 2 ? n->in[1] : NULL, *y = n->nout ? n->out[0] : NULL;
    MNValue *bias = n->op == OP_Gemm && n->nin > 2 ? n->in[2] : NULL;
    if (!a || !b || !y || b->type.rank != 2 || a->type.rank < 2 || a->type.elem != ONNX_FLOAT32 ||
        b->type.elem != ONNX_FLOAT32)
        return false;
    if (n->op == OP_Gemm && (ir_attr_int(n, "transA", 0) || ir_attr_float(n, "alpha", 1) != 1 ||
                             (bias && ir_attr_float(n, "beta", 1) != 1)))
        return false;
    /* B as the transpose of rows (N, K) made on the machine (a Gemm's transB, a Transpose before a
     * MatMul): each panel is a Transpose of a block of the rows, which writes B's layout itself */
    MNValue *rows = n->op == OP_Gemm && ir_attr_int(n, "transB", 0) ? b : NULL;
    MNNode *t = b->producer;
    const MNAttr *perm = t && t->op == OP_Transpose ? ir_attr(t, "perm") : NULL;
    if (n->op == OP_MatMul && t && t->op == OP_Transpose && t->in[0] && b->nuses == 1 && !b->is_output &&
        (!perm || (perm->type == MN_ATTR_INTS && perm->n == 2 && perm->ints[0] == 1)))
        rows = t->in[0];
    if (rows && (rows->konst || (rows->is_input && !rows->producer))) rows = NULL; /* (the host's: streamed) */
    if (!rows && (b->konst || (b->is_input && !b->producer) || (n->op == OP_Gemm && ir_attr_int(n, "transB", 0))))
        return false;
    int ra = a->type.rank, ry = y->type.rank;
    int64_t K = rows ? rows->type.dims[1] : b->type.dims[0], N = rows ? rows->type.dims[0] : b->type.dims[1],
            budget = c->machine.lm0_lw / 4;
    int64_t kb = (K + 7) / 8; /* B's long words a column, packed */
    if ((kb * N <= budget && !rows) || a->type.dims[ra - 1] != K) return false; /* (it fits as it is) */
    /* (a turned block's B takes its columns 16 apart: blocks of 16 columns) */
    int64_t Np, Kc, G = rows ? 16 : 8;
    if (kb * G <= budget) { /* whole columns, as many blocks of G columns as fit */
        Kc = K;
        Np = budget / kb / G * G;
    } else { /* G columns, K in chunks */
        Np = G;
        Kc = budget / G * 8;
    }
    if (Np > N) Np = N;
    int np = (int)((N + Np - 1) / Np), nc = (int)((K + Kc - 1) / Kc), k = 0;
    if (np * nc > 4096) return false; /* (a product the size of a model: Time-Slice's) */
    MNValue **ac = ARENA_ARRAY(g->arena, MNValue *, nc), **yp = ARENA_ARRAY(g->arena, MNValue *, np);
    for (int q = 0; q < nc; q++) { /* A's columns of each chunk */
        int64_t ax = ra - 1, s0 = q * Kc, s1 = s0 + Kc < K ? s0 + Kc : K;
        ac[q] = nc == 1 ? a : cut(g, n, a, 1, &ax, &s0, &s1, &k);
    }
    int64_t ydims[MN_MAX_RANK];
    for (int d = 0; d < ry; d++) ydims[d] = y->type.dims[d];
    for (int p = 0; p < np; p++) {
        int64_t p0 = p * Np, p1 = p0 + Np < N ? p0 + Np : N;
        ydims[ry - 1] = p1 - p0;
        MNValue *sum = NULL;
        for (int q = 0; q < nc; q++) {
            int64_t s0 = q * Kc, s1 = s0 + Kc < K ? s0 + Kc : K, axes[2] = {0, 1};
            int64_t st[2] = {s0, p0}, en[2] = {s1, p1}, rst[2] = {p0, s0}, ren[2] = {p1, s1};
            MNValue *bp;
            if (rows) { /* the block of rows, turned */
                int64_t bd[2] = {s1 - s0, p1 - p0};
                MNValue *blk = np * nc == 1 ? rows : cut(g, n, rows, 2, axes, rst, ren, &k);
                bp = plan_value_new(g, arena_printf(g->arena, "%s_turned%d", n->name, k), ONNX_FLOAT32, 2, bd);
                MNNode *tr = plan_node_new(g, "Transpose", arena_printf(g->arena, "%s_turn%d", n->name, k++), 1, bp);
                tr->in[0] = blk;
                int64_t pm[2] = {1, 0};
                ir_attr_set_ints(g, tr, "perm", pm, 2);
            } else
                bp = cut(g, n, b, 2, axes, st, en, &k);
            MNValue *part =
                plan_value_new(g, arena_printf(g->arena, "%s_panel%d_%d", n->name, p, q), ONNX_FLOAT32, ry, ydims);
            MNNode *m = plan_node_new(g, "MatMul", arena_printf(g->arena, "%s_panel%d_%d", n->name, p, q), 2, part);
            m->in[0] = ac[q];
            m->in[1] = bp;
            sum = sum ? plan_op(g, n, "Add", sum, part, NULL, ONNX_FLOAT32, &k) : part;
        }
        yp[p] = sum;
    }
    MNValue *out = y;
    if (bias) out = plan_value_new(g, arena_printf(g->arena, "%s_unbiased", n->name), ONNX_FLOAT32, ry, y->type.dims);
    MNNode *cat =
        plan_node_new(g, np == 1 ? "Identity" : "Concat", arena_printf(g->arena, "%s_panels", n->name), np, out);
    for (int p = 0; p < np; p++) cat->in[p] = yp[p];
    if (np > 1) ir_attr_set_int(g, cat, "axis", ry - 1);
    if (bias) plan_op(g, n, "Add", out, bias, y, ONNX_FLOAT32, &k);
    if (rows && rows != b) t->dead = true; /* (its one reader replaced) */
    n->dead = true;
    return true;
}

bool plan_panel_lowering(MNCompile *c) {
    int lowered = plan_replace_nodes(c, is_product, lower);
    mn_figure(c, "products_in_panels", lowered);
    if (lowered)
        mn_log(c, 0, "panel lowering: %d products of a large run-time B as panels that fit every MAB", lowered);
    return true;
}

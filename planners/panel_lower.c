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
 * size past 64 x 64 floats. A Gemm's bias is added after the Concat; a Gemm with transB,
 * alpha or beta other than 1 is left as it is (transB's panels would be B's rows, which no
 * move copies to every MAB yet). */
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

static MNValue *two(MNGraph *g, const MNNode *n, const char *op, MNValue *a, MNValue *b, int rank, const int64_t *dims,
                    MNValue *y, int *k) {
    if (!y) y = plan_value_new(g, arena_printf(g->arena, "%s_%s%d", n->name, op, *k), ONNX_FLOAT32, rank, dims);
    MNNode *s = plan_node_new(g, op, arena_printf(g->arena, "%s_%s%d", n->name, op, *k), 2, y);
    s->in[0] = a;
    s->in[1] = b;
    (*k)++;
    return y;
}

static bool lower(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    MNValue *a = n->nin >= 2 ? n->in[0] : NULL, *b = n->nin >= 2 ? n->in[1] : NULL, *y = n->nout ? n->out[0] : NULL;
    MNValue *bias = n->op == OP_Gemm && n->nin > 2 ? n->in[2] : NULL;
    if (!a || !b || !y || b->konst || (b->is_input && !b->producer) || b->type.rank != 2 || a->type.rank < 2 ||
        a->type.elem != ONNX_FLOAT32 || b->type.elem != ONNX_FLOAT32)
        return false;
    /* (a transB's panels are B's rows, which a move would have to copy to every MAB as they are: not yet) */
    if (n->op == OP_Gemm && (ir_attr_int(n, "transA", 0) || ir_attr_int(n, "transB", 0) ||
                             ir_attr_float(n, "alpha", 1) != 1 || (bias && ir_attr_float(n, "beta", 1) != 1)))
        return false;
    int ra = a->type.rank, ry = y->type.rank;
    int64_t K = b->type.dims[0], N = b->type.dims[1], budget = c->machine.lm0_lw / 4;
    int64_t kb = (K + 7) / 8; /* B's long words a column, packed */
    if (kb * N <= budget || a->type.dims[ra - 1] != K) return false; /* (it fits as it is) */
    int64_t Np, Kc;
    if (kb * 8 <= budget) { /* whole columns, as many 8-column blocks as fit */
        Kc = K;
        Np = budget / kb / 8 * 8;
    } else { /* 8 columns, K in chunks */
        Np = 8;
        Kc = budget / 8 * 8;
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
            int64_t st[2] = {s0, p0}, en[2] = {s1, p1};
            MNValue *bp = cut(g, n, b, 2, axes, st, en, &k);
            MNValue *part =
                plan_value_new(g, arena_printf(g->arena, "%s_panel%d_%d", n->name, p, q), ONNX_FLOAT32, ry, ydims);
            MNNode *m = plan_node_new(g, "MatMul", arena_printf(g->arena, "%s_panel%d_%d", n->name, p, q), 2, part);
            m->in[0] = ac[q];
            m->in[1] = bp;
            sum = sum ? two(g, n, "Add", sum, part, ry, ydims, NULL, &k) : part;
        }
        yp[p] = sum;
    }
    MNValue *out = y;
    if (bias) out = plan_value_new(g, arena_printf(g->arena, "%s_unbiased", n->name), ONNX_FLOAT32, ry, y->type.dims);
    MNNode *cat =
        plan_node_new(g, np == 1 ? "Identity" : "Concat", arena_printf(g->arena, "%s_panels", n->name), np, out);
    for (int p = 0; p < np; p++) cat->in[p] = yp[p];
    if (np > 1) ir_attr_set_int(g, cat, "axis", ry - 1);
    if (bias) two(g, n, "Add", out, bias, ry, y->type.dims, y, &k);
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

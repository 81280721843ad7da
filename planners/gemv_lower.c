/* Products of one row by a constant matrix (a recurrent step's gates, a classifier's last
 * layer at batch 1, a decoder's projection of one token):
 *
 *   Y = Gemm(A, B, C) or MatMul(A, B)   with A of one row (1 x K), B constant
 *   becomes
 *   Y = Reshape(ReduceSum(Mul(Reshape(A, [K, 1]), B'), axes [0], keepdims) + C')
 *
 * with B' = alpha B (transposed where transB) and C' = beta C folded into the constants.
 * The matrix unit computes a product's rows on the MAB that holds them (emitter/matmul.c):
 * one row is one MAB's work, B streamed from DRAM down to every MAB, while the other 2047
 * wait (23,000 cycles for 256 x 256, an LSTM gate's step). Lowered, the layout planner lays
 * B' out with K over the MABs, L1Bs and L2Bs and N packed in each PE; the column of A is each
 * MAB's own element of K, picked from the row every MAB holds; the Mul runs on every PE at
 * once; and the ReduceSum folds K over the tree (emitter/treereduce.c), its sums alike on
 * every MAB, as the next step's gates want them. About 2,500 cycles a gate of 256 x 256
 * (most of them the pick and the tree), B' kept in LM from step to step. The products of one
 * B share one B' (a column of A shared by the gates of a step was slower: 3.5M cycles
 * against 2.7M for the zoo's LSTM). Taken where the K x N products spread evenly over every
 * PE would take at most an eighth of LM0 (2M on mncore2), so the rest keeps its room; a
 * larger B stays a streamed product.
 */
#include "plan.h"
#include "ops.h"
#include <stdlib.h>
#include <string.h>

/* B' by B's id and transB: plan_replace_nodes lowers only the nodes from before the pass, so
 * every B is a value from before it too */
static _Thread_local MNValue **shared;
static _Thread_local int nshared;

/* the K x N products: two floats a long word over every PE, an eighth of LM0 (mncore2: 2M) */
static int64_t max_terms(const MNMachine *m) { return (int64_t)m->n_pe * 2 * m->lm0_lw / 8; }

static bool is_product(const MNNode *n) { return n->op == OP_Gemm || n->op == OP_MatMul; }

static bool lower(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    if (n->nin < 2 || n->nout != 1 || !n->in[0] || !n->in[1] || !n->out[0]) return false;
    MNValue *a = n->in[0], *b = n->in[1], *y = n->out[0];
    MNValue *bias = n->op == OP_Gemm && n->nin > 2 ? n->in[2] : NULL;
    bool gemm = n->op == OP_Gemm, tb = gemm && ir_attr_int(n, "transB", 0);
    if (a->type.elem != ONNX_FLOAT32 || b->type.elem != ONNX_FLOAT32 || y->type.elem != ONNX_FLOAT32 || !b->konst ||
        b->type.rank != 2 || a->type.rank < 1 || (gemm && ir_attr_int(n, "transA", 0)) || (bias && !bias->konst))
        return false;
    int64_t K = a->type.dims[a->type.rank - 1], N = b->type.dims[tb ? 0 : 1];
    if (ir_shape_numel(&a->type) != K || b->type.dims[tb ? 1 : 0] != K || ir_shape_numel(&y->type) != N || K < 2 ||
        N < 2 || K * N > max_terms(&c->machine))
        return false;
    if (bias && bias->konst->numel != 1 && bias->konst->numel != N) return false; /* per column, or one for all */
    double alpha = gemm ? ir_attr_float(n, "alpha", 1) : 1, beta = gemm ? ir_attr_float(n, "beta", 1) : 1;
    Arena *ar = g->arena;
    int k = 0;
    int64_t bd[2] = {K, N}, ad[2] = {K, 1}, sd[2] = {1, N}, ax = 0;
    /* the products of one B (an LSTM's weights at every step) share one B', as they shared B */
    MNValue **slot = &shared[2 * b->id + tb], *w = *slot;
    if (!w || alpha != 1) { /* (B and transB give K and N) */
        w = plan_value_new(g, arena_printf(ar, "%s_columns", b->name), ONNX_FLOAT32, 2, bd);
        w->is_initializer = true;
        w->konst = ir_tensor_new(ar, ONNX_FLOAT32, 2, bd);
        for (int64_t i = 0; i < K; i++)
            for (int64_t j = 0; j < N; j++)
                ir_tensor_set_f(w->konst, i * N + j, alpha * ir_tensor_get_f(b->konst, tb ? j * K + i : i * N + j));
        if (alpha == 1) *slot = w;
    }
    MNValue *ak = plan_value_new(g, arena_printf(ar, "%s_column", n->name), ONNX_FLOAT32, 2, ad);
    plan_op(g, n, "Reshape", a, plan_ints_konst(g, arena_printf(ar, "%s_kshape", n->name), 2, ad), ak, 0, &k);
    MNValue *terms = plan_op(g, n, "Mul", ak, w, NULL, 0, &k);
    bool direct = !bias && y->type.rank == 2; /* the sum is Y itself */
    MNValue *s = direct ? y : plan_value_new(g, arena_printf(ar, "%s_sum", n->name), ONNX_FLOAT32, 2, sd);
    MNNode *rs = plan_node_new(g, "ReduceSum", arena_printf(ar, "%s_ReduceSum", n->name), g->opset >= 13 ? 2 : 1, s);
    rs->in[0] = terms;
    if (g->opset >= 13)
        rs->in[1] = plan_ints_konst(g, arena_printf(ar, "%s_axes", n->name), 1, &ax);
    else
        ir_attr_set_ints(g, rs, "axes", &ax, 1);
    ir_attr_set_int(g, rs, "keepdims", 1);
    if (bias) {
        MNValue *cb = plan_value_new(g, arena_printf(ar, "%s_bias", n->name), ONNX_FLOAT32, 2, sd);
        cb->is_initializer = true;
        cb->konst = ir_tensor_new(ar, ONNX_FLOAT32, 2, sd);
        for (int64_t j = 0; j < N; j++)
            ir_tensor_set_f(cb->konst, j, beta * ir_tensor_get_f(bias->konst, bias->konst->numel == 1 ? 0 : j));
        s = plan_op(g, n, "Add", s, cb, y->type.rank == 2 ? y : NULL, 0, &k);
    }
    if (s != y)
        plan_op(g, n, "Reshape", s,
                plan_ints_konst(g, arena_printf(ar, "%s_yshape", n->name), y->type.rank, y->type.dims), y, 0, &k);
    n->dead = true;
    return true;
}

bool plan_gemv_lowering(MNCompile *c) {
    nshared = c->g->nvalues;
    shared = xcalloc(2 * (size_t)nshared + 1, sizeof *shared);
    int lowered = plan_replace_nodes(c, is_product, lower);
    free(shared);
    shared = NULL, nshared = 0;
    mn_figure(c, "row_products_on_the_vector_unit", lowered);
    if (lowered) mn_log(c, 0, "row products: %d as a broadcast Mul and a ReduceSum over K", lowered);
    return true;
}

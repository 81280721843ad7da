/* Softmax lowering: a Softmax or LogSoftmax over an axis other than the last (opset 13 on:
 * that one axis) as the ops of its ONNX function body:
 *
 *   m = ReduceMax(x, axis, keepdims)   e = Exp(x - m)   s = ReduceSum(e, axis, keepdims)
 *   y = e / s                          (LogSoftmax: y = (x - m) - Log(s))
 *
 * Along the last axis, packed in long words, the rows fold within a MAB (emitter/rows.c);
 * another axis lies on the tree or on addresses, where the reductions fold it
 * (emitter/treereduce.c over the tree) and the elementwise ops read the reduced values
 * broadcast back, alike on the levels they were folded over. */
#include "plan.h"
#include "ops.h"

static bool is_cross_softmax(const MNNode *n) {
    if ((n->op != OP_Softmax && n->op != OP_LogSoftmax) || n->nin != 1 || n->nout != 1 || !n->in[0] || !n->out[0])
        return false;
    const MNValue *x = n->in[0];
    int r = x->type.rank;
    int64_t ax = ir_attr_int(n, "axis", -1);
    if (ax < 0) ax += r;
    return x->type.elem == ONNX_FLOAT32 && r >= 2 && ax >= 0 && ax < r - 1;
}

static bool lower(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    if (g->opset < 13) return false; /* (before 13: the axes from axis on, flattened) */
    MNValue *x = n->in[0];
    int r = x->type.rank, k = 0;
    int64_t ax = ir_attr_int(n, "axis", -1), dims[MN_MAX_RANK];
    if (ax < 0) ax += r;
    for (int d = 0; d < r; d++) dims[d] = d == ax ? 1 : x->type.dims[d];
    MNValue *axes = plan_ints_konst(g, arena_printf(g->arena, "%s_axes", n->name), 1, &ax);
    MNValue *m = plan_value_new(g, arena_printf(g->arena, "%s_max", n->name), ONNX_FLOAT32, r, dims);
    MNValue *s = plan_value_new(g, arena_printf(g->arena, "%s_sum", n->name), ONNX_FLOAT32, r, dims);
    MNNode *rm =
        plan_node_new(g, "ReduceMax", arena_printf(g->arena, "%s_ReduceMax", n->name), g->opset >= 18 ? 2 : 1, m);
    rm->in[0] = x;
    if (g->opset >= 18)
        rm->in[1] = axes;
    else
        ir_attr_set_ints(g, rm, "axes", &ax, 1);
    ir_attr_set_int(g, rm, "keepdims", 1);
    MNValue *sh = plan_op(g, n, "Sub", x, m, NULL, 0, &k), *e = plan_op(g, n, "Exp", sh, NULL, NULL, 0, &k);
    MNNode *rs = plan_node_new(g, "ReduceSum", arena_printf(g->arena, "%s_ReduceSum", n->name), 2, s);
    rs->in[0] = e;
    rs->in[1] = axes;
    ir_attr_set_int(g, rs, "keepdims", 1);
    if (n->op == OP_Softmax)
        plan_op(g, n, "Div", e, s, n->out[0], 0, &k);
    else
        plan_op(g, n, "Sub", sh, plan_op(g, n, "Log", s, NULL, NULL, 0, &k), n->out[0], 0, &k);
    n->dead = true;
    return true;
}

bool plan_softmax_lowering(MNCompile *c) {
    int lowered = plan_replace_nodes(c, is_cross_softmax, lower);
    mn_figure(c, "softmaxes_across_axes_lowered", lowered);
    return true;
}

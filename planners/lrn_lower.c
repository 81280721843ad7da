/* LRN lowering: local response normalisation over channels (AlexNet, GoogLeNet v1 and the
 * Caffe-era classifiers) is a product and three elementwise maps,
 *
 *   Y = LRN(X)   becomes   Y = X * exp(-beta * log(bias + Conv(X * X, W))),
 *   W (C, C, 1, 1): alpha / size where input channel i lies in output channel c's window
 *   [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)], 0 elsewhere,
 *
 * so the channel window's sum of squares runs on the matrix unit as a 1x1 convolution (on
 * the image's tiles with the rest of the network) and the power by beta on the vector
 * unit, where a Pow with a fractional exponent would take the window path. The scale
 * alpha / size is folded into W (a product per term instead of one on the sum: within a
 * rounding of the reference). A product by 0 keeps an infinite or NaN input from staying
 * inside its window: such an input makes every channel of its pixel NaN. Left as it is: an
 * input that is not a 4-D float image. */
#include "plan.h"
#include "ops.h"
#include <math.h>

static bool is_lrn(const MNNode *n) { return n->op == OP_LRN; }

/* the next node of the chain: op over a (and b), into a new value like x (or into y) */
static MNValue *step(MNGraph *g, const MNNode *n, const char *op, MNValue *a, MNValue *b, MNValue *y, int *k) {
    const MNValue *x = n->in[0];
    MNValue *o = y ? y
                   : plan_value_new(g, arena_printf(g->arena, "%s_%s%d", n->name, op, *k), ONNX_FLOAT32, x->type.rank,
                                    x->type.dims);
    MNNode *s = plan_node_new(g, op, arena_printf(g->arena, "%s_%s%d", n->name, op, (*k)++), b ? 2 : 1, o);
    s->in[0] = a;
    if (b) s->in[1] = b;
    return o;
}

static MNValue *scalar(MNGraph *g, const MNNode *n, const char *what, double v) {
    return plan_scalar_konst(g, arena_printf(g->arena, "%s_%s", n->name, what), ONNX_FLOAT32, v);
}

static bool lower(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    MNValue *x = n->nin ? n->in[0] : NULL, *y = n->nout ? n->out[0] : NULL;
    int64_t size = ir_attr_int(n, "size", 0);
    if (!x || !y || x->type.rank != 4 || x->type.elem != ONNX_FLOAT32 || y->type.elem != ONNX_FLOAT32 || size < 1)
        return false;
    double alpha = ir_attr_float(n, "alpha", 1e-4), beta = ir_attr_float(n, "beta", 0.75),
           bias = ir_attr_float(n, "bias", 1.0);
    int64_t C = x->type.dims[1], wd[4] = {C, C, 1, 1}, lo = (size - 1) / 2, hi = size - 1 - lo;
    MNValue *w = plan_value_new(g, arena_printf(g->arena, "%s_window", n->name), ONNX_FLOAT32, 4, wd);
    w->konst = ir_tensor_new(g->arena, ONNX_FLOAT32, 4, wd);
    w->is_initializer = true;
    for (int64_t o = 0; o < C; o++)
        for (int64_t i = 0; i < C; i++)
            ir_tensor_set_f(w->konst, o * C + i, i >= o - lo && i <= o + hi ? alpha / size : 0);
    int k = 0;
    MNValue *sq = step(g, n, "Mul", x, x, NULL, &k);
    MNValue *sum = step(g, n, "Conv", sq, w, NULL, &k);
    MNValue *t = step(g, n, "Add", sum, scalar(g, n, "bias", bias), NULL, &k);
    MNValue *l = step(g, n, "Log", t, NULL, NULL, &k);
    MNValue *e = step(g, n, "Mul", l, scalar(g, n, "beta", -beta), NULL, &k);
    MNValue *p = step(g, n, "Exp", e, NULL, NULL, &k);
    step(g, n, "Mul", x, p, y, &k);
    n->dead = true;
    return true;
}

bool plan_lrn_lowering(MNCompile *c) {
    int lowered = plan_replace_nodes(c, is_lrn, lower);
    mn_figure(c, "lrns_lowered", lowered);
    if (lowered) mn_log(c, 0, "LRN lowering: %d nodes as a 1x1 convolution of the squares and a power", lowered);
    return true;
}

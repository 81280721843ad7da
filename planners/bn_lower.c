/* BatchNormalization lowering: inference-mode normalisation with constant statistics is a
 * per-channel affine map, so
 *
 *   Y = BatchNormalization(X, scale, B, mean, var)   becomes   Y = X * s + t,
 *   s = scale / sqrt(var + epsilon), t = B - mean * s   (constants of shape (C, 1, ..., 1))
 *
 * two elementwise ops with broadcast constants, which run on any layout their input has
 * (a pre-activation DenseNet's BN-ReLU-Conv stays on the convolutions' tiles, where the
 * window op would gather it). The constants are computed in double and rounded once.
 * Left as it is: the training outputs (running mean and variance), statistics computed
 * at run time, an input of rank below 2, and a model before opset 7 (whose Mul broadcasts
 * only with an attribute). */
#include "plan.h"
#include "ops.h"
#include <math.h>
#include <string.h>

static bool is_bn(const MNNode *n) { return n->op == OP_BatchNormalization; }

static bool lower(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    if (n->nin != 5 || n->nout < 1 || !n->out[0] || !n->in[0] || g->opset < 7) return false; /* numpy broadcasting */
    for (int k = 1; k < n->nout; k++)
        if (n->out[k] && n->out[k]->nuses) return false; /* training statistics read */
    MNValue *x = n->in[0], *y = n->out[0];
    int r = x->type.rank;
    if (r < 2 || x->type.elem != ONNX_FLOAT32 || y->type.elem != ONNX_FLOAT32) return false;
    int64_t C = x->type.dims[1];
    for (int k = 1; k < 5; k++)
        if (!n->in[k] || !n->in[k]->konst || n->in[k]->konst->numel != C) return false;
    double eps = ir_attr_float(n, "epsilon", 1e-5);
    int64_t dims[MN_MAX_RANK];
    dims[0] = C;
    for (int i = 1; i < r - 1; i++) dims[i] = 1;
    Arena *a = g->arena;
    MNValue *s = plan_value_new(g, arena_printf(a, "%s_scale", n->name), ONNX_FLOAT32, r - 1, dims);
    MNValue *t = plan_value_new(g, arena_printf(a, "%s_shift", n->name), ONNX_FLOAT32, r - 1, dims);
    s->konst = ir_tensor_new(a, ONNX_FLOAT32, r - 1, dims);
    t->konst = ir_tensor_new(a, ONNX_FLOAT32, r - 1, dims);
    s->is_initializer = t->is_initializer = true;
    for (int64_t ch = 0; ch < C; ch++) {
        double sc = ir_tensor_get_f(n->in[1]->konst, ch) / sqrt(ir_tensor_get_f(n->in[4]->konst, ch) + eps);
        ir_tensor_set_f(s->konst, ch, sc);
        ir_tensor_set_f(t->konst, ch, ir_tensor_get_f(n->in[2]->konst, ch) - ir_tensor_get_f(n->in[3]->konst, ch) * sc);
    }
    MNValue *m = plan_value_new(g, arena_printf(a, "%s_scaled", n->name), ONNX_FLOAT32, r, x->type.dims);
    MNNode *mul = ir_node_new(g, "Mul", 2, 1), *add = ir_node_new(g, "Add", 2, 1);
    mul->name = arena_printf(a, "%s_mul", n->name);
    add->name = arena_printf(a, "%s_add", n->name);
    mul->in[0] = x, mul->in[1] = s, mul->out[0] = m, m->producer = mul;
    add->in[0] = m, add->in[1] = t, add->out[0] = y, y->producer = add, y->producer_out = 0;
    n->dead = true;
    return true;
}

bool plan_bn_lowering(MNCompile *c) {
    int lowered = plan_replace_nodes(c, is_bn, lower);
    mn_figure(c, "batchnorms_lowered", lowered);
    if (lowered) mn_log(c, 0, "BatchNormalization lowering: %d nodes as a scale and a shift per channel", lowered);
    return true;
}

/* Conv1d lowering: a convolution or pool over one spatial axis (N, C, L) as the same op over
 * an image of one row (N, C, 1, L).
 *
 *   X4 = Reshape(X, [N, C, 1, L])
 *   Y4 = Conv(X4, W4, B) | ConvTranspose | MaxPool | AveragePool   (kernel 1 x k, strides 1 x s,
 *        dilations 1 x d, pads 0 / b and 0 / e; W4 the constant W with a unit axis)
 *   Y  = Reshape(Y4, [N, OC, OL])
 *
 * The 2-D forms have the whole machinery (convolutions on tiles with halos, im2col on the
 * matrix unit, pools as stencils); a 1-D one had only the window op, whose index tables
 * outgrow any real size (a Conv1d of 256 channels over 100 steps: no program). Audio
 * models, temporal convolutions and a conformer's convolution module are such nodes. A
 * Reshape that only inserts a unit axis keeps every element where it is. */
#include "plan.h"
#include "ops.h"
#include <string.h>

static bool is_1d(const MNNode *n) {
    bool conv = n->op == OP_Conv || n->op == OP_ConvTranspose;
    if (!conv && n->op != OP_MaxPool && n->op != OP_AveragePool) return false;
    if (n->nin < 1 || n->nout != 1 || !n->in[0] || !n->out[0] || n->in[0]->type.rank != 3 ||
        n->out[0]->type.rank != 3 || n->in[0]->type.elem != ONNX_FLOAT32)
        return false;
    if (conv && (n->nin < 2 || !n->in[1] || !n->in[1]->konst || n->in[1]->type.rank != 3)) return false;
    const MNAttr *dl = ir_attr(n, "dilations"); /* (a dilated pool stays a window op: the 2-D pools take none) */
    if (!conv && dl && dl->type == MN_ATTR_INTS && dl->n == 1 && dl->ints[0] != 1) return false;
    for (int d = 0; d < 3; d++)
        if (n->in[0]->type.dims[d] <= 0 || n->out[0]->type.dims[d] <= 0) return false;
    return true;
}

/* a 1-D list attribute of n as the 2-D one of m: [lead, v] a value, pads [0, b, 0, e]; false
 * where it is not one value (two for pads) */
static bool widen(MNGraph *g, MNNode *m, const MNNode *n, const char *name, int64_t lead) {
    const MNAttr *a = ir_attr(n, name);
    bool pads = !strcmp(name, "pads");
    if (!a) return true; /* (absent: the 2-D default is the same) */
    if (a->type != MN_ATTR_INTS || a->n != (pads ? 2 : 1)) return false;
    int64_t w[4] = {lead, a->ints[0], lead, pads ? a->ints[1] : 0};
    ir_attr_set_ints(g, m, name, w, pads ? 4 : 2);
    return true;
}

static bool lower(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    MNValue *x = n->in[0], *y = n->out[0];
    bool conv = n->op == OP_Conv || n->op == OP_ConvTranspose;
    if (!conv && !ir_attr(n, "kernel_shape")) return false;
    int k = 0;
    int64_t xd[4] = {x->type.dims[0], x->type.dims[1], 1, x->type.dims[2]};
    int64_t yd[4] = {y->type.dims[0], y->type.dims[1], 1, y->type.dims[2]};
    MNValue *x4 = plan_value_new(g, arena_printf(g->arena, "%s_x2d", n->name), x->type.elem, 4, xd);
    plan_op(g, n, "Reshape", x, plan_ints_konst(g, arena_printf(g->arena, "%s_xshape", n->name), 4, xd), x4, 0, &k);
    MNValue *y4 = plan_value_new(g, arena_printf(g->arena, "%s_y2d", n->name), y->type.elem, 4, yd);
    MNNode *m = plan_node_new(g, n->op_type, arena_printf(g->arena, "%s_2d", n->name), n->nin, y4);
    m->nattr = n->nattr; /* every attribute, the spatial ones then widened */
    m->attrs = ARENA_ARRAY(g->arena, MNAttr, n->nattr + 1);
    if (n->nattr) memcpy(m->attrs, n->attrs, sizeof(MNAttr) * (size_t)n->nattr);
    static const char *const lists[] = {"kernel_shape", "strides", "dilations", "output_shape"};
    for (int i = 0; i < 4; i++)
        if (!widen(g, m, n, lists[i], 1)) return false;
    if (!widen(g, m, n, "pads", 0) || !widen(g, m, n, "output_padding", 0)) return false;
    m->in[0] = x4;
    for (int i = 1; i < n->nin; i++) m->in[i] = n->in[i];
    if (conv) { /* the weight with a unit axis: the same numbers */
        const MNValue *w = n->in[1];
        int64_t wd[4] = {w->type.dims[0], w->type.dims[1], 1, w->type.dims[2]};
        MNValue *w4 = plan_value_new(g, arena_printf(g->arena, "%s_w2d", n->name), w->type.elem, 4, wd);
        w4->konst = ir_tensor_new(g->arena, w->konst->elem, 4, wd);
        w4->is_initializer = true;
        for (int64_t i = 0; i < w->konst->numel; i++) ir_tensor_set_f(w4->konst, i, ir_tensor_get_f(w->konst, i));
        m->in[1] = w4;
    }
    int64_t ys[3] = {y->type.dims[0], y->type.dims[1], y->type.dims[2]};
    plan_op(g, n, "Reshape", y4, plan_ints_konst(g, arena_printf(g->arena, "%s_yshape", n->name), 3, ys), y, 0, &k);
    n->dead = true;
    return true;
}

bool plan_conv1d_lowering(MNCompile *c) {
    int lowered = plan_replace_nodes(c, is_1d, lower);
    mn_figure(c, "one_d_convolutions_lowered", lowered);
    return true;
}

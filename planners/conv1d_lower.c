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
#include "dtypes.h"
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
    ir_attr_set_int(g, x4->producer, "unit_view", 1);
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
    ir_attr_set_int(g, y->producer, "unit_view", 1);
    n->dead = true;
    return true;
}

/* ---- the views pushed through: a chain of 1-D convolutions stays an image of one row ----
 *
 * Between two such convolutions a (N, C, L) value would be a sequence (its steps packed) where
 * both convolutions want an image (its channels packed): each view back to (N, C, L) is pushed
 * through the elementwise ops and channel Splits after it (a GLU, a BatchNorm's scale and
 * shift, a SiLU), their constants given the unit axis too, and a view there meets the next
 * convolution's view to (N, C, 1, L): the two cancel. */

/* one of the views made here: (N, C, 1, L) to (N, C, L) (down), or back */
static bool unit_view(const MNNode *n, bool down) {
    return n && n->op == OP_Reshape && ir_attr_int(n, "unit_view", 0) && n->nin >= 1 && n->in[0] && n->nout == 1 &&
           n->out[0] && n->in[0]->type.rank == (down ? 4 : 3) && n->out[0]->type.rank == (down ? 3 : 4);
}

static bool pushable(const MNNode *n) {
    if (n->nout < 1 || !n->out[0] || n->out[0]->type.rank != 3) return false;
    bool split = n->op == OP_Split && ir_attr_int(n, "axis", 0) % 3 == 1;
    if (!split && (!mn_op_has(n->op, MN_EW) || n->nout != 1)) return false;
    int views = 0;
    for (int i = 0; i < n->nin; i++) {
        const MNValue *v = n->in[i];
        if (!v) continue;
        if (unit_view(v->producer, true) && (split || i == 0 || !ir_shape_numel(&v->type) ||
                                             !memcmp(v->type.dims, n->out[0]->type.dims, 3 * sizeof(int64_t))))
            views++;
        else if (split && i == 1 && v->konst) /* (the split sizes) */
            continue;
        else if (!v->konst || v->type.rank > 3 || split)
            return false;
    }
    if (!views) return false;
    for (int i = 0; i < n->nin; i++) /* every view operand the output's shape: no broadcast of one */
        if (n->in[i] && unit_view(n->in[i]->producer, true) && !split &&
            memcmp(n->in[i]->type.dims, n->out[0]->type.dims, 3 * sizeof(int64_t)))
            return false;
    return true;
}

/* a constant of rank 2 or 3 with a unit axis before its last (it broadcasts the same way) */
static MNValue *unit_konst(MNGraph *g, MNValue *v) {
    if (v->type.rank < 2) return v;
    int64_t d[4];
    int r = v->type.rank;
    for (int i = 0; i < r - 1; i++) d[i] = v->type.dims[i];
    d[r - 1] = 1, d[r] = v->type.dims[r - 1];
    MNValue *u = plan_value_new(g, arena_printf(g->arena, "%s_unit", v->name), v->type.elem, r + 1, d);
    u->konst = ir_tensor_new(g->arena, v->konst->elem, r + 1, d);
    u->is_initializer = true;
    memcpy(u->konst->data, v->konst->data, (size_t)v->konst->numel * (size_t)onnx_type_size(v->konst->elem));
    return u;
}

static bool push(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    bool split = n->op == OP_Split;
    MNNode *m = ir_node_new(g, n->op_type, n->nin, n->nout);
    m->name = arena_printf(g->arena, "%s_2d", n->name);
    m->nattr = n->nattr;
    m->attrs = ARENA_ARRAY(g->arena, MNAttr, n->nattr + 1);
    if (n->nattr) memcpy(m->attrs, n->attrs, sizeof(MNAttr) * (size_t)n->nattr);
    if (split) ir_attr_set_int(g, m, "axis", 1);
    for (int i = 0; i < n->nin; i++) {
        MNValue *v = n->in[i];
        m->in[i] = !v ? NULL : unit_view(v->producer, true) ? v->producer->in[0] : split ? v : unit_konst(g, v);
    }
    int k = 0;
    for (int o = 0; o < n->nout; o++) {
        MNValue *y = n->out[o];
        if (!y) continue;
        int64_t d4[4] = {y->type.dims[0], y->type.dims[1], 1, y->type.dims[2]};
        MNValue *y4 = plan_value_new(g, arena_printf(g->arena, "%s_2d%d", y->name, o), y->type.elem, 4, d4);
        m->out[o] = y4;
        y4->producer = m;
        y4->producer_out = o;
        plan_op(g, n, "Reshape", y4,
                plan_ints_konst(g, arena_printf(g->arena, "%s_yshape%d", n->name, o), 3, y->type.dims), y, 0, &k);
        ir_attr_set_int(g, y->producer, "unit_view", 1);
    }
    n->dead = true;
    return true;
}

/* a view back to (N, C, 1, L) of a view down from it: its readers read the image itself */
static bool cancels(const MNNode *n) {
    return unit_view(n, false) && unit_view(n->in[0]->producer, true) &&
           !memcmp(n->in[0]->producer->in[0]->type.dims, n->out[0]->type.dims, 4 * sizeof(int64_t));
}

static bool cancel(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    MNValue *img = n->in[0]->producer->in[0], *y = n->out[0];
    for (int i = 0; i < g->nnodes; i++)
        for (int k = 0; k < g->nodes[i]->nin; k++)
            if (g->nodes[i]->in[k] == y) g->nodes[i]->in[k] = img;
    n->dead = true;
    return true;
}

static bool unread_view(const MNNode *n) { return unit_view(n, true) && !n->out[0]->nuses && !n->out[0]->is_output; }
static bool drop(MNCompile *c, MNNode *n) {
    (void)c;
    n->dead = true;
    return true;
}

bool plan_conv1d_lowering(MNCompile *c) {
    int lowered = plan_replace_nodes(c, is_1d, lower), pushed = 0;
    for (int round = 0; lowered && round < 64; round++) {
        int p = plan_replace_nodes(c, pushable, push);
        int q = plan_replace_nodes(c, cancels, cancel);
        plan_replace_nodes(c, unread_view, drop);
        pushed += p;
        if (!p && !q) break;
    }
    mn_figure(c, "one_d_convolutions_lowered", lowered);
    mn_figure(c, "one_d_views_pushed", pushed);
    return true;
}

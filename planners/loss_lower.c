/* Loss lowering: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (inference of a
 * trained classifier's loss, the ONNX backend's tests) as the ops their ONNX function bodies
 * use:
 *
 *   loss = -GatherElements(lp, target as (N, 1, d...), axis 1) * weight[target]
 *   lp   = input (NLL), or LogSoftmax(scores, axis 1) (SCE, its log_prob output)
 *
 * then summed, averaged (by the weights' sum where there are weights) or left per element.
 * With an ignore_index the targets become a one-hot over the classes instead (one_hot), so
 * that an ignored element drops out of the sums. An SCE over more than two axes at opsets
 * before 13 is refused (LogSoftmax then flattens them). */
#include "plan.h"
#include "ops.h"
#include <string.h>

static bool is_loss(const MNNode *n) {
    return n->op == OP_NegativeLogLikelihoodLoss || n->op == OP_SoftmaxCrossEntropyLoss;
}

static MNNode *make(MNGraph *g, const MNNode *n, const char *op, int nin, MNValue *y, int *k) {
    return plan_node_new(g, op, arena_printf(g->arena, "%s_%s%d", n->name, op, (*k)++), nin, y);
}

static MNValue *like(MNGraph *g, const MNNode *n, int32_t elem, int rank, const int64_t *dims, int *k) {
    return plan_value_new(g, arena_printf(g->arena, "%s_v%d", n->name, (*k)++), elem, rank, dims);
}

/* the loss per element reduced as the node says, into y */
static void reduce(MNGraph *g, MNNode *n, MNValue *loss, MNValue *wt, int *k) {
    MNValue *y = n->out[0];
    const char *red = ir_attr_string(n, "reduction", "mean");
    if (!strcmp(red, "none")) {
        MNNode *s = make(g, n, "Identity", 1, y, k);
        s->in[0] = loss;
        return;
    }
    bool mean = !strcmp(red, "mean");
    MNNode *s = make(g, n, mean && !wt ? "ReduceMean" : "ReduceSum", 1,
                     mean && wt ? like(g, n, loss->type.elem, 0, NULL, k) : y, k);
    s->in[0] = loss;
    ir_attr_set_int(g, s, "keepdims", 0);
    if (mean && wt) { /* by the weights' sum (or the count of the elements not ignored) */
        MNNode *sw = make(g, n, "ReduceSum", 1, like(g, n, loss->type.elem, 0, NULL, k), k);
        sw->in[0] = wt;
        ir_attr_set_int(g, sw, "keepdims", 0);
        MNNode *dv = make(g, n, "Div", 2, y, k);
        dv->in[0] = s->out[0];
        dv->in[1] = sw->out[0];
    }
}

/* With an ignore_index: the targets as a one-hot over the classes (Equal with each class
 * number; the ignored class's number replaced by one no target has, C or C + 1, so its
 * elements match none), the log-probabilities and weights selected by Where and summed over
 * the classes: an ignored element contributes 0 to the loss and to the weights' sum. */
static bool one_hot(MNCompile *c, MNNode *n, MNValue *lp, int *k) {
    MNGraph *g = c->g;
    MNValue *t = n->in[1], *w = n->nin > 2 ? n->in[2] : NULL;
    int r = lp->type.rank;
    int64_t C = lp->type.dims[1], ii = ir_attr_int(n, "ignore_index", 0), dt[MN_MAX_RANK], dc[MN_MAX_RANK];
    for (int d = 0; d < r; d++) dt[d] = d == 1 ? 1 : lp->type.dims[d], dc[d] = d == 1 ? C : 1;
    MNValue *cls = plan_value_new(g, arena_printf(g->arena, "%s_classes", n->name), t->type.elem, r, dc);
    cls->konst = ir_tensor_new(g->arena, t->type.elem, r, dc);
    cls->is_initializer = true;
    for (int64_t j = 0; j < C; j++) ir_tensor_set_i(cls->konst, j, j == ii ? (ii == C ? C + 1 : C) : j);
    MNNode *v = make(g, n, "Reshape", 2, like(g, n, t->type.elem, r, dt, k), k);
    v->in[0] = t;
    v->in[1] = plan_ints_konst(g, arena_printf(g->arena, "%s_shape%d", n->name, (*k)++), r, dt);
    MNNode *eq = make(g, n, "Equal", 2, like(g, n, ONNX_BOOL, r, lp->type.dims, k), k);
    eq->in[0] = v->out[0];
    eq->in[1] = cls;
    MNValue *zero = plan_scalar_konst(g, arena_printf(g->arena, "%s_zero", n->name), lp->type.elem, 0);
    MNValue *one = plan_scalar_konst(g, arena_printf(g->arena, "%s_one", n->name), lp->type.elem, 1);
    /* over the classes: x where the target's class, 0 elsewhere */
    MNValue *sel[2];
    for (int q = 0; q < 2; q++) {
        MNValue *x = q ? (w ? w : one) : lp;
        if (q && w) { /* the weights as (1, C, 1...) */
            MNNode *wv = make(g, n, "Reshape", 2, like(g, n, lp->type.elem, r, dc, k), k);
            wv->in[0] = w;
            wv->in[1] = plan_ints_konst(g, arena_printf(g->arena, "%s_shape%d", n->name, (*k)++), r, dc);
            x = wv->out[0];
        }
        MNNode *wh = make(g, n, "Where", 3, like(g, n, lp->type.elem, r, lp->type.dims, k), k);
        wh->in[0] = eq->out[0];
        wh->in[1] = x;
        wh->in[2] = zero;
        int64_t ax = 1;
        MNNode *sm = make(g, n, "ReduceSum", g->opset >= 13 ? 2 : 1,
                          like(g, n, lp->type.elem, t->type.rank, t->type.dims, k), k);
        sm->in[0] = wh->out[0];
        if (g->opset >= 13)
            sm->in[1] = plan_ints_konst(g, arena_printf(g->arena, "%s_axes%d", n->name, (*k)++), 1, &ax);
        else
            ir_attr_set_ints(g, sm, "axes", &ax, 1);
        ir_attr_set_int(g, sm, "keepdims", 0);
        sel[q] = sm->out[0];
    }
    MNNode *ng = make(g, n, "Neg", 1, like(g, n, lp->type.elem, t->type.rank, t->type.dims, k), k);
    ng->in[0] = sel[0];
    MNValue *loss = ng->out[0];
    if (w) {
        MNNode *m = make(g, n, "Mul", 2, like(g, n, lp->type.elem, t->type.rank, t->type.dims, k), k);
        m->in[0] = loss;
        m->in[1] = sel[1];
        loss = m->out[0];
    }
    reduce(g, n, loss, sel[1], k);
    n->dead = true;
    return true;
}

static bool lower(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    MNValue *x = n->in[0], *t = n->in[1], *w = n->nin > 2 ? n->in[2] : NULL;
    bool sce = n->op == OP_SoftmaxCrossEntropyLoss;
    int r = x->type.rank, k = 0;
    if (sce && r > 2 && g->opset < 13)
        return diag_error(&c->diag, DIAG_UNSUPPORTED,
                          "%s: node '%s' (%s): scores of rank %d at opset %lld (LogSoftmax flattens them)", g->file,
                          n->name, n->op_type, r, (long long)g->opset);
    MNValue *lp = x;
    if (sce) { /* the log-probabilities, the second output where it is read */
        MNValue *o = n->nout > 1 && n->out[1] ? n->out[1] : like(g, n, x->type.elem, r, x->type.dims, &k);
        MNNode *s = make(g, n, "LogSoftmax", 1, o, &k);
        s->in[0] = x;
        ir_attr_set_int(g, s, "axis", 1);
        lp = o;
    }
    if (ir_attr(n, "ignore_index")) return one_hot(c, n, lp, &k);
    int64_t di[MN_MAX_RANK], de[MN_MAX_RANK];
    di[0] = x->type.dims[0], di[1] = 1;
    for (int d = 2; d < r; d++) di[d] = x->type.dims[d];
    for (int d = 0; d < t->type.rank; d++) de[d] = t->type.dims[d];
    MNNode *v = make(g, n, "Reshape", 2, like(g, n, t->type.elem, r, di, &k), &k);
    v->in[0] = t;
    v->in[1] = plan_ints_konst(g, arena_printf(g->arena, "%s_shape%d", n->name, k++), r, di);
    MNNode *ge = make(g, n, "GatherElements", 2, like(g, n, x->type.elem, r, di, &k), &k);
    ge->in[0] = lp;
    ge->in[1] = v->out[0];
    ir_attr_set_int(g, ge, "axis", 1);
    MNNode *sq = make(g, n, "Reshape", 2, like(g, n, x->type.elem, t->type.rank, de, &k), &k);
    sq->in[0] = ge->out[0];
    sq->in[1] = plan_ints_konst(g, arena_printf(g->arena, "%s_shape%d", n->name, k++), t->type.rank, de);
    MNNode *ng = make(g, n, "Neg", 1, like(g, n, x->type.elem, t->type.rank, de, &k), &k);
    ng->in[0] = sq->out[0];
    MNValue *loss = ng->out[0], *wt = NULL;
    if (w) { /* each element's class weight */
        MNNode *gw = make(g, n, "Gather", 2, like(g, n, x->type.elem, t->type.rank, de, &k), &k);
        gw->in[0] = w;
        gw->in[1] = t;
        wt = gw->out[0];
        MNNode *m = make(g, n, "Mul", 2, like(g, n, x->type.elem, t->type.rank, de, &k), &k);
        m->in[0] = loss;
        m->in[1] = wt;
        loss = m->out[0];
    }
    reduce(g, n, loss, wt, &k);
    n->dead = true;
    return true;
}

bool plan_loss_lowering(MNCompile *c) {
    int lowered = plan_replace_nodes(c, is_loss, lower);
    if (diag_failed(&c->diag)) return false;
    mn_figure(c, "losses_lowered", lowered);
    if (lowered) mn_log(c, 0, "loss lowering: %d losses as a gather of the targets' log-probabilities", lowered);
    return true;
}

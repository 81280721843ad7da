/* Loss lowering: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (inference of a
 * trained classifier's loss, the ONNX backend's tests) as the ops their ONNX function bodies
 * use:
 *
 *   loss = -GatherElements(lp, target as (N, 1, d...), axis 1) * weight[target]
 *   lp   = input (NLL), or LogSoftmax(scores, axis 1) (SCE, its log_prob output)
 *
 * then summed, averaged (by the weights' sum where there are weights) or left per element.
 * An ignore_index is refused (a target equal to it must drop out of the sums: a select on
 * integers, which Code Emit has no code for yet), as is an SCE over more than two axes at
 * opsets before 13 (LogSoftmax then flattens them). */
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

static bool lower(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    MNValue *x = n->in[0], *t = n->in[1], *w = n->nin > 2 ? n->in[2] : NULL, *y = n->out[0];
    bool sce = n->op == OP_SoftmaxCrossEntropyLoss;
    const char *red = ir_attr_string(n, "reduction", "mean");
    int r = x->type.rank, k = 0;
    if (ir_attr(n, "ignore_index"))
        return diag_error(&c->diag, DIAG_UNSUPPORTED, "%s: node '%s' (%s): an ignore_index (a select on integers)",
                          g->file, n->name, n->op_type);
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
    bool none = !strcmp(red, "none");
    MNNode *ng = make(g, n, "Neg", 1, none && !w ? y : like(g, n, x->type.elem, t->type.rank, de, &k), &k);
    ng->in[0] = sq->out[0];
    MNValue *loss = ng->out[0], *wt = NULL;
    if (w) { /* each element's class weight */
        MNNode *gw = make(g, n, "Gather", 2, like(g, n, x->type.elem, t->type.rank, de, &k), &k);
        gw->in[0] = w;
        gw->in[1] = t;
        wt = gw->out[0];
        MNNode *m = make(g, n, "Mul", 2, none ? y : like(g, n, x->type.elem, t->type.rank, de, &k), &k);
        m->in[0] = loss;
        m->in[1] = wt;
        loss = m->out[0];
    }
    if (!none) { /* over every axis: no axes given */
        bool mean = !strcmp(red, "mean");
        MNNode *s = make(g, n, mean && !w ? "ReduceMean" : "ReduceSum", 1,
                         mean && w ? like(g, n, x->type.elem, 0, NULL, &k) : y, &k);
        s->in[0] = loss;
        ir_attr_set_int(g, s, "keepdims", 0);
        if (mean && w) { /* the weighted mean: by the weights' sum */
            MNNode *sw = make(g, n, "ReduceSum", 1, like(g, n, x->type.elem, 0, NULL, &k), &k);
            sw->in[0] = wt;
            ir_attr_set_int(g, sw, "keepdims", 0);
            MNNode *dv = make(g, n, "Div", 2, y, &k);
            dv->in[0] = s->out[0];
            dv->in[1] = sw->out[0];
        }
    }
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

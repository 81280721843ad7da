/* No-op lowering: a Pad whose pads are all zero (exporters write one before an
 * AveragePool whose padding they leave to the pool) leaves its input as it is, so it
 * becomes an Identity, an elementwise copy that keeps its input's layout (a DenseNet's
 * transition stays on the convolutions' tiles instead of gathering through the tree). */
#include "plan.h"
#include "ops.h"

static bool is_pad(const MNNode *n) { return n->op == OP_Pad; }

static bool zero_pads(const MNNode *n) {
    const MNAttr *a = ir_attr(n, "pads"); /* before opset 11 */
    if (a) {
        if (a->type != MN_ATTR_INTS) return false;
        for (int i = 0; i < a->n; i++)
            if (a->ints[i]) return false;
        return true;
    }
    if (n->nin < 2 || !n->in[1] || !n->in[1]->konst) return false;
    if (n->nin > 3 && n->in[3]) return false; /* axes: read as they are only when absent */
    for (int64_t i = 0; i < n->in[1]->konst->numel; i++)
        if (ir_tensor_get_f(n->in[1]->konst, i) != 0) return false;
    return true;
}

static bool lower(MNCompile *c, MNNode *n) {
    if (n->nout != 1 || !n->out[0] || !n->in[0] || !zero_pads(n)) return false;
    MNNode *r = ir_node_new(c->g, "Identity", 1, 1);
    r->name = arena_printf(c->g->arena, "%s_none", n->name);
    r->in[0] = n->in[0];
    r->out[0] = n->out[0];
    n->out[0]->producer = r;
    n->out[0]->producer_out = 0;
    n->dead = true;
    return true;
}

bool plan_noop_lowering(MNCompile *c) {
    int lowered = plan_replace_nodes(c, is_pad, lower);
    mn_figure(c, "noops_lowered", lowered);
    if (lowered) mn_log(c, 0, "no-op lowering: %d Pad nodes of zero pads as Identity", lowered);
    return true;
}

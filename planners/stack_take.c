/* Stack takes: a Gather of one entry, by a constant index along axis 0, of a value that is a
 * stack of pieces (a Concat along axis 0 of pieces one entry long, seen through views that
 * keep axis 0 and its length) is that piece itself, reshaped. An unrolled recurrence stacks
 * its steps into Y and the next layer (or the model's y[-1]) takes them apart again step by
 * step: each take then reads its step where it was computed, and the stack, unread, goes
 * away (dce), where a gather of one step out of the whole sequence would broadcast all of
 * it through the tree for every step. */
#include "plan.h"
#include "ops.h"

static bool is_gather(const MNNode *n) { return n->op == OP_Gather; }

static bool keeps_axis0(const MNNode *p) {
    return (mn_op_has(p->op, MN_VIEW) || p->op == OP_Identity) && p->nin >= 1 && p->in[0] && p->out[0] &&
           p->in[0]->type.rank >= 1 && p->out[0]->type.rank >= 1 && p->in[0]->type.dims[0] == p->out[0]->type.dims[0];
}

static bool lower(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    MNValue *x = n->in[0], *ix = n->nin > 1 ? n->in[1] : NULL, *y = n->out[0];
    if (!x || !ix || !y || !ix->konst || ix->konst->numel != 1 || ix->type.rank != 0 || x->type.rank < 1) return false;
    int64_t ax = ir_attr_int(n, "axis", 0);
    if (ax != 0 && ax != -x->type.rank) return false;
    int64_t S = x->type.dims[0], t = ir_tensor_get_i(ix->konst, 0);
    if (t < 0) t += S;
    if (t < 0 || t >= S) return false;
    const MNValue *v = x;
    while (v->producer && keeps_axis0(v->producer)) v = v->producer->in[0];
    const MNNode *cat = v->producer;
    if (!cat || cat->op != OP_Concat || cat->nin != S) return false;
    ax = ir_attr_int(cat, "axis", 0);
    if (ax != 0 && ax != -v->type.rank) return false;
    MNValue *piece = cat->in[t];
    if (!piece || piece->type.rank < 1 || piece->type.dims[0] != 1 ||
        ir_shape_numel(&piece->type) != ir_shape_numel(&y->type))
        return false;
    MNValue *shape = plan_ints_konst(g, arena_printf(g->arena, "%s_shape", n->name), y->type.rank, y->type.dims);
    MNNode *r = plan_node_new(g, "Reshape", arena_printf(g->arena, "%s_step", n->name), 2, y);
    r->in[0] = piece;
    r->in[1] = shape;
    n->dead = true;
    return true;
}

bool plan_stack_takes(MNCompile *c) {
    int taken = plan_replace_nodes(c, is_gather, lower);
    mn_figure(c, "stack_takes", taken);
    if (taken) mn_log(c, 0, "stack takes: %d Gathers of one stacked step read the step itself", taken);
    return true;
}

/* Channel shuffle lowering: ShuffleNet's
 *
 *   Reshape(X (N, C, H, W) -> (N, g, C / g, H, W)), Transpose(perm 0 2 1 3 4), Reshape(-> (N, C, H, W))
 *
 * is one permutation of the channels: Y = Gather(X, idx, axis 1) with idx[j] = (j mod g)
 * (C / g) + j / g. As a Gather along the channels with constant indices it runs where the
 * channels are (a tiled value moves every pixel's channels between the 4 PEs of its MAB,
 * emitter/tile.c) instead of as two reshapes and a transpose of a rank-5 value. The
 * intermediate values must have no other reader. */
#include "plan.h"
#include "ops.h"
#include <string.h>

static bool is_reshape(const MNNode *n) { return n->op == OP_Reshape; }

/* the Transpose and first Reshape before n (the last Reshape), or false */
static bool chain(const MNNode *n, MNNode **tr, MNNode **r0, int64_t *g) {
    const MNValue *y = n->out[0], *t = n->in[0];
    if (!y || !t || y->type.rank != 4 || !t->producer || t->producer->op != OP_Transpose || t->nuses != 1) return false;
    *tr = t->producer;
    const MNAttr *p = ir_attr(*tr, "perm");
    static const int64_t want[5] = {0, 2, 1, 3, 4};
    if (!p || p->type != MN_ATTR_INTS || p->n != 5 || memcmp(p->ints, want, sizeof want)) return false;
    const MNValue *r = (*tr)->in[0];
    if (!r || !r->producer || r->producer->op != OP_Reshape || r->nuses != 1 || r->type.rank != 5) return false;
    *r0 = r->producer;
    const MNValue *x = (*r0)->in[0];
    if (!x || x->type.rank != 4) return false;
    for (int i = 0; i < 4; i++)
        if (x->type.dims[i] != y->type.dims[i]) return false;
    const int64_t *d = r->type.dims;
    *g = d[1];
    return d[0] == x->type.dims[0] && d[1] * d[2] == x->type.dims[1] && d[3] == x->type.dims[2] &&
           d[4] == x->type.dims[3] && *g > 0;
}

static bool lower(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    MNNode *tr, *r0;
    int64_t groups;
    if (n->nout != 1 || !chain(n, &tr, &r0, &groups)) return false;
    MNValue *x = r0->in[0], *y = n->out[0];
    int64_t C = x->type.dims[1], cg = C / groups;
    MNValue *idx = plan_value_new(g, arena_printf(g->arena, "%s_channels", n->name), ONNX_INT64, 1, &C);
    idx->konst = ir_tensor_new(g->arena, ONNX_INT64, 1, &C);
    idx->is_initializer = true;
    for (int64_t j = 0; j < C; j++) ir_tensor_set_i(idx->konst, j, j % groups * cg + j / groups);
    MNNode *ga = ir_node_new(g, "Gather", 2, 1);
    ga->name = arena_printf(g->arena, "%s_shuffle", n->name);
    ga->in[0] = x;
    ga->in[1] = idx;
    ga->out[0] = y;
    ir_attr_set_int(g, ga, "axis", 1);
    y->producer = ga;
    y->producer_out = 0;
    n->dead = tr->dead = r0->dead = true;
    return true;
}

bool plan_shuffle_lowering(MNCompile *c) {
    int lowered = plan_replace_nodes(c, is_reshape, lower);
    mn_figure(c, "channel_shuffles_lowered", lowered);
    if (lowered) mn_log(c, 0, "channel shuffle lowering: %d shuffles as a Gather of the channels", lowered);
    return true;
}

/* Grouped convolutions as ungrouped ones: a Conv of G groups (other than depthwise) with
 * constant weights W (OC, C / G, kh, kw) becomes one of group 1 whose weights are block
 * diagonal: output channel o of group o / (OC / G) reads input channels of its group
 * with W's weights, the others with 0. The product then runs on tiles like any other
 * convolution (tile_plan.c), doing G times the work a grouped one needs, which is what
 * the matrix unit's 8-channel blocks would mostly waste on groups of a few channels
 * anyway (RegNet's groups of 16 and 24 channels). Depthwise convolutions (one channel a
 * group) have their own path; a product over G times the weights beyond 2^24 elements
 * is left as it is, and so is one that would not run on tiles (a small machine's). */
#include "plan.h"
#include "ops.h"
#include <string.h>

static bool grouped(const MNNode *n) { return n->op == OP_Conv && ir_attr_int(n, "group", 1) > 1; }

static bool expand(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    int64_t G = ir_attr_int(n, "group", 1);
    if (n->nin < 2 || !n->in[0] || !n->in[1] || !n->in[1]->konst) return false;
    MNValue *x = n->in[0], *w = n->in[1];
    if (x->type.rank != 4 || w->type.rank != 4 || w->type.elem != ONNX_FLOAT32) return false;
    int64_t C = x->type.dims[1], OC = w->type.dims[0], cg = w->type.dims[1], k2 = w->type.dims[2] * w->type.dims[3];
    if (cg == 1 && G == C) return false; /* depthwise */
    if (C != cg * G || OC % G || OC * C * k2 > ((int64_t)1 << 24)) return false;
    int64_t dims[4] = {OC, C, w->type.dims[2], w->type.dims[3]};
    MNValue *d = plan_value_new(g, arena_printf(g->arena, "%s_dense", w->name), ONNX_FLOAT32, 4, dims);
    d->konst = ir_tensor_new(g->arena, ONNX_FLOAT32, 4, dims);
    d->is_initializer = true;
    memset(d->konst->data, 0, sizeof(float) * (size_t)(OC * C * k2));
    for (int64_t o = 0; o < OC; o++) {
        int64_t c0 = o / (OC / G) * cg;
        for (int64_t ci = 0; ci < cg; ci++)
            for (int64_t t = 0; t < k2; t++)
                ir_tensor_set_f(d->konst, (o * C + c0 + ci) * k2 + t,
                                ir_tensor_get_f(w->konst, (o * cg + ci) * k2 + t));
    }
    n->in[1] = d;
    ir_attr_set_int(g, n, "group", 1);
    MNTile t;
    if (plan_tile(n, &c->machine, &t)) return true;
    n->in[1] = w; /* not on tiles: the window op takes the groups as they are */
    ir_attr_set_int(g, n, "group", G);
    return false;
}

bool plan_group_expand(MNCompile *c) {
    MNGraph *g = c->g;
    int expanded = 0;
    for (int i = 0; i < g->nnodes; i++)
        if (!g->nodes[i]->dead && grouped(g->nodes[i])) expanded += expand(c, g->nodes[i]);
    if (expanded) ir_recount_uses(g);
    mn_figure(c, "grouped_convolutions_expanded", expanded);
    if (expanded) mn_log(c, 0, "group expansion: %d grouped convolutions as ungrouped ones", expanded);
    return true;
}

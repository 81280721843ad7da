/* DepthToSpace lowering: a DepthToSpace that tiles cannot take as it is (CRD mode, as
 * PyTorch exports PixelShuffle, or DCR with output channels not a multiple of 8) becomes
 *
 *   Gather(X, idx, axis 1) -> DepthToSpace(blocksize s, DCR) -> Slice(channels 0 .. C')
 *
 * where idx puts input channel c s^2 + a s + b (CRD; (a s + b) C' + c for DCR) at
 * position (a s + b) C'' + c, C'' = C' rounded up to 8 (the extra positions repeat
 * channel 0 and are sliced off). The Gather moves channels within each pixel and the DCR
 * DepthToSpace copies whole channel blocks onto the pixels of its MAB (tile_plan.c,
 * emitter/tile_chan.c, emitter/tile.c): a super-resolution network's pixel shuffle runs
 * on tiles. Like ConvTranspose lowering (convt_lower.c), only a DepthToSpace whose output
 * no gather holds, on a machine of several L2Bs, is lowered: the gather path handles the
 * others in one node. */
#include "plan.h"
#include "ops.h"
#include <string.h>

static bool is_d2s(const MNNode *n) { return n->op == OP_DepthToSpace; }

void plan_dcr_pixels(MNGraph *g, const char *name, MNValue *z, int64_t s, MNValue *y) {
    int64_t C = y->type.dims[1], Cp = (C + 7) / 8 * 8, dd[4] = {y->type.dims[0], Cp, y->type.dims[2], y->type.dims[3]};
    MNValue *d = Cp == C ? y : plan_value_new(g, arena_printf(g->arena, "%s_blocks", y->name), ONNX_FLOAT32, 4, dd);
    MNNode *ds = plan_node_new(g, "DepthToSpace", arena_printf(g->arena, "%s_pixels", name), 1, d);
    ds->in[0] = z;
    ir_attr_set_int(g, ds, "blocksize", s); /* mode: DCR, the default */
    if (Cp == C) return;
    int64_t zero = 0, axis = 1;
    MNNode *sl = plan_node_new(g, "Slice", arena_printf(g->arena, "%s_channels", name), 4, y);
    sl->in[0] = d;
    sl->in[1] = plan_ints_konst(g, arena_printf(g->arena, "%s_from", name), 1, &zero);
    sl->in[2] = plan_ints_konst(g, arena_printf(g->arena, "%s_to", name), 1, &C);
    sl->in[3] = plan_ints_konst(g, arena_printf(g->arena, "%s_axis", name), 1, &axis);
}

static bool lower(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    MNValue *x = n->in[0], *y = n->out[0];
    if (n->nout != 1 || !x || !y || x->type.rank != 4 || y->type.rank != 4 || x->type.elem != ONNX_FLOAT32)
        return false;
    int64_t s = ir_attr_int(n, "blocksize", 0), C = y->type.dims[1], Cp = (C + 7) / 8 * 8;
    bool crd = !strcmp(ir_attr_string(n, "mode", "DCR"), "CRD");
    if (s < 1 || x->type.dims[1] != s * s * C || (!crd && C == Cp) || c->machine.n_l2b < 2 ||
        plan_gather_fits(g, &c->machine, 4, y->type.dims))
        return false;
    int64_t Z = s * s * Cp, *idx = ARENA_ARRAY(g->arena, int64_t, Z);
    for (int64_t ph = 0; ph < s * s; ph++)
        for (int64_t ch = 0; ch < Cp; ch++) idx[ph * Cp + ch] = ch >= C ? 0 : crd ? ch * s * s + ph : ph * C + ch;
    int64_t gd[4] = {x->type.dims[0], Z, x->type.dims[2], x->type.dims[3]};
    MNValue *gx = plan_value_new(g, arena_printf(g->arena, "%s_phases", x->name), ONNX_FLOAT32, 4, gd);
    MNNode *ga = plan_node_new(g, "Gather", arena_printf(g->arena, "%s_channels", n->name), 2, gx);
    ga->in[0] = x;
    ga->in[1] = plan_ints_konst(g, arena_printf(g->arena, "%s_order", n->name), Z, idx);
    ir_attr_set_int(g, ga, "axis", 1);
    plan_dcr_pixels(g, n->name, gx, s, y);
    n->dead = true;
    return true;
}

bool plan_d2s_lowering(MNCompile *c) {
    int lowered = plan_replace_nodes(c, is_d2s, lower);
    mn_figure(c, "depth_to_space_lowered", lowered);
    if (lowered) mn_log(c, 0, "DepthToSpace lowering: %d as a channel Gather and a DCR DepthToSpace", lowered);
    return true;
}

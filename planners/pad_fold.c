/* Pad folding: an explicit zero Pad of an image's rows and columns before a Conv or an
 * AveragePool (Inception's pooling branches, TensorFlow-style exports) is the node's own
 * padding, so
 *
 *   Y = Conv(Pad(X, pads), ...)          becomes   Y = Conv(X, ..., pads + pads')
 *   Y = AveragePool(Pad(X, pads), ...)   becomes   Y = AveragePool(X, pads + pads',
 *                                                      count_include_pad = 1)
 *
 * (the Pad's zeros were counted by the pool: every window then has kh x kw terms, as a pool
 * counting its padding has). The node then runs on its input's tiles, where the Pad, a
 * move of every pixel to a new place, would cross L2Bs. Left as they are: a Pad of other
 * axes, of a value other than 0, of another mode, read by anything else; a pool that
 * does not count its own padding; auto_pad. */
#include "plan.h"
#include "ops.h"
#include <string.h>

/* the spatial pads of a constant zero Pad of a 4-D value (top, left, bottom, right) */
static bool zero_pad(const MNNode *p, int64_t *pads) {
    if (strcmp(ir_attr_string(p, "mode", "constant"), "constant") || !p->in[0] || p->in[0]->type.rank != 4)
        return false;
    int64_t v[8];
    const MNAttr *a = ir_attr(p, "pads"); /* before opset 11 */
    if (a) {
        if (a->type != MN_ATTR_INTS || a->n != 8 || ir_attr_float(p, "value", 0) != 0) return false;
        memcpy(v, a->ints, sizeof v);
    } else {
        if (p->nin < 2 || !p->in[1] || !p->in[1]->konst || p->in[1]->konst->numel != 8) return false;
        if (p->nin > 3 && p->in[3]) return false; /* axes */
        if (p->nin > 2 && p->in[2] && (!p->in[2]->konst || ir_tensor_get_f(p->in[2]->konst, 0) != 0)) return false;
        for (int i = 0; i < 8; i++) v[i] = (int64_t)ir_tensor_get_f(p->in[1]->konst, i);
    }
    if (v[0] || v[1] || v[4] || v[5]) return false;
    pads[0] = v[2], pads[1] = v[3], pads[2] = v[6], pads[3] = v[7];
    for (int i = 0; i < 4; i++)
        if (pads[i] < 0) return false;
    return true;
}

static bool fold(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    if ((n->op != OP_Conv && n->op != OP_AveragePool) || !n->nin || !n->in[0]) return false;
    MNNode *p = n->in[0]->producer;
    int64_t add[4], pads[4];
    if (!p || p->dead || p->op != OP_Pad || n->in[0]->nuses != 1 || n->in[0]->is_output || !zero_pad(p, add))
        return false;
    if (strcmp(ir_attr_string(n, "auto_pad", "NOTSET"), "NOTSET") || !plan_attr_ints(n, "pads", pads, 4, 0))
        return false;
    if (n->op == OP_AveragePool && !ir_attr_int(n, "count_include_pad", 0) &&
        (pads[0] || pads[1] || pads[2] || pads[3]))
        return false; /* its own padding not counted, the Pad's counted */
    for (int i = 0; i < 4; i++) pads[i] += add[i];
    ir_attr_set_ints(g, n, "pads", pads, 4);
    if (n->op == OP_AveragePool) ir_attr_set_int(g, n, "count_include_pad", 1);
    n->in[0]->producer = NULL; /* the padded image: read by nothing now */
    n->in[0] = p->in[0];
    p->dead = true;
    return true;
}

bool plan_pad_folding(MNCompile *c) {
    MNGraph *g = c->g;
    ir_recount_uses(g);
    int folded = 0;
    for (int i = 0; i < g->nnodes; i++) folded += fold(c, g->nodes[i]);
    int w = 0;
    for (int i = 0; i < g->nnodes; i++)
        if (!g->nodes[i]->dead) {
            g->nodes[i]->index = w;
            g->nodes[w++] = g->nodes[i];
        }
    g->nnodes = w;
    ir_recount_uses(g);
    mn_figure(c, "pads_folded", folded);
    if (folded) mn_log(c, 0, "Pad folding: %d zero Pads as their Conv's or AveragePool's own padding", folded);
    return true;
}

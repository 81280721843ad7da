/* Dilated MaxPool lowering: a 2-D MaxPool whose dilation equals its stride on every axis
 * where either exceeds 1 (PyTorch's MaxPool with stride = dilation, its padding a whole
 * number of strides) reads only the input pixels on a grid of that pitch, and each of its
 * windows is a box of kh x kw grid pixels. So it becomes
 *
 *   MaxPool(kernel 1, strides d)            the grid pixels (a pick from each tile)
 *   MaxPool(kernel (2, 1), dilations (e, 1)) for e = 1, 2, 4, ... then kh - 2^m
 *   MaxPool(kernel (1, 2), dilations (1, e)) the same along the columns
 *
 * A max is separable, and a window of 2^m rows is two of 2^(m-1) rows e = 2^(m-1) apart,
 * so log2(kh) + 1 two-tap pools give the kh-row window; the last one, kh - 2^m apart,
 * joins two overlapping 2^m windows into kh. The first pool of an axis takes its start
 * padding (in grid pixels); each pool reads -inf past the end, so all but the last keep
 * the padded grid's length (on its input's tiles) and the last has the output's.
 * Each pool's halo is at most half its window, so all of them run on tiles (tile_plan.c)
 * where the whole window, a box of up to kh d by kw d input pixels, fits no scratch. */
#include "plan.h"
#include "ops.h"
#include <string.h>

static bool is_maxpool(const MNNode *n) { return n->op == OP_MaxPool; }

/* the chain's next pool, from value x: two taps e apart along axis ax (0: rows), pads pb,
 * pe there; its output of the given dims (y when given) */
static MNValue *two_tap(MNGraph *g, const MNNode *n, MNValue *x, int ax, int64_t e, int64_t pb, int64_t pe,
                        const int64_t *dims, MNValue *y, int *step) {
    MNValue *o = y ? y : plan_value_new(g, arena_printf(g->arena, "%s_box%d", n->name, *step), ONNX_FLOAT32, 4, dims);
    MNNode *p = plan_node_new(g, "MaxPool", arena_printf(g->arena, "%s_box%d", n->name, (*step)++), 1, o);
    p->in[0] = x;
    int64_t ks[2] = {1, 1}, ds[2] = {1, 1}, pads[4] = {0, 0, 0, 0};
    ks[ax] = 2, ds[ax] = e, pads[ax] = pb, pads[2 + ax] = pe;
    ir_attr_set_ints(g, p, "kernel_shape", ks, 2);
    ir_attr_set_ints(g, p, "dilations", ds, 2);
    ir_attr_set_ints(g, p, "pads", pads, 4);
    return o;
}

static bool lower(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    MNValue *x = n->in[0], *y = n->out[0];
    if (!x || !y || (n->nout > 1 && n->out[1] && n->out[1]->nuses) || x->type.rank != 4 || y->type.rank != 4 ||
        x->type.elem != ONNX_FLOAT32 || strcmp(ir_attr_string(n, "auto_pad", "NOTSET"), "NOTSET"))
        return false;
    int64_t k[2], s[2], d[2], pads[4];
    if (!plan_attr_ints(n, "kernel_shape", k, 2, 0) || !plan_attr_ints(n, "strides", s, 2, 1) ||
        !plan_attr_ints(n, "dilations", d, 2, 1) || !plan_attr_ints(n, "pads", pads, 4, 0))
        return false;
    bool dilated = false;
    int64_t gd[4] = {x->type.dims[0], x->type.dims[1], 0, 0}, pb[2];
    for (int a = 0; a < 2; a++) {
        int64_t H = x->type.dims[2 + a], OH = y->type.dims[2 + a];
        if (k[a] < 1 || s[a] != d[a] || pads[a] < 0 || pads[a] % d[a]) return false;
        dilated |= d[a] > 1;
        gd[2 + a] = (H + d[a] - 1) / d[a]; /* the grid's pixels */
        pb[a] = pads[a] / d[a];
        int64_t pe = OH - 1 + k[a] - gd[2 + a] - pb[a]; /* the end padding that gives OH */
        if (pe < 0 || (k[a] == 1 && (pb[a] || pe))) return false;
    }
    if (!dilated) return false;
    int step = 0; /* the grid (some axis is dilated) */
    MNValue *cur =
        k[0] == 1 && k[1] == 1 ? y : plan_value_new(g, arena_printf(g->arena, "%s_grid", n->name), ONNX_FLOAT32, 4, gd);
    MNNode *p = plan_node_new(g, "MaxPool", arena_printf(g->arena, "%s_grid", n->name), 1, cur);
    p->in[0] = x;
    int64_t one[2] = {1, 1};
    ir_attr_set_ints(g, p, "kernel_shape", one, 2);
    ir_attr_set_ints(g, p, "strides", d, 2);
    int64_t dims[4] = {gd[0], gd[1], gd[2], gd[3]};
    for (int a = 0; a < 2; a++) {
        if (k[a] == 1) continue;
        int64_t ts[64], nt = 0, later = 0; /* the taps' distances: 1, 2, 4, ..., then k - 2^m */
        for (int64_t w = 1; w < k[a]; w += ts[nt++]) later += ts[nt] = 2 * w <= k[a] ? w : k[a] - w;
        /* pool j's output: what the pools after it read (the output plus their distances),
         * but no longer than the padded grid (past it a window reads nothing) */
        int64_t lp = dims[2 + a] + pb[a], in = dims[2 + a];
        for (int64_t j = 0; j < nt; j++) {
            later -= ts[j];
            int64_t need = y->type.dims[2 + a] + later, out = need < lp ? need : lp;
            int64_t from = j ? in : in + pb[a]; /* the input's length, with the start padding */
            dims[2 + a] = out;
            bool last = j == nt - 1 && (a == 1 || k[1] == 1);
            cur = two_tap(g, n, cur, a, ts[j], j ? 0 : pb[a], out - from + ts[j], dims, last ? y : NULL, &step);
            in = out;
        }
    }
    n->dead = true;
    return true;
}

bool plan_pool_lowering(MNCompile *c) {
    int lowered = plan_replace_nodes(c, is_maxpool, lower);
    mn_figure(c, "dilated_pools_lowered", lowered);
    if (lowered)
        mn_log(c, 0, "dilated pool lowering: %d MaxPools of dilation = stride as a pick and chains of 2-tap pools",
               lowered);
    return true;
}

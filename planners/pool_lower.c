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

static bool lower_1d(MNCompile *c, MNNode *n);

static bool lower(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    MNValue *x = n->in[0], *y = n->out[0];
    if (!x || !y || (n->nout > 1 && n->out[1] && n->out[1]->nuses) || x->type.rank != y->type.rank ||
        x->type.elem != ONNX_FLOAT32 || strcmp(ir_attr_string(n, "auto_pad", "NOTSET"), "NOTSET"))
        return false;
    if (x->type.rank == 3) return lower_1d(c, n);
    if (x->type.rank != 4) return false;
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

/* A 1-D MaxPool (N, C, L) of dilation = stride d reads the samples on a grid of pitch d:
 * seen as rows of d samples, (N, C, L / d, d) (a Reshape, free in DRAM), they are the first
 * column, so it is the 2-D pool of kernel (k, 1) and dilation = stride (1, d) over that
 * image, lowered as above, its (N, C, OL, 1) output reshaped back. The signal then lies on
 * tiles by rows, one row of d samples per tile line (a 220000-sample signal is 22000 rows;
 * as one image row it would not fit a tile). */
static bool lower_1d(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    MNValue *x = n->in[0], *y = n->out[0];
    int64_t k, s, d, pads[2];
    if (!plan_attr_ints(n, "kernel_shape", &k, 1, 0) || !plan_attr_ints(n, "strides", &s, 1, 1) ||
        !plan_attr_ints(n, "dilations", &d, 1, 1) || !plan_attr_ints(n, "pads", pads, 2, 0))
        return false;
    int64_t L = x->type.dims[2], OL = y->type.dims[2];
    if (k < 1 || s != d || d < 2 || L % d || pads[0] < 0 || pads[0] % d) return false;
    int64_t pb = pads[0] / d, pe = OL - 1 + k - L / d - pb; /* in grid rows; pe gives OL */
    if (pe < 0 || (k == 1 && (pb || pe))) return false;
    int64_t xd[4] = {x->type.dims[0], x->type.dims[1], L / d, d}, yd[4] = {y->type.dims[0], y->type.dims[1], OL, 1};
    MNValue *x4 = plan_value_new(g, arena_printf(g->arena, "%s_rows", n->name), ONNX_FLOAT32, 4, xd);
    MNValue *y4 = plan_value_new(g, arena_printf(g->arena, "%s_out_rows", n->name), ONNX_FLOAT32, 4, yd);
    MNNode *r = plan_node_new(g, "Reshape", arena_printf(g->arena, "%s_rows", n->name), 2, x4);
    r->in[0] = x, r->in[1] = plan_ints_konst(g, arena_printf(g->arena, "%s_rows_shape", n->name), 4, xd);
    MNNode *p = plan_node_new(g, "MaxPool", arena_printf(g->arena, "%s_2d", n->name), 1, y4);
    p->in[0] = x4;
    int64_t ks[2] = {k, 1}, ds[2] = {1, d}, pp[4] = {pb, 0, pe, 0};
    ir_attr_set_ints(g, p, "kernel_shape", ks, 2);
    ir_attr_set_ints(g, p, "strides", ds, 2);
    ir_attr_set_ints(g, p, "dilations", ds, 2);
    ir_attr_set_ints(g, p, "pads", pp, 4);
    if (!lower(c, p)) die("a 1-D pool's 2-D form was not lowered");
    MNNode *b = plan_node_new(g, "Reshape", arena_printf(g->arena, "%s_back", n->name), 2, y);
    b->in[0] = y4, b->in[1] = plan_ints_konst(g, arena_printf(g->arena, "%s_back_shape", n->name), 3, y->type.dims);
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

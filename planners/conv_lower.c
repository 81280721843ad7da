/* Conv lowering (conv_lowering=im2col): a 2-D convolution as a product on the matrix
 * unit.
 *
 * Y = Conv(X, W, B) becomes
 *   Xc = MNCoreIm2col(X)              [N*OH*OW, C*KH*KW]: row (n, oh, ow) holds the
 *                                     window of X that output position reads, 0 in the
 *                                     padding (a gather: emitter/emit.c)
 *   Yc = Gemm(Xc, Wc, B, transB=1)    [N*OH*OW, OC]: Wc is W as [OC, C*KH*KW]
 *                                     (MatMul with Wc as [C*KH*KW, OC] without a bias)
 *   Y  = Transpose(Reshape(Yc, [N, OH, OW, OC]), perm [0, 3, 1, 2])
 * The window op (window.c) computes every output from index tables with two entries per
 * tap (the input element and the weight): OC*OH*OW*2K entries for K taps, which the
 * machine loads from DRAM and which then dominate its time. The gather needs one entry
 * per element of Xc (OH*OW*K) and the product runs on the MAB matrix unit, which takes
 * K packed in long words: K must be a multiple of 8 (emitter/matmul.c), so Xc and Wc get
 * zero columns up to one. Only ungrouped
 * float 2-D convolutions with constant weights are lowered, and only when Xc and Wc fit
 * comfortably (a quarter of LM per PE, spread over the machine; Wc replicated on every
 * MAB) and Yc and its NHWC reshape are small enough to be gathered within an L2B
 * (plan_gather_fits): a lowering that could not be placed or emitted would lose a model the
 * window op compiles. That check is made on canonical layouts, an estimate of what the
 * layout planner chooses.
 * It is the default; conv_lowering=window leaves every Conv a window op. A convolution
 * that can run on tiles (tile_plan.c: the matrix unit with halos, no gathers, any image
 * size) is not lowered. */
#include "plan.h"
#include "layout.h"
#include "ops.h"
#include <stdlib.h>
#include <string.h>

bool plan_attr_ints(const MNNode *n, const char *name, int64_t *v, int cnt, int64_t dflt) {
    const MNAttr *a = ir_attr(n, name);
    for (int i = 0; i < cnt; i++) v[i] = dflt;
    if (!a) return true;
    if (a->type != MN_ATTR_INTS || a->n != cnt) return false;
    for (int i = 0; i < cnt; i++) v[i] = a->ints[i];
    return true;
}

static MNAttr ints_attr(Arena *a, const char *name, const int64_t *v, int cnt) {
    int64_t *p = ARENA_ARRAY(a, int64_t, cnt);
    memcpy(p, v, sizeof(int64_t) * (size_t)cnt);
    return (MNAttr){.name = name, .type = MN_ATTR_INTS, .n = cnt, .ints = p};
}

MNValue *plan_value_new(MNGraph *g, const char *name, int32_t elem, int rank, const int64_t *dims) {
    MNValue *v = ir_value_new(g, name);
    ir_type_set(g, &v->type, elem, rank, dims);
    return v;
}

MNValue *plan_ints_konst(MNGraph *g, const char *name, int64_t n, const int64_t *v) {
    MNValue *x = plan_value_new(g, name, ONNX_INT64, 1, &n);
    x->konst = ir_tensor_new(g->arena, ONNX_INT64, 1, &n);
    x->is_initializer = true;
    for (int64_t i = 0; i < n; i++) ir_tensor_set_i(x->konst, i, v[i]);
    return x;
}

MNValue *plan_scalar_konst(MNGraph *g, const char *name, int32_t elem, double v) {
    MNValue *s = plan_value_new(g, name, elem, 0, NULL);
    s->konst = ir_tensor_new(g->arena, elem, 0, NULL);
    ir_tensor_set_f(s->konst, 0, v);
    s->is_initializer = true;
    return s;
}

MNNode *plan_node_new(MNGraph *g, const char *op, const char *name, int nin, MNValue *out) {
    MNNode *r = ir_node_new(g, op, nin, 1);
    r->name = name;
    r->out[0] = out;
    out->producer = r;
    out->producer_out = 0;
    return r;
}

MNValue *plan_op(MNGraph *g, const MNNode *n, const char *op, MNValue *a, MNValue *b, MNValue *y, int32_t elem,
                 int *k) {
    if (!y) { /* the broadcast of a's and b's shapes */
        int r = a->type.rank > (b ? b->type.rank : 0) ? a->type.rank : b->type.rank;
        int64_t dims[MN_MAX_RANK];
        for (int d = 0; d < r; d++) {
            int da = d - (r - a->type.rank), db = b ? d - (r - b->type.rank) : -1;
            int64_t x = da >= 0 ? a->type.dims[da] : 1, z = db >= 0 ? b->type.dims[db] : 1;
            dims[d] = x == 1 ? z : x;
        }
        y = plan_value_new(g, arena_printf(g->arena, "%s_v%d", n->name, (*k)++), elem ? elem : a->type.elem, r, dims);
    }
    MNNode *m = plan_node_new(g, op, arena_printf(g->arena, "%s_%s%d", n->name, op, (*k)++), b ? 2 : 1, y);
    m->in[0] = a;
    if (b) m->in[1] = b;
    return y;
}

/* Would a float value of these dims, laid out canonically, be read by a gather: on one
 * L2B (or alike on all; data does not cross L2Bs), the long words of every PE of the
 * L1Bs it spans in half of LM0 (the gather's scratch)? The lowering's Reshape and
 * Transpose read Yc and its NHWC form so (Xc is read by the product alone, on the matrix
 * unit); a lowering whose pieces the emitter could not take would lose a model. */
bool plan_gather_fits(MNGraph *g, const MNMachine *m, int rank, const int64_t *dims) {
    MNType t = {0};
    ir_type_set(g, &t, ONNX_FLOAT32, rank, dims);
    MNLayout l;
    if (!plan_layout_canonical(&t, MN_DT_Float, m, &l)) return false;
    bool one_l2b = layout_extent(&l, LV_L2B) == 1 || (l.bcast & (1u << LV_L2B));
    int64_t P = (int64_t)m->mab_per_l1b * m->pe_per_mab, lw = (layout_num_lw(&l, m->address_alignment_lw) + 3) / 4 * 4;
    int64_t J = l.bcast & (1u << LV_L1B)
                    ? 1
                    : layout_extent(&l, LV_L1B); /* spread over L1Bs: every L1B's words through the L2BM */
    return one_l2b && J * P * lw <= m->lm0_lw / 2;
}

/* the nodes replacing conv n (appended to the graph), or false when it stays a window op */
static bool lower(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    if (n->nin < 2 || n->nout != 1 || !n->out[0]) return false;
    MNTile tl;
    if (plan_tile(n, &c->machine, &tl)) return false; /* on tiles instead (tile_plan.c): no gathers */
    MNValue *x = n->in[0], *w = n->in[1], *b = n->nin > 2 ? n->in[2] : NULL, *y = n->out[0];
    if (x->type.rank != 4 || x->type.elem != ONNX_FLOAT32 || !w->konst || w->konst->elem != ONNX_FLOAT32 ||
        w->type.rank != 4)
        return false;
    if (b && (!b->konst || b->type.rank != 1)) return false;
    if (ir_attr_int(n, "group", 1) != 1 || strcmp(ir_attr_string(n, "auto_pad", "NOTSET"), "NOTSET")) return false;
    int64_t ks[2] = {w->type.dims[2], w->type.dims[3]}, st[2], dl[2], pd[4];
    if (!plan_attr_ints(n, "strides", st, 2, 1) || !plan_attr_ints(n, "dilations", dl, 2, 1) ||
        !plan_attr_ints(n, "pads", pd, 4, 0))
        return false;
    const MNAttr *ka = ir_attr(n, "kernel_shape");
    if (ka && (ka->type != MN_ATTR_INTS || ka->n != 2 || ka->ints[0] != ks[0] || ka->ints[1] != ks[1])) return false;
    int64_t N = x->type.dims[0], C = x->type.dims[1], OC = w->type.dims[0], K0 = C * ks[0] * ks[1],
            K = (K0 + 7) / 8 * 8;
    if (w->type.dims[1] != C || y->type.rank != 4 || y->type.dims[0] != N || y->type.dims[1] != OC) return false;
    int64_t OH = y->type.dims[2], OW = y->type.dims[3], rows = N * OH * OW;
    const MNMachine *m = &c->machine;
    int64_t lm = machine_lm_cap(m) / 4;
    if ((rows * K / 2 + m->n_pe - 1) / m->n_pe > lm || (rows * OC / 2 + m->n_pe - 1) / m->n_pe > lm ||
        OC * (K / 8) > lm)
        return false;
    Arena *a = g->arena;
    const char *base = n->name;
    int64_t dxc[2] = {rows, K}, dwc[2] = {OC, K}, dyc[2] = {rows, OC}, dy4[4] = {N, OH, OW, OC}, dsh[1] = {4};
    if (!plan_gather_fits(g, m, 2, dyc) || !plan_gather_fits(g, m, 4, dy4)) return false;
    MNValue *xc = plan_value_new(g, arena_printf(a, "%s_im2col", base), ONNX_FLOAT32, 2, dxc);
    MNNode *im = ir_node_new(g, "MNCoreIm2col", 1, 1);
    im->name = arena_printf(a, "%s_im2col", base);
    im->domain = "mncore";
    im->in[0] = x;
    im->out[0] = xc;
    int64_t oshape[3] = {N, OH, OW};
    im->nattr = 5;
    im->attrs = ARENA_ARRAY(a, MNAttr, 5);
    im->attrs[0] = ints_attr(a, "kernel_shape", ks, 2);
    im->attrs[1] = ints_attr(a, "strides", st, 2);
    im->attrs[2] = ints_attr(a, "dilations", dl, 2);
    im->attrs[3] = ints_attr(a, "pads", pd, 4);
    im->attrs[4] = ints_attr(a, "out_shape", oshape, 3);
    /* with a bias: Gemm(Xc, Wc [OC, K], B, transB); without: MatMul(Xc, Wc [K, OC]) (a
     * Gemm without C needs opset 11). Row o of W as (C, KH, KW) row-major, zeros up to K. */
    int64_t dwk[2] = {K, OC};
    MNValue *wc = plan_value_new(g, arena_printf(a, "%s_kxn", w->name), ONNX_FLOAT32, 2, b ? dwc : dwk);
    wc->konst = ir_tensor_new(a, ONNX_FLOAT32, 2, b ? dwc : dwk);
    float *wd = wc->konst->data;
    const float *ws = w->konst->data;
    memset(wd, 0, sizeof(float) * (size_t)(OC * K));
    for (int64_t o = 0; o < OC; o++)
        for (int64_t k = 0; k < K0; k++) wd[b ? o * K + k : k * OC + o] = ws[o * K0 + k];
    MNValue *yc = plan_value_new(g, arena_printf(a, "%s_rows", base), ONNX_FLOAT32, 2, dyc);
    MNNode *mm = ir_node_new(g, b ? "Gemm" : "MatMul", b ? 3 : 2, 1);
    mm->name = arena_printf(a, "%s_%s", base, b ? "gemm" : "matmul");
    mm->in[0] = xc;
    mm->in[1] = wc;
    mm->out[0] = yc;
    if (b) {
        mm->in[2] = b;
        mm->nattr = 1;
        mm->attrs = ARENA_ARRAY(a, MNAttr, 1);
        mm->attrs[0] = (MNAttr){.name = "transB", .type = MN_ATTR_INT, .i = 1};
    }
    MNValue *shp = plan_value_new(g, arena_printf(a, "%s_nhwc_shape", base), ONNX_INT64, 1, dsh);
    shp->konst = ir_tensor_new(a, ONNX_INT64, 1, dsh);
    memcpy((void *)shp->konst->data, dy4, sizeof dy4);
    MNValue *y4 = plan_value_new(g, arena_printf(a, "%s_nhwc", base), ONNX_FLOAT32, 4, dy4);
    MNNode *rs = ir_node_new(g, "Reshape", 2, 1);
    rs->name = arena_printf(a, "%s_nhwc", base);
    rs->in[0] = yc;
    rs->in[1] = shp;
    rs->out[0] = y4;
    MNNode *tr = ir_node_new(g, "Transpose", 1, 1);
    tr->name = arena_printf(a, "%s_nchw", base);
    int64_t perm[4] = {0, 3, 1, 2};
    tr->nattr = 1;
    tr->attrs = ARENA_ARRAY(a, MNAttr, 1);
    tr->attrs[0] = ints_attr(a, "perm", perm, 4);
    tr->in[0] = y4;
    tr->out[0] = y;
    MNNode *made[4] = {im, mm, rs, tr};
    MNValue *outs[4] = {xc, yc, y4, y};
    for (int k = 0; k < 4; k++) {
        outs[k]->producer = made[k];
        outs[k]->producer_out = 0;
    }
    n->dead = true;
    return true;
}

/* Every node lower() replaces (it appends the replacements to the graph and marks the
 * node dead) gets them where it stood in the order; the count of nodes replaced. */
int plan_replace_nodes(MNCompile *c, bool (*take)(const MNNode *n), bool (*lower)(MNCompile *c, MNNode *n)) {
    MNGraph *g = c->g;
    int nn = g->nnodes, done = 0, w = 0, cap = nn + 64;
    MNNode **order = xmalloc(sizeof(MNNode *) * (size_t)cap);
    for (int i = 0; i < nn; i++) {
        MNNode *n = g->nodes[i];
        int before = g->nnodes, lo = 0, hi = 1; /* n itself, or its replacements */
        MNNode **from = &n;
        if (take(n) && !n->dead && lower(c, n)) {
            from = g->nodes;
            lo = before;
            hi = g->nnodes;
            done++;
        }
        for (int k = lo; k < hi; k++) {
            if (w == cap) order = xrealloc(order, sizeof(MNNode *) * (size_t)(cap *= 2));
            order[w++] = from[k];
        }
    }
    g->nnodes = 0;
    for (int i = 0; i < w; i++)
        if (!order[i]->dead) {
            order[i]->index = g->nnodes;
            g->nodes[g->nnodes++] = order[i];
        }
    free(order);
    ir_recount_uses(g);
    return done;
}

static bool is_conv(const MNNode *n) { return n->op == OP_Conv; }

bool plan_conv_lowering(MNCompile *c) {
    if (c->opt->ival[MN_OPT_conv_lowering] != MN_CONV_IM2COL) return true;
    int lowered = plan_replace_nodes(c, is_conv, lower);
    mn_figure(c, "convs_lowered", lowered);
    if (lowered)
        mn_log(c, 0, "conv lowering: %d Conv nodes as an im2col gather, a Gemm on the matrix unit and a transpose",
               lowered);
    return true;
}

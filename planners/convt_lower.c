/* ConvTranspose lowering: a transposed convolution of stride s as a convolution that
 * computes all s x s output phases of every input pixel at once, and a DepthToSpace that
 * puts each phase's channels on its output pixels (the sub-pixel form):
 *
 *   Y[s q + a] = sum over m of X[q + o(a) - m] W[r(a) + s m],   a + pad = s o(a) + r(a),
 *
 * along each spatial axis, so phase a reads input rows q + d for d = o(a) - m: one Conv of
 * stride 1 whose kernel spans every phase's offsets (weights 0 where a phase has no tap),
 * output channels (a s + b) OC' + oc, then DepthToSpace(s, DCR), whose output pixel
 * (s q + a, s r + b) takes those channels of pixel (q, r). Both run on tiles (tile_plan.c:
 * the Conv on the matrix unit with halos; the DepthToSpace a copy within each MAB), so a
 * decoder's upsampling needs no gather. OC' is OC rounded up to 8 (whole channel blocks
 * for the DepthToSpace), the extra channels sliced off after it.
 *
 * The Conv does (kernel span / k)^2 s^2 times the transposed convolution's products
 * (2.25 for kernel 4, stride 2); the window op (emitter/window.c) does them exactly but
 * gathers its whole input into every L1B, so only a ConvTranspose whose output a gather
 * cannot hold (plan_gather_fits) on a machine of several L2Bs (a gather stays within one;
 * on one L2B Time-Slice cuts the window op instead) is lowered, when the Conv runs on
 * tiles: group 1, dilation 1, one stride s >= 2 on both axes, explicit pads, constant
 * weights, an output of whole s x s blocks. */
#include "plan.h"
#include "ops.h"
#include <string.h>

static bool is_convt(const MNNode *n) { return n->op == OP_ConvTranspose; }

/* one axis: the offsets d of phase a's taps span lo .. hi; false when a phase would read
 * before the padded input */
static void span(int64_t k, int64_t s, int64_t pad, int64_t *lo, int64_t *hi) {
    *lo = INT64_MAX, *hi = INT64_MIN;
    for (int64_t a = 0; a < s; a++)
        for (int64_t m = 0; (a + pad) % s + s * m < k; m++) {
            int64_t d = (a + pad) / s - m;
            if (d < *lo) *lo = d;
            if (d > *hi) *hi = d;
        }
}

/* the tap of W along an axis for phase a and offset d, or -1 */
static int64_t tap(int64_t k, int64_t s, int64_t pad, int64_t a, int64_t d) {
    int64_t m = (a + pad) / s - d, t = (a + pad) % s + s * m;
    return m >= 0 && t < k ? t : -1;
}

static MNValue *konst_f(MNGraph *g, const char *name, int rank, const int64_t *dims) {
    MNValue *v = plan_value_new(g, name, ONNX_FLOAT32, rank, dims);
    v->konst = ir_tensor_new(g->arena, ONNX_FLOAT32, rank, dims);
    v->is_initializer = true;
    memset(v->konst->data, 0, sizeof(float) * (size_t)v->konst->numel);
    return v;
}

static bool lower(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    if (n->nin < 2 || n->nout != 1 || !n->in[0] || !n->in[1] || !n->out[0] || !n->in[1]->konst) return false;
    MNValue *x = n->in[0], *w = n->in[1], *y = n->out[0], *b = n->nin > 2 ? n->in[2] : NULL;
    if (x->type.rank != 4 || w->type.rank != 4 || y->type.rank != 4 || w->type.elem != ONNX_FLOAT32 ||
        x->type.elem != ONNX_FLOAT32 || (b && (!b->konst || b->type.rank != 1)))
        return false;
    int64_t st[2], dl[2], pads[4];
    if (ir_attr_int(n, "group", 1) != 1 || strcmp(ir_attr_string(n, "auto_pad", "NOTSET"), "NOTSET") ||
        !plan_attr_ints(n, "strides", st, 2, 1) || !plan_attr_ints(n, "dilations", dl, 2, 1) ||
        !plan_attr_ints(n, "pads", pads, 4, 0))
        return false;
    int64_t s = st[0], C = x->type.dims[1], OC = w->type.dims[1], kd[2] = {w->type.dims[2], w->type.dims[3]};
    const int64_t *yd = y->type.dims;
    if (s < 2 || st[1] != s || dl[0] != 1 || dl[1] != 1 || w->type.dims[0] != C || yd[1] != OC || yd[2] % s ||
        yd[3] % s || c->machine.n_l2b < 2 || plan_gather_fits(g, &c->machine, 4, yd))
        return false;
    int64_t lo[2], hi[2], kk[2], pb[2], pe[2];
    for (int i = 0; i < 2; i++) {
        span(kd[i], s, pads[i], &lo[i], &hi[i]);
        kk[i] = hi[i] - lo[i] + 1, pb[i] = -lo[i];
        pe[i] = yd[2 + i] / s - x->type.dims[2 + i] - pb[i] + kk[i] - 1;
        if (lo[i] > hi[i] || pb[i] < 0 || pe[i] < 0) return false;
    }
    int64_t OCp = (OC + 7) / 8 * 8, Z = s * s * OCp;
    if (Z * C * kk[0] * kk[1] > ((int64_t)1 << 24)) return false;
    /* the convolution of every phase: output channel (a s + b) OCp + oc */
    int64_t wd[4] = {Z, C, kk[0], kk[1]}, zd[4] = {yd[0], Z, yd[2] / s, yd[3] / s};
    MNValue *wz = konst_f(g, arena_printf(g->arena, "%s_phases", w->name), 4, wd);
    MNValue *bz = konst_f(g, arena_printf(g->arena, "%s_phase_bias", n->name), 1, &Z);
    for (int64_t a = 0; a < s; a++)
        for (int64_t bb = 0; bb < s; bb++)
            for (int64_t oc = 0; oc < OC; oc++) {
                int64_t z = (a * s + bb) * OCp + oc;
                if (b) ir_tensor_set_f(bz->konst, z, ir_tensor_get_f(b->konst, oc));
                for (int64_t i = 0; i < kk[0]; i++)
                    for (int64_t j = 0; j < kk[1]; j++) {
                        int64_t ty = tap(kd[0], s, pads[0], a, i + lo[0]), tx = tap(kd[1], s, pads[1], bb, j + lo[1]);
                        if (ty < 0 || tx < 0) continue;
                        for (int64_t ci = 0; ci < C; ci++)
                            ir_tensor_set_f(wz->konst, ((z * C + ci) * kk[0] + i) * kk[1] + j,
                                            ir_tensor_get_f(w->konst, ((ci * OC + oc) * kd[0] + ty) * kd[1] + tx));
                    }
            }
    MNValue *z = plan_value_new(g, arena_printf(g->arena, "%s_phased", y->name), ONNX_FLOAT32, 4, zd);
    MNValue *cin[3] = {x, wz, bz}, *cout[1] = {z};
    MNNode cv = {.name = n->name, .op = OP_Conv, .op_type = "Conv", .nin = 3, .nout = 1, .in = cin, .out = cout};
    int64_t cpads[4] = {pb[0], pb[1], pe[0], pe[1]};
    ir_attr_set_ints(g, &cv, "kernel_shape", kk, 2);
    ir_attr_set_ints(g, &cv, "pads", cpads, 4);
    MNTile t;
    if (!plan_tile(&cv, &c->machine, &t)) return false; /* (the new values, unused, are dropped) */
    MNNode *conv = plan_node_new(g, "Conv", arena_printf(g->arena, "%s_phases", n->name), 3, z);
    conv->in[0] = x, conv->in[1] = wz, conv->in[2] = bz;
    conv->attrs = cv.attrs, conv->nattr = cv.nattr;
    plan_dcr_pixels(g, n->name, z, s, y); /* each phase's channels onto its pixels */
    n->dead = true;
    return true;
}

bool plan_convt_lowering(MNCompile *c) {
    int lowered = plan_replace_nodes(c, is_convt, lower);
    mn_figure(c, "transposed_convolutions_lowered", lowered);
    if (lowered) mn_log(c, 0, "ConvTranspose lowering: %d as a convolution of every phase and a DepthToSpace", lowered);
    return true;
}

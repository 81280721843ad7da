/* Resize and Upsample's terms (window.c and the tiles fold them): each output element is a
 * weighted sum of input elements whose positions and weights are known at compile time.
 *
 * Along each axis an output coordinate maps to an input coordinate x by the coordinate
 * transformation mode (half_pixel, pytorch_half_pixel, align_corners, asymmetric,
 * tf_half_pixel_for_nn, tf_crop_and_resize), and x to its neighbours and weights as
 * ONNX's reference does: f = ceil(x) - 1 and r = x - f in (0, 1]; linear takes f, f + 1
 * with 1 - r, r; cubic f - 1 .. f + 2 with the cubic coefficients of A (exclude_outside
 * zeroes those off the input and renormalises); nearest takes f or f + 1 as nearest_mode
 * rounds r. Neighbours past the edge read the edge. An axis whose every coordinate lands
 * on an input element takes one term, the others 1 (nearest), 2 or 4; an element's terms
 * are every combination over the axes, its weight their product. Under
 * tf_crop_and_resize a coordinate outside the input gives extrapolation_value.
 * Upsample (opset 9) and Resize of opset 10 are asymmetric, nearest rounding down. */
#include "resize.h"
#include "ops.h"
#include <math.h>
#include <string.h>

enum { NM_ROUND_PREFER_FLOOR, NM_ROUND_PREFER_CEIL, NM_FLOOR, NM_CEIL };
enum { MODE_NEAREST = RESIZE_NEAREST, MODE_LINEAR = RESIZE_LINEAR, MODE_CUBIC = RESIZE_CUBIC };

static bool attr_is(const MNNode *n, const char *name, const char *dflt, const char *want) {
    return !strcmp(ir_attr_string(n, name, dflt), want);
}

/* a constant float input's values (none when absent or empty) */
static int floats_of(const MNNode *n, int k, double *v, int cap) {
    const MNValue *x = k < n->nin ? n->in[k] : NULL;
    if (!x || !x->konst) return x ? -1 : 0;
    if (x->konst->numel > cap) return -1;
    for (int64_t i = 0; i < x->konst->numel; i++) v[i] = ir_tensor_get_f(x->konst, i);
    return (int)x->konst->numel;
}

/* the input coordinate of output coordinate o along axis d */
static double coord(const ResizePlan *p, int d, int64_t o) {
    double s = p->scale[d], lo = (double)p->out[d], li = (double)p->in[d];
    switch (p->ct) {
    case RESIZE_CT_HALF_PIXEL: return ((double)o + 0.5) / s - 0.5;
    case RESIZE_CT_PYTORCH_HALF_PIXEL: return p->out[d] > 1 ? ((double)o + 0.5) / s - 0.5 : -0.5;
    case RESIZE_CT_ALIGN_CORNERS: return lo == 1 ? 0 : (double)o * (li - 1) / (s * li - 1);
    case RESIZE_CT_TF_HALF_PIXEL_NN: return ((double)o + 0.5) / s;
    case RESIZE_CT_TF_CROP:
        return p->out[d] > 1 ? p->roi0[d] * (li - 1) + (double)o * (p->roi1[d] - p->roi0[d]) * (li - 1) / (lo - 1)
                             : 0.5 * (p->roi0[d] + p->roi1[d]) * (li - 1);
    default: return (double)o / s;
    }
}

static void cubic(double r, double A, double *c) {
    double s = 1 - r;
    c[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
    c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
    c[2] = ((A + 2) * s - (A + 3)) * s * s + 1;
    c[3] = ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A;
}

/* the neighbours and weights of x along axis d (T[d] of them; past the edge unless clamp);
 * false when x is outside the input under tf_crop_and_resize */
static bool terms(const ResizePlan *p, int d, double x, bool clamp, int64_t *at, double *w) {
    int64_t n = p->in[d];
    if (p->ct == RESIZE_CT_TF_CROP && (x < 0 || x > (double)(n - 1))) return false;
    double f = ceil(x) - 1, r = x - f;
    if (p->T[d] == 1) {
        int64_t i = (int64_t)f + 1; /* x itself when it lands on an element */
        if (p->mode == MODE_NEAREST && r < 1) {
            bool up = p->nm == NM_CEIL || (p->nm == NM_ROUND_PREFER_FLOOR && r > 0.5) ||
                      (p->nm == NM_ROUND_PREFER_CEIL && r >= 0.5);
            i = (int64_t)f + (up ? 1 : 0);
        }
        at[0] = !clamp ? i : i < 0 ? 0 : i >= n ? n - 1 : i;
        w[0] = 1;
        return true;
    }
    int64_t first = (int64_t)f - (p->T[d] == 4 ? 1 : 0);
    if (p->T[d] == 2) {
        w[0] = 1 - r;
        w[1] = r;
    } else
        cubic(r, p->a, w);
    double sum = 0;
    for (int t = 0; t < p->T[d]; t++) {
        int64_t i = first + t;
        if (p->exclude && (i < 0 || i >= n)) w[t] = 0;
        sum += w[t];
        at[t] = !clamp ? i : i < 0 ? 0 : i >= n ? n - 1 : i;
    }
    if (p->exclude && sum != 0)
        for (int t = 0; t < p->T[d]; t++) w[t] /= sum;
    return true;
}

const char *resize_plan(const MNNode *n, int64_t opset, ResizePlan *p, int64_t *K) {
    const MNValue *x = n->in[0], *o = n->out[0];
    int r = x->type.rank;
    if (r < 1 || r > MN_MAX_RANK || o->type.rank != r) return "a rank not handled";
    if (ir_attr_int(n, "antialias", 0) || ir_attr(n, "axes") ||
        !attr_is(n, "keep_aspect_ratio_policy", "stretch", "stretch"))
        return "antialias, axes or an aspect-ratio policy";
    memset(p, 0, sizeof *p);
    p->rank = r;
    p->mode = attr_is(n, "mode", "nearest", "linear")  ? MODE_LINEAR
              : attr_is(n, "mode", "nearest", "cubic") ? MODE_CUBIC
                                                       : MODE_NEAREST;
    if (!attr_is(n, "mode", "nearest", "nearest") && p->mode == MODE_NEAREST) return "a mode not handled";
    bool old = n->op == OP_Upsample || opset < 11; /* scales as input 1, asymmetric, rounding down */
    static const char *cts[] = {"half_pixel", "pytorch_half_pixel",   "align_corners",
                                "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
    p->ct = -1;
    for (int i = 0; i < 6; i++)
        if (attr_is(n, "coordinate_transformation_mode", "half_pixel", cts[i])) p->ct = i;
    if (old) p->ct = RESIZE_CT_ASYMMETRIC;
    if (p->ct < 0) return "a coordinate transformation not handled";
    static const char *nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    p->nm = -1;
    for (int i = 0; i < 4; i++)
        if (attr_is(n, "nearest_mode", "round_prefer_floor", nms[i])) p->nm = i;
    if (old) p->nm = NM_FLOOR;
    if (p->nm < 0) return "a nearest mode not handled";
    p->a = ir_attr_float(n, "cubic_coeff_a", -0.75);
    p->exclude = ir_attr_int(n, "exclude_outside", 0) != 0;
    p->extrapolation = ir_attr_float(n, "extrapolation_value", 0.0);
    double sc[MN_MAX_RANK], sz[MN_MAX_RANK], roi[2 * MN_MAX_RANK];
    int ns = floats_of(n, old ? 1 : 2, sc, MN_MAX_RANK), nz = old ? 0 : floats_of(n, 3, sz, MN_MAX_RANK);
    int nr = old ? 0 : floats_of(n, 1, roi, 2 * MN_MAX_RANK);
    if (ns < 0 || nz < 0 || nr < 0 || (ns != r && nz != r)) return "scales or sizes computed at run time";
    if (p->ct == RESIZE_CT_TF_CROP && nr != 2 * r) return "a region of interest computed at run time";
    *K = 1;
    for (int d = 0; d < r; d++) {
        p->in[d] = x->type.dims[d];
        p->out[d] = o->type.dims[d];
        if (p->in[d] <= 0 || p->out[d] <= 0) return "an empty axis";
        p->scale[d] = nz == r ? (double)p->out[d] / (double)p->in[d] : (double)(float)sc[d];
        if (!(p->scale[d] > 0)) return "a scale that is not positive";
        p->roi0[d] = nr ? roi[d] : 0;
        p->roi1[d] = nr ? roi[r + d] : 1;
        /* one term where every coordinate lands on an element (or nearest picks one) */
        p->T[d] = 1;
        for (int64_t i = 0; i < p->out[d] && p->T[d] == 1 && p->mode != MODE_NEAREST; i++) {
            double xc = coord(p, d, i);
            if (xc != floor(xc) && !(p->ct == RESIZE_CT_TF_CROP && (xc < 0 || xc > (double)(p->in[d] - 1))))
                p->T[d] = p->mode == MODE_LINEAR ? 2 : 4;
        }
        *K *= p->T[d];
    }
    return NULL;
}

double resize_extrapolation(const ResizePlan *p) { return p->extrapolation; }

int64_t resize_weights(const ResizePlan *p) {
    int64_t all = 1;
    for (int d = 0; d < p->rank; d++) {
        enum { CAP = 256 };
        double seen[CAP];
        int n = 0;
        for (int64_t i = 0; i < p->out[d] && n < CAP; i++) {
            int64_t at[4];
            double ws[4];
            if (!terms(p, d, coord(p, d, i), true, at, ws)) continue;
            for (int t = 0; t < p->T[d] && n < CAP; t++) {
                int j = 0;
                while (j < n && seen[j] != ws[t]) j++;
                if (j == n) seen[n++] = ws[t];
            }
        }
        all *= n ? n : 1;
        if (all > (int64_t)1 << 20) return all;
    }
    return all;
}

bool resize_term(const ResizePlan *p, const int64_t *idx, int64_t k, int64_t *sidx, double *w) {
    double wt = 1;
    for (int d = p->rank - 1; d >= 0; d--) {
        int64_t at[4];
        double ws[4];
        int64_t t = k % p->T[d];
        k /= p->T[d];
        if (!terms(p, d, coord(p, d, idx[d]), true, at, ws)) return false;
        sidx[d] = at[t];
        wt *= ws[t];
    }
    *w = wt;
    return true;
}

bool resize_axis(const ResizePlan *p, int d, int64_t o, bool clamp, int64_t *at, double *w) {
    return terms(p, d, coord(p, d, o), clamp, at, w);
}

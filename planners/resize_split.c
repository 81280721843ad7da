/* Resize split: a linear or cubic Resize over several axes as a chain of Resizes of one
 * axis each.
 *
 * Both kernels are separable: the weight of an input element is the product of one
 * weight per axis (emitter/resize.c), so resizing the axes one after another gives the
 * same sums (in another order: floats differ by rounding only). Code Emit folds each
 * output element over its terms with their weights as constants: over two axes a cubic
 * Resize has 16 terms and up to 144 distinct weights, more than its constant pool; one
 * axis at a time, 4 terms and a dozen weights. Each link keeps the node's attributes and
 * its per-axis scale (scales or sizes, as the node was given them), with the identity
 * (scale 1, region of interest [0, 1]) on the other axes; nearest keeps one term and is
 * left whole, and so is one from a single element on every axis it moves (a broadcast:
 * its terms all read that element). */
#include "plan.h"
#include "ops.h"
#include <string.h>

/* the node's constant scales or sizes (kind 's' or 'z') and region of interest */
static bool params(const MNNode *n, char *kind, double *v, double *roi, int r) {
    const MNValue *rv = n->nin > 1 ? n->in[1] : NULL, *sv = n->nin > 2 ? n->in[2] : NULL,
                  *zv = n->nin > 3 ? n->in[3] : NULL;
    const MNValue *p = zv && zv->konst && zv->konst->numel == r   ? zv
                       : sv && sv->konst && sv->konst->numel == r ? sv
                                                                  : NULL;
    if (!p || (rv && !rv->konst)) return false;
    *kind = p == zv ? 'z' : 's';
    for (int d = 0; d < r; d++) v[d] = ir_tensor_get_f(p->konst, d);
    for (int d = 0; d < 2 * r; d++) roi[d] = d < r ? 0 : 1;
    if (rv && rv->konst->numel == 2 * r)
        for (int d = 0; d < 2 * r; d++) roi[d] = ir_tensor_get_f(rv->konst, d);
    return true;
}

static bool attr_is(const MNNode *n, const char *name, const char *want) {
    return !strcmp(ir_attr_string(n, name, ""), want);
}

/* the axes a Resize changes: in != out, or a region of interest other than all of it */
static int moved_axes(const MNNode *n, const double *roi, int *ax) {
    const MNValue *x = n->in[0], *o = n->out[0];
    int m = 0;
    for (int d = 0; d < x->type.rank; d++)
        if (x->type.dims[d] != o->type.dims[d] || roi[d] != 0 || roi[x->type.rank + d] != 1) ax[m++] = d;
    return m;
}

static bool is_split(const MNNode *n) {
    if (n->op != OP_Resize || n->nin < 3 || n->nout != 1 || !n->in[0] || !n->out[0]) return false;
    if (!attr_is(n, "mode", "linear") && !attr_is(n, "mode", "cubic")) return false;
    int r = n->in[0]->type.rank, ax[MN_MAX_RANK];
    double v[MN_MAX_RANK], roi[2 * MN_MAX_RANK];
    char kind;
    if (r <= 1 || r > MN_MAX_RANK || n->out[0]->type.rank != r || !params(n, &kind, v, roi, r)) return false;
    int m = moved_axes(n, roi, ax), ones = 0;
    for (int i = 0; i < m; i++) ones += n->in[0]->type.dims[ax[i]] == 1;
    return m > 1 && ones < m; /* from one element on every axis: every term reads it (a broadcast) */
}

static MNValue *const_floats(MNGraph *g, const char *name, int32_t elem, const double *v, int64_t n) {
    MNValue *c = plan_value_new(g, name, elem, 1, &n);
    c->konst = ir_tensor_new(g->arena, elem, 1, &n);
    for (int64_t i = 0; i < n; i++) {
        if (elem == ONNX_FLOAT32)
            ir_tensor_set_f(c->konst, i, v[i]);
        else
            ir_tensor_set_i(c->konst, i, (int64_t)v[i]);
    }
    c->is_initializer = true;
    return c;
}

static bool split(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    Arena *a = g->arena;
    MNValue *x = n->in[0], *y = n->out[0];
    int r = x->type.rank, ax[MN_MAX_RANK];
    double v[MN_MAX_RANK], roi[2 * MN_MAX_RANK];
    char kind;
    if (!params(n, &kind, v, roi, r)) return false;
    bool crop = attr_is(n, "coordinate_transformation_mode", "tf_crop_and_resize");
    int m = moved_axes(n, roi, ax);
    int64_t dims[MN_MAX_RANK];
    memcpy(dims, x->type.dims, sizeof(int64_t) * (size_t)r);
    MNValue *cur = x;
    for (int i = 0; i < m; i++) {
        int d = ax[i];
        double pv[MN_MAX_RANK], pr[2 * MN_MAX_RANK];
        for (int e = 0; e < r; e++) { /* the identity on every other axis */
            pv[e] = kind == 's' ? (e == d ? v[e] : 1) : (double)(e == d ? y->type.dims[e] : dims[e]);
            pr[e] = e == d ? roi[e] : 0;
            pr[r + e] = e == d ? roi[r + e] : 1;
        }
        dims[d] = y->type.dims[d];
        MNNode *s = ir_node_new(g, "Resize", kind == 'z' ? 4 : 3, 1);
        s->name = arena_printf(a, "%s_axis%d", n->name, d);
        s->nattr = n->nattr;
        s->attrs = n->attrs;
        s->in[0] = cur;
        s->in[1] = crop ? const_floats(g, arena_printf(a, "%s_roi", s->name), ONNX_FLOAT32, pr, 2 * r) : NULL;
        MNValue *p = const_floats(g, arena_printf(a, "%s_%s", s->name, kind == 'z' ? "sizes" : "scales"),
                                  kind == 'z' ? ONNX_INT64 : ONNX_FLOAT32, pv, r);
        s->in[2] = kind == 'z' ? NULL : p;
        if (kind == 'z') s->in[3] = p;
        MNValue *o = i == m - 1 ? y : plan_value_new(g, arena_printf(a, "%s_out", s->name), y->type.elem, r, dims);
        s->out[0] = o;
        o->producer = s;
        o->producer_out = 0;
        cur = o;
    }
    n->dead = true;
    return true;
}

bool plan_resize_split(MNCompile *c) {
    int n = plan_replace_nodes(c, is_split, split);
    mn_figure(c, "resizes_split", n);
    if (n) mn_log(c, 0, "resize split: %d linear or cubic Resizes as one Resize per axis", n);
    return true;
}

/* Static shapes: shape and type inference for every supported op.
 *
 * mncc compiles for a machine with no dynamic allocation, so after this pass every
 * value has a fully static shape. Inference runs once over the nodes in topological
 * order (see passes.c: pass_static_shapes), interleaved with constant folding, so that
 * shape computations exporters emit (Shape -> Gather -> Concat -> Reshape) are known
 * by the time their consumer needs them. A declared type (graph output, value_info)
 * that disagrees with the inferred one is an error in the model, not a warning: it
 * means one of us misreads the op, and code generated from a wrong shape is wrong. */
#include "infer.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static bool vfail(MNInfer *c, MNDiagKind kind, const MNNode *n, const MNValue *v, const char *fmt, va_list ap) {
    char msg[700];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (v)
        return diag_error(c->d, kind, "%s: node '%s' (%s): value '%s': %s", c->g->file, n->name, n->op_type, v->name,
                          msg);
    return diag_error(c->d, kind, "%s: node '%s' (%s): %s", c->g->file, n->name, n->op_type, msg);
}

bool infer_fail(MNInfer *c, const MNNode *n, const MNValue *v, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfail(c, DIAG_INVALID, n, v, fmt, ap);
    va_end(ap);
    return false;
}

bool infer_unsupported(MNInfer *c, const MNNode *n, const MNValue *v, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfail(c, DIAG_UNSUPPORTED, n, v, fmt, ap);
    va_end(ap);
    return false;
}

static MNType *T(MNNode *n, int k) { return k < n->nin && n->in[k] ? &n->in[k]->type : NULL; }

const MNOpFns infer_ops[OP_COUNT] = {
#define OP(name, since, max, infer, fold, props, types) [OP_##name] = {infer_##infer, fold_##fold},
    MN_OPS(OP)
#undef OP
};

const MNTensor *infer_const_input(MNInfer *c, MNNode *n, int k, const char *what) {
    MNValue *v = infer_in(n, k);
    if (!v) {
        infer_fail(c, n, NULL, "missing input %d (%s)", k, what);
        return NULL;
    }
    if (!v->konst) {
        infer_unsupported(c, n, v, "input '%s' must be computable at compile time (mncc needs static shapes)", what);
        return NULL;
    }
    return v->konst;
}

bool infer_norm_axis(MNInfer *c, MNNode *n, int64_t axis, int rank, int *out) {
    *out = 0;
    if (axis < -rank || axis >= (rank > 0 ? rank : 1)) {
        if (!(rank == 0 && (axis == 0 || axis == -1)))
            return infer_fail(c, n, n->in[0], "axis %lld out of range for rank %d", (long long)axis, rank);
    }
    *out = rank == 0 ? 0 : (int)(axis < 0 ? axis + rank : axis); /* a scalar's one "axis" */
    return true;
}

/* Checked dimension arithmetic: a hostile attribute must give an error, not overflow. */
static bool dim_add(int64_t a, int64_t b, int64_t *r) { return !__builtin_add_overflow(a, b, r); }
static bool dim_mul(int64_t a, int64_t b, int64_t *r) { return !__builtin_mul_overflow(a, b, r); }
#define ATTR_LIMIT ((int64_t)1 << 31) /* kernel sizes, strides, dilations, groups, blocks */
#define PAD_LIMIT ((int64_t)1 << 40)

/* Set output k, checking against what the model declared for it. */
static bool set_out(MNInfer *c, MNNode *n, int k, int32_t elem, int rank, const int64_t *dims) {
    if (k >= n->nout || !n->out[k]) return true;
    MNValue *v = n->out[k];
    MNType *t = &v->type;
    if (rank > MN_MAX_RANK) return infer_unsupported(c, n, v, "rank %d exceeds mncc's limit of %d", rank, MN_MAX_RANK);
    int64_t numel = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return infer_fail(c, n, v, "inferred negative dimension %lld at axis %d", (long long)dims[i], i);
        if (dims[i] && numel > INT64_MAX / dims[i]) return infer_fail(c, n, v, "element count overflows 64 bits");
        numel *= dims[i];
    }
    if (t->elem && elem && t->elem != elem)
        return infer_fail(c, n, v, "declared type %s but the op produces %s", onnx_type_name(t->elem),
                          onnx_type_name(elem));
    if (t->rank >= 0) {
        bool bad = t->rank != rank;
        for (int i = 0; !bad && i < rank; i++) bad = t->dims[i] >= 0 && t->dims[i] != dims[i];
        if (bad) {
            Arena *a = c->g->arena;
            char *decl = arena_alloc(a, (size_t)t->rank * 24 + 2), *p = decl;
            for (int i = 0; i < t->rank; i++)
                p += t->dims[i] >= 0 ? sprintf(p, i ? ",%lld" : "%lld", (long long)t->dims[i])
                                     : sprintf(p, i ? ",?" : "?");
            return infer_fail(c, n, v, "declared shape [%s] but the op produces [%s]", decl,
                              ir_dims_str(a, rank, dims));
        }
    }
    ir_type_set(c->g, t, elem ? elem : t->elem, rank, dims);
    v->inferred = true;
    return true;
}

static bool same_as(MNInfer *c, MNNode *n, int k, int from) {
    MNType *t = T(n, from);
    return set_out(c, n, k, t->elem, t->rank, t->dims);
}

static bool need_inputs(MNInfer *c, MNNode *n, int min, int max) {
    int have = 0;
    for (int k = 0; k < n->nin; k++)
        if (n->in[k]) have = k + 1;
    if (have < min || n->nin > max) {
        if (min == max) return infer_fail(c, n, NULL, "expects %d inputs, has %d", min, n->nin);
        return infer_fail(c, n, NULL, "expects %d to %d inputs, has %d", min, max, n->nin);
    }
    for (int k = 0; k < min; k++)
        if (!n->in[k]) return infer_fail(c, n, NULL, "required input %d is empty", k);
    return true;
}

static bool need_float(MNInfer *c, MNNode *n, int k) {
    MNType *t = T(n, k);
    if (t && !onnx_type_is_float(t->elem))
        return infer_fail(c, n, n->in[k], "expects a floating-point tensor, got %s", onnx_type_name(t->elem));
    return true;
}

static bool need_rank(MNInfer *c, MNNode *n, int k, int lo, int hi) {
    MNType *t = T(n, k);
    if (t->rank < lo || t->rank > hi) {
        if (lo == hi) return infer_fail(c, n, n->in[k], "expects rank %d, got %d", lo, t->rank);
        return infer_fail(c, n, n->in[k], "expects rank %d..%d, got %d", lo, hi, t->rank);
    }
    return true;
}

static bool same_elem(MNInfer *c, MNNode *n, int a, int b) {
    MNType *ta = T(n, a), *tb = T(n, b);
    if (ta && tb && ta->elem != tb->elem)
        return infer_fail(c, n, n->in[b], "type %s does not match input '%s' of type %s", onnx_type_name(tb->elem),
                          n->in[a]->name, onnx_type_name(ta->elem));
    return true;
}

bool infer_broadcast(MNInfer *c, MNNode *n, int ns, const MNType *const *ts, int *rank, int64_t *dims) {
    int r = 0;
    for (int i = 0; i < ns; i++)
        if (ts[i]->rank > r) r = ts[i]->rank;
    for (int d = 0; d < r; d++) {
        int64_t v = 1;
        for (int i = 0; i < ns; i++) {
            int off = d - (r - ts[i]->rank);
            if (off < 0) continue;
            int64_t x = ts[i]->dims[off];
            if (x == 1) continue;
            if (v != 1 && v != x) {
                char a[400] = "", *p = a;
                for (int j = 0; j < ns; j++)
                    p += snprintf(p, (size_t)(a + sizeof a - p), "%s[%s]", j ? " and " : "",
                                  ir_dims_str(c->g->arena, ts[j]->rank, ts[j]->dims));
                return infer_fail(c, n, NULL, "shapes %s cannot be broadcast (axis %d: %lld vs %lld)", a, d,
                                  (long long)v, (long long)x);
            }
            v = x;
        }
        dims[d] = v;
    }
    *rank = r;
    return true;
}

/* Integer list from an attribute or, from a given opset on, from an input. */
typedef struct {
    int n;
    int64_t v[MN_MAX_RANK * 2 + 8];
    bool present;
} IntList;

static bool ints_from_tensor(MNInfer *c, MNNode *n, const MNTensor *t, const char *what, IntList *out) {
    if (t->numel > (int64_t)(sizeof out->v / sizeof out->v[0]))
        return infer_unsupported(c, n, NULL, "%s has %lld entries, more than mncc handles", what, (long long)t->numel);
    if (onnx_type_is_float(t->elem)) return infer_fail(c, n, NULL, "%s must be an integer tensor", what);
    out->n = (int)t->numel;
    for (int64_t i = 0; i < t->numel; i++) out->v[i] = ir_tensor_get_i(t, i);
    out->present = true;
    return true;
}

static bool ints_attr(MNInfer *c, MNNode *n, const char *name, IntList *out) {
    const MNAttr *a = ir_attr(n, name);
    out->n = 0;
    out->present = false;
    if (!a) return true;
    if (a->type == MN_ATTR_INT) {
        out->n = 1;
        out->v[0] = a->i;
    } else {
        if (a->n > (int)(sizeof out->v / sizeof out->v[0]))
            return infer_unsupported(c, n, NULL, "attribute '%s' has %d entries, more than mncc handles", name, a->n);
        out->n = a->n;
        for (int i = 0; i < a->n; i++) out->v[i] = a->ints[i];
    }
    out->present = true;
    return true;
}

static bool ints_input(MNInfer *c, MNNode *n, int k, const char *what, IntList *out) {
    out->n = 0;
    out->present = false;
    if (!infer_in(n, k)) return true;
    const MNTensor *t = infer_const_input(c, n, k, what);
    return t && ints_from_tensor(c, n, t, what, out);
}

/* ---- elementwise ---- */

bool infer_unary(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 1)) return false;
    if (n->op == OP_Not && T(n, 0)->elem != ONNX_BOOL) return infer_fail(c, n, n->in[0], "Not expects a bool tensor");
    return same_as(c, n, 0, 0);
}

bool infer_predicate(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 1) || !need_float(c, n, 0)) return false;
    return set_out(c, n, 0, ONNX_BOOL, T(n, 0)->rank, T(n, 0)->dims);
}

bool infer_dropout(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 3)) return false;
    return same_as(c, n, 0, 0) && set_out(c, n, 1, ONNX_BOOL, T(n, 0)->rank, T(n, 0)->dims);
}

bool infer_clip(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 3)) return false;
    for (int k = 1; k < n->nin; k++) {
        if (!n->in[k]) continue;
        if (T(n, k)->rank > 1 || ir_shape_numel(T(n, k)) != 1)
            return infer_fail(c, n, n->in[k], "Clip bounds must be scalars");
        if (!same_elem(c, n, 0, k)) return false;
    }
    return same_as(c, n, 0, 0);
}

bool infer_cast(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 1)) return false;
    const MNAttr *a = ir_attr(n, "to");
    if (!a) return infer_fail(c, n, NULL, "missing required attribute 'to'");
    if (!onnx_type_known((int32_t)a->i) || a->i == 0)
        return infer_fail(c, n, NULL, "attribute 'to' names unknown type %lld", (long long)a->i);
    if (!onnx_type_numeric((int32_t)a->i) || !onnx_type_numeric(T(n, 0)->elem))
        return infer_unsupported(c, n, NULL, "Cast between %s and %s is not supported", onnx_type_name(T(n, 0)->elem),
                                 onnx_type_name((int32_t)a->i));
    return set_out(c, n, 0, (int32_t)a->i, T(n, 0)->rank, T(n, 0)->dims);
}

bool infer_castlike(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 2, 2)) return false;
    return set_out(c, n, 0, T(n, 1)->elem, T(n, 0)->rank, T(n, 0)->dims);
}

static bool broadcast_all(MNInfer *c, MNNode *n, int first, int32_t elem) {
    const MNType *ts[64];
    int ns = 0;
    for (int k = first; k < n->nin && ns < 64; k++)
        if (n->in[k]) ts[ns++] = &n->in[k]->type;
    int rank;
    int64_t dims[MN_MAX_RANK];
    for (int i = 0; i < ns; i++)
        if (ts[i]->rank > MN_MAX_RANK) return infer_unsupported(c, n, NULL, "rank above %d", MN_MAX_RANK);
    if (!infer_broadcast(c, n, ns, ts, &rank, dims)) return false;
    return set_out(c, n, 0, elem, rank, dims);
}

/* Before opset 7, B broadcasts to A only with broadcast=1, aligned at axis (numpy's
 * suffix alignment when axis is absent); without it the shapes are equal. Aligned at the
 * end, that is numpy broadcasting, which the rest of mncc implements; an alignment
 * elsewhere is refused. PRelu's slope of one channel count goes along axis 1 then: an
 * initializer is given its (C, 1, ...) shape, which numpy broadcasting then agrees with. */
static bool legacy_broadcast(MNInfer *c, MNNode *n) {
    if (c->opset >= 7 || n->nin != 2 || !n->in[0] || !n->in[1]) return true;
    MNType *a = T(n, 0), *b = T(n, 1);
    if (n->op == OP_PRelu) {
        MNValue *sl = n->in[1];
        if (b->rank == 1 && a->rank > 2 && b->dims[0] == a->dims[1] && b->dims[0] != 1) {
            int readers = 0; /* the slope gets a new shape: only when this node alone reads it */
            for (int i = 0; i < c->g->nnodes; i++)
                for (int k = 0; k < c->g->nodes[i]->nin; k++) readers += c->g->nodes[i]->in[k] == sl;
            if (!sl->konst || readers != 1 || sl->is_output)
                return infer_unsupported(c, n, sl, "a per-channel slope computed at run time or shared (opset < 7)");
            int64_t dims[MN_MAX_RANK];
            dims[0] = b->dims[0];
            for (int i = 1; i < a->rank - 1; i++) dims[i] = 1;
            ir_type_set(c->g, &sl->type, b->elem, a->rank - 1, dims);
            sl->konst->rank = a->rank - 1, sl->konst->dims = sl->type.dims;
        }
        return true;
    }
    bool bc = ir_attr_int(n, "broadcast", 0) != 0;
    if (!bc) {
        if (a->rank != b->rank || memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank))
            return infer_fail(c, n, n->in[1], "shapes differ without broadcast=1 (opset %lld)", (long long)c->opset);
        return true;
    }
    const MNAttr *ax = ir_attr(n, "axis");
    if (ax && ax->i != a->rank - b->rank && !(ax->i < 0 && ax->i + a->rank == a->rank - b->rank))
        return infer_unsupported(c, n, n->in[1], "legacy broadcast along axis %lld (not aligned at the end)",
                                 (long long)ax->i);
    return true;
}

bool infer_binary(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 2, 2)) return false;
    if (!legacy_broadcast(c, n)) return false;
    if (n->op != OP_Pow && !same_elem(c, n, 0, 1)) return false;
    if (n->op == OP_BitShift && onnx_type_is_signed(T(n, 0)->elem))
        return infer_fail(c, n, n->in[0], "BitShift expects unsigned integers");
    if (n->op == OP_PRelu) {
        /* the slope broadcasts to X unidirectionally */
        int rank;
        int64_t dims[MN_MAX_RANK];
        const MNType *ts[2] = {T(n, 0), T(n, 1)};
        if (!infer_broadcast(c, n, 2, ts, &rank, dims)) return false;
        if (rank != T(n, 0)->rank || memcmp(dims, T(n, 0)->dims, sizeof(int64_t) * (size_t)rank))
            return infer_fail(c, n, n->in[1], "slope does not broadcast to the input's shape");
    }
    return broadcast_all(c, n, 0, T(n, 0)->elem);
}

bool infer_variadic(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 1 << 20)) return false;
    for (int k = 1; k < n->nin; k++)
        if (!n->in[k] || !same_elem(c, n, 0, k)) return n->in[k] ? false : infer_fail(c, n, NULL, "empty input %d", k);
    return broadcast_all(c, n, 0, T(n, 0)->elem);
}

bool infer_compare(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 2, 2) || !legacy_broadcast(c, n) || !same_elem(c, n, 0, 1)) return false;
    if ((n->op == OP_And || n->op == OP_Or || n->op == OP_Xor) && T(n, 0)->elem != ONNX_BOOL)
        return infer_fail(c, n, n->in[0], "%s expects bool tensors", n->op_type);
    return broadcast_all(c, n, 0, ONNX_BOOL);
}

bool infer_where(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 3, 3) || !same_elem(c, n, 1, 2)) return false;
    if (T(n, 0)->elem != ONNX_BOOL) return infer_fail(c, n, n->in[0], "condition must be bool");
    return broadcast_all(c, n, 0, T(n, 1)->elem);
}

/* Trilu: the input's type; k (optional) one int64. Codegen needs k at compile time
 * (planners/mask_lower.c), inference does not: the output's shape is the input's. */
bool infer_trilu(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 2) || !need_rank(c, n, 0, 2, MN_MAX_RANK)) return false;
    MNType *k = T(n, 1);
    if (k && (k->elem != ONNX_INT64 || ir_shape_numel(k) != 1))
        return infer_fail(c, n, n->in[1], "k must be one int64");
    return same_as(c, n, 0, 0);
}

bool infer_trilu_k(const MNNode *n, int64_t *k) {
    *k = 0;
    const MNValue *kv = infer_in(n, 1);
    if (!kv) return true;
    if (!kv->konst || kv->konst->numel != 1) return false;
    *k = ir_tensor_get_i(kv->konst, 0);
    return true;
}

bool infer_trilu_keeps(bool upper, int64_t k, int64_t row, int64_t col) {
    return upper ? col - row >= k : col - row <= k; /* indices are dims, far below 2^62: no overflow */
}

/* mncc's bitwise and of two values of one element width on the machine (a BOOL is a
 * 64-bit lane: its mask is INT64; planners/mask_lower.c): the first input's type */
bool infer_bit_and(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 2, 2)) return false;
    MNType *a = T(n, 0), *b = T(n, 1);
    if (a->rank != b->rank || memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) ||
        mn_dtype_bytes(onnx_type_default_mn(a->elem)) != mn_dtype_bytes(onnx_type_default_mn(b->elem)))
        return infer_fail(c, n, n->in[1], "operands differ in shape or element width");
    return same_as(c, n, 0, 0);
}

/* ---- linear algebra ---- */

bool infer_matmul(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 2, 2) || !same_elem(c, n, 0, 1)) return false;
    MNType *a = T(n, 0), *b = T(n, 1);
    if (a->rank < 1 || b->rank < 1) return infer_fail(c, n, NULL, "MatMul operands must have rank >= 1");
    /* numpy matmul: 1-D operands get a dim prepended/appended, removed afterwards */
    int64_t ad[MN_MAX_RANK + 1], bd[MN_MAX_RANK + 1];
    int ar = a->rank, br = b->rank;
    if (ar > MN_MAX_RANK || br > MN_MAX_RANK) return infer_unsupported(c, n, NULL, "rank above %d", MN_MAX_RANK);
    memcpy(ad + (ar == 1), a->dims, sizeof(int64_t) * (size_t)ar);
    memcpy(bd, b->dims, sizeof(int64_t) * (size_t)br);
    if (ar == 1) ad[0] = 1, ar = 2;
    if (br == 1) bd[1] = 1, br = 2;
    if (ad[ar - 1] != bd[br - 2])
        return infer_fail(c, n, NULL, "inner dimensions differ: [%s] x [%s]",
                          ir_dims_str(c->g->arena, a->rank, a->dims), ir_dims_str(c->g->arena, b->rank, b->dims));
    MNType ba = {a->elem, ar - 2, ad, NULL}, bb = {b->elem, br - 2, bd, NULL};
    const MNType *ts[2] = {&ba, &bb};
    int r;
    int64_t dims[MN_MAX_RANK + 2];
    if (!infer_broadcast(c, n, 2, ts, &r, dims)) return false;
    if (a->rank > 1) dims[r++] = ad[ar - 2];
    if (b->rank > 1) dims[r++] = bd[br - 1];
    return set_out(c, n, 0, a->elem, r, dims);
}

bool infer_gemm(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 2, 3) || !same_elem(c, n, 0, 1) || !need_rank(c, n, 0, 2, 2) || !need_rank(c, n, 1, 2, 2))
        return false;
    int ta = (int)ir_attr_int(n, "transA", 0), tb = (int)ir_attr_int(n, "transB", 0);
    MNType *a = T(n, 0), *b = T(n, 1);
    int64_t m = a->dims[ta ? 1 : 0], k = a->dims[ta ? 0 : 1], k2 = b->dims[tb ? 1 : 0], nn = b->dims[tb ? 0 : 1];
    if (k != k2) return infer_fail(c, n, NULL, "inner dimensions differ (%lld vs %lld)", (long long)k, (long long)k2);
    int64_t dims[2] = {m, nn};
    if (infer_in(n, 2)) {
        if (!same_elem(c, n, 0, 2)) return false;
        MNType out = {a->elem, 2, dims, NULL};
        const MNType *ts[2] = {&out, T(n, 2)};
        int r;
        int64_t bd[MN_MAX_RANK];
        if (T(n, 2)->rank > 2 || !infer_broadcast(c, n, 2, ts, &r, bd) || bd[0] != m || bd[1] != nn)
            return diag_failed(c->d)
                       ? false
                       : infer_fail(c, n, n->in[2], "C does not broadcast to [%lld,%lld]", (long long)m, (long long)nn);
    } else if (c->opset < 11)
        return infer_fail(c, n, NULL, "input C is required before opset 11");
    return set_out(c, n, 0, a->elem, 2, dims);
}

static bool reduce_axes(MNInfer *c, MNNode *n, bool *mask);

/* Spatial attributes shared by Conv, ConvTranspose and the pools. */
typedef struct {
    int ns;
    int64_t k[MN_MAX_RANK], s[MN_MAX_RANK], d[MN_MAX_RANK], pb[MN_MAX_RANK], pe[MN_MAX_RANK];
    const char *auto_pad;
} Window;

static bool get_window(MNInfer *c, MNNode *n, int ns, const int64_t *kernel, Window *w) {
    IntList ks, st, dl, pd;
    if (!ints_attr(c, n, "kernel_shape", &ks) || !ints_attr(c, n, "strides", &st) ||
        !ints_attr(c, n, "dilations", &dl) || !ints_attr(c, n, "pads", &pd))
        return false;
    w->ns = ns;
    w->auto_pad = ir_attr_string(n, "auto_pad", "NOTSET");
    if (ks.present && ks.n != ns)
        return infer_fail(c, n, NULL, "kernel_shape has %d entries for %d spatial dims", ks.n, ns);
    if (!ks.present && !kernel) return infer_fail(c, n, NULL, "missing required attribute 'kernel_shape'");
    if (st.present && st.n != ns) return infer_fail(c, n, NULL, "strides has %d entries for %d spatial dims", st.n, ns);
    if (dl.present && dl.n != ns)
        return infer_fail(c, n, NULL, "dilations has %d entries for %d spatial dims", dl.n, ns);
    if (pd.present && pd.n != 2 * ns)
        return infer_fail(c, n, NULL, "pads has %d entries for %d spatial dims", pd.n, ns);
    for (int i = 0; i < ns; i++) {
        w->k[i] = ks.present ? ks.v[i] : kernel[i];
        w->s[i] = st.present ? st.v[i] : 1;
        w->d[i] = dl.present ? dl.v[i] : 1;
        w->pb[i] = pd.present ? pd.v[i] : 0;
        w->pe[i] = pd.present ? pd.v[i + ns] : 0;
        if (w->k[i] < 1 || w->s[i] < 1 || w->d[i] < 1 || w->pb[i] < 0 || w->pe[i] < 0)
            return infer_fail(c, n, NULL, "kernel, strides and dilations must be positive and pads non-negative");
        if (w->k[i] > ATTR_LIMIT || w->s[i] > ATTR_LIMIT || w->d[i] > ATTR_LIMIT || w->pb[i] > PAD_LIMIT ||
            w->pe[i] > PAD_LIMIT)
            return infer_fail(c, n, NULL, "kernel, strides, dilations or pads out of range");
    }
    if (strcmp(w->auto_pad, "NOTSET") && strcmp(w->auto_pad, "VALID") && strcmp(w->auto_pad, "SAME_UPPER") &&
        strcmp(w->auto_pad, "SAME_LOWER"))
        return infer_fail(c, n, NULL, "unknown auto_pad '%s'", w->auto_pad);
    return true;
}

/* Output extents of a sliding window; fills in the pads auto_pad implies so that later
 * passes see explicit pads only. */
static bool window_out(MNInfer *c, MNNode *n, Window *w, const int64_t *in, bool ceil_mode, int64_t *out) {
    for (int i = 0; i < w->ns; i++) {
        int64_t ek = (w->k[i] - 1) * w->d[i] + 1;
        if (!strcmp(w->auto_pad, "SAME_UPPER") || !strcmp(w->auto_pad, "SAME_LOWER")) {
            out[i] = (in[i] + w->s[i] - 1) / w->s[i];
            int64_t total = (out[i] - 1) * w->s[i] + ek - in[i];
            if (total < 0) total = 0;
            bool upper = !strcmp(w->auto_pad, "SAME_UPPER");
            w->pb[i] = upper ? total / 2 : total - total / 2;
            w->pe[i] = total - w->pb[i];
            continue;
        }
        if (!strcmp(w->auto_pad, "VALID")) w->pb[i] = w->pe[i] = 0;
        int64_t span;
        if (!dim_add(in[i], w->pb[i] + w->pe[i] - ek, &span))
            return infer_fail(c, n, n->in[0], "padded size overflows 64 bits");
        if (span < 0)
            return infer_fail(c, n, n->in[0], "window (%lld) larger than padded input (%lld) at spatial axis %d",
                              (long long)ek, (long long)(in[i] + w->pb[i] + w->pe[i]), i);
        out[i] = (ceil_mode ? (span + w->s[i] - 1) / w->s[i] : span / w->s[i]) + 1;
        /* a last window that starts inside the end padding is dropped (as onnxruntime) */
        if (ceil_mode && (out[i] - 1) * w->s[i] >= in[i] + w->pb[i]) out[i]--;
    }
    return true;
}

bool infer_conv(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 2, 3) || !same_elem(c, n, 0, 1) || !need_rank(c, n, 0, 3, MN_MAX_RANK) ||
        !need_float(c, n, 0))
        return false;
    MNType *x = T(n, 0), *wt = T(n, 1);
    if (wt->rank != x->rank)
        return infer_fail(c, n, n->in[1], "weight rank %d differs from input rank %d", wt->rank, x->rank);
    int64_t group = ir_attr_int(n, "group", 1), cin = 0;
    if (group < 1 || group > ATTR_LIMIT || !dim_mul(wt->dims[1], group, &cin) || x->dims[1] % group ||
        wt->dims[0] % group || cin != x->dims[1])
        return infer_fail(c, n, n->in[1], "channels do not match: input has %lld, weight [%s] with group %lld",
                          (long long)x->dims[1], ir_dims_str(c->g->arena, wt->rank, wt->dims), (long long)group);
    if (infer_in(n, 2) && (T(n, 2)->rank != 1 || T(n, 2)->dims[0] != wt->dims[0]))
        return infer_fail(c, n, n->in[2], "bias must have shape [%lld]", (long long)wt->dims[0]);
    Window w;
    int ns = x->rank - 2;
    if (!get_window(c, n, ns, wt->dims + 2, &w)) return false;
    for (int i = 0; i < ns; i++)
        if (w.k[i] != wt->dims[2 + i])
            return infer_fail(c, n, n->in[1], "kernel_shape disagrees with the weight's shape");
    int64_t dims[MN_MAX_RANK];
    dims[0] = x->dims[0];
    dims[1] = wt->dims[0];
    if (!window_out(c, n, &w, x->dims + 2, false, dims + 2)) return false;
    return set_out(c, n, 0, x->elem, x->rank, dims);
}

bool infer_conv_transpose(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 2, 3) || !same_elem(c, n, 0, 1) || !need_rank(c, n, 0, 3, MN_MAX_RANK) ||
        !need_float(c, n, 0))
        return false;
    MNType *x = T(n, 0), *wt = T(n, 1);
    int ns = x->rank - 2;
    int64_t group = ir_attr_int(n, "group", 1);
    if (wt->rank != x->rank || group < 1 || group > ATTR_LIMIT || wt->dims[0] != x->dims[1] || x->dims[1] % group)
        return infer_fail(c, n, n->in[1], "weight [%s] does not match input channels %lld with group %lld",
                          ir_dims_str(c->g->arena, wt->rank, wt->dims), (long long)x->dims[1], (long long)group);
    Window w;
    if (!get_window(c, n, ns, wt->dims + 2, &w)) return false;
    for (int i = 0; i < ns; i++)
        if (w.k[i] != wt->dims[2 + i])
            return infer_fail(c, n, n->in[1], "kernel_shape disagrees with the weight's shape");
    IntList op, os;
    if (!ints_attr(c, n, "output_padding", &op) || !ints_attr(c, n, "output_shape", &os)) return false;
    if (op.present && op.n != ns)
        return infer_fail(c, n, NULL, "output_padding has %d entries for %d spatial dims", op.n, ns);
    if (os.present && os.n != ns && os.n != ns + 2) return infer_fail(c, n, NULL, "output_shape has %d entries", os.n);
    int64_t dims[MN_MAX_RANK];
    dims[0] = x->dims[0];
    if (!dim_mul(wt->dims[1], group, &dims[1])) return infer_fail(c, n, n->in[1], "output channels overflow 64 bits");
    if (infer_in(n, 2) && (T(n, 2)->rank != 1 || T(n, 2)->dims[0] != dims[1]))
        return infer_fail(c, n, n->in[2], "bias must have shape [%lld]", (long long)dims[1]);
    for (int i = 0; i < ns; i++) {
        int64_t opad = op.present ? op.v[i] : 0, ek = (w.k[i] - 1) * w.d[i] + 1, full;
        if (opad < 0 || opad > PAD_LIMIT || !dim_mul(w.s[i], x->dims[2 + i] - 1, &full) ||
            !dim_add(full, opad + ek, &full))
            return infer_fail(c, n, NULL, "output size out of range at spatial axis %d", i);
        if (os.present) {
            dims[2 + i] = os.v[os.n - ns + i];
            int64_t total = full - dims[2 + i];
            if (total < 0) total = 0;
            bool lower = !strcmp(w.auto_pad, "SAME_LOWER");
            w.pb[i] = lower ? total - total / 2 : total / 2;
            w.pe[i] = total - w.pb[i];
        } else if (!strcmp(w.auto_pad, "SAME_UPPER") || !strcmp(w.auto_pad, "SAME_LOWER")) {
            if (!dim_mul(x->dims[2 + i], w.s[i], &dims[2 + i]))
                return infer_fail(c, n, NULL, "output size overflows 64 bits");
        } else {
            if (!strcmp(w.auto_pad, "VALID")) w.pb[i] = w.pe[i] = 0;
            dims[2 + i] = full - w.pb[i] - w.pe[i];
        }
        if (dims[2 + i] < 1)
            return infer_fail(c, n, NULL, "output spatial dim %d would be %lld", i, (long long)dims[2 + i]);
    }
    return set_out(c, n, 0, x->elem, x->rank, dims);
}

/* For the passes after inference, on a node it accepted: the window with its pads made
 * explicit (auto_pad, and for ConvTranspose output_shape, resolved as above). */
bool infer_window(MNGraph *g, MNNode *n, MNWindow *out) {
    MNDiag d = {0};
    MNInfer c = {g, &d, g->opset, 0, 0};
    const MNType *x = T(n, 0);
    int ns = x->rank - 2;
    bool conv = n->op == OP_Conv || n->op == OP_ConvTranspose;
    int64_t kernel[MN_MAX_RANK];
    if (n->op == OP_GlobalAveragePool || n->op == OP_GlobalMaxPool) {
        memset(out, 0, sizeof *out);
        out->ns = ns;
        for (int i = 0; i < ns; i++) out->k[i] = x->dims[2 + i], out->s[i] = out->d[i] = 1;
        return true;
    }
    if (conv) memcpy(kernel, T(n, 1)->dims + 2, sizeof(int64_t) * (size_t)ns);
    Window w;
    if (ns < 1 || !get_window(&c, n, ns, conv ? kernel : NULL, &w)) return false;
    int64_t o[MN_MAX_RANK];
    if (n->op == OP_ConvTranspose) {
        IntList op;
        if (!ints_attr(&c, n, "output_padding", &op)) return false;
        const MNType *y = &n->out[0]->type;
        bool os = ir_attr(n, "output_shape") != NULL,
             same = !strcmp(w.auto_pad, "SAME_UPPER") || !strcmp(w.auto_pad, "SAME_LOWER");
        for (int i = 0; i < ns; i++) {
            int64_t full = w.s[i] * (x->dims[2 + i] - 1) + (op.present ? op.v[i] : 0) + (w.k[i] - 1) * w.d[i] + 1;
            if (os || same) {
                int64_t total = full - y->dims[2 + i];
                if (total < 0) total = 0;
                bool lower = !strcmp(w.auto_pad, "SAME_LOWER");
                w.pb[i] = lower ? total - total / 2 : total / 2;
                w.pe[i] = total - w.pb[i];
            } else if (!strcmp(w.auto_pad, "VALID"))
                w.pb[i] = w.pe[i] = 0;
        }
    } else if (!window_out(&c, n, &w, x->dims + 2, ir_attr_int(n, "ceil_mode", 0) != 0, o))
        return false;
    out->ns = ns;
    for (int i = 0; i < ns; i++)
        out->k[i] = w.k[i], out->s[i] = w.s[i], out->d[i] = w.d[i], out->pb[i] = w.pb[i], out->pe[i] = w.pe[i];
    return true;
}

/* the reduced axes of an accepted reduction, for the passes after inference */
bool infer_reduce_mask(MNGraph *g, MNNode *n, bool *mask) {
    MNDiag d = {0};
    MNInfer c = {g, &d, g->opset, 0, 0};
    return reduce_axes(&c, n, mask);
}

bool infer_batchnorm(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 5, 5) || !need_rank(c, n, 0, 2, MN_MAX_RANK) || !need_float(c, n, 0)) return false;
    if (ir_attr_int(n, "training_mode", 0))
        return infer_unsupported(c, n, NULL, "training mode (statistics of the batch)");
    if (c->opset < 7 &&
        (!ir_attr_int(n, "is_test", 0) || !ir_attr_int(n, "spatial", 1))) /* opset 6: the same in test mode */
        return infer_unsupported(c, n, NULL, "training mode or spatial=0 (opset %lld)", (long long)c->opset);
    int64_t ch = T(n, 0)->dims[1];
    for (int k = 1; k < 5; k++)
        if (T(n, k)->rank != 1 || T(n, k)->dims[0] != ch)
            return infer_fail(c, n, n->in[k], "expects shape [%lld] (the channel count)", (long long)ch);
    if (!same_as(c, n, 0, 0)) return false;
    for (int k = 1; k < n->nout; k++)
        if (!set_out(c, n, k, T(n, 1)->elem, 1, &ch)) return false;
    return true;
}

bool infer_layernorm(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 2, 3) || !need_float(c, n, 0)) return false;
    MNType *x = T(n, 0);
    int axis;
    if (!infer_norm_axis(c, n, ir_attr_int(n, "axis", -1), x->rank, &axis)) return false;
    int64_t dims[MN_MAX_RANK];
    for (int i = 0; i < x->rank; i++) dims[i] = i < axis ? x->dims[i] : 1;
    for (int k = 1; k < n->nin && k < 3; k++) { /* Scale and B broadcast to the normalized shape */
        const MNType *p = T(n, k);
        if (!p) continue;
        if (p->rank > x->rank - axis) return infer_fail(c, n, n->in[k], "does not broadcast to the normalized shape");
        for (int d = 0; d < p->rank; d++)
            if (p->dims[d] != 1 && p->dims[d] != x->dims[x->rank - p->rank + d])
                return infer_fail(c, n, n->in[k], "does not broadcast to the normalized shape");
    }
    if (!same_as(c, n, 0, 0)) return false;
    int32_t stash = (int32_t)ir_attr_int(n, "stash_type", ONNX_FLOAT32);
    if (!onnx_type_is_float(stash)) return infer_fail(c, n, NULL, "stash_type %d is not a floating-point type", stash);
    return set_out(c, n, 1, stash, x->rank, dims) && set_out(c, n, 2, stash, x->rank, dims);
}

bool infer_same_as_input0(MNInfer *c, MNNode *n) {
    int nin = n->op == OP_InstanceNormalization ? 3 : 1;
    if (!need_inputs(c, n, nin, nin)) return false;
    MNType *x = T(n, 0);
    if (n->op == OP_Softmax || n->op == OP_LogSoftmax || n->op == OP_Hardmax) {
        int axis;
        if (!need_float(c, n, 0) ||
            !infer_norm_axis(c, n, ir_attr_int(n, "axis", c->opset >= 13 ? -1 : 1), x->rank, &axis))
            return false;
    }
    if ((n->op == OP_InstanceNormalization || n->op == OP_LRN) &&
        (!need_rank(c, n, 0, 3, MN_MAX_RANK) || !need_float(c, n, 0)))
        return false;
    if (n->op == OP_InstanceNormalization)
        for (int k = 1; k < 3; k++)
            if (T(n, k)->rank != 1 || T(n, k)->dims[0] != x->dims[1])
                return infer_fail(c, n, n->in[k], "expects shape [%lld] (the channel count)", (long long)x->dims[1]);
    if (n->op == OP_LRN && ir_attr_int(n, "size", 0) < 1)
        return infer_fail(c, n, NULL, "missing or bad required attribute 'size'");
    return same_as(c, n, 0, 0);
}

bool infer_pool(MNInfer *c, MNNode *n) {
    /* MaxPool takes 8-bit integers from opset 12 on; the averaging pools need floats */
    if (!need_inputs(c, n, 1, 1)) return false;
    bool int_ok = n->op == OP_MaxPool && c->opset >= 12 && (T(n, 0)->elem == ONNX_INT8 || T(n, 0)->elem == ONNX_UINT8);
    if (!need_rank(c, n, 0, 3, MN_MAX_RANK) || (!int_ok && !need_float(c, n, 0))) return false;
    MNType *x = T(n, 0);
    Window w;
    if (!get_window(c, n, x->rank - 2, NULL, &w)) return false;
    if (n->op == OP_AveragePool && ir_attr(n, "dilations") && c->opset < 19)
        return infer_fail(c, n, NULL, "AveragePool has no 'dilations' before opset 19");
    int64_t dims[MN_MAX_RANK];
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    if (!window_out(c, n, &w, x->dims + 2, ir_attr_int(n, "ceil_mode", 0) != 0, dims + 2)) return false;
    if (!set_out(c, n, 0, x->elem, x->rank, dims)) return false;
    if (n->nout > 1 && n->op != OP_MaxPool) return infer_fail(c, n, NULL, "has %d outputs, expects 1", n->nout);
    return set_out(c, n, 1, ONNX_INT64, x->rank, dims);
}

bool infer_global_pool(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 1) || !need_rank(c, n, 0, 3, MN_MAX_RANK) || !need_float(c, n, 0)) return false;
    MNType *x = T(n, 0);
    int64_t dims[MN_MAX_RANK];
    for (int i = 0; i < x->rank; i++) dims[i] = i < 2 ? x->dims[i] : 1;
    return set_out(c, n, 0, x->elem, x->rank, dims);
}

/* ---- reductions ---- */

/* Axes of a Reduce*: an attribute until the op moved it to input 1 (ReduceSum at 13,
 * the others at 18). Returns the reduced-axis mask in *mask. */
static bool reduce_axes(MNInfer *c, MNNode *n, bool *mask) {
    int rank = T(n, 0)->rank;
    bool from_input = c->opset >= (n->op == OP_ReduceSum ? 13 : 18);
    IntList ax;
    if (from_input ? !ints_input(c, n, 1, "axes", &ax) : !ints_attr(c, n, "axes", &ax)) return false;
    if (!from_input && n->nin > 1)
        return infer_fail(c, n, NULL, "takes axes as an attribute at opset %lld", (long long)c->opset);
    bool noop = ir_attr_int(n, "noop_with_empty_axes", 0) != 0;
    for (int i = 0; i < MN_MAX_RANK; i++) mask[i] = i < rank && ax.n == 0 && !noop;
    for (int i = 0; i < ax.n; i++) {
        int a = 0;
        if (!infer_norm_axis(c, n, ax.v[i], rank, &a)) return false;
        if (mask[a] && ax.n) return infer_fail(c, n, NULL, "axis %lld repeated", (long long)ax.v[i]);
        mask[a] = true;
    }
    return true;
}

bool infer_reduce(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 2)) return false;
    MNType *x = T(n, 0);
    bool mask[MN_MAX_RANK];
    if (!reduce_axes(c, n, mask)) return false;
    bool keep = ir_attr_int(n, "keepdims", 1) != 0;
    int64_t dims[MN_MAX_RANK];
    int r = 0;
    for (int i = 0; i < x->rank; i++) {
        if (!mask[i])
            dims[r++] = x->dims[i];
        else if (keep)
            dims[r++] = 1;
    }
    return set_out(c, n, 0, x->elem, r, dims);
}

bool infer_argreduce(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 1)) return false;
    MNType *x = T(n, 0);
    int axis;
    if (!infer_norm_axis(c, n, ir_attr_int(n, "axis", 0), x->rank, &axis)) return false;
    bool keep = ir_attr_int(n, "keepdims", 1) != 0;
    int64_t dims[MN_MAX_RANK];
    int r = 0;
    for (int i = 0; i < x->rank; i++) {
        if (i != axis)
            dims[r++] = x->dims[i];
        else if (keep)
            dims[r++] = 1;
    }
    return set_out(c, n, 0, ONNX_INT64, r, dims);
}

/* ---- data movement ---- */

bool infer_reshape(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 2, 2)) return false;
    MNType *x = T(n, 0);
    IntList s;
    if (!ints_input(c, n, 1, "shape", &s)) return false;
    if (s.n > MN_MAX_RANK) return infer_unsupported(c, n, NULL, "rank above %d", MN_MAX_RANK);
    bool allowzero = ir_attr_int(n, "allowzero", 0) != 0;
    int64_t dims[MN_MAX_RANK], known = 1, total = ir_shape_numel(x);
    int infer_at = -1;
    for (int i = 0; i < s.n; i++) {
        int64_t v = s.v[i];
        if (v == 0 && !allowzero) {
            if (i >= x->rank)
                return infer_fail(c, n, n->in[1], "shape entry %d is 0 but the input has rank %d", i, x->rank);
            v = x->dims[i];
        }
        if (v == -1) {
            if (infer_at >= 0) return infer_fail(c, n, n->in[1], "more than one -1 in the shape");
            infer_at = i;
            dims[i] = 1;
            continue;
        }
        if (v < 0) return infer_fail(c, n, n->in[1], "shape entry %d is %lld", i, (long long)v);
        dims[i] = v;
        if (v && known > INT64_MAX / v) return infer_fail(c, n, n->in[1], "shape product overflows 64 bits");
        known *= v;
    }
    if (infer_at >= 0) {
        if (known == 0 || total % known)
            return infer_fail(c, n, n->in[1], "cannot infer the -1 dim: %lld elements into blocks of %lld",
                              (long long)total, (long long)known);
        dims[infer_at] = total / known;
    } else if (known != total)
        return infer_fail(c, n, n->in[1], "reshape of %lld elements ([%s]) into [%s] (%lld elements)", (long long)total,
                          ir_dims_str(c->g->arena, x->rank, x->dims), ir_dims_str(c->g->arena, s.n, dims),
                          (long long)known);
    return set_out(c, n, 0, x->elem, s.n, dims);
}

bool infer_flatten(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 1)) return false;
    MNType *x = T(n, 0);
    int64_t axis = ir_attr_int(n, "axis", 1);
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis > x->rank) return infer_fail(c, n, n->in[0], "axis out of range for rank %d", x->rank);
    int64_t dims[2] = {1, 1};
    for (int i = 0; i < x->rank; i++) dims[i >= axis] *= x->dims[i];
    return set_out(c, n, 0, x->elem, 2, dims);
}

static bool axes_list(MNInfer *c, MNNode *n, int since_input, IntList *ax) {
    if (c->opset >= since_input) return ints_input(c, n, 1, "axes", ax);
    if (n->nin > 1) return infer_fail(c, n, NULL, "takes axes as an attribute at opset %lld", (long long)c->opset);
    return ints_attr(c, n, "axes", ax);
}

bool infer_squeeze(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 2)) return false;
    MNType *x = T(n, 0);
    IntList ax;
    if (!axes_list(c, n, 13, &ax)) return false;
    bool drop[MN_MAX_RANK] = {0};
    for (int i = 0; i < ax.n; i++) {
        int a = 0;
        if (!infer_norm_axis(c, n, ax.v[i], x->rank, &a)) return false;
        if (x->dims[a] != 1)
            return infer_fail(c, n, n->in[0], "cannot squeeze axis %d of size %lld", a, (long long)x->dims[a]);
        drop[a] = true;
    }
    int64_t dims[MN_MAX_RANK];
    int r = 0;
    for (int i = 0; i < x->rank; i++)
        if (!(ax.n ? drop[i] : x->dims[i] == 1)) dims[r++] = x->dims[i];
    return set_out(c, n, 0, x->elem, r, dims);
}

bool infer_unsqueeze(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 2)) return false;
    MNType *x = T(n, 0);
    IntList ax;
    if (!axes_list(c, n, 13, &ax)) return false;
    if (!ax.present) return infer_fail(c, n, NULL, "missing axes");
    int r = x->rank + ax.n;
    if (r > MN_MAX_RANK) return infer_unsupported(c, n, NULL, "rank above %d", MN_MAX_RANK);
    bool ins[MN_MAX_RANK] = {0};
    for (int i = 0; i < ax.n; i++) {
        int a = 0;
        if (!infer_norm_axis(c, n, ax.v[i], r, &a)) return false;
        if (ins[a]) return infer_fail(c, n, NULL, "axis %lld repeated", (long long)ax.v[i]);
        ins[a] = true;
    }
    int64_t dims[MN_MAX_RANK];
    for (int i = 0, j = 0; i < r; i++) dims[i] = ins[i] ? 1 : x->dims[j++];
    return set_out(c, n, 0, x->elem, r, dims);
}

bool infer_transpose(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 1)) return false;
    MNType *x = T(n, 0);
    IntList p;
    if (!ints_attr(c, n, "perm", &p)) return false;
    if (p.present && p.n != x->rank) return infer_fail(c, n, NULL, "perm has %d entries for rank %d", p.n, x->rank);
    bool seen[MN_MAX_RANK] = {0};
    int64_t dims[MN_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        int64_t a = p.present ? p.v[i] : x->rank - 1 - i;
        if (a < 0 || a >= x->rank || seen[a])
            return infer_fail(c, n, NULL, "perm is not a permutation of 0..%d", x->rank - 1);
        seen[a] = true;
        dims[i] = x->dims[a];
    }
    return set_out(c, n, 0, x->elem, x->rank, dims);
}

bool infer_concat(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 1 << 20)) return false;
    const MNAttr *aa = ir_attr(n, "axis");
    if (!aa) {
        if (c->opset >= 4) return infer_fail(c, n, NULL, "missing required attribute 'axis'");
    }
    MNType *x = T(n, 0);
    int axis;
    if (!infer_norm_axis(c, n, aa ? aa->i : 1, x->rank, &axis)) return false;
    if (x->rank == 0) return infer_fail(c, n, n->in[0], "cannot concatenate scalars");
    int64_t dims[MN_MAX_RANK];
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    for (int k = 1; k < n->nin; k++) {
        MNType *t = T(n, k);
        if (!t) return infer_fail(c, n, NULL, "empty input %d", k);
        if (!same_elem(c, n, 0, k)) return false;
        if (t->rank != x->rank) return infer_fail(c, n, n->in[k], "rank %d differs from %d", t->rank, x->rank);
        for (int i = 0; i < x->rank; i++)
            if (i != axis && t->dims[i] != x->dims[i])
                return infer_fail(c, n, n->in[k], "dim %d is %lld, expected %lld", i, (long long)t->dims[i],
                                  (long long)x->dims[i]);
        if (!dim_add(dims[axis], t->dims[axis], &dims[axis]))
            return infer_fail(c, n, n->in[k], "concatenated size overflows 64 bits");
    }
    return set_out(c, n, 0, x->elem, x->rank, dims);
}

/* Split sizes along the axis: from the attribute/input, from num_outputs, or equal. */
bool infer_split_sizes(MNInfer *c, MNNode *n, int *axis_out, int64_t *sizes);
bool infer_split_sizes(MNInfer *c, MNNode *n, int *axis_out, int64_t *sizes) {
    MNType *x = T(n, 0);
    int axis;
    if (!infer_norm_axis(c, n, ir_attr_int(n, "axis", 0), x->rank, &axis)) return false;
    if (x->rank == 0) return infer_fail(c, n, n->in[0], "cannot split a scalar");
    int64_t len = x->dims[axis];
    int nout = n->nout;
    if (nout > (int)(MN_MAX_RANK * 2 + 8))
        return infer_unsupported(c, n, NULL, "more than %d outputs", MN_MAX_RANK * 2 + 8);
    IntList sp;
    if (c->opset >= 13 ? !ints_input(c, n, 1, "split", &sp) : !ints_attr(c, n, "split", &sp)) return false;
    if (sp.present && sp.n > 0) {
        if (sp.n != nout) return infer_fail(c, n, NULL, "split has %d entries for %d outputs", sp.n, nout);
        int64_t sum = 0;
        for (int i = 0; i < nout; i++) {
            if (sp.v[i] < 0) return infer_fail(c, n, NULL, "negative split size");
            sizes[i] = sp.v[i];
            if (!dim_add(sum, sp.v[i], &sum)) return infer_fail(c, n, NULL, "split sizes overflow 64 bits");
        }
        if (sum != len)
            return infer_fail(c, n, NULL, "split sizes sum to %lld, axis has %lld", (long long)sum, (long long)len);
    } else {
        const MNAttr *no = ir_attr(n, "num_outputs");
        if (no && no->i != nout)
            return infer_fail(c, n, NULL, "num_outputs %lld but %d outputs", (long long)no->i, nout);
        if (!no && len % nout)
            return infer_fail(c, n, NULL, "axis of %lld does not split evenly into %d", (long long)len, nout);
        int64_t chunk = (len + nout - 1) / nout;
        for (int i = 0; i < nout; i++) {
            int64_t rest = len - chunk * i;
            sizes[i] = rest < 0 ? 0 : rest < chunk ? rest : chunk;
        }
    }
    *axis_out = axis;
    return true;
}

bool infer_split(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 2)) return false;
    int axis;
    int64_t sizes[MN_MAX_RANK * 2 + 8];
    if (!infer_split_sizes(c, n, &axis, sizes)) return false;
    MNType *x = T(n, 0);
    int64_t dims[MN_MAX_RANK];
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    for (int k = 0; k < n->nout; k++) {
        dims[axis] = sizes[k];
        if (!set_out(c, n, k, x->elem, x->rank, dims)) return false;
    }
    return true;
}

/* Normalised Slice parameters: per axis start, step and count. */
bool infer_slice_params(MNInfer *c, MNNode *n, int64_t *start, int64_t *step, int64_t *count);
bool infer_slice_params(MNInfer *c, MNNode *n, int64_t *start, int64_t *step, int64_t *count) {
    MNType *x = T(n, 0);
    IntList st, en, ax, sp;
    if (c->opset >= 10) {
        if (!need_inputs(c, n, 3, 5) || !ints_input(c, n, 1, "starts", &st) || !ints_input(c, n, 2, "ends", &en) ||
            !ints_input(c, n, 3, "axes", &ax) || !ints_input(c, n, 4, "steps", &sp))
            return false;
    } else {
        if (!need_inputs(c, n, 1, 1) || !ints_attr(c, n, "starts", &st) || !ints_attr(c, n, "ends", &en) ||
            !ints_attr(c, n, "axes", &ax))
            return false;
        if (!st.present || !en.present) return infer_fail(c, n, NULL, "missing required attribute 'starts' or 'ends'");
        sp.n = 0, sp.present = false;
    }
    if (st.n != en.n || (ax.present && ax.n != st.n) || (sp.present && sp.n != st.n))
        return infer_fail(c, n, NULL, "starts, ends, axes and steps differ in length");
    for (int i = 0; i < x->rank; i++) start[i] = 0, step[i] = 1, count[i] = x->dims[i];
    bool seen[MN_MAX_RANK] = {0};
    for (int i = 0; i < st.n; i++) {
        int a = 0;
        if (!infer_norm_axis(c, n, ax.present ? ax.v[i] : i, x->rank, &a)) return false;
        if (seen[a]) return infer_fail(c, n, NULL, "axis %d repeated", a);
        seen[a] = true;
        int64_t d = x->dims[a], s = st.v[i], e = en.v[i], k = sp.present ? sp.v[i] : 1;
        if (k == 0) return infer_fail(c, n, NULL, "step 0 on axis %d", a);
        /* steps beyond the axis length behave like the axis length; clamping keeps the
         * count arithmetic below from overflowing */
        if (k > d + 1) k = d + 1;
        if (k < -(d + 1)) k = -(d + 1);
        if (s < 0) s += d;
        if (e < 0 && e > INT64_MIN / 2) e += d;
        if (k > 0) {
            s = s < 0 ? 0 : s > d ? d : s;
            e = e < 0 ? 0 : e > d ? d : e;
            count[a] = e > s ? (e - s + k - 1) / k : 0;
        } else {
            s = s < 0 ? -1 : s > d - 1 ? d - 1 : s;
            e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
            count[a] = s > e ? (s - e + (-k) - 1) / (-k) : 0;
        }
        start[a] = s;
        step[a] = k;
    }
    return true;
}

bool infer_slice(MNInfer *c, MNNode *n) {
    int64_t start[MN_MAX_RANK], step[MN_MAX_RANK], count[MN_MAX_RANK];
    if (!infer_in(n, 0)) return need_inputs(c, n, 1, 5);
    if (!infer_slice_params(c, n, start, step, count)) return false;
    return set_out(c, n, 0, T(n, 0)->elem, T(n, 0)->rank, count);
}

bool infer_gather(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 2, 2)) return false;
    MNType *x = T(n, 0), *idx = T(n, 1);
    if (idx->elem != ONNX_INT32 && idx->elem != ONNX_INT64)
        return infer_fail(c, n, n->in[1], "indices must be int32 or int64");
    int axis;
    if (x->rank < 1) return infer_fail(c, n, n->in[0], "cannot gather from a scalar");
    if (!infer_norm_axis(c, n, ir_attr_int(n, "axis", 0), x->rank, &axis)) return false;
    int r = x->rank - 1 + idx->rank;
    if (r > MN_MAX_RANK) return infer_unsupported(c, n, NULL, "rank above %d", MN_MAX_RANK);
    if (n->in[1]->konst) {
        const MNTensor *t = n->in[1]->konst;
        for (int64_t i = 0; i < t->numel; i++) {
            int64_t v = ir_tensor_get_i(t, i);
            if (v < -x->dims[axis] || v >= x->dims[axis])
                return infer_fail(c, n, n->in[1], "index %lld out of range for axis of size %lld", (long long)v,
                                  (long long)x->dims[axis]);
        }
    }
    int64_t dims[MN_MAX_RANK];
    int j = 0;
    for (int i = 0; i < axis; i++) dims[j++] = x->dims[i];
    for (int i = 0; i < idx->rank; i++) dims[j++] = idx->dims[i];
    for (int i = axis + 1; i < x->rank; i++) dims[j++] = x->dims[i];
    return set_out(c, n, 0, x->elem, r, dims);
}

bool infer_gather_elements(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 2, 2)) return false;
    MNType *x = T(n, 0), *idx = T(n, 1);
    int axis;
    if (idx->rank != x->rank)
        return infer_fail(c, n, n->in[1], "indices rank %d differs from data rank %d", idx->rank, x->rank);
    if (!infer_norm_axis(c, n, ir_attr_int(n, "axis", 0), x->rank, &axis)) return false;
    return set_out(c, n, 0, x->elem, idx->rank, idx->dims);
}

/* Pads as begin[rank], end[rank] with the opset's conventions (attribute before 11,
 * input with optional axes from 18). */
bool infer_pad_amounts(MNInfer *c, MNNode *n, int64_t *pb, int64_t *pe);
bool infer_pad_amounts(MNInfer *c, MNNode *n, int64_t *pb, int64_t *pe) {
    MNType *x = T(n, 0);
    IntList p, ax;
    ax.n = 0, ax.present = false;
    if (c->opset >= 11) {
        if (!ints_input(c, n, 1, "pads", &p)) return false;
        if (!p.present) return infer_fail(c, n, NULL, "missing input 'pads'");
        if (c->opset >= 18 && !ints_input(c, n, 3, "axes", &ax)) return false;
    } else if (!ints_attr(c, n, "pads", &p))
        return false;
    else if (!p.present)
        return infer_fail(c, n, NULL, "missing required attribute 'pads'");
    int na = ax.present ? ax.n : x->rank;
    if (p.n != 2 * na) return infer_fail(c, n, NULL, "pads has %d entries, expected %d", p.n, 2 * na);
    for (int i = 0; i < x->rank; i++) pb[i] = pe[i] = 0;
    for (int i = 0; i < na; i++) {
        int a = i;
        if (ax.present && !infer_norm_axis(c, n, ax.v[i], x->rank, &a)) return false;
        pb[a] = p.v[i];
        pe[a] = p.v[i + na];
        if (pb[a] > PAD_LIMIT || pe[a] > PAD_LIMIT || pb[a] < -PAD_LIMIT || pe[a] < -PAD_LIMIT)
            return infer_fail(c, n, NULL, "pads out of range");
    }
    const char *mode = ir_attr_string(n, "mode", "constant");
    if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge") && strcmp(mode, "wrap"))
        return infer_fail(c, n, NULL, "unknown mode '%s'", mode);
    if (!strcmp(mode, "wrap") && c->opset < 19) return infer_fail(c, n, NULL, "mode 'wrap' needs opset 19");
    return true;
}

bool infer_pad(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 4)) return false;
    MNType *x = T(n, 0);
    int64_t pb[MN_MAX_RANK], pe[MN_MAX_RANK], dims[MN_MAX_RANK];
    if (!infer_pad_amounts(c, n, pb, pe)) return false;
    for (int i = 0; i < x->rank; i++) {
        dims[i] = x->dims[i] + pb[i] + pe[i];
        if (dims[i] < 0) return infer_fail(c, n, NULL, "padding makes axis %d negative", i);
    }
    return set_out(c, n, 0, x->elem, x->rank, dims);
}

bool infer_resize(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 4)) return false;
    MNType *x = T(n, 0);
    int scales_at = n->op == OP_Upsample || c->opset < 11 ? 1 : 2, sizes_at = 3;
    const char *mode = ir_attr_string(n, "mode", "nearest");
    if (strcmp(mode, "nearest") && strcmp(mode, "linear") && strcmp(mode, "cubic") && strcmp(mode, "bilinear"))
        return infer_fail(c, n, NULL, "unknown mode '%s'", mode);
    IntList ax;
    if (!ints_attr(c, n, "axes", &ax)) return false;
    int na = ax.present ? ax.n : x->rank;
    int axis_of[MN_MAX_RANK];
    for (int i = 0; i < na; i++)
        if (!infer_norm_axis(c, n, ax.present ? ax.v[i] : i, x->rank, &axis_of[i])) return false;
    int64_t dims[MN_MAX_RANK];
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    MNValue *sz = infer_in(n, sizes_at), *sc = infer_in(n, scales_at);
    if (sc && sc->type.rank == 1 && sc->type.dims[0] == 0) sc = NULL; /* empty scales: use sizes */
    if (sz && sc) return infer_fail(c, n, NULL, "only one of scales and sizes may be given");
    if (sz) {
        IntList s;
        if (!ints_input(c, n, sizes_at, "sizes", &s)) return false;
        if (s.n != na) return infer_fail(c, n, sz, "sizes has %d entries, expected %d", s.n, na);
        const char *pol = ir_attr_string(n, "keep_aspect_ratio_policy", "stretch");
        double scale = strcmp(pol, "not_larger") ? 0 : 1e300;
        for (int i = 0; i < na && strcmp(pol, "stretch"); i++) {
            double r = (double)s.v[i] / (double)x->dims[axis_of[i]];
            scale = !strcmp(pol, "not_larger") ? fmin(scale, r) : fmax(scale, r);
        }
        for (int i = 0; i < na; i++) {
            double o = strcmp(pol, "stretch") ? floor((double)x->dims[axis_of[i]] * scale + 0.5) : (double)s.v[i];
            if (!(o >= 0 && o < 9e18)) return infer_fail(c, n, sz, "sizes out of range");
            dims[axis_of[i]] = (int64_t)o;
        }
    } else if (sc) {
        const MNTensor *t = infer_const_input(c, n, scales_at, "scales");
        if (!t) return false;
        if (t->numel != na)
            return infer_fail(c, n, sc, "scales has %lld entries, expected %d", (long long)t->numel, na);
        for (int i = 0; i < na; i++) {
            double s = ir_tensor_get_f(t, i);
            if (!(s > 0)) return infer_fail(c, n, sc, "scale %g is not positive", s);
            double o = floor((double)x->dims[axis_of[i]] * s);
            if (!(o < 9e18)) return infer_fail(c, n, sc, "scale %g gives an output size out of range", s);
            dims[axis_of[i]] = (int64_t)o;
        }
    } else if (n->op == OP_Upsample) {
        return infer_fail(c, n, NULL, "missing input 'scales'");
    } else
        return infer_fail(c, n, NULL, "one of scales and sizes is required");
    return set_out(c, n, 0, x->elem, x->rank, dims);
}

bool infer_expand(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 2, 2)) return false;
    IntList s;
    if (!ints_input(c, n, 1, "shape", &s)) return false;
    if (s.n > MN_MAX_RANK) return infer_unsupported(c, n, NULL, "rank above %d", MN_MAX_RANK);
    for (int i = 0; i < s.n; i++)
        if (s.v[i] < 0) return infer_fail(c, n, n->in[1], "shape entry %d is %lld", i, (long long)s.v[i]);
    MNType st = {ONNX_INT64, s.n, s.v, NULL};
    const MNType *ts[2] = {T(n, 0), &st};
    int r;
    int64_t dims[MN_MAX_RANK];
    if (!infer_broadcast(c, n, 2, ts, &r, dims)) return false;
    return set_out(c, n, 0, T(n, 0)->elem, r, dims);
}

bool infer_tile(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 2, 2)) return false;
    MNType *x = T(n, 0);
    IntList r;
    if (!ints_input(c, n, 1, "repeats", &r)) return false;
    if (r.n != x->rank) return infer_fail(c, n, n->in[1], "repeats has %d entries for rank %d", r.n, x->rank);
    int64_t dims[MN_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        if (r.v[i] < 0) return infer_fail(c, n, n->in[1], "negative repeat");
        if (r.v[i] && x->dims[i] > INT64_MAX / r.v[i])
            return infer_fail(c, n, n->in[1], "tiled size overflows 64 bits");
        dims[i] = x->dims[i] * r.v[i];
    }
    return set_out(c, n, 0, x->elem, x->rank, dims);
}

bool infer_depth_to_space(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 1) || !need_rank(c, n, 0, 4, 4)) return false;
    MNType *x = T(n, 0);
    int64_t b = ir_attr_int(n, "blocksize", 0);
    if (b < 1 || b > ATTR_LIMIT) return infer_fail(c, n, NULL, "missing or bad required attribute 'blocksize'");
    const char *mode = ir_attr_string(n, "mode", "DCR");
    if (strcmp(mode, "DCR") && strcmp(mode, "CRD")) return infer_fail(c, n, NULL, "unknown mode '%s'", mode);
    if (x->dims[1] % (b * b))
        return infer_fail(c, n, n->in[0], "channels %lld not divisible by blocksize^2", (long long)x->dims[1]);
    int64_t dims[4] = {x->dims[0], x->dims[1] / (b * b), 0, 0};
    if (!dim_mul(x->dims[2], b, &dims[2]) || !dim_mul(x->dims[3], b, &dims[3]))
        return infer_fail(c, n, NULL, "output size overflows 64 bits");
    return set_out(c, n, 0, x->elem, 4, dims);
}

bool infer_space_to_depth(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 1) || !need_rank(c, n, 0, 4, 4)) return false;
    MNType *x = T(n, 0);
    int64_t b = ir_attr_int(n, "blocksize", 0);
    if (b < 1 || b > ATTR_LIMIT) return infer_fail(c, n, NULL, "missing or bad required attribute 'blocksize'");
    if (x->dims[2] % b || x->dims[3] % b) return infer_fail(c, n, n->in[0], "spatial dims not divisible by blocksize");
    int64_t dims[4] = {0, 0, x->dims[2] / b, x->dims[3] / b};
    dims[0] = x->dims[0];
    if (!dim_mul(x->dims[1], b * b, &dims[1])) return infer_fail(c, n, NULL, "output size overflows 64 bits");
    return set_out(c, n, 0, x->elem, 4, dims);
}

/* Shape's start/end (opset 15) clamp like Python slicing. */
void infer_shape_range(const MNNode *n, int rank, int *lo, int *hi);
void infer_shape_range(const MNNode *n, int rank, int *lo, int *hi) {
    int64_t s = ir_attr_int(n, "start", 0), e = ir_attr_int(n, "end", rank);
    if (s < 0) s += rank;
    if (e < 0) e += rank;
    s = s < 0 ? 0 : s > rank ? rank : s;
    e = e < 0 ? 0 : e > rank ? rank : e;
    *lo = (int)s;
    *hi = (int)(e > s ? e : s);
}

bool infer_shape(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 1)) return false;
    int lo, hi;
    infer_shape_range(n, T(n, 0)->rank, &lo, &hi);
    int64_t len = hi - lo;
    return set_out(c, n, 0, ONNX_INT64, 1, &len);
}

bool infer_size(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 1)) return false;
    return set_out(c, n, 0, ONNX_INT64, 0, NULL);
}

bool infer_constant_of_shape(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 1)) return false;
    IntList s;
    if (!ints_input(c, n, 0, "shape", &s)) return false;
    const MNAttr *v = ir_attr(n, "value");
    if (v && (v->type != MN_ATTR_TENSOR || v->t->numel != 1))
        return infer_fail(c, n, NULL, "attribute 'value' must be a one-element tensor");
    for (int i = 0; i < s.n; i++)
        if (s.v[i] < 0) return infer_fail(c, n, n->in[0], "shape entry %d is %lld", i, (long long)s.v[i]);
    return set_out(c, n, 0, v ? v->t->elem : ONNX_FLOAT32, s.n, s.v);
}

bool infer_range(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 3, 3)) return false;
    const MNTensor *t[3];
    for (int k = 0; k < 3; k++) {
        if (!(t[k] = infer_const_input(c, n, k, k == 0 ? "start" : k == 1 ? "limit" : "delta"))) return false;
        if (t[k]->numel != 1) return infer_fail(c, n, n->in[k], "must be a scalar");
        if (k && !same_elem(c, n, 0, k)) return false;
    }
    double s = ir_tensor_get_f(t[0], 0), l = ir_tensor_get_f(t[1], 0), d = ir_tensor_get_f(t[2], 0);
    if (d == 0) return infer_fail(c, n, n->in[2], "delta is 0");
    double cnt = ceil((l - s) / d);
    if (!(cnt < 9e15)) return infer_fail(c, n, NULL, "range has too many elements");
    int64_t len = cnt > 0 ? (int64_t)cnt : 0;
    return set_out(c, n, 0, t[0]->elem, 1, &len);
}

bool infer_constant(MNInfer *c, MNNode *n) {
    if (n->nin) return infer_fail(c, n, NULL, "Constant takes no inputs");
    if (n->nattr != 1) return infer_fail(c, n, NULL, "Constant needs exactly one value attribute, has %d", n->nattr);
    const MNAttr *a = &n->attrs[0];
    const char *nm = a->name;
    int64_t cnt = a->n;
    if (!strcmp(nm, "value") && a->type == MN_ATTR_TENSOR) return set_out(c, n, 0, a->t->elem, a->t->rank, a->t->dims);
    if (!strcmp(nm, "value_float") && a->type == MN_ATTR_FLOAT) return set_out(c, n, 0, ONNX_FLOAT32, 0, NULL);
    if (!strcmp(nm, "value_int") && a->type == MN_ATTR_INT) return set_out(c, n, 0, ONNX_INT64, 0, NULL);
    if (!strcmp(nm, "value_floats") && a->type == MN_ATTR_FLOATS) return set_out(c, n, 0, ONNX_FLOAT32, 1, &cnt);
    if (!strcmp(nm, "value_ints") && a->type == MN_ATTR_INTS) return set_out(c, n, 0, ONNX_INT64, 1, &cnt);
    if (!strcmp(nm, "sparse_value") || !strcmp(nm, "value_string") || !strcmp(nm, "value_strings"))
        return infer_unsupported(c, n, NULL, "Constant attribute '%s' is not supported", nm);
    return infer_fail(c, n, NULL, "Constant attribute '%s' has the wrong type or name", nm);
}

/* The pass body: infer every node in order, folding each one whose inputs are known. */
bool infer_check_attrs(MNInfer *c, MNNode *n);
bool infer_graph(MNGraph *g, MNDiag *d, int64_t fold_max_elems, int *nfolded) {
    MNInfer ic = {.g = g, .d = d, .opset = g->opset, .fold_max_elems = fold_max_elems};
    for (int i = 0; i < g->nnodes; i++) {
        MNNode *n = g->nodes[i];
        ASSERT(n->op != OP_UNSUPPORTED);
        for (int k = 0; k < n->nin; k++)
            if (n->in[k] && !ir_type_static(&n->in[k]->type))
                die("'%s' reached node '%s' without a static shape", n->in[k]->name, n->name);
        /* every op mncc takes has a first output (none has it optional, as LSTM does) */
        if (n->nout == 0 || !n->out[0])
            return infer_fail(&ic, n, NULL, "has no output 0, which %s always has", n->op_type);
        if (!infer_check_attrs(&ic, n) || !infer_ops[n->op].infer(&ic, n)) return false;
        /* every output an op defines is set by its infer function, so one left untyped
         * is an output the op does not have */
        for (int k = 0; k < n->nout; k++)
            if (n->out[k] && !n->out[k]->inferred)
                return infer_fail(&ic, n, n->out[k], "output %d is not an output of %s", k, n->op_type);
        if (!fold_ready(n)) continue;
        bool small = true;
        for (int k = 0; k < n->nout; k++)
            if (n->out[k] && ir_shape_numel(&n->out[k]->type) > fold_max_elems) small = false;
        if (!small) continue;
        int r = infer_ops[n->op].fold(&ic, n);
        if (r < 0) return false;
        if (r == 0) continue;
        n->dead = true;
        for (int k = 0; k < n->nout; k++)
            if (n->out[k]) {
                ASSERT(n->out[k]->konst);
                n->out[k]->producer = NULL;
            }
        ic.nfolded++;
    }
    ir_compact(g);
    *nfolded = ic.nfolded;
    return true;
}

bool infer_node_agrees(MNGraph *g, const MNNode *n, char *err, size_t errlen) {
    MNDiag d = {0};
    MNInfer ic = {.g = g, .d = &d, .opset = g->opset, .fold_max_elems = 0};
    MNNode t = *n; /* scratch copy: fresh outputs, so the graph's values stay untouched */
    t.out = ARENA_ARRAY(g->arena, MNValue *, n->nout ? n->nout : 1);
    for (int k = 0; k < n->nout; k++) {
        if (!n->out[k]) continue;
        MNValue *v = ARENA_NEW(g->arena, MNValue);
        *v = *n->out[k];
        v->type.rank = -1;
        v->type.dims = NULL;
        v->inferred = false;
        t.out[k] = v;
    }
    if (!infer_check_attrs(&ic, &t) || !infer_ops[n->op].infer(&ic, &t)) {
        snprintf(err, errlen, "node '%s' no longer passes inference: %s", n->name, d.msg);
        return false;
    }
    for (int k = 0; k < n->nout; k++) {
        const MNValue *have = n->out[k], *want = t.out[k];
        if (!have) continue;
        if (!want->inferred) {
            snprintf(err, errlen, "node '%s': output %d is not an output of %s", n->name, k, n->op_type);
            return false;
        }
        bool same = have->type.rank == want->type.rank && have->type.elem == want->type.elem;
        for (int i = 0; same && i < have->type.rank; i++) same = have->type.dims[i] == want->type.dims[i];
        if (!same) {
            snprintf(err, errlen, "node '%s': output '%s' is %s, its inputs and attributes give %s", n->name,
                     have->name, ir_dims_str(g->arena, have->type.rank, have->type.dims),
                     ir_dims_str(g->arena, want->type.rank, want->type.dims));
            return false;
        }
    }
    return true;
}

/* mncc's im2col (planners/conv_lower.c): [N*OH*OW, C*KH*KW rounded up to 8] from X */
bool infer_im2col(MNInfer *c, MNNode *n) {
    if (!need_inputs(c, n, 1, 1) || !need_rank(c, n, 0, 4, 4) || !need_float(c, n, 0)) return false;
    const MNAttr *ks = ir_attr(n, "kernel_shape"), *os = ir_attr(n, "out_shape");
    if (!ks || !os || ks->type != MN_ATTR_INTS || os->type != MN_ATTR_INTS || ks->n != 2 || os->n != 3)
        return infer_fail(c, n, NULL, "kernel_shape and out_shape are required");
    const MNType *x = T(n, 0);
    int64_t dims[2] = {os->ints[0] * os->ints[1] * os->ints[2], (x->dims[1] * ks->ints[0] * ks->ints[1] + 7) / 8 * 8};
    return set_out(c, n, 0, x->elem, 2, dims);
}

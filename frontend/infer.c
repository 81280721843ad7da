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
bool infer_dim_add(int64_t a, int64_t b, int64_t *r) { return !__builtin_add_overflow(a, b, r); }
bool infer_dim_mul(int64_t a, int64_t b, int64_t *r) { return !__builtin_mul_overflow(a, b, r); }

/* Set output k, checking against what the model declared for it. */
bool infer_set_out(MNInfer *c, MNNode *n, int k, int32_t elem, int rank, const int64_t *dims) {
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
    MNType *t = infer_type(n, from);
    return infer_set_out(c, n, k, t->elem, t->rank, t->dims);
}

bool infer_need_inputs(MNInfer *c, MNNode *n, int min, int max) {
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
    MNType *t = infer_type(n, k);
    if (t && !onnx_type_is_float(t->elem))
        return infer_fail(c, n, n->in[k], "expects a floating-point tensor, got %s", onnx_type_name(t->elem));
    return true;
}

bool infer_need_rank(MNInfer *c, MNNode *n, int k, int lo, int hi) {
    MNType *t = infer_type(n, k);
    if (t->rank < lo || t->rank > hi) {
        if (lo == hi) return infer_fail(c, n, n->in[k], "expects rank %d, got %d", lo, t->rank);
        return infer_fail(c, n, n->in[k], "expects rank %d..%d, got %d", lo, hi, t->rank);
    }
    return true;
}

bool infer_same_elem(MNInfer *c, MNNode *n, int a, int b) {
    MNType *ta = infer_type(n, a), *tb = infer_type(n, b);
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

static bool ints_from_tensor(MNInfer *c, MNNode *n, const MNTensor *t, const char *what, IntList *out) {
    if (t->numel > (int64_t)(sizeof out->v / sizeof out->v[0]))
        return infer_unsupported(c, n, NULL, "%s has %lld entries, more than mncc handles", what, (long long)t->numel);
    if (onnx_type_is_float(t->elem)) return infer_fail(c, n, NULL, "%s must be an integer tensor", what);
    out->n = (int)t->numel;
    for (int64_t i = 0; i < t->numel; i++) out->v[i] = ir_tensor_get_i(t, i);
    out->present = true;
    return true;
}

bool infer_ints_attr(MNInfer *c, MNNode *n, const char *name, IntList *out) {
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

bool infer_ints_input(MNInfer *c, MNNode *n, int k, const char *what, IntList *out) {
    out->n = 0;
    out->present = false;
    if (!infer_in(n, k)) return true;
    const MNTensor *t = infer_const_input(c, n, k, what);
    return t && ints_from_tensor(c, n, t, what, out);
}

/* ---- elementwise ---- */

bool infer_unary(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 1, 1)) return false;
    if (n->op == OP_Not && infer_type(n, 0)->elem != ONNX_BOOL)
        return infer_fail(c, n, n->in[0], "Not expects a bool tensor");
    return same_as(c, n, 0, 0);
}

bool infer_predicate(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 1, 1) || !need_float(c, n, 0)) return false;
    return infer_set_out(c, n, 0, ONNX_BOOL, infer_type(n, 0)->rank, infer_type(n, 0)->dims);
}

bool infer_dropout(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 1, 3)) return false;
    return same_as(c, n, 0, 0) && infer_set_out(c, n, 1, ONNX_BOOL, infer_type(n, 0)->rank, infer_type(n, 0)->dims);
}

bool infer_clip(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 1, 3)) return false;
    for (int k = 1; k < n->nin; k++) {
        if (!n->in[k]) continue;
        if (infer_type(n, k)->rank > 1 || ir_shape_numel(infer_type(n, k)) != 1)
            return infer_fail(c, n, n->in[k], "Clip bounds must be scalars");
        if (!infer_same_elem(c, n, 0, k)) return false;
    }
    return same_as(c, n, 0, 0);
}

bool infer_cast(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 1, 1)) return false;
    const MNAttr *a = ir_attr(n, "to");
    if (!a) return infer_fail(c, n, NULL, "missing required attribute 'to'");
    if (!onnx_type_known((int32_t)a->i) || a->i == 0)
        return infer_fail(c, n, NULL, "attribute 'to' names unknown type %lld", (long long)a->i);
    if (!onnx_type_numeric((int32_t)a->i) || !onnx_type_numeric(infer_type(n, 0)->elem))
        return infer_unsupported(c, n, NULL, "Cast between %s and %s is not supported",
                                 onnx_type_name(infer_type(n, 0)->elem), onnx_type_name((int32_t)a->i));
    return infer_set_out(c, n, 0, (int32_t)a->i, infer_type(n, 0)->rank, infer_type(n, 0)->dims);
}

bool infer_castlike(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 2, 2)) return false;
    return infer_set_out(c, n, 0, infer_type(n, 1)->elem, infer_type(n, 0)->rank, infer_type(n, 0)->dims);
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
    return infer_set_out(c, n, 0, elem, rank, dims);
}

/* Before opset 7, B broadcasts to A only with broadcast=1, aligned at axis (numpy's
 * suffix alignment when axis is absent); without it the shapes are equal. Aligned at the
 * end, that is numpy broadcasting, which the rest of mncc implements; an alignment
 * elsewhere is refused. PRelu's slope of one channel count goes along axis 1 then: an
 * initializer is given its (C, 1, ...) shape, which numpy broadcasting then agrees with. */
static bool legacy_broadcast(MNInfer *c, MNNode *n) {
    if (c->opset >= 7 || n->nin != 2 || !n->in[0] || !n->in[1]) return true;
    MNType *a = infer_type(n, 0), *b = infer_type(n, 1);
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
            sl->konst->rank = a->rank - 1;
            sl->konst->dims = sl->type.dims;
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
    if (!infer_need_inputs(c, n, 2, 2)) return false;
    if (!legacy_broadcast(c, n)) return false;
    if (n->op != OP_Pow && !infer_same_elem(c, n, 0, 1)) return false;
    if (n->op == OP_BitShift && onnx_type_is_signed(infer_type(n, 0)->elem))
        return infer_fail(c, n, n->in[0], "BitShift expects unsigned integers");
    if (n->op == OP_PRelu) {
        /* the slope broadcasts to X unidirectionally */
        int rank;
        int64_t dims[MN_MAX_RANK];
        const MNType *ts[2] = {infer_type(n, 0), infer_type(n, 1)};
        if (!infer_broadcast(c, n, 2, ts, &rank, dims)) return false;
        if (rank != infer_type(n, 0)->rank || memcmp(dims, infer_type(n, 0)->dims, sizeof(int64_t) * (size_t)rank))
            return infer_fail(c, n, n->in[1], "slope does not broadcast to the input's shape");
    }
    return broadcast_all(c, n, 0, infer_type(n, 0)->elem);
}

bool infer_variadic(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 1, 1 << 20)) return false;
    for (int k = 1; k < n->nin; k++)
        if (!n->in[k] || !infer_same_elem(c, n, 0, k))
            return n->in[k] ? false : infer_fail(c, n, NULL, "empty input %d", k);
    return broadcast_all(c, n, 0, infer_type(n, 0)->elem);
}

bool infer_compare(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 2, 2) || !legacy_broadcast(c, n) || !infer_same_elem(c, n, 0, 1)) return false;
    if ((n->op == OP_And || n->op == OP_Or || n->op == OP_Xor) && infer_type(n, 0)->elem != ONNX_BOOL)
        return infer_fail(c, n, n->in[0], "%s expects bool tensors", n->op_type);
    return broadcast_all(c, n, 0, ONNX_BOOL);
}

bool infer_where(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 3, 3) || !infer_same_elem(c, n, 1, 2)) return false;
    if (infer_type(n, 0)->elem != ONNX_BOOL) return infer_fail(c, n, n->in[0], "condition must be bool");
    return broadcast_all(c, n, 0, infer_type(n, 1)->elem);
}

/* Trilu: the input's type; k (optional) one int64. Codegen needs k at compile time
 * (planners/mask_lower.c), inference does not: the output's shape is the input's. */
bool infer_trilu(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 1, 2) || !infer_need_rank(c, n, 0, 2, MN_MAX_RANK)) return false;
    MNType *k = infer_type(n, 1);
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
    if (!infer_need_inputs(c, n, 2, 2)) return false;
    MNType *a = infer_type(n, 0), *b = infer_type(n, 1);
    if (a->rank != b->rank || memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) ||
        mn_dtype_bytes(onnx_type_default_mn(a->elem)) != mn_dtype_bytes(onnx_type_default_mn(b->elem)))
        return infer_fail(c, n, n->in[1], "operands differ in shape or element width");
    return same_as(c, n, 0, 0);
}

/* ---- linear algebra ---- */

bool infer_matmul(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 2, 2) || !infer_same_elem(c, n, 0, 1)) return false;
    MNType *a = infer_type(n, 0), *b = infer_type(n, 1);
    if (a->rank < 1 || b->rank < 1) return infer_fail(c, n, NULL, "MatMul operands must have rank >= 1");
    /* numpy matmul: 1-D operands get a dim prepended/appended, removed afterwards */
    int64_t ad[MN_MAX_RANK + 1], bd[MN_MAX_RANK + 1];
    int ar = a->rank, br = b->rank;
    if (ar > MN_MAX_RANK || br > MN_MAX_RANK) return infer_unsupported(c, n, NULL, "rank above %d", MN_MAX_RANK);
    memcpy(ad + (ar == 1), a->dims, sizeof(int64_t) * (size_t)ar);
    memcpy(bd, b->dims, sizeof(int64_t) * (size_t)br);
    if (ar == 1) {
        ad[0] = 1;
        ar = 2;
    }
    if (br == 1) {
        bd[1] = 1;
        br = 2;
    }
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
    return infer_set_out(c, n, 0, a->elem, r, dims);
}

bool infer_gemm(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 2, 3) || !infer_same_elem(c, n, 0, 1) || !infer_need_rank(c, n, 0, 2, 2) ||
        !infer_need_rank(c, n, 1, 2, 2))
        return false;
    int ta = (int)ir_attr_int(n, "transA", 0), tb = (int)ir_attr_int(n, "transB", 0);
    MNType *a = infer_type(n, 0), *b = infer_type(n, 1);
    int64_t m = a->dims[ta ? 1 : 0], k = a->dims[ta ? 0 : 1], k2 = b->dims[tb ? 1 : 0], nn = b->dims[tb ? 0 : 1];
    if (k != k2) return infer_fail(c, n, NULL, "inner dimensions differ (%lld vs %lld)", (long long)k, (long long)k2);
    int64_t dims[2] = {m, nn};
    if (infer_in(n, 2)) {
        if (!infer_same_elem(c, n, 0, 2)) return false;
        MNType out = {a->elem, 2, dims, NULL};
        const MNType *ts[2] = {&out, infer_type(n, 2)};
        int r;
        int64_t bd[MN_MAX_RANK];
        if (infer_type(n, 2)->rank > 2 || !infer_broadcast(c, n, 2, ts, &r, bd) || bd[0] != m || bd[1] != nn)
            return diag_failed(c->d)
                       ? false
                       : infer_fail(c, n, n->in[2], "C does not broadcast to [%lld,%lld]", (long long)m, (long long)nn);
    } else if (c->opset < 11)
        return infer_fail(c, n, NULL, "input C is required before opset 11");
    return infer_set_out(c, n, 0, a->elem, 2, dims);
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
    if (!infer_ints_attr(c, n, "kernel_shape", &ks) || !infer_ints_attr(c, n, "strides", &st) ||
        !infer_ints_attr(c, n, "dilations", &dl) || !infer_ints_attr(c, n, "pads", &pd))
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
        if (!infer_dim_add(in[i], w->pb[i] + w->pe[i] - ek, &span))
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
    if (!infer_need_inputs(c, n, 2, 3) || !infer_same_elem(c, n, 0, 1) || !infer_need_rank(c, n, 0, 3, MN_MAX_RANK) ||
        !need_float(c, n, 0))
        return false;
    MNType *x = infer_type(n, 0), *wt = infer_type(n, 1);
    if (wt->rank != x->rank)
        return infer_fail(c, n, n->in[1], "weight rank %d differs from input rank %d", wt->rank, x->rank);
    int64_t group = ir_attr_int(n, "group", 1), cin = 0;
    if (group < 1 || group > ATTR_LIMIT || !infer_dim_mul(wt->dims[1], group, &cin) || x->dims[1] % group ||
        wt->dims[0] % group || cin != x->dims[1])
        return infer_fail(c, n, n->in[1], "channels do not match: input has %lld, weight [%s] with group %lld",
                          (long long)x->dims[1], ir_dims_str(c->g->arena, wt->rank, wt->dims), (long long)group);
    if (infer_in(n, 2) && (infer_type(n, 2)->rank != 1 || infer_type(n, 2)->dims[0] != wt->dims[0]))
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
    return infer_set_out(c, n, 0, x->elem, x->rank, dims);
}

bool infer_conv_transpose(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 2, 3) || !infer_same_elem(c, n, 0, 1) || !infer_need_rank(c, n, 0, 3, MN_MAX_RANK) ||
        !need_float(c, n, 0))
        return false;
    MNType *x = infer_type(n, 0), *wt = infer_type(n, 1);
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
    if (!infer_ints_attr(c, n, "output_padding", &op) || !infer_ints_attr(c, n, "output_shape", &os)) return false;
    if (op.present && op.n != ns)
        return infer_fail(c, n, NULL, "output_padding has %d entries for %d spatial dims", op.n, ns);
    if (os.present && os.n != ns && os.n != ns + 2) return infer_fail(c, n, NULL, "output_shape has %d entries", os.n);
    int64_t dims[MN_MAX_RANK];
    dims[0] = x->dims[0];
    if (!infer_dim_mul(wt->dims[1], group, &dims[1]))
        return infer_fail(c, n, n->in[1], "output channels overflow 64 bits");
    if (infer_in(n, 2) && (infer_type(n, 2)->rank != 1 || infer_type(n, 2)->dims[0] != dims[1]))
        return infer_fail(c, n, n->in[2], "bias must have shape [%lld]", (long long)dims[1]);
    for (int i = 0; i < ns; i++) {
        int64_t opad = op.present ? op.v[i] : 0, ek = (w.k[i] - 1) * w.d[i] + 1, full;
        if (opad < 0 || opad > PAD_LIMIT || !infer_dim_mul(w.s[i], x->dims[2 + i] - 1, &full) ||
            !infer_dim_add(full, opad + ek, &full))
            return infer_fail(c, n, NULL, "output size out of range at spatial axis %d", i);
        if (os.present) {
            dims[2 + i] = os.v[os.n - ns + i];
            int64_t total = full - dims[2 + i];
            if (total < 0) total = 0;
            bool lower = !strcmp(w.auto_pad, "SAME_LOWER");
            w.pb[i] = lower ? total - total / 2 : total / 2;
            w.pe[i] = total - w.pb[i];
        } else if (!strcmp(w.auto_pad, "SAME_UPPER") || !strcmp(w.auto_pad, "SAME_LOWER")) {
            if (!infer_dim_mul(x->dims[2 + i], w.s[i], &dims[2 + i]))
                return infer_fail(c, n, NULL, "output size overflows 64 bits");
        } else {
            if (!strcmp(w.auto_pad, "VALID")) w.pb[i] = w.pe[i] = 0;
            dims[2 + i] = full - w.pb[i] - w.pe[i];
        }
        if (dims[2 + i] < 1)
            return infer_fail(c, n, NULL, "output spatial dim %d would be %lld", i, (long long)dims[2 + i]);
    }
    return infer_set_out(c, n, 0, x->elem, x->rank, dims);
}

/* For the passes after inference, on a node it accepted: the window with its pads made
 * explicit (auto_pad, and for ConvTranspose output_shape, resolved as above). */
bool infer_window(MNGraph *g, MNNode *n, MNWindow *out) {
    MNDiag d = {0};
    MNInfer c = {g, &d, g->opset, 0, 0};
    const MNType *x = infer_type(n, 0);
    int ns = x->rank - 2;
    bool conv = n->op == OP_Conv || n->op == OP_ConvTranspose;
    int64_t kernel[MN_MAX_RANK];
    if (n->op == OP_GlobalAveragePool || n->op == OP_GlobalMaxPool) {
        memset(out, 0, sizeof *out);
        out->ns = ns;
        for (int i = 0; i < ns; i++) {
            out->k[i] = x->dims[2 + i];
            out->s[i] = out->d[i] = 1;
        }
        return true;
    }
    if (conv) memcpy(kernel, infer_type(n, 1)->dims + 2, sizeof(int64_t) * (size_t)ns);
    Window w;
    if (ns < 1 || !get_window(&c, n, ns, conv ? kernel : NULL, &w)) return false;
    int64_t o[MN_MAX_RANK];
    if (n->op == OP_ConvTranspose) {
        IntList op;
        if (!infer_ints_attr(&c, n, "output_padding", &op)) return false;
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
    for (int i = 0; i < ns; i++) {
        out->k[i] = w.k[i];
        out->s[i] = w.s[i];
        out->d[i] = w.d[i];
        out->pb[i] = w.pb[i];
        out->pe[i] = w.pe[i];
    }
    return true;
}

/* the reduced axes of an accepted reduction, for the passes after inference */
bool infer_reduce_mask(MNGraph *g, MNNode *n, bool *mask) {
    MNDiag d = {0};
    MNInfer c = {g, &d, g->opset, 0, 0};
    return reduce_axes(&c, n, mask);
}

bool infer_batchnorm(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 5, 5) || !infer_need_rank(c, n, 0, 2, MN_MAX_RANK) || !need_float(c, n, 0))
        return false;
    if (ir_attr_int(n, "training_mode", 0))
        return infer_unsupported(c, n, NULL, "training mode (statistics of the batch)");
    if (c->opset < 7 &&
        (!ir_attr_int(n, "is_test", 0) || !ir_attr_int(n, "spatial", 1))) /* opset 6: the same in test mode */
        return infer_unsupported(c, n, NULL, "training mode or spatial=0 (opset %lld)", (long long)c->opset);
    int64_t ch = infer_type(n, 0)->dims[1];
    for (int k = 1; k < 5; k++)
        if (infer_type(n, k)->rank != 1 || infer_type(n, k)->dims[0] != ch)
            return infer_fail(c, n, n->in[k], "expects shape [%lld] (the channel count)", (long long)ch);
    if (!same_as(c, n, 0, 0)) return false;
    for (int k = 1; k < n->nout; k++)
        if (!infer_set_out(c, n, k, infer_type(n, 1)->elem, 1, &ch)) return false;
    return true;
}

bool infer_layernorm(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 2, 3) || !need_float(c, n, 0)) return false;
    MNType *x = infer_type(n, 0);
    int axis;
    if (!infer_norm_axis(c, n, ir_attr_int(n, "axis", -1), x->rank, &axis)) return false;
    int64_t dims[MN_MAX_RANK];
    for (int i = 0; i < x->rank; i++) dims[i] = i < axis ? x->dims[i] : 1;
    for (int k = 1; k < n->nin && k < 3; k++) { /* Scale and B broadcast to the normalized shape */
        const MNType *p = infer_type(n, k);
        if (!p) continue;
        if (p->rank > x->rank - axis) return infer_fail(c, n, n->in[k], "does not broadcast to the normalized shape");
        for (int d = 0; d < p->rank; d++)
            if (p->dims[d] != 1 && p->dims[d] != x->dims[x->rank - p->rank + d])
                return infer_fail(c, n, n->in[k], "does not broadcast to the normalized shape");
    }
    if (!same_as(c, n, 0, 0)) return false;
    int32_t stash = (int32_t)ir_attr_int(n, "stash_type", ONNX_FLOAT32);
    if (!onnx_type_is_float(stash)) return infer_fail(c, n, NULL, "stash_type %d is not a floating-point type", stash);
    return infer_set_out(c, n, 1, stash, x->rank, dims) && infer_set_out(c, n, 2, stash, x->rank, dims);
}

/* RNN, GRU, LSTM: X (seq, batch, input), or (batch, seq, input) with layout 1; W (dirs, G H,
 * input), R (dirs, G H, H), B (dirs, 2 G H), sequence_lens (batch), initial_h and initial_c
 * (dirs, batch, H), P (dirs, 3 H), G the gates (1, 3, 4). Y (seq, dirs, batch, H), Y_h and Y_c
 * (dirs, batch, H); batch first with layout 1. The activations are checked where they are
 * lowered (planners/rnn_lower.c). */
bool infer_rnn(MNInfer *c, MNNode *n) {
    int G = n->op == OP_LSTM ? 4 : n->op == OP_GRU ? 3 : 1;
    if (!infer_need_inputs(c, n, 3, n->op == OP_LSTM ? 8 : 6) || !need_float(c, n, 0) || !need_float(c, n, 1) ||
        !need_float(c, n, 2) || !infer_need_rank(c, n, 0, 3, 3) || !infer_need_rank(c, n, 1, 3, 3) ||
        !infer_need_rank(c, n, 2, 3, 3))
        return false;
    const char *dir = ir_attr_string(n, "direction", "forward");
    int64_t dirs = !strcmp(dir, "bidirectional") ? 2 : 1, layout = ir_attr_int(n, "layout", 0);
    if (dirs == 1 && strcmp(dir, "forward") && strcmp(dir, "reverse"))
        return infer_fail(c, n, NULL, "direction '%s' is none of forward, reverse, bidirectional", dir);
    if (layout != 0 && layout != 1) return infer_fail(c, n, NULL, "layout %lld is neither 0 nor 1", (long long)layout);
    const MNType *x = infer_type(n, 0), *r = infer_type(n, 2);
    int64_t S = x->dims[layout], N = x->dims[1 - layout], I = x->dims[2], H = r->dims[2];
    if (ir_attr(n, "hidden_size") && ir_attr_int(n, "hidden_size", 0) != H)
        return infer_fail(c, n, n->in[2], "hidden_size %lld differs from R's last dimension %lld",
                          (long long)ir_attr_int(n, "hidden_size", 0), (long long)H);
    int64_t want[8][3] = {{0}, {dirs, G * H, I}, {dirs, G * H, H}, {dirs, 2 * G * H},
                          {N}, {dirs, N, H},     {dirs, N, H},     {dirs, 3 * H}};
    int rank[8] = {3, 3, 3, 2, 1, 3, 3, 2};
    for (int k = 1; k < n->nin && k < 8; k++) {
        const MNType *t = infer_type(n, k);
        if (!t) continue;
        bool bad = t->rank != rank[k];
        for (int d = 0; !bad && d < rank[k]; d++) bad = t->dims[d] != want[k][d];
        if (bad) return infer_fail(c, n, n->in[k], "expects shape [%s]", ir_dims_str(c->g->arena, rank[k], want[k]));
        if (k == 4 ? t->elem != ONNX_INT32 : t->elem != x->elem)
            return infer_fail(c, n, n->in[k], "has type %s", onnx_type_name(t->elem));
    }
    int64_t y[4] = {S, dirs, N, H}, yb[4] = {N, S, dirs, H}, h[3] = {dirs, N, H}, hb[3] = {N, dirs, H};
    if (!infer_set_out(c, n, 0, x->elem, 4, layout ? yb : y)) return false;
    for (int k = 1; k < n->nout && k < (n->op == OP_LSTM ? 3 : 2); k++)
        if (!infer_set_out(c, n, k, x->elem, 3, layout ? hb : h)) return false;
    return true;
}

bool infer_same_as_input0(MNInfer *c, MNNode *n) {
    int nin = n->op == OP_InstanceNormalization ? 3 : 1;
    if (!infer_need_inputs(c, n, nin, nin)) return false;
    MNType *x = infer_type(n, 0);
    if (n->op == OP_Softmax || n->op == OP_LogSoftmax || n->op == OP_Hardmax) {
        int axis;
        if (!need_float(c, n, 0) ||
            !infer_norm_axis(c, n, ir_attr_int(n, "axis", c->opset >= 13 ? -1 : 1), x->rank, &axis))
            return false;
    }
    if ((n->op == OP_InstanceNormalization || n->op == OP_LRN) &&
        (!infer_need_rank(c, n, 0, 3, MN_MAX_RANK) || !need_float(c, n, 0)))
        return false;
    if (n->op == OP_InstanceNormalization)
        for (int k = 1; k < 3; k++)
            if (infer_type(n, k)->rank != 1 || infer_type(n, k)->dims[0] != x->dims[1])
                return infer_fail(c, n, n->in[k], "expects shape [%lld] (the channel count)", (long long)x->dims[1]);
    if (n->op == OP_LRN && ir_attr_int(n, "size", 0) < 1)
        return infer_fail(c, n, NULL, "missing or bad required attribute 'size'");
    return same_as(c, n, 0, 0);
}

bool infer_pool(MNInfer *c, MNNode *n) {
    /* MaxPool takes 8-bit integers from opset 12 on; the averaging pools need floats */
    if (!infer_need_inputs(c, n, 1, 1)) return false;
    bool int_ok = n->op == OP_MaxPool && c->opset >= 12 &&
                  (infer_type(n, 0)->elem == ONNX_INT8 || infer_type(n, 0)->elem == ONNX_UINT8);
    if (!infer_need_rank(c, n, 0, 3, MN_MAX_RANK) || (!int_ok && !need_float(c, n, 0))) return false;
    MNType *x = infer_type(n, 0);
    Window w;
    if (!get_window(c, n, x->rank - 2, NULL, &w)) return false;
    if (n->op == OP_AveragePool && ir_attr(n, "dilations") && c->opset < 19)
        return infer_fail(c, n, NULL, "AveragePool has no 'dilations' before opset 19");
    int64_t dims[MN_MAX_RANK];
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    if (!window_out(c, n, &w, x->dims + 2, ir_attr_int(n, "ceil_mode", 0) != 0, dims + 2)) return false;
    if (!infer_set_out(c, n, 0, x->elem, x->rank, dims)) return false;
    if (n->nout > 1 && n->op != OP_MaxPool) return infer_fail(c, n, NULL, "has %d outputs, expects 1", n->nout);
    return infer_set_out(c, n, 1, ONNX_INT64, x->rank, dims);
}

bool infer_global_pool(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 1, 1) || !infer_need_rank(c, n, 0, 3, MN_MAX_RANK) || !need_float(c, n, 0))
        return false;
    MNType *x = infer_type(n, 0);
    int64_t dims[MN_MAX_RANK];
    for (int i = 0; i < x->rank; i++) dims[i] = i < 2 ? x->dims[i] : 1;
    return infer_set_out(c, n, 0, x->elem, x->rank, dims);
}

/* ---- reductions ---- */

/* Axes of a Reduce*: an attribute until the op moved it to input 1 (ReduceSum at 13,
 * the others at 18). Returns the reduced-axis mask in *mask. */
static bool reduce_axes(MNInfer *c, MNNode *n, bool *mask) {
    int rank = infer_type(n, 0)->rank;
    bool from_input = c->opset >= (n->op == OP_ReduceSum ? 13 : 18);
    IntList ax;
    if (from_input ? !infer_ints_input(c, n, 1, "axes", &ax) : !infer_ints_attr(c, n, "axes", &ax)) return false;
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
    if (!infer_need_inputs(c, n, 1, 2)) return false;
    MNType *x = infer_type(n, 0);
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
    return infer_set_out(c, n, 0, x->elem, r, dims);
}

bool infer_argreduce(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 1, 1)) return false;
    MNType *x = infer_type(n, 0);
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
    return infer_set_out(c, n, 0, ONNX_INT64, r, dims);
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
    if (!infer_need_inputs(c, n, 1, 1)) return false;
    int lo, hi;
    infer_shape_range(n, infer_type(n, 0)->rank, &lo, &hi);
    int64_t len = hi - lo;
    return infer_set_out(c, n, 0, ONNX_INT64, 1, &len);
}

bool infer_size(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 1, 1)) return false;
    return infer_set_out(c, n, 0, ONNX_INT64, 0, NULL);
}

bool infer_constant_of_shape(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 1, 1)) return false;
    IntList s;
    if (!infer_ints_input(c, n, 0, "shape", &s)) return false;
    const MNAttr *v = ir_attr(n, "value");
    if (v && (v->type != MN_ATTR_TENSOR || v->t->numel != 1))
        return infer_fail(c, n, NULL, "attribute 'value' must be a one-element tensor");
    for (int i = 0; i < s.n; i++)
        if (s.v[i] < 0) return infer_fail(c, n, n->in[0], "shape entry %d is %lld", i, (long long)s.v[i]);
    return infer_set_out(c, n, 0, v ? v->t->elem : ONNX_FLOAT32, s.n, s.v);
}

bool infer_range(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 3, 3)) return false;
    const MNTensor *t[3];
    for (int k = 0; k < 3; k++) {
        if (!(t[k] = infer_const_input(c, n, k, k == 0 ? "start" : k == 1 ? "limit" : "delta"))) return false;
        if (t[k]->numel != 1) return infer_fail(c, n, n->in[k], "must be a scalar");
        if (k && !infer_same_elem(c, n, 0, k)) return false;
    }
    double s = ir_tensor_get_f(t[0], 0), l = ir_tensor_get_f(t[1], 0), d = ir_tensor_get_f(t[2], 0);
    if (d == 0) return infer_fail(c, n, n->in[2], "delta is 0");
    double cnt = ceil((l - s) / d);
    if (!(cnt < 9e15)) return infer_fail(c, n, NULL, "range has too many elements");
    int64_t len = cnt > 0 ? (int64_t)cnt : 0;
    return infer_set_out(c, n, 0, t[0]->elem, 1, &len);
}

bool infer_constant(MNInfer *c, MNNode *n) {
    if (n->nin) return infer_fail(c, n, NULL, "Constant takes no inputs");
    if (n->nattr != 1) return infer_fail(c, n, NULL, "Constant needs exactly one value attribute, has %d", n->nattr);
    const MNAttr *a = &n->attrs[0];
    const char *nm = a->name;
    int64_t cnt = a->n;
    if (!strcmp(nm, "value") && a->type == MN_ATTR_TENSOR)
        return infer_set_out(c, n, 0, a->t->elem, a->t->rank, a->t->dims);
    if (!strcmp(nm, "value_float") && a->type == MN_ATTR_FLOAT) return infer_set_out(c, n, 0, ONNX_FLOAT32, 0, NULL);
    if (!strcmp(nm, "value_int") && a->type == MN_ATTR_INT) return infer_set_out(c, n, 0, ONNX_INT64, 0, NULL);
    if (!strcmp(nm, "value_floats") && a->type == MN_ATTR_FLOATS) return infer_set_out(c, n, 0, ONNX_FLOAT32, 1, &cnt);
    if (!strcmp(nm, "value_ints") && a->type == MN_ATTR_INTS) return infer_set_out(c, n, 0, ONNX_INT64, 1, &cnt);
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
        /* every op mncc takes has a first output, but the recurrent ones (lowered next) */
        bool rnn = n->op == OP_RNN || n->op == OP_GRU || n->op == OP_LSTM;
        if (n->nout == 0 || (!n->out[0] && !rnn))
            return infer_fail(&ic, n, NULL, "has no output 0, which %s always has", n->op_type);
        if (!infer_check_attrs(&ic, n) || !infer_ops[n->op].infer(&ic, n)) return false;
        if (n->dead) continue; /* a Loop or Scan, unrolled into the nodes after it */
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
    if (!infer_loops_done(&ic)) return false;
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
    if (!infer_need_inputs(c, n, 1, 1) || !infer_need_rank(c, n, 0, 4, 4) || !need_float(c, n, 0)) return false;
    const MNAttr *ks = ir_attr(n, "kernel_shape"), *os = ir_attr(n, "out_shape");
    if (!ks || !os || ks->type != MN_ATTR_INTS || os->type != MN_ATTR_INTS || ks->n != 2 || os->n != 3)
        return infer_fail(c, n, NULL, "kernel_shape and out_shape are required");
    const MNType *x = infer_type(n, 0);
    int64_t dims[2] = {os->ints[0] * os->ints[1] * os->ints[2], (x->dims[1] * ks->ints[0] * ks->ints[1] + 7) / 8 * 8};
    return infer_set_out(c, n, 0, x->elem, 2, dims);
}

/* Constant folding: evaluate a node whose inputs are all known at compile time.
 *
 * Exporters compute shapes at run time (Shape -> Gather -> Unsqueeze -> Concat ->
 * Reshape); with static input shapes all of that is known here, and folding it is what
 * turns such graphs into static ones. Weight preprocessing on initializers (Transpose,
 * Cast, Reshape of a parameter) folds too. Arithmetic is done in double (or int64 for
 * integers) and rounded once to the result type: for + - * / and sqrt that gives the
 * correctly rounded float32 result, i.e. what the hardware computes. Results above
 * fold_max_elems elements are left as nodes so a folded model cannot blow up in size. */
#include "infer.h"
#include <math.h>
#include <string.h>

bool fold_ready(const MNNode *n) {
    if (n->op == OP_Shape || n->op == OP_Size) return n->in[0] && ir_type_static(&n->in[0]->type);
    for (int k = 0; k < n->nin; k++)
        if (n->in[k] && !n->in[k]->konst) return false;
    return true;
}

static MNTensor *new_out(MNInfer *c, MNNode *n, int k) {
    MNValue *v = n->out[k];
    return ir_tensor_new(c->g->arena, v->type.elem, v->type.rank, v->type.dims);
}

static const MNTensor *K(const MNNode *n, int k) { return k < n->nin && n->in[k] ? n->in[k]->konst : NULL; }

static void strides_of(int rank, const int64_t *dims, int64_t *st) {
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) st[i] = s, s *= dims[i];
}

/* Strides of t seen through a broadcast to the output rank/dims (0 on broadcast axes). */
static void bstrides(const MNTensor *t, int rank, const int64_t *dims, int64_t *st) {
    int64_t own[MN_MAX_RANK];
    strides_of(t->rank, t->dims, own);
    for (int i = 0; i < rank; i++) {
        int j = i - (rank - t->rank);
        st[i] = j < 0 || t->dims[j] == 1 || dims[i] == 1 ? 0 : own[j];
    }
}

/* Odometer over an index space, tracking up to 4 linear offsets. */
typedef struct {
    int rank, ns;
    const int64_t *dims;
    int64_t idx[MN_MAX_RANK], st[4][MN_MAX_RANK], off[4];
} Iter;

static void iter_next(Iter *it) {
    for (int d = it->rank - 1; d >= 0; d--) {
        it->idx[d]++;
        for (int s = 0; s < it->ns; s++) it->off[s] += it->st[s][d];
        if (it->idx[d] < it->dims[d]) return;
        for (int s = 0; s < it->ns; s++) it->off[s] -= it->st[s][d] * it->idx[d];
        it->idx[d] = 0;
    }
}

/* ---- elementwise unary ---- */

static double erf_d(double x) { return erf(x); }

static double unary_f(const MNNode *n, double x) {
    double alpha, beta;
    switch (n->op) {
    case OP_Abs: return fabs(x);
    case OP_Neg: return -x;
    case OP_Exp: return exp(x);
    case OP_Log: return log(x);
    case OP_Sqrt: return sqrt(x);
    case OP_Reciprocal: return 1.0 / x;
    case OP_Floor: return floor(x);
    case OP_Ceil: return ceil(x);
    case OP_Round: return nearbyint(x); /* round half to even under the default mode */
    case OP_Sign: return x > 0 ? 1 : x < 0 ? -1 : x;
    case OP_Sin: return sin(x);
    case OP_Cos: return cos(x);
    case OP_Tan: return tan(x);
    case OP_Asin: return asin(x);
    case OP_Acos: return acos(x);
    case OP_Atan: return atan(x);
    case OP_Sinh: return sinh(x);
    case OP_Cosh: return cosh(x);
    case OP_Asinh: return asinh(x);
    case OP_Acosh: return acosh(x);
    case OP_Atanh: return atanh(x);
    case OP_Erf: return erf_d(x);
    case OP_Relu: return x > 0 ? x : x == 0 ? 0 : x < 0 ? 0 : x;
    case OP_LeakyRelu: return x >= 0 ? x : x * ir_attr_float(n, "alpha", 0.01);
    case OP_Elu: return x >= 0 ? x : ir_attr_float(n, "alpha", 1.0) * expm1(x);
    case OP_Selu:
        alpha = ir_attr_float(n, "alpha", 1.67326319217681884765625);
        beta = ir_attr_float(n, "gamma", 1.05070102214813232421875);
        return x > 0 ? beta * x : beta * alpha * expm1(x);
    case OP_Celu: alpha = ir_attr_float(n, "alpha", 1.0); return fmax(0, x) + fmin(0, alpha * expm1(x / alpha));
    case OP_ThresholdedRelu: return x > ir_attr_float(n, "alpha", 1.0) ? x : 0;
    case OP_Sigmoid: return 1.0 / (1.0 + exp(-x));
    case OP_HardSigmoid:
        alpha = ir_attr_float(n, "alpha", 0.2);
        beta = ir_attr_float(n, "beta", 0.5);
        return fmax(0, fmin(1, alpha * x + beta));
    case OP_HardSwish: return x * fmax(0, fmin(1, x / 6.0 + 0.5));
    case OP_Tanh: return tanh(x);
    case OP_Softplus: return x > 30 ? x : log1p(exp(x));
    case OP_Softsign: return x / (1 + fabs(x));
    case OP_Mish: return x * tanh(x > 30 ? x : log1p(exp(x)));
    case OP_Gelu:
        if (!strcmp(ir_attr_string(n, "approximate", "none"), "tanh"))
            return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
        return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    case OP_Shrink: {
        double l = ir_attr_float(n, "lambd", 0.5), b = ir_attr_float(n, "bias", 0.0);
        return x < -l ? x + b : x > l ? x - b : 0;
    }
    case OP_IsNaN: return isnan(x);
    case OP_IsInf: {
        bool pos = ir_attr_int(n, "detect_positive", 1), neg = ir_attr_int(n, "detect_negative", 1);
        return isinf(x) && ((x > 0 && pos) || (x < 0 && neg));
    }
    case OP_Not: return x == 0;
    default: die("no scalar evaluator for %s", n->op_type);
    }
}

int fold_unary(MNInfer *c, MNNode *n) {
    const MNTensor *x = K(n, 0);
    MNTensor *r = new_out(c, n, 0);
    bool integer = !onnx_type_is_float(x->elem);
    for (int64_t i = 0; i < x->numel; i++) {
        if (integer && x->elem != ONNX_UINT64) {
            int64_t v = ir_tensor_get_i(x, i), o;
            switch (n->op) {
            case OP_Abs: o = v < 0 ? (int64_t)(0 - (uint64_t)v) : v; break; /* wraps like the hardware */
            case OP_Neg: o = (int64_t)(0 - (uint64_t)v); break;
            case OP_Sign: o = (v > 0) - (v < 0); break;
            case OP_Relu: o = v > 0 ? v : 0; break;
            case OP_Not: o = !v; break;
            default: o = (int64_t)unary_f(n, (double)v); break;
            }
            ir_tensor_set_i(r, i, o);
        } else
            ir_tensor_set_f(r, i, unary_f(n, ir_tensor_get_f(x, i)));
    }
    n->out[0]->konst = r;
    return 1;
}

/* Ops whose output is the input's data under another shape. */
int fold_identity(MNInfer *c, MNNode *n) {
    const MNTensor *x = K(n, 0);
    MNTensor *r = ARENA_NEW(c->g->arena, MNTensor);
    MNValue *o = n->out[0];
    r->elem = x->elem;
    r->rank = o->type.rank;
    r->dims = o->type.dims;
    r->numel = x->numel;
    r->data = x->data;
    n->out[0]->konst = r;
    return 1;
}

int fold_none(MNInfer *c, MNNode *n) {
    (void)c;
    (void)n;
    return 0;
}

int fold_clip(MNInfer *c, MNNode *n) {
    const MNTensor *x = K(n, 0);
    MNTensor *r = new_out(c, n, 0);
    bool fl = onnx_type_is_float(x->elem);
    double lo = -INFINITY, hi = INFINITY;
    if (c->opset < 11) {
        lo = ir_attr_float(n, "min", -3.4028234663852886e38);
        hi = ir_attr_float(n, "max", 3.4028234663852886e38);
    } else {
        if (K(n, 1)) lo = ir_tensor_get_f(K(n, 1), 0);
        if (K(n, 2)) hi = ir_tensor_get_f(K(n, 2), 0);
    }
    for (int64_t i = 0; i < x->numel; i++) {
        double v = ir_tensor_get_f(x, i);
        if (!isnan(v)) v = v < lo ? lo : v > hi ? hi : v;
        if (fl)
            ir_tensor_set_f(r, i, v);
        else
            ir_tensor_set_i(r, i, (int64_t)v);
    }
    n->out[0]->konst = r;
    return 1;
}

int fold_cast(MNInfer *c, MNNode *n) {
    MNTensor *r = ir_tensor_cast(c->g->arena, K(n, 0), n->out[0]->type.elem);
    r->rank = n->out[0]->type.rank;
    r->dims = n->out[0]->type.dims;
    n->out[0]->konst = r;
    return 1;
}

/* ---- broadcasting binary and variadic ops ---- */

static double binary_f(const MNNode *n, double a, double b) {
    switch (n->op) {
    case OP_Add:
    case OP_Sum:
    case OP_Mean: return a + b;
    case OP_Sub: return a - b;
    case OP_Mul: return a * b;
    case OP_Div: return a / b;
    case OP_Pow: return pow(a, b);
    case OP_Mod: return ir_attr_int(n, "fmod", 0) ? fmod(a, b) : a - floor(a / b) * b;
    case OP_PRelu: return a < 0 ? a * b : a;
    case OP_Min: return isnan(a) || isnan(b) ? NAN : fmin(a, b);
    case OP_Max: return isnan(a) || isnan(b) ? NAN : fmax(a, b);
    case OP_Equal: return a == b;
    case OP_Less: return a < b;
    case OP_Greater: return a > b;
    case OP_LessOrEqual: return a <= b;
    case OP_GreaterOrEqual: return a >= b;
    case OP_And: return a != 0 && b != 0;
    case OP_Or: return a != 0 || b != 0;
    case OP_Xor: return (a != 0) != (b != 0);
    default: die("no binary evaluator for %s", n->op_type);
    }
}

/* Integer arithmetic with the wrap-around of two's complement and C-like division
 * toward zero (ONNX integer Div truncates, as numpy's does not: we follow onnxruntime). */
static int64_t binary_i(const MNNode *n, int64_t a, int64_t b, bool uns, bool *bad) {
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    if (uns) { /* UINT64: the orderings and divisions differ from int64's */
        switch (n->op) {
        case OP_Div:
        case OP_Mod:
            if (!ub) {
                *bad = true;
                return 0;
            }
            return (int64_t)(n->op == OP_Div ? ua / ub : ua % ub);
        case OP_Min: return (int64_t)(ua < ub ? ua : ub);
        case OP_Max: return (int64_t)(ua > ub ? ua : ub);
        case OP_Less: return ua < ub;
        case OP_Greater: return ua > ub;
        case OP_LessOrEqual: return ua <= ub;
        case OP_GreaterOrEqual: return ua >= ub;
        default: break;
        }
    }
    switch (n->op) {
    case OP_Add:
    case OP_Sum:
    case OP_Mean: return (int64_t)(ua + ub);
    case OP_Sub: return (int64_t)(ua - ub);
    case OP_Mul: return (int64_t)(ua * ub);
    case OP_Div:
        if (b == 0 || (a == INT64_MIN && b == -1)) {
            *bad = true;
            return 0;
        }
        return a / b;
    case OP_Mod:
        if (b == 0 || (a == INT64_MIN && b == -1)) {
            *bad = true;
            return 0;
        }
        if (ir_attr_int(n, "fmod", 0)) return a % b;
        {
            int64_t m = a % b;
            return m != 0 && ((m < 0) != (b < 0)) ? m + b : m;
        }
    case OP_Pow: {
        if (b < 0) return a == 1 ? 1 : a == -1 ? (b & 1 ? -1 : 1) : 0;
        uint64_t r = 1, base = ua;
        for (int64_t e = b; e; e >>= 1, base *= base)
            if (e & 1) r *= base;
        return (int64_t)r;
    }
    case OP_BitShift:
        if (ub >= 64) return 0;
        return !strcmp(ir_attr_string(n, "direction", ""), "LEFT") ? (int64_t)(ua << ub) : (int64_t)(ua >> ub);
    case OP_PRelu: return a < 0 ? (int64_t)(ua * ub) : a;
    case OP_Min: return a < b ? a : b;
    case OP_Max: return a > b ? a : b;
    case OP_Equal: return a == b;
    case OP_Less: return a < b;
    case OP_Greater: return a > b;
    case OP_LessOrEqual: return a <= b;
    case OP_GreaterOrEqual: return a >= b;
    case OP_And: return a && b;
    case OP_Or: return a || b;
    case OP_Xor: return !a != !b;
    default: die("no binary evaluator for %s", n->op_type);
    }
}

/* out = a OP b with broadcasting; result in type `elem` computed in the operands' domain */
static bool fold_pair(MNInfer *c, MNNode *n, const MNTensor *a, const MNTensor *b, MNTensor *r) {
    Iter it = {.rank = r->rank, .ns = 2, .dims = r->dims};
    bstrides(a, r->rank, r->dims, it.st[0]);
    bstrides(b, r->rank, r->dims, it.st[1]);
    bool fl = onnx_type_is_float(a->elem) || onnx_type_is_float(b->elem), uns = a->elem == ONNX_UINT64;
    bool bad = false;
    for (int64_t i = 0; i < r->numel; i++, iter_next(&it)) {
        if (fl)
            ir_tensor_set_f(r, i, binary_f(n, ir_tensor_get_f(a, it.off[0]), ir_tensor_get_f(b, it.off[1])));
        else
            ir_tensor_set_i(r, i, binary_i(n, ir_tensor_get_i(a, it.off[0]), ir_tensor_get_i(b, it.off[1]), uns, &bad));
        if (bad) {
            infer_fail(c, n, NULL, "integer division by zero in a constant computation");
            return false;
        }
    }
    return true;
}

int fold_binary(MNInfer *c, MNNode *n) {
    MNValue *o = n->out[0];
    Arena *a = c->g->arena;
    /* accumulate in the input type, then convert (comparisons produce bool) */
    int32_t acc_elem = n->in[0]->type.elem;
    MNTensor *acc = (MNTensor *)K(n, 0);
    int64_t dims[MN_MAX_RANK];
    for (int k = 1; k < n->nin; k++) {
        const MNTensor *b = K(n, k);
        int r = acc->rank > b->rank ? acc->rank : b->rank;
        for (int d = 0; d < r; d++) {
            int i = d - (r - acc->rank), j = d - (r - b->rank);
            int64_t x = i < 0 ? 1 : acc->dims[i], y = j < 0 ? 1 : b->dims[j];
            dims[d] = x == 1 ? y : x;
        }
        MNTensor *t = ir_tensor_new(a, k == n->nin - 1 ? o->type.elem : acc_elem, r, dims);
        if (!fold_pair(c, n, acc, b, t)) return -1;
        acc = t;
    }
    if (n->nin == 1) acc = ir_tensor_cast(a, acc, o->type.elem);
    if (n->op == OP_Mean)
        for (int64_t i = 0; i < acc->numel; i++) ir_tensor_set_f(acc, i, ir_tensor_get_f(acc, i) / n->nin);
    acc->rank = o->type.rank;
    acc->dims = o->type.dims;
    o->konst = acc;
    return 1;
}

int fold_where(MNInfer *c, MNNode *n) {
    MNTensor *r = new_out(c, n, 0);
    Iter it = {.rank = r->rank, .ns = 3, .dims = r->dims};
    for (int k = 0; k < 3; k++) bstrides(K(n, k), r->rank, r->dims, it.st[k]);
    size_t sz = (size_t)onnx_type_size(r->elem);
    for (int64_t i = 0; i < r->numel; i++, iter_next(&it)) {
        int pick = ir_tensor_get_i(K(n, 0), it.off[0]) ? 1 : 2;
        memcpy((char *)r->data + (size_t)i * sz, (const char *)K(n, pick)->data + (size_t)it.off[pick] * sz, sz);
    }
    n->out[0]->konst = r;
    return 1;
}

int fold_trilu(MNInfer *c, MNNode *n) {
    int64_t k;
    if (!infer_trilu_k(n, &k)) return 0;
    const MNTensor *x = K(n, 0);
    MNTensor *r = new_out(c, n, 0);
    bool upper = ir_attr_int(n, "upper", 1) != 0;
    int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
    size_t sz = (size_t)onnx_type_size(x->elem);
    memset(r->data, 0, sz * (size_t)x->numel); /* zero in every type */
    for (int64_t i = 0; i < x->numel; i++)
        if (infer_trilu_keeps(upper, k, i / cols % rows, i % cols))
            memcpy((char *)r->data + (size_t)i * sz, (const char *)x->data + (size_t)i * sz, sz);
    n->out[0]->konst = r;
    return 1;
}

/* ---- reductions ---- */

int fold_reduce(MNInfer *c, MNNode *n) {
    const MNTensor *x = K(n, 0);
    MNTensor *r = new_out(c, n, 0);
    /* recompute the axis mask from the output shape relation */
    bool mask[MN_MAX_RANK];
    int rank = x->rank;
    bool keep = ir_attr_int(n, "keepdims", 1) != 0;
    {
        /* infer_reduce validated the axes; re-derive them the same way */
        bool from_input = c->opset >= (n->op == OP_ReduceSum ? 13 : 18);
        int64_t ax[MN_MAX_RANK];
        int na = 0;
        if (from_input && K(n, 1)) {
            na = (int)K(n, 1)->numel;
            for (int i = 0; i < na; i++) ax[i] = ir_tensor_get_i(K(n, 1), i);
        } else if (!from_input) {
            const MNAttr *aa = ir_attr(n, "axes");
            na = aa ? aa->n : 0;
            for (int i = 0; i < na; i++) ax[i] = aa->ints[i];
        }
        bool noop = ir_attr_int(n, "noop_with_empty_axes", 0) != 0;
        for (int i = 0; i < rank; i++) mask[i] = na == 0 && !noop;
        for (int i = 0; i < na; i++) mask[ax[i] < 0 ? ax[i] + rank : ax[i]] = true;
    }
    (void)keep;
    int64_t rd[MN_MAX_RANK], rst[MN_MAX_RANK];
    for (int i = 0; i < rank; i++) rd[i] = mask[i] ? 1 : x->dims[i];
    strides_of(rank, rd, rst);
    int64_t outn = r->numel;
    double *acc = arena_alloc(c->g->arena, sizeof(double) * (size_t)(outn ? outn : 1));
    int64_t *cnt = arena_alloc(c->g->arena, sizeof(int64_t) * (size_t)(outn ? outn : 1));
    bool init_min = n->op == OP_ReduceMin, init_max = n->op == OP_ReduceMax, prod = n->op == OP_ReduceProd;
    for (int64_t i = 0; i < outn; i++) acc[i] = init_min ? INFINITY : init_max ? -INFINITY : prod ? 1 : 0;
    Iter it = {.rank = rank, .ns = 1, .dims = x->dims};
    for (int i = 0; i < rank; i++) it.st[0][i] = mask[i] ? 0 : rst[i];
    for (int64_t i = 0; i < x->numel; i++, iter_next(&it)) {
        double v = ir_tensor_get_f(x, i), *a = &acc[it.off[0]];
        cnt[it.off[0]]++;
        switch (n->op) {
        case OP_ReduceSum:
        case OP_ReduceMean:
        case OP_ReduceLogSum: *a += v; break;
        case OP_ReduceMax: *a = isnan(v) || v > *a ? v : *a; break;
        case OP_ReduceMin: *a = isnan(v) || v < *a ? v : *a; break;
        case OP_ReduceProd: *a *= v; break;
        case OP_ReduceL1: *a += fabs(v); break;
        case OP_ReduceL2:
        case OP_ReduceSumSquare: *a += v * v; break;
        case OP_ReduceLogSumExp: *a += exp(v); break;
        default: die("no reduction evaluator for %s", n->op_type);
        }
    }
    for (int64_t i = 0; i < outn; i++) {
        double v = acc[i];
        switch (n->op) {
        case OP_ReduceMean: v = cnt[i] ? v / (double)cnt[i] : NAN; break;
        case OP_ReduceL2: v = sqrt(v); break;
        case OP_ReduceLogSum:
        case OP_ReduceLogSumExp: v = log(v); break;
        default: break;
        }
        ir_tensor_set_f(r, i, v);
    }
    n->out[0]->konst = r;
    return 1;
}

/* ---- data movement ---- */

int fold_transpose(MNInfer *c, MNNode *n) {
    const MNTensor *x = K(n, 0);
    MNTensor *r = new_out(c, n, 0);
    int rank = x->rank;
    int64_t xs[MN_MAX_RANK];
    strides_of(rank, x->dims, xs);
    Iter it = {.rank = rank, .ns = 1, .dims = r->dims};
    const MNAttr *p = ir_attr(n, "perm");
    for (int i = 0; i < rank; i++) it.st[0][i] = xs[p ? p->ints[i] : rank - 1 - i];
    size_t sz = (size_t)onnx_type_size(x->elem);
    for (int64_t i = 0; i < r->numel; i++, iter_next(&it))
        memcpy((char *)r->data + (size_t)i * sz, (const char *)x->data + (size_t)it.off[0] * sz, sz);
    n->out[0]->konst = r;
    return 1;
}

/* Copy a strided block: dst[i] = src[start + sum idx*step*stride] over out dims. */
static void copy_block(MNTensor *dst, const MNTensor *src, const int64_t *start, const int64_t *step) {
    int rank = src->rank;
    int64_t ss[MN_MAX_RANK], base = 0;
    strides_of(rank, src->dims, ss);
    Iter it = {.rank = rank, .ns = 1, .dims = dst->dims};
    for (int i = 0; i < rank; i++) {
        it.st[0][i] = ss[i] * step[i];
        base += start[i] * ss[i];
    }
    size_t sz = (size_t)onnx_type_size(src->elem);
    for (int64_t i = 0; i < dst->numel; i++, iter_next(&it))
        memcpy((char *)dst->data + (size_t)i * sz, (const char *)src->data + (size_t)(base + it.off[0]) * sz, sz);
}

int fold_concat(MNInfer *c, MNNode *n) {
    MNTensor *r = new_out(c, n, 0);
    int axis;
    infer_norm_axis(c, n, ir_attr_int(n, "axis", 1), r->rank, &axis);
    int64_t rs[MN_MAX_RANK];
    strides_of(r->rank, r->dims, rs);
    size_t sz = (size_t)onnx_type_size(r->elem);
    int64_t at = 0;
    for (int k = 0; k < n->nin; k++) {
        const MNTensor *x = K(n, k);
        Iter it = {.rank = x->rank, .ns = 1, .dims = x->dims};
        memcpy(it.st[0], rs, sizeof rs);
        for (int64_t i = 0; i < x->numel; i++, iter_next(&it))
            memcpy((char *)r->data + (size_t)(at * rs[axis] + it.off[0]) * sz, (const char *)x->data + (size_t)i * sz,
                   sz);
        at += x->dims[axis];
    }
    n->out[0]->konst = r;
    return 1;
}

bool infer_split_sizes(MNInfer *c, MNNode *n, int *axis_out, int64_t *sizes);
bool infer_slice_params(MNInfer *c, MNNode *n, int64_t *start, int64_t *step, int64_t *count);
bool infer_pad_amounts(MNInfer *c, MNNode *n, int64_t *pb, int64_t *pe);
void infer_shape_range(const MNNode *n, int rank, int *lo, int *hi);

int fold_split(MNInfer *c, MNNode *n) {
    const MNTensor *x = K(n, 0);
    int axis;
    int64_t sizes[MN_MAX_RANK * 2 + 8], start[MN_MAX_RANK] = {0}, step[MN_MAX_RANK];
    if (!infer_split_sizes(c, n, &axis, sizes)) return -1;
    for (int i = 0; i < x->rank; i++) step[i] = 1;
    for (int k = 0; k < n->nout; k++) {
        if (n->out[k]) {
            MNTensor *r = new_out(c, n, k);
            copy_block(r, x, start, step);
            n->out[k]->konst = r;
        }
        start[axis] += sizes[k];
    }
    return 1;
}

int fold_slice(MNInfer *c, MNNode *n) {
    int64_t start[MN_MAX_RANK], step[MN_MAX_RANK], count[MN_MAX_RANK];
    if (!infer_slice_params(c, n, start, step, count)) return -1;
    MNTensor *r = new_out(c, n, 0);
    copy_block(r, K(n, 0), start, step);
    n->out[0]->konst = r;
    return 1;
}

int fold_gather(MNInfer *c, MNNode *n) {
    const MNTensor *x = K(n, 0), *idx = K(n, 1);
    MNTensor *r = new_out(c, n, 0);
    int axis;
    infer_norm_axis(c, n, ir_attr_int(n, "axis", 0), x->rank, &axis);
    int64_t outer = 1, inner = 1, d = x->dims[axis];
    for (int i = 0; i < axis; i++) outer *= x->dims[i];
    for (int i = axis + 1; i < x->rank; i++) inner *= x->dims[i];
    size_t sz = (size_t)onnx_type_size(x->elem), blk = sz * (size_t)inner;
    char *dst = r->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < idx->numel; j++) {
            int64_t v = ir_tensor_get_i(idx, j);
            if (v < 0) v += d;
            memcpy(dst, (const char *)x->data + ((size_t)(o * d + v)) * blk, blk);
            dst += blk;
        }
    n->out[0]->konst = r;
    return 1;
}

int fold_pad(MNInfer *c, MNNode *n) {
    if (strcmp(ir_attr_string(n, "mode", "constant"), "constant")) return 0;
    const MNTensor *x = K(n, 0);
    int64_t pb[MN_MAX_RANK], pe[MN_MAX_RANK];
    if (!infer_pad_amounts(c, n, pb, pe)) return -1;
    for (int i = 0; i < x->rank; i++)
        if (pb[i] < 0 || pe[i] < 0) return 0; /* negative pads crop: left to the node */
    MNTensor *r = new_out(c, n, 0);
    double fill = c->opset < 11 ? ir_attr_float(n, "value", 0) : K(n, 2) ? ir_tensor_get_f(K(n, 2), 0) : 0;
    for (int64_t i = 0; i < r->numel; i++) ir_tensor_set_f(r, i, fill);
    int64_t rs[MN_MAX_RANK], base = 0;
    strides_of(r->rank, r->dims, rs);
    for (int i = 0; i < x->rank; i++) base += pb[i] * rs[i];
    Iter it = {.rank = x->rank, .ns = 1, .dims = x->dims};
    memcpy(it.st[0], rs, sizeof rs);
    size_t sz = (size_t)onnx_type_size(x->elem);
    for (int64_t i = 0; i < x->numel; i++, iter_next(&it))
        memcpy((char *)r->data + (size_t)(base + it.off[0]) * sz, (const char *)x->data + (size_t)i * sz, sz);
    n->out[0]->konst = r;
    return 1;
}

int fold_expand(MNInfer *c, MNNode *n) {
    const MNTensor *x = K(n, 0);
    MNTensor *r = new_out(c, n, 0);
    Iter it = {.rank = r->rank, .ns = 1, .dims = r->dims};
    bstrides(x, r->rank, r->dims, it.st[0]);
    size_t sz = (size_t)onnx_type_size(x->elem);
    for (int64_t i = 0; i < r->numel; i++, iter_next(&it))
        memcpy((char *)r->data + (size_t)i * sz, (const char *)x->data + (size_t)it.off[0] * sz, sz);
    n->out[0]->konst = r;
    return 1;
}

int fold_tile(MNInfer *c, MNNode *n) {
    const MNTensor *x = K(n, 0);
    MNTensor *r = new_out(c, n, 0);
    int64_t xs[MN_MAX_RANK];
    strides_of(x->rank, x->dims, xs);
    size_t sz = (size_t)onnx_type_size(x->elem);
    int64_t idx[MN_MAX_RANK] = {0};
    for (int64_t i = 0; i < r->numel; i++) {
        int64_t off = 0;
        for (int d = 0; d < r->rank; d++) off += (idx[d] % x->dims[d]) * xs[d];
        memcpy((char *)r->data + (size_t)i * sz, (const char *)x->data + (size_t)off * sz, sz);
        for (int d = r->rank - 1; d >= 0; d--) {
            if (++idx[d] < r->dims[d]) break;
            idx[d] = 0;
        }
    }
    n->out[0]->konst = r;
    return 1;
}

int fold_shape(MNInfer *c, MNNode *n) {
    const MNType *t = &n->in[0]->type;
    MNTensor *r = new_out(c, n, 0);
    if (n->op == OP_Size)
        ir_tensor_set_i(r, 0, ir_shape_numel(t));
    else {
        int lo, hi;
        infer_shape_range(n, t->rank, &lo, &hi);
        for (int i = lo; i < hi; i++) ir_tensor_set_i(r, i - lo, t->dims[i]);
    }
    n->out[0]->konst = r;
    return 1;
}

int fold_constant_of_shape(MNInfer *c, MNNode *n) {
    MNTensor *r = new_out(c, n, 0);
    const MNAttr *v = ir_attr(n, "value");
    size_t sz = (size_t)onnx_type_size(r->elem);
    for (int64_t i = 0; i < r->numel; i++) {
        if (v)
            memcpy((char *)r->data + (size_t)i * sz, v->t->data, sz);
        else
            ir_tensor_set_f(r, i, 0);
    }
    n->out[0]->konst = r;
    return 1;
}

int fold_range(MNInfer *c, MNNode *n) {
    MNTensor *r = new_out(c, n, 0);
    bool fl = onnx_type_is_float(r->elem);
    for (int64_t i = 0; i < r->numel; i++) {
        if (fl) {
            /* accumulate as onnxruntime does: start + i * delta in the element type */
            double s = ir_tensor_get_f(K(n, 0), 0), d = ir_tensor_get_f(K(n, 2), 0);
            ir_tensor_set_f(r, i, s + (double)i * d);
        } else
            ir_tensor_set_i(
                r, i,
                (int64_t)((uint64_t)ir_tensor_get_i(K(n, 0), 0) + (uint64_t)i * (uint64_t)ir_tensor_get_i(K(n, 2), 0)));
    }
    n->out[0]->konst = r;
    return 1;
}

int fold_constant(MNInfer *c, MNNode *n) {
    const MNAttr *a = &n->attrs[0];
    MNTensor *r;
    switch (a->type) {
    case MN_ATTR_TENSOR: r = a->t; break;
    case MN_ATTR_FLOAT:
        r = new_out(c, n, 0);
        ir_tensor_set_f(r, 0, a->f);
        break;
    case MN_ATTR_INT:
        r = new_out(c, n, 0);
        ir_tensor_set_i(r, 0, a->i);
        break;
    case MN_ATTR_FLOATS:
        r = new_out(c, n, 0);
        for (int i = 0; i < a->n; i++) ir_tensor_set_f(r, i, a->floats[i]);
        break;
    case MN_ATTR_INTS:
        r = new_out(c, n, 0);
        for (int i = 0; i < a->n; i++) ir_tensor_set_i(r, i, a->ints[i]);
        break;
    default: die("Constant attribute type %d passed inference", a->type);
    }
    n->out[0]->konst = r;
    return 1;
}

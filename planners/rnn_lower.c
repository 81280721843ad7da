/* Recurrent lowering: RNN, GRU and LSTM unrolled over their static sequence into the ops the
 * rest of the compiler maps onto the machine: a Gemm per gate and step on the matrix unit,
 * elementwise maps for the gates and the cell on the vector unit, Gathers that take a time
 * step of X or a gate's rows of the weights, Reshapes and a Concat that stack the steps into
 * Y. Nothing of the recurrence is left for Code Emit: a model with an LSTM gets the same
 * mapping, Time-Slice and schedules as one without.
 *
 * Per direction d and gate g the weights W[d, gH:(g+1)H, :] and R[d, gH:(g+1)H, :] and the
 * biases Wb + Rb are Gathers and an Add of the node's inputs; the pass folds the graph again
 * after itself, so constant weights (every export's) become constant products' B, each gate's
 * own, and run-time ones (the ONNX backend tests feed them) stay Gathers. A gate is computed
 * whole per step, X_t W_gᵀ + b_g + H_{t-1} R_gᵀ, so no step slices a product's output.
 *
 * Semantics as in the ONNX operators (gates i o f c, z r h): activations by name with their
 * alpha and beta taken in order by the functions that use them, the cell clip before every
 * activation, peepholes, input_forget, linear_before_reset, layout 1 (batch first), initial
 * states (zero when absent: the terms they would feed are left out), and sequence_lens known
 * at compile time: a batch entry past its length keeps its state and gives zeros in Y (the
 * steps masked by constants). A reverse direction over lengths that differ between batch
 * entries (its steps would start at different times) is refused, as are sequence lengths
 * computed at run time. */
#include "plan.h"
#include "infer.h"
#include "ops.h"
#include <string.h>
#include <strings.h>

typedef struct {
    MNCompile *c;
    MNGraph *g;
    const MNNode *n;
    int k; /* the nodes and values made so far (their names) */
    int64_t S, N, H; /* sequence, batch, hidden */
    int64_t nh[2]; /* (N, H) */
} Rb;

static const char *name(Rb *b, const char *what) {
    return arena_printf(b->g->arena, "%s_%s_%d", b->n->name, what, b->k++);
}

/* a node op over in[0..nin) into y, or into a new float value of dims */
static MNNode *make(Rb *b, const char *op, int nin, MNValue *const *in, int rank, const int64_t *dims, MNValue *y) {
    if (!y) y = plan_value_new(b->g, name(b, op), ONNX_FLOAT32, rank, dims);
    MNNode *s = plan_node_new(b->g, op, name(b, op), nin, y);
    for (int i = 0; i < nin; i++) s->in[i] = in[i];
    return s;
}

static MNValue *fconst(Rb *b, double v) { return plan_scalar_konst(b->g, name(b, "c"), ONNX_FLOAT32, v); }

/* x's entries idx (a scalar index: that axis dropped; else n of them from `from`) along axis */
static MNValue *as(Rb *b, MNValue *x, int rank, const int64_t *dims, MNValue *y);

static MNValue *take(Rb *b, MNValue *x, int axis, int64_t from, int64_t n, bool scalar) {
    MNValue *i;
    if (scalar && x->type.dims[axis] == 1) { /* the one entry: a view */
        int64_t dims[MN_MAX_RANK];
        int r = 0;
        for (int d = 0; d < x->type.rank; d++)
            if (d != axis) dims[r++] = x->type.dims[d];
        return as(b, x, r, dims, NULL);
    }
    if (scalar) {
        i = plan_value_new(b->g, name(b, "i"), ONNX_INT64, 0, NULL);
        i->konst = ir_tensor_new(b->g->arena, ONNX_INT64, 0, NULL);
        ir_tensor_set_i(i->konst, 0, from);
        i->is_initializer = true;
    } else {
        int64_t *v = ARENA_ARRAY(b->g->arena, int64_t, n);
        for (int64_t j = 0; j < n; j++) v[j] = from + j;
        i = plan_ints_konst(b->g, name(b, "i"), n, v);
    }
    int64_t dims[MN_MAX_RANK];
    int r = 0;
    for (int d = 0; d < x->type.rank; d++)
        if (d != axis)
            dims[r++] = x->type.dims[d];
        else if (!scalar)
            dims[r++] = n;
    MNValue *in[2] = {x, i};
    MNNode *s = make(b, "Gather", 2, in, r, dims, NULL);
    ir_attr_set_int(b->g, s, "axis", axis);
    return s->out[0];
}

static MNValue *bin(Rb *b, const char *op, MNValue *x, MNValue *y) {
    MNValue *in[2] = {x, y};
    return make(b, op, 2, in, 2, b->nh, NULL)->out[0];
}

/* a (N, K) Gemm w (H, K)ᵀ, plus bias (H) where there is one */
static MNValue *gemm(Rb *b, MNValue *a, MNValue *w, MNValue *bias) {
    MNValue *in[3] = {a, w, bias};
    MNNode *s = make(b, "Gemm", bias ? 3 : 2, in, 2, b->nh, NULL);
    ir_attr_set_int(b->g, s, "transB", 1);
    return s->out[0];
}

/* the activation functions the operators name, and whether each takes alpha and beta */
typedef struct {
    const char *name;
    bool a, bt;
    double da, db; /* the defaults of the ONNX operators of the same name */
} Act;
static const Act ACTS[] = {{"Relu", 0, 0, 0, 0},         {"Tanh", 0, 0, 0, 0},
                           {"Sigmoid", 0, 0, 0, 0},      {"Affine", 1, 1, 1, 0},
                           {"LeakyRelu", 1, 0, 0.01, 0}, {"ThresholdedRelu", 1, 0, 1, 0},
                           {"ScaledTanh", 1, 1, 1, 1},   {"HardSigmoid", 1, 1, 0.2, 0.5},
                           {"Elu", 1, 0, 1, 0},          {"Softsign", 0, 0, 0, 0},
                           {"Softplus", 0, 0, 0, 0}};

typedef struct {
    const Act *f;
    double alpha, beta;
} Fn;

static MNValue *apply(Rb *b, const Fn *f, MNValue *x) {
    double clip = ir_attr_float(b->n, "clip", -1);
    if (ir_attr(b->n, "clip")) { /* bounds the input of every activation */
        if (b->g->opset < 11) {
            MNNode *s = make(b, "Clip", 1, &x, 2, b->nh, NULL);
            ir_attr_set_float(b->g, s, "min", -clip);
            ir_attr_set_float(b->g, s, "max", clip);
            x = s->out[0];
        } else {
            MNValue *in[3] = {x, fconst(b, -clip), fconst(b, clip)};
            x = make(b, "Clip", 3, in, 2, b->nh, NULL)->out[0];
        }
    }
    const char *op = f->f->name;
    if (!strcmp(op, "Affine")) return bin(b, "Add", bin(b, "Mul", x, fconst(b, f->alpha)), fconst(b, f->beta));
    if (!strcmp(op, "ScaledTanh")) {
        MNValue *t = make(b, "Tanh", 1, (MNValue *[]){bin(b, "Mul", x, fconst(b, f->beta))}, 2, b->nh, NULL)->out[0];
        return bin(b, "Mul", t, fconst(b, f->alpha));
    }
    MNNode *s = make(b, op, 1, &x, 2, b->nh, NULL);
    if (f->f->a) ir_attr_set_float(b->g, s, "alpha", f->alpha);
    if (f->f->bt) ir_attr_set_float(b->g, s, "beta", f->beta);
    return s->out[0];
}

/* the node's activations, per direction (fn[d * per + j]); false with an error when one is
 * none the operators define */
static bool activations(Rb *b, int dirs, int per, Fn *fn) {
    static const char *dflt[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    const MNAttr *na = ir_attr(b->n, "activations"), *al = ir_attr(b->n, "activation_alpha"),
                 *be = ir_attr(b->n, "activation_beta");
    if (na && na->n != dirs * per)
        return diag_error(&b->c->diag, DIAG_INVALID, "%s: node '%s' (%s): %d activations, not %d", b->g->file,
                          b->n->name, b->n->op_type, na->n, dirs * per);
    int ia = 0, ib = 0;
    for (int j = 0; j < dirs * per; j++) {
        const char *s = na ? na->strings[j] : dflt[per - 1][j % per];
        fn[j].f = NULL;
        for (size_t q = 0; q < sizeof ACTS / sizeof ACTS[0] && !fn[j].f; q++)
            if (!strcasecmp(s, ACTS[q].name)) fn[j].f = &ACTS[q];
        if (!fn[j].f)
            return diag_error(&b->c->diag, DIAG_UNSUPPORTED,
                              "%s: node '%s' (%s): activation '%s' is not one ONNX defines", b->g->file, b->n->name,
                              b->n->op_type, s);
        fn[j].alpha = fn[j].f->a && al && ia < al->n ? al->floats[ia++] : fn[j].f->da;
        fn[j].beta = fn[j].f->bt && be && ib < be->n ? be->floats[ib++] : fn[j].f->db;
    }
    return true;
}

/* direction d's weights of gate g: W and R rows, the bias Wb + Rb (or Wb and Rb apart) */
typedef struct {
    MNValue *w[4], *r[4], *wb[4], *rb[4], *p[3];
} Weights;

static void weights(Rb *b, int d, int G, Weights *wt) {
    MNNode *n = (MNNode *)b->n;
    MNValue *W = take(b, n->in[1], 0, d, 1, true), *R = take(b, n->in[2], 0, d, 1, true);
    MNValue *B = n->nin > 3 && n->in[3] ? take(b, n->in[3], 0, d, 1, true) : NULL;
    MNValue *P = n->nin > 7 && n->in[7] ? take(b, n->in[7], 0, d, 1, true) : NULL;
    for (int g = 0; g < G; g++) {
        wt->w[g] = take(b, W, 0, g * b->H, b->H, false);
        wt->r[g] = take(b, R, 0, g * b->H, b->H, false);
        wt->wb[g] = B ? take(b, B, 0, g * b->H, b->H, false) : NULL;
        wt->rb[g] = B ? take(b, B, 0, (G + g) * b->H, b->H, false) : NULL;
    }
    for (int q = 0; q < 3; q++) wt->p[q] = P ? take(b, P, 0, q * b->H, b->H, false) : NULL;
}

static MNValue *sum_bias(Rb *b, MNValue *x, MNValue *y) {
    if (!x || !y) return x ? x : y;
    MNValue *in[2] = {x, y};
    return make(b, "Add", 2, in, 1, &b->H, NULL)->out[0];
}

/* X_t W_gᵀ + bias (+ H R_gᵀ) */
static MNValue *gate(Rb *b, MNValue *xt, MNValue *w, MNValue *bias, MNValue *h, MNValue *r) {
    MNValue *a = gemm(b, xt, w, bias);
    return h ? bin(b, "Add", a, gemm(b, h, r, NULL)) : a;
}

/* one step of direction d: the new H (and C) from X_t and the last ones (NULL: zero) */
static void step(Rb *b, const Weights *wt, const Fn *fn, MNValue *xt, MNValue **h, MNValue **cell) {
    const MNNode *n = b->n;
    MNValue *hp = *h;
    if (n->op == OP_RNN) {
        *h = apply(b, &fn[0], gate(b, xt, wt->w[0], sum_bias(b, wt->wb[0], wt->rb[0]), hp, wt->r[0]));
        return;
    }
    if (n->op == OP_GRU) { /* z r h */
        MNValue *z = apply(b, &fn[0], gate(b, xt, wt->w[0], sum_bias(b, wt->wb[0], wt->rb[0]), hp, wt->r[0]));
        MNValue *r = apply(b, &fn[0], gate(b, xt, wt->w[1], sum_bias(b, wt->wb[1], wt->rb[1]), hp, wt->r[1]));
        MNValue *hh;
        if (!ir_attr_int(n, "linear_before_reset", 0))
            hh = gate(b, xt, wt->w[2], sum_bias(b, wt->wb[2], wt->rb[2]), hp ? bin(b, "Mul", r, hp) : NULL, wt->r[2]);
        else {
            MNValue *rh = hp ? gemm(b, hp, wt->r[2], wt->rb[2]) : wt->rb[2]; /* H R_hᵀ + Rb_h */
            hh = gemm(b, xt, wt->w[2], wt->wb[2]);
            if (rh) hh = bin(b, "Add", hh, bin(b, "Mul", r, rh));
        }
        hh = apply(b, &fn[1], hh);
        /* (1 - z) hh + z H = hh + z (H - hh) */
        *h = hp ? bin(b, "Add", hh, bin(b, "Mul", z, bin(b, "Sub", hp, hh))) : bin(b, "Sub", hh, bin(b, "Mul", z, hh));
        return;
    }
    MNValue *cp = *cell; /* LSTM: i o f c */
    MNValue *pi = gate(b, xt, wt->w[0], sum_bias(b, wt->wb[0], wt->rb[0]), hp, wt->r[0]);
    if (wt->p[0] && cp) pi = bin(b, "Add", pi, bin(b, "Mul", cp, wt->p[0]));
    MNValue *i = apply(b, &fn[0], pi), *f = NULL;
    if (ir_attr_int(n, "input_forget", 0))
        f = bin(b, "Sub", fconst(b, 1), i);
    else if (cp) { /* (with no C before, f multiplies zero) */
        MNValue *pf = gate(b, xt, wt->w[2], sum_bias(b, wt->wb[2], wt->rb[2]), hp, wt->r[2]);
        if (wt->p[2]) pf = bin(b, "Add", pf, bin(b, "Mul", cp, wt->p[2]));
        f = apply(b, &fn[0], pf);
    }
    MNValue *ct = apply(b, &fn[1], gate(b, xt, wt->w[3], sum_bias(b, wt->wb[3], wt->rb[3]), hp, wt->r[3]));
    MNValue *c = bin(b, "Mul", i, ct);
    if (cp) c = bin(b, "Add", bin(b, "Mul", f, cp), c);
    MNValue *po = gate(b, xt, wt->w[1], sum_bias(b, wt->wb[1], wt->rb[1]), hp, wt->r[1]);
    if (wt->p[1]) po = bin(b, "Add", po, bin(b, "Mul", c, wt->p[1]));
    MNValue *o = apply(b, &fn[0], po);
    *h = bin(b, "Mul", o, apply(b, &fn[2], c));
    *cell = c;
}

/* x as dims (a view), into y when given */
static MNValue *as(Rb *b, MNValue *x, int rank, const int64_t *dims, MNValue *y) {
    MNValue *sh = plan_ints_konst(b->g, name(b, "shape"), rank, dims);
    MNValue *in[2] = {x, sh};
    MNValue *o = y ? y : plan_value_new(b->g, name(b, "Reshape"), x->type.elem, rank, dims);
    return make(b, "Reshape", 2, in, rank, dims, o)->out[0];
}

/* pieces[0..np) stacked along axis into y (or a new value of dims) */
static MNValue *stack(Rb *b, MNValue **pieces, int np, int axis, int rank, const int64_t *dims, MNValue *y) {
    if (np == 1 && !y) return pieces[0];
    MNNode *s = make(b, np == 1 ? "Identity" : "Concat", np, pieces, rank, dims, y);
    if (np > 1) ir_attr_set_int(b->g, s, "axis", axis);
    return s->out[0];
}

static MNValue *batch_first(Rb *b, MNValue *x, const int64_t *perm, int rank, MNValue *y) {
    MNNode *s = make(b, "Transpose", 1, &x, rank, y->type.dims, y);
    ir_attr_set_ints(b->g, s, "perm", perm, rank);
    return s->out[0];
}

static bool is_rnn(const MNNode *n) { return n->op == OP_RNN || n->op == OP_GRU || n->op == OP_LSTM; }

static bool lower(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    int G = n->op == OP_LSTM ? 4 : n->op == OP_GRU ? 3 : 1, per = n->op == OP_LSTM ? 3 : n->op == OP_GRU ? 2 : 1;
    const char *dir = ir_attr_string(n, "direction", "forward");
    int dirs = !strcmp(dir, "bidirectional") ? 2 : 1, layout = (int)ir_attr_int(n, "layout", 0);
    MNValue *X = n->in[0];
    Rb b = {c, g, n, 0, X->type.dims[layout], X->type.dims[1 - layout], n->in[2]->type.dims[2], {0, 0}};
    b.nh[0] = b.N, b.nh[1] = b.H;
    if (X->type.elem != ONNX_FLOAT32)
        return diag_error(&c->diag, DIAG_UNSUPPORTED, "%s: node '%s' (%s): value '%s': %s, not float", g->file, n->name,
                          n->op_type, X->name, onnx_type_name(X->type.elem));
    Fn fn[6];
    if (!activations(&b, dirs, per, fn)) return false;
    /* the steps each batch entry takes (sequence_lens known at compile time) */
    int64_t *len = ARENA_ARRAY(g->arena, int64_t, b.N);
    bool masked = false;
    const MNValue *sl = n->nin > 4 ? n->in[4] : NULL;
    for (int64_t e = 0; e < b.N; e++) {
        len[e] = b.S;
        if (sl && !sl->konst) {
            diag_error(&c->diag, DIAG_UNSUPPORTED,
                       "%s: node '%s' (%s): value '%s': sequence lengths computed at run time", g->file, n->name,
                       n->op_type, sl->name);
            return false;
        }
        if (sl) len[e] = ir_tensor_get_i(sl->konst, e);
        if (len[e] < 0 || len[e] > b.S) {
            diag_error(&c->diag, DIAG_INVALID, "%s: node '%s' (%s): sequence length %lld outside [0, %lld]", g->file,
                       n->name, n->op_type, (long long)len[e], (long long)b.S);
            return false;
        }
        masked |= len[e] != b.S;
    }
    if (masked && (dirs == 2 || !strcmp(dir, "reverse"))) {
        diag_error(
            &c->diag, DIAG_UNSUPPORTED,
            "%s: node '%s' (%s): a reverse direction over sequence lengths that differ (each entry's steps would "
            "start at its own time)",
            g->file, n->name, n->op_type);
        return false;
    }
    MNValue *Y = n->out[0], *Yh = n->nout > 1 ? n->out[1] : NULL, *Yc = n->nout > 2 ? n->out[2] : NULL;
    MNValue **ys = ARENA_ARRAY(g->arena, MNValue *, 2 * b.S), *hs[2], *cs[2];
    for (int d = 0; d < dirs; d++) {
        Weights wt;
        weights(&b, d, G, &wt);
        bool rev = d == 1 || !strcmp(dir, "reverse");
        MNValue *h = n->nin > 5 && n->in[5] ? take(&b, n->in[5], 0, d, 1, true) : NULL;
        MNValue *cell = n->nin > 6 && n->in[6] ? take(&b, n->in[6], 0, d, 1, true) : NULL;
        for (int64_t q = 0; q < b.S; q++) {
            int64_t t = rev ? b.S - 1 - q : q;
            MNValue *xt = take(&b, X, layout, t, 1, true), *hp = h, *cp = cell;
            step(&b, &wt, &fn[d * per], xt, &h, &cell);
            MNValue *yt = h;
            if (masked) { /* past its length an entry keeps its state and gives zero */
                int64_t md[2] = {b.N, 1};
                MNValue *m = plan_value_new(g, name(&b, "mask"), ONNX_FLOAT32, 2, md);
                m->konst = ir_tensor_new(g->arena, ONNX_FLOAT32, 2, md);
                m->is_initializer = true;
                for (int64_t e = 0; e < b.N; e++) ir_tensor_set_f(m->konst, e, t < len[e]);
                yt = bin(&b, "Mul", h, m);
                h = hp ? bin(&b, "Add", hp, bin(&b, "Mul", m, bin(&b, "Sub", h, hp))) : yt;
                if (n->op == OP_LSTM)
                    cell =
                        cp ? bin(&b, "Add", cp, bin(&b, "Mul", m, bin(&b, "Sub", cell, cp))) : bin(&b, "Mul", cell, m);
            }
            if (Y) {
                int64_t one[4] = {1, 1, b.N, b.H};
                ys[d * b.S + t] = as(&b, yt, 4, one, NULL);
            }
        }
        int64_t one[3] = {1, b.N, b.H};
        bool direct = dirs == 1 && !layout;
        hs[d] = Yh ? as(&b, h, 3, one, direct ? Yh : NULL) : NULL;
        cs[d] = Yc && cell ? as(&b, cell, 3, one, direct ? Yc : NULL) : NULL;
    }
    const int64_t p4[4] = {2, 0, 1, 3}, p3[3] = {1, 0, 2};
    bool direct = dirs == 1 && !layout; /* the stack is the output itself */
    if (Y) {
        int64_t sd[4] = {b.S, 1, b.N, b.H}, yd[4] = {b.S, dirs, b.N, b.H};
        MNValue *per_dir[2];
        for (int d = 0; d < dirs; d++) per_dir[d] = stack(&b, &ys[d * b.S], (int)b.S, 0, 4, sd, direct ? Y : NULL);
        if (layout)
            batch_first(&b, stack(&b, per_dir, dirs, 1, 4, yd, NULL), p4, 4, Y);
        else if (!direct)
            stack(&b, per_dir, dirs, 1, 4, yd, Y);
    }
    for (int k = 1; k <= 2; k++) {
        MNValue *o = k == 1 ? Yh : Yc, **v = k == 1 ? hs : cs;
        if (!o) continue;
        if (!v[0]) { /* a C never computed (no step): zero */
            diag_error(&c->diag, DIAG_INVALID, "%s: node '%s' (%s): Y_c of no step", g->file, n->name, n->op_type);
            return false;
        }
        int64_t hd[3] = {dirs, b.N, b.H};
        if (v[0] == o) continue; /* (made in place) */
        if (layout)
            batch_first(&b, stack(&b, v, dirs, 0, 3, hd, NULL), p3, 3, o);
        else
            stack(&b, v, dirs, 0, 3, hd, o);
    }
    n->dead = true;
    return true;
}

bool plan_rnn_lowering(MNCompile *c) {
    int lowered = plan_replace_nodes(c, is_rnn, lower);
    if (diag_failed(&c->diag)) return false;
    mn_figure(c, "recurrent_nodes_unrolled", lowered);
    if (!lowered) return true;
    mn_log(c, 0, "recurrent lowering: %d RNN/GRU/LSTM nodes unrolled over their sequences", lowered);
    int folded = 0; /* the weights' Gathers of constants become constants */
    if (!infer_graph(c->g, &c->diag, c->opt->ival[MN_OPT_fold_max_elems], &folded)) return false;
    c->nodes_folded += folded;
    return true;
}

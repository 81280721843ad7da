/* Time-Slice: values larger than one LM are processed in slices over time.
 *
 * A node that reads or writes such a value and whose work is independent along some
 * axis is replaced by per-slice copies: each large input is cut by an MNCoreInputSplit
 * (it reads the DRAM value and leaves the slices in LM), each slice of the output is
 * computed by its own copy of the node, and an MNCoreOutputConcat writes the slices back
 * into the DRAM value. The axis is the outermost one whose elements sit at different LM
 * addresses (cutting an axis that is spread over PEs or MABs would not shrink the LM
 * footprint); the slice count is the smallest that makes every slice fit. The large
 * value's layout records the split as a Time subaxis on that axis. A MatMul whose
 * weights do not fit is cut along the reduced dimension K (each row slice too, when the
 * rows do not fit either): both operands are split there, the weights once for all row
 * slices, and a chain of MNCoreOutputSums adds the partial products. Elementwise ops, MatMul and
 * Gemm along their rows, Softmax-like ops along other axes, and pools, convolutions and
 * normalizations along the batch can be sliced; Conv, MaxPool and AveragePool also
 * along a spatial axis, their input pieces overlapping by the window's halo; reductions
 * (keepdims, known axes), ArgMax/ArgMin and LRN along axes they do not reduce; data
 * movement (Transpose, Squeeze, Unsqueeze, Slice, Pad, Tile, Gather, GatherElements,
 * Concat, Reshape keeping the leading dimensions, Expand) along an axis it leaves alone,
 * mapped to the input's axis. A node whose input
 * arrives in finer slices along the same axis takes that count and the slices are handed
 * on. Nodes of other kinds (ConvTranspose, Resize, ...) are left whole, counted and named
 * in the log. */
#include "plan.h"
#include "ops.h"
#include <stdlib.h>
#include <string.h>

static int64_t lm_cap(const MNCompile *c) { return machine_lm_cap(&c->machine); }

/* Already cut over time by an earlier split: its num_lw is then one slice's, yet a
 * node reading the whole value still needs more than one LM. */
static bool timed(const MNValue *v) { return layout_timed(v); }

static bool big(const MNCompile *c, const MNValue *v) {
    return v && (v->num_lw > lm_cap(c) || timed(v)) && mn_dtype_bytes(v->dtype);
}

/* Does reduction n keep output axis a apart from what it reduces? Only with keepdims,
 * so that output and input axes line up, and with the axes known (an attribute, or a
 * constant input from opset 18 on); no axes means all of them. */
static bool reduce_keeps(const MNNode *n, int a) {
    if (!ir_attr_int(n, "keepdims", 1)) return false;
    int r = n->in[0]->type.rank;
    const MNAttr *at = ir_attr(n, "axes");
    const int64_t *axes = NULL;
    int na = 0;
    if (at && at->type == MN_ATTR_INTS) {
        axes = at->ints;
        na = at->n;
    } else if (n->nin > 1 && n->in[1] && n->in[1]->konst && n->in[1]->konst->elem == ONNX_INT64) {
        axes = (const int64_t *)n->in[1]->konst->data;
        na = (int)n->in[1]->konst->numel;
    }
    if (!na) return false; /* all axes (or, with noop_with_empty_axes, nothing to slice for) */
    for (int i = 0; i < na; i++)
        if ((axes[i] < 0 ? axes[i] + r : axes[i]) == a) return false;
    return true;
}

/* Is input k of n cut with the output (when its extent on the aligned axis matches)?
 * Elementwise inputs broadcast from the right, so all of them; a Gemm's A and its bias C;
 * for every other op only the data input 0 (weights, axes and shapes pass whole, even
 * when an extent happens to match). */
static bool cut_input(const MNNode *n, int k) {
    if (mn_op_has(n->op, MN_REDUCE | MN_CHAN)) return k == 0;
    switch (n->op) {
    case OP_MatMul: return k <= 1; /* B only along batch axes: in_axis */
    case OP_Gemm: return k == 0 || k == 2;
    case OP_Softmax:
    case OP_LogSoftmax:
    case OP_Hardmax:
    case OP_ArgMax:
    case OP_ArgMin:
    case OP_LRN: return k == 0;
    default: return true;
    }
}

/* Integer list from attribute name or, from the opsets that moved it there, constant
 * input k; false when neither is known. */
static bool ints_of(const MNNode *n, const char *name, int k, const int64_t **v, int *cnt) {
    const MNAttr *at = ir_attr(n, name);
    if (at && at->type == MN_ATTR_INTS) {
        *v = at->ints, *cnt = at->n;
        return true;
    }
    const MNValue *x = k < n->nin ? n->in[k] : NULL;
    if (x && x->konst && x->konst->elem == ONNX_INT64) {
        *v = (const int64_t *)x->konst->data, *cnt = (int)x->konst->numel;
        return true;
    }
    return false;
}

static bool has_axis(const int64_t *axes, int cnt, int r, int a) {
    for (int i = 0; i < cnt; i++)
        if ((axes[i] < 0 ? axes[i] + r : axes[i]) == a) return true;
    return false;
}

/* Data movement: the axis of input k that output axis a comes from, when a can be cut
 * without changing what the op does; -1 when input k passes whole (or a cannot be cut:
 * see movement_sliceable). */
static int movement_axis(const MNNode *n, int k, int a) {
    const MNValue *x = n->in[0], *o = n->out[0];
    int r = o->type.rank, q = x->type.rank;
    const int64_t *v;
    int cnt;
    switch (n->op) {
    case OP_Transpose: {
        if (k) return -1;
        const MNAttr *p = ir_attr(n, "perm");
        return p && p->n == r ? (int)p->ints[a] : r - 1 - a;
    }
    case OP_Squeeze: { /* the a-th input axis that stays */
        if (k) return -1;
        bool known = ints_of(n, "axes", 1, &v, &cnt);
        for (int i = 0, seen = 0; i < q; i++) {
            bool gone = known && cnt ? has_axis(v, cnt, q, i) : x->type.dims[i] == 1;
            if (!gone && seen++ == a) return i;
        }
        return -1;
    }
    case OP_Unsqueeze: {
        if (k || !ints_of(n, "axes", 1, &v, &cnt) || has_axis(v, cnt, r, a)) return -1;
        int before = 0;
        for (int i = 0; i < a; i++) before += has_axis(v, cnt, r, i);
        return a - before;
    }
    case OP_Slice: { /* along an axis it does not slice */
        if (k) return -1;
        if (ints_of(n, "axes", 3, &v, &cnt)) return has_axis(v, cnt, q, a) ? -1 : a;
        const int64_t *st;
        int ns;
        if (!ints_of(n, "starts", 1, &st, &ns)) return -1;
        return a < ns ? -1 : a; /* no axes: the first len(starts) */
    }
    case OP_Pad:
    case OP_Tile: { /* along an axis without padding / repeats */
        if (k) return -1;
        if (n->op == OP_Pad) {
            if (!ints_of(n, "pads", 1, &v, &cnt) || cnt != 2 * q || ir_attr(n, "axes") || (n->nin > 3 && n->in[3]))
                return -1;
            return v[a] || v[q + a] ? -1 : a;
        }
        if (!ints_of(n, "repeats", 1, &v, &cnt) || cnt != q) return -1;
        return v[a] == 1 ? a : -1;
    }
    case OP_GatherElements: { /* data and indices alike, off the gathered axis */
        int ax = (int)ir_attr_int(n, "axis", 0);
        if (ax < 0) ax += r;
        return k <= 1 && a != ax ? a : -1;
    }
    case OP_Gather: { /* out = data[:g] + indices + data[g+1:] */
        int g = (int)ir_attr_int(n, "axis", 0), ri = n->in[1]->type.rank;
        if (g < 0) g += q;
        if (a < g) return k == 0 ? a : -1;
        if (a < g + ri) return k == 1 ? a - g : -1;
        return k == 0 ? a - ri + 1 : -1;
    }
    case OP_Expand: /* x from the right where it is not broadcast; the shape is rewritten */
        return k == 0 ? a - (r - q) : -1;
    case OP_Reshape: { /* where the dimensions up to a are kept (row-major order) */
        if (k || q <= a) return -1;
        for (int i = 0; i <= a; i++)
            if (x->type.dims[i] != o->type.dims[i]) return -1;
        return a;
    }
    case OP_Concat: { /* every input, off the joined axis */
        int ax = (int)ir_attr_int(n, "axis", 0);
        if (ax < 0) ax += r;
        return a != ax ? a : -1;
    }
    default: return -1;
    }
}

static bool movement_op(const MNNode *n) {
    switch (n->op) {
    case OP_Transpose:
    case OP_Squeeze:
    case OP_Unsqueeze:
    case OP_Slice:
    case OP_Pad:
    case OP_Tile:
    case OP_GatherElements:
    case OP_Gather:
    case OP_Concat:
    case OP_Reshape:
    case OP_Expand: return true;
    default: return false;
    }
}

/* May n be cut along its channels (axis 1)? Pools and normalisations work channel by
 * channel; a convolution's output channels each read all of X and their own filters
 * (with one group only: grouped channels would also cut X and change "group"). */
static bool channel_cut(const MNNode *n) {
    if (!mn_op_has(n->op, MN_CHAN) || n->out[0]->type.rank < 3) return false;
    return (n->op != OP_Conv && n->op != OP_ConvTranspose) || ir_attr_int(n, "group", 1) == 1;
}

/* The axis of input k cut with output axis a, or -1 when input k passes whole. */
static int in_axis(const MNNode *n, int k, int a) {
    const MNValue *x = n->in[k], *o = n->out[0];
    if (!x) return -1;
    int r = o->type.rank, ax = movement_op(n) ? movement_axis(n, k, a) : cut_input(n, k) ? a - (r - x->type.rank) : -1;
    if (n->op == OP_MatMul &&
        k == 1) /* B follows the batch axes (a broadcast batch of 1 passes whole) and the columns */
        ax = a == r - 1 ? x->type.rank - 1 : a < r - 2 && x->type.rank > 2 ? a - (r - x->type.rank) : -1;
    if (n->op == OP_MatMul && ax >= x->type.rank - (k == 0 ? 1 : 2) && !(k == 1 && a == r - 1))
        ax = -1; /* never K, never B's own rows */
    if (n->op == OP_Gemm && k == 0 && ir_attr_int(n, "transA", 0))
        ax = a == 0 ? 1 : -1; /* A is (K, M): rows are its columns */
    if (a == 1 && channel_cut(n)) { /* per-channel operands follow the channels */
        bool per_channel = (n->op == OP_BatchNormalization || n->op == OP_InstanceNormalization) && k >= 1;
        if (per_channel || ((n->op == OP_Conv || n->op == OP_ConvTranspose) && k == 2))
            ax = 0;
        else if (n->op == OP_Conv)
            ax = k == 1 ? 0 : -1; /* W is (M, C, ...); every slice reads all of X */
        else if (n->op == OP_ConvTranspose)
            ax = k == 1 ? 1 : -1; /* W is (C, M, ...) */
    }
    if (ax < 0 || ax >= x->type.rank) return -1;
    if (n->op == OP_GatherElements && k == 0) /* the data may be wider than its indices: windows */
        return x->type.dims[ax] >= o->type.dims[a] ? ax : -1;
    return x->type.dims[ax] == o->type.dims[a] ? ax : -1;
}

/* May node n be computed slice by slice along output axis a? */
static bool sliceable(const MNNode *n, int a, int64_t opset) {
    const MNValue *o = n->out[0];
    int r = o->type.rank;
    if (mn_op_has(n->op, MN_REDUCE)) return reduce_keeps(n, a);
    if (mn_op_has(n->op, MN_CHAN)) return a == 0 || (a == 1 && channel_cut(n)); /* batch, channels */
    if (plan_streamed(n, 1) && a == r - 1) return false; /* a streamed B is read whole, in DRAM */
    switch (n->op) {
    case OP_MatMul: return r >= 2; /* rows (and batches) with B whole; columns with A whole */
    case OP_Gemm: return a == 0; /* rows (A's columns with transA) */
    case OP_Softmax:
    case OP_LogSoftmax:
    case OP_Hardmax: {
        /* before opset 13 the default axis is 1 and the op normalises over all axes
         * from it on (the input flattened to 2-D) */
        bool old = opset < 13;
        int ax = (int)ir_attr_int(n, "axis", old ? 1 : -1);
        if (ax < 0) ax += r;
        return a < ax || (!old && a != ax && ax == r - 1);
    }
    case OP_ArgMax:
    case OP_ArgMin:
    case OP_LRN: {
        /* one axis: LRN's channels (1), ArgMax's reduced axis kept as 1 */
        if (n->op == OP_LRN) return a != 1;
        int ax = (int)ir_attr_int(n, "axis", 0);
        if (ax < 0) ax += r;
        return ir_attr_int(n, "keepdims", 1) && a != ax;
    }
    case OP_MNCoreCast:
    case OP_MNCoreLayoutSwitch: return true;
    default: break;
    }
    if (movement_op(n)) {
        /* GatherElements reads data at its indices' positions, so both are cut or
         * neither (indices may be smaller than the data); Concat cuts every input */
        if (n->op == OP_Expand) return true; /* each slice expands its part, or all of x when x is broadcast there */
        if (n->op == OP_GatherElements || n->op == OP_Concat) {
            for (int k = 0; k < n->nin; k++)
                if (in_axis(n, k, a) < 0) return false;
            return true;
        }
        for (int k = 0; k < n->nin; k++) /* some data input follows the output's axis */
            if (in_axis(n, k, a) >= 0) return true;
        return false;
    }
    return mn_op_has(n->op, MN_EW); /* elementwise ops: every output axis is independent */
}

/* num_lw of a value like v with dims and dtype dt, canonically laid out */
static int64_t shape_lw(MNCompile *c, const MNValue *v, const int64_t *dims, MNDtype dt) {
    MNType t = v->type;
    t.dims = (int64_t *)dims;
    MNLayout l;
    return plan_layout_canonical(&t, dt, &c->machine, &l) ? layout_num_lw(&l, c->machine.address_alignment_lw)
                                                          : INT64_MAX;
}

/* v's dimensions with axis cut to len, into dims */
static void cut_dims(const MNValue *v, int axis, int64_t len, int64_t *dims) {
    memcpy(dims, v->type.dims, sizeof(int64_t) * (size_t)v->type.rank);
    dims[axis] = len;
}

/* num_lw of v's canonical layout with axis cut to len */
static int64_t chunk_lw(MNCompile *c, const MNValue *v, int axis, int64_t len) {
    int64_t dims[MN_MAX_RANK];
    cut_dims(v, axis, len, dims);
    return shape_lw(c, v, dims, v->dtype);
}

/* LM a node's operand takes while the node runs (immediates and what only the compiler
 * reads take none). */
static int64_t operand_lw(const MNValue *v) {
    return v && v->loc_kind != MN_LOC_KIND_IMM && mn_dtype_bytes(v->dtype) && v->num_lw > 0 ? v->num_lw : 0;
}

/* input k of n as LM sees it: NULL when n streams it from DRAM itself (plan_streamed) */
static const MNValue *lm_in(const MNNode *n, int k) { return plan_streamed(n, k) ? NULL : n->in[k]; }

/* Do operands of these sizes fit LM0 and LM1 at once, each in one bank? (largest first,
 * each into the bank with more room: what the scheduler's allocation does) */
static bool pack2(const MNCompile *c, int64_t *sz, int n) {
    for (int i = 1; i < n; i++) /* insertion sort, descending: a handful of operands */
        for (int j = i; j > 0 && sz[j] > sz[j - 1]; j--) {
            int64_t t = sz[j];
            sz[j] = sz[j - 1];
            sz[j - 1] = t;
        }
    int64_t room[2] = {c->machine.lm0_lw, c->machine.lm1_lw};
    for (int i = 0; i < n; i++) {
        int b = room[0] >= room[1] ? 0 : 1;
        if (room[b] < sz[i]) return false;
        room[b] -= sz[i];
    }
    return true;
}

/* Does node n, uncut, have room for all its operands at once? */
static bool node_packs(const MNCompile *c, const MNNode *n) {
    int64_t *sz = xmalloc(sizeof(int64_t) * (size_t)(n->nin + n->nout + 1));
    int m = 0;
    for (int k = 0; k < n->nin + n->nout; k++) {
        const MNValue *v = k < n->nin ? n->in[k] : n->out[k - n->nin];
        bool again = false; /* the same value read twice takes its room once */
        for (int j = 0; j < k && !again; j++) again = (j < n->nin ? n->in[j] : n->out[j - n->nin]) == v;
        if (!again) sz[m++] = k < n->nin ? operand_lw(lm_in(n, k)) : operand_lw(v);
    }
    bool ok = pack2(c, sz, m);
    free(sz);
    return ok;
}

/* Whether input v, passed whole to every slice, fits one LM (immediates do not move). */
static bool fits_whole(MNCompile *c, const MNValue *v) {
    return !v || v->loc_kind == MN_LOC_KIND_IMM || !mn_dtype_bytes(v->dtype) || (v->num_lw <= lm_cap(c) && !timed(v));
}

/* num_lw of input k of n cut along axis to len, in the layout n demands of it where it
 * demands one the machine can hold (a matrix operand's K packed), else canonical */
static int64_t piece_lw(MNCompile *c, const MNNode *n, int k, int axis, int64_t len) {
    const MNValue *v = n->in[k];
    int64_t dims[MN_MAX_RANK];
    cut_dims(v, axis, len, dims);
    MNType t = v->type;
    t.dims = dims;
    MNLayout l;
    char err[200];
    if (plan_layout_demand_of(n, k, &t, v->dtype, NULL, &c->machine, &l) &&
        layout_valid(&l, &c->machine, mn_dtype_bytes(v->dtype), err, sizeof err))
        return layout_num_lw(&l, c->machine.address_alignment_lw);
    return shape_lw(c, v, dims, v->dtype);
}

/* Whether every piece of n's input k (k < 0: its output) cut into S slices along axis
 * (all of the same length but the last) fits cap. Both lengths are checked: a layout
 * may pad a shorter piece to more long words than a longer one (a length that spreads
 * over fewer MABs). */
static bool pieces_fit(MNCompile *c, const MNNode *n, int k, int axis, int64_t d, int64_t S, int64_t cap) {
    int64_t chunk = (d + S - 1) / S, last = d - chunk * (S - 1);
    if (last <= 0) return false;
    if (k < 0) return chunk_lw(c, n->out[0], axis, chunk) <= cap && chunk_lw(c, n->out[0], axis, last) <= cap;
    return piece_lw(c, n, k, axis, chunk) <= cap && piece_lw(c, n, k, axis, last) <= cap;
}

/* Can a row slice of MatMul n of len rows along output axis a be cut along K so that
 * each partial product and each running sum fits LM (what k_split will do)? */
static bool k_cut_packs(MNCompile *c, const MNNode *n, int a, int64_t len) {
    const MNValue *A = n->in[0], *B = n->in[1], *o = n->out[0];
    int64_t K = B->type.dims[0], ad[MN_MAX_RANK], od[MN_MAX_RANK];
    int aa = in_axis(n, 0, a);
    memcpy(ad, A->type.dims, sizeof(int64_t) * (size_t)A->type.rank);
    memcpy(od, o->type.dims, sizeof(int64_t) * (size_t)o->type.rank);
    if (aa >= 0) ad[aa] = len;
    od[a] = len;
    MNDtype pdt = o->dtype == MN_DT_Half ? MN_DT_Float : o->dtype;
    int64_t plw = shape_lw(c, o, od, pdt), olw = shape_lw(c, o, od, o->dtype);
    for (int64_t ck = 1; ck <= K; ck++) {
        ad[A->type.rank - 1] = ck;
        int64_t sz[3] = {piece_lw(c, n, 1, 0, ck), shape_lw(c, A, ad, A->dtype), plw}, sum[3] = {plw, plw, olw};
        if (sz[0] > lm_cap(c)) break; /* larger K pieces only grow */
        if (pack2(c, sz, 3) && pack2(c, sum, 3)) return true;
    }
    return false;
}

/* Do the operands of each slice of n along output axis a (S slices) fit LM together?
 * kb: the weights are cut along K inside each slice: k_cut_packs decides for them. */
static bool slice_packs(MNCompile *c, const MNNode *n, int a, int64_t d, int64_t S, bool kb) {
    int64_t chunk = (d + S - 1) / S, last = d - chunk * (S - 1);
    int64_t *sz = xmalloc(sizeof(int64_t) * (size_t)(n->nin + 2));
    bool ok = last > 0;
    for (int pass = 0; ok && pass < 2; pass++) {
        int64_t len = pass ? last : chunk;
        int m = 0;
        sz[m++] = chunk_lw(c, n->out[0], a, len);
        for (int k = 0; k < n->nin; k++) {
            if (!n->in[k] || (kb && k == 1)) continue;
            int ax = in_axis(n, k, a);
            sz[m++] = ax >= 0 ? piece_lw(c, n, k, ax, len) : operand_lw(lm_in(n, k));
        }
        ok = pack2(c, sz, m) && (!kb || k_cut_packs(c, n, a, len));
    }
    free(sz);
    return ok;
}

static MNValue *slice_value(MNCompile *c, const MNValue *v, const char *name, int axis, int64_t len) {
    MNGraph *g = c->g;
    MNValue *s = ir_value_new(g, name);
    ir_type_set(g, &s->type, v->type.elem, v->type.rank, v->type.dims);
    s->type.dims[axis] = len;
    s->dtype = v->dtype;
    MNLayout l;
    if (plan_layout_canonical(&s->type, s->dtype, &c->machine, &l)) {
        layout_set(g->arena, s, &l);
        s->layout_kind = "MNCore";
        s->padded_shape = ARENA_ARRAY(g->arena, int64_t, l.rank + 1);
        for (int k = 0; k < l.rank; k++) s->padded_shape[k] = layout_padded(&l, k);
        s->num_lw = layout_num_lw(&l, c->machine.address_alignment_lw);
    }
    /* a slice still larger than one LM (of an outer cut) waits in DRAM for its own cut */
    s->loc_kind = s->num_lw > lm_cap(c) ? MN_LOC_KIND_DRAM : MN_LOC_KIND_LM;
    s->loc = s->loc_kind == MN_LOC_KIND_DRAM ? MN_LOC_DRAM : MN_LOC_UNKNOWN;
    return s;
}

/* Mark v's layout with a Time subaxis of n slices on axis a (the per-slice extent then
 * follows on the same axis), and its num_lw as the per-slice size. */
static void mark_time(MNCompile *c, MNValue *v, int a, int64_t n, int64_t chunk, int64_t slice_lw) {
    if (timed(v)) return; /* a second reader cuts it its own way; the layout keeps the first */
    MNType t = v->type;
    int64_t dims[MN_MAX_RANK];
    memcpy(dims, v->type.dims, sizeof(int64_t) * (size_t)t.rank);
    dims[a] = chunk;
    t.dims = dims;
    MNLayout l;
    if (!plan_layout_canonical(&t, v->dtype, &c->machine, &l) || l.nsub[a] >= LAYOUT_MAX_SUB) return;
    memmove(&l.sub[a][1], &l.sub[a][0], sizeof(MNSubaxis) * (size_t)l.nsub[a]);
    l.sub[a][0] = (MNSubaxis){n, 1, LV_TIME};
    l.nsub[a]++;
    l.shape[a] = v->type.dims[a];
    layout_set(c->g->arena, v, &l);
    for (int k = 0; k < l.rank; k++) v->padded_shape[k] = layout_padded(&l, k);
    v->num_lw = slice_lw;
}

/* The new computation order, grown as nodes are emitted. */
typedef struct {
    MNNode **v;
    int n, cap;
} Order;

static void push(MNGraph *g, Order *o, MNNode *n) { ARENA_PUSH(g->arena, o->v, o->n, o->cap, n); }

/* A Reshape or Expand copy's target shape: the slice's dimensions, as a constant like the
 * original shape input (so the copy reshapes one slice, not the whole). */
static MNValue *slice_shape(MNCompile *c, const MNValue *orig, const MNValue *slice) {
    MNGraph *g = c->g;
    int64_t r = slice->type.rank;
    MNBuf nm = {0}; /* named by its dimensions, so equal slices share one */
    buf_printf(&nm, "%s_as", orig->name);
    for (int64_t i = 0; i < r; i++) buf_printf(&nm, "%s%lld", i ? "x" : "_", (long long)slice->type.dims[i]);
    MNValue *p = ir_value_lookup(g, nm.data);
    if (p && p->konst) {
        buf_free(&nm);
        return p;
    }
    p = ir_value_new(g, nm.data);
    buf_free(&nm);
    MNValue keep = *p;
    *p = *orig;
    p->name = keep.name;
    p->id = keep.id;
    p->nuses = 0;
    p->is_output = false;
    p->is_input = false;
    p->producer = NULL;
    p->konst = ir_tensor_new(g->arena, ONNX_INT64, 1, &r);
    for (int64_t i = 0; i < r; i++) ir_tensor_set_i(p->konst, i, slice->type.dims[i]);
    p->is_initializer = true;
    return p;
}

/* Emit a per-slice copy: its layout demands are met again first (the pieces of a split
 * are written in the layout it wants; another input gets a switch). */
static void emit_copy(MNCompile *c, Order *ord, MNNode *n, int *nsw, double *cost) {
    MNNode **sw = ARENA_ARRAY(c->g->arena, MNNode *, n->nin + 1);
    int k = plan_layout_meet(c, n, sw, cost);
    for (int i = 0; i < k; i++) push(c->g, ord, sw[i]);
    for (int i = 0; i < n->nin; i++) { /* a re-laid piece: the whole's per-slice size follows */
        MNValue *p = n->in[i],
                *whole = p && p->producer && p->producer->op == OP_MNCoreInputSplit ? p->producer->in[0] : NULL;
        if (whole && timed(whole) && p->num_lw > whole->num_lw) whole->num_lw = p->num_lw;
    }
    *nsw += k;
    push(c->g, ord, n);
}

/* An MNCoreInputSplit of the first d elements of x along axis into n pieces of chunk
 * (the last takes the rest); returns the pieces. When d is short of x's extent (the
 * data of a GatherElements whose indices are narrower), the pieces are windows at
 * "starts" and the tail is never read. */
static MNValue **split_value(MNCompile *c, Order *ord, MNValue *x, int axis, int64_t n, int64_t chunk, int64_t d,
                             const char *tag) {
    MNGraph *g = c->g;
    MNNode *sp = ir_node_new(g, "MNCoreInputSplit", 1, (int)n);
    sp->name = arena_printf(g->arena, "%s_%s", x->name, tag);
    sp->domain = "mncore";
    sp->in[0] = x;
    bool win = d < x->type.dims[axis];
    sp->nattr = win ? 2 : 1;
    sp->attrs = ARENA_ARRAY(g->arena, MNAttr, sp->nattr);
    sp->attrs[0] = (MNAttr){.name = "axis", .type = MN_ATTR_INT, .i = axis};
    if (win) {
        int64_t *starts = ARENA_ARRAY(g->arena, int64_t, n);
        for (int64_t s = 0; s < n; s++) starts[s] = s * chunk;
        sp->attrs[1] = (MNAttr){.name = "starts", .type = MN_ATTR_INTS, .n = (int)n, .ints = starts};
    }
    MNValue **pieces = ARENA_ARRAY(g->arena, MNValue *, n);
    for (int64_t s = 0; s < n; s++) {
        int64_t len = s == n - 1 ? d - chunk * (n - 1) : chunk;
        MNValue *pv = slice_value(
            c, x, arena_printf(g->arena, "%s_%s%lld", x->name, tag[0] == 'k' ? "k" : "slice", (long long)s), axis, len);
        pv->producer = sp;
        pv->producer_out = (int)s;
        sp->out[s] = pv;
        pieces[s] = pv;
    }
    if (big(c, x)) mark_time(c, x, axis, n, chunk, pieces[0]->num_lw);
    push(g, ord, sp);
    return pieces;
}

/* Weights already cut along K, so that the row slices of one MatMul share one split. */
typedef struct {
    MNValue *b;
    int64_t sk;
    MNValue **pieces;
} KCut;

/* Cut the MatMul n, whose 2-D weights B do not fit one LM, along the reduced dimension
 * K: A and B are split there, each pair multiplied, and a chain of MNCoreOutputSums adds the
 * partial products (kept in Float so that Half operands lose nothing in the sum). The
 * K slice count is the smallest that makes both operand pieces fit. Returns false when
 * none does or when the product itself does not fit. */
static bool k_split(MNCompile *c, MNNode *n, Order *ord, KCut *kc, int *nk, int *slices, int *nsw, double *cost) {
    MNGraph *g = c->g;
    MNValue *A = n->in[0], *B = n->in[1], *o = n->out[0];
    int64_t cap = lm_cap(c), K = B->type.dims[0], Sk;
    MNLayout pl; /* the partial products, in Float when the product is Half */
    MNDtype pdt = o->dtype == MN_DT_Half ? MN_DT_Float : o->dtype;
    if (o->num_lw > cap || !plan_layout_canonical(&o->type, pdt, &c->machine, &pl) ||
        layout_num_lw(&pl, c->machine.address_alignment_lw) > cap)
        return false;
    for (Sk = 2; Sk <= K; Sk++) {
        int64_t ck = (K + Sk - 1) / Sk;
        int64_t plw = layout_num_lw(&pl, c->machine.address_alignment_lw);
        int64_t sz[3] = {piece_lw(c, n, 1, 0, ck), piece_lw(c, n, 0, A->type.rank - 1, ck), plw},
                sum[3] = {plw, plw, o->num_lw};
        if (sz[0] <= cap && sz[1] <= cap && pack2(c, sz, 3) && pack2(c, sum, 3))
            break; /* each product, each running sum */
    }
    if (Sk > K) return false;
    int64_t ck = (K + Sk - 1) / Sk;
    MNValue **pb = NULL;
    for (int i = 0; i < *nk; i++)
        if (kc[i].b == B && kc[i].sk == Sk) pb = kc[i].pieces;
    if (!pb) {
        pb = split_value(c, ord, B, 0, Sk, ck, K, "ksplit");
        if (*nk < 64) kc[(*nk)++] = (KCut){B, Sk, pb};
    }
    MNValue **pa = split_value(c, ord, A, A->type.rank - 1, Sk, ck, K, "ksplit");
    /* a running sum, one partial product at a time: only the sum so far and the newest
     * partial need LM, however many slices K has */
    MNValue *acc = NULL;
    for (int64_t k = 0; k < Sk; k++) {
        MNNode *cp = ir_node_new(g, n->op_type, 2, 1);
        cp->name = arena_printf(g->arena, "%s_k%lld", n->name, (long long)k);
        cp->domain = n->domain;
        cp->in[0] = pa[k];
        cp->in[1] = pb[k];
        MNValue *pv = ir_value_new(g, arena_printf(g->arena, "%s_partial%lld", o->name, (long long)k));
        pv->type = o->type;
        pv->dtype = pdt;
        plan_set_layout(c, pv, &pl);
        pv->loc_kind = MN_LOC_KIND_LM;
        pv->producer = cp;
        cp->out[0] = pv;
        emit_copy(c, ord, cp, nsw, cost);
        (*slices)++;
        if (!acc) {
            acc = pv;
            continue;
        }
        MNNode *sum = ir_node_new(g, "MNCoreOutputSum", 2, 1);
        sum->name = arena_printf(g->arena, "%s_ksum%lld", o->name, (long long)k);
        sum->domain = "mncore";
        sum->in[0] = acc;
        sum->in[1] = pv;
        MNValue *sv = o;
        if (k < Sk - 1) { /* the sum so far, in the partials' dtype */
            sv = ir_value_new(g, arena_printf(g->arena, "%s_sum%lld", o->name, (long long)k));
            sv->type = o->type;
            sv->dtype = pdt;
            plan_set_layout(c, sv, &pl);
            sv->loc_kind = MN_LOC_KIND_LM;
        }
        sv->producer = sum;
        sv->producer_out = 0;
        sum->out[0] = sv;
        push(g, ord, sum);
        acc = sv;
    }
    n->dead = true;
    return true;
}

static bool k_splittable(const MNCompile *c, const MNNode *n) {
    return n->op == OP_MatMul && n->nin == 2 && n->in[1]->type.rank == 2 && n->in[0]->type.rank >= 1 &&
           big(c, lm_in(n, 1));
}

/* The MNCoreOutputConcat that will gather S slices of o along axis a. */
static MNNode *new_concat(MNCompile *c, const MNValue *o, int a, int64_t S) {
    MNGraph *g = c->g;
    MNNode *cat = ir_node_new(g, "MNCoreOutputConcat", (int)S, 1);
    cat->name = arena_printf(g->arena, "%s_concat", o->name);
    cat->domain = "mncore";
    cat->nattr = 1;
    cat->attrs = ARENA_NEW(g->arena, MNAttr);
    cat->attrs[0] = (MNAttr){.name = "axis", .type = MN_ATTR_INT, .i = a};
    return cat;
}

/* n is replaced: cat now produces o, which keeps a Time subaxis when it does not fit LM
 * and is then written to DRAM by the concat (to LM otherwise). */
static void finish_concat(MNCompile *c, Order *ord, MNNode *n, MNNode *cat, int a, int64_t S, int64_t chunk) {
    MNValue *o = n->out[0];
    n->dead = true;
    o->producer = cat;
    o->producer_out = 0;
    cat->out[0] = o;
    if (big(c, o)) mark_time(c, o, a, S, chunk, cat->in[0]->num_lw);
    o->loc_kind = o->is_output ? MN_LOC_KIND_INOUT : big(c, o) ? MN_LOC_KIND_DRAM : MN_LOC_KIND_LM;
    o->loc = o->loc_kind == MN_LOC_KIND_LM ? MN_LOC_UNKNOWN : MN_LOC_DRAM;
    push(c->g, ord, cat);
}

/* Window ops (Conv, MaxPool, AveragePool) cut along a spatial axis: output rows
 * [r0, r1) read input rows [r0*s - pb, (r1-1)*s - pb + (k-1)*dil + 1), so the input
 * pieces overlap by the window's halo (an MNCoreInputSplit with "starts") and each copy
 * keeps the padding only at the edges it touches. */
typedef struct {
    int axis; /* spatial axis of the output (2.. rank-1) */
    int64_t k, s, dil; /* window, stride, dilation on that axis */
    int64_t pb, pe; /* pads at its beginning and end */
    int sp; /* index of the axis among the spatial ones */
} Window;

static bool window_of(const MNNode *n, int a, Window *w) {
    if ((n->op != OP_Conv && n->op != OP_MaxPool && n->op != OP_AveragePool) || n->nout != 1) return false;
    const MNValue *x = n->in[0], *o = n->out[0];
    int r = o->type.rank, ns = r - 2, sp = a - 2;
    if (r < 3 || a < 2 || x->type.rank != r) return false;
    const char *ap = ir_attr_string(n, "auto_pad", "NOTSET");
    bool same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");
    if ((strcmp(ap, "NOTSET") && strcmp(ap, "VALID") && !same) || ir_attr_int(n, "ceil_mode", 0)) return false;
    const MNAttr *ks = ir_attr(n, "kernel_shape"), *st = ir_attr(n, "strides"), *pd = ir_attr(n, "pads"),
                 *dl = ir_attr(n, "dilations");
    if (ks && ks->n == ns)
        w->k = ks->ints[sp];
    else if (n->op == OP_Conv && n->nin > 1 && n->in[1]->type.rank == r)
        w->k = n->in[1]->type.dims[a];
    else
        return false;
    w->s = st && st->n == ns ? st->ints[sp] : 1;
    w->dil = dl && dl->n == ns ? dl->ints[sp] : 1;
    w->pb = pd && pd->n == 2 * ns && !strcmp(ap, "NOTSET") ? pd->ints[sp] : 0;
    w->pe = pd && pd->n == 2 * ns && !strcmp(ap, "NOTSET") ? pd->ints[ns + sp] : 0;
    if (same) { /* the pads SAME implies: the output covers ceil(in / stride) windows */
        int64_t total = (o->type.dims[a] - 1) * w->s + (w->k - 1) * w->dil + 1 - x->type.dims[a];
        if (total < 0) total = 0;
        w->pb = !strcmp(ap, "SAME_UPPER") ? total / 2 : total - total / 2;
        w->pe = total - w->pb;
    }
    w->axis = a;
    w->sp = sp;
    return w->k > 0 && w->s > 0 && w->dil > 0;
}

/* input rows [*lo, *hi) (clamped) for output rows [r0, r1), with the pads still needed */
static void window_rows(const Window *w, int64_t H, int64_t r0, int64_t r1, int64_t *lo, int64_t *hi, int64_t *pb,
                        int64_t *pe) {
    int64_t l = r0 * w->s - w->pb, h = (r1 - 1) * w->s - w->pb + (w->k - 1) * w->dil + 1;
    *pb = l < 0 ? -l : 0;
    *pe = h > H ? h - H : 0;
    *lo = l < 0 ? 0 : l;
    *hi = h > H ? H : h;
}

/* the smallest slice count along w's axis that makes output and input pieces fit */
static int64_t window_slices(MNCompile *c, const MNNode *n, const Window *w) {
    const MNValue *x = n->in[0], *o = n->out[0];
    int64_t cap = lm_cap(c), d = o->type.dims[w->axis], H = x->type.dims[w->axis];
    for (int k = 1; k < n->nin; k++) /* weights and bias pass whole to every piece */
        if (!fits_whole(c, n->in[k])) return 0;
    for (int64_t S = 2; S <= d; S++) {
        int64_t chunk = (d + S - 1) / S, lo, hi, pb, pe;
        if (!pieces_fit(c, n, -1, w->axis, d, S, cap)) continue;
        /* every input piece must hold some row and fit; edge pieces are clipped, and a
         * narrower piece may still need more long words, so each is checked */
        bool fits = true;
        int64_t sz[MN_MAX_RANK + 8];
        for (int64_t s = 0; fits && s < S; s++) {
            int64_t r0 = s * chunk, r1 = s == S - 1 ? d : r0 + chunk;
            window_rows(w, H, r0, r1, &lo, &hi, &pb, &pe);
            fits = hi > lo && chunk_lw(c, x, w->axis, hi - lo) <= cap;
            int m = 0; /* and with the weights and its output piece, all at once */
            sz[m++] = chunk_lw(c, x, w->axis, hi > lo ? hi - lo : 1);
            sz[m++] = chunk_lw(c, o, w->axis, r1 - r0);
            for (int k = 1; k < n->nin && m < (int)(sizeof sz / sizeof sz[0]); k++) sz[m++] = operand_lw(n->in[k]);
            if (fits) fits = pack2(c, sz, m);
        }
        if (fits) return S;
    }
    return 0;
}

static void window_split(MNCompile *c, MNNode *n, const Window *w, int64_t S, Order *ord, int *slices, int *nsw,
                         double *cost) {
    MNGraph *g = c->g;
    MNValue *x = n->in[0], *o = n->out[0];
    int a = w->axis, r = o->type.rank, ns = r - 2;
    int64_t d = o->type.dims[a], H = x->type.dims[a], chunk = (d + S - 1) / S;
    MNNode *sp = ir_node_new(g, "MNCoreInputSplit", 1, (int)S);
    sp->name = arena_printf(g->arena, "%s_window_split", x->name);
    sp->domain = "mncore";
    sp->in[0] = x;
    sp->nattr = 2;
    sp->attrs = ARENA_ARRAY(g->arena, MNAttr, 2);
    int64_t *starts = ARENA_ARRAY(g->arena, int64_t, S);
    sp->attrs[0] = (MNAttr){.name = "axis", .type = MN_ATTR_INT, .i = a};
    sp->attrs[1] = (MNAttr){.name = "starts", .type = MN_ATTR_INTS, .n = (int)S, .ints = starts};
    push(g, ord, sp);
    MNNode *cat = new_concat(c, o, a, S);
    for (int64_t s = 0; s < S; s++) {
        int64_t r0 = s * chunk, r1 = s == S - 1 ? d : r0 + chunk, lo, hi, pb, pe;
        window_rows(w, H, r0, r1, &lo, &hi, &pb, &pe);
        starts[s] = lo;
        MNValue *xp = slice_value(c, x, arena_printf(g->arena, "%s_win%lld", x->name, (long long)s), a, hi - lo);
        xp->producer = sp;
        xp->producer_out = (int)s;
        sp->out[s] = xp;
        MNNode *cp = ir_node_new(g, n->op_type, n->nin, 1);
        cp->name = arena_printf(g->arena, "%s_slice%lld", n->name, (long long)s);
        cp->domain = n->domain;
        /* the same attributes but pads: only the edges this slice touches keep theirs */
        cp->nattr = n->nattr + 1;
        cp->attrs = ARENA_ARRAY(g->arena, MNAttr, cp->nattr);
        int na = 0;
        for (int k = 0; k < n->nattr; k++)
            if (strcmp(n->attrs[k].name, "pads") && strcmp(n->attrs[k].name, "auto_pad")) cp->attrs[na++] = n->attrs[k];
        const MNAttr *pd = ir_attr(n, "pads");
        int64_t *pads = ARENA_ARRAY(g->arena, int64_t, 2 * ns);
        for (int k = 0; k < 2 * ns; k++) pads[k] = pd && pd->n == 2 * ns ? pd->ints[k] : 0;
        for (int k = 0; k < ns && strcmp(ir_attr_string(n, "auto_pad", "NOTSET"), "NOTSET"); k++) {
            Window wk; /* auto_pad: each copy gets the pads it implies, written out */
            if (!window_of(n, 2 + k, &wk)) die("window attributes of '%s' changed under Time-Slice", n->name);
            pads[k] = wk.pb;
            pads[ns + k] = wk.pe;
        }
        pads[w->sp] = pb;
        pads[ns + w->sp] = pe;
        cp->attrs[na++] = (MNAttr){.name = "pads", .type = MN_ATTR_INTS, .n = 2 * ns, .ints = pads};
        cp->nattr = na;
        cp->in[0] = xp;
        for (int k = 1; k < n->nin; k++) cp->in[k] = n->in[k];
        MNValue *ov = slice_value(c, o, arena_printf(g->arena, "%s_slice%lld", o->name, (long long)s), a, r1 - r0);
        ov->producer = cp;
        cp->out[0] = ov;
        cat->in[s] = ov;
        emit_copy(c, ord, cp, nsw, cost);
        (*slices)++;
    }
    finish_concat(c, ord, n, cat, a, S, chunk);
}

/* What Time-Slice has emitted and counted so far. */
typedef struct {
    Order ord;
    KCut kc[64];
    int nk, sliced, slices, left, chained, ksplit, nsw, windowed;
    double swcost;
    int whole[OP_COUNT]; /* nodes left whole on large values, by op */
} SliceCtx;

/* Emit node n, cut when it touches a value larger than one LM. */
static void slice_node(MNCompile *c, SliceCtx *st, MNNode *n) {
    MNGraph *g = c->g;
    int64_t cap = lm_cap(c);
    bool touches = false;
    for (int k = 0; k < n->nout; k++) touches |= big(c, n->out[k]);
    for (int k = 0; k < n->nin; k++) touches |= big(c, lm_in(n, k));
    /* values that fit one by one may still not fit together: the node needs all of
     * them in LM at once */
    if (!touches && n->nout == 1 && n->out[0] && mn_dtype_bytes(n->out[0]->dtype)) touches = !node_packs(c, n);
    MNValue *o = n->nout == 1 ? n->out[0] : NULL;
    MNLayout ol;
    int a = -1;
    int64_t S = 0;
    bool kb = k_splittable(c, n); /* before any split marks the weights with Time */
    if (touches && o && o->type.rank > 0 && plan_layout_canonical(&o->type, o->dtype, &c->machine, &ol)) {
        /* the outermost address axis the node may be cut along where some slice count
         * makes output and cut inputs fit (an outer axis cut to single elements can
         * still be too big: then a deeper one) */
        /* weights too large for one LM: a cut along the columns first, which cuts B
         * and needs no partial sums; the rows then need a cut along K as well */
        int cand[MN_MAX_RANK], ncand = 0, r = o->type.rank;
        if (kb) cand[ncand++] = r - 1;
        for (int i = 0; i < r; i++)
            if (!(kb && i == r - 1)) cand[ncand++] = i;
        int ci = 0;
        for (; ci < ncand && S < 2; ci++) {
            a = cand[ci];
            /* an axis spread over MABs still shrinks what is cut with it (the filters
             * of a channel cut), so any axis is a candidate; the fit check decides */
            if (o->type.dims[a] < 2 || !sliceable(n, a, g->opset)) continue;
            bool kcut = kb && a != r - 1; /* B passes whole to row slices, to be cut along K */
            int64_t d = o->type.dims[a];
            for (S = 2; S <= d; S++) {
                bool fits = pieces_fit(c, n, -1, a, d, S, cap);
                for (int k = 0; fits && k < n->nin; k++) { /* and every input that is cut */
                    int ax = in_axis(n, k, a);
                    if (ax >= 0) fits = pieces_fit(c, n, k, ax, d, S, cap);
                    /* one passed whole must fit as it is (a matrix product's weights
                     * may still be cut along K inside each slice) */
                    else if (!kcut && !fits_whole(c, lm_in(n, k)))
                        fits = false;
                }
                if (fits) fits = slice_packs(c, n, a, d, S, kcut);
                if (fits) break;
            }
            if (S > d) S = 0;
        }
        if (S < 2) a = -1;
        /* an input that arrives in finer slices along the same axis sets the count:
         * finer slices fit too, and its slices are then handed on, not gathered in
         * DRAM and cut again */
        for (int k = 0; S >= 2 && k < n->nin; k++) {
            int ax = in_axis(n, k, a);
            const MNNode *pc = ax >= 0 ? n->in[k]->producer : NULL;
            if (pc && pc->op == OP_MNCoreOutputConcat && pc->nin > S && ir_attr_int(pc, "axis", -1) == ax &&
                (o->type.dims[a] + pc->nin - 1) / pc->nin * (pc->nin - 1) < o->type.dims[a])
                S = pc->nin;
        }
    }
    /* a window op (batch of one, say) cut along a spatial axis, with halos */
    if (touches && S < 2 && o) {
        Window win;
        int64_t Sw = 0;
        for (int ax = 2; ax < o->type.rank && !Sw; ax++)
            if (window_of(n, ax, &win)) Sw = window_slices(c, n, &win);
        if (Sw >= 2) {
            window_split(c, n, &win, Sw, &st->ord, &st->slices, &st->nsw, &st->swcost);
            st->sliced++;
            st->windowed++;
            return;
        }
    }
    /* the weights do not fit while the product does: row slices would each need
     * all of the weights, so cut K instead */
    if (touches && k_splittable(c, n) && k_split(c, n, &st->ord, st->kc, &st->nk, &st->slices, &st->nsw, &st->swcost)) {
        st->sliced++;
        st->ksplit++;
        return;
    }
    if (!touches || S < 2) {
        if (touches && n->op != OP_MNCoreInputSplit && n->op != OP_MNCoreOutputConcat) {
            st->left++;
            st->whole[n->op]++;
        }
        push(g, &st->ord, n);
        return;
    }
    /* cut: inputs aligned with output axis a and of the same length there */
    int64_t d = o->type.dims[a], chunk = (d + S - 1) / S;
    MNValue ***pieces = ARENA_ARRAY(g->arena, MNValue **, n->nin + 1);
    for (int k = 0; k < n->nin; k++) {
        MNValue *x = n->in[k];
        if (!x) continue;
        int ax = in_axis(n, k, a);
        if (ax < 0) continue; /* passed whole */
        int same = -1; /* the same value read twice (Concat(s, s)): one split */
        for (int j = 0; j < k && same < 0; j++)
            if (n->in[j] == x && pieces[j] && in_axis(n, j, a) == ax) same = j;
        if (same >= 0) {
            pieces[k] = pieces[same];
            continue;
        }
        MNNode *pc = x->producer;
        if (pc && pc->op == OP_MNCoreOutputConcat && pc->nin == S && ir_attr_int(pc, "axis", -1) == ax) {
            /* a chain of sliced nodes: hand the slices on instead of concat + split */
            pieces[k] = pc->in;
            st->chained++;
            continue;
        }
        pieces[k] = split_value(c, &st->ord, x, ax, S, chunk, d, arena_printf(g->arena, "split_%d", k));
    }
    MNNode *cat = new_concat(c, o, a, S);
    for (int64_t s = 0; s < S; s++) {
        int64_t len = s == S - 1 ? d - chunk * (S - 1) : chunk;
        MNNode *cp = ir_node_new(g, n->op_type, n->nin, 1);
        cp->name = arena_printf(g->arena, "%s_slice%lld", n->name, (long long)s);
        cp->domain = n->domain;
        cp->nattr = n->nattr;
        cp->attrs = n->attrs;
        for (int k = 0; k < n->nin; k++) cp->in[k] = pieces[k] ? pieces[k][s] : n->in[k];
        MNValue *ov = slice_value(c, o, arena_printf(g->arena, "%s_slice%lld", o->name, (long long)s), a, len);
        ov->producer = cp;
        cp->out[0] = ov;
        cat->in[s] = ov;
        if (n->op == OP_Reshape || n->op == OP_Expand) cp->in[1] = slice_shape(c, n->in[1], ov);
        st->slices++;
        /* a row slice whose weights still do not fit is cut along K as well */
        bool kcut = kb && a != o->type.rank - 1; /* column slices got their part of B */
        if (!(kcut && k_split(c, cp, &st->ord, st->kc, &st->nk, &st->slices, &st->nsw, &st->swcost)))
            emit_copy(c, &st->ord, cp, &st->nsw, &st->swcost);
        else
            st->ksplit++;
    }
    finish_concat(c, &st->ord, n, cat, a, S, chunk);
    st->sliced++;
}

bool plan_time_slice(MNCompile *c) {
    MNGraph *g = c->g;
    int nn = g->nnodes;
    SliceCtx *st = xcalloc(1, sizeof *st);
    for (int i = 0; i < nn; i++) slice_node(c, st, g->nodes[i]);
    g->nnodes = 0;
    for (int i = 0; i < st->ord.n; i++) g->nodes[g->nnodes++] = st->ord.v[i];
    ir_compact(g);
    /* concats whose slices were all handed on are no longer needed */
    int dropped = 0;
    for (int i = g->nnodes - 1; i >= 0; i--) {
        MNNode *n = g->nodes[i];
        if (n->op == OP_MNCoreOutputConcat && !n->out[0]->nuses) {
            n->dead = true;
            dropped++;
            for (int k = 0; k < n->nin; k++) n->in[k]->nuses--;
        }
    }
    ir_compact(g);
    mn_figure(c, "slice_chains", st->chained);
    mn_figure(c, "reduction_splits", st->ksplit);
    mn_figure(c, "window_splits", st->windowed);
    mn_figure(c, "layout_switches", st->nsw);
    mn_figure(c, "layout_switch_cycles", (int64_t)(st->swcost + 0.5));
    mn_figure(c, "concats_avoided", dropped);
    mn_figure(c, "nodes_sliced", st->sliced);
    mn_figure(c, "slices", st->slices);
    mn_figure(c, "nodes_too_large_left_whole", st->left);
    MNBuf why = {0};
    for (int op = 0; op < OP_COUNT; op++)
        if (st->whole[op]) buf_printf(&why, "%s%s x%d", why.len ? ", " : "", mn_ops[op].name, st->whole[op]);
    mn_log(c, 0,
           "time slices: %d nodes split into %d slices (%d cut along K), %d layout switches; %d nodes on large values "
           "could not be split%s%s%s",
           st->sliced, st->slices, st->ksplit, st->nsw, st->left, st->left ? " (" : "", st->left ? why.data : "",
           st->left ? ")" : "");
    buf_free(&why);
    free(st);
    return true;
}

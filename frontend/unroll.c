/* Static shapes: Loop and Scan unrolled into the graph, over a trip count known at compile
 * time.
 *
 * The machine runs one straight-line instruction stream, so a loop of the model is its
 * body's nodes made once per iteration (onnx_body_instantiate: the loader reads the body
 * again, its values named "<node>/<iteration>/<name>"), inserted after the loop node, which
 * goes. Inference reaches the copies next, in order, and folds what becomes constant (an
 * iteration number, a slice by it). Nothing is approximated: where the trip count or a
 * condition is not known when static shapes reach the node, the compile stops and says so.
 *
 * Loop (M, cond, v...) -> (v_final..., scan...): iteration i binds the body's inputs to i,
 * the condition and the carried values; its carried outputs feed iteration i + 1, its scan
 * outputs are stacked along a new first axis (Unsqueeze, then Concat). M must be a
 * constant, and the condition the body gives back a constant true at every iteration
 * (checked once inference has folded them: infer_loops_done); an exporter's loop over a
 * range passes its condition through.
 *
 * Scan (opset 9 on) (state..., scan inputs...) -> (state_final..., scan outputs...): the
 * trip count is the scan inputs' length along their axes; iteration t takes element t
 * (from the end for a reverse direction) of each scan input by a Gather of a constant
 * index, and its scan outputs are stacked along their axes, reversed ones from the end.
 * Scan at opset 8 carries a batch axis first and no axes attributes: each batch element is
 * scanned on its own the same way and the results stacked back. */
#include "infer.h"
#include "diag.h"
#include "onnx_load.h"
#include <stdlib.h>
#include <string.h>

/* the nodes made since `before` (the graph's last ones) moved to just after node n */
static void splice(MNGraph *g, const MNNode *n, int before) {
    int at = 0;
    while (at < before && g->nodes[at] != n) at++;
    if (at == before) die("node '%s' is not in its graph", n->name);
    int added = g->nnodes - before;
    MNNode **tmp = xmalloc(sizeof(MNNode *) * (size_t)(added + 1));
    memcpy(tmp, g->nodes + before, sizeof(MNNode *) * (size_t)added);
    memmove(g->nodes + at + 1 + added, g->nodes + at + 1, sizeof(MNNode *) * (size_t)(before - at - 1));
    memcpy(g->nodes + at + 1, tmp, sizeof(MNNode *) * (size_t)added);
    free(tmp);
    for (int i = at; i < g->nnodes; i++) g->nodes[i]->index = i;
}

static MNValue *konst(MNGraph *g, const char *name, int32_t elem, int64_t v) {
    MNValue *x = ir_value_new(g, name);
    x->konst = ir_tensor_new(g->arena, elem, 0, NULL);
    ir_tensor_set_f(x->konst, 0, (double)v);
    ir_type_set(g, &x->type, elem, 0, NULL);
    return x;
}

static MNNode *node(MNGraph *g, const char *op, const char *name, int nin) {
    MNNode *n = ir_node_new(g, op, nin, 1);
    n->name = name;
    return n;
}

/* out (a new value named name when NULL) = op(ins...), the node's output */
static MNValue *make(MNGraph *g, MNNode *n, MNValue *out, const char *name) {
    if (!out) out = ir_value_new(g, name);
    out->producer = n;
    out->producer_out = 0;
    n->out[0] = out;
    return out;
}

/* v with a new axis of 1 at ax (opset 13 on: the axes an input) */
static MNValue *unsqueeze(MNInfer *c, MNValue *v, int64_t ax, const char *name) {
    MNGraph *g = c->g;
    bool in = c->opset >= 13;
    MNNode *n = node(g, "Unsqueeze", name, in ? 2 : 1);
    n->in[0] = v;
    if (in) {
        MNValue *a = ir_value_new(g, arena_printf(g->arena, "%s_axes", name));
        a->konst = ir_tensor_new(g->arena, ONNX_INT64, 1, (int64_t[]){1});
        ir_tensor_set_f(a->konst, 0, (double)ax);
        ir_type_set(g, &a->type, ONNX_INT64, 1, (int64_t[]){1});
        n->in[1] = a;
    } else
        ir_attr_set_ints(g, n, "axes", &ax, 1);
    return make(g, n, NULL, name);
}

/* vs stacked along a new axis ax into out (reversed: the last first) */
static void stack(MNInfer *c, MNValue **vs, int64_t nv, int64_t ax, bool reverse, MNValue *out, const char *name) {
    MNGraph *g = c->g;
    MNValue **u = ARENA_ARRAY(g->arena, MNValue *, nv); /* (made before the Concat that reads them) */
    for (int64_t i = 0; i < nv; i++)
        u[i] = unsqueeze(c, vs[reverse ? nv - 1 - i : i], ax, arena_printf(g->arena, "%s_%lld", name, (long long)i));
    MNNode *n = node(g, "Concat", name, (int)nv);
    for (int64_t i = 0; i < nv; i++) n->in[i] = u[i];
    ir_attr_set_int(g, n, "axis", ax);
    make(g, n, out, name);
}

/* out (or a new value) = Identity(v) */
static MNValue *identity(MNGraph *g, MNValue *v, MNValue *out, const char *name) {
    MNNode *n = node(g, "Identity", name, 1);
    n->in[0] = v;
    return make(g, n, out, name);
}

/* element i of v along ax (the axis gone) */
static MNValue *take(MNGraph *g, MNValue *v, int64_t i, int64_t ax, const char *name) {
    MNNode *n = node(g, "Gather", name, 2);
    n->in[0] = v;
    n->in[1] = konst(g, arena_printf(g->arena, "%s_index", name), ONNX_INT64, i);
    ir_attr_set_int(g, n, "axis", ax);
    return make(g, n, NULL, name);
}

static const void *body_of(const MNNode *n) {
    const MNAttr *a = ir_attr(n, "body");
    return a && a->type == MN_ATTR_GRAPH ? a->graph : NULL;
}

/* the loop node gone: its outputs are made by the nodes after it */
static void retire(MNNode *n) {
    for (int k = 0; k < n->nout; k++) n->out[k] = NULL;
    n->dead = true;
}

bool infer_loop(MNInfer *c, MNNode *n) {
    MNGraph *g = c->g;
    const void *body = body_of(n);
    if (!body) return infer_fail(c, n, NULL, "Loop needs a body graph");
    if (n->nin < 2) return infer_fail(c, n, NULL, "Loop takes M and cond first");
    const MNValue *M = n->in[0], *cond = n->in[1];
    if (!M || !M->konst || M->konst->numel != 1)
        return infer_unsupported(c, n, M, "a Loop whose trip count is computed at run time");
    if (cond && (!cond->konst || cond->konst->numel != 1))
        return infer_unsupported(c, n, cond, "a Loop whose condition is computed at run time");
    int64_t trips = ir_tensor_get_i(M->konst, 0), N = n->nin - 2, K = n->nout - N;
    if (cond && !ir_tensor_get_i(cond->konst, 0)) trips = 0;
    if (trips < 1 || trips > 100000 || K < 0)
        return infer_unsupported(c, n, NULL, "a Loop of %lld iterations (1 to 100000 are unrolled)", (long long)trips);
    int before = g->nnodes, nb = (int)(2 + N), no = (int)(1 + N + K);
    MNValue **bind = ARENA_ARRAY(g->arena, MNValue *, nb), **outs = ARENA_ARRAY(g->arena, MNValue *, no);
    MNValue **scans = ARENA_ARRAY(g->arena, MNValue *, K * trips + 1);
    MNValue *c_in = cond ? (MNValue *)cond : konst(g, arena_printf(g->arena, "%s/cond", n->name), ONNX_BOOL, 1);
    for (int64_t k = 0; k < N; k++) bind[2 + k] = n->in[2 + k];
    for (int64_t i = 0; i < trips; i++) {
        const char *pre = arena_printf(g->arena, "%s/%lld/", n->name, (long long)i);
        bind[0] = konst(g, arena_printf(g->arena, "%siteration", pre), ONNX_INT64, i);
        bind[1] = c_in;
        if (!onnx_body_instantiate(g, body, pre, bind, nb, outs, no, c->d)) return false;
        /* the condition it gives back, checked when inference is through (infer_loops_done) */
        ARENA_PUSH(g->arena, c->loop_conds, c->nloop_conds, c->cap_loop_conds, ((struct MNLoopCond){n, outs[0]}));
        for (int64_t k = 0; k < N; k++) bind[2 + k] = outs[1 + k];
        for (int64_t k = 0; k < K; k++) scans[k * trips + i] = outs[1 + N + k];
    }
    for (int64_t k = 0; k < N; k++)
        if (n->out[k])
            identity(g, bind[2 + k], n->out[k], arena_printf(g->arena, "%s/final_%lld", n->name, (long long)k));
    for (int64_t k = 0; k < K; k++)
        if (n->out[N + k])
            stack(c, &scans[k * trips], trips, 0, false, n->out[N + k],
                  arena_printf(g->arena, "%s/scan_%lld", n->name, (long long)k));
    retire(n);
    splice(g, n, before);
    return true;
}

/* the scan of one batch element (or of the whole, at opset 9 on): states and scan inputs
 * in, final states and scan outputs into fin / sout (new values when NULL) */
static bool scan_once(MNInfer *c, MNNode *n, const char *pre, MNValue **state, int N, MNValue **xs, int K,
                      const int64_t *in_ax, const int64_t *in_dir, const int64_t *out_ax, const int64_t *out_dir, int M,
                      int64_t T, MNValue **fin, MNValue **sout) {
    MNGraph *g = c->g;
    const void *body = body_of(n);
    MNValue **bind = ARENA_ARRAY(g->arena, MNValue *, N + K + 1), **outs = ARENA_ARRAY(g->arena, MNValue *, N + M + 1);
    MNValue **scans = ARENA_ARRAY(g->arena, MNValue *, M * T + 1);
    for (int k = 0; k < N; k++) bind[k] = state[k];
    for (int64_t t = 0; t < T; t++) {
        const char *it = arena_printf(g->arena, "%s%lld/", pre, (long long)t);
        for (int k = 0; k < K; k++)
            bind[N + k] =
                take(g, xs[k], in_dir[k] ? T - 1 - t : t, in_ax[k], arena_printf(g->arena, "%selement_%d", it, k));
        if (!onnx_body_instantiate(g, body, it, bind, N + K, outs, N + M, c->d)) return false;
        for (int k = 0; k < N; k++) bind[k] = outs[k];
        for (int j = 0; j < M; j++) scans[j * T + t] = outs[N + j];
    }
    for (int k = 0; k < N; k++) fin[k] = identity(g, bind[k], fin[k], arena_printf(g->arena, "%sfinal_%d", pre, k));
    for (int j = 0; j < M; j++) {
        const char *nm = arena_printf(g->arena, "%sscan_%d", pre, j);
        if (!sout[j]) sout[j] = ir_value_new(g, nm);
        stack(c, &scans[j * T], T, out_ax[j], out_dir[j] != 0, sout[j], nm);
    }
    return true;
}

/* attribute name's K values (default 0 each) */
static bool axes_attr(MNInfer *c, MNNode *n, const char *name, int K, int64_t *v) {
    for (int k = 0; k < K; k++) v[k] = 0;
    const MNAttr *a = ir_attr(n, name);
    if (!a) return true;
    if (a->type != MN_ATTR_INTS || a->n != K)
        return infer_fail(c, n, NULL, "attribute %s needs %d values, has %d", name, K,
                          a->type == MN_ATTR_INTS ? a->n : 0);
    for (int k = 0; k < K; k++) v[k] = a->ints[k];
    return true;
}

bool infer_scan(MNInfer *c, MNNode *n) {
    MNGraph *g = c->g;
    if (!body_of(n)) return infer_fail(c, n, NULL, "Scan needs a body graph");
    const MNAttr *ka = ir_attr(n, "num_scan_inputs");
    bool v8 = c->opset < 9; /* a batch axis first, and sequence_lens first among the inputs */
    int first = v8 ? 1 : 0, K = ka && ka->type == MN_ATTR_INT ? (int)ka->i : -1, N = n->nin - first - K,
        M = n->nout - N;
    if (K < 1 || N < 0 || M < 0) return infer_fail(c, n, NULL, "num_scan_inputs does not fit the inputs");
    if (v8 && n->in[0]) return infer_unsupported(c, n, n->in[0], "a Scan with sequence_lens");
    int64_t *in_ax = ARENA_ARRAY(g->arena, int64_t, K), *in_dir = ARENA_ARRAY(g->arena, int64_t, K),
            *out_ax = ARENA_ARRAY(g->arena, int64_t, M + 1), *out_dir = ARENA_ARRAY(g->arena, int64_t, M + 1);
    if (!axes_attr(c, n, v8 ? "directions" : "scan_input_directions", K, in_dir) ||
        !axes_attr(c, n, "scan_input_axes", K, in_ax) || !axes_attr(c, n, "scan_output_axes", M, out_ax) ||
        !axes_attr(c, n, "scan_output_directions", M, out_dir))
        return false;
    MNValue **state = ARENA_ARRAY(g->arena, MNValue *, N + 1), **xs = ARENA_ARRAY(g->arena, MNValue *, K);
    for (int k = 0; k < N; k++) state[k] = n->in[first + k];
    int64_t T = -1, B = 1;
    for (int k = 0; k < K; k++) {
        MNValue *x = xs[k] = n->in[first + N + k];
        int r = x ? x->type.rank : 0, ax;
        if (!x || r < 1 + v8) return infer_fail(c, n, x, "a scan input of rank %d", r);
        if (!infer_norm_axis(c, n, in_ax[k], r - v8, &ax)) return false;
        in_ax[k] = ax;
        int64_t len = x->type.dims[ax + v8];
        if (T >= 0 && len != T)
            return infer_fail(c, n, x, "scan inputs of lengths %lld and %lld", (long long)T, (long long)len);
        T = len;
        if (v8) B = x->type.dims[0];
    }
    if (T < 1 || T * B > 100000)
        return infer_unsupported(c, n, NULL, "a Scan of %lld iterations (1 to 100000 are unrolled)",
                                 (long long)(T * B));
    int before = g->nnodes;
    MNValue **fin = ARENA_ARRAY(g->arena, MNValue *, N + 1), **sout = ARENA_ARRAY(g->arena, MNValue *, M + 1);
    if (!v8) {
        for (int k = 0; k < N; k++) fin[k] = n->out[k];
        for (int j = 0; j < M; j++) sout[j] = n->out[N + j];
        if (!scan_once(c, n, arena_printf(g->arena, "%s/", n->name), state, N, xs, K, in_ax, in_dir, out_ax, out_dir, M,
                       T, fin, sout))
            return false;
    } else { /* each batch element on its own, stacked back along axis 0 */
        MNValue **bs = ARENA_ARRAY(g->arena, MNValue *, N + 1), **bx = ARENA_ARRAY(g->arena, MNValue *, K);
        MNValue **fins = ARENA_ARRAY(g->arena, MNValue *, (N + 1) * B),
                **souts = ARENA_ARRAY(g->arena, MNValue *, (M + 1) * B);
        for (int64_t b = 0; b < B; b++) {
            const char *pre = arena_printf(g->arena, "%s/b%lld/", n->name, (long long)b);
            for (int k = 0; k < N; k++) bs[k] = take(g, state[k], b, 0, arena_printf(g->arena, "%sstate_%d", pre, k));
            for (int k = 0; k < K; k++) bx[k] = take(g, xs[k], b, 0, arena_printf(g->arena, "%sinput_%d", pre, k));
            MNValue **f = &fins[b * (N + 1)], **s = &souts[b * (M + 1)];
            for (int k = 0; k < N; k++) f[k] = NULL;
            for (int j = 0; j < M; j++) s[j] = NULL;
            if (!scan_once(c, n, pre, bs, N, bx, K, in_ax, in_dir, out_ax, out_dir, M, T, f, s)) return false;
        }
        MNValue **col = ARENA_ARRAY(g->arena, MNValue *, B);
        for (int k = 0; k < N + M; k++) {
            if (!n->out[k]) continue;
            for (int64_t b = 0; b < B; b++) col[b] = k < N ? fins[b * (N + 1) + k] : souts[b * (M + 1) + (k - N)];
            stack(c, col, B, 0, false, n->out[k], arena_printf(g->arena, "%s/out_%d", n->name, k));
        }
    }
    retire(n);
    splice(g, n, before);
    return true;
}

bool infer_loops_done(MNInfer *c) {
    for (int i = 0; i < c->nloop_conds; i++) {
        const MNValue *v = c->loop_conds[i].cond;
        if (!v->konst || v->konst->numel != 1)
            return infer_unsupported(c, c->loop_conds[i].loop, v, "a Loop whose condition is computed at run time");
        if (!ir_tensor_get_i(v->konst, 0))
            return infer_unsupported(c, c->loop_conds[i].loop, v, "a Loop that stops before its trip count");
    }
    return true;
}

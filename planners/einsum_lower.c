/* Einsum lowering: an Einsum of one or two operands (no ellipsis, no diagonal) as the ops
 * the rest of the compiler maps: a subscript only one operand has and the output lacks is
 * summed away first (ReduceSum); then each operand is transposed to (batch, its own free
 * subscripts, the contracted ones) and viewed as a (batch, M, K) or (batch, K, N) matrix,
 * so that one MatMul on the matrix unit does the contraction (K = 1 for an outer product),
 * and the (batch, M, N) result is viewed and transposed into the output's order. One
 * operand: a Transpose to (output, summed) and a ReduceSum. The equation is checked by
 * inference (frontend/infer_move.c), which names what it does not take. */
#include "plan.h"
#include "infer.h"
#include "ops.h"
#include <string.h>

typedef struct {
    MNGraph *g;
    const MNNode *n;
    int k;
} Eb;

static MNValue *fresh(Eb *b, const MNValue *like, int rank, const int64_t *dims) {
    return plan_value_new(b->g, arena_printf(b->g->arena, "%s_e%d", b->n->name, b->k++), like->type.elem, rank, dims);
}

static MNNode *node(Eb *b, const char *op, int nin, MNValue *out) {
    return plan_node_new(b->g, op, arena_printf(b->g->arena, "%s_%s%d", b->n->name, op, b->k++), nin, out);
}

/* x's subscripts sub (rank r) into the order want (a subset, all of them); into y if given */
static MNValue *order(Eb *b, MNValue *x, const char *sub, int r, const char *want, MNValue *y) {
    int64_t perm[MN_MAX_RANK], dims[MN_MAX_RANK];
    bool same = true;
    for (int i = 0; i < r; i++) {
        perm[i] = (const char *)memchr(sub, want[i], (size_t)r) - sub;
        dims[i] = x->type.dims[perm[i]];
        same &= perm[i] == i;
    }
    if (same && !y) return x;
    MNNode *t = node(b, "Transpose", 1, y ? y : fresh(b, x, r, dims));
    t->in[0] = x;
    ir_attr_set_ints(b->g, t, "perm", perm, r);
    return t->out[0];
}

static MNValue *view(Eb *b, MNValue *x, int rank, const int64_t *dims, MNValue *y) {
    MNNode *t = node(b, "Reshape", 2, y ? y : fresh(b, x, rank, dims));
    t->in[0] = x;
    t->in[1] = plan_ints_konst(b->g, arena_printf(b->g->arena, "%s_shape%d", b->n->name, b->k++), rank, dims);
    return t->out[0];
}

/* x's last nsum axes summed away (into y if given) */
static MNValue *sum_last(Eb *b, MNValue *x, int nsum, MNValue *y) {
    int r = x->type.rank;
    int64_t axes[MN_MAX_RANK], dims[MN_MAX_RANK];
    for (int i = 0; i < nsum; i++) axes[i] = r - nsum + i;
    for (int i = 0; i < r - nsum; i++) dims[i] = x->type.dims[i];
    MNNode *t = node(b, "ReduceSum", b->g->opset >= 13 ? 2 : 1, y ? y : fresh(b, x, r - nsum, dims));
    t->in[0] = x;
    if (b->g->opset >= 13)
        t->in[1] = plan_ints_konst(b->g, arena_printf(b->g->arena, "%s_axes%d", b->n->name, b->k++), nsum, axes);
    else
        ir_attr_set_ints(b->g, t, "axes", axes, nsum);
    ir_attr_set_int(b->g, t, "keepdims", 0);
    return t->out[0];
}

static bool has(const char *s, int r, char ch) { return memchr(s, ch, (size_t)r) != NULL; }

/* operand x (subscripts sub, rank r) without the subscripts that neither the other operand
 * (o, ro) nor the output has: moved last and summed; its remaining subscripts into left */
static MNValue *drop_own(Eb *b, MNValue *x, const char *sub, int r, const char *o, int ro, const MNEinsum *e,
                         char *left, int *nl) {
    char want[MN_MAX_RANK];
    int nk = 0, ns = 0;
    for (int i = 0; i < r; i++)
        if (has(o, ro, sub[i]) || has(e->out, e->rout, sub[i])) want[nk++] = sub[i];
    memcpy(left, want, (size_t)nk);
    *nl = nk;
    for (int i = 0; i < r; i++)
        if (!has(left, nk, sub[i])) want[nk + ns++] = sub[i];
    return ns ? sum_last(b, order(b, x, sub, r, want, NULL), ns, NULL) : x;
}

static bool is_einsum(const MNNode *n) { return n->op == OP_Einsum; }

static bool lower(MNCompile *c, MNNode *n) {
    MNEinsum e;
    if (infer_einsum_parse(ir_attr_string(n, "equation", ""), n->nin, &e)) return false;
    Eb b = {c->g, n, 0};
    MNValue *y = n->out[0];
    int64_t size[128] = {0};
    for (int k = 0; k < e.nin; k++)
        for (int d = 0; d < e.rank[k]; d++) size[(int)e.in[k][d]] = n->in[k]->type.dims[d];
    if (e.nin == 1) {
        char want[MN_MAX_RANK];
        int r = e.rank[0], ns = 0;
        memcpy(want, e.out, (size_t)e.rout);
        for (int i = 0; i < r; i++)
            if (!has(e.out, e.rout, e.in[0][i])) want[e.rout + ns++] = e.in[0][i];
        if (ns)
            sum_last(&b, order(&b, n->in[0], e.in[0], r, want, NULL), ns, y);
        else
            order(&b, n->in[0], e.in[0], r, want, y);
        n->dead = true;
        return true;
    }
    char la[MN_MAX_RANK], lb[MN_MAX_RANK], bat[MN_MAX_RANK], fa[MN_MAX_RANK], fb[MN_MAX_RANK], ct[MN_MAX_RANK];
    int na, nb, nbat = 0, nfa = 0, nfb = 0, nct = 0;
    MNValue *a = drop_own(&b, n->in[0], e.in[0], e.rank[0], e.in[1], e.rank[1], &e, la, &na);
    MNValue *bb = drop_own(&b, n->in[1], e.in[1], e.rank[1], e.in[0], e.rank[0], &e, lb, &nb);
    for (int i = 0; i < e.rout; i++) { /* batch and free subscripts in the output's order */
        char ch = e.out[i];
        if (has(la, na, ch) && has(lb, nb, ch))
            bat[nbat++] = ch;
        else if (has(la, na, ch))
            fa[nfa++] = ch;
        else
            fb[nfb++] = ch;
    }
    for (int i = 0; i < na; i++)
        if (!has(e.out, e.rout, la[i])) ct[nct++] = la[i];
    int64_t Nb = 1, M = 1, K = 1, N = 1;
    for (int i = 0; i < nbat; i++) Nb *= size[(int)bat[i]];
    for (int i = 0; i < nfa; i++) M *= size[(int)fa[i]];
    for (int i = 0; i < nfb; i++) N *= size[(int)fb[i]];
    for (int i = 0; i < nct; i++) K *= size[(int)ct[i]];
    char wa[MN_MAX_RANK], wb[MN_MAX_RANK];
    memcpy(wa, bat, (size_t)nbat), memcpy(wa + nbat, fa, (size_t)nfa), memcpy(wa + nbat + nfa, ct, (size_t)nct);
    memcpy(wb, bat, (size_t)nbat), memcpy(wb + nbat, ct, (size_t)nct), memcpy(wb + nbat + nct, fb, (size_t)nfb);
    int rm = nbat ? 3 : 2;
    int64_t da[3] = {Nb, M, K}, db[3] = {Nb, K, N}, dy[3] = {Nb, M, N};
    MNValue *am = view(&b, order(&b, a, la, na, wa, NULL), rm, da + 3 - rm, NULL);
    MNValue *bm = view(&b, order(&b, bb, lb, nb, wb, NULL), rm, db + 3 - rm, NULL);
    MNNode *mm = node(&b, "MatMul", 2, fresh(&b, y, rm, dy + 3 - rm));
    mm->in[0] = am;
    mm->in[1] = bm;
    /* (batch, M, N) viewed as the batch and free subscripts, then in the output's order */
    char got[MN_MAX_RANK];
    int64_t dg[MN_MAX_RANK];
    memcpy(got, bat, (size_t)nbat), memcpy(got + nbat, fa, (size_t)nfa), memcpy(got + nbat + nfa, fb, (size_t)nfb);
    for (int i = 0; i < e.rout; i++) dg[i] = size[(int)got[i]];
    bool same = !memcmp(got, e.out, (size_t)e.rout);
    MNValue *v = view(&b, mm->out[0], e.rout, dg, same ? y : NULL);
    if (!same) order(&b, v, got, e.rout, e.out, y);
    n->dead = true;
    return true;
}

bool plan_einsum_lowering(MNCompile *c) {
    int lowered = plan_replace_nodes(c, is_einsum, lower);
    mn_figure(c, "einsums_lowered", lowered);
    if (lowered) mn_log(c, 0, "Einsum lowering: %d nodes as transposes, views and one MatMul each", lowered);
    return true;
}

/* Code Emit's residency walk: which values are in LM, and where, at each node of the
 * schedule, in address order per bank, so that a gather's scratch and a window's table
 * find a free range among them (gather.c) and each node is checked where it runs. */
#include "emit_impl.h"
#include "ops.h"
#include <stdlib.h>
#include <string.h>

void emit_walk_init(Walk *w, const MNGraph *g) {
    w->list = xmalloc(sizeof(int) * (size_t)(g->nvalues + 1));
    w->at = xmalloc(sizeof(int) * (size_t)(g->nvalues + 1));
    for (int v = 0; v < g->nvalues; v++) w->at[v] = -1;
    w->n = 0;
    w->scr = xcalloc((size_t)g->nnodes + 1, sizeof(int64_t));
    w->tab = xcalloc((size_t)g->nnodes + 1, sizeof(int64_t));
    w->tbank = xcalloc((size_t)g->nnodes + 1, sizeof(int));
    w->win = xcalloc((size_t)g->nnodes + 1, sizeof(bool));
    w->trows = xcalloc((size_t)g->nnodes + 1, sizeof(int));
    w->local = xcalloc((size_t)g->nnodes + 1, sizeof(uint64_t));
    w->kforce = xcalloc((size_t)g->nnodes + 1, sizeof(uint64_t));
    w->mat = xcalloc((size_t)g->nnodes + 1, sizeof(bool));
    w->msplit = xcalloc((size_t)g->nnodes + 1, sizeof(bool));
    w->scopy = xcalloc((size_t)g->nnodes + 1, sizeof(bool));
    w->sten = xcalloc((size_t)g->nnodes + 1, sizeof(bool));
    w->rows = xcalloc((size_t)g->nnodes + 1, sizeof(bool));
    w->rmove = xcalloc((size_t)g->nnodes + 1, sizeof(bool));
    w->bmove = xcalloc((size_t)g->nnodes + 1, sizeof(bool));
    w->turn = xcalloc((size_t)g->nnodes + 1, sizeof(bool));
    w->qmove = xcalloc((size_t)g->nnodes + 1, sizeof(bool));
    w->embed = xcalloc((size_t)g->nnodes + 1, sizeof(bool));
    w->tred = xcalloc((size_t)g->nnodes + 1, sizeof(bool));
    w->tile = xcalloc((size_t)g->nnodes + 1, sizeof(bool));
    w->dry = false;
    w->dry_need = 0;
    for (int b = 0; b < 2; b++) {
        w->ord[b] = xmalloc(sizeof(int) * (size_t)(g->nvalues + 1));
        w->nord[b] = 0;
    }
}
void emit_walk_free(Walk *w) {
    free(w->list);
    free(w->at);
    free(w->scr);
    free(w->tab);
    free(w->tbank);
    free(w->win);
    free(w->trows);
    free(w->local);
    free(w->kforce);
    free(w->mat);
    free(w->msplit);
    free(w->scopy);
    free(w->sten);
    free(w->rows);
    free(w->rmove);
    free(w->bmove);
    free(w->turn);
    free(w->qmove);
    free(w->embed);
    free(w->tred);
    free(w->tile);
    free(w->ord[0]);
    free(w->ord[1]);
}

/* the walk's per-bank order, kept as values come and go: a gather read the resident
 * values sorted, and sorting them again at every gather of a large conv net (a thousand
 * resident parameters) was a tenth of its compile */
static bool ord_less(const MNGraph *g, int a, int b) {
    const MNValue *x = g->values[a], *y = g->values[b];
    int64_t ex = x->addr + emit_round4(x->num_lw), ey = y->addr + emit_round4(y->num_lw);
    return x->addr != y->addr ? x->addr < y->addr : ex != ey ? ex < ey : a < b;
}
static int ord_find(const MNGraph *g, const Walk *w, int b, int id) { /* the first not before id */
    int lo = 0, hi = w->nord[b];
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (ord_less(g, w->ord[b][mid], id))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
void emit_walk_add(const MNGraph *g, Walk *w, const MNValue *v) {
    if (v->addr < 0) return;
    int b = v->loc == MN_LOC_LM1, k = ord_find(g, w, b, v->id);
    memmove(&w->ord[b][k + 1], &w->ord[b][k], sizeof(int) * (size_t)(w->nord[b] - k));
    w->ord[b][k] = v->id;
    w->nord[b]++;
}
static void ord_del(const MNGraph *g, Walk *w, const MNValue *v) {
    if (v->addr < 0) return;
    int b = v->loc == MN_LOC_LM1, k = ord_find(g, w, b, v->id);
    if (k == w->nord[b] || w->ord[b][k] != v->id) die("walk: '%s' is not among the resident values", v->name);
    memmove(&w->ord[b][k], &w->ord[b][k + 1], sizeof(int) * (size_t)(w->nord[b] - k - 1));
    w->nord[b]--;
}

/* before node n runs its outputs take LM; after it, what it forgets or overwrites leaves */
void emit_walk_before(const MNGraph *g, Walk *w, const MNNode *n) {
    for (int k = 0; k < n->nout; k++) {
        const MNValue *v = n->out[k];
        if (v && (v->loc == MN_LOC_LM0 || v->loc == MN_LOC_LM1) && w->at[v->id] < 0) {
            w->at[v->id] = w->n;
            w->list[w->n++] = v->id;
            emit_walk_add(g, w, v);
        }
    }
}
void emit_walk_after(const MNGraph *g, Walk *w, const MNNode *n) {
    for (int k = 0; k < n->nin; k++) {
        const MNValue *v = n->in[k];
        if (!v || w->at[v->id] < 0 ||
            !(n->op == OP_MNCoreForget || n->op == OP_MNCoreMove || (k == 0 && ir_attr_int(n, "in_place", 0))))
            continue;
        int i = w->at[v->id], last = w->list[--w->n];
        w->list[i] = last;
        w->at[last] = i;
        w->at[v->id] = -1;
        ord_del(g, w, v);
    }
}

/* Code Emit: data movement that changes an element's MAB at the grain of one address.
 *
 * A quad is one long-word address of the 4 PEs of a MAB (8 elements of 32 bits). Where a
 * movement node (a layout switch, a view, a Transpose) keeps every element's PE and word
 * and each output quad takes one input quad whole, but quads change MAB (and L1B, L2B,
 * address) one by one, neither a row move (rowmove.c: every MAB keeps its elements) nor a
 * block move (blockmove.c: blocks of 4 or more addresses of a MAB) can carry them; the
 * gather broadcasts its whole input into every PE. This file moves them through the L1BM
 * rows (64 LW: one address of every MAB of an L1B, quad m at 4 m), in one of two forms:
 *
 *   by output rows  each output row (an address of an L1B) is assembled in the L1BM of the
 *                   L1B its quads come from: l1bmm@M takes 4 addresses of MAB M (any four)
 *                   into 4 neighbouring quads of the row; the rows go up to the L2BM,
 *                   through the PDM where they change L2B, down into their L1B's L1BM, and
 *                   l1bmd hands 4 rows a step to every PE at once;
 *   by input rows   each input row goes whole into the L1BM (l1bmd, 4 rows a step), up, across
 *                   and down into each L1B that takes some of its quads, and l1bmm under a
 *                   MAB's write mask hands 4 neighbouring quads of a row to 4 addresses (any
 *                   four) of that MAB.
 *
 * Every L1B and L2B runs the same steps, so a row's place in the L1BM is chosen by its
 * pattern (which quad goes where inside the L1B): rows of one pattern share places across
 * L1Bs (by output rows, patterns that agree where both name a quad: a quad one lacks is
 * padding in its L1B). An L1B that lacks a place's row writes what the place holds only into
 * quads no element lives in there, or, by input rows, the place first takes the output's
 * own quads (a prefill, through the L2BM to every receiving slot) so that it writes them back
 * unchanged; a batch whose prefill would restore a quad another of its places writes is
 * taken smaller. Where the rows stay in their L1B the L2BM is skipped; through the PDM the
 * receiving rows pass in as many passes as the L2BM's room needs. A step that writes 4 neighbouring quads of which fewer are wanted puts the
 * wanted one in its last cycle: on the L1BM side the others are rewritten later (rows
 * assembled from the top down), on the LM side the others write the address a later
 * cycle of the same step writes again.
 *
 * The form taken is the one whose steps are fewer (by output rows needs each output row
 * from one L1B). Cost a batch: by output rows, 1 step per run of up to 4 quads from one
 * MAB, 1 up and 1 down a row, 1 step per 4 rows handed out; by input rows, 1 step per 4
 * rows taken, 1 up and 1 down a row an L1B takes, and a step per run of up to 4 quads for
 * one MAB (and a mask per MAB); the exchange's transfers, 64 LW a row over the PDM's port. */
#include "emit_impl.h"
#include "memo.h"
#include "ops.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROWLW = 64, NOQ = -1 };

typedef struct {
    MNLayout li, lo;
    const MNValue *x, *y;
    int64_t NL, J, M, Ain, Aout;
    int64_t *src; /* [((l J + j) M + m) Aout + a]: the input quad ((ls J + js) M + ms) Ain + as, -1 */
} QMap;

static bool visit(void *ctx, const int64_t *oidx, const EmEntry *en) {
    QMap *q = ctx;
    if (en->src != 0) return false;
    MNPlace pi, po;
    layout_place(&q->li, en->sidx, &pi);
    layout_place(&q->lo, oidx, &po);
    if (pi.c[LV_PE] != po.c[LV_PE] || pi.c[LV_W] != po.c[LV_W] || pi.c[LV_TIME] || po.c[LV_TIME]) return false;
    const unsigned L2B = 1u << LV_L2B, L1B = 1u << LV_L1B, MAB = 1u << LV_MAB;
    int64_t l0 = (q->lo.bcast & L2B) ? 0 : po.c[LV_L2B], l1 = (q->lo.bcast & L2B) ? q->NL : l0 + 1;
    for (int64_t l = l0; l < l1; l++) { /* every L2B the output element is on, from the nearest copy */
        int64_t ls = (q->li.bcast & L2B) ? l : pi.c[LV_L2B];
        int64_t js = (q->li.bcast & L1B) ? po.c[LV_L1B] : pi.c[LV_L1B];
        int64_t ms = (q->li.bcast & MAB) ? po.c[LV_MAB] : pi.c[LV_MAB];
        int64_t from = ((ls * q->J + js) * q->M + ms) * q->Ain + pi.c[LV_ADDR];
        int64_t at = ((l * q->J + po.c[LV_L1B]) * q->M + po.c[LV_MAB]) * q->Aout + po.c[LV_ADDR];
        if (q->src[at] >= 0 && q->src[at] != from) return false; /* an output quad from two */
        q->src[at] = from;
    }
    return true;
}

static bool movable(const MNNode *n) {
    return n->op == OP_Transpose || mn_op_has(n->op, MN_VIEW) || n->op == OP_MNCoreLayoutSwitch ||
           (n->op == OP_Gather && emit_konst_of(n->in[1]));
}

static bool qmap_build(const MNCompile *c, const MNNode *n, QMap *q) {
    const MNMachine *m = &c->machine;
    memset(q, 0, sizeof *q);
    if (!movable(n) || n->nout < 1 || !n->out[0] || !n->in[0]) return false;
    q->x = n->in[0], q->y = n->out[0];
    const unsigned PW = 1u << LV_PE | 1u << LV_W, TREE = 1u << LV_MAB | 1u << LV_L1B;
    if (q->x->dtype != q->y->dtype || !emit_in_lm(q->x) || !emit_in_lm(q->y) || !layout_get(q->x, &q->li) ||
        !layout_get(q->y, &q->lo) || (q->lo.bcast & (PW | TREE)) || (q->li.bcast & PW) || m->pe_per_mab != 4 ||
        m->mab_per_l1b * m->pe_per_mab != ROWLW || layout_timed(q->x) || layout_timed(q->y))
        return false;
    q->NL = m->n_l2b, q->J = m->l1b_per_l2b, q->M = m->mab_per_l1b;
    q->Ain = q->x->num_lw, q->Aout = q->y->num_lw;
    int64_t n_at = q->NL * q->J * q->M * q->Aout;
    q->src = xmalloc(sizeof(int64_t) * (size_t)(n_at + 1));
    for (int64_t i = 0; i < n_at; i++) q->src[i] = NOQ;
    if (!emit_move_sources(n, visit, q)) {
        free(q->src);
        q->src = NULL;
        return false;
    }
    return true;
}

/* ---- the plan: rows, their patterns and places, batch by batch ----
 *
 * A row is (L2B, L1B, address) of the side it is keyed by (the output's by output rows, the
 * input's by input rows); its pattern lists, per quad of the row (its MAB), the quad of the
 * other side it pairs with inside the other row's L1B: (MAB, address), -1 none. */
typedef struct {
    int64_t key; /* the row: (L2B J + L1B) A + address */
    int64_t other; /* the other side's L1B (L2B J + L1B) */
    int64_t pat[16][2];
    int64_t slot; /* its place in the L1BM's assembled (by output) or received (by input) rows */
} Row;

typedef struct {
    bool by_out;
    int64_t a0, a1; /* the keyed side's addresses of the batch */
    Row *r;
    int64_t nr;
    int64_t nslot; /* places of the rows (by pattern) */
    bool local; /* every row stays in its L1B and its place is its address: no L2BM */
    bool exch; /* the L2Bs' rows cross or differ: through the PDM */
    int64_t G; /* through the PDM: receiving rows an L1B takes a pass (the L2BM's room) */
    bool prefill; /* by input rows: a place some L1B leaves empty hands out into elements that live
                   * there: every place first takes the output's own quads (so they are written back) */
} Batch;

static int by_pat(const void *a, const void *b) {
    const Row *x = a, *y = b;
    int c = memcmp(x->pat, y->pat, sizeof x->pat);
    if (c) return c;
    if (x->other != y->other) return (x->other > y->other) - (x->other < y->other);
    return (x->key > y->key) - (x->key < y->key);
}

/* the rows of the batch of keyed addresses [a0, a1); false where a row's quads come from or go
 * to two L1Bs (by output rows) */
static bool batch_rows(const QMap *q, bool by_out, int64_t a0, int64_t a1, Batch *b) {
    memset(b, 0, sizeof *b);
    b->by_out = by_out, b->a0 = a0, b->a1 = a1;
    int64_t A = by_out ? q->Aout : q->Ain, cap = 64, nl1 = q->NL * q->J, na = a1 - a0;
    b->r = xmalloc(sizeof(Row) * (size_t)cap);
    int64_t nq = q->NL * q->J * q->M * q->Aout;
    int64_t *at = xmalloc(sizeof(int64_t) * (size_t)(nl1 * na * nl1)); /* [(L1B, address), other L1B]: the row */
    for (int64_t i = 0; i < nl1 * na * nl1; i++) at[i] = -1;
    int64_t *one = xmalloc(sizeof(int64_t) * (size_t)(nl1 * na)); /* by output rows: the row's one other L1B */
    for (int64_t i = 0; i < nl1 * na; i++) one[i] = -1;
    /* by input rows, each input row's pattern per L1B it feeds: rows found through the output quads */
    for (int64_t oq = 0; oq < nq; oq++) {
        int64_t s = q->src[oq];
        if (s < 0) continue;
        int64_t oa = oq % q->Aout, om = oq / q->Aout % q->M, ol1 = oq / q->Aout / q->M;
        int64_t sa = s % q->Ain, sm = s / q->Ain % q->M, sl1 = s / q->Ain / q->M;
        int64_t ka = by_out ? oa : sa, km = by_out ? om : sm, kl1 = by_out ? ol1 : sl1, other = by_out ? sl1 : ol1;
        if (ka < a0 || ka >= a1) continue;
        int64_t key = kl1 * A + ka, ix = (kl1 * na + ka - a0) * nl1 + other, k = at[ix];
        if (k < 0) {
            if (by_out && one[kl1 * na + ka - a0] >= 0) { /* an output row from two L1Bs */
                free(at), free(one);
                return false;
            }
            one[kl1 * na + ka - a0] = other;
            if (b->nr == cap) b->r = xrealloc(b->r, sizeof(Row) * (size_t)(cap *= 2));
            at[ix] = b->nr;
            k = b->nr++;
            b->r[k].key = key, b->r[k].other = other, b->r[k].slot = -1;
            for (int p = 0; p < 16; p++) b->r[k].pat[p][0] = b->r[k].pat[p][1] = -1;
        }
        b->r[k].pat[km][0] = by_out ? sm : om;
        b->r[k].pat[km][1] = by_out ? sa : oa;
    }
    free(at), free(one);
    return true;
}

/* Places: rows of one pattern share them across L1Bs; the i-th such row of an L1B takes the
 * pattern's i-th. The local form (no L2BM): every row in its own L1B and, by output rows, each
 * address's rows alike everywhere (its place is its address), by input rows likewise. */
/* do two rows' patterns agree where both name a quad? (by output rows a quad one row lacks is
 * padding in its L1B: the union's quad written there is harmless) */
static bool compatible(const Row *a, const Row *b) {
    for (int p = 0; p < 16; p++)
        if (a->pat[p][0] >= 0 && b->pat[p][0] >= 0 && (a->pat[p][0] != b->pat[p][0] || a->pat[p][1] != b->pat[p][1]))
            return false;
    return true;
}

/* the union of the patterns of the rows at place s (every L1B runs one step list for it) */
static void place_pattern(const Batch *b, int64_t s, Row *u) {
    memset(u, 0, sizeof *u);
    for (int p = 0; p < 16; p++) u->pat[p][0] = u->pat[p][1] = -1;
    for (int64_t i = 0; i < b->nr; i++)
        if (b->r[i].slot == s)
            for (int p = 0; p < 16; p++)
                if (b->r[i].pat[p][0] >= 0) u->pat[p][0] = b->r[i].pat[p][0], u->pat[p][1] = b->r[i].pat[p][1];
}

static bool place_rows(const QMap *q, Batch *b, bool allow_local) {
    int64_t A = b->by_out ? q->Aout : q->Ain;
    b->local = allow_local;
    for (int64_t i = 0; i < b->nr && b->local; i++) {
        const Row *r = &b->r[i];
        if (r->other != r->key / A) b->local = false;
        for (int64_t k = 0; k < b->nr && b->local; k++)
            if (b->r[k].key % A == r->key % A &&
                (b->by_out ? !compatible(&b->r[k], r) : memcmp(b->r[k].pat, r->pat, sizeof r->pat) != 0))
                b->local = false;
    }
    if (b->local) {
        for (int64_t i = 0; i < b->nr; i++) b->r[i].slot = b->r[i].key % A - b->a0;
        b->nslot = b->a1 - b->a0;
        return true;
    }
    qsort(b->r, (size_t)b->nr, sizeof(Row), by_pat);
    int64_t base = 0;
    int64_t nl1 = q->NL * q->J, *cnt = xcalloc((size_t)nl1, sizeof(int64_t));
    for (int64_t i = 0; i < b->nr;) {
        int64_t k = i, most = 0;
        while (k < b->nr && !memcmp(b->r[k].pat, b->r[i].pat, sizeof b->r[i].pat)) k++;
        memset(cnt, 0, sizeof(int64_t) * (size_t)nl1);
        for (int64_t t = i; t < k; t++) {
            int64_t l1 = b->r[t].other; /* (the L1B its place is in: assembled, or received) */
            b->r[t].slot = base + cnt[l1]++;
            if (cnt[l1] > most) most = cnt[l1];
        }
        base += most, i = k;
    }
    free(cnt);
    b->nslot = base;
    return true;
}

/* by input rows: does a place some L1B leaves empty hand out only into quads no element lives
 * in there? (its rows' pattern written with whatever that L1B's L1BM holds) */
static bool empty_places_harmless(const QMap *q, const Batch *b) {
    int64_t nl1 = q->NL * q->J;
    bool *full = xcalloc((size_t)(nl1 * (b->nslot + 1)), sizeof(bool));
    const Row **pat = xcalloc((size_t)(b->nslot + 1), sizeof(Row *));
    for (int64_t i = 0; i < b->nr; i++) {
        full[b->r[i].other * b->nslot + b->r[i].slot] = true;
        pat[b->r[i].slot] = &b->r[i];
    }
    bool ok = true;
    for (int64_t l1 = 0; l1 < nl1 && ok; l1++)
        for (int64_t s = 0; s < b->nslot && ok; s++) {
            if (full[l1 * b->nslot + s] || !pat[s]) continue;
            for (int p = 0; p < 16 && ok; p++)
                if (pat[s]->pat[p][0] >= 0)
                    ok = q->src[(l1 * q->M + pat[s]->pat[p][0]) * q->Aout + pat[s]->pat[p][1]] < 0;
        }
    free(full);
    free(pat);
    return ok;
}

/* by input rows with a prefill: is no quad an L1B's place writes back (a place it leaves
 * empty) one that another of its places writes new in the same batch? (the write-back would
 * come after it and restore the old quad) */
static bool prefill_safe(const QMap *q, const Batch *b) {
    int64_t nl1 = q->NL * q->J, nq = q->M * q->Aout;
    uint8_t *mark = xcalloc((size_t)(nq + 1), 1);
    bool *full = xcalloc((size_t)(b->nslot + 1), sizeof(bool)), ok = true;
    for (int64_t l1 = 0; l1 < nl1 && ok; l1++) {
        memset(mark, 0, (size_t)nq);
        memset(full, 0, sizeof(bool) * (size_t)b->nslot);
        for (int64_t i = 0; i < b->nr; i++)
            if (b->r[i].other == l1) {
                full[b->r[i].slot] = true;
                for (int p = 0; p < 16; p++)
                    if (b->r[i].pat[p][0] >= 0) mark[b->r[i].pat[p][0] * q->Aout + b->r[i].pat[p][1]] = 1;
            }
        for (int64_t i = 0; i < b->nr && ok; i++) {
            const Row *r = &b->r[i];
            if (full[r->slot]) continue;
            for (int p = 0; p < 16 && ok; p++)
                if (r->pat[p][0] >= 0) ok = !mark[r->pat[p][0] * q->Aout + r->pat[p][1]];
        }
    }
    free(mark), free(full);
    return ok;
}

/* do the L2Bs move their rows alike, each within itself (else through the PDM)? Each row stays
 * on its L2B, and where two L2Bs bring a row down into the same L1B and row of the L1BM, they
 * take it from the same L1B and row (the steps are the same on every L2B) */
static bool l2bs_alike(const QMap *q, const Batch *b) {
    int64_t A = b->by_out ? q->Aout : q->Ain, J = q->J;
    for (int64_t i = 0; i < b->nr; i++) {
        const Row *r = &b->r[i];
        if (r->key / A / J != r->other / J) return false;
    }
    for (int64_t i = 0; i < b->nr; i++)
        for (int64_t k = i + 1; k < b->nr; k++) {
            const Row *r = &b->r[i], *s = &b->r[k];
            if (r->key / A / J == s->key / A / J) continue; /* (one L2B) */
            /* by output rows: down into (the key's L1B, address) from (the other L1B, place);
             * by input rows: down into (the other L1B, place) from (the key's L1B, address) */
            int64_t rk = r->key % (J * A), sk = s->key % (J * A);
            bool same_to = b->by_out ? rk == sk : r->other % J == s->other % J && r->slot == s->slot;
            bool same_from = b->by_out ? r->other % J == s->other % J && r->slot == s->slot : rk == sk;
            if (same_to && !same_from) return false;
        }
    return true;
}

/* the batches of one form: keyed addresses in runs of 4 while the rows fit the L1BM and the
 * L2BM; their steps counted (*steps); false where the form cannot move the node */
static bool plan_form(const MNCompile *c, const QMap *q, bool by_out, Batch **out, int64_t *nout, int64_t *steps) {
    const MNMachine *m = &c->machine;
    int64_t A = by_out ? q->Aout : q->Ain, lb_rows = m->l1bm_lw / ROWLW, lc_rows = m->l2bm_lw / ROWLW;
    int64_t cap = 16, nb = 0, st = 0;
    Batch *bs = xmalloc(sizeof(Batch) * (size_t)cap);
    bool ok = true;
    for (int64_t a0 = 0; a0 < A && ok;) {
        Batch b = {0}, best = {0};
        bool have = false;
        for (int64_t size = (A - a0 + 3) / 4 * 4; size >= 4 && !have; size = size / 8 * 4) {
            int64_t a1 = a0 + size, e = a1 < A ? a1 : A;
            if (!batch_rows(q, by_out, a0, e, &b) || !place_rows(q, &b, true)) {
                free(b.r);
                continue;
            }
            /* L1BM: a spare row, the staged rows (by input: the addresses), the assembled or
             * received places; L2BM: the up slots, and as many receiving ones */
            int64_t staged = by_out ? 0 : e - a0, lb = 1 + staged + b.nslot + (by_out ? e - a0 : 0);
            b.prefill = !by_out && !empty_places_harmless(q, &b);
            if (b.prefill && b.local) place_rows(q, &b, false); /* (the places then are not the input's rows) */
            b.prefill = b.prefill && !empty_places_harmless(q, &b);
            if (b.prefill && !prefill_safe(q, &b)) {
                free(b.r);
                continue;
            }
            b.exch = !b.local && (b.prefill || !l2bs_alike(q, &b)); /* (a prefill goes up to the receiving slots) */
            /* L2BM: the up slots, then (through the PDM) the receiving ones, in passes of G an L1B */
            int64_t ups = b.local ? 0 : q->J * (by_out ? b.nslot : e - a0), nrecv = by_out ? e - a0 : b.nslot;
            b.G = (lc_rows - ups) / q->J < nrecv ? (lc_rows - ups) / q->J : nrecv;
            int64_t lc = b.local ? 0 : ups + (b.exch ? q->J * (b.G > 0 ? b.G : 1) : 0);
            if (lb > lb_rows || lc > lc_rows) {
                free(b.r);
                continue;
            }
            best = b, have = true;
            b.r = NULL;
        }
        if (!have) {
            ok = false;
            break;
        }
        if (nb == cap) bs = xrealloc(bs, sizeof(Batch) * (size_t)(cap *= 2));
        bs[nb++] = best;
        int64_t e = best.a1 < A ? best.a1 : A;
        st += (e - best.a0 + 3) / 4 + 4 * best.nr + (best.local ? 0 : 2 * best.nr);
        a0 = best.a1;
    }
    if (!ok) {
        for (int64_t i = 0; i < nb; i++) free(bs[i].r);
        free(bs);
        return false;
    }
    *out = bs, *nout = nb, *steps = st;
    return true;
}

static void batches_free(Batch *bs, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) free(bs[i].r);
    free(bs);
}

/* the cheaper form's batches; false: neither moves n */
static bool quad_plan_walk(const MNCompile *c, const MNNode *n, QMap *q, Batch **bs, int64_t *nb) {
    if (!qmap_build(c, n, q)) return false;
    Batch *bo = NULL, *bi = NULL;
    int64_t no = 0, ni = 0, so = 0, si = 0;
    bool ok_o = plan_form(c, q, true, &bo, &no, &so), ok_i = plan_form(c, q, false, &bi, &ni, &si);
    if (ok_o && (!ok_i || so <= si)) {
        if (ok_i) batches_free(bi, ni);
        *bs = bo, *nb = no;
        return true;
    }
    if (ok_o) batches_free(bo, no);
    if (ok_i) {
        *bs = bi, *nb = ni;
        return true;
    }
    free(q->src);
    return false;
}

/* ---- the plan through check_memo: a function of the node (emit_node_key), made once for
 * alike nodes (a mixer's layers) and not again by the scratch needs, Node Simulation and
 * emission. A record: the head, the map, then each batch and its rows. ---- */
typedef struct {
    bool ok;
    MNLayout li, lo;
    int64_t NL, J, M, Ain, Aout, nb;
} PlanHead;

static int64_t map_len(const PlanHead *h) { return h->NL * h->J * h->M * h->Aout; }

static bool quad_plan(const MNCompile *c, const MNNode *n, QMap *q, Batch **bs, int64_t *nb) {
    MNBuf k = {0};
    buf_printf(&k, "quadmove|");
    if (!c->check_memo || !emit_node_key(&k, n, true)) {
        buf_free(&k);
        return quad_plan_walk(c, n, q, bs, nb);
    }
    size_t len;
    const uint8_t *got = memo_get(c->check_memo, k.data, &len);
    PlanHead h;
    if (got) {
        buf_free(&k);
        const uint8_t *p = got, *end = got + len;
        bool ok = memo_take(&p, end, &h, sizeof h);
        if (ok && !h.ok) return false;
        memset(q, 0, sizeof *q);
        q->li = h.li, q->lo = h.lo, q->NL = h.NL, q->J = h.J, q->M = h.M, q->Ain = h.Ain, q->Aout = h.Aout;
        q->x = n->in[0], q->y = n->out[0];
        q->src = xmalloc(sizeof(int64_t) * (size_t)(map_len(&h) + 1));
        ok = ok && memo_take(&p, end, q->src, sizeof(int64_t) * (size_t)map_len(&h));
        *nb = h.nb;
        *bs = xcalloc((size_t)h.nb + 1, sizeof(Batch));
        for (int64_t i = 0; ok && i < h.nb; i++) {
            Batch *b = &(*bs)[i];
            ok = memo_take(&p, end, b, sizeof *b);
            b->r = xmalloc(sizeof(Row) * (size_t)((ok ? b->nr : 0) + 1));
            ok = ok && memo_take(&p, end, b->r, sizeof(Row) * (size_t)b->nr);
        }
        if (!ok || p != end) die("quad plan memo: a bad record");
        return true;
    }
    memset(&h, 0, sizeof h);
    h.ok = quad_plan_walk(c, n, q, bs, nb);
    MNBuf val = {0};
    if (h.ok)
        h.li = q->li, h.lo = q->lo, h.NL = q->NL, h.J = q->J, h.M = q->M, h.Ain = q->Ain, h.Aout = q->Aout, h.nb = *nb;
    buf_append(&val, &h, sizeof h);
    if (h.ok) {
        buf_append(&val, q->src, sizeof(int64_t) * (size_t)map_len(&h));
        for (int64_t i = 0; i < *nb; i++) {
            Batch b = (*bs)[i];
            b.r = NULL;
            buf_append(&val, &b, sizeof b);
            buf_append(&val, (*bs)[i].r, sizeof(Row) * (size_t)b.nr);
        }
    }
    memo_put(c->check_memo, k.data, val.data, val.len);
    buf_free(&val);
    buf_free(&k);
    return h.ok;
}

bool emit_quadmove_take(const MNCompile *c, const MNNode *n, Walk *w) {
    QMap q;
    Batch *bs;
    int64_t nb;
    if (!quad_plan(c, n, &q, &bs, &nb)) return false;
    batches_free(bs, nb);
    free(q.src);
    w->qmove[w->pos] = true;
    return true;
}

/* ---- the code ---- */

/* assemble L1BM row at from v's quads the pattern names, from the top down (by output rows a
 * place from the input; by input rows the output's own quads, a prefill); each step takes a
 * run of up to 4 quads of one MAB into the row, its last cycle the run's top */
static void assemble(Em *e, const MNValue *v, const Row *r, int64_t at) {
    bool done[16] = {false};
    for (int p = 15; p >= 0; p--) {
        if (done[p] || r->pat[p][0] < 0) continue;
        int64_t mab = r->pat[p][0], lw[4];
        int lo = p;
        while (lo > 0 && p - lo < 3 && r->pat[lo - 1][0] == mab && !done[lo - 1]) lo--;
        for (int k = 0; k < 4; k++) {
            int pos = p - 3 + k;
            lw[k] = pos >= lo ? r->pat[pos][1] : r->pat[lo][1]; /* (below the run: rewritten later) */
            if (pos >= lo) done[pos] = true;
        }
        buf_printf(e->b, "l1bmm@%lld ", (long long)mab);
        emit_lw_list(e, v, lw, 4);
        buf_printf(e->b, " $lb%lld\n", (long long)(ROWLW * at + 4 * (p - 3)));
    }
}

/* by input rows: hand out received place s (L1BM row at) to the MAB under the mask: runs of
 * up to 4 neighbouring quads of that MAB, the top one in the step's last cycle */
static void hand_out(Em *e, const QMap *q, const Row *r, int64_t at, int64_t mab) {
    bool done[16] = {false};
    for (int p = 15; p >= 0; p--) {
        if (done[p] || r->pat[p][0] != mab) continue;
        int64_t lw[4];
        for (int k = 3; k >= 0; k--) {
            int pos = p - 3 + k;
            if (pos >= 0 && r->pat[pos][0] == mab && !done[pos]) {
                lw[k] = r->pat[pos][1];
                done[pos] = true;
            } else
                lw[k] = lw[k + 1]; /* rewritten by a later cycle of the step */
        }
        buf_printf(e->b, "l1bmm $lb%lld ", (long long)(ROWLW * at + 4 * (p - 3)));
        emit_lw_list(e, q->y, lw, 4);
        buf_printf(e->b, "/$imr1\n");
    }
}

static void emit_batch(Em *e, const QMap *q, const Batch *b, bool *used, int64_t *lastmab) {
    int64_t A = b->by_out ? q->Aout : q->Ain, J = q->J, na = b->a1 - b->a0, e1 = b->a1 < A ? b->a1 : A;
    char X[48];
    /* L1BM rows: 0 spare, then (by input) the staged input rows, then the places; by output the
     * received rows after the places */
    int64_t staged0 = 1, place0 = b->by_out ? 1 : 1 + na, recv0 = place0 + b->nslot;
    if (b->prefill) /* (before the input rows: the lowest place's spill lands on them, rewritten then) */
        for (int64_t s = b->nslot - 1; s >= 0; s--)
            for (int64_t i = 0; i < b->nr; i++)
                if (b->r[i].slot == s) {
                    assemble(e, q->y, &b->r[i], place0 + s);
                    break;
                }
    if (!b->by_out) {
        for (int64_t a = b->a0; a < e1; a += 4)
            buf_printf(e->b, "l1bmd $%s%sv $lb%lld\n", emit_bank_reg(q->x), emit_at(e, q->x, a, X),
                       (long long)(ROWLW * (staged0 + a - b->a0)));
    } else { /* each place once, from its rows' patterns (alike on every L1B that fills it) */
        for (int64_t s = b->nslot - 1; s >= 0; s--) {
            Row u;
            place_pattern(b, s, &u);
            assemble(e, q->x, &u, place0 + s);
        }
    }
    buf_printf(e->b, "nop/2\n");
    int64_t hand0 = b->by_out ? recv0 : b->local ? staged0 : place0; /* the rows handed out from */
    if (!b->local) {
        /* up: each (L1B, row) some L2B sends, to a slot alike on every L2B */
        int64_t nu = 0, *up = xmalloc(sizeof(int64_t) * (size_t)(b->nr + 1));
        for (int64_t i = 0; i < b->nr; i++) {
            const Row *r = &b->r[i];
            int64_t j = (b->by_out ? r->other : r->key / A) % J,
                    row = b->by_out ? place0 + r->slot : staged0 + r->key % A - b->a0;
            int64_t id = j * 4096 + row, k;
            for (k = 0; k < nu && up[k] != id; k++) {}
            if (k == nu) {
                up[nu++] = id;
                buf_printf(e->b, "l2bm@%lld $lb%lld $lc%lld\n", (long long)j, (long long)(ROWLW * row),
                           (long long)(ROWLW * k));
            }
        }
        buf_printf(e->b, "nop/3\n");
        /* each receiving L1B's row: from its up slot, through the PDM where L2Bs differ (then in
         * passes of G receiving rows an L1B, the L2BM's room) */
        int64_t R = nu, nrecv = b->by_out ? na : b->nslot, G = b->exch ? b->G : nrecv;
        bool *dn = xcalloc((size_t)(J * nrecv + 1), sizeof(bool));
        for (int64_t g0 = 0; g0 < nrecv; g0 += G) {
            int64_t g1 = g0 + G < nrecv ? g0 + G : nrecv;
            if (b->prefill) { /* each place's prefill into its receiving slot: what an L2B that gets
                               * no row there brings down */
                for (int64_t j = 0; j < J; j++)
                    for (int64_t s = g0; s < g1; s++)
                        buf_printf(e->b, "l2bm@%lld $lb%lld $lc%lld\n", (long long)j, (long long)(ROWLW * (place0 + s)),
                                   (long long)(ROWLW * (R + j * G + s - g0)));
                buf_printf(e->b, "nop/3\n");
            }
            if (b->exch) {
                EmExchange xr = {0};
                for (int64_t i = 0; i < b->nr; i++) {
                    const Row *r = &b->r[i];
                    int64_t sl1 = b->by_out ? r->other : r->key / A, rl1 = b->by_out ? r->key / A : r->other;
                    int64_t row = b->by_out ? place0 + r->slot : staged0 + r->key % A - b->a0, k;
                    int64_t at = b->by_out ? r->key % A - b->a0 : r->slot;
                    if (at < g0 || at >= g1) continue;
                    for (k = 0; k < nu && up[k] != sl1 % J * 4096 + row; k++) {}
                    emit_exchange_add(&xr, rl1 / J, sl1 / J, k, R + rl1 % J * G + at - g0);
                }
                emit_exchange(e, &xr, used);
            }
            /* down: each (receiving L1B, its row) once */
            for (int64_t i = 0; i < b->nr; i++) {
                const Row *r = &b->r[i];
                int64_t sl1 = b->by_out ? r->other : r->key / A, rl1 = b->by_out ? r->key / A : r->other;
                int64_t at = b->by_out ? r->key % A - b->a0 : r->slot, k;
                int64_t row = b->by_out ? place0 + r->slot : staged0 + r->key % A - b->a0;
                if (at < g0 || at >= g1 || dn[rl1 % J * nrecv + at]) continue;
                dn[rl1 % J * nrecv + at] = true;
                for (k = 0; k < nu && up[k] != sl1 % J * 4096 + row; k++) {}
                int64_t from = b->exch ? R + rl1 % J * G + at - g0 : k;
                buf_printf(e->b, "l2bm@%lld $lc%lld $lb%lld\n", (long long)(rl1 % J), (long long)(ROWLW * from),
                           (long long)(ROWLW * (hand0 + at)));
            }
            if (b->exch) buf_printf(e->b, "nop/3\n"); /* (the next pass's pushes rewrite these slots) */
        }
        free(dn);
        free(up);
        buf_printf(e->b, "nop/2\n");
    } else if (b->by_out)
        hand0 = place0;
    if (b->by_out) { /* 4 output rows a step into every PE */
        for (int64_t a = b->a0; a < e1; a += 4)
            buf_printf(e->b, "l1bmd $lb%lld $%s%sv%s\n", (long long)(ROWLW * (hand0 + a - b->a0)), emit_bank_reg(q->y),
                       emit_at(e, q->y, a, X), emit_tail_mask(q->y->num_lw, a));
    } else { /* each MAB's quads of every place, under its mask */
        for (int64_t mab = 0; mab < q->M; mab++) {
            bool any = false;
            for (int64_t s = 0; s < b->nslot && !any; s++)
                for (int64_t i = 0; i < b->nr && !any; i++)
                    for (int p = 0; p < 16 && b->r[i].slot == s && !any; p++) any = b->r[i].pat[p][0] == mab;
            if (!any) continue;
            if (mab != *lastmab) emit_mab_masks(e, mab, 4), *lastmab = mab;
            for (int64_t s = 0; s < b->nslot; s++)
                for (int64_t i = 0; i < b->nr; i++)
                    if (b->r[i].slot == s) {
                        hand_out(e, q, &b->r[i], hand0 + s, mab);
                        break;
                    }
        }
    }
    buf_printf(e->b, "nop/2\n");
}

void emit_quadmove(Em *e, const MNNode *n) {
    QMap q;
    Batch *bs;
    int64_t nb;
    if (!quad_plan(e->c, n, &q, &bs, &nb)) die("node '%s' moves no quads", n->name);
    bool used[64] = {false};
    int64_t lastmab = -1;
    for (int64_t i = 0; i < nb; i++) emit_batch(e, &q, &bs[i], used, &lastmab);
    batches_free(bs, nb);
    free(q.src);
}

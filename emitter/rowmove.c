/* Code Emit: data movement that moves whole rows between the L1Bs of an L2B, and across
 * L2Bs and groups (the exchange form, below).
 *
 * A row is one long-word address on every PE of an L1B (64 LW on mncore2). When a
 * Transpose, Reshape or layout switch leaves every element on its MAB, PE and word and
 * only changes its L1B and address (attention's head split: (S, H, D) with S over the
 * L1Bs and MABs and H as addresses, to (H, S, D) with H over the L1Bs and S as addresses
 * on the same MABs), each output row is one input row. The gather path would broadcast
 * the whole input into every PE and pick words by index tables; here each row crosses
 * the tree once, as a block:
 *
 *   combine   every L1B's rows into its L1BM (4 rows a step, l1bmd);
 *   up        each input row that some output row takes, from its L1B's L1BM to a slot of
 *             the L2BM (64 LW a step, l2bm@j);
 *   down      each output row from its slot into its L1B's L1BM (l2bm@j, or l2bmb to
 *             every L1B where the output is replicated over them);
 *   distribute every L1B's L1BM rows into the output (4 rows a step).
 *
 * Every L2B does the same at once (the rows stay on their L2B). Rows pass in batches that
 * fit the L1BM and the L2BM.
 *
 * Where a row changes L2B (a batch spread over the L2Bs meets a layout that spreads
 * another axis there), or the L2Bs' maps differ (each takes its own rows of an input alike
 * on all), the exchange form adds a step between up and down: each output row's input row
 * goes from its L2B's L2BM slot to the output L2B's staging slot through the source
 * group's PDM (two mvp, L2BM to PDM and PDM to L2BM; runs of consecutive slots as one), and
 * the input's rows come up a chunk of addresses at a time, so no input is too large.
 *
 * An output alike on every MAB (a batched product's B, attention's Kᵀ) from an input
 * spread over them takes each address from one MAB of an input row: when a row's 16 MAB
 * blocks (4 LW each, one per PE) go to 16 consecutive addresses, the row lands in the
 * output L1B's L1BM at 4 LW per address and l1bmm hands 4 addresses a step to every MAB.
 *
 * A layout switch to such a B whose packed axis is the input's second-last (attention's
 * V for P V: keys packed, the input packs the head's features) first broadcasts the rows
 * into an LM0 scratch laid out as that B with its last two axes' roles swapped (the
 * input's packed axis still packed), then turns each 8 x 8 block around on every MAB
 * through the matrix register: two fmwrite of 4 rows, two fmread of 4 columns.
 *
 * Cost: A_in / 4 steps to combine, 2 a row moved, A_out / 4 to distribute (4 a block
 * turned), against the gather's broadcast of the whole input into every PE; the exchange
 * adds two transfers a run, 64 LW a row over the PDM's port (16 LW a cycle on mncore2). */
#include "emit_impl.h"
#include "memo.h"
#include "ops.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROW = 64 }; /* a row's long words in the L1BM and the L2BM (P, the PEs of an L1B) */
#define NONE INT64_MIN

typedef struct {
    MNLayout li, lo; /* (the transposing form's lo is its scratch's) */
    int64_t J, NL, ain, aout;
    int64_t *src; /* [L1B j of the output row * aout + address]: input row l * ain + a, -1: none */
    /* every L2B's own map, [(L2B of the output row * J + j) * aout + address]: the input row
     * (L2B * J + l) * ain + a, -1: none; the exchange form when the L2Bs' maps differ */
    int64_t *xsrc;
    bool exch;
    int64_t *mab; /* broadcast: [the same]: the input MAB whose block it takes (NULL: its own) */
    int64_t *yb; /* broadcast: [L1B j * J ain + row]: the address of the row's MAB 0 block, NONE */
} RowMap;

static bool visit(void *ctx, const int64_t *oidx, const EmEntry *en) {
    RowMap *rm = ctx;
    MNPlace pi, po;
    layout_place(&rm->li, en->sidx, &pi);
    layout_place(&rm->lo, oidx, &po);
    if ((!rm->mab && pi.c[LV_MAB] != po.c[LV_MAB]) || pi.c[LV_PE] != po.c[LV_PE] || pi.c[LV_W] != po.c[LV_W] ||
        (rm->mab && pi.c[LV_L2B] != po.c[LV_L2B]) || pi.c[LV_TIME] || po.c[LV_TIME])
        return false;
    int64_t at = po.c[LV_L1B] * rm->aout + po.c[LV_ADDR], want = pi.c[LV_L1B] * rm->ain + pi.c[LV_ADDR];
    if (rm->mab) {
        if (rm->src[at] >= 0 && (rm->src[at] != want || rm->mab[at] != pi.c[LV_MAB]))
            return false; /* an output block from two places */
        rm->src[at] = want;
        rm->mab[at] = pi.c[LV_MAB];
        return true;
    }
    /* the output row on each L2B that holds it (all where it is alike on them), from the
     * input row on that L2B where the input is alike on them, else on its own */
    bool oall = rm->lo.bcast & (1u << LV_L2B), iall = rm->li.bcast & (1u << LV_L2B);
    for (int64_t l = oall ? 0 : po.c[LV_L2B]; l < (oall ? rm->NL : po.c[LV_L2B] + 1); l++) {
        int64_t x = ((l * rm->J) * rm->aout) + at, from = (iall ? l : pi.c[LV_L2B]) * rm->J * rm->ain + want;
        if (rm->xsrc[x] >= 0 && rm->xsrc[x] != from) return false; /* an output row from two places */
        rm->xsrc[x] = from;
    }
    return true;
}

/* the exchange form's or the one map of every L2B (rm->src) from rm->xsrc: the same one
 * when each L2B's rows come from its own and alike on all */
static void split_maps(RowMap *rm) {
    int64_t JA = rm->J * rm->aout, JI = rm->J * rm->ain;
    rm->exch = false;
    for (int64_t i = 0; i < JA; i++) {
        int64_t s0 = rm->xsrc[i];
        rm->src[i] = s0 >= 0 ? s0 % JI : -1;
        for (int64_t l = 0; l < rm->NL && !rm->exch; l++) {
            int64_t s = rm->xsrc[l * JA + i];
            if ((s < 0) != (s0 < 0) || (s >= 0 && (s / JI != l || s % JI != s0 % JI))) rm->exch = true;
        }
    }
}

static int64_t bcast_chunk(const MNMachine *m, int64_t ain, int64_t aout);

/* the row map of n into layout lo of aout long words a PE (rm->src malloc'd on success) */
static bool row_map_to(const MNCompile *c, const MNNode *n, const MNLayout *lo, int64_t aout, RowMap *rm) {
    const MNValue *x = n->in[0], *y = n->out[0];
    const unsigned MAB = 1u << LV_MAB, L2B = 1u << LV_L2B;
    memset(rm, 0, sizeof *rm);
    rm->lo = *lo;
    if (n->nin < 1 || !x || !y || n->nout < 1 || x->dtype != y->dtype || !layout_get(x, &rm->li) ||
        ((rm->li.bcast & MAB) && !(rm->lo.bcast & MAB)) ||
        (rm->lo.bcast & ~rm->li.bcast & (1u << LV_PE | 1u << LV_W)) || /* (copies a row has not) */
        c->machine.pe_per_mab != 4 || c->machine.mab_per_l1b * c->machine.pe_per_mab != ROW)
        return false;
    rm->J = c->machine.l1b_per_l2b, rm->NL = c->machine.n_l2b;
    rm->ain = x->num_lw, rm->aout = aout;
    if (rm->J < 2 || rm->ain < 1 || rm->aout < 1) return false;
    int64_t JA = rm->J * rm->aout, M = c->machine.mab_per_l1b;
    bool bc = (rm->lo.bcast & MAB) && !(rm->li.bcast & MAB);
    if (bc && (rm->li.bcast & L2B) != (rm->lo.bcast & L2B)) return false;
    rm->src = xmalloc(sizeof(int64_t) * (size_t)JA);
    rm->mab = bc ? xmalloc(sizeof(int64_t) * (size_t)JA) : NULL;
    rm->xsrc = bc ? NULL : xmalloc(sizeof(int64_t) * (size_t)(JA * rm->NL));
    for (int64_t i = 0; i < JA; i++) rm->src[i] = -1;
    for (int64_t i = 0; !bc && i < JA * rm->NL; i++) rm->xsrc[i] = -1;
    bool ok = emit_move_sources(n, visit, rm);
    if (ok && !bc) split_maps(rm);
    /* the input's rows and a few output rows in the L1BM at once (the output's in batches);
     * the exchange and broadcast forms bring the input's rows a chunk at a time */
    ok = ok && (rm->exch || bc || ((rm->ain + 3) / 4 * 4 + 8) * ROW <= c->machine.l1bm_lw);
    if (ok && !bc && !rm->exch) free(rm->xsrc), rm->xsrc = NULL;
    if (ok && bc) { /* each row's blocks at consecutive addresses of one output L1B, rows apart */
        int64_t JR = rm->J * rm->J * rm->ain;
        rm->yb = xmalloc(sizeof(int64_t) * (size_t)JR);
        for (int64_t i = 0; i < JR; i++) rm->yb[i] = NONE;
        int64_t *owner = xmalloc(sizeof(int64_t) * (size_t)JA);
        for (int64_t i = 0; i < JA; i++) owner[i] = -1;
        for (int64_t i = 0; i < JA && ok; i++) {
            if (rm->src[i] < 0) continue;
            int64_t j = i / rm->aout, y = i % rm->aout, *b = &rm->yb[j * rm->J * rm->ain + rm->src[i]];
            if (*b != NONE && *b != y - rm->mab[i]) ok = false;
            *b = y - rm->mab[i];
        }
        for (int64_t i = 0; i < JR && ok; i++) { /* the rows' ranges in an L1B apart */
            int64_t j = i / (rm->J * rm->ain);
            for (int64_t y = rm->yb[i]; rm->yb[i] != NONE && y < rm->yb[i] + M && ok; y++) {
                if (y < 0 || y >= rm->aout) continue;
                if (owner[j * rm->aout + y] >= 0) ok = false;
                owner[j * rm->aout + y] = i;
            }
        }
        free(owner);
        /* 4 LW per output address (and a row's overhang) beside a chunk of input rows */
        ok = ok && bcast_chunk(&c->machine, rm->ain, rm->aout) >= 4;
    }
    if (!ok) {
        free(rm->src), free(rm->mab), free(rm->yb), free(rm->xsrc);
        rm->src = rm->mab = rm->yb = rm->xsrc = NULL;
    }
    return ok;
}

static bool row_map_walk(const MNCompile *c, const MNNode *n, RowMap *rm) {
    MNLayout lo;
    memset(rm, 0, sizeof *rm);
    return n->nout >= 1 && n->out[0] && layout_get(n->out[0], &lo) && row_map_to(c, n, &lo, n->out[0]->num_lw, rm);
}

static bool movable(const MNNode *n) {
    return n->op == OP_Transpose || mn_op_has(n->op, MN_VIEW) || n->op == OP_MNCoreLayoutSwitch || n->op == OP_Gather ||
           n->op == OP_Slice;
}

static void map_free(RowMap *rm) { free(rm->src), free(rm->mab), free(rm->yb), free(rm->xsrc); }

/* The scratch layout of the transposing form: lo with axis r-2 (packed in lo) as
 * addresses, one apart, and axis r-1 packed, its blocks S apart (false: lo is no such B) */
static bool swapped(const MNValue *y, const MNLayout *lo, MNLayout *l) {
    int r = lo->rank;
    if (r < 2 || !(lo->bcast & (1u << LV_MAB))) return false;
    /* keys 8 does not divide: the last block's padding keys are turned too (the product
     * zeroes B's padding lanes, emitter/matmul.c) */
    int64_t S = (y->type.dims[r - 2] + 7) / 8 * 8, D = y->type.dims[r - 1];
    const MNSubaxis *k = lo->sub[r - 2], *nd = lo->sub[r - 1];
    if (D % 8 || S > INT32_MAX || lo->nsub[r - 2] != 3 || k[0].level != LV_ADDR || k[0].size * 8 != S ||
        k[1].level != LV_W || k[1].size != 2 || k[2].level != LV_PE || k[2].size != 4 || lo->nsub[r - 1] != 1 ||
        nd[0].level != LV_ADDR || k[0].stride != D || nd[0].stride != 1)
        return false;
    /* a feature's keys 16 apart in the scratch: a row's 16 MAB blocks, 16 keys from a multiple
     * of 16, then never overhang the next feature's */
    int64_t S16 = (S + 15) / 16 * 16;
    *l = *lo;
    l->nsub[r - 2] = 1;
    l->sub[r - 2][0] = (MNSubaxis){S16, 1, LV_ADDR};
    l->nsub[r - 1] = 3;
    l->sub[r - 1][0] = (MNSubaxis){D / 8, (int32_t)S16, LV_ADDR};
    l->sub[r - 1][1] = k[1];
    l->sub[r - 1][2] = k[2];
    return true;
}

/* n as the transposing form: its row map into the scratch layout (rm), or false */
static bool transposing_walk(const MNCompile *c, const MNNode *n, RowMap *rm) {
    MNLayout lo, ls;
    memset(rm, 0, sizeof *rm);
    if (n->op != OP_MNCoreLayoutSwitch || !n->out[0] || !layout_get(n->out[0], &lo) || !swapped(n->out[0], &lo, &ls))
        return false;
    return row_map_to(c, n, &ls, layout_num_lw(&ls, 1), rm) && rm->mab;
}

/* ---- the maps through check_memo: a map is a function of the node (its op, attributes,
 * operands' layouts and shapes, constant inputs: emit_node_key), walked once for alike
 * nodes (a transformer's layers) and not again by the scratch needs, Node Simulation and
 * emission ---- */
typedef struct {
    bool ok, exch, has[4]; /* src, xsrc, mab, yb */
    MNLayout li, lo;
    int64_t J, NL, ain, aout;
} MapHead;

/* the map's arrays in record order: src, xsrc, mab, yb */
static int64_t **map_arr(RowMap *rm, int k) {
    return k == 0 ? &rm->src : k == 1 ? &rm->xsrc : k == 2 ? &rm->mab : &rm->yb;
}
static int64_t map_len(const MapHead *h, int k) {
    int64_t JA = h->J * h->aout;
    return k == 1 ? JA * h->NL : k == 3 ? h->J * h->J * h->ain : JA;
}

static bool map_memo(const MNCompile *c, const MNNode *n, bool turn, RowMap *rm) {
    bool (*walk)(const MNCompile *, const MNNode *, RowMap *) = turn ? transposing_walk : row_map_walk;
    MNBuf k = {0};
    buf_printf(&k, "rowmove|%d|", turn);
    if (!c->check_memo || !emit_node_key(&k, n, true)) {
        buf_free(&k);
        return walk(c, n, rm);
    }
    size_t len;
    const uint8_t *got = memo_get(c->check_memo, k.data, &len);
    MapHead h;
    if (got) {
        const uint8_t *p = got, *end = got + len;
        bool ok = memo_take(&p, end, &h, sizeof h);
        memset(rm, 0, sizeof *rm);
        rm->li = h.li, rm->lo = h.lo, rm->J = h.J, rm->NL = h.NL, rm->ain = h.ain, rm->aout = h.aout, rm->exch = h.exch;
        for (int a = 0; ok && a < 4 && h.ok; a++) {
            if (!h.has[a]) continue;
            size_t nb = sizeof(int64_t) * (size_t)map_len(&h, a);
            *map_arr(rm, a) = xmalloc(nb ? nb : 1);
            ok = memo_take(&p, end, *map_arr(rm, a), nb);
        }
        if (!ok || p != end) die("row map memo: a bad record");
        buf_free(&k);
        return h.ok;
    }
    memset(&h, 0, sizeof h);
    h.ok = walk(c, n, rm);
    MNBuf val = {0};
    if (h.ok) {
        h.exch = rm->exch, h.li = rm->li, h.lo = rm->lo, h.J = rm->J, h.NL = rm->NL, h.ain = rm->ain, h.aout = rm->aout;
        for (int a = 0; a < 4; a++) h.has[a] = *map_arr(rm, a) != NULL;
    }
    buf_append(&val, &h, sizeof h);
    for (int a = 0; a < 4 && h.ok; a++)
        if (h.has[a]) buf_append(&val, *map_arr(rm, a), sizeof(int64_t) * (size_t)map_len(&h, a));
    memo_put(c->check_memo, k.data, val.data, val.len);
    buf_free(&val);
    buf_free(&k);
    return h.ok;
}

static bool row_map(const MNCompile *c, const MNNode *n, RowMap *rm) { return map_memo(c, n, false, rm); }
static bool transposing(const MNCompile *c, const MNNode *n, RowMap *rm) { return map_memo(c, n, true, rm); }

/* the long word of element (b..., s, d) of v in layout l */
static int64_t lw_of(const MNLayout *l, const MNValue *v, int64_t b, int64_t s, int64_t d) {
    int64_t idx[LAYOUT_MAX_RANK] = {0};
    int r = v->type.rank;
    for (int a = r - 3; a >= 0; a--) idx[a] = b % v->type.dims[a], b /= v->type.dims[a];
    idx[r - 2] = s, idx[r - 1] = d;
    MNPlace p;
    layout_place(l, idx, &p);
    return p.c[LV_ADDR];
}

/* every 8 x 8 block (keys 8 kb.., features 8 kd..) of every batch from the scratch at scr
 * to y, turned around in the matrix register; blocks alike on every L1B once */
static void turn_blocks(Em *e, const RowMap *rm, const MNValue *y, int64_t scr) {
    MNLayout ly;
    if (!layout_get(y, &ly)) die("'%s' has no layout", y->name);
    int r = y->type.rank;
    int64_t S = (y->type.dims[r - 2] + 7) / 8 * 8, D = y->type.dims[r - 1];
    int64_t B = ir_shape_numel(&y->type) / (y->type.dims[r - 2] * D);
    int64_t n = 0, cap = 64, (*done)[16] = xmalloc(sizeof *done * (size_t)cap);
    bool lm0 = y->loc == MN_LOC_LM0;
    for (int64_t b = 0; b < B; b++)
        for (int64_t kb = 0; kb < S / 8; kb++)
            for (int64_t kd = 0; kd < D / 8; kd++) {
                int64_t a[16]; /* register row i: key 4 (i % 2) + i / 2; column i: feature the same */
                for (int i = 0; i < 8; i++) {
                    int64_t k = 4 * (i % 2) + i / 2;
                    a[i] = scr + lw_of(&rm->lo, y, b, 8 * kb + k, 8 * kd);
                    a[8 + i] = lw_of(&ly, y, b, 8 * kb, 8 * kd + k);
                }
                bool seen = false;
                for (int64_t q = 0; q < n && !seen; q++) seen = !memcmp(done[q], a, sizeof a);
                if (seen) continue;
                if (n == cap) done = xrealloc(done, sizeof *done * (size_t)(cap *= 2));
                memcpy(done[n++], a, sizeof a);
                for (int R = 0; R < 8; R += 4) { /* (the scratch: absolute LM0 long words) */
                    buf_printf(e->b, "fmwrite ");
                    emit_lw_list(e, NULL, &a[R], 4);
                    buf_printf(e->b, " $lx%d\n", R);
                }
                for (int C = 0; C < 8; C += 4) {
                    buf_printf(e->b, "fmread $lx%d ", C);
                    emit_lw_list(e, y, &a[8 + C], 4);
                    buf_printf(e->b, "\n");
                }
                if (lm0) buf_printf(e->b, "nop/2\n"); /* the scratch is read again 3 steps after */
            }
    buf_printf(e->b, "nop/2\n");
    free(done);
}

bool emit_rowmove_take(const MNCompile *c, const MNNode *n, Walk *w, const char **why) {
    RowMap rm;
    if (!movable(n) || !emit_in_lm(n->in[0]) || !emit_in_lm(n->out[0])) return false;
    int64_t scratch = 0; /* the transposing form's rows before they turn */
    if (!row_map(c, n, &rm)) {
        if (!transposing(c, n, &rm)) return false;
        scratch = (rm.aout + 3) / 4 * 4;
    }
    map_free(&rm);
    w->rmove[w->pos] = true;
    *why = emit_lm0_room(c, w, scratch, &w->scr[w->pos]) ? NULL : "no LM0 room for its rows";
    return true;
}

/* combine: every L1B's rows of x into its L1BM, row a at 64 a */
static void combine(Em *e, const MNValue *x, int64_t ain) {
    char X[48];
    for (int64_t a = 0; a < ain; a += 4)
        buf_printf(e->b, "l1bmd $%s%sv $lb%lld\n", emit_bank_reg(x), emit_at(e, x, a, X), (long long)(ROW * a));
    buf_printf(e->b, "nop/2\n");
}

/* up: each input row s (L1B s / ain, address s % ain) with a slot into it in the L2BM */
static void up(Em *e, const int64_t *slot, int64_t nrows, int64_t ain) {
    for (int64_t s = 0; s < nrows; s++)
        if (slot[s] >= 0)
            buf_printf(e->b, "l2bm@%lld $lb%lld $lc%lld\n", (long long)(s / ain), (long long)(ROW * (s % ain)),
                       (long long)(ROW * slot[s]));
    buf_printf(e->b, "nop/3\n");
}

/* down: L2BM slot into L1BM long word at of L1B j, or of every L1B */
static void down(Em *e, bool everywhere, int64_t j, int64_t slot, int64_t at) {
    if (everywhere)
        buf_printf(e->b, "l2bmb $lc%lld $lb%lld\n", (long long)(ROW * slot), (long long)at);
    else
        buf_printf(e->b, "l2bm@%lld $lc%lld $lb%lld\n", (long long)j, (long long)(ROW * slot), (long long)at);
}

/* the input rows a chunk of the broadcast form combines at once: what the L1BM holds beside
 * the output's staging (4 LW an output address, and a row's overhang) */
static int64_t bcast_chunk(const MNMachine *m, int64_t ain, int64_t aout) {
    int64_t c = (m->l1bm_lw - 4 * aout - ROW) / ROW - 4;
    c = c / 4 * 4;
    return c < (ain + 3) / 4 * 4 ? c : (ain + 3) / 4 * 4;
}

/* the broadcast form: the used rows into the L2BM, each into its output L1B's L1BM at 4 LW
 * per address from its MAB 0 block's, then 4 addresses a step to every MAB (into LM0
 * long word scr without y). The input's rows come a chunk at a time (bcast_chunk), their
 * L2BM slots taken again by the next chunk. */
static void broadcast_rows(Em *e, const RowMap *rm, const MNValue *x, const MNValue *y, int64_t scr) {
    int64_t J = rm->J, C = bcast_chunk(&e->c->machine, rm->ain, rm->aout), D = (C + 4) * ROW;
    bool everywhere = rm->lo.bcast & (1u << LV_L1B);
    int64_t *slot = xmalloc(sizeof(int64_t) * (size_t)(J * rm->ain));
    char X[48], Y[48];
    if (C < 4) die("row moves: an output past the L1BM");
    for (int64_t a0 = 0; a0 < rm->ain; a0 += C) {
        int64_t a1 = a0 + C < rm->ain ? a0 + C : rm->ain, nslot = 0;
        for (int64_t i = 0; i < J * rm->ain; i++) slot[i] = -1;
        for (int64_t i = 0; i < J * J * rm->ain; i++) {
            int64_t s = i % (J * rm->ain), a = s % rm->ain;
            if (rm->yb[i] != NONE && a >= a0 && a < a1 && slot[s] < 0) slot[s] = nslot++;
        }
        if (!nslot) continue;
        if (nslot * ROW > e->c->machine.l2bm_lw) die("row moves past the L2BM");
        for (int64_t a = a0; a < a1; a += 4) /* combine the chunk's rows, row a at 64 (a - a0) */
            buf_printf(e->b, "l1bmd $%s%sv $lb%lld\n", emit_bank_reg(x), emit_at(e, x, a, X),
                       (long long)(ROW * (a - a0)));
        buf_printf(e->b, "nop/2\n");
        for (int64_t s = 0; s < J * rm->ain; s++)
            if (slot[s] >= 0)
                buf_printf(e->b, "l2bm@%lld $lb%lld $lc%lld\n", (long long)(s / rm->ain),
                           (long long)(ROW * (s % rm->ain - a0)), (long long)(ROW * slot[s]));
        buf_printf(e->b, "nop/3\n");
        for (int64_t i = 0; i < J * J * rm->ain; i++) {
            int64_t j = i / (J * rm->ain), s = i % (J * rm->ain), at = D + 4 * rm->yb[i];
            if (rm->yb[i] == NONE || slot[s] < 0 || (everywhere && j)) continue;
            if (at < 0) die("a row placed before the L1BM");
            down(e, everywhere, j, slot[s], at);
        }
        buf_printf(e->b, "nop/2\n");
    }
    for (int64_t ya = 0; ya < rm->aout; ya += 4)
        if (y)
            buf_printf(e->b, "l1bmm $lb%lld $%s%sv%s\n", (long long)(D + 4 * ya), emit_bank_reg(y),
                       emit_at(e, y, ya, Y), emit_tail_mask(y->num_lw, ya));
        else
            buf_printf(e->b, "l1bmm $lb%lld $lm%lldv%s\n", (long long)(D + 4 * ya), (long long)(2 * (scr + ya)),
                       emit_tail_mask(rm->aout, ya));
    buf_printf(e->b, "nop/2\n");
    free(slot);
}

/* The exchange form: rows whose L2B changes, or whose map differs between the L2Bs. A
 * batch of output addresses at a time:
 *   gather    the input rows the batch takes (on any L2B), a chunk of addresses at a time
 *             combined into every L1BM and moved up to slots of the L2BM, alike on every L2B;
 *   exchange  each output row's input row from its L2B's slot to the output L2B's staging
 *             slot (its L1B, its address), through the source group's PDM (mvp: L2BM to
 *             PDM, PDM to L2BM), runs of consecutive slots as one transfer;
 *   down      every L2B's staging rows into its L1BMs (alike on every L2B), distributed. */
static void exchange(Em *e, const RowMap *rm, const MNValue *x, const MNValue *y) {
    const MNMachine *m = &e->c->machine;
    int64_t J = rm->J, NL = rm->NL, JI = J * rm->ain;
    int64_t lb_rows = m->l1bm_lw / ROW, lc_rows = m->l2bm_lw / ROW;
    bool everywhere = rm->lo.bcast & (1u << LV_L1B);
    int64_t Jo = everywhere ? 1 : J, CH = lb_rows / 2 / 4 * 4; /* (input addresses combined at once) */
    int64_t nbmax = lb_rows / 2 / 4 * 4; /* output addresses a batch (their rows in the L1BM) */
    int64_t *slot = xmalloc(sizeof(int64_t) * (size_t)JI);
    bool used[64] = {false};
    char X[48], Y[48];
    for (int64_t y0 = 0, y1; y0 < rm->aout; y0 = y1) {
        int64_t nslot = 0, V, nb;
        for (int64_t i = 0; i < JI; i++) slot[i] = -1;
        /* the batch grows while the input rows it reads (L1B, address: a slot each) and its
         * staging rows fit the L2BM */
        for (y1 = y0; y1 < rm->aout && y1 - y0 < nbmax; y1++) {
            int64_t add = 0;
            for (int64_t l = 0; l < NL; l++)
                for (int64_t j = 0; j < Jo; j++) {
                    int64_t s = rm->xsrc[(l * J + j) * rm->aout + y1];
                    if (s >= 0 && slot[s % JI] < 0) slot[s % JI] = -2 - add++; /* (numbered below) */
                }
            if (nslot + add + Jo * (y1 + 1 - y0) > lc_rows) {
                for (int64_t i = 0; i < JI; i++)
                    if (slot[i] < -1) slot[i] = -1;
                break;
            }
            for (int64_t i = 0; i < JI; i++)
                if (slot[i] < -1) slot[i] = nslot + (-2 - slot[i]);
            nslot += add;
        }
        if (y1 == y0) die("row exchange: a row past the L2BM");
        nb = y1 - y0, V = nslot;
        /* the slots renumbered in the order the exchange reads them (output L2B, L1B, address),
         * so that an output row's neighbours read neighbouring slots: longer runs */
        for (int64_t i = 0; i < JI; i++)
            if (slot[i] >= 0) slot[i] = -2; /* (in the batch, not yet numbered) */
        nslot = 0;
        for (int64_t l = 0; l < NL; l++)
            for (int64_t j = 0; j < Jo; j++)
                for (int64_t a = y0; a < y1; a++) {
                    int64_t s = rm->xsrc[(l * J + j) * rm->aout + a];
                    if (s >= 0 && slot[s % JI] == -2) slot[s % JI] = nslot++;
                }
        /* gather: chunks of CH input addresses (4 at a time) into every L1BM, the rows read up */
        for (int64_t a0 = 0; a0 < rm->ain; a0 += CH) {
            int64_t a1 = a0 + CH < rm->ain ? a0 + CH : rm->ain, any = 0;
            for (int64_t j = 0; j < J; j++)
                for (int64_t a = a0; a < a1; a++) any += slot[j * rm->ain + a] >= 0;
            if (!any) continue;
            for (int64_t a = a0; a < a1; a += 4) {
                bool want = false;
                for (int64_t j = 0; j < J; j++)
                    for (int64_t k = a; k < a + 4 && k < a1; k++) want |= slot[j * rm->ain + k] >= 0;
                if (want)
                    buf_printf(e->b, "l1bmd $%s%sv $lb%lld\n", emit_bank_reg(x), emit_at(e, x, a, X),
                               (long long)(ROW * (a - a0)));
            }
            buf_printf(e->b, "nop/2\n");
            for (int64_t j = 0; j < J; j++)
                for (int64_t a = a0; a < a1; a++)
                    if (slot[j * rm->ain + a] >= 0)
                        buf_printf(e->b, "l2bm@%lld $lb%lld $lc%lld\n", (long long)j, (long long)(ROW * (a - a0)),
                                   (long long)(ROW * slot[j * rm->ain + a]));
            buf_printf(e->b, "nop/3\n");
        }
        /* exchange: each output row's input row to its receiving slot */
        EmExchange xr = {0};
        for (int64_t l = 0; l < NL; l++)
            for (int64_t j = 0; j < Jo; j++)
                for (int64_t a = y0; a < y1; a++) {
                    int64_t s = rm->xsrc[(l * J + j) * rm->aout + a];
                    if (s >= 0) emit_exchange_add(&xr, l, s / JI, slot[s % JI], V + j * nb + (a - y0));
                }
        emit_exchange(e, &xr, used);
        /* down and distribute: the staging rows of the batch, alike on every L2B */
        for (int64_t j = 0; j < Jo; j++)
            for (int64_t a = y0; a < y1; a++) {
                bool any = false;
                for (int64_t l = 0; l < NL && !any; l++) any = rm->xsrc[(l * J + j) * rm->aout + a] >= 0;
                if (any) down(e, everywhere, j, V + j * nb + (a - y0), ROW * (a - y0));
            }
        buf_printf(e->b, "nop/2\n");
        for (int64_t ya = y0; ya < y1; ya += 4)
            buf_printf(e->b, "l1bmd $lb%lld $%s%sv%s\n", (long long)(ROW * (ya - y0)), emit_bank_reg(y),
                       emit_at(e, y, ya, Y), emit_tail_mask(y->num_lw, ya));
        buf_printf(e->b, "nop/2\n");
    }
    free(slot);
}

void emit_rowmove(Em *e, const MNNode *n, int64_t scr) {
    RowMap rm;
    const MNValue *x = n->in[0], *y = n->out[0];
    if (!row_map(e->c, n, &rm)) {
        if (!transposing(e->c, n, &rm)) die("node '%s' moves no rows", n->name);
        broadcast_rows(e, &rm, x, NULL, scr);
        turn_blocks(e, &rm, y, scr);
        map_free(&rm);
        return;
    }
    if (rm.mab) {
        broadcast_rows(e, &rm, x, y, 0);
        map_free(&rm);
        return;
    }
    if (rm.exch) {
        exchange(e, &rm, x, y);
        map_free(&rm);
        return;
    }
    const MNMachine *m = &e->c->machine;
    int64_t J = rm.J, lb_rows = m->l1bm_lw / ROW, lc_rows = m->l2bm_lw / ROW;
    bool everywhere = rm.lo.bcast & (1u << LV_L1B); /* the output alike on every L1B: row j = 0 */
    /* the input's rows in the L1BM once (row_map_to made sure they fit), then batches of
     * output addresses whose input rows fit the L2BM and whose rows fit the L1BM after them */
    int64_t in_rows = (rm.ain + 3) / 4 * 4, *slot = xmalloc(sizeof(int64_t) * (size_t)(J * rm.ain));
    char Y[48];
    combine(e, x, rm.ain);
    for (int64_t y0 = 0; y0 < rm.aout;) {
        int64_t y1 = y0, used = 0;
        for (int64_t i = 0; i < J * rm.ain; i++) slot[i] = -1;
        while (y1 < rm.aout && y1 - y0 < lb_rows - in_rows - 4) { /* grow the batch while its rows fit */
            int64_t add = 0;
            for (int64_t j = 0; j < J; j++) {
                int64_t s = rm.src[j * rm.aout + y1];
                if (s >= 0 && slot[s] < 0) add++;
            }
            if (used + add > lc_rows) break;
            for (int64_t j = 0; j < J; j++) {
                int64_t s = rm.src[j * rm.aout + y1];
                if (s >= 0 && slot[s] < 0) slot[s] = used++;
            }
            y1++;
        }
        if (y1 == y0) die("node '%s': a row past the L2BM", n->name);
        up(e, slot, J * rm.ain, rm.ain);
        for (int64_t ya = y0; ya < y1; ya++) /* the output rows after the input's in the L1BM */
            for (int64_t j = 0; j < (everywhere ? 1 : J); j++)
                if (rm.src[j * rm.aout + ya] >= 0)
                    down(e, everywhere, j, slot[rm.src[j * rm.aout + ya]], ROW * (in_rows + ya - y0));
        buf_printf(e->b, "nop/2\n");
        for (int64_t ya = y0; ya < y1; ya += 4) /* distribute: 4 rows a step (past y1, rows the next */
            buf_printf(e->b, "l1bmd $lb%lld $%s%sv%s\n", (long long)(ROW * (in_rows + ya - y0)), /* batch rewrites) */
                       emit_bank_reg(y), emit_at(e, y, ya, Y), emit_tail_mask(y->num_lw, ya));
        buf_printf(e->b, "nop/2\n");
        y0 = y1;
    }
    free(slot);
    map_free(&rm);
}

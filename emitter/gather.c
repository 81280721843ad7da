/* Code Emit's gathers (emit.c drives them): data that moves between the PEs of an L1B
 * (a layout switch, Transpose, Concat, Slice, Pad, im2col, a reshape that changes PEs).
 * Every PE hands its long words of the sources to the L1BM, the L1BM broadcasts them
 * into a scratch range of every PE's LM0, and each PE picks its words out of the
 * scratch by T-indirect through an index table, a parameter different per PE. This file
 * decides where scratch and table go among the resident LM values, which source blocks a
 * scratch holds (the scratch map), and builds the tables; window.c reuses all three. */
#include "emit.h"
#include "emit_impl.h"
#include "app.h"
#include "layout.h"
#include "memo.h"
#include "ops.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- gathers: data that moves between the PEs of an L1B ----
 *
 * Every PE of the L1B hands its long words of the source to the L1BM (a combine), the
 * L1BM broadcasts all of them into a scratch range of every PE's LM0, and each PE picks
 * its destination words out of the scratch with T-indirect reads, 4 words a step, the
 * offsets coming from an index table (a parameter, one per node, different per PE).
 * The source must be replicated on every L1B and L2B (each L1B then holds all of it);
 * scratch and table need free LM at that point of the schedule. A node that only moves
 * data takes into the scratch only the blocks its outputs read (need_node): a Gather of
 * one row reads that row's blocks, not the whole input. */

/* the long-word ranges of the values resident in LM bank b, by address, into iv (room
 * for w->n of them); how many */
static int lm_busy(const MNGraph *g, const Walk *w, int b, int64_t (*iv)[2]) {
    for (int i = 0; i < w->nord[b]; i++) { /* kept sorted by the walk */
        const MNValue *x = g->values[w->ord[b][i]];
        iv[i][0] = x->addr;
        iv[i][1] = x->addr + (x->num_lw + 3) / 4 * 4;
    }
    return w->nord[b];
}

static int64_t lm_gap(int64_t (*iv)[2], int n, int64_t size, int64_t cap) {
    int64_t at = 0;
    for (int k = 0; k < n; k++) {
        if (iv[k][0] - at >= size) return at;
        if (iv[k][1] > at) at = iv[k][1];
    }
    return cap - at >= size ? at : -1;
}

int64_t emit_round4(int64_t x) { return (x + 3) / 4 * 4; }

bool emit_in_lm(const MNValue *v) { return v && (v->loc == MN_LOC_LM0 || v->loc == MN_LOC_LM1); }

int64_t emit_table_lw(const MNValue *o, int rows) { return (int64_t)rows * 2 * emit_round4(o->num_lw); }

/* Where each source element sits in a scratch. The L1BM, after every PE of an L1B handed
 * it its long words (a combine), holds (address a, MAB m, PE p) at P a + 4 m + p: blocks
 * of 4 long words, one per (a, m). The scratch keeps only the blocks that hold some
 * element (of the first replica: a source replicated over MABs is taken from MAB 0), in
 * the order of their (L1B, a, m). A source spread over the L1Bs of an L2B goes through
 * the L2BM first: every L1BM's 32-LW segments that hold a needed block go to the L2BM
 * (one step for all L1Bs), the L2BM back into every L1BM, and the blocks from there. */
typedef struct {
    int nsrc;
    int64_t *base; /* scratch LW of each source's first block; base[nsrc]: the pool */
    int32_t **blk; /* per source: block id (j, a, m) -> its block in the scratch, -1 */
    int64_t *nblk;
    int64_t **seg; /* per source spread over L1Bs: the L1BM segments moved, in order */
    int64_t *nseg;
    bool *cross;
    uint64_t local; /* bit k: source k read where it sits, its blocks by (a, m) on every L1B */
    bool *kimg; /* a constant the tree cannot gather: its values ride in the index table */
    int64_t *pk; /* per source: L1BM long words per address, P, or 4 for one replicated
                     * over the MABs (combined from MAB 0 only: blocks at 4 a + p) */
    int64_t P, J, M;
} SMap;

static void smap_free(SMap *s) {
    for (int k = 0; k < s->nsrc; k++) {
        free(s->blk[k]);
        free(s->seg[k]);
    }
    free(s->base);
    free(s->blk);
    free(s->nblk);
    free(s->seg);
    free(s->nseg);
    free(s->cross);
    free(s->kimg);
    free(s->pk);
}

static int64_t block_id(const SMap *s, int k, const MNValue *x, const MNPlace *p) {
    int64_t j = k < 64 && (s->local >> k & 1) ? 0 : p->c[LV_L1B];
    return (j * emit_round4(x->num_lw) + p->c[LV_ADDR]) * s->M + p->c[LV_MAB];
}

static const char *smap_source(const MNCompile *c, const MNValue *const *src, int k, uint64_t local, const MNNode *need,
                               SMap *s);

/* The node whose outputs' sources are the only blocks a scratch needs: the node being
 * walked when it only moves data (a Gather or Slice of a few rows reads a few blocks of
 * its input, not the whole: ViT's class token), else NULL (a window op reads them all). */
static const MNNode *need_node(const MNCompile *c, const Walk *w) {
    const MNNode *n = w->pos >= 0 && w->pos < c->g->nnodes ? c->g->nodes[w->pos] : NULL;
    return n && (emit_moves_data(n) || mn_op_has(n->op, MN_VIEW) || n->op == OP_MNCoreLayoutSwitch) &&
                   n->op != OP_MNCoreIm2col
               ? n
               : NULL;
}

/* NULL, or why the sources cannot share a scratch */
static const char *smap_build_walk(const MNCompile *c, const MNValue *const *src, int nsrc, uint64_t local,
                                   uint64_t kforce, const MNNode *need, SMap *s) {
    const MNMachine *m = &c->machine;
    memset(s, 0, sizeof *s);
    s->local = local;
    s->nsrc = nsrc;
    s->P = (int64_t)m->mab_per_l1b * m->pe_per_mab;
    s->J = m->l1b_per_l2b;
    s->M = m->mab_per_l1b;
    s->base = xcalloc((size_t)nsrc + 1, sizeof(int64_t));
    s->blk = xcalloc((size_t)nsrc + 1, sizeof(int32_t *));
    s->nblk = xcalloc((size_t)nsrc + 1, sizeof(int64_t));
    s->seg = xcalloc((size_t)nsrc + 1, sizeof(int64_t *));
    s->nseg = xcalloc((size_t)nsrc + 1, sizeof(int64_t));
    s->cross = xcalloc((size_t)nsrc + 1, sizeof(bool));
    s->kimg = xcalloc((size_t)nsrc + 1, sizeof(bool));
    s->pk = xcalloc((size_t)nsrc + 1, sizeof(int64_t));
    for (int k = 0; k < nsrc; k++) {
        const MNValue *x = src[k];
        const char *why = k < 64 && (kforce >> k & 1) ? "carried by the table" : smap_source(c, src, k, local, need, s);
        if (why && emit_konst_of(x) &&
            mn_dtype_bytes(x->dtype) == 4) { /* a parameter: the host writes it into the table */
            free(s->blk[k]);
            free(s->seg[k]);
            s->blk[k] = NULL;
            s->seg[k] = NULL;
            s->nblk[k] = s->nseg[k] = 0;
            s->cross[k] = false;
            s->kimg[k] = true;
            s->base[k + 1] = s->base[k];
            continue;
        }
        if (why) return why;
    }
    return NULL;
}

/* ---- the scratch map memo: a map is a function of its sources' layouts, shapes and
 * kinds and of the local and kforce choices; alike nodes share one walk of it ---- */
static void sm_put(MNBuf *b, const void *p, size_t n) { buf_append(b, p, n); }
static int64_t smap_nid(const SMap *s, const MNValue *x) { return s->J * emit_round4(x->num_lw) * s->M; }

static void smap_save(const SMap *s, const MNValue *const *src, const char *why, MNBuf *b) {
    int n1 = s->nsrc + 1;
    sm_put(b, &why, sizeof why);
    sm_put(b, &s->nsrc, sizeof s->nsrc);
    sm_put(b, &s->local, sizeof s->local);
    sm_put(b, &s->P, 8);
    sm_put(b, &s->J, 8);
    sm_put(b, &s->M, 8);
    sm_put(b, s->base, 8 * (size_t)n1);
    sm_put(b, s->nblk, 8 * (size_t)n1);
    sm_put(b, s->nseg, 8 * (size_t)n1);
    sm_put(b, s->pk, 8 * (size_t)n1);
    sm_put(b, s->cross, (size_t)n1);
    sm_put(b, s->kimg, (size_t)n1);
    for (int k = 0; k < s->nsrc; k++) {
        uint8_t has[2] = {s->blk[k] != NULL, s->seg[k] != NULL};
        sm_put(b, has, 2);
        if (has[0]) sm_put(b, s->blk[k], sizeof(int32_t) * (size_t)smap_nid(s, src[k]));
        if (has[1]) sm_put(b, s->seg[k], sizeof(int64_t) * (size_t)s->nseg[k]);
    }
}

static const char *smap_load(const uint8_t *p, size_t len, const MNValue *const *src, int nsrc, SMap *s) {
    const uint8_t *end = p + len;
    const char *why;
    memset(s, 0, sizeof *s);
    bool ok = memo_take(&p, end, &why, sizeof why) && memo_take(&p, end, &s->nsrc, sizeof s->nsrc) && s->nsrc == nsrc &&
              memo_take(&p, end, &s->local, sizeof s->local) && memo_take(&p, end, &s->P, 8) &&
              memo_take(&p, end, &s->J, 8) && memo_take(&p, end, &s->M, 8);
    if (!ok) die("scratch map memo: a bad record");
    size_t n1 = (size_t)nsrc + 1;
    s->base = xmalloc(8 * n1);
    s->nblk = xmalloc(8 * n1);
    s->nseg = xmalloc(8 * n1);
    s->pk = xmalloc(8 * n1);
    s->cross = xmalloc(n1);
    s->kimg = xmalloc(n1);
    s->blk = xcalloc(n1, sizeof(int32_t *));
    s->seg = xcalloc(n1, sizeof(int64_t *));
    ok = memo_take(&p, end, s->base, 8 * n1) && memo_take(&p, end, s->nblk, 8 * n1) &&
         memo_take(&p, end, s->nseg, 8 * n1) && memo_take(&p, end, s->pk, 8 * n1) && memo_take(&p, end, s->cross, n1) &&
         memo_take(&p, end, s->kimg, n1);
    for (int k = 0; ok && k < nsrc; k++) {
        uint8_t has[2];
        ok = memo_take(&p, end, has, 2);
        if (ok && has[0]) {
            size_t nb = sizeof(int32_t) * (size_t)smap_nid(s, src[k]);
            s->blk[k] = xmalloc(nb ? nb : 1);
            ok = memo_take(&p, end, s->blk[k], nb);
        }
        if (ok && has[1]) {
            size_t nb = sizeof(int64_t) * (size_t)s->nseg[k];
            s->seg[k] = xmalloc(nb ? nb : 1);
            ok = memo_take(&p, end, s->seg[k], nb);
        }
    }
    if (!ok || p != end) die("scratch map memo: a bad record");
    return why;
}

static const char *smap_build(const MNCompile *c, const MNValue *const *src, int nsrc, uint64_t local, uint64_t kforce,
                              const MNNode *need, SMap *s) {
    /* Code Emit's own memo, not check_memo: shared with Node Simulation, a Split's map came
     * out wrong in emission (its key misses something in which Node Simulation's copy of the
     * node differs) */
    EmMemo *mm = c->emit_memo;
    if (!mm) return smap_build_walk(c, src, nsrc, local, kforce, need, s);
    MNBuf key = {0};
    buf_printf(&key, "smap %d %llx %llx %s", nsrc, (unsigned long long)local, (unsigned long long)kforce,
               need ? need->name : "-"); /* (a node's needs are its own) */
    for (int k = 0; k < nsrc; k++) {
        const MNValue *x = src[k];
        buf_printf(&key, "|%d %d %d %s %lld %d [", emit_in_lm(x), x->dtype, emit_konst_of(x) != NULL,
                   x->layout ? x->layout : "-", (long long)x->num_lw, x->type.rank);
        for (int d = 0; d < x->type.rank; d++) buf_printf(&key, "%s%lld", d ? "," : "", (long long)x->type.dims[d]);
        buf_printf(&key, "]");
    }
    size_t len;
    const uint8_t *got = memo_get(mm, key.data, &len);
    const char *why;
    if (got)
        why = smap_load(got, len, src, nsrc, s);
    else {
        why = smap_build_walk(c, src, nsrc, local, kforce, need, s);
        MNBuf rec = {0};
        smap_save(s, src, why, &rec);
        memo_put(mm, key.data, rec.data, rec.len);
        buf_free(&rec);
    }
    buf_free(&key);
    return why;
}

/* source k of the scratch map: its blocks, or why it cannot be gathered by the tree */
/* What source_index needs of a Slice, Pad or im2col's attributes and constant inputs,
 * read once per node: a table asks for every element (millions on a conv net) */
enum { PAD_CONSTANT, PAD_EDGE, PAD_REFLECT, PAD_WRAP };
typedef struct {
    bool ok; /* false: computed at run time, or a mode not handled */
    int ns;
    int64_t axis[LAYOUT_MAX_RANK], start[LAYOUT_MAX_RANK], step[LAYOUT_MAX_RANK]; /* Slice */
    int64_t OH, OW, KH, KW, sh, sw, dh, dw, pt, pl; /* im2col */
    int64_t pb[LAYOUT_MAX_RANK]; /* Pad */
    int mode;
    double value;
} SrcPrep;

static void src_prep(const MNNode *n, SrcPrep *sp);
static bool source_index(const MNNode *n, const SrcPrep *sp, int oi, const int64_t *idx, EmEntry *en);

/* every element of output oi of data-movement node n with its source (visit: false stops
 * the walk); false when one's source is not known at compile time or visit stopped it */
static bool each_source(const MNNode *n, int oi, bool (*visit)(void *ctx, const int64_t *oidx, const EmEntry *en),
                        void *ctx) {
    const MNValue *o = n->out[oi];
    SrcPrep sp;
    src_prep(n, &sp);
    int r = o->type.rank;
    int64_t idx[LAYOUT_MAX_RANK] = {0}, ne = ir_shape_numel(&o->type);
    for (int64_t e = 0; e < ne; e++) {
        int64_t q = e;
        for (int d = r - 1; d >= 0; d--) idx[d] = q % o->type.dims[d], q /= o->type.dims[d];
        EmEntry en;
        if (!source_index(n, &sp, oi, idx, &en) || !visit(ctx, idx, &en)) return false;
    }
    return true;
}

typedef struct {
    SMap *s;
    int k;
    const MNValue *x;
    const MNLayout *ls;
} NeedCtx;

static bool need_visit(void *ctx, const int64_t *oidx, const EmEntry *en) {
    NeedCtx *nc = ctx;
    (void)oidx;
    if (en->src != nc->k) return true;
    MNPlace p;
    layout_place(nc->ls, en->sidx, &p);
    nc->s->blk[nc->k][block_id(nc->s, nc->k, nc->x, &p)] = 0;
    return true;
}

/* mark, in s->blk[k], the blocks of source k that node n's outputs read; false when some
 * element's source is not known here (then every block is marked) */
static bool mark_needed(const MNNode *n, int k, const MNValue *x, const MNLayout *ls, SMap *s) {
    NeedCtx nc = {s, k, x, ls};
    for (int oi = 0; oi < n->nout; oi++)
        if (n->out[oi] && (!oi || n->out[oi]->nuses) && !each_source(n, oi, need_visit, &nc)) return false;
    return true;
}

/* does every element that node n's outputs take from source k lie on the output's own L2B?
 * (each L2B then gathers from its own L1BMs through its L2BM, alike on every L2B) */
typedef struct {
    const MNLayout *ls, *lo;
    int k;
    bool ok;
} L2bCtx;

static bool l2b_visit(void *ctx, const int64_t *oidx, const EmEntry *en) {
    L2bCtx *lc = ctx;
    if (en->src != lc->k) return true;
    MNPlace pi, po;
    layout_place(lc->ls, en->sidx, &pi);
    layout_place(lc->lo, oidx, &po);
    lc->ok = pi.c[LV_L2B] == po.c[LV_L2B];
    return lc->ok;
}

static bool same_l2b(const MNNode *n, int k, const MNLayout *ls) {
    for (int oi = 0; oi < n->nout; oi++) {
        MNLayout lo;
        if (!n->out[oi] || (oi && !n->out[oi]->nuses)) continue;
        if (!layout_get(n->out[oi], &lo) || (lo.bcast & (1u << LV_L2B))) return false;
        L2bCtx lc = {ls, &lo, k, true};
        if (!each_source(n, oi, l2b_visit, &lc) || !lc.ok) return false;
    }
    return true;
}

static const char *smap_source(const MNCompile *c, const MNValue *const *src, int k, uint64_t local, const MNNode *need,
                               SMap *s) {
    const MNMachine *m = &c->machine;
    {
        const MNValue *x = src[k];
        MNLayout ls;
        if (!emit_in_lm(x)) return "not in LM";
        if (mn_dtype_bytes(x->dtype) != 4 && mn_dtype_bytes(x->dtype) != 8)
            return "a gather of other than 32- or 64-bit elements";
        if (!layout_get(x, &ls) || layout_timed(x)) return "no layout";
        bool here = k < 64 && (local >> k & 1);
        if (!here && !(ls.bcast & (1u << LV_L2B)) && !(need && same_l2b(need, k, &ls)))
            return "data moving between L2Bs";
        int64_t ns4 = emit_round4(x->num_lw), nid = s->J * ns4 * s->M;
        int64_t P = s->pk[k] = (ls.bcast & (1u << LV_MAB)) ? 4 : s->P;
        if (P * ns4 > m->l1bm_lw) return "a gather larger than the L1BM";
        s->cross[k] = !here && !(ls.bcast & (1u << LV_L1B));
        s->blk[k] = xmalloc(sizeof(int32_t) * (size_t)nid);
        for (int64_t i = 0; i < nid; i++) s->blk[k][i] = -1;
        int64_t n = ir_shape_numel(&x->type);
        if (!need || !mark_needed(need, k, x, &ls, s)) {
            MNPlaceWalk pw; /* every element's place, in row-major order, without a division each */
            place_walk_start(&pw, &ls);
            for (int64_t e = 0; e < n; e++, place_walk_next(&pw)) s->blk[k][block_id(s, k, x, &pw.p)] = 0;
        }
        bool *segs = s->cross[k] ? xcalloc((size_t)(P * ns4 / 32 + 1), 1) : NULL;
        for (int64_t i = 0; i < nid; i++) /* scratch order: (L1B, a, m) */
            if (s->blk[k][i] >= 0) {
                s->blk[k][i] = (int32_t)s->nblk[k]++;
                if (segs) segs[(P * (i / s->M % ns4) + 4 * (i % s->M)) / 32] = true;
            }
        if (segs) {
            s->seg[k] = xmalloc(sizeof(int64_t) * (size_t)(P * ns4 / 32 + 1));
            for (int64_t g = 0; g <= P * ns4 / 32; g++)
                if (segs[g]) s->seg[k][s->nseg[k]++] = g;
            free(segs);
            if (P * ns4 + 32 * s->J * s->nseg[k] > m->l1bm_lw || 32 * s->J * s->nseg[k] > m->l2bm_lw)
                return "a gather larger than the L1BM";
        }
        s->base[k + 1] = s->base[k] + 4 * s->nblk[k];
    }
    return NULL;
}

/* The scratch map of these sources for the emission: built once for a node's tables and
 * its fill (a node may have several outputs and table windows), kept until other
 * sources come. */
typedef struct {
    SMap m;
    const MNValue **src;
    int nsrc;
    uint64_t kforce;
    const MNNode *need;
} SMapCache;

static const SMap *smap_for(Em *e, const MNValue *const *src, int nsrc, const Walk *w) {
    SMapCache *k = e->smap;
    uint64_t local = w->local[w->pos], kforce = w->kforce[w->pos];
    const MNNode *need = need_node(e->c, w);
    if (k && k->nsrc == nsrc && k->m.local == local && k->kforce == kforce && k->need == need &&
        !memcmp(k->src, src, sizeof(MNValue *) * (size_t)nsrc))
        return &k->m;
    if (k) {
        smap_free(&k->m);
        free(k->src);
    } else
        k = e->smap = xcalloc(1, sizeof *k);
    k->kforce = kforce;
    k->need = need;
    if (smap_build(e->c, src, nsrc, local, kforce, need, &k->m)) die("a scratch that was planned cannot be built");
    k->src = xmalloc(sizeof(MNValue *) * (size_t)(nsrc + 1));
    memcpy(k->src, src, sizeof(MNValue *) * (size_t)nsrc);
    k->nsrc = nsrc;
    return &k->m;
}

void emit_smap_cache_free(Em *e) {
    SMapCache *k = e->smap;
    if (k) {
        smap_free(&k->m);
        free(k->src);
        free(k);
    }
    e->smap = NULL;
}

/* the scratch word of element sidx of source k; of a 64-bit element, word half (1: the
 * low word, an integer's 32-bit value) */
static int64_t smap_word(const SMap *s, const MNValue *x, const MNLayout *ls, int k, const int64_t *sidx, int half) {
    for (int d = 0; d < x->type.rank; d++)
        if (sidx[d] < 0 || sidx[d] >= x->type.dims[d])
            die("'%s': element index %lld out of range at axis %d", x->name, (long long)sidx[d], d);
    if (s->kimg[k]) die("'%s': a constant carried by the table has no scratch word", x->name);
    MNPlace p;
    layout_place(ls, sidx, &p);
    int32_t b = s->blk[k][block_id(s, k, x, &p)];
    if (b < 0) die("'%s': an element outside the scratch", x->name);
    return 2 * (s->base[k] + 4 * (int64_t)b + p.c[LV_PE]) + (mn_dtype_bytes(x->dtype) == 8 ? half : p.c[LV_W]);
}

/* the largest gap of LM (of cap LW) among the sorted busy ranges, and where it starts */
static int64_t lm_max_gap(int64_t (*iv)[2], int n, int64_t cap, int64_t *where) {
    int64_t at = 0, best = 0;
    *where = -1;
    for (int k = 0; k <= n; k++) {
        int64_t end = k < n ? iv[k][0] : cap;
        if (end - at > best) {
            best = end - at;
            *where = at;
        }
        if (k < n && iv[k][1] > at) at = iv[k][1];
    }
    return best;
}

/* Bit k set: every element of source k that an output element of the uses reads sits on
 * that element's own L1B and L2B, or is replicated over the levels where it does not.
 * Only sources spread over L1Bs or L2Bs are checked (the others are local anyway). */
/* The L1B and L2B of element idx of a value whose per-axis parts are part[axis]: a place
 * is the sum of what each axis's index adds (layout_place's digits are per axis), so an
 * entry's costs a lookup per axis instead of a division per subaxis. */
typedef struct {
    int32_t (*part[LAYOUT_MAX_RANK])[2];
    int rank;
} UpperParts;

static void upper_parts(const MNValue *x, const MNLayout *l, UpperParts *u) {
    u->rank = x->type.rank < LAYOUT_MAX_RANK ? x->type.rank : LAYOUT_MAX_RANK;
    for (int ax = 0; ax < u->rank; ax++) {
        int64_t n = x->type.dims[ax] > 0 ? x->type.dims[ax] : 1, idx[LAYOUT_MAX_RANK] = {0};
        u->part[ax] = xmalloc(sizeof *u->part[ax] * (size_t)n);
        for (int64_t i = 0; i < n; i++) {
            MNPlace p;
            idx[ax] = i;
            layout_place(l, idx, &p);
            u->part[ax][i][0] = (int32_t)p.c[LV_L1B];
            u->part[ax][i][1] = (int32_t)p.c[LV_L2B];
        }
    }
}

static void upper_parts_free(UpperParts *u) {
    for (int ax = 0; ax < u->rank; ax++) free(u->part[ax]);
    u->rank = 0;
}

static uint64_t local_sources(const MNValue *const *src, int nsrc, int rows, const EmUse *u, int nu) {
    const unsigned upper = 1u << LV_L1B | 1u << LV_L2B;
    MNLayout ls[64], lo;
    UpperParts up[64];
    uint64_t local = 0, check = 0;
    for (int k = 0; k < nsrc && k < 64; k++) {
        up[k].rank = 0;
        if (!layout_get(src[k], &ls[k])) continue;
        if ((ls[k].bcast & upper) == upper)
            local |= 1ull << k;
        else {
            check |= 1ull << k;
            upper_parts(src[k], &ls[k], &up[k]);
        }
    }
    for (int i = 0; i < nu && check; i++) {
        const MNValue *o = u[i].o;
        if (!layout_get(o, &lo)) {
            check = 0; /* as before: only the sources replicated on every L1B and L2B */
            break;
        }
        int64_t n = ir_shape_numel(&o->type);
        MNPlaceWalk ow;
        place_walk_start(&ow, &lo);
        for (int64_t e = 0; e < n && check; e++, place_walk_next(&ow)) {
            const int64_t *idx = ow.idx;
            const MNPlace pd = ow.p;
            for (int r = 0; r < rows && check; r++) {
                EmEntry en = {0};
                if (!u[i].fn(u[i].ctx, idx, r, &en) || en.src < 0 || en.src >= 64 || !(check >> en.src & 1)) continue;
                const MNLayout *l = &ls[en.src];
                const UpperParts *pp = &up[en.src];
                int64_t ps[2] = {0, 0}; /* the element's L1B and L2B */
                bool inside = true;
                for (int ax = 0; ax < pp->rank; ax++)
                    inside &= en.sidx[ax] >= 0 && en.sidx[ax] < src[en.src]->type.dims[ax];
                for (int ax = 0; ax < pp->rank && inside; ax++) {
                    ps[0] += pp->part[ax][en.sidx[ax]][0];
                    ps[1] += pp->part[ax][en.sidx[ax]][1];
                }
                if (!inside) { /* what layout_place makes of an index past the shape */
                    MNPlace q;
                    layout_place(l, en.sidx, &q);
                    ps[0] = q.c[LV_L1B];
                    ps[1] = q.c[LV_L2B];
                }
                for (int lv = LV_L1B; lv <= LV_L2B; lv++)
                    if (!(l->bcast & (1u << lv)) && ((lo.bcast & (1u << lv)) || ps[lv - LV_L1B] != pd.c[lv]))
                        check &= ~(1ull << en.src);
            }
        }
    }
    for (int k = 0; k < nsrc && k < 64; k++) upper_parts_free(&up[k]);
    return local | check;
}

static const char *place_in(const MNMachine *m, Walk *w, const MNGraph *g, int64_t (*iv)[2], int64_t (*iv1)[2],
                            int64_t need, int64_t row_lw, int rows, bool in_lm0, int64_t *scr, int64_t *tab,
                            int *tbank);

bool emit_lm0_room(const MNCompile *c, Walk *w, int64_t need, int64_t *at) {
    if (w->dry) { /* as scratch_place's: above a value whose last 4 long words the schedule placed as fewer */
        if (need + 4 > w->dry_need) w->dry_need = need + 4;
        *at = 0;
        return true;
    }
    int64_t(*iv)[2] = xmalloc(sizeof *iv * (size_t)(w->n + 1));
    int k = lm_busy(c->g, w, 0, iv);
    *at = lm_gap(iv, k, need, c->machine.lm0_lw);
    free(iv);
    return *at >= 0;
}

/* the scratch and table placed with the sources in kforce carried by the table */
static const char *scratch_place(const MNCompile *c, Walk *w, const MNValue *const *src, int nsrc, int64_t pool_lw,
                                 int64_t row_lw, int rows) {
    int64_t *scr = &w->scr[w->pos], *tab = &w->tab[w->pos];
    int *tbank = &w->tbank[w->pos];
    const MNMachine *m = &c->machine;
    SMap sm;
    const char *why = smap_build(c, src, nsrc, w->local[w->pos], w->kforce[w->pos], need_node(c, w), &sm);
    int64_t need = emit_round4(pool_lw) + sm.base[nsrc];
    bool in_lm0 = false; /* a table that carries constants is read by T-indirect: LM0 */
    for (int k = 0; k < nsrc && !why; k++) in_lm0 |= sm.kimg[k];
    smap_free(&sm);
    if (why) return why;
    int64_t(*iv)[2] = xmalloc(sizeof *iv * (size_t)(w->n + 1));
    int64_t(*iv1)[2] = xmalloc(sizeof *iv1 * (size_t)(w->n + 1));
    const char *why2 = place_in(m, w, c->g, iv, iv1, need, row_lw, rows, in_lm0, scr, tab, tbank);
    free(iv);
    free(iv1);
    return why2;
}

/* scratch_place's search, with room for every resident value in iv (LM0) and iv1 (LM1) */
static const char *place_in(const MNMachine *m, Walk *w, const MNGraph *g, int64_t (*iv)[2], int64_t (*iv1)[2],
                            int64_t need, int64_t row_lw, int rows, bool in_lm0, int64_t *scr, int64_t *tab,
                            int *tbank) {
    if (w->dry) { /* the scratch and one table row, side by side in LM0, above a value whose
                   * last group of 4 long words (busy here) the schedule placed as fewer */
        int64_t lw = need + 4 + row_lw + 3; /* lm_busy's emit_round4 of that value's end */
        if (lw > w->dry_need) w->dry_need = lw;
        *scr = *tab = 0, *tbank = 0, w->trows[w->pos] = rows;
        return NULL;
    }
    int k = lm_busy(g, w, 0, iv);
    *scr = lm_gap(iv, k, need + 4, m->lm0_lw);
    if (*scr < 0) return "no LM0 room for a gather's scratch";
    iv[k][0] = *scr;
    iv[k][1] = *scr + need + 4; /* the table elsewhere */
    for (int j = k; j > 0 && iv[j - 1][0] > iv[j][0]; j--) {
        int64_t t0 = iv[j][0], t1 = iv[j][1];
        iv[j][0] = iv[j - 1][0];
        iv[j][1] = iv[j - 1][1];
        iv[j - 1][0] = t0;
        iv[j - 1][1] = t1;
    }
    int k1 = lm_busy(g, w, 1, iv1);
    /* the whole table where it fits (LM1 first), else as many rows at a time as the
     * largest gap takes: the emitter then loads it window by window */
    int64_t a1, a0, g1 = lm_max_gap(iv1, k1, m->lm1_lw, &a1), g0 = lm_max_gap(iv, k + 1, m->lm0_lw, &a0);
    int64_t r1 = row_lw ? g1 / row_lw : rows, r0 = row_lw ? g0 / row_lw : rows;
    if (r1 > rows) r1 = rows;
    if (r0 > rows) r0 = rows;
    if (in_lm0) r1 = 0;
    if (r1 < 1 && r0 < 1) return "no LM room for a gather's index table";
    *tbank = r1 >= r0 ? 1 : 0, *tab = r1 >= r0 ? a1 : a0;
    w->trows[w->pos] = (int)(r1 >= r0 ? r1 : r0);
    return NULL;
}

const char *emit_scratch_plan(const MNCompile *c, Walk *w, const MNValue *const *src, int nsrc, int64_t pool_lw,
                              int64_t row_lw, int rows, const EmUse *u, int nu) {
    w->local[w->pos] = local_sources(src, nsrc, rows, u, nu);
    w->kforce[w->pos] = 0;
    const char *why = scratch_place(c, w, src, nsrc, pool_lw, row_lw, rows);
    uint64_t konst = 0; /* no room: the constants (often the largest sources) in the table instead */
    for (int k = 0; k < nsrc && k < 64; k++)
        if (emit_konst_of(src[k]) && mn_dtype_bytes(src[k]->dtype) == 4) konst |= 1ull << k;
    if (!why || !konst) return why;
    w->kforce[w->pos] = konst;
    const char *why2 = scratch_place(c, w, src, nsrc, pool_lw, row_lw, rows);
    if (why2) w->kforce[w->pos] = 0;
    return why2 ? why : NULL;
}

int64_t emit_scratch_fill(Em *e, const MNValue *const *src, int nsrc, const Walk *w, int64_t scr) {
    const SMap *sp = smap_for(e, src, nsrc, w);
    const SMap s = *sp;
    for (int k = 0; k < nsrc; k++) {
        const MNValue *x = src[k];
        if (s.kimg[k]) continue; /* in the table */
        int64_t P = s.pk[k], ns4 = emit_round4(x->num_lw), nid = s.J * ns4 * s.M, r2 = P * ns4;
        /* every PE's long words into the L1BM (of MAB 0 only for a value alike on every MAB) */
        char at[40];
        for (int64_t t = 0; t < ns4 / 4; t++)
            buf_printf(e->b, "%s $%s%sv $lb%lld\n", P == 4 ? "l1bmm@0" : "l1bmd", emit_bank_reg(x),
                       emit_at(e, x, 4 * t, at), (long long)(t * 4 * P));
        buf_printf(e->b, "nop/3\n");
        /* the needed segments of every L1BM through the L2BM into every L1BM, after the combine's range */
        if (s.cross[k]) {
            for (int64_t g = 0; g < s.nseg[k]; g++)
                buf_printf(e->b, "l2bmd $lb%lld $lc%lld\n", (long long)(32 * s.seg[k][g]), (long long)(32 * s.J * g));
            buf_printf(e->b, "nop/4\n");
            for (int64_t u = 0; u < 32 * s.J * s.nseg[k]; u += 64)
                buf_printf(e->b, "l2bmb $lc%lld $lb%lld\n", (long long)u, (long long)(r2 + u));
            buf_printf(e->b, "nop/3\n");
        }
        for (int64_t i = 0; i < nid; i++) { /* the blocks into every PE's scratch */
            int32_t b = s.blk[k][i];
            if (b < 0) continue;
            int64_t j = i / (ns4 * s.M), off = P * (i / s.M % ns4) + 4 * (i % s.M), from = off;
            if (s.cross[k]) {
                int64_t g = 0;
                while (s.seg[k][g] != off / 32) g++;
                from = r2 + 32 * s.J * g + 32 * j + off % 32;
            }
            buf_printf(e->b, "l1bmp $lb%lld $lm%lldv\n", (long long)from, (long long)(2 * (scr + s.base[k] + 4 * b)));
        }
        buf_printf(e->b, "nop/3\n");
    }
    return s.base[nsrc];
}

void emit_scratch_pool(Em *e, int64_t scr, int64_t at, const double *pool, int npool, bool integer) {
    /* staged in GRF1 from LW 0 ("imm" may not touch LM0 in its step), 4 LW a step into LM0 */
    for (int j = 0; j < npool; j++)
        if (integer)
            buf_printf(e->b, "imm i\"%lld\" $ls%d\n", (long long)pool[j], 2 * j);
        else
            buf_printf(e->b, "imm f\"%.9g\" $ls%d\n", pool[j], 2 * j);
    if (!npool) return;
    buf_printf(e->b, "nop\n");
    for (int j = 0; j < npool; j += 4)
        buf_printf(e->b, "lpassa $ls%dv $lm%lldv\n", 2 * j, (long long)(2 * (scr + at + j)));
    buf_printf(e->b, "nop/3\n");
}

/* the inputs a gather reads: every input of a Concat, else input 0 */
static int gather_sources(const MNNode *n) { return n->op == OP_Concat ? n->nin : 1; }

typedef struct {
    const MNNode *n;
    int oi;
    SrcPrep sp;
} GatherCtx;

static void gather_ctx(GatherCtx *g, const MNNode *n, int oi) {
    g->n = n;
    g->oi = oi;
    src_prep(n, &g->sp);
}

static bool gather_entry(const void *ctx, const int64_t *idx, int row, EmEntry *en) {
    const GatherCtx *g = ctx;
    (void)row;
    return source_index(g->n, &g->sp, g->oi, idx, en);
}

/* Can n be a gather here? On success the walk records its scratch and table for the
 * emission (which runs the same walk again). */
static const char *gather_why(const MNCompile *c, const MNNode *n, Walk *w) {
    for (int k = 0; k < gather_sources(n); k++)
        if (n->in[k] && n->in[k]->dtype != n->out[0]->dtype) return "a gather that changes dtype";
    int64_t tlw = 0;
    EmUse u[8];
    GatherCtx gc[8];
    int nu = 0;
    for (int k = 0; k < n->nout; k++) {
        const MNValue *o = n->out[k];
        if (k > 0 && (!o || !o->nuses)) continue;
        if (k >= 8 || !emit_in_lm(o) || o->dtype != n->in[0]->dtype) return "not in LM";
        if (emit_table_lw(o, 1) > tlw) tlw = emit_table_lw(o, 1);
        gather_ctx(&gc[nu], n, k);
        u[nu] = (EmUse){o, gather_entry, &gc[nu]};
        nu++;
    }
    return emit_scratch_plan(c, w, (const MNValue *const *)n->in, gather_sources(n), 4, tlw, 1, u, nu);
}

const MNTensor *emit_konst_of(const MNValue *v) {
    if (!v) return NULL;
    if (v->konst) return v->konst;
    return v->producer && v->producer->op == OP_MNCoreDownload ? v->producer->in[0]->konst : NULL;
}

/* the integers of a constant input (or attribute, before the opset moved it to an input) */
int emit_node_ints(const MNNode *n, int k, const char *attr, int64_t *v, int cap) {
    if (k < n->nin && n->in[k]) {
        const MNTensor *t = emit_konst_of(n->in[k]);
        if (!t || t->numel > cap) return -1;
        for (int64_t i = 0; i < t->numel; i++) v[i] = ir_tensor_get_i(t, i);
        return (int)t->numel;
    }
    const MNAttr *a = attr ? ir_attr(n, attr) : NULL;
    if (!a) return 0;
    if (a->n > cap) return -1;
    for (int i = 0; i < a->n; i++) v[i] = a->ints[i];
    return a->n;
}

/* Pad's constant value (its input 2, or the attribute before opset 11); false when it
 * is computed at run time */
static bool pad_value(const MNNode *n, double *v) {
    const MNTensor *cv = n->nin > 2 && n->in[2] ? emit_konst_of(n->in[2]) : NULL;
    if (n->nin > 2 && n->in[2] && !cv) return false;
    *v = cv && cv->numel ? ir_tensor_get_f(cv, 0) : ir_attr_float(n, "value", 0);
    return true;
}

/* Pad: the padding before each axis, or false */
static bool pad_begin(const MNNode *n, int64_t *pb) {
    int r = n->in[0]->type.rank;
    int64_t p[2 * LAYOUT_MAX_RANK], ax[LAYOUT_MAX_RANK];
    int np = emit_node_ints(n, 1, "pads", p, 2 * LAYOUT_MAX_RANK),
        na = n->nin > 3 && n->in[3] ? emit_node_ints(n, 3, NULL, ax, LAYOUT_MAX_RANK) : r;
    if (np < 0 || na < 0 || np != 2 * na) return false;
    for (int d = 0; d < r; d++) pb[d] = 0;
    for (int i = 0; i < na; i++) {
        int64_t a = n->nin > 3 && n->in[3] ? ax[i] : i;
        if (a < 0) a += r;
        if (a < 0 || a >= r) return false;
        pb[a] = p[i];
    }
    return true;
}

int emit_slice_params(const MNNode *n, int64_t *axis, int64_t *start, int64_t *step) {
    const MNValue *x = n->in[0];
    int q = x ? x->type.rank : 0;
    int64_t st[LAYOUT_MAX_RANK], en_[LAYOUT_MAX_RANK], ax[LAYOUT_MAX_RANK], sp[LAYOUT_MAX_RANK];
    bool inputs = n->nin > 1;
    int ns = emit_node_ints(n, inputs ? 1 : 99, "starts", st, LAYOUT_MAX_RANK),
        ne = emit_node_ints(n, inputs ? 2 : 99, "ends", en_, LAYOUT_MAX_RANK);
    int na = emit_node_ints(n, inputs ? 3 : 99, "axes", ax, LAYOUT_MAX_RANK),
        nsp = inputs ? emit_node_ints(n, 4, NULL, sp, LAYOUT_MAX_RANK) : 0;
    if (!x || ns < 0 || ne != ns || na < 0 || nsp < 0 || (na && na != ns) || (nsp && nsp != ns)) return -1;
    for (int i = 0; i < ns; i++) {
        int64_t a = na ? ax[i] : i, k = nsp ? sp[i] : 1;
        if (a < 0) a += q;
        if (a < 0 || a >= q || k == 0) return -1;
        int64_t dim = x->type.dims[a], s0 = st[i] < 0 ? st[i] + dim : st[i];
        s0 = k > 0 ? (s0 < 0 ? 0 : s0 > dim ? dim : s0) : (s0 < 0 ? 0 : s0 > dim - 1 ? dim - 1 : s0);
        axis[i] = a;
        start[i] = s0;
        step[i] = k;
    }
    return ns;
}

/* The source element of output oi's element idx of a data-movement node n: an element
 * of input en->src, or a constant (a Pad's value). False: not known at compile time. */
static void src_prep(const MNNode *n, SrcPrep *sp) {
    memset(sp, 0, sizeof *sp);
    const MNValue *x = n->in[0];
    int q = x ? x->type.rank : 0;
    if (n->op == OP_Slice) { /* ONNX's clamping of the start, once */
        int ns = emit_slice_params(n, sp->axis, sp->start, sp->step);
        if (ns < 0) return;
        sp->ns = ns;
        sp->ok = true;
    } else if (n->op == OP_MNCoreIm2col) {
        const MNAttr *ks = ir_attr(n, "kernel_shape"), *st = ir_attr(n, "strides"), *dl = ir_attr(n, "dilations"),
                     *pd = ir_attr(n, "pads"), *os = ir_attr(n, "out_shape");
        if (!ks || !st || !dl || !pd || !os || ks->n != 2 || st->n != 2 || dl->n != 2 || pd->n != 4 || os->n != 3 ||
            q != 4)
            return;
        sp->OH = os->ints[1];
        sp->OW = os->ints[2];
        sp->KH = ks->ints[0];
        sp->KW = ks->ints[1];
        sp->sh = st->ints[0];
        sp->sw = st->ints[1];
        sp->dh = dl->ints[0];
        sp->dw = dl->ints[1];
        sp->pt = pd->ints[0];
        sp->pl = pd->ints[1];
        sp->ok = true;
    } else if (n->op == OP_Pad) {
        if (!pad_begin(n, sp->pb)) return;
        const char *mode = ir_attr_string(n, "mode", "constant");
        if (!strcmp(mode, "edge"))
            sp->mode = PAD_EDGE;
        else if (!strcmp(mode, "reflect"))
            sp->mode = PAD_REFLECT;
        else if (!strcmp(mode, "wrap"))
            sp->mode = PAD_WRAP;
        else if (!strcmp(mode, "constant")) {
            sp->mode = PAD_CONSTANT;
            if (!pad_value(n, &sp->value)) /* a value computed at run time: fine only if no element is padding */
                for (int d = 0; d < q && n->out[0]; d++)
                    if (sp->pb[d] > 0 || n->out[0]->type.dims[d] - 1 - sp->pb[d] >= x->type.dims[d]) return;
        } else
            return;
        sp->ok = true;
    }
}

static bool source_index(const MNNode *n, const SrcPrep *sp, int oi, const int64_t *idx, EmEntry *en) {
    const MNValue *x = n->in[0], *o = n->out[oi];
    int r = o->type.rank, q = x->type.rank;
    int64_t *sidx = en->sidx;
    en->src = 0;
    switch (n->op) {
    case OP_Concat: { /* the input whose range along the axis holds the index */
        int ax = (int)ir_attr_int(n, "axis", 0);
        if (ax < 0) ax += r;
        int64_t at = idx[ax];
        for (int k = 0; k < n->nin; k++) {
            if (at < n->in[k]->type.dims[ax]) {
                memcpy(sidx, idx, sizeof(int64_t) * (size_t)r);
                sidx[ax] = at;
                en->src = k;
                return true;
            }
            at -= n->in[k]->type.dims[ax];
        }
        return false;
    }
    case OP_Split: { /* the outputs before this one along the axis */
        int ax = (int)ir_attr_int(n, "axis", 0);
        if (ax < 0) ax += r;
        memcpy(sidx, idx, sizeof(int64_t) * (size_t)r);
        for (int k = 0; k < oi; k++) {
            if (!n->out[k]) return false;
            sidx[ax] += n->out[k]->type.dims[ax];
        }
        return true;
    }
    case OP_Slice: /* start + i step */
        if (!sp->ok) return false;
        memcpy(sidx, idx, sizeof(int64_t) * (size_t)r);
        for (int i = 0; i < sp->ns; i++) sidx[sp->axis[i]] = sp->start[i] + idx[sp->axis[i]] * sp->step[i];
        return true;
    case OP_MNCoreIm2col: {
        /* row (n, oh, ow), column (c, kh, kw): X[n, c, oh sh + kh dh - pt, ow sw + kw dw - pl], 0 off the image */
        if (!sp->ok) return false;
        int64_t row = idx[0], col = idx[1];
        if (col >= x->type.dims[1] * sp->KH * sp->KW) { /* the zero columns up to a multiple of 8 */
            en->src = -1;
            en->k = 0;
            return true;
        }
        int64_t ih = row / sp->OW % sp->OH * sp->sh + col / sp->KW % sp->KH * sp->dh - sp->pt;
        int64_t iw = row % sp->OW * sp->sw + col % sp->KW * sp->dw - sp->pl;
        if (ih < 0 || ih >= x->type.dims[2] || iw < 0 || iw >= x->type.dims[3]) {
            en->src = -1;
            en->k = 0;
            return true;
        }
        sidx[0] = row / (sp->OW * sp->OH);
        sidx[1] = col / (sp->KW * sp->KH);
        sidx[2] = ih;
        sidx[3] = iw;
        return true;
    }
    case OP_Pad:
        if (!sp->ok) return false;
        for (int d = 0; d < q; d++) {
            int64_t p = idx[d] - sp->pb[d], dim = x->type.dims[d];
            if (p >= 0 && p < dim) {
                sidx[d] = p;
                continue;
            }
            if (sp->mode == PAD_EDGE)
                sidx[d] = p < 0 ? 0 : dim - 1;
            else if (sp->mode == PAD_REFLECT && dim == 1)
                sidx[d] = 0;
            else if (sp->mode == PAD_REFLECT) {
                int64_t per = 2 * (dim - 1), m = ((p % per) + per) % per;
                sidx[d] = m < dim ? m : per - m;
            } else if (sp->mode == PAD_WRAP)
                sidx[d] = ((p % dim) + dim) % dim;
            else {
                en->src = -1;
                en->k = sp->value;
                return true;
            }
        }
        return true;
    case OP_DepthToSpace:
    case OP_SpaceToDepth: { /* NCHW, blocks of b x b */
        int64_t b = ir_attr_int(n, "blocksize", 1);
        sidx[0] = idx[0];
        if (n->op == OP_DepthToSpace) {
            int64_t c = o->type.dims[1], bh = idx[2] % b, bw = idx[3] % b;
            sidx[1] = strcmp(ir_attr_string(n, "mode", "DCR"), "CRD") ? (bh * b + bw) * c + idx[1]
                                                                      : idx[1] * b * b + bh * b + bw;
            sidx[2] = idx[2] / b;
            sidx[3] = idx[3] / b;
        } else {
            int64_t c = x->type.dims[1], blk = idx[1] / c;
            sidx[1] = idx[1] % c;
            sidx[2] = idx[2] * b + blk / b;
            sidx[3] = idx[3] * b + blk % b;
        }
        return true;
    }
    case OP_MNCoreLayoutSwitch: memcpy(sidx, idx, sizeof(int64_t) * (size_t)r); return true;
    case OP_Transpose: { /* output axis d is input axis perm[d] (reversed without perm) */
        const MNAttr *perm = ir_attr(n, "perm");
        for (int d = 0; d < r; d++) sidx[perm && perm->n == r ? perm->ints[d] : r - 1 - d] = idx[d];
        return true;
    }
    case OP_Expand: /* from the right; a dimension of 1 is repeated */
        for (int d = 0; d < q; d++) sidx[d] = x->type.dims[d] == 1 ? 0 : idx[d + r - q];
        return true;
    case OP_Tile:
        for (int d = 0; d < q; d++) sidx[d] = idx[d] % x->type.dims[d];
        return true;
    case OP_Gather: { /* out = data[:axis] + indices + data[axis+1:] */
        const MNValue *iv = n->in[1];
        const MNTensor *kt = emit_konst_of(iv);
        if (!kt) return false;
        int ax = (int)ir_attr_int(n, "axis", 0), ri = iv->type.rank;
        if (ax < 0) ax += q;
        int64_t flat = 0;
        for (int d = 0; d < ri; d++) flat = flat * iv->type.dims[d] + idx[ax + d];
        int64_t j = (int64_t)ir_tensor_get_f(kt, flat);
        if (j < 0) j += x->type.dims[ax];
        if (j < 0 || j >= x->type.dims[ax]) return false;
        for (int d = 0; d < ax; d++) sidx[d] = idx[d];
        sidx[ax] = j;
        for (int d = ax + 1; d < q; d++) sidx[d] = idx[d + ri - 1];
        return true;
    }
    default: { /* renames: the same element in row-major order */
        int64_t lin = 0;
        for (int d = 0; d < r; d++) lin = lin * o->type.dims[d] + idx[d];
        for (int d = q - 1; d >= 0; d--) sidx[d] = lin % x->type.dims[d], lin /= x->type.dims[d];
        return true;
    }
    }
}

typedef struct {
    bool (*visit)(void *ctx, const int64_t *oidx, const EmEntry *en);
    void *ctx;
} FirstCtx;

static bool first_visit(void *ctx, const int64_t *oidx, const EmEntry *en) {
    const FirstCtx *f = ctx;
    return en->src == 0 && f->visit(f->ctx, oidx, en);
}

bool emit_move_sources(const MNNode *n, bool (*visit)(void *ctx, const int64_t *oidx, const EmEntry *en), void *ctx) {
    FirstCtx f = {visit, ctx};
    return each_source(n, 0, first_visit, &f);
}

static bool any_visit(void *ctx, const int64_t *oidx, const EmEntry *en) {
    const FirstCtx *f = ctx;
    return en->src >= 0 && f->visit(f->ctx, oidx, en);
}

bool emit_move_all_sources(const MNNode *n, bool (*visit)(void *ctx, const int64_t *oidx, const EmEntry *en),
                           void *ctx) {
    FirstCtx f = {visit, ctx};
    return each_source(n, 0, any_visit, &f);
}

/* a node that only moves data, emitted as a gather */
bool emit_moves_data(const MNNode *n) { return mn_op_has(n->op, MN_GATHER); }

/* four independent lanes of 64 bits: one lane's multiply chain ran at a fraction of
 * memory speed, and tables reach megabytes (only equal hashes are compared in full) */
static uint64_t table_hash(const int32_t *d, int64_t n, const char *layout) {
    uint64_t h[4] = {0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull, 0x27d4eb2f165667c5ull};
    for (const char *p = layout; *p; p++) h[0] = (h[0] ^ (uint8_t)*p) * 0x100000001b3ull;
    const uint64_t M = 0x9fb21c651e98df25ull;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 4; k++) {
            uint64_t w;
            memcpy(&w, d + i + 2 * k, 8);
            h[k] = (h[k] ^ w) * M;
            h[k] ^= h[k] >> 31;
        }
    for (; i < n; i++) h[0] = (h[0] ^ (uint32_t)d[i]) * M, h[0] ^= h[0] >> 31;
    uint64_t r = (uint64_t)n;
    for (int k = 0; k < 4; k++) r = (r ^ h[k]) * M, r ^= r >> 29;
    return r;
}

/* ---- the table memo ----
 * A table is a function of what its entry function reads (the node: its op, attributes,
 * opset and every operand's type, layout, location and constant data), of the sources
 * and output it maps (their layouts), of the node's scratch and table positions and
 * scratch map choices, of the rows and of the constants pooled so far. Alike nodes (a
 * conv net's thousand layers) give the same key: the first builds the table, the rest
 * take it and the pool it leaves, without walking its entries again. */

/* a constant's data, hashed once per value (the memo keeps it by address) */
static uint64_t konst_hash(EmMemo *mm, const MNTensor *t) {
    char k[64];
    snprintf(k, sizeof k, "konst %p", (const void *)t);
    size_t len;
    const uint64_t *got = memo_get(mm, k, &len);
    if (got) return *got;
    const uint8_t *d = t->data;
    size_t nb = (size_t)t->numel * (size_t)onnx_type_size(t->elem);
    uint64_t h[4] = {1469598103934665603ull, 0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull};
    size_t i = 0;
    for (; i + 32 <= nb; i += 32)
        for (int q = 0; q < 4; q++) {
            uint64_t w;
            memcpy(&w, d + i + 8 * q, 8);
            h[q] = (h[q] ^ w) * 0x9fb21c651e98df25ull;
            h[q] ^= h[q] >> 31;
        }
    for (; i < nb; i++) h[0] = (h[0] ^ d[i]) * 1099511628211ull;
    uint64_t r = nb ^ (uint64_t)t->elem << 56;
    for (int q = 0; q < 4; q++) r = (r ^ h[q]) * 0x9fb21c651e98df25ull, r ^= r >> 29;
    memo_put(mm, k, &r, sizeof r);
    return r;
}

/* Whether a table can depend on a constant's values, not only on its shape and layout.
 * The entry functions read the data of integer constants (indices, pads, starts),
 * of one-element constants (a Pad value, an immediate operand) and of the constants
 * the table carries (kimg); a float tensor of more elements that the scratch holds
 * (a BatchNormalization's scale or mean) only ever gives addresses. Keying those by
 * shape alone lets a conv net's hundreds of BN layers share one table build. */
static bool data_keyed(const MNValue *v, const MNTensor *kt, const MNValue *const *src, int ns, const SMap *sm) {
    if (!onnx_type_is_float(kt->elem) || kt->numel <= 1) return true;
    for (int k = 0; k < ns; k++)
        if (src[k] == v && sm->kimg[k]) return true;
    return false;
}

static void value_sig(EmMemo *mm, MNBuf *b, const MNValue *v, const MNValue *const *src, int ns, const SMap *sm) {
    if (!v) {
        buf_printf(b, "|-");
        return;
    }
    buf_printf(b, "|%d %s %lld %d %d %d [", v->type.elem, v->layout ? v->layout : "-", (long long)v->num_lw, v->dtype,
               (int)v->loc, (int)v->loc_kind);
    for (int d = 0; d < v->type.rank; d++) buf_printf(b, "%s%lld", d ? "," : "", (long long)v->type.dims[d]);
    buf_printf(b, "]");
    const MNTensor *kt = emit_konst_of(v);
    if (kt && data_keyed(v, kt, src, ns, sm))
        buf_printf(b, " k%llx", (unsigned long long)konst_hash(mm, kt));
    else if (kt)
        buf_printf(b, " k");
}

/* the key, or false when the node has an attribute the key cannot spell (then no memo) */
static bool table_key(Em *e, const MNNode *n, const MNValue *o, const MNValue *const *src, int ns, const Walk *wk,
                      int row0, int rows, EmEntryFn fn, const double *pool, int npool, int pool_cap, MNBuf *b) {
    EmMemo *mm = e->c->emit_memo;
    const SMap *sm = smap_for(e, src, ns, wk);
    buf_printf(b, "table %llx %d %d %d opset %lld at %lld %lld %d local %llx kforce %llx trows %d",
               (unsigned long long)(uintptr_t)fn, row0, rows, pool_cap, (long long)e->c->g->opset,
               (long long)wk->scr[wk->pos], (long long)wk->tab[wk->pos], wk->tbank[wk->pos],
               (unsigned long long)wk->local[wk->pos], (unsigned long long)wk->kforce[wk->pos], wk->trows[wk->pos]);
    for (int i = 0; i < npool; i++) {
        uint64_t u;
        memcpy(&u, &pool[i], 8);
        buf_printf(b, " p%llx", (unsigned long long)u);
    }
    buf_printf(b, "\nop %s::%s\n", n->domain, n->op_type);
    if (!ir_attrs_key(b, n)) return false;
    buf_printf(b, "in");
    for (int k = 0; k < n->nin; k++) value_sig(mm, b, n->in[k], src, ns, sm);
    buf_printf(b, "\nout");
    for (int k = 0; k < n->nout; k++) value_sig(mm, b, n->out[k], src, ns, sm);
    int oi = 0;
    while (oi < n->nout && n->out[oi] != o) oi++;
    buf_printf(b, "\nmaps output %d", oi);
    value_sig(mm, b, o, src, ns, sm);
    for (int k = 0; k < ns; k++) value_sig(mm, b, src[k], src, ns, sm);
    return true;
}

typedef struct {
    MNValue *table;
    int npool;
    double pool[];
} TableMemo;

static MNValue *build_index_table(Em *e, const MNNode *n, const MNValue *o, const MNValue *const *src, int ns,
                                  const Walk *wk, int row0, int rows, EmEntryFn fn, const void *ctx, double *pool,
                                  int *npool, int pool_cap);

MNValue *emit_index_table(Em *e, const MNNode *n, const MNValue *o, const MNValue *const *src, int ns, const Walk *wk,
                          int row0, int rows, EmEntryFn fn, const void *ctx, double *pool, int *npool, int pool_cap) {
    EmMemo *mm = e->c->emit_memo;
    MNBuf key = {0};
    if (!mm || !table_key(e, n, o, src, ns, wk, row0, rows, fn, pool, *npool, pool_cap, &key)) {
        buf_free(&key);
        return build_index_table(e, n, o, src, ns, wk, row0, rows, fn, ctx, pool, npool, pool_cap);
    }
    size_t len;
    const TableMemo *got = memo_get(mm, key.data, &len);
    if (got) {
        if (len != sizeof *got + sizeof(double) * (size_t)got->npool || got->npool > pool_cap)
            die("table memo of %zu bytes", len);
        memcpy(pool, got->pool, sizeof(double) * (size_t)got->npool);
        *npool = got->npool;
        buf_free(&key);
        return got->table;
    }
    MNValue *t = build_index_table(e, n, o, src, ns, wk, row0, rows, fn, ctx, pool, npool, pool_cap);
    size_t sz = sizeof(TableMemo) + sizeof(double) * (size_t)*npool;
    TableMemo *tm = xmalloc(sz);
    tm->table = t;
    tm->npool = *npool;
    memcpy(tm->pool, pool, sizeof(double) * (size_t)*npool);
    memo_put(mm, key.data, tm, sz);
    free(tm);
    buf_free(&key);
    return t;
}

static MNValue *build_index_table(Em *e, const MNNode *n, const MNValue *o, const MNValue *const *src, int ns,
                                  const Walk *wk, int row0, int rows, EmEntryFn fn, const void *ctx, double *pool,
                                  int *npool, int pool_cap) {
    int64_t scr = wk->scr[wk->pos], tab = wk->tab[wk->pos];
    MNCompile *c = e->c;
    const MNMachine *m = &c->machine;
    MNLayout ld, lt;
    char err[200];
    MNLayout *ls = xmalloc(sizeof(MNLayout) * (size_t)(ns + 1));
    for (int k = 0; k < ns; k++) layout_get(src[k], &ls[k]);
    const SMap *smp = smap_for(e, src, ns, wk), sm = *smp;
    layout_get(o, &ld);
    int64_t nw = 2 * emit_round4(o->num_lw), nt = emit_table_lw(o, rows);
    /* an output alike on every L2B (and on every L1B) reads alike scratches there: one
     * table for all of them (an image an eighth or a 64th the size to encode and load) */
    bool l2 = ld.bcast & (1u << LV_L2B), alike = l2 && (ld.bcast & (1u << LV_L1B));
    int64_t dims[6] = {l2 ? 1 : m->n_l2b, alike ? 1 : m->l1b_per_l2b, m->mab_per_l1b, m->pe_per_mab, nt, 2};
    MNLevel lv[4] = {LV_L2B, LV_L1B, LV_MAB, LV_PE};
    memset(&lt, 0, sizeof lt);
    lt.rank = 5;
    for (int d = 0; d < 4; d++) {
        lt.shape[d] = dims[d];
        lt.nsub[d] = 1;
        lt.sub[d][0] = dims[d] > 1 ? (MNSubaxis){dims[d], 1, lv[d]} : (MNSubaxis){1, 1, LV_ADDR};
        if (dims[d] == 1) lt.bcast |= (uint8_t)(1u << lv[d]);
    }
    /* T-indirect reads the low word (1) of a long word: word 0 is the index too, or the
     * value of a constant the tree cannot gather, which the index then points at */
    lt.shape[4] = nt;
    lt.nsub[4] = 1;
    lt.sub[4][0] = (MNSubaxis){nt, 1, LV_ADDR};
    lt.shape[5] = 2;
    lt.nsub[5] = 1;
    lt.sub[5][0] = (MNSubaxis){2, 1, LV_W};
    lt.rank = 6;
    MNGraph *g = c->g;
    int64_t numel = dims[0] * dims[1] * dims[2] * dims[3] * dims[4] * dims[5];
    int32_t *tb = xmalloc(sizeof(int32_t) * (size_t)numel); /* into the arena only when no alike table is there */
    memset(tb, 0, sizeof(int32_t) * (size_t)numel); /* words no element lands on: 0 */
    /* Element by element (the walk gives each its place without a division), each entry
     * written on every PE of the output's broadcast levels: the places no element lands
     * on cost nothing, where a pass over every PE's words paid an inverse layout each. */
    bool w8 = mn_dtype_bytes(o->dtype) == 8; /* 64-bit: both words of a long word */
    bool both = w8 || (ld.bcast & (1u << LV_W)); /* ... as for a value on both word slots */
    const int64_t cnt[4] = {dims[3], dims[2], dims[1], dims[0]};
    const MNLevel blv[4] = {LV_PE, LV_MAB, LV_L1B, LV_L2B};
    int64_t reps = 1, ne = 1;
    for (int k = 0; k < 4; k++)
        if (ld.bcast & (1u << blv[k])) reps *= cnt[k];
    for (int d = 0; d < ld.rank; d++) ne *= ld.shape[d];
    MNPlaceWalk pw;
    place_walk_start(&pw, &ld);
    for (int64_t el = 0; el < ne; el++, place_walk_next(&pw)) {
        const MNPlace *pd = &pw.p;
        if (pd->c[LV_TIME] != 0 || pd->c[LV_W] > (w8 ? 0 : 1)) continue; /* no table word reads it */
        for (int half = 0; half < (both ? 2 : 1); half++) {
            int64_t w = 2 * pd->c[LV_ADDR] + (both ? half : pd->c[LV_W]);
            if (w / 2 >= o->num_lw) continue;
            for (int r = 0; r < rows; r++) {
                int64_t word = 0, hi = 0;
                bool carry = false; /* word 0 carries a constant */
                EmEntry en = {0};
                if (!fn(ctx, pw.idx, row0 + r, &en))
                    die("node '%s': no table entry for an element the planner accepted", n->name);
                if (en.src >= 0 && sm.kimg[en.src]) { /* the value in word 0 of this very entry, in LM0 */
                    const MNValue *x = src[en.src];
                    const MNTensor *kt = emit_konst_of(x);
                    int64_t flat = 0;
                    for (int d = 0; d < x->type.rank; d++) flat = flat * x->type.dims[d] + en.sidx[d];
                    if (wk->tbank[wk->pos] != 0) die("node '%s': a table carrying constants outside LM0", n->name);
                    word = 2 * (tab + (int64_t)r * nw + w) - 2 * scr;
                    if (word < 0) word += 2 * m->lm0_lw; /* addresses wrap around LM0 */
                    /* the bits as stored (a signalling NaN stays one, as in parameter images) */
                    if (kt->elem == ONNX_FLOAT32) {
                        int32_t bits;
                        memcpy(&bits, (const float *)kt->data + flat, sizeof bits);
                        hi = bits;
                    } else
                        hi = (int32_t)ir_tensor_get_i(kt, flat);
                    carry = true;
                } else if (en.src >= 0)
                    word = smap_word(&sm, src[en.src], &ls[en.src], en.src, en.sidx, w8 ? half : 1);
                else {
                    int j = 0;
                    while (j < *npool && memcmp(&pool[j], &en.k, sizeof en.k)) j++;
                    if (j == *npool) {
                        if (*npool >= pool_cap) die("node '%s': more than %d table constants", n->name, pool_cap);
                        pool[(*npool)++] = en.k;
                    }
                    word = 2 * (sm.base[ns] + j);
                }
                for (int64_t q = 0; q < reps; q++) {
                    int64_t c[4], rq = q;
                    for (int k = 0; k < 4; k++) {
                        c[k] = pd->c[blv[k]];
                        if (ld.bcast & (1u << blv[k])) {
                            c[k] = rq % cnt[k];
                            rq /= cnt[k];
                        }
                    }
                    int64_t at =
                        (((c[3] * dims[1] + c[2]) * dims[2] + c[1]) * dims[3] + c[0]) * 2 * nt + 2 * (r * nw + w);
                    tb[at] = (int32_t)(carry ? hi : word);
                    tb[at + 1] = (int32_t)word;
                }
            }
        }
    }
    free(ls);
    /* Nodes of one shape at one scratch position build the same table (a conv net's
     * layers: a thousand tables, four distinct). One copy serves them all: the host
     * encodes and the program loads each distinct table once. */
    MNBuf lb = {0};
    layout_print(&lt, &lb);
    uint64_t h = table_hash(tb, numel, lb.data);
    for (int i = 0; i < e->ntables; i++) {
        const MNValue *u = e->tables[i];
        if (e->table_hash[i] == h && u->konst->numel == numel && !strcmp(u->layout, lb.data) &&
            !memcmp(u->konst->data, tb, sizeof(int32_t) * (size_t)numel)) {
            buf_free(&lb);
            free(tb);
            return e->tables[i];
        }
    }
    MNTensor *t = ir_tensor_new(g->arena, ONNX_INT32, 6, dims);
    memcpy(t->data, tb, sizeof(int32_t) * (size_t)numel);
    free(tb);
    MNValue *v = ir_value_new(g, row0 ? arena_printf(g->arena, "%s_%s_gather_table_%d", n->name, o->name, row0)
                                      : arena_printf(g->arena, "%s_%s_gather_table", n->name, o->name));
    ir_type_set(g, &v->type, ONNX_INT32, 6, dims);
    v->konst = t;
    v->dtype = MN_DT_Int;
    buf_free(&lb);
    layout_set(g->arena, v, &lt);
    v->num_lw = nt;
    v->loc_kind = MN_LOC_KIND_DRAM;
    v->loc = MN_LOC_DRAM;
    AppLayoutImage im;
    app_layout_image(&lt, m, &im, err, sizeof err);
    v->addr = e->dram_top;
    e->dram_top += (im.per_group + 63) / 64 * 64;
    int nt0 = e->ntables;
    ARENA_PUSH(g->arena, e->table_hash, nt0, e->table_hash_cap, h);
    ARENA_PUSH(g->arena, e->tables, e->ntables, e->ntables_cap, v);
    return v;
}

void emit_table_load(Em *e, MNValue *tv, const Walk *w) {
    MNValue tl = *tv;
    tl.loc = w->tbank[w->pos] ? MN_LOC_LM1 : MN_LOC_LM0;
    tl.loc_kind = MN_LOC_KIND_LM;
    tl.addr = w->tab[w->pos];
    emit_transfer(e, tv, &tl, true);
}

enum { GATHER_POOL = 4 }; /* a Pad's value */

/* every output that is read: its table, then 4 destination words a step through GRF1 */
void emit_gather(Em *e, const MNNode *n, const Walk *w) {
    int64_t scr = w->scr[w->pos], tab = w->tab[w->pos];
    int tb = w->tbank[w->pos], npool = 0;
    double pool[GATHER_POOL];
    MNValue *tv[8] = {NULL};
    GatherCtx gc[8];
    for (int k = 0; k < n->nout && k < 8; k++)
        if (k == 0 || (n->out[k] && n->out[k]->nuses)) {
            gather_ctx(&gc[k], n, k);
            tv[k] = emit_index_table(e, n, n->out[k], (const MNValue *const *)n->in, gather_sources(n), w, 0, 1,
                                     gather_entry, &gc[k], pool, &npool, GATHER_POOL);
        }
    int64_t at = emit_scratch_fill(e, (const MNValue *const *)n->in, gather_sources(n), w, scr);
    emit_scratch_pool(e, scr, at, pool, npool, n->in[0]->dtype != MN_DT_Float);
    const char *tr = tb ? "ln" : "lm";
    for (int oi = 0; oi < 8; oi++) {
        if (!tv[oi]) continue;
        const MNValue *o = n->out[oi];
        int64_t nd = o->num_lw;
        emit_table_load(e, tv[oi], w);
        int64_t words = 2 * nd, batch = 2 * e->c->machine.grf1_lw / 8 * 8; /* words per GRF1 batch */
        if (batch > 128) batch = 128;
        for (int64_t w0 = 0; w0 < words; w0 += batch) {
            int64_t wn = words - w0 < batch ? words - w0 : batch;
            for (int64_t k = 0; k < wn; k += 4) {
                buf_printf(e->b, "lpassa $%s%lldv $t\nnop\n", tr, (long long)(2 * tab + 2 * (w0 + k)));
                buf_printf(e->b, "ipassa $mt%lld $s%lldv\n", (long long)(2 * scr), (long long)k);
            }
            buf_printf(e->b, "nop/2\n");
            for (int64_t a = 0; a < (wn + 1) / 2; a += 4) {
                int64_t la = w0 / 2 + a;
                char at[40];
                buf_printf(e->b, "lpassa $ls%lldv $%s%sv%s\n", (long long)(2 * a), emit_bank_reg(o),
                           emit_at(e, o, la, at), emit_tail_mask(nd, la));
            }
            buf_printf(e->b, "nop/3\n");
        }
    }
}

/* Can data-movement node n be a gather? Its parameters known, and room for its scratch
 * and table (gather_why). */
const char *emit_moves_why(const MNCompile *c, const MNNode *n, Walk *w) {
    double pv = 0; /* table constants fill both words of a long word alike: 64-bit bits of 0 only */
    if (n->op == OP_Pad && mn_dtype_bytes(n->in[0]->dtype) == 8 &&
        !strcmp(ir_attr_string(n, "mode", "constant"), "constant") && pad_value(n, &pv) && (pv != 0 || signbit(pv)))
        return "a 64-bit pad value other than 0";
    if (n->op == OP_Slice || n->op == OP_Pad || n->op == OP_Split ||
        n->op == OP_MNCoreIm2col) { /* every element's source known */
        SrcPrep sp;
        src_prep(n, &sp); /* its ok says whether source_index finds every element's */
        for (int k = 0; k < n->nout; k++) {
            if (!n->out[k]) return "an output left out";
            if (n->op != OP_Split && !sp.ok && ir_shape_numel(&n->out[k]->type) > 0)
                return "parameters computed at run time, or a mode not handled";
        }
    }
    return gather_why(c, n, w);
}

const char *emit_gather_why(const MNCompile *c, const MNNode *n, Walk *w) { return gather_why(c, n, w); }

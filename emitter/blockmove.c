/* Code Emit: data movement that moves blocks of one MAB between MABs, L1Bs, L2Bs and groups.
 *
 * A block is 16 long-word addresses of the 4 PEs of one MAB (64 LW: a row of the L1BM and
 * the L2BM), or 8 or 4 where a block of 16 would take from two (tokens whose packed
 * channels span 8 addresses, two tokens a block; a row then carries a part). Where a movement node
 * (a view, Transpose, Concat, Gather of constant indices, layout switch) keeps every
 * element's PE, word and place in its block and moves whole blocks, each
 * output block is one input block: ViT's patch embedding (each pixel's packed channels
 * from the convolution's tile to its token's MAB), the class token's Concat (every token
 * one MAB on), the Gather of the class token (one MAB's block to every MAB). rowmove.c
 * moves rows (one address on every MAB of an L1B) and cannot change a MAB; the gather
 * broadcasts its input into every PE and picks words by index tables, which across L2Bs
 * it cannot. Here each block crosses the tree once, through the levels it must:
 *
 *   stage       the blocks a batch reads, from every L1B's PEs into its L1BM, a MAB's 4
 *               addresses a step (l1bmm@M), alike on every L1B (the same MAB and addresses);
 *   up          each staged block some output block takes, from its L1B's L1BM to a slot of
 *               the L2BM (64 LW a step, l2bm@j), alike on every L2B;
 *   exchange    where a block changes L2B, or the L2Bs' maps differ: each output block's
 *               input block from its L2B's slot to the output L2B's receiving slot through
 *               the source group's PDM (two mvp; runs of consecutive slots as one);
 *   down        each output block from its slot into its L1B's L1BM (l2bm@j, or l2bmb to
 *               every L1B where the output is alike on them);
 *   distribute  each block from the L1BM to its MAB's PEs, 4 addresses a step (l1bmm under
 *               a mask of that MAB; no mask where the output is alike on every MAB).
 *
 * The output blocks pass in batches whose staged blocks and receiving slots fit the L1BM
 * and the L2BM; the PDM takes a batch's exchanged blocks. An output block no input block
 * feeds (padding) is not written.
 *
 * Cost a batch: 4 steps a block staged, 1 a block up, 1 down, 4 distributed (and a mask
 * per MAB), and the exchange's transfers, 64 LW a block over the PDM's port. */
#include "emit_impl.h"
#include "memo.h"
#include "ops.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROWLW = 64 }; /* a row of the L1BM and the L2BM: a block of 16 addresses (4 PEs) */

typedef struct {
    MNLayout lo, li[8];
    const MNValue *x[8];
    int nx;
    int64_t B; /* a block's addresses: 16, else 8 or 4 where a block of 16 would take from two */
    int64_t NL, J, M, A[8], base[8], S, Ao, Y; /* S: source slots an L1B, Y: output slots an L1B */
    bool mab_all, l1b_all;
    /* [(L2B * J + L1B) * Y + y]: the input block (L2B * J + L1B) * S + s feeding output block y, -1 */
    int64_t *src;
    bool exch;
} BlockMap;

static bool visit(void *ctx, const int64_t *oidx, const EmEntry *en) {
    BlockMap *bm = ctx;
    if (en->src < 0 || en->src >= bm->nx) return false;
    const MNLayout *li = &bm->li[en->src];
    MNPlace pi, po;
    layout_place(li, en->sidx, &pi);
    layout_place(&bm->lo, oidx, &po);
    if (pi.c[LV_PE] != po.c[LV_PE] || pi.c[LV_W] != po.c[LV_W] || pi.c[LV_TIME] || po.c[LV_TIME] ||
        pi.c[LV_ADDR] % bm->B != po.c[LV_ADDR] % bm->B)
        return false;
    const unsigned L2B = 1u << LV_L2B, L1B = 1u << LV_L1B, MAB = 1u << LV_MAB;
    /* every place of the output element (all L2Bs, L1Bs, MABs it is alike on), from the input's
     * place on the same L2B, L1B or MAB where the input is alike there and the output is not */
    int64_t l0 = (bm->lo.bcast & L2B) ? 0 : po.c[LV_L2B], l1 = (bm->lo.bcast & L2B) ? bm->NL : l0 + 1;
    int64_t j0 = bm->l1b_all ? 0 : po.c[LV_L1B], m0 = bm->mab_all ? 0 : po.c[LV_MAB];
    for (int64_t l = l0; l < l1; l++) {
        int64_t ls = (li->bcast & L2B) ? l : pi.c[LV_L2B];
        int64_t js = (li->bcast & L1B) && !bm->l1b_all ? j0 : pi.c[LV_L1B];
        int64_t ms = (li->bcast & MAB) && !bm->mab_all ? m0 : pi.c[LV_MAB];
        int64_t s = bm->base[en->src] + ms * bm->A[en->src] + pi.c[LV_ADDR] / bm->B;
        int64_t from = (ls * bm->J + js) * bm->S + s;
        int64_t at = (l * bm->J + j0) * bm->Y + (bm->mab_all ? 0 : m0 * bm->Ao) + po.c[LV_ADDR] / bm->B;
        if (bm->src[at] >= 0 && bm->src[at] != from) return false; /* an output block from two places */
        bm->src[at] = from;
    }
    return true;
}

static bool movable(const MNNode *n) {
    return n->op == OP_Transpose || mn_op_has(n->op, MN_VIEW) || n->op == OP_MNCoreLayoutSwitch || n->op == OP_Gather ||
           n->op == OP_Concat || n->op == OP_Slice;
}

static void map_free(BlockMap *bm) {
    free(bm->src);
    bm->src = NULL;
}

static bool block_map_of(const MNCompile *c, const MNNode *n, int64_t B, BlockMap *bm);

/* the block map of n, with the largest blocks that work (bm->src malloc'd on success) */
static bool block_map(const MNCompile *c, const MNNode *n, BlockMap *bm) {
    const MNMachine *m = &c->machine;
    const MNValue *y = n->nout >= 1 ? n->out[0] : NULL;
    const unsigned PW = 1u << LV_PE | 1u << LV_W;
    memset(bm, 0, sizeof *bm);
    if (!movable(n) || !y || !layout_get(y, &bm->lo) || (bm->lo.bcast & PW) || m->pe_per_mab != 4 ||
        m->mab_per_l1b * m->pe_per_mab != ROWLW || !emit_in_lm(y))
        return false;
    for (int64_t B = 16; B >= 4; B /= 2)
        if (block_map_of(c, n, B, bm)) return true;
    return false;
}

static bool block_map_of(const MNCompile *c, const MNNode *n, int64_t B, BlockMap *bm) {
    const MNMachine *m = &c->machine;
    const MNValue *y = n->out[0];
    MNLayout lo = bm->lo;
    memset(bm, 0, sizeof *bm);
    bm->lo = lo;
    bm->B = B;
    bm->nx = n->op == OP_Concat ? n->nin : 1;
    if (bm->nx > 8) return false;
    bm->NL = m->n_l2b, bm->J = m->l1b_per_l2b, bm->M = m->mab_per_l1b;
    for (int k = 0; k < bm->nx; k++) {
        const MNValue *x = n->in[k];
        if (!x || x->dtype != y->dtype || !emit_in_lm(x) || !layout_get(x, &bm->li[k])) return false;
        bm->x[k] = x;
        bm->A[k] = (x->num_lw + bm->B - 1) / bm->B;
        bm->base[k] = bm->S;
        bm->S += bm->M * bm->A[k];
    }
    bm->mab_all = bm->lo.bcast & (1u << LV_MAB);
    bm->l1b_all = bm->lo.bcast & (1u << LV_L1B);
    bm->Ao = (y->num_lw + bm->B - 1) / bm->B;
    bm->Y = (bm->mab_all ? 1 : bm->M) * bm->Ao;
    int64_t n_at = bm->NL * bm->J * bm->Y;
    bm->src = xmalloc(sizeof(int64_t) * (size_t)n_at);
    for (int64_t i = 0; i < n_at; i++) bm->src[i] = -1;
    /* the walk over every element, once for alike nodes in the compile (check_memo: it hangs on
     * the node's op, attributes, constants and its values' layouts and shapes) */
    MNBuf k = {0};
    buf_printf(&k, "blockmap|%lld|", (long long)B);
    bool keyed = c->check_memo && emit_node_key(&k, n, true), ok;
    size_t len;
    const void *got = keyed ? memo_get(c->check_memo, k.data, &len) : NULL;
    if (got) {
        if (len != 1 && len != sizeof(int64_t) * (size_t)n_at) die("block map memo of %zu bytes", len);
        ok = len != 1;
        if (ok) memcpy(bm->src, got, len);
    } else {
        ok = emit_move_all_sources(n, visit, bm);
        if (keyed)
            memo_put(c->check_memo, k.data, ok ? (const void *)bm->src : "", ok ? sizeof(int64_t) * (size_t)n_at : 1);
    }
    buf_free(&k);
    if (!ok) {
        map_free(bm);
        return false;
    }
    /* the exchange where a block changes L2B or the L2Bs' maps differ (an L2B no output
     * block of a slot lies on takes the others' block: a copy of its own input) */
    int64_t JY = bm->J * bm->Y, JS = bm->J * bm->S;
    for (int64_t i = 0; i < JY && !bm->exch; i++) {
        int64_t ref = -1;
        for (int64_t l = 0; l < bm->NL && !bm->exch; l++) {
            int64_t s = bm->src[l * JY + i];
            if (s < 0) continue;
            if (s / JS != l || (ref >= 0 && s % JS != ref)) bm->exch = true;
            ref = s % JS;
        }
    }
    return true;
}

bool emit_blockmove_take(const MNCompile *c, const MNNode *n, Walk *w) {
    BlockMap bm;
    if (!block_map(c, n, &bm)) return false;
    map_free(&bm);
    w->bmove[w->pos] = true;
    return true;
}

/* input block s (every L1B's) into L1BM row r: 4 addresses of its MAB a step */
static void stage(Em *e, const BlockMap *bm, int64_t s, int64_t r) {
    int k = 0;
    while (k + 1 < bm->nx && s >= bm->base[k + 1]) k++;
    const MNValue *x = bm->x[k];
    int64_t mab = (s - bm->base[k]) / bm->A[k], a0 = (s - bm->base[k]) % bm->A[k] * bm->B;
    char X[48];
    for (int64_t q = 0; q < bm->B && a0 + q < x->num_lw; q += 4)
        buf_printf(e->b, "l1bmm@%lld $%s%sv $lb%lld\n", (long long)mab, emit_bank_reg(x), emit_at(e, x, a0 + q, X),
                   (long long)(ROWLW * r + 4 * q));
}

void emit_mab_masks(Em *e, int64_t mab, int64_t len) {
    const char *tail = emit_tail_mask(len, len / 4 * 4);
    buf_printf(e->b, "imm i\"%lld\" $ls16v\n", (long long)mab);
    if (len % 4) buf_printf(e->b, "imm i\"-1\" $ls24v\nimm i\"%lld\" $ls24v%s\n", (long long)mab, tail);
    buf_printf(e->b, "nop\nixor $mabid $ls16v $nowrite $omr1\n");
    if (len % 4) buf_printf(e->b, "ixor $mabid $ls24v $nowrite $omr2\n");
    buf_printf(e->b, "nop\n");
}

/* L1BM row r to output block y: 4 addresses a step, under its MAB's mask */
static void distribute(Em *e, const BlockMap *bm, const MNValue *y, int64_t yb, int64_t r) {
    int64_t a0 = yb % bm->Ao * bm->B;
    char Y[48];
    for (int64_t q = 0; q < bm->B && a0 + q < y->num_lw; q += 4)
        buf_printf(e->b, "l1bmm $lb%lld $%s%sv%s\n", (long long)(ROWLW * r + 4 * q), emit_bank_reg(y),
                   emit_at(e, y, a0 + q, Y),
                   bm->mab_all              ? emit_tail_mask(y->num_lw, a0 + q)
                   : a0 + q + 4 > y->num_lw ? "/$imr2"
                                            : "/$imr1");
}

void emit_blockmove(Em *e, const MNNode *n) {
    const MNMachine *m = &e->c->machine;
    BlockMap bm;
    if (!block_map(e->c, n, &bm)) die("node '%s' moves no blocks", n->name);
    const MNValue *y = n->out[0];
    int64_t J = bm.J, NL = bm.NL, S = bm.S, Y = bm.Y, JS = J * S;
    int64_t Jo = bm.l1b_all ? 1 : J, lb_rows = m->l1bm_lw / ROWLW, lc_rows = m->l2bm_lw / ROWLW;
    int64_t *srow = xmalloc(sizeof(int64_t) * (size_t)S); /* a source block's L1BM row in the batch, -1 */
    int64_t *slot = xmalloc(sizeof(int64_t) * (size_t)JS); /* a staged block's L2BM slot, -1 */
    bool used[64] = {false};
    int64_t lastmab = -1;
    for (int64_t y0 = 0, y1; y0 < Y; y0 = y1) {
        int64_t nst = 0, nsl = 0;
        for (int64_t i = 0; i < S; i++) srow[i] = -1;
        for (int64_t i = 0; i < JS; i++) slot[i] = -1;
        /* the batch grows while its staged blocks and receiving rows fit the L1BM, and its
         * up slots and receiving slots the L2BM */
        for (y1 = y0; y1 < Y; y1++) {
            int64_t add_st = 0, add_sl = 0;
            for (int64_t l = 0; l < NL; l++)
                for (int64_t j = 0; j < Jo; j++) {
                    int64_t s = bm.src[(l * J + j) * Y + y1];
                    if (s < 0) continue;
                    if (srow[s % S] < 0) srow[s % S] = -2 - add_st++;
                    if (slot[s % JS] < 0) slot[s % JS] = -2 - add_sl++;
                }
            int64_t nb = y1 + 1 - y0;
            bool fits = nst + add_st <= lb_rows && nb <= lb_rows && nsl + add_sl + Jo * nb <= lc_rows;
            for (int64_t i = 0; i < S; i++)
                if (srow[i] < -1) srow[i] = fits ? nst + (-2 - srow[i]) : -1;
            for (int64_t i = 0; i < JS; i++)
                if (slot[i] < -1) slot[i] = fits ? nsl + (-2 - slot[i]) : -1;
            if (!fits) break;
            nst += add_st, nsl += add_sl;
        }
        if (y1 == y0) die("node '%s': a block past the L1BM or the L2BM", n->name);
        int64_t nb = y1 - y0, V = nsl;
        /* stage and up */
        for (int64_t s = 0; s < S; s++)
            if (srow[s] >= 0) stage(e, &bm, s, srow[s]);
        buf_printf(e->b, "nop/2\n");
        for (int64_t i = 0; i < JS; i++)
            if (slot[i] >= 0)
                buf_printf(e->b, "l2bm@%lld $lb%lld $lc%lld\n", (long long)(i / S), (long long)(ROWLW * srow[i % S]),
                           (long long)(ROWLW * slot[i]));
        buf_printf(e->b, "nop/3\n");
        if (bm.exch) { /* each output block's input block to its receiving slot */
            EmExchange xr = {0};
            for (int64_t l = 0; l < NL; l++)
                for (int64_t j = 0; j < Jo; j++)
                    for (int64_t yb = y0; yb < y1; yb++) {
                        int64_t s = bm.src[(l * J + j) * Y + yb];
                        if (s >= 0) emit_exchange_add(&xr, l, s / JS, slot[s % JS], V + j * nb + (yb - y0));
                    }
            emit_exchange(e, &xr, used);
        }
        /* down: each output block's row into its L1B's L1BM (from the receiving slot, or,
         * alike on every L2B and fed on its own, from the up slot) */
        for (int64_t j = 0; j < Jo; j++)
            for (int64_t yb = y0; yb < y1; yb++) {
                int64_t from = -1;
                for (int64_t l = 0; l < NL && from < 0; l++) {
                    int64_t s = bm.src[(l * J + j) * Y + yb];
                    if (s >= 0) from = bm.exch ? V + j * nb + (yb - y0) : slot[s % JS];
                }
                if (from < 0) continue;
                if (bm.l1b_all)
                    buf_printf(e->b, "l2bmb $lc%lld $lb%lld\n", (long long)(ROWLW * from),
                               (long long)(ROWLW * (yb - y0)));
                else
                    buf_printf(e->b, "l2bm@%lld $lc%lld $lb%lld\n", (long long)j, (long long)(ROWLW * from),
                               (long long)(ROWLW * (yb - y0)));
            }
        buf_printf(e->b, "nop/2\n");
        for (int64_t yb = y0; yb < y1; yb++) {
            bool any = false;
            for (int64_t i = 0; i < NL * Jo && !any; i++) any = bm.src[(i / Jo * J + i % Jo) * Y + yb] >= 0;
            if (!any) continue;
            int64_t mab = bm.mab_all ? -1 : yb / bm.Ao;
            if (mab >= 0 && mab != lastmab) emit_mab_masks(e, mab, y->num_lw), lastmab = mab;
            distribute(e, &bm, y, yb, yb - y0);
        }
        buf_printf(e->b, "nop/2\n");
    }
    free(srow), free(slot);
    map_free(&bm);
}

/* Code Emit: convolutions on tiles (the layout is planners/tile_plan.c's).
 *
 * Every MAB holds a tile of th x tw pixels of the input, all channels packed over its 4
 * PEs, and computes the tho x two pixels of the output tile at the same place. For each
 * image it builds the tile with its halos in an LM0 scratch (rows_e x cols_e pixels, zero
 * outside the image), then runs the product of the scratch's pixels by the weights
 * (emitter/matmul.c's streamed product: K block (tap, channel block) of output pixel
 * (r, c) is the scratch pixel (r sh + i dh, c sw + j dw) shifted by the halos and pads).
 *
 * Halos, in two steps so that the corners come along:
 * - columns: every PE hands its rows to the L1BM (a combine); a distribute from an offset
 *   of 4 sigma long words gives each MAB the rows of the MAB sigma tiles to its right;
 * - rows: the scratch rows next to the edge go to the L1BM, from every L1BM to the L2BM
 *   (32 long words per L1B a step), and back shifted by one L1B, so each L1B gets the
 *   rows of the tile above (or below). The L1B at the edge of an L2B gets them from the
 *   neighbouring L2B: its L1BM's copy goes through the L2BM and the PDM (mvp) to the
 *   other L2B, and from there into that L1BM.
 * Scratch pixels outside the image are set to zero by write masks from $mabid (the
 * column tile) and $l1bid, $l2bid (the row tile).
 *
 * Cost per image: the halos move about 2 (rows_e cols_e - th tw) CB long words per PE
 * through the tree; the product takes taps x CB x OCB matrix loads and tho two / 4
 * products each, as a MatMul of that size. */
#include "emit_impl.h"
#include "matmul.h"
#include "plan.h"
#include "num.h"
#include "memo.h"
#include "ops.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool emit_layout_is(const MNValue *v, const MNLayout *l) {
    MNLayout h;
    return v && layout_get(v, &h) && layout_identical(&h, l);
}

static const MNValue *bias_of(const MNNode *n) { return n->nin > 2 ? n->in[2] : NULL; }

/* node n as a tiled convolution, laid out as one */
static bool geometry(const MNCompile *c, const MNNode *n, MNTile *t) {
    MNLayout in, out, wl, bl;
    if (!plan_tile_node(n, &c->machine, t, &in, &out) || !emit_layout_is(n->in[0], &in) ||
        !emit_layout_is(n->out[0], &out))
        return false;
    if (t->kind != MN_TILE_CONV && t->kind != MN_TILE_DW) return true;
    plan_tile_weights(t, &wl);
    plan_tile_bias(t, &bl);
    return emit_layout_is(n->in[1], &wl) && (!bias_of(n) || emit_layout_is(bias_of(n), &bl));
}

bool emit_tile_node(const MNCompile *c, const MNNode *n) {
    MNTile t;
    return geometry(c, n, &t);
}

/* the product of image img: A from the scratch at scr, B the streamed weights */
static void product_plan(const MNCompile *c, const MNNode *n, const MNTile *t, int64_t img, int64_t scr, MatPlan *p) {
    memset(p, 0, sizeof *p);
    p->a = NULL;
    p->b = n->in[1];
    p->y = n->out[0];
    p->c = bias_of(n);
    p->stream = true;
    /* kernel rows kr0 .. kr0 + kr - 1 (all of them but in a row pass); channel blocks c0 .. c0 + EB - 1, from
     * the scratch's first */
    int64_t kr = t->krows ? t->krows : t->kh, taps = kr * t->kw, EB = t->ecb;
    p->kb = taps * EB;
    p->K = 8 * p->kb;
    p->N = t->OC;
    p->nb = t->OCB;
    p->nslot = t->tho * t->two;
    p->rows = p->nslot;
    p->acc = t->c0 > 0 || t->kr0 > 0; /* the output holds the sums over the channels (kernel rows) before */
    p->aA = xmalloc(sizeof(int64_t) * (size_t)(p->nslot * p->kb));
    p->aY = xmalloc(sizeof(int64_t) * (size_t)(p->nslot * p->nb));
    p->aB = xmalloc(sizeof(int64_t) * (size_t)(p->kb * p->N));
    p->aC = xmalloc(sizeof(int64_t) * (size_t)p->nb);
    for (int64_t r = 0; r < t->tho; r++)
        for (int64_t q = 0; q < t->two; q++) {
            int64_t s = r * t->two + q;
            for (int64_t i = 0; i < kr; i++)
                for (int64_t j = 0; j < t->kw; j++)
                    for (int64_t cb = 0; cb < EB; cb++) {
                        int64_t re = r * t->sh + i * t->dh - t->pt + t->ht, ce = q * t->sw + j * t->dw - t->pl + t->hl;
                        p->aA[s * p->kb + (i * t->kw + j) * EB + cb] = scr + (re * t->cols_e + ce) * EB + cb;
                    }
            for (int64_t ob = 0; ob < t->OCB; ob++)
                p->aY[s * p->nb + ob] = ((img * t->tho + r) * t->two + q) * t->OCB + ob;
        }
    MNLayout wl;
    plan_tile_weights(t, &wl);
    /* weight (oc, 8 (c0 + k % EB), kr0 + k / EB / kw, k / EB % kw)'s address: the output
     * channel's part plus the rest's (layout_place_dim) */
    int64_t *at_oc = xmalloc(sizeof(int64_t) * (size_t)t->OC);
    for (int64_t oc = 0; oc < t->OC; oc++) {
        MNPlace pl;
        layout_place_dim(&wl, 0, oc, &pl);
        at_oc[oc] = pl.c[LV_ADDR];
    }
    for (int64_t k = 0; k < p->kb; k++) {
        int64_t idx[3] = {8 * (t->c0 + k % EB), t->kr0 + k / EB / t->kw, k / EB % t->kw}, at_k = 0;
        for (int d = 1; d < 4; d++) {
            MNPlace pl;
            layout_place_dim(&wl, d, idx[d - 1], &pl);
            at_k += pl.c[LV_ADDR];
        }
        for (int64_t oc = 0; oc < t->OC; oc++) p->aB[k * p->N + oc] = at_k + at_oc[oc];
    }
    free(at_oc);
    for (int64_t ob = 0; ob < t->OCB; ob++) p->aC[ob] = ob;
    (void)c;
}

/* a depthwise chunk's weights: long words [c0 taps, (c0 + ecb) taps) of the image, in
 * whole 16s */
static void dw_span(const MNTile *t, int64_t c0, int64_t ecb, int64_t *lo, int64_t *hi) {
    int64_t taps = t->kh * t->kw;
    *lo = c0 * taps / 16 * 16;
    *hi = num_cdiv((c0 + ecb) * taps, 16) * 16;
}
static int64_t dw_room(const MNTile *t) {
    int64_t lo, hi;
    dw_span(t, 0, t->ecb, &lo, &hi);
    return hi - lo + 16;
}

/* the LM0 the weights' panels of a convolution's product need (emit_matrix_panel_need), by
 * the node's key through check_memo: a function of its geometry, not of the weights' values */
static int64_t panel_need(const MNCompile *c, const MNNode *n, const MNTile *t) {
    MNBuf k = {0};
    buf_printf(&k, "tile panels|");
    bool keyed = c->check_memo && emit_node_key(&k, n, false);
    size_t len;
    const int64_t *got = keyed ? memo_get(c->check_memo, k.data, &len) : NULL;
    int64_t need;
    if (got) {
        if (len != sizeof need) die("tile panel memo of %zu bytes", len);
        need = *got;
    } else {
        MatPlan p;
        product_plan(c, n, t, 0, 0, &p);
        need = emit_matrix_panel_need(&c->machine, &p);
        emit_matrix_plan_free(&p);
        if (keyed) memo_put(c->check_memo, k.data, &need, sizeof need);
    }
    buf_free(&k);
    return need;
}

const char *emit_tile_why(const MNCompile *c, const MNNode *n, Walk *w) {
    MNTile t;
    if (!geometry(c, n, &t)) die("node '%s' is no tiled convolution", n->name);
    if (t.kind == MN_TILE_DW) { /* the weights stream from DRAM a chunk at a time, staged in GRF1 */
        if (!emit_in_lm(n->in[0]) || !emit_in_lm(n->out[0]) || (bias_of(n) && !emit_in_lm(bias_of(n))))
            return "not in LM";
        if (n->in[1]->loc != MN_LOC_DRAM) return "weights not in DRAM";
        AppLayoutImage im;
        MNLayout l;
        if (!emit_image_of(c, n->in[1], &im, &l) || !im.mab || im.slices != 1)
            return "weights not held once for every MAB";
        if (4 * (t.kh * t.kw + 1) + 8 > c->machine.grf1_lw) return "a kernel larger than GRF1 stages";
        return emit_lm0_room(c, w, t.scratch_lw + dw_room(&t), &w->scr[w->pos]) ? NULL
                                                                                : "no LM0 room for a tile's halos";
    }
    if (t.kind != MN_TILE_CONV) { /* a pool: the scratch alone */
        if (!emit_in_lm(n->in[0]) || !emit_in_lm(n->out[0])) return "not in LM";
        return emit_lm0_room(c, w, t.scratch_lw, &w->scr[w->pos]) ? NULL : "no LM0 room for a tile's halos";
    }
    if (!emit_in_lm(n->in[0]) || !emit_in_lm(n->out[0]) || (bias_of(n) && !emit_in_lm(bias_of(n)))) return "not in LM";
    if (n->in[1]->loc != MN_LOC_DRAM) return "weights not in DRAM";
    AppLayoutImage im;
    MNLayout l;
    if (!emit_image_of(c, n->in[1], &im, &l) || !im.mab || im.slices != 1) return "weights not held once for every MAB";
    int64_t need = panel_need(c, n, &t);
    if (need < 0) return "weights whose panels do not fit a quarter of LM0";
    if (!emit_lm0_room(c, w, t.scratch_lw + need, &w->scr[w->pos])) return "no LM0 room for a tile's halos";
    return NULL;
}

/* ---- halos ---- */

enum { GUARD = 64 };

/* a constant into GRF1 long word lw (both words); read no sooner than 2 steps later */
static void konst(Em *e, int64_t v, int lw) { buf_printf(e->b, "imm i\"%lld\" $ls%d\n", (long long)v, 2 * lw); }

/* zero over n long words from LM0 long word at, where mask (or everywhere): 4 a step, the
 * rest one a step (a mask register leaves no room for a tail mask) */
static void zero(Em *e, int64_t at, int64_t n, const char *mask) {
    int64_t t = 0;
    for (; t + 4 <= n; t += 4) buf_printf(e->b, "lpassa $ls0 $lm%lldv%s\n", (long long)(2 * (at + t)), mask);
    for (; t < n; t++) buf_printf(e->b, "lpassa $ls0 $lm%lld%s\n", (long long)(2 * (at + t)), mask);
}

/* masks 1 and 2: the tile id in GRF0 word 504 below lo, above hi (each only where it can be) */
static void outside(Em *e, int64_t lo, int64_t hi, int64_t count, bool *below, bool *above) {
    *below = lo > 0, *above = hi < count - 1;
    if (count == 1) { /* one place, 0, outside lo..hi (its callers skip it inside): mask 1 everywhere */
        *above = false;
        buf_printf(e->b, "isub $ls0 $ls0 $nowrite $omr1\nnop\n"); /* 0 >= 0 (GRF1 long word 0 is set) */
        return;
    }
    if (*below) {
        konst(e, lo - 1, 1);
        buf_printf(e->b, "nop\nisub $ls2 $lr504 $nowrite $omr1\n");
    }
    if (*above) {
        konst(e, hi + 1, 1);
        buf_printf(e->b, "nop\nisub $lr504 $ls2 $nowrite $omr2\n");
    }
    buf_printf(e->b, "nop\n");
}

/* The place of this PE's tile into GRF0 word 504, and how many places there are: the MAB
 * (columns), or l2bid J + l1bid (rows); a level the value is replicated on counts as
 * place 0 there (every coordinate holds the same tiles) */
int64_t emit_tile_place(Em *e, const MNTile *t, bool rows) {
    const MNMachine *m = &e->c->machine;
    if (!rows) {
        if (t->rep & (1u << LV_MAB)) return 1;
        buf_printf(e->b, "ipassa $mabid $lr504\n");
        return m->mab_per_l1b;
    }
    bool r1 = t->rep & (1u << LV_L1B), r2 = t->rep & (1u << LV_L2B);
    int64_t J = m->l1b_per_l2b;
    if (r1 && r2) return 1;
    if (r2) {
        buf_printf(e->b, "ipassa $l1bid $lr504\nnop\n");
        return J;
    }
    int sh = 0;
    while ((1ll << sh) < J) sh++;
    konst(e, sh, 2);
    buf_printf(e->b, "nop\nilsl $l2bid $ls4 $lr504\nnop\n");
    if (!r1) buf_printf(e->b, "iadd $lr504 $l1bid $lr504\nnop\n");
    return J * m->n_l2b;
}

/* floor(a / b) for b > 0 */
static int64_t fdiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -num_cdiv(-a, b); }

/* columns: the input tile's own rows, with the columns of the tiles beside it (tile
 * sigma's at sigma gx MABs: a distribute from 4 sigma gx long words off) */
static void halo_columns(Em *e, const MNTile *t, const MNValue *x, int64_t img, int64_t scr) {
    const MNMachine *m = &e->c->machine;
    int64_t P = (int64_t)m->mab_per_l1b * m->pe_per_mab, A = P, CB = t->CB, EB = t->ecb;
    int64_t cap = (m->l1bm_lw / P - 5) / 4 * 4, rowlw = t->tw * CB;
    char at[40];
    for (int64_t r = 0; r < t->th && t->ht + r < t->rows_e; r++) {
        int64_t base = ((img * t->th + r) * t->tw) * CB;
        for (int64_t p0 = 0; p0 < rowlw; p0 += cap) {
            int64_t np = rowlw - p0 < cap ? rowlw - p0 : cap;
            for (int64_t k = 0; k < np; k += 4)
                buf_printf(e->b, "l1bmd $%s%sv $lb%lld\n", emit_bank_reg(x), emit_at(e, x, base + p0 + k, at),
                           (long long)(A + P * k));
            buf_printf(e->b, "nop/2\n");
            for (int64_t ce = 0; ce < t->cols_e; ce++) { /* scratch column ce: tile sg's column src */
                int64_t d = ce - t->hl, sg = fdiv(d, t->tw), src = d - sg * t->tw;
                int64_t j0 = src * CB + t->c0, j1 = j0 + EB, off = 4 * sg * t->gx;
                if (j1 <= p0 || j0 >= p0 + np || off <= -P || off >= P) continue;
                if (j0 < p0) j0 = p0;
                if (j1 > p0 + np) j1 = p0 + np;
                int64_t dst = scr + ((t->ht + r) * t->cols_e + ce) * EB + (j0 - src * CB - t->c0);
                for (int64_t j = j0; j < j1; j += 4)
                    buf_printf(e->b, "l1bmd $lb%lld $lm%lldv%s\n", (long long)(A + P * (j - p0) + off),
                               (long long)(2 * (dst + j - j0)), emit_tail_mask(j1, j));
            }
            buf_printf(e->b, "nop/2\n");
        }
    }
    /* columns outside the image: MAB m holds input tile m / gx, whose column ce - hl is
     * image column (m / gx) tw + ce - hl */
    int64_t places = emit_tile_place(e, t, false);
    for (int64_t ce = 0; ce < t->cols_e; ce++) {
        int64_t d = ce - t->hl, lo = d >= 0 ? 0 : num_cdiv(-d, t->tw),
                hi = t->W - 1 - d >= 0 ? (t->W - 1 - d) / t->tw : -1;
        if (lo <= 0 && hi * t->gx + t->gx - 1 >= places - 1) continue; /* every place's (a global pool sums all) */
        bool below, above;
        if (lo <= hi) outside(e, lo * t->gx, hi * t->gx + t->gx - 1, places, &below, &above);
        for (int64_t r = 0; r < t->th && t->ht + r < t->rows_e; r++) {
            int64_t a = scr + ((t->ht + r) * t->cols_e + ce) * EB;
            if (lo > hi) {
                zero(e, a, EB, "");
                continue;
            }
            if (below) zero(e, a, EB, "/$imr1");
            if (above) zero(e, a, EB, "/$imr2");
        }
    }
    buf_printf(e->b, "nop/2\n");
}

/* The MVs of a carry: every L2B l among the first nl that has a source l + dl takes the
 * L2BM range Cs of that source into its own at Cr, through the source group's PDM */
static void carry_mv(Em *e, int64_t nl, int64_t dl, int64_t Cs, int64_t Cr, int64_t n64) {
    const MNMachine *m = &e->c->machine;
    int64_t L = m->l2b_per_group, NL = m->n_l2b;
    int tags[256];
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t l = 0; l < nl && l < 256; l++) {
            int64_t from = l + dl;
            if (from < 0 || from >= NL) continue;
            int tag = e->tag = e->tag % 63 + 1;
            tags[l] = tag;
            if (!pass)
                buf_printf(e->b, "mvp/n%lldi%02x $lc%lld@%lld.%lld $p%lld@%lld\n", (long long)n64, tag, (long long)Cs,
                           (long long)(from / L), (long long)(from % L), (long long)(n64 * from),
                           (long long)(from / L));
            else
                buf_printf(e->b, "mvp/n%lldi%02x $p%lld@%lld $lc%lld@%lld.%lld\n", (long long)n64, tag,
                           (long long)(n64 * from), (long long)(from / L), (long long)Cr, (long long)(l / L),
                           (long long)(l % L));
        }
        for (int64_t l = 0; l < nl && l < 256; l++)
            if (l + dl >= 0 && l + dl < NL) buf_printf(e->b, "nop; wait i%02x\n", tags[l]);
    }
}

/* n LM0 long words from src on every PE to dst on the same PE of the MAB d places away
 * (MAB m gets MAB m + d's; none past the L1B), through the L1BM a chunk at a time */
void emit_tile_shift_cols(Em *e, int64_t src, int64_t dst, int64_t n, int64_t d) {
    const MNMachine *m = &e->c->machine;
    int64_t P = (int64_t)m->mab_per_l1b * m->pe_per_mab, A = P, cap = (m->l1bm_lw / P - 5) / 4 * 4, off = 4 * d;
    if (off <= -P || off >= P) return;
    for (int64_t p0 = 0; p0 < n; p0 += cap) {
        int64_t np = n - p0 < cap ? n - p0 : cap;
        for (int64_t k = 0; k < np; k += 4)
            buf_printf(e->b, "l1bmd $lm%lldv $lb%lld\n", (long long)(2 * (src + p0 + k)), (long long)(A + P * k));
        buf_printf(e->b, "nop/2\n");
        for (int64_t k = 0; k < np; k += 4)
            buf_printf(e->b, "l1bmd $lb%lld $lm%lldv%s\n", (long long)(A + P * k + off),
                       (long long)(2 * (dst + p0 + k)), emit_tail_mask(np, k));
        buf_printf(e->b, "nop/2\n");
    }
}

/* rows: the scratch rows of tile offset sg (the input tile sg places of gy away), from
 * that tile's scratch */
static void halo_rows(Em *e, const MNTile *t, int64_t scr, int64_t sg) {
    int64_t re0 = t->ht + sg * t->th, re1 = re0 + t->th;
    if (re0 < 0) re0 = 0;
    if (re1 > t->rows_e) re1 = t->rows_e;
    if (re0 >= re1) return;
    int64_t rowlw = t->cols_e * t->ecb;
    emit_tile_shift_rows(e, t, scr + (re0 - sg * t->th) * rowlw, scr + re0 * rowlw, (re1 - re0) * rowlw, sg * t->gy);
}

/* n LM0 long words from src on every PE to dst on the PE of the same MAB d row places
 * away (place p = l2bid J + l1bid gets place p + d's): through the L1BM and the L2BM (a
 * distribute shifted by d L1Bs), and from another L2B through the PDM. The places that
 * receive are t's output grid (TYo tiles at every gyo-th place); the sources may lie on
 * another L2B when t's input tiles span several. */
void emit_tile_shift_rows(Em *e, const MNTile *t, int64_t src, int64_t dst, int64_t total, int64_t d) {
    const MNMachine *m = &e->c->machine;
    int64_t P = (int64_t)m->mab_per_l1b * m->pe_per_mab, J = m->l1b_per_l2b;
    /* L2BM: the combined rows at D, room for a shift of J - 1 L1Bs either side; the edge
     * L1B's copy at Cs, a neighbour's at Cr */
    int64_t pc = (m->l2bm_lw - 64 * J - 2 * GUARD) / (P * (J + 2)) / 4 * 4;
    if ((m->l1bm_lw - 3 * GUARD) / (2 * P) / 4 * 4 < pc) pc = (m->l1bm_lw - 3 * GUARD) / (2 * P) / 4 * 4;
    int64_t A = GUARD, A2 = A + P * pc + GUARD, D = 32 * J;
    int64_t Cs = (D + J * P * pc + 32 * J + 63) / 64 * 64, Cr = (Cs + P * pc + 63) / 64 * 64;
    int64_t places = t->TYo * t->gyo, step = t->gyo < J ? t->gyo : J;
    int64_t nl = num_cdiv(places, J) < m->n_l2b ? num_cdiv(places, J) : m->n_l2b;
    bool multi = t->TY * t->gy > J && !(t->rep & (1u << LV_L2B)); /* tiles on several L2Bs */
    for (int64_t p0 = 0; p0 < total; p0 += pc) {
        int64_t np = total - p0 < pc ? total - p0 : pc, span = P * np;
        for (int64_t k = 0; k < np; k += 4)
            buf_printf(e->b, "l1bmd $lm%lldv $lb%lld\n", (long long)(2 * (src + p0 + k)), (long long)(A + P * k));
        buf_printf(e->b, "nop/2\n");
        if (d > -J && d < J) { /* within the L2B: L1B j gets L1B j + d's */
            for (int64_t u = 0; u < span / 32; u++)
                buf_printf(e->b, "l2bmd $lb%lld $lc%lld\n", (long long)(A + 32 * u), (long long)(D + 32 * J * u));
            buf_printf(e->b, "nop/3\n");
            for (int64_t u = 0; u < span / 32; u++)
                buf_printf(e->b, "l2bmd $lc%lld $lb%lld\n", (long long)(D + 32 * J * u + 32 * d),
                           (long long)(A2 + 32 * u));
            buf_printf(e->b, "nop/2\n");
        }
        for (int64_t j = 0; multi && j < J && j < places; j += step) { /* tiles whose source is on another L2B */
            int64_t dl = fdiv(j + d, J), js = j + d - dl * J;
            if (!dl) continue;
            for (int64_t v = 0; v < span; v += 64)
                buf_printf(e->b, "l2bm@%lld $lb%lld $lc%lld\n", (long long)js, (long long)(A + v), (long long)(Cs + v));
            buf_printf(e->b, "nop/3\n");
            carry_mv(e, nl, dl, Cs, Cr, (span + 63) / 64 * 64);
            for (int64_t v = 0; v < span; v += 64)
                buf_printf(e->b, "l2bm@%lld $lc%lld $lb%lld\n", (long long)j, (long long)(Cr + v), (long long)(A2 + v));
            buf_printf(e->b, "nop/2\n");
        }
        for (int64_t k = 0; k < np; k += 4)
            buf_printf(e->b, "l1bmd $lb%lld $lm%lldv%s\n", (long long)(A2 + P * k), (long long)(2 * (dst + p0 + k)),
                       emit_tail_mask(np, k));
        buf_printf(e->b, "nop/2\n");
    }
}

/* rows outside the image: place p = l2bid J + l1bid holds input tile p / gy, whose row
 * re - ht is image row (p / gy) th + re - ht */
static void rows_outside(Em *e, const MNTile *t, int64_t scr) {
    int64_t rowlw = t->cols_e * t->ecb, places = emit_tile_place(e, t, true);
    for (int64_t re = 0; re < t->rows_e; re++) {
        int64_t d = re - t->ht, lo = d >= 0 ? 0 : num_cdiv(-d, t->th),
                hi = t->H - 1 - d >= 0 ? (t->H - 1 - d) / t->th : -1;
        if (lo <= 0 && hi * t->gy + t->gy - 1 >= places - 1) continue;
        int64_t a = scr + re * rowlw;
        if (lo > hi) {
            zero(e, a, rowlw, "");
            continue;
        }
        bool below, above;
        outside(e, lo * t->gy, hi * t->gy + t->gy - 1, places, &below, &above);
        if (below) zero(e, a, rowlw, "/$imr1");
        if (above) zero(e, a, rowlw, "/$imr2");
    }
    buf_printf(e->b, "nop/2\n");
}

/* 4 long words of value v (absolute LM0 words when NULL) as an address list, the last
 * repeated past n */
void emit_lw_list(Em *e, const MNValue *v, const int64_t *lw, int n) {
    buf_printf(e->b, "$%s", v ? emit_bank_reg(v) : "lm");
    if (v) buf_printf(e->b, "{%d}", v->id);
    for (int k = 0; k < 4; k++) buf_printf(e->b, "%c%lld", k ? ',' : '[', (long long)(2 * lw[k < n ? k : n - 1]));
    buf_printf(e->b, "]");
}

/* image img of a pool: every (pixel, channel block) of the output tile folds its taps
 * from the scratch (a direct one: from the input tile x), 4 long words (8 channels) a
 * step; the accumulators in GRF0 */
static void pool_fold(Em *e, const MNTile *t, const MNValue *x, const MNValue *y, int64_t img, int64_t scr) {
    int64_t items = t->tho * t->two * t->ecb, G = 32; /* groups of 4 items in flight */
    int64_t *ya = xmalloc(sizeof(int64_t) * (size_t)(items + 4)), *ea = xmalloc(sizeof(int64_t) * (size_t)(items + 4));
    for (int64_t g0 = 0; g0 < items; g0 += 4 * G) {
        int64_t gn = num_cdiv(items - g0 < 4 * G ? items - g0 : 4 * G, 4);
        for (int64_t i = 0; i < t->kh; i++)
            for (int64_t j = 0; j < t->kw; j++) {
                for (int64_t g = 0; g < gn; g++) {
                    int64_t n4 = 0;
                    for (int64_t q = g0 + 4 * g; q < g0 + 4 * g + 4 && q < items; q++, n4++) {
                        int64_t cb = q % t->ecb, px = q / t->ecb, r = px / t->two, c = px % t->two;
                        int64_t re = r * t->sh + i * t->dh - t->pt + t->ht, ce = c * t->sw + j * t->dw - t->pl + t->hl;
                        ea[n4] = t->direct ? ((img * t->th + re) * t->tw + ce) * t->CB + cb
                                           : scr + (re * t->cols_e + ce) * t->ecb + cb;
                    }
                    if (i == 0 && j == 0)
                        buf_printf(e->b, "lpassa ");
                    else
                        buf_printf(e->b, "%s $lr%lldv ", t->kind == MN_TILE_MAX ? "fmax" : "fvadd", (long long)(8 * g));
                    emit_lw_list(e, t->direct ? x : NULL, ea, (int)n4);
                    buf_printf(e->b, " $lr%lldv\n", (long long)(8 * g));
                }
                if (gn < 2) buf_printf(e->b, "nop\n");
            }
        if (t->kind == MN_TILE_AVG) {
            for (int64_t g = 0; g < gn; g++)
                buf_printf(e->b, "fvmul $lr%lldv $ls6 $lr%lldv\n", (long long)(8 * g), (long long)(8 * g));
            if (gn < 2) buf_printf(e->b, "nop\n");
        }
        for (int64_t g = 0; g < gn; g++) {
            int64_t n4 = 0;
            for (int64_t q = g0 + 4 * g; q < g0 + 4 * g + 4 && q < items; q++, n4++) {
                int64_t cb = t->c0 + q % t->ecb, px = q / t->ecb;
                ya[n4] = ((img * t->tho + px / t->two) * t->two + px % t->two) * t->CB + cb;
            }
            buf_printf(e->b, "lpassa $lr%lldv ", (long long)(8 * g));
            emit_lw_list(e, y, ya, (int)n4);
            buf_printf(e->b, "\n");
        }
        buf_printf(e->b, "nop/2\n"); /* the scratch (LM0) is read again 3 steps after the stores */
    }
    free(ya);
    free(ea);
}

/* the accumulators of output pixels q0 .. q0 + qn - 1 (GRF0, 8 words each), channel blocks
 * 4 g .. (below c1), into the output tile of image img */
static void store_pixels(Em *e, const MNTile *t, const MNValue *y, int64_t img, int64_t q0, int64_t qn, int64_t g,
                         int64_t c1) {
    char at[40];
    for (int64_t q = q0; q < q0 + qn; q++) {
        int64_t r = q / t->two, c = q % t->two, ya = ((img * t->tho + r) * t->two + c) * t->CB + 4 * g;
        buf_printf(e->b, "lpassa $lr%lldv $%s%sv%s\n", (long long)(8 * (q - q0)), emit_bank_reg(y),
                   emit_at(e, y, ya, at), emit_tail_mask(c1, 4 * g));
    }
    buf_printf(e->b, "nop/2\n"); /* the scratch (LM0) is read again 3 steps after the stores */
}

/* image img of a depthwise convolution: for each group of 4 channel blocks, its weights
 * (and bias) staged in GRF1 from LW 8, then every output pixel's 4 blocks (8 channels a
 * long word... 4 long words a step) fold their taps from the scratch with fvfma */
static void dw_fold(Em *e, const MNTile *t, const MNNode *n, int64_t img, int64_t scr) {
    const MNValue *w = n->in[1], *b = bias_of(n), *y = n->out[0];
    MNLayout wl;
    plan_tile_weights(t, &wl);
    int64_t taps = t->kh * t->kw, px = t->tho * t->two, PB = 32, W0 = 8, B0 = W0 + 4 * taps;
    int64_t c1 = t->c0 + t->ecb; /* blocks c0 .. c1 - 1, from the scratch's first */
    int64_t lo, hi, ws = scr + t->scratch_lw; /* the chunk's weights from DRAM, after the scratch */
    dw_span(t, t->c0, t->ecb, &lo, &hi);
    emit_stream_in(e, w, lo, hi - lo, ws, 0);
    char at[40];
    for (int64_t g = t->c0 / 4; 4 * g < c1; g++) { /* (c0 is a multiple of 4 when there are several chunks) */
        for (int64_t tap = 0; tap < taps; tap++) { /* channel blocks 4g.. of every tap, into GRF1 */
            int64_t a[4];
            for (int k = 0; k < 4; k++) {
                int64_t cb = 4 * g + k < c1 ? 4 * g + k : c1 - 1, idx[4] = {8 * cb, 0, tap / t->kw, tap % t->kw};
                MNPlace pl;
                layout_place(&wl, idx, &pl);
                a[k] = ws + pl.c[LV_ADDR] - lo;
            }
            buf_printf(e->b, "lpassa ");
            emit_lw_list(e, NULL, a, 4);
            buf_printf(e->b, " $ls%lldv\n", (long long)(2 * (W0 + 4 * tap)));
        }
        if (b)
            buf_printf(e->b, "lpassa $%s%sv $ls%lldv\n", emit_bank_reg(b), emit_at(e, b, 4 * g, at),
                       (long long)(2 * B0));
        buf_printf(e->b, "nop\n");
        for (int64_t q0 = 0; q0 < px; q0 += PB) {
            int64_t qn = px - q0 < PB ? px - q0 : PB;
            for (int64_t tap = 0; tap < taps; tap++) {
                int64_t i = tap / t->kw, j = tap % t->kw;
                for (int64_t q = q0; q < q0 + qn; q++) {
                    int64_t r = q / t->two, c = q % t->two;
                    int64_t re = r * t->sh + i * t->dh - t->pt + t->ht, ce = c * t->sw + j * t->dw - t->pl + t->hl;
                    int64_t ea = scr + (re * t->cols_e + ce) * t->ecb + 4 * g - t->c0, acc = 8 * (q - q0);
                    if (tap)
                        buf_printf(e->b, "fvfma $lm%lldv $ls%lldv $lr%lldv $lr%lldv\n", (long long)(2 * ea),
                                   (long long)(2 * (W0 + 4 * tap)), (long long)acc, (long long)acc);
                    else
                        buf_printf(e->b, "fvmul $lm%lldv $ls%lldv $lr%lldv\n", (long long)(2 * ea), (long long)(2 * W0),
                                   (long long)acc);
                }
                if (qn < 2) buf_printf(e->b, "nop\n");
            }
            if (b) {
                for (int64_t q = q0; q < q0 + qn; q++)
                    buf_printf(e->b, "fvadd $lr%lldv $ls%lldv $lr%lldv\n", (long long)(8 * (q - q0)),
                               (long long)(2 * B0), (long long)(8 * (q - q0)));
                if (qn < 2) buf_printf(e->b, "nop\n");
            }
            store_pixels(e, t, y, img, q0, qn, g, c1);
        }
    }
}

/* ---- Resize ---- */

/* n long words from value a's long word ao (LM0 long word ao when a is NULL) to b's bo,
 * through GRF0 32 steps of 4 at a time; under a mask the tail one a step */
void emit_tile_copy(Em *e, const MNValue *a, int64_t ao, const MNValue *b, int64_t bo, int64_t n, const char *mask) {
    int64_t whole = *mask ? n / 4 * 4 : n, k = 0;
    char at[40];
    while (k < n) {
        int64_t gn = 0, off[32];
        for (; k < n && gn < 32; k += k < whole ? 4 : 1) off[gn++] = k;
        for (int64_t g = 0; g < gn; g++) {
            const char *v = off[g] < whole ? "v" : "";
            if (a)
                buf_printf(e->b, "lpassa $%s%s%s $lr%lldv\n", emit_bank_reg(a), emit_at(e, a, ao + off[g], at), v,
                           (long long)(8 * g));
            else
                buf_printf(e->b, "lpassa $lm%lld%s $lr%lldv\n", (long long)(2 * (ao + off[g])), v, (long long)(8 * g));
        }
        if (gn < 2) buf_printf(e->b, "nop\n");
        for (int64_t g = 0; g < gn; g++) {
            const char *v = off[g] < whole ? "v" : "", *tail = *mask ? mask : emit_tail_mask(n, off[g]);
            if (b)
                buf_printf(e->b, "lpassa $lr%lldv $%s%s%s%s\n", (long long)(8 * g), emit_bank_reg(b),
                           emit_at(e, b, bo + off[g], at), v, tail);
            else
                buf_printf(e->b, "lpassa $lr%lldv $lm%lld%s%s\n", (long long)(8 * g), (long long)(2 * (bo + off[g])), v,
                           tail);
        }
        buf_printf(e->b, "nop/2\n");
    }
}

/* The scratch past the image repeats its edge (a Resize's terms read the edge there):
 * the rows first, then the columns of every row, so that the corners come along. Place
 * p holds tile p / g, whose scratch line q is image line (p / g) t + q - h. A line past
 * the image on several tiles takes each tile's edge in turn under a mask of the tiles
 * from that one outwards, nearest the image last. */
static void edge_lines(Em *e, const MNTile *t, int64_t scr, bool rows) {
    int64_t lines = rows ? t->rows_e : t->cols_e, h = rows ? t->ht : t->hl, tl = rows ? t->th : t->tw;
    int64_t T = rows ? t->TY : t->TX, g = rows ? t->gy : t->gx, n = rows ? t->H : t->W;
    int64_t places = emit_tile_place(e, t, rows);
    for (int64_t q = 0; q < lines; q++) {
        int64_t d = q - h, lo = d >= 0 ? 0 : num_cdiv(-d, tl), hi = n - 1 - d >= 0 ? (n - 1 - d) / tl : -1;
        for (int side = 0; side < 2; side++) {
            int64_t k0 = side ? (hi + 1 > lo ? hi + 1 : lo) : (lo - 1 < T - 1 ? lo - 1 : T - 1);
            for (int64_t k = k0; side ? k < T : k >= 0; k += side ? 1 : -1) {
                int64_t src = (side ? n - 1 : 0) - k * tl + h; /* tile k's edge line */
                if (src < 0 || src >= lines) continue;
                const char *mask = "";
                if (places > 1) {
                    bool below, above;
                    outside(e, side ? 0 : (k + 1) * g, side ? k * g - 1 : places - 1, places, &below, &above);
                    if (side ? !above : !below) continue; /* the mask would be empty */
                    mask = side ? "/$imr2" : "/$imr1";
                } else if (k)
                    continue; /* one place: tile 0 */
                if (rows)
                    emit_tile_copy(e, NULL, scr + src * t->cols_e * t->ecb, NULL, scr + q * t->cols_e * t->ecb,
                                   t->cols_e * t->ecb, mask);
                else
                    for (int64_t r = 0; r < t->rows_e; r++)
                        emit_tile_copy(e, NULL, scr + (r * t->cols_e + src) * t->ecb, NULL,
                                       scr + (r * t->cols_e + q) * t->ecb, t->ecb, mask);
            }
        }
    }
}

/* image img of a Resize: each output pixel (r, c) of the tile is the sum of its terms, the
 * scratch pixels (a(r), b(c)) (offsets into the tile, resize.h) times their weights, 4
 * channel blocks a step; the weights as constants in GRF1 from long word 8 */
static void resize_fold(Em *e, const MNTile *t, const MNNode *n, int64_t img, int64_t scr) {
    const MNValue *y = n->out[0];
    ResizePlan p;
    if (!plan_tile_resize_plan(n, &p)) die("node '%s': no Resize plan", n->name);
    int64_t(*ra)[2] = xmalloc(sizeof *ra * (size_t)t->tho), (*ca)[2] = xmalloc(sizeof *ca * (size_t)t->two);
    double(*rw)[2] = xmalloc(sizeof *rw * (size_t)t->tho), (*cw)[2] = xmalloc(sizeof *cw * (size_t)t->two);
    for (int64_t r = 0; r < t->tho; r++) {
        int64_t a[4];
        double w[4];
        resize_axis(&p, 2, r, false, a, w);
        for (int k = 0; k < t->kh; k++) ra[r][k] = a[k] + t->ht, rw[r][k] = w[k];
    }
    for (int64_t c = 0; c < t->two; c++) {
        int64_t a[4];
        double w[4];
        resize_axis(&p, 3, c, false, a, w);
        for (int k = 0; k < t->kw; k++) ca[c][k] = a[k] + t->hl, cw[c][k] = w[k];
    }
    enum { W0 = 8, NW = 48 };
    float ws[NW];
    int nw = 0;
    int64_t taps = t->kh * t->kw, px = t->tho * t->two, PB = 32, c1 = t->c0 + t->ecb;
    int *slot = xmalloc(sizeof(int) * (size_t)(px * taps));
    for (int64_t q = 0; q < px; q++)
        for (int64_t k = 0; k < taps; k++) {
            float w = (float)(rw[q / t->two][k / t->kw] * cw[q % t->two][k % t->kw]);
            int j = 0;
            while (j < nw && ws[j] != w) j++;
            if (j == nw) {
                if (nw == NW) die("node '%s': more than %d weights", n->name, NW);
                ws[nw++] = w;
                buf_printf(e->b, "imm f\"%.9g\" $ls%d\n", (double)w, 2 * (W0 + j));
            }
            slot[q * taps + k] = j;
        }
    buf_printf(e->b, "nop\n");
    for (int64_t g = t->c0 / 4; 4 * g < c1; g++)
        for (int64_t q0 = 0; q0 < px; q0 += PB) {
            int64_t qn = px - q0 < PB ? px - q0 : PB;
            for (int64_t k = 0; k < taps; k++) {
                for (int64_t q = q0; q < q0 + qn; q++) {
                    int64_t r = q / t->two, c = q % t->two, acc = 8 * (q - q0);
                    int64_t ea = scr + (ra[r][k / t->kw] * t->cols_e + ca[c][k % t->kw]) * t->ecb + 4 * g - t->c0;
                    int j = slot[q * taps + k];
                    if (taps == 1 && ws[j] == 1.0f)
                        buf_printf(e->b, "lpassa $lm%lldv $lr%lldv\n", (long long)(2 * ea), (long long)acc);
                    else if (!k)
                        buf_printf(e->b, "fvmul $lm%lldv $ls%d $lr%lldv\n", (long long)(2 * ea), 2 * (W0 + j),
                                   (long long)acc);
                    else
                        buf_printf(e->b, "fvfma $lm%lldv $ls%d $lr%lldv $lr%lldv\n", (long long)(2 * ea), 2 * (W0 + j),
                                   (long long)acc, (long long)acc);
                }
                if (qn < 2) buf_printf(e->b, "nop\n");
            }
            store_pixels(e, t, y, img, q0, qn, g, c1);
        }
    free(slot);
    free(ra);
    free(ca);
    free(rw);
    free(cw);
}

/* image img of a DepthToSpace: output pixel (s i + a, s j + b)'s channel blocks are input
 * pixel (i, j)'s from block (a s + b) OCB, copied through GRF0 32 groups of 4 at a time */
static void d2s_copy(Em *e, const MNTile *t, const MNValue *x, const MNValue *y, int64_t img) {
    int64_t s = t->fh, items = t->tho * t->two * num_cdiv(t->OCB, 4), G = num_cdiv(t->OCB, 4);
    char at[40];
    for (int64_t q0 = 0; q0 < items; q0 += 32) {
        int64_t qn = items - q0 < 32 ? items - q0 : 32;
        for (int64_t q = q0; q < q0 + qn; q++) {
            int64_t px = q / G, g = q % G, r = px / t->two, c = px % t->two;
            int64_t xa = ((img * t->th + r / s) * t->tw + c / s) * t->CB + (r % s * s + c % s) * t->OCB + 4 * g;
            buf_printf(e->b, "lpassa $%s%sv $lr%lldv\n", emit_bank_reg(x), emit_at(e, x, xa, at),
                       (long long)(8 * (q - q0)));
        }
        if (qn < 2) buf_printf(e->b, "nop\n");
        for (int64_t q = q0; q < q0 + qn; q++) {
            int64_t px = q / G, g = q % G, r = px / t->two, c = px % t->two;
            int64_t ya = ((img * t->tho + r) * t->two + c) * t->OCB + 4 * g;
            buf_printf(e->b, "lpassa $lr%lldv $%s%sv%s\n", (long long)(8 * (q - q0)), emit_bank_reg(y),
                       emit_at(e, y, ya, at), emit_tail_mask(t->OCB, 4 * g));
        }
        buf_printf(e->b, "nop/2\n");
    }
}

/* image img of a broadcast: every pixel of the output tile is the input's one pixel, its
 * channel blocks copied through GRF0 once and stored 32 pixels a step group */
static void bcast_fill(Em *e, const MNTile *t, const MNValue *x, const MNValue *y, int64_t img) {
    int64_t G = num_cdiv(t->CB, 4), px = t->tho * t->two;
    char at[40];
    for (int64_t g = 0; g < G; g++)
        buf_printf(e->b, "lpassa $%s%sv $lr%lldv\n", emit_bank_reg(x), emit_at(e, x, img * t->CB + 4 * g, at),
                   (long long)(8 * g));
    buf_printf(e->b, "nop\n");
    for (int64_t q = 0; q < px; q++)
        for (int64_t g = 0; g < G; g++)
            buf_printf(e->b, "lpassa $lr%lldv $%s%sv%s\n", (long long)(8 * g), emit_bank_reg(y),
                       emit_at(e, y, (img * px + q) * t->CB + 4 * g, at), emit_tail_mask(t->CB, 4 * g));
    buf_printf(e->b, "nop/2\n");
}

/* mask 1: where $lr504 (a place) is not a multiple of g */
void emit_tile_off_grid(Em *e, int64_t g) {
    konst(e, g - 1, 1);
    buf_printf(e->b, "nop\niand $lr504 $ls2 $lr504\n");
    konst(e, 1, 1);
    buf_printf(e->b, "nop\nisub $lr504 $ls2 $nowrite $omr1\nnop\n");
}

/* The tree's way up and back down for G groups of 4 long words a PE (lm[g] the operand of
 * group g, down[g] where it comes back): over the MABs (a reduction, or MAB 0's), over the
 * L1Bs (the same, or L1B 0's), over the L2Bs (l2: 2 a reduction into the PDM, 1 L2B 0's
 * copied there, 0 none) and from the PDM to every L2BM, then down to every L1BM and every
 * MAB */
static void tree_round(Em *e, int64_t G, char (*lm)[80], char (*down)[80], const char *op, bool mabs, bool l1bs,
                       int l2) {
    int64_t A = GUARD, D = GUARD, n64 = num_cdiv(16 * G, 64) * 64;
    for (int64_t g = 0; g < G; g++)
        buf_printf(e->b, "%s%s %s $lb%lld\n", mabs ? "l1bmr" : "l1bmm@0", mabs ? op : "", lm[g],
                   (long long)(A + 16 * g));
    buf_printf(e->b, "nop/2\n");
    for (int64_t u = 0; u < n64; u += 64)
        buf_printf(e->b, "%s%s $lb%lld $lc%lld\n", l1bs ? "l2bmr" : "l2bm@0", l1bs ? op : "", (long long)(A + u),
                   (long long)(D + u));
    buf_printf(e->b, "nop/3\n");
    if (l2) {
        int tag = e->tag = e->tag % 63 + 1;
        if (l2 == 2)
            buf_printf(e->b, "mvr%s/n%lldi%02x $lc%lld $p0@0\n", op, (long long)n64, tag, (long long)D);
        else
            buf_printf(e->b, "mvp/n%lldi%02x $lc%lld@0.0 $p0@0\n", (long long)n64, tag, (long long)D);
        buf_printf(e->b, "nop; wait i%02x\n", tag);
        tag = e->tag = e->tag % 63 + 1;
        buf_printf(e->b, "mvb/n%lldi%02x $p0@0 $lc%lld\nnop; wait i%02x\n", (long long)n64, tag, (long long)D, tag);
    }
    for (int64_t u = 0; u < n64; u += 64)
        buf_printf(e->b, "l2bmb $lc%lld $lb%lld\n", (long long)(D + u), (long long)(A + u));
    buf_printf(e->b, "nop/3\n");
    for (int64_t g = 0; g < G; g++) buf_printf(e->b, "l1bmm $lb%lld %s\n", (long long)(A + 16 * g), down[g]);
    buf_printf(e->b, "nop/2\n");
}

/* image img of a global pool: each MAB folds its tile (the scratch, outside the image
 * the fold's identity) per channel block; places off the tiles' grid take the identity;
 * the tree folds over the levels the tiles spread on (l1bmr over the MABs, l2bmr over
 * the L1Bs, mvr over the L2Bs, each handed back down); the mean's scale; the output on
 * every MAB */
static void global_fold(Em *e, const MNTile *t, const MNValue *y, int64_t img, int64_t scr) {
    const MNMachine *m = &e->c->machine;
    bool max = t->kind == MN_TILE_GMAX;
    const char *op = max ? "fmax" : "ffadd";
    int64_t px = t->th * t->tw, CB = t->CB, G = num_cdiv(CB, 4), acc = scr + num_cdiv(px * CB, 4) * 4,
            J = m->l1b_per_l2b;
    int64_t ea[4];
    for (int64_t q = 0; q < px; q++) {
        for (int64_t g = 0; g < G; g++) {
            int n4 = 0;
            for (int64_t cb = 4 * g; cb < 4 * g + 4 && cb < CB; cb++) ea[n4++] = scr + q * CB + cb;
            if (q)
                buf_printf(e->b, "%s $lr%lldv ", max ? "fmax" : "fvadd", (long long)(8 * g));
            else
                buf_printf(e->b, "lpassa ");
            emit_lw_list(e, NULL, ea, n4);
            buf_printf(e->b, " $lr%lldv\n", (long long)(8 * g));
        }
        if (G < 2) buf_printf(e->b, "nop\n");
    }
    for (int64_t g = 0; g < G; g++)
        buf_printf(e->b, "lpassa $lr%lldv $lm%lldv\n", (long long)(8 * g), (long long)(2 * (acc + 4 * g)));
    buf_printf(e->b, "nop/2\n");
    if (t->gx > 1 && emit_tile_place(e, t, false) > 1) { /* MABs between the tiles */
        emit_tile_off_grid(e, t->gx);
        zero(e, acc, 4 * G, "/$imr1");
    }
    if (t->gy > 1 && emit_tile_place(e, t, true) > 1) { /* L1Bs and L2Bs between the tiles */
        emit_tile_off_grid(e, t->gy);
        zero(e, acc, 4 * G, "/$imr1");
    }
    buf_printf(e->b, "nop/2\n");
    bool mabs = t->TX * t->gx > 1 && !(t->rep & (1u << LV_MAB));
    bool l1bs = t->TY > 1 && t->gy < J && !(t->rep & (1u << LV_L1B));
    bool l2bs = t->TY * t->gy > J && !(t->rep & (1u << LV_L2B));
    char(*lm)[80] = xmalloc(sizeof *lm * (size_t)G);
    for (int64_t g = 0; g < G; g++) snprintf(lm[g], sizeof lm[g], "$lm%lldv", (long long)(2 * (acc + 4 * g)));
    tree_round(e, G, lm, lm, op, mabs, l1bs, l2bs ? 2 : !(t->rep & (1u << LV_L2B)));
    free(lm);
    char at[40];
    for (int64_t g = 0; g < G; g++) {
        if (max)
            buf_printf(e->b, "lpassa $lm%lldv $lr%lldv\n", (long long)(2 * (acc + 4 * g)), (long long)(8 * g));
        else
            buf_printf(e->b, "fvmul $lm%lldv $ls6 $lr%lldv\n", (long long)(2 * (acc + 4 * g)), (long long)(8 * g));
    }
    if (G < 2) buf_printf(e->b, "nop\n");
    for (int64_t g = 0; g < G; g++)
        buf_printf(e->b, "lpassa $lr%lldv $%s%sv%s\n", (long long)(8 * g), emit_bank_reg(y),
                   emit_at(e, y, img * CB + 4 * g, at), emit_tail_mask(CB, 4 * g));
    buf_printf(e->b, "nop/2\n");
}

/* A convolution one kernel row at a time (tile_plan.c's rowpass): the tile's own rows with
 * their column halos at own (after the band); for kernel row i, the band of input rows
 * its output rows read, each from the own rows of the tile it lies in (moved as a halo),
 * past the image zero; then the product of that row's taps, adding to the output */
static void row_passes(Em *e, const MNNode *n, const MNTile *t, int64_t img, int64_t scr) {
    MNTile own = *t;
    int64_t band = (t->tho - 1) * t->sh + 1, rowlw = t->cols_e * t->ecb, at = scr + t->scratch_lw - t->own_lw;
    own.ht = own.hb = 0, own.rows_e = t->th;
    halo_columns(e, &own, n->in[0], img, at);
    for (int64_t i = 0; i < t->kh; i++) {
        int64_t b0 = i * t->dh - t->pt; /* the band's first row, from the tile's */
        for (int64_t q = 0; q < band;) { /* runs of rows from one tile */
            int64_t y = b0 + q, sg = fdiv(y, t->th), nq = (sg + 1) * t->th - y;
            if (nq > band - q) nq = band - q;
            int64_t from = at + (y - sg * t->th) * rowlw, to = scr + q * rowlw;
            if (sg)
                emit_tile_shift_rows(e, t, from, to, nq * rowlw, sg * t->gy);
            else
                emit_tile_copy(e, NULL, from, NULL, to, nq * rowlw, "");
            q += nq;
        }
        MNTile bt = *t; /* the band as a scratch of its own: rows b0 .. of the tile, one kernel row */
        bt.ht = -b0, bt.rows_e = band;
        rows_outside(e, &bt, scr);
        bt.krows = 1, bt.kr0 = i, bt.pt = bt.ht = 0;
        MatPlan p;
        product_plan(e->c, n, &bt, img, scr, &p);
        emit_matrix_streamed(e, &p, scr + t->scratch_lw);
        emit_matrix_plan_free(&p);
    }
}

/* The one output pixel of image img, computed on tile 0's place (MAB 0, L1B 0, L2B 0 of
 * group 0), to every MAB: up through its L1BM and L2BM into the PDM, broadcast into every
 * L2BM, down to every L1BM and from there over the MABs (the global fold's way back down) */
static void pixel_bcast(Em *e, const MNTile *t, const MNValue *y, int64_t img) {
    int64_t G = num_cdiv(t->OCB, 4);
    char(*lm)[80] = xmalloc(sizeof *lm * (size_t)G), (*down)[80] = xmalloc(sizeof *down * (size_t)G), at[40];
    for (int64_t g = 0; g < G; g++) {
        snprintf(lm[g], sizeof lm[g], "$%s%sv", emit_bank_reg(y), emit_at(e, y, img * t->OCB + 4 * g, at));
        snprintf(down[g], sizeof down[g], "%s%s", lm[g], emit_tail_mask(t->OCB, 4 * g));
    }
    tree_round(e, G, lm, down, "", false, false, e->c->machine.n_l2b > 1);
    free(lm);
    free(down);
}

void emit_tile(Em *e, const MNNode *n, const Walk *wk) {
    MNTile t;
    if (!geometry(e->c, n, &t)) die("node '%s' is no tiled convolution", n->name);
    int64_t scr = wk->scr[wk->pos];
    if (t.kind == MN_TILE_D2S || t.kind == MN_TILE_BCAST) { /* no halos: every MAB its own pixels */
        for (int64_t img = 0; img < t.N; img++)
            if (t.kind == MN_TILE_D2S)
                d2s_copy(e, &t, n->in[0], n->out[0], img);
            else
                bcast_fill(e, &t, n->in[0], n->out[0], img);
        return;
    }
    if (t.direct) { /* a pick from each MAB's own tile */
        if (t.kind == MN_TILE_AVG) buf_printf(e->b, "imm f\"%.9g\" $ls6\nnop\n", 1.0 / (double)(t.kh * t.kw));
        for (int64_t img = 0; img < t.N; img++) pool_fold(e, &t, n->in[0], n->out[0], img, 0);
        return;
    }
    if (t.kind == MN_TILE_MAX || t.kind == MN_TILE_GMAX) /* the value outside the image */
        buf_printf(e->b, "imm f\"-inf\" $ls0\n");
    else
        konst(e, 0, 0);
    if (t.kind == MN_TILE_AVG) buf_printf(e->b, "imm f\"%.9g\" $ls6\n", 1.0 / (double)(t.kh * t.kw));
    if (t.kind == MN_TILE_GAP) buf_printf(e->b, "imm f\"%.9g\" $ls6\n", 1.0 / (double)(t.H * t.W));
    buf_printf(e->b, "nop\n");
    zero(e, scr, t.scratch_lw, "");
    buf_printf(e->b, "nop/2\n");
    int64_t chunks = num_cdiv(t.CB, t.ecb);
    for (int64_t it = 0; it < t.N * chunks; it++) {
        MNTile tc = t; /* image img, channel blocks from c0 */
        int64_t img = it / chunks;
        tc.c0 = it % chunks * t.ecb;
        tc.ecb = t.CB - tc.c0 < t.ecb ? t.CB - tc.c0 : t.ecb;
        if (t.rowpass) {
            row_passes(e, n, &tc, img, scr);
            continue;
        }
        halo_columns(e, &tc, n->in[0], img, scr);
        for (int64_t sg = fdiv(-t.ht, t.th); sg <= fdiv(t.rows_e - 1 - t.ht, t.th); sg++)
            if (sg) halo_rows(e, &tc, scr, sg);
        rows_outside(e, &tc, scr);
        if (t.kind == MN_TILE_RESIZE) {
            if (t.edge) {
                edge_lines(e, &tc, scr, true);
                edge_lines(e, &tc, scr, false);
            }
            resize_fold(e, &tc, n, img, scr);
            continue;
        }
        if (t.kind == MN_TILE_DW) {
            dw_fold(e, &tc, n, img, scr);
            continue;
        }
        if (t.kind == MN_TILE_GAP || t.kind == MN_TILE_GMAX) {
            global_fold(e, &tc, n->out[0], img, scr);
            continue;
        }
        if (t.kind != MN_TILE_CONV) {
            pool_fold(e, &tc, n->in[0], n->out[0], img, scr);
            continue;
        }
        MatPlan p;
        product_plan(e->c, n, &tc, img, scr, &p);
        emit_matrix_streamed(e, &p, scr + t.scratch_lw);
        emit_matrix_plan_free(&p);
        if (t.bcast_out && tc.c0 + tc.ecb == t.CB) pixel_bcast(e, &t, n->out[0], img);
    }
}

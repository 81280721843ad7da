/* Code Emit: 2-D pools as stencils (the layout is planners/stencil_plan.c's).
 *
 * Every PE holds R rows (a band) of some image planes, and computes the Ro output rows
 * of the same band. For each of its planes it builds, in an LM0 scratch, the rows its
 * windows read: ht halo rows from the bands above, its own R rows, hb halo rows from
 * the bands below, each row of Ew words with the data from word eo and the padding value
 * (-inf for MaxPool, 0 for AveragePool) around it. A row comes from the PE Q positions
 * away per band (peid = band Q + plane position): every PE of the L1B hands its rows to
 * the L1BM (a combine), and a distribute from an L1BM offset of sigma Q long words gives
 * each PE the rows of the PE sigma bands below. Rows outside the image (above the first
 * band, below the last, the padding rows of a band) take the padding value by write
 * masks computed from $peid. Then every tap of every output word is one instruction on
 * all PEs alike, 4 output words a step (fmax, or fvadd and a scale by 1 / (kh kw)),
 * the accumulators in GRF0: no index table, no data from other L1Bs.
 *
 * Cost per plane: about (rows + halo rows) x (2 + 2 x LW per row / 4) steps to build the
 * scratch, and Ro x ceil(OW / 4) x (kh kw + 1) steps of folds. */
#include "emit_impl.h"
#include "plan.h"
#include "num.h"
#include "ops.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

/* node n as a stencil, laid out as one: its input and output have the stencil's layouts */
static bool geometry(const MNCompile *c, const MNNode *n, MNStencil *s) {
    MNLayout in, out;
    return plan_stencil_node(n, &c->machine, s, &in, &out) && emit_layout_is(n->in[0], &in) &&
           emit_layout_is(n->out[0], &out);
}

bool emit_stencil_node(const MNCompile *c, const MNNode *n) {
    MNStencil s;
    return geometry(c, n, &s);
}

const char *emit_stencil_why(const MNCompile *c, const MNNode *n, Walk *w) {
    MNStencil s;
    if (!geometry(c, n, &s)) die("node '%s' is no stencil", n->name);
    if (!emit_in_lm(n->in[0]) || !emit_in_lm(n->out[0])) return "not in LM";
    if (!emit_lm0_room(c, w, s.scratch_lw, &w->scr[w->pos])) return "no LM0 room for a stencil's rows";
    return NULL;
}

/* a constant into GRF1 long word lw (both words), to be read 2 steps later */
static void konst(Em *e, const char *kind, double v, int lw) {
    if (!strcmp(kind, "i"))
        buf_printf(e->b, "imm i\"%lld\" $ls%d\n", (long long)v, 2 * lw);
    else
        buf_printf(e->b, "imm f\"%.9g\" $ls%d\n", v, 2 * lw);
}

/* the padding value over words [eo, eo + 2 Wl) of scratch row r, where mask (or all) */
static void pad_row(Em *e, const MNStencil *s, int64_t scr, int64_t r, const char *mask) {
    int64_t at = scr + (r * s->Ew + s->eo) / 2;
    for (int64_t t = 0; t < s->Wl; t += 4)
        buf_printf(e->b, "lpassa $ls0 $lm%lldv%s\n", (long long)(2 * (at + t)), mask);
}

/* rows of the scratch outside the image take the padding value: row e (e from -ht) of
 * band b is image row b R + e, in the image for bands lo..hi */
static void pad_outside(Em *e, const MNStencil *s, int64_t scr) {
    for (int64_t r = 0; r < s->Erows; r++) {
        int64_t ei = r - s->ht;
        int64_t lo = ei >= 0 ? 0 : num_cdiv(-ei, s->R), hi = s->H - 1 - ei >= 0 ? (s->H - 1 - ei) / s->R : -1;
        if (hi > s->B - 1) hi = s->B - 1;
        if (lo > hi) {
            pad_row(e, s, scr, r, "");
            continue;
        }
        if (lo > 0) { /* bands before lo: peid < lo Q */
            konst(e, "i", (double)(lo * s->Q - 1), 1);
            buf_printf(e->b, "nop\nisub $ls2 $peid $nowrite $omr1\nnop\n");
            pad_row(e, s, scr, r, "/$imr1");
        }
        if (hi < s->B - 1) { /* bands after hi: peid >= (hi + 1) Q */
            konst(e, "i", (double)((hi + 1) * s->Q), 1);
            buf_printf(e->b, "nop\nisub $peid $ls2 $nowrite $omr2\nnop\n");
            pad_row(e, s, scr, r, "/$imr2");
        }
    }
}

/* plane pa's rows and halos into the scratch at scr, through the L1BM */
static void build_rows(Em *e, const MNStencil *s, const MNValue *x, int64_t pa, int64_t scr) {
    const MNMachine *m = &e->c->machine;
    int64_t P = (int64_t)m->mab_per_l1b * m->pe_per_mab, A = P;
    int64_t cap = (m->l1bm_lw / P - 5) / 4 * 4, total = s->R * s->Wl, base = pa * s->R * s->Wl;
    int64_t smin = -num_cdiv(s->ht, s->R), smax = num_cdiv(s->hb, s->R);
    if (smin < -(s->B - 1)) smin = -(s->B - 1);
    if (smax > s->B - 1) smax = s->B - 1;
    char at[40];
    for (int64_t p0 = 0; p0 < total; p0 += cap) {
        int64_t np = total - p0 < cap ? total - p0 : cap;
        for (int64_t t = 0; t < np; t += 4) /* every PE's long words j at A + P j + peid */
            buf_printf(e->b, "l1bmd $%s%sv $lb%lld\n", emit_bank_reg(x), emit_at(e, x, base + p0 + t, at),
                       (long long)(A + P * t));
        buf_printf(e->b, "nop/2\n");
        for (int64_t r = p0 / s->Wl; r * s->Wl < p0 + np; r++) {
            int64_t j0 = r * s->Wl > p0 ? r * s->Wl : p0, j1 = (r + 1) * s->Wl < p0 + np ? (r + 1) * s->Wl : p0 + np;
            for (int64_t sg = smin; sg <= smax; sg++) {
                int64_t er = s->ht + r + sg * s->R; /* the scratch row of band b's row r, seen from band b - sg */
                if (er < 0 || er >= s->Erows) continue;
                for (int64_t j = j0; j < j1; j += 4) {
                    int64_t dst = scr + (er * s->Ew + s->eo) / 2 + (j - r * s->Wl);
                    buf_printf(e->b, "l1bmd $lb%lld $lm%lldv%s\n", (long long)(A + P * (j - p0) + sg * s->Q),
                               (long long)(2 * dst), emit_tail_mask(j1, j));
                }
            }
        }
        buf_printf(e->b, "nop/2\n");
    }
    if (s->W % 2) /* the odd column's long word brought a padding word along */
        for (int64_t r = 0; r < s->Erows; r++)
            buf_printf(e->b, "fpassa $s0 $m%lld\n", (long long)(2 * scr + r * s->Ew + s->eo + s->W));
}

/* plane pa's output rows from the scratch */
static void fold(Em *e, const MNStencil *s, const MNValue *y, int64_t pa, int64_t scr) {
    int64_t groups = num_cdiv(s->OW, 4), G = groups < 32 ? groups : 32, ybase = pa * s->Ro * s->Wlo;
    const char *yb = y->loc == MN_LOC_LM1 ? "n" : "m";
    char at[40], src[64], stride[24];
    if (s->sw > 1)
        snprintf(stride, sizeof stride, "v%lld", (long long)s->sw);
    else
        snprintf(stride, sizeof stride, "v");
    for (int64_t ro = 0; ro < s->Ro; ro++)
        for (int64_t g0 = 0; g0 < groups; g0 += G) {
            int64_t gn = groups - g0 < G ? groups - g0 : G;
            for (int64_t ih = 0; ih < s->kh; ih++)
                for (int64_t iw = 0; iw < s->kw; iw++) {
                    int64_t er = s->ht + ro * s->sh - s->pt + ih * s->dh;
                    for (int64_t j = 0; j < gn; j++) {
                        int64_t ow0 = 4 * (g0 + j);
                        int64_t word = 2 * scr + er * s->Ew + (s->eo - s->pl) + ow0 * s->sw + iw * s->dw;
                        snprintf(src, sizeof src, "$m%lld%s", (long long)word, stride);
                        if (ih == 0 && iw == 0)
                            buf_printf(e->b, "fpassa %s $r%lldv\n", src, (long long)(4 * j));
                        else
                            buf_printf(e->b, "%s $r%lldv %s $r%lldv\n", s->avg ? "fvadd" : "fmax", (long long)(4 * j),
                                       src, (long long)(4 * j));
                    }
                    if (gn < 2) buf_printf(e->b, "nop\n");
                }
            if (s->avg) {
                for (int64_t j = 0; j < gn; j++)
                    buf_printf(e->b, "fvmul $r%lldv $s6 $r%lldv\n", (long long)(4 * j), (long long)(4 * j));
                if (gn < 2) buf_printf(e->b, "nop\n");
            }
            for (int64_t j = 0; j < gn; j++) {
                int64_t ow0 = 4 * (g0 + j), room = 2 * s->Wlo - ow0;
                static const char *tail[4] = {"/0000", "/1000", "/1100", "/1110"};
                buf_printf(e->b, "fpassa $r%lldv $%s%sv%s\n", (long long)(4 * j), yb,
                           emit_at(e, y, ybase + ro * s->Wlo + ow0 / 2, at), room >= 4 ? "" : tail[room]);
            }
            buf_printf(e->b, "nop/2\n"); /* the next reads of LM0 (scratch) may follow a write of it */
        }
}

void emit_stencil(Em *e, const MNNode *n, const Walk *wk) {
    MNStencil s;
    if (!geometry(e->c, n, &s)) die("node '%s' is no stencil", n->name);
    int64_t scr = wk->scr[wk->pos];
    konst(e, "f", s.avg ? 0.0 : -INFINITY, 0);
    if (s.avg) konst(e, "f", 1.0 / (double)(s.kh * s.kw), 3);
    buf_printf(e->b, "nop\n");
    for (int64_t t = 0; t < s.scratch_lw; t += 4)
        buf_printf(e->b, "lpassa $ls0 $lm%lldv\n", (long long)(2 * (scr + t)));
    buf_printf(e->b, "nop/2\n");
    for (int64_t pa = 0; pa < s.N * s.CA; pa++) {
        build_rows(e, &s, n->in[0], pa, scr);
        pad_outside(e, &s, scr);
        buf_printf(e->b, "nop/2\n");
        fold(e, &s, n->out[0], pa, scr);
    }
}

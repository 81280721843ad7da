/* Stencils: 2-D pools over images spread across the machine, without index tables.
 *
 * A pool's output element reads a small window of one image plane (one batch entry and
 * channel). The window path (emitter/window.c) broadcasts an L1B's whole input into every
 * PE and picks each tap through a per-PE index table, so an image larger than a PE's
 * scratch, or spread over L2Bs, gets no program, and the tables cost DRAM traffic. A
 * stencil instead lays each plane out in bands of rows:
 *
 *   planes (N, C)  C over Q positions within the L1B, then the L1Bs and the L2Bs, the
 *                  rest (and N) as addresses: every plane sits on the PEs of one L1B;
 *   rows (H)       B = P / Q bands of R consecutive rows, one band per PE position of
 *                  the plane (peid = band * Q + q), the R rows as addresses;
 *   columns (W)    in the PE, two floats per long word.
 *
 * The output has the same bands with Ro = R / s rows each, so band b of the output reads
 * band b of the input plus a halo of ht rows above and hb below, which come from the
 * PEs of the neighbouring bands of the same L1B, through its L1BM (emitter/stencil.c).
 * Each PE then builds its rows and halos, with the padding value around them, in an LM0
 * scratch and folds every tap with the same instruction on every PE: no table, and no
 * data crossing L1Bs. B is chosen to minimise the fullest PE's work (planes per PE times
 * rows per band); a stencil needs the input's layout demanded of its producer.
 *
 * Taken: MaxPool (without the Indices output) and AveragePool whose windows all have
 * the same count (no padding read, or count_include_pad with every window inside the
 * padded image), 2-D, float. */
#include "plan.h"
#include "num.h"
#include "ops.h"
#include <string.h>

static bool pow2(int64_t x) { return x > 0 && !(x & (x - 1)); }

/* the geometry for B bands; false when its scratch would be too large */
static bool with_bands(MNStencil *s, const MNMachine *m, int64_t B) {
    int64_t P = (int64_t)m->mab_per_l1b * m->pe_per_mab;
    s->B = B;
    s->Q = P / B;
    s->Ro = num_cdiv(s->OH, B);
    if (s->Ro * s->sh * B < s->H) s->Ro = num_cdiv(s->H, B * s->sh);
    s->R = s->Ro * s->sh;
    s->Wl = num_cdiv(s->W, 2);
    s->Wlo = num_cdiv(s->OW, 2);
    s->ht = s->pt > 0 ? s->pt : 0;
    int64_t below = (s->kh - 1) * s->dh - s->pt - s->sh + 1;
    s->hb = below > 0 ? below : 0;
    s->fl1 = num_pow2_at_least(num_cdiv(s->C, s->Q), m->l1b_per_l2b);
    s->fl2 = num_pow2_at_least(num_cdiv(s->C, s->Q * s->fl1), m->n_l2b);
    s->CA = num_cdiv(s->C, s->Q * s->fl1 * s->fl2);
    s->eo = (s->pl + 1) / 2 * 2;
    int64_t groups = num_cdiv(s->OW, 4) * 4, last = s->eo - s->pl + (groups - 1) * s->sw + (s->kw - 1) * s->dw + 1;
    int64_t width = s->eo + 8 * num_cdiv(s->Wl, 4); /* the padding rewrites whole steps of a row's data */
    if (last > width) width = last;
    s->Ew = num_cdiv(width, 4) * 4;
    s->Erows = s->ht + s->R + s->hb;
    s->scratch_lw = num_cdiv(s->Erows * s->Ew / 2, 4) * 4;
    return s->scratch_lw <= m->lm0_lw / 4 && m->l1bm_lw / P >= 8; /* L1BM: a guard band each side, rows between */
}

bool plan_stencil(const MNNode *n, const MNMachine *m, MNStencil *s) {
    memset(s, 0, sizeof *s);
    if (n->op != OP_MaxPool && n->op != OP_AveragePool) return false;
    if (n->nin < 1 || !n->in[0] || n->nout < 1 || !n->out[0]) return false;
    if (n->op == OP_MaxPool && n->nout > 1 && n->out[1] && n->out[1]->nuses) return false; /* Indices */
    const MNValue *x = n->in[0], *y = n->out[0];
    if (x->type.rank != 4 || y->type.rank != 4 || x->dtype != MN_DT_Float || y->dtype != MN_DT_Float) return false;
    int64_t P = (int64_t)m->mab_per_l1b * m->pe_per_mab;
    if (m->pe_per_mab != 4 || !pow2(m->mab_per_l1b) || !pow2(m->l1b_per_l2b) || !pow2(m->n_l2b)) return false;
    MNWindow2 w;
    if (!plan_window_2d(n, NULL, &x->type, &y->type, &w)) return false;
    const int64_t *k = w.k, *st = w.s, *d = w.d, *pb = w.pb, *pe = w.pe;
    s->avg = n->op == OP_AveragePool;
    s->N = x->type.dims[0], s->C = x->type.dims[1], s->H = x->type.dims[2], s->W = x->type.dims[3];
    s->OH = y->type.dims[2], s->OW = y->type.dims[3];
    s->kh = k[0], s->kw = k[1], s->sh = st[0], s->sw = st[1], s->dh = d[0], s->dw = d[1];
    s->pt = pb[0], s->pl = pb[1];
    if (s->N < 1 || s->C < 1 || s->H < 1 || s->W < 1 || s->OH < 1 || s->OW < 1 || s->pt < 0 || s->pl < 0) return false;
    if (s->avg) { /* one count for every window: 1 / (kh kw) */
        bool inc = ir_attr_int(n, "count_include_pad", 0) != 0;
        int64_t lo_h = inc ? -pb[0] : 0, hi_h = inc ? s->H + pe[0] : s->H;
        int64_t lo_w = inc ? -pb[1] : 0, hi_w = inc ? s->W + pe[1] : s->W;
        if (-s->pt < lo_h || -s->pl < lo_w || (s->OH - 1) * s->sh - s->pt + (s->kh - 1) * s->dh >= hi_h ||
            (s->OW - 1) * s->sw - s->pl + (s->kw - 1) * s->dw >= hi_w)
            return false;
    }
    /* the fullest PE's work: planes times (taps over its output rows, and building its rows) */
    double best = -1;
    int64_t bestB = 0;
    for (int64_t B = 1; B <= P; B *= 2) {
        MNStencil t = *s;
        if (!with_bands(&t, m, B)) continue;
        double planes = (double)(t.N * t.CA);
        double work = planes * ((double)t.Ro * (double)num_cdiv(t.OW, 4) * (double)(t.kh * t.kw) +
                                (double)t.Erows * (double)(2 * num_cdiv(t.Wl, 4) + 2));
        if (best < 0 || work < best) {
            best = work;
            bestB = B;
        }
    }
    return bestB && with_bands(s, m, bestB);
}

/* subaxis helpers */
static void sub(MNLayout *l, int d, int64_t size, int64_t stride, MNLevel lv) {
    if (size <= 1 && lv != LV_ADDR) return;
    l->sub[d][l->nsub[d]++] = (MNSubaxis){size, (int32_t)stride, (uint8_t)lv};
}

void plan_stencil_layout(const MNStencil *s, const MNMachine *m, bool out, MNLayout *l) {
    int64_t rows = out ? s->Ro : s->R, wl = out ? s->Wlo : s->Wl;
    memset(l, 0, sizeof *l);
    l->rank = 4;
    l->shape[0] = s->N, l->shape[1] = s->C;
    l->shape[2] = out ? s->OH : s->H, l->shape[3] = out ? s->OW : s->W;
    int64_t M = m->mab_per_l1b;
    sub(l, 0, s->N, s->CA * rows * wl, LV_ADDR);
    sub(l, 1, s->CA, rows * wl, LV_ADDR);
    sub(l, 1, s->fl2, 1, LV_L2B);
    sub(l, 1, s->fl1, 1, LV_L1B);
    if (s->Q <= 4) { /* band = m (4 / Q) + p / Q, plane position q = p mod Q */
        sub(l, 1, s->Q, 1, LV_PE);
        sub(l, 2, M, 1, LV_MAB);
        sub(l, 2, 4 / s->Q, s->Q, LV_PE);
    } else { /* band = m / (Q / 4), q = (m mod Q / 4) 4 + p */
        sub(l, 1, s->Q / 4, 1, LV_MAB);
        sub(l, 1, 4, 1, LV_PE);
        sub(l, 2, M * 4 / s->Q, s->Q / 4, LV_MAB);
    }
    sub(l, 2, rows, wl, LV_ADDR);
    sub(l, 3, wl, 1, LV_ADDR);
    sub(l, 3, 2, 1, LV_W);
    if (s->fl1 == 1) l->bcast |= (uint8_t)(1u << LV_L1B);
    if (s->fl2 == 1) l->bcast |= (uint8_t)(1u << LV_L2B);
}

bool plan_stencil_node(const MNNode *n, const MNMachine *m, MNStencil *s, MNLayout *in, MNLayout *out) {
    if (!plan_stencil(n, m, s)) return false;
    plan_stencil_layout(s, m, false, in);
    plan_stencil_layout(s, m, true, out);
    char err[200];
    return layout_valid(in, m, 4, err, sizeof err) && layout_valid(out, m, 4, err, sizeof err);
}

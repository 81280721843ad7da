/* mnemu's MV unit: one MV line moves long words between the DRAMs, PDMs and L2BMs of
 * the groups (docs/vsm.md 5.6) and is timed on the machine's ports (isa/mv.h).
 *
 * The data moves at issue, as in the public emulator; what is in flight is remembered
 * so that reading a destination before the MV completes is a hazard. Every source long
 * word is read before any is written (an MV whose ranges overlap copies the old data),
 * by collecting the writes first. Definedness (--strict) travels with the data; a
 * reduction's result is defined when all it reduces are. */
#include "emu_impl.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static uint64_t *mem(Emu *e, int kind, int g, int l, uint64_t a) {
    switch (kind) {
    case K_DRAM: return e->dram + (size_t)g * (size_t)e->m.dram_lw + a;
    case K_PDM: return e->pdm + (size_t)g * (size_t)e->m.pdm_lw + a;
    default: return e->l2bm + (size_t)(g * e->m.l2b_per_group + l) * (size_t)e->m.l2bm_lw + a;
    }
}

static uint8_t *def(Emu *e, int kind, int g, int l, uint64_t a) {
    if (!e->strict) return NULL;
    switch (kind) {
    case K_DRAM: return e->dram_def + (size_t)g * (size_t)e->m.dram_lw + a;
    case K_PDM: return e->pdm_def + (size_t)g * (size_t)e->m.pdm_lw + a;
    default: return e->l2bm_def + (size_t)(g * e->m.l2b_per_group + l) * (size_t)e->m.l2bm_lw + a;
    }
}

typedef struct { /* one long word read: its value and definedness */
    uint64_t v;
    uint8_t d;
} Word;

static Word get(Emu *e, int kind, int g, int l, uint64_t a) {
    uint8_t *d = def(e, kind, g, l, a);
    return (Word){*mem(e, kind, g, l, a), d ? *d : 1};
}

static void put(Emu *e, int kind, int g, int l, uint64_t a, Word w) {
    if (e->nmvw == e->capmvw) {
        e->capmvw = e->capmvw ? 2 * e->capmvw : 4096;
        e->mvw = xrealloc(e->mvw, sizeof *e->mvw * e->capmvw);
    }
    e->mvw[e->nmvw++] = (MvWrite){mem(e, kind, g, l, a), def(e, kind, g, l, a), w.v, w.d};
}

/* op over the L2BMs of groups [g0, g1) and L2Bs [l0, l1), in l2bid order, at address a */
static Word reduce(Emu *e, int op, int g0, int g1, int l0, int l1, uint64_t a) {
    Word r = {0, 1};
    bool first = true;
    for (int g = g0; g < g1; g++)
        for (int l = l0; l < l1; l++) {
            Word w = get(e, K_L2BM, g, l, a);
            r.v = first ? w.v : emu_rrn(op, r.v, w.v);
            r.d &= w.d;
            first = false;
        }
    return r;
}

/* every L2BM gets w at address a */
static void put_all_l2bm(Emu *e, uint64_t a, Word w) {
    for (int g = 0; g < e->ng; g++)
        for (int l = 0; l < e->m.l2b_per_group; l++) put(e, K_L2BM, g, l, a, w);
}

/* the DRAM long word of index i of an operand read through the DAR of group g ($di) */
static bool dar_addr(Emu *e, const VExpr *x, const VOperand *o, int g, uint64_t i, uint64_t *a) {
    uint64_t k = x->nd ? x->nd : 1, q = i / MV_DAR_PIECE, entry = o->addr + q / k;
    uint64_t base = (uint64_t)e->dar[(size_t)g * MV_DAR_ENTRIES + entry] * MV_DAR_PIECE + MV_DAR_PIECE * (q % k);
    if (base + MV_DAR_PIECE > (uint64_t)e->m.dram_lw)
        return emu_fail(e, "DAR entry %" PRIu64 " of group %d points past the DRAM (long word %" PRIu64 ")", entry, g,
                        base);
    *a = base + i % MV_DAR_PIECE;
    return true;
}

static bool move(Emu *e, const VExpr *x, const MvShape *sh) {
    const VOperand *s = &x->src[0], *d = &x->dst[0];
    int G = e->ng, L = e->m.l2b_per_group, P = 64 / G, op = x->rrn;
    uint64_t N = x->size, A = s->addr, B = d->addr, U = N / 64;
    switch (sh->form) {
    case MV_P_PAR:
    case MV_P_SINGLE:
        for (int g = 0; g < G; g++) {
            if (sh->form == MV_P_SINGLE && g != sh->gsrc) continue;
            int h = sh->form == MV_P_SINGLE ? sh->gdst : g;
            for (uint64_t i = 0; i < N; i++) {
                uint64_t a = A + i, b = B + i;
                if ((sh->dar == 1 && !dar_addr(e, x, s, g, i, &a)) || (sh->dar == 2 && !dar_addr(e, x, d, h, i, &b))) {
                    e->nmvw = 0;
                    return false;
                }
                put(e, d->kind, h, sh->ldst, b, get(e, s->kind, g, sh->lsrc, a));
            }
        }
        break;
    case MV_B2:
    case MV_R2: {
        for (int g = 0; g < G; g++) {
            if (!mv_in_group(sh, g)) continue;
            for (uint64_t i = 0; i < N; i++)
                if (sh->form == MV_B2)
                    for (int l = 0; l < L; l++) put(e, K_L2BM, g, l, B + i, get(e, K_DRAM, g, 0, A + i));
                else
                    put(e, K_DRAM, g, 0, B + i, reduce(e, op, g, g + 1, 0, L, A + i));
        }
        break;
    }
    case MV_B_PDM:
        for (uint64_t i = 0; i < N; i++) put_all_l2bm(e, B + i, get(e, K_PDM, sh->gsrc, 0, A + i));
        break;
    case MV_R_PDM:
        for (uint64_t i = 0; i < N; i++) put(e, K_PDM, sh->gdst, 0, B + i, reduce(e, op, 0, G, 0, L, A + i));
        break;
    case MV_B_DRAM:
    case MV_R_DRAM:
        for (uint64_t u = 0; u < U; u++)
            for (int k = 0; k < G; k++)
                for (int j = 0; j < P; j++) {
                    uint64_t dram = P * u + (uint64_t)j, l2bm = 64 * u + (uint64_t)(P * k + j);
                    if (sh->form == MV_B_DRAM)
                        put_all_l2bm(e, B + l2bm, get(e, K_DRAM, k, 0, A + dram));
                    else
                        put(e, K_DRAM, k, 0, B + dram, reduce(e, op, 0, G, 0, L, A + l2bm));
                }
        break;
    case MV_B4:
    case MV_R4:
        for (uint64_t u = 0; u < U; u++)
            for (int k = 0; k < G; k++)
                for (int l = 0; l < L; l++)
                    for (int j = 0; j < P; j++) {
                        uint64_t dram = (uint64_t)(P * L) * u + (uint64_t)(P * l + j),
                                 l2bm = 64 * u + (uint64_t)(P * k + j);
                        if (sh->form == MV_B4) {
                            Word w = get(e, K_DRAM, k, 0, A + dram);
                            for (int g = 0; g < G; g++) put(e, K_L2BM, g, l, B + l2bm, w);
                        } else
                            put(e, K_DRAM, k, 0, B + dram, reduce(e, op, 0, G, l, l + 1, A + l2bm));
                    }
        break;
    case MV_D_P2D:
    case MV_D_D2P: {
        bool out = sh->form == MV_D_P2D;
        int g = out ? sh->gsrc : sh->gdst;
        uint64_t pa = out ? A : B, da = out ? B : A;
        for (uint64_t u = 0; u < U; u++)
            for (int k = 0; k < G; k++)
                for (int j = 0; j < P; j++) {
                    uint64_t p = pa + 64 * u + (uint64_t)(P * k + j), dr = da + P * u + (uint64_t)j;
                    if (out)
                        put(e, K_DRAM, k, 0, dr, get(e, K_PDM, g, 0, p));
                    else
                        put(e, K_PDM, g, 0, p, get(e, K_DRAM, k, 0, dr));
                }
        break;
    }
    case MV_D_P2L:
    case MV_D_L2P: {
        bool out = sh->form == MV_D_P2L;
        int g = out ? sh->gsrc : sh->gdst;
        uint64_t pa = out ? A : B, la = out ? B : A, per = (uint64_t)(16 * G * L);
        for (uint64_t u = 0; u < N / per; u++)
            for (int m = 0; m < G * L; m++)
                for (int j = 0; j < 16; j++) {
                    uint64_t p = pa + per * u + (uint64_t)(16 * m + j), lc = la + 16 * u + (uint64_t)j;
                    if (out)
                        put(e, K_L2BM, m / L, m % L, lc, get(e, K_PDM, g, 0, p));
                    else
                        put(e, K_PDM, g, 0, p, get(e, K_L2BM, m / L, m % L, lc));
                }
        break;
    }
    default: die("MV form %d has no data movement", (int)sh->form);
    }
    for (size_t i = 0; i < e->nmvw; i++) {
        *e->mvw[i].at = e->mvw[i].v;
        if (e->mvw[i].def) *e->mvw[i].def = e->mvw[i].d;
    }
    e->nmvw = 0;
    return true;
}

bool emu_exec_mv(Emu *e, const VExpr *x) {
    MvShape sh;
    char why[240];
    if (!mv_shape(x, &e->m, &sh, why, sizeof why)) return emu_fail(e, "%s", why);
    const VOperand *s = &x->src[0], *d = &x->dst[0];
    const char *name = vsm_insns[x->insn].name;
    /* issue: one MV every mv_issue_steps steps */
    int64_t gap = e->step - e->last_mv_step;
    if (gap < e->m.mv_issue_steps) {
        int64_t stall = (e->m.mv_issue_steps - gap) * e->m.cycles_per_step;
        e->st.stall_cycles += stall;
        e->cycle += stall;
    }
    e->last_mv_step = e->step;
    int k = 0; /* what has completed no longer matters */
    for (int i = 0; i < e->ninflight; i++)
        if (e->inflight[i].done > e->cycle) e->inflight[k++] = e->inflight[i];
    e->ninflight = k;
    int64_t lo, n;
    mv_range(x, &sh, &e->m, false, &lo, &n);
    if (s->kind == K_L2BM && !emu_check_upper_read(e, K_L2BM, (uint32_t)lo, (uint32_t)n, name)) return false;
    if (s->kind != K_L2BM && !emu_check_inflight(e, s->kind, sh.gsrc, lo, n, name)) return false;
    if (!move(e, x, &sh)) return false;
    mv_range(x, &sh, &e->m, true, &lo, &n);
    int64_t done = mv_clock_issue(&e->clk, &e->m, x, &sh, e->cycle);
    if (e->ninflight == e->capinflight) {
        e->capinflight = e->capinflight ? e->capinflight * 2 : 16;
        e->inflight = xrealloc(e->inflight, sizeof(Inflight) * (size_t)e->capinflight);
    }
    e->inflight[e->ninflight++] = (Inflight){d->kind, sh.gdst, lo, lo + n, done};
    if (x->tag) e->tag_done[x->tag] = done;
    const MvClock *c = &e->clk;
    e->st.groups = e->ng;
    e->st.dram_bytes = 0;
    for (int g = 0; g < e->ng; g++) {
        e->st.dram_lw[g] = c->lw[mv_port_dram(c, g)];
        e->st.dram_busy[g] = c->busy[mv_port_dram(c, g)];
        e->st.pdm_lw[g] = c->lw[mv_port_pdm(c, g)];
        e->st.pdm_busy[g] = c->busy[mv_port_pdm(c, g)];
        e->st.dram_bytes += 8 * e->st.dram_lw[g];
        for (int h = 0; h < e->ng; h++)
            if (c->busy[mv_port_link(c, g, h)] > e->st.link_busy_max)
                e->st.link_busy_max = c->busy[mv_port_link(c, g, h)];
    }
    return true;
}

bool emu_exec_dar(Emu *e, const VExpr *x) {
    size_t G = (size_t)e->ng;
    if (x->insn == VI_l2bmdarw) { /* what DARBUF holds becomes the DAR */
        memcpy(e->dar, e->darbuf, sizeof(uint32_t) * MV_DAR_ENTRIES * G);
        return true;
    }
    const VOperand *s = &x->src[0], *d = &x->dst[0];
    if (x->ndst != 1 || s->kind != K_L2BM || d->kind != K_DAR || s->group >= 0)
        return emu_fail(e, "l2bmdars moves an L2BM of every group into its DARBUF: l2bmdars $lcA@.l $darB");
    int l = s->l2b > 0 ? s->l2b : 0;
    if (l >= e->m.l2b_per_group) return emu_fail(e, "L2B selector out of range");
    enum { LW = 64 }; /* long words a step: two entries each, the first in the upper word */
    if ((uint64_t)s->addr + LW > (uint64_t)e->m.l2bm_lw)
        return emu_fail(e, "L2BM range [%u, %u) is outside the L2BM", s->addr, s->addr + LW);
    if ((uint64_t)d->addr + 2 * LW > MV_DAR_ENTRIES)
        return emu_fail(e, "DAR entries [%u, %u) are outside the %d-entry DAR", d->addr, d->addr + 2 * LW,
                        MV_DAR_ENTRIES);
    if (!emu_check_upper_read(e, K_L2BM, s->addr, LW, "l2bmdars")) return false;
    for (size_t g = 0; g < G; g++)
        for (uint32_t i = 0; i < LW; i++) {
            Word w = get(e, K_L2BM, (int)g, l, s->addr + i);
            if (!w.d)
                return emu_fail(e, "l2bmdars: L2BM long word %u of group %zu holds undefined data (a DRAM address)",
                                s->addr + i, g);
            e->darbuf[g * MV_DAR_ENTRIES + d->addr + 2 * i] = (uint32_t)(w.v >> 32);
            e->darbuf[g * MV_DAR_ENTRIES + d->addr + 2 * i + 1] = (uint32_t)w.v;
        }
    return true;
}

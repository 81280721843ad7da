/* MV forms and the port clock: see mv.h and docs/vsm.md 5.6.
 *
 * A form is decided by the instruction and the kinds of its two operands; whether each
 * names a group decides between the parallel and the single mvp. The loads are those
 * of the document's port table: the memory each side reads or writes in every group it
 * touches, and a link g -> h once per long word that arrives in h from g. */
#include "mv.h"
#include "diag.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static bool no(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool no(char *why, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return false;
}

static int64_t mem_lw(const MNMachine *m, int kind) {
    return kind == K_DRAM ? m->dram_lw : kind == K_PDM ? m->pdm_lw : kind == K_L2BM ? m->l2bm_lw : 0;
}

static bool is_mem(int kind) { return kind == K_DRAM || kind == K_PDM || kind == K_L2BM; }

static bool range_ok(const VOperand *o, int64_t span, const MNMachine *m, char *why, size_t n) {
    int64_t size = mem_lw(m, o->kind), hi = (int64_t)o->addr + span;
    if (hi <= size) return true;
    if (o->kind == K_DRAM)
        return no(why, n, "DRAM range [%u, %" PRId64 ") is outside the %" PRId64 "-long-word DRAM", o->addr, hi, size);
    return no(why, n, "%s range [%u, %" PRId64 ") is outside the %s (%" PRId64 " long words)", vsm_kind_name(o->kind),
              o->addr, hi, vsm_kind_name(o->kind), size);
}

/* the form of x from its instruction and operand kinds; the unit and spans follow */
static bool form_of(const VExpr *x, MvShape *sh, char *why, size_t n) {
    const VOperand *s = &x->src[0], *d = &x->dst[0];
    const char *name = vsm_insns[x->insn].name;
    int ks = s->kind, kd = d->kind;
    bool gs = s->group >= 0, gd = d->group >= 0;
    if (!is_mem(ks) || !is_mem(kd)) return no(why, n, "MV moves between $d (DRAM), $p (PDM) and $lc (L2BM)");
    if (ks == K_L2BM && s->l2b >= 0 && (x->insn != VI_mvp))
        return no(why, n, "%s reads every L2BM: its $lc takes no L2B selector", name);
    if (kd == K_L2BM && d->l2b >= 0 && (x->insn != VI_mvp))
        return no(why, n, "%s writes every L2BM: its $lc takes no L2B selector", name);
    switch (x->insn) {
    case VI_mvp:
        if (ks == K_DRAM && kd == K_DRAM) return no(why, n, "mvp does not move DRAM to DRAM");
        if (ks == K_L2BM && kd == K_L2BM) return no(why, n, "mvp does not move L2BM to L2BM (move through a PDM)");
        if (gs != gd) return no(why, n, "name a group on both sides (single mvp) or on neither (parallel mvp)");
        if (!gs && ks != K_L2BM && kd != K_L2BM)
            return no(why, n, "a parallel mvp moves between an L2BM and its group's DRAM or PDM");
        sh->form = gs ? MV_P_SINGLE : MV_P_PAR;
        break;
    case VI_mvb2:
    case VI_mvr2: {
        bool b = x->insn == VI_mvb2;
        if (b && (ks != K_DRAM || kd != K_L2BM)) return no(why, n, "mvb2 broadcasts DRAM into both L2BMs of a group");
        if (!b && (ks != K_L2BM || kd != K_DRAM)) return no(why, n, "mvr2 reduces the L2BMs of a group into DRAM");
        if (gs && gd && s->group != d->group) return no(why, n, "%s stays in one group: its two groups differ", name);
        sh->form = b ? MV_B2 : MV_R2;
        break;
    }
    case VI_mvb:
        if (kd != K_L2BM || gd) return no(why, n, "mvb writes every L2BM ($lcB, no selector)");
        if (ks == K_PDM && !gs) return no(why, n, "mvb from a PDM names the PDM's group ($pA@g)");
        if (ks == K_DRAM && gs) return no(why, n, "mvb from DRAM gathers every group's DRAM: $dA takes no group");
        sh->form = ks == K_PDM ? MV_B_PDM : MV_B_DRAM;
        break;
    case VI_mvb4:
        if (ks != K_DRAM || gs || kd != K_L2BM || gd)
            return no(why, n, "mvb4 moves every DRAM into every L2BM: $dA $lcB, no selectors");
        sh->form = MV_B4;
        break;
    case VI_mvr:
    case VI_mvr4:
        if (x->insn == VI_mvr4 && (ks != K_L2BM || gs || kd != K_DRAM || gd))
            return no(why, n, "mvr4 reduces every L2BM into every DRAM: $lcA $dB, no selectors");
        if (ks != K_L2BM || gs) return no(why, n, "mvr reduces every L2BM ($lcA, no selector)");
        if (kd == K_PDM && !gd) return no(why, n, "mvr into a PDM names the PDM's group ($pB@g)");
        if (kd == K_DRAM && gd) return no(why, n, "mvr into DRAM scatters over every group's DRAM: $dB takes no group");
        if (kd == K_L2BM) return no(why, n, "mvr reduces every L2BM into a PDM or the DRAMs");
        sh->form = x->insn == VI_mvr4 ? MV_R4 : kd == K_PDM ? MV_R_PDM : MV_R_DRAM;
        break;
    case VI_mvd: {
        const VOperand *p = ks == K_PDM ? s : d, *o = ks == K_PDM ? d : s;
        if ((ks == K_PDM) == (kd == K_PDM)) return no(why, n, "mvd moves between one PDM and every DRAM or every L2BM");
        if (p->group < 0) return no(why, n, "mvd names the PDM's group ($pA@g)");
        if (o->group >= 0)
            return no(why, n, "mvd reaches every %s: its operand takes no group", vsm_kind_name(o->kind));
        sh->form = o->kind == K_DRAM ? (ks == K_PDM ? MV_D_P2D : MV_D_D2P) : (ks == K_PDM ? MV_D_P2L : MV_D_L2P);
        break;
    }
    default: return no(why, n, "not an MV");
    }
    if ((x->insn == VI_mvr || x->insn == VI_mvr2 || x->insn == VI_mvr4) && x->rrn == RRN_NONE)
        return no(why, n, "%s needs a reduction", name);
    bool di = (ks == K_DRAM && s->amode == A_TIND) || (kd == K_DRAM && d->amode == A_TIND);
    if (di && x->insn != VI_mvp) return no(why, n, "only mvp reads or writes DRAM through the DAR ($di)");
    if (x->nd && !di) return no(why, n, "nd<k> goes with a $di operand");
    sh->dar = !di ? 0 : ks == K_DRAM && s->amode == A_TIND ? 1 : 2;
    return true;
}

bool mv_shape(const VExpr *x, const MNMachine *m, MvShape *sh, char *why, size_t n) {
    *sh = (MvShape){0};
    if (x->ndst != 1 || x->nsrc != 1) return no(why, n, "an MV line has one source and one destination");
    if (!form_of(x, sh, why, n)) return false;
    const VOperand *s = &x->src[0], *d = &x->dst[0];
    int G = m->groups, L = m->l2b_per_group;
    for (int i = 0; i < 2; i++) {
        const VOperand *o = i ? d : s;
        if (o->group >= G) return no(why, n, "group selector out of range (%d groups)", G);
        if (o->l2b >= L) return no(why, n, "L2B selector out of range (%d per group)", L);
    }
    if (64 % G) return no(why, n, "MV forms need a group count dividing 64");
    int64_t N = x->size, P = 64 / G;
    sh->unit = sh->form == MV_D_P2L || sh->form == MV_D_L2P ? 16 * G * L : 64;
    if (sh->unit < 64) sh->unit = 64;
    if (N % sh->unit)
        return no(why, n, "MV sizes are multiples of %d long words for %s (got %" PRId64 ")", sh->unit,
                  vsm_insns[x->insn].name, N);
    sh->gsrc = s->group;
    sh->gdst = d->group;
    sh->lsrc = s->l2b > 0 ? s->l2b : 0;
    sh->ldst = d->l2b > 0 ? d->l2b : 0;
    sh->src_span = sh->dst_span = N;
    switch (sh->form) {
    case MV_B_DRAM: sh->src_span = N / 64 * P; break;
    case MV_B4: sh->src_span = N / 64 * P * L; break;
    case MV_R_DRAM: sh->dst_span = N / 64 * P; break;
    case MV_R4: sh->dst_span = N / 64 * P * L; break;
    case MV_D_P2D: sh->dst_span = N / 64 * P; break;
    case MV_D_D2P: sh->src_span = N / 64 * P; break;
    case MV_D_P2L: sh->dst_span = N / (G * L); break;
    case MV_D_L2P: sh->src_span = N / (G * L); break;
    default: break;
    }
    sh->dram = s->kind == K_DRAM || d->kind == K_DRAM;
    if (sh->dar) { /* the DRAM addresses come from the DAR at run time: only the entries are checked here */
        const VOperand *o = sh->dar == 1 ? s : d;
        int64_t k = x->nd ? x->nd : 1, entries = (N / MV_DAR_PIECE + k - 1) / k;
        if ((int64_t)o->addr + entries > MV_DAR_ENTRIES)
            return no(why, n, "DAR entries [%u, %" PRId64 ") are outside the %d-entry DAR", o->addr, o->addr + entries,
                      MV_DAR_ENTRIES);
    }
    return (sh->dar == 1 || range_ok(s, sh->src_span, m, why, n)) &&
           (sh->dar == 2 || range_ok(d, sh->dst_span, m, why, n));
}

void mv_range(const VExpr *x, const MvShape *sh, const MNMachine *m, bool dst, int64_t *lo, int64_t *n) {
    const VOperand *o = dst ? &x->dst[0] : &x->src[0];
    if (sh->dar == (dst ? 2 : 1))
        *lo = 0, *n = m->dram_lw;
    else
        *lo = o->addr, *n = dst ? sh->dst_span : sh->src_span;
}

void mv_clock_init(MvClock *c, const MNMachine *m) {
    c->ng = m->groups;
    c->nl = m->l2b_per_group;
    c->nports = 2 * c->ng + c->ng * c->nl + c->ng * c->ng;
    c->free = xcalloc((size_t)c->nports, sizeof *c->free);
    c->busy = xcalloc((size_t)c->nports, sizeof *c->busy);
    c->lw = xcalloc((size_t)c->nports, sizeof *c->lw);
    c->rate = xcalloc((size_t)c->nports, sizeof *c->rate);
    for (int g = 0; g < c->ng; g++) {
        c->rate[mv_port_dram(c, g)] = m->bw_dram_l2bm;
        c->rate[mv_port_pdm(c, g)] = m->bw_pdm;
        for (int l = 0; l < c->nl; l++) c->rate[mv_port_l2bm(c, g * c->nl + l)] = m->bw_l2bm_mv;
        for (int h = 0; h < c->ng; h++) c->rate[mv_port_link(c, g, h)] = m->bw_cross_group;
    }
}

void mv_clock_free(MvClock *c) {
    free(c->free);
    free(c->busy);
    free(c->lw);
    free(c->rate);
    *c = (MvClock){0};
}

typedef struct {
    MvClock *c;
    int64_t at, end;
} Issue;

static void load(Issue *is, int port, int64_t lw) {
    if (lw <= 0) return;
    MvClock *c = is->c;
    int64_t start = c->free[port] > is->at ? c->free[port] : is->at;
    int64_t dur = (int64_t)((double)lw / c->rate[port]);
    if ((double)dur * c->rate[port] < (double)lw) dur++;
    c->free[port] = start + dur;
    c->busy[port] += dur;
    c->lw[port] += lw;
    if (start + dur > is->end) is->end = start + dur;
}

/* the port of one side's memory in group g (L2BM: L2B l of it) */
static int mem_port(const MvClock *c, int kind, int g, int l) {
    return kind == K_DRAM ? mv_port_dram(c, g) : kind == K_PDM ? mv_port_pdm(c, g) : mv_port_l2bm(c, g * c->nl + l);
}

static void every_l2bm(Issue *is, int64_t lw) {
    for (int m = 0; m < is->c->ng * is->c->nl; m++) load(is, mv_port_l2bm(is->c, m), lw);
}

/* a link load from g to every other group (to g from every other when `in`) */
static void links(Issue *is, int g, bool in, int64_t lw) {
    for (int h = 0; h < is->c->ng; h++)
        if (h != g) load(is, in ? mv_port_link(is->c, h, g) : mv_port_link(is->c, g, h), lw);
}

int64_t mv_clock_issue(MvClock *c, const MNMachine *m, const VExpr *x, const MvShape *sh, int64_t at) {
    Issue is = {c, at, at};
    const VOperand *s = &x->src[0], *d = &x->dst[0];
    int G = c->ng, L = c->nl;
    int64_t N = x->size;
    switch (sh->form) {
    case MV_P_PAR:
        for (int g = 0; g < G; g++) {
            load(&is, mem_port(c, s->kind, g, sh->lsrc), N);
            load(&is, mem_port(c, d->kind, g, sh->ldst), N);
        }
        break;
    case MV_P_SINGLE:
        load(&is, mem_port(c, s->kind, sh->gsrc, sh->lsrc), N);
        load(&is, mem_port(c, d->kind, sh->gdst, sh->ldst), N);
        if (sh->gsrc != sh->gdst) load(&is, mv_port_link(c, sh->gsrc, sh->gdst), N);
        break;
    case MV_B2:
    case MV_R2: {
        for (int g = 0; g < G; g++) {
            if (!mv_in_group(sh, g)) continue;
            load(&is, mv_port_dram(c, g), N);
            for (int l = 0; l < L; l++) load(&is, mv_port_l2bm(c, g * L + l), N);
        }
        break;
    }
    case MV_B_PDM:
        load(&is, mv_port_pdm(c, sh->gsrc), N);
        every_l2bm(&is, N);
        links(&is, sh->gsrc, false, N);
        break;
    case MV_R_PDM:
        load(&is, mv_port_pdm(c, sh->gdst), N);
        every_l2bm(&is, N);
        links(&is, sh->gdst, true, N);
        break;
    case MV_B_DRAM:
    case MV_B4:
    case MV_R_DRAM:
    case MV_R4: {
        bool to_dram = sh->form == MV_R_DRAM || sh->form == MV_R4;
        int64_t per = to_dram ? sh->dst_span : sh->src_span; /* what each DRAM gives or takes */
        every_l2bm(&is, N);
        for (int g = 0; g < G; g++) {
            load(&is, mv_port_dram(c, g), per);
            links(&is, g, to_dram, per);
        }
        break;
    }
    case MV_D_P2D:
    case MV_D_D2P:
    case MV_D_P2L:
    case MV_D_L2P: {
        bool out = sh->form == MV_D_P2D || sh->form == MV_D_P2L;
        int g = out ? sh->gsrc : sh->gdst;
        load(&is, mv_port_pdm(c, g), N);
        for (int h = 0; h < G; h++) {
            if (sh->form == MV_D_P2D || sh->form == MV_D_D2P)
                load(&is, mv_port_dram(c, h), N / G);
            else
                for (int l = 0; l < L; l++) load(&is, mv_port_l2bm(c, h * L + l), N / (G * L));
        }
        links(&is, g, !out, N / G);
        break;
    }
    default: die("MV form %d has no loads", (int)sh->form);
    }
    return is.end + (sh->dram ? m->dram_latency_cycles : m->pdm_latency_cycles);
}

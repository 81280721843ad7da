/* mnemu: executes VSM on every PE of a machine, as docs/vsm.md specifies.
 *
 * State is laid out structure-of-arrays: a PE memory is [word address][PE], so one
 * instruction touches contiguous PE rows and the per-PE work is plain loops the
 * compiler vectorises; a step decodes once for all PEs. A step runs in two phases,
 * as the hardware's VLIW bundle does: every expression reads and computes first,
 * then all results are written (masks applied), then the forwarding registers take
 * the step's outputs. Hazards and issue rules are checked against the timing model
 * and stop the run with the line, step and location. The compute units (ALU, MAU,
 * matrix unit) are in emu_units.c; emu_impl.h is what the two share. */
#include "emu_impl.h"
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

bool emu_fail(Emu *e, const char *fmt, ...) {
    char m[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    snprintf(e->err, e->errlen, "line %d: step %" PRId64 ": %s", e->cur ? e->cur->line : 0, e->step, m);
    return false;
}

static void *zalloc(size_t n) { return xcalloc(1, n); }

/* zeroed memory the kernel gives page by page as it is touched; NULL when it cannot */
static void *reserve(size_t n) {
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

Emu *emu_new(const MNMachine *m, char *err, size_t errlen) {
    Emu *e = zalloc(sizeof *e);
    e->m = *m;
    e->npe = m->n_pe;
    e->nmab = m->n_mab;
    e->nl1b = m->n_l1b;
    e->nl2b = m->n_l2b;
    e->ng = m->groups;
    e->pe_per_l1b = m->mab_per_l1b * m->pe_per_mab;
    e->l1b_per_l2b = m->l1b_per_l2b;
    size_t np = (size_t)e->npe;
    e->lmw[0] = (uint32_t)m->lm0_lw * 2;
    e->lmw[1] = (uint32_t)m->lm1_lw * 2;
    e->grfw[0] = (uint32_t)m->grf0_lw * 2;
    e->grfw[1] = (uint32_t)m->grf1_lw * 2;
    for (int i = 0; i < 2; i++) {
        e->lm[i] = zalloc(sizeof(uint32_t) * e->lmw[i] * np);
        e->grf[i] = zalloc(sizeof(uint32_t) * e->grfw[i] * np);
        e->grf_w[i] = zalloc(sizeof(int64_t) * e->grfw[i]);
        e->lm_w[i] = INT64_MIN / 2;
        e->mx[i] = zalloc(sizeof(double) * 256 * (size_t)e->nmab);
    }
    for (uint32_t i = 0; i < e->grfw[0]; i++) e->grf_w[0][i] = INT64_MIN / 2;
    for (uint32_t i = 0; i < e->grfw[1]; i++) e->grf_w[1][i] = INT64_MIN / 2;
    for (int i = 0; i < 16; i++) e->t_w[i] = INT64_MIN / 2;
    e->t = zalloc(sizeof(uint32_t) * 16 * np);
    e->omr = zalloc(sizeof(uint16_t) * 32 * np);
    for (int i = 0; i < FW_COUNT; i++) e->fwd[i] = zalloc(sizeof(uint32_t) * 16 * np);
    e->l1bm = zalloc(sizeof(uint64_t) * (size_t)m->l1bm_lw * (size_t)e->nl1b);
    e->l2bm = zalloc(sizeof(uint64_t) * (size_t)m->l2bm_lw * (size_t)e->nl2b);
    e->l1bm_w = zalloc(sizeof(int64_t) * (size_t)m->l1bm_lw);
    e->l2bm_w = zalloc(sizeof(int64_t) * (size_t)m->l2bm_lw);
    for (int64_t i = 0; i < m->l1bm_lw; i++) e->l1bm_w[i] = INT64_MIN / 2;
    for (int64_t i = 0; i < m->l2bm_lw; i++) e->l2bm_w[i] = INT64_MIN / 2;
    /* DRAM and PDM are large and mostly untouched: reserved lazily (zero pages) */
    e->dram_map_bytes = sizeof(uint64_t) * (size_t)m->dram_lw * (size_t)e->ng;
    e->pdm_map_bytes = sizeof(uint64_t) * (size_t)m->pdm_lw * (size_t)e->ng;
    e->dram = reserve(e->dram_map_bytes);
    e->pdm = reserve(e->pdm_map_bytes);
    if (!e->dram || !e->pdm) {
        snprintf(err, errlen, "cannot reserve %zu bytes of emulated DRAM and PDM",
                 e->dram_map_bytes + e->pdm_map_bytes);
        emu_free(e);
        return NULL;
    }
    mv_clock_init(&e->clk, m);
    e->dar = zalloc(sizeof(uint32_t) * MV_DAR_ENTRIES * (size_t)e->ng);
    e->darbuf = zalloc(sizeof(uint32_t) * MV_DAR_ENTRIES * (size_t)e->ng);
    for (int x = 0; x < VSM_MAX_EXPR; x++)
        for (int c = 0; c < NCYC; c++) {
            for (int w = 0; w < 4; w++) e->res[x].w[c][w] = zalloc(sizeof(uint32_t) * np);
            e->res[x].flag[c] = zalloc(np);
            for (int w = 0; w < 4; w++) e->res[x].def[c][w] = zalloc(np);
        }
    for (int s = 0; s < 3; s++)
        for (int c = 0; c < NCYC; c++)
            for (int w = 0; w < 4; w++) e->srcbuf[s][c][w] = e->src[s][c][w] = zalloc(sizeof(uint32_t) * np);
    e->zero_row = zalloc(sizeof(uint32_t) * np);
    e->tmp = zalloc(sizeof(uint32_t) * np * 4);
    Lanes *L = &e->lanes;
    L->ia = zalloc(8 * np);
    L->ib = zalloc(8 * np);
    L->io = zalloc(8 * np);
    L->fa = zalloc(8 * np);
    L->fb = zalloc(8 * np);
    L->fc = zalloc(8 * np);
    L->fo = zalloc(8 * np);
    L->lf = zalloc(np);
    vsm_cost_table(m, e->insn_steps);
    e->last_mv_step = INT64_MIN / 2;
    e->mask_entry = 0;
    e->mask_width = 2;
    return e;
}

void emu_free(Emu *e) {
    if (!e) return;
    emu_pool_free(e->pool);
    for (int i = 0; i < 2; i++) {
        free(e->lm[i]);
        free(e->grf[i]);
        free(e->grf_w[i]);
        free(e->mx[i]);
    }
    free(e->t);
    free(e->omr);
    for (int i = 0; i < FW_COUNT; i++) free(e->fwd[i]);
    free(e->l1bm);
    free(e->l2bm);
    free(e->l1bm_w);
    free(e->l2bm_w);
    free(e->inflight);
    if (e->dram) munmap(e->dram, e->dram_map_bytes);
    if (e->pdm) munmap(e->pdm, e->pdm_map_bytes);
    mv_clock_free(&e->clk);
    free(e->dar);
    free(e->darbuf);
    free(e->mvw);
    for (int x = 0; x < VSM_MAX_EXPR; x++)
        for (int c = 0; c < NCYC; c++) {
            for (int w = 0; w < 4; w++) free(e->res[x].w[c][w]);
            free(e->res[x].flag[c]);
            for (int w = 0; w < 4; w++) free(e->res[x].def[c][w]);
        }
    for (int s = 0; s < 3; s++)
        for (int c = 0; c < NCYC; c++)
            for (int w = 0; w < 4; w++) free(e->srcbuf[s][c][w]);
    free(e->zero_row);
    if (e->strict) {
        for (int i = 0; i < 2; i++) {
            free(e->lm_def[i]);
            free(e->grf_def[i]);
            free(e->mx_def[i]);
        }
        for (int i = 0; i < FW_COUNT; i++) free(e->fwd_def[i]);
        free(e->t_def);
        free(e->omr_def);
        free(e->l1bm_def);
        free(e->l2bm_def);
        free(e->one_row);
        for (int s2 = 0; s2 < 3; s2++)
            for (int c = 0; c < NCYC; c++)
                for (int w = 0; w < 4; w++) free(e->sdefbuf[s2][c][w]);
    }
    if (e->dram_def) munmap(e->dram_def, e->dram_map_bytes / 8);
    if (e->pdm_def) munmap(e->pdm_def, e->pdm_map_bytes / 8);
    free(e->tmp);
    Lanes *L = &e->lanes;
    free(L->ia);
    free(L->ib);
    free(L->io);
    free(L->fa);
    free(L->fb);
    free(L->fc);
    free(L->fo);
    free(L->lf);
    free(e);
}

const EmuStats *emu_stats(const Emu *e) { return &e->st; }

void emu_set_trace(Emu *e, MNBuf *t) { e->trace = t; }

void emu_set_threads(Emu *e, int n) {
    if (n <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        n = cores < 1 ? 1 : cores > 8 ? 8 : (int)cores;
    }
    emu_pool_free(e->pool);
    e->pool = emu_pool_new(n);
}

bool emu_set_strict(Emu *e) {
    if (e->strict) return true;
    size_t np = (size_t)e->npe;
    for (int i = 0; i < 2; i++) {
        e->lm_def[i] = zalloc(e->lmw[i] * np);
        e->grf_def[i] = zalloc(e->grfw[i] * np);
        e->mx_def[i] = zalloc(256 * (size_t)e->nmab);
    }
    for (int i = 0; i < FW_COUNT; i++) e->fwd_def[i] = zalloc(16 * np);
    e->t_def = zalloc(16 * np);
    e->omr_def = zalloc(sizeof(uint16_t) * 32 * np);
    e->l1bm_def = zalloc((size_t)e->m.l1bm_lw * (size_t)e->nl1b);
    e->l2bm_def = zalloc((size_t)e->m.l2bm_lw * (size_t)e->nl2b);
    e->dram_def = reserve(e->dram_map_bytes / 8);
    e->pdm_def = reserve(e->pdm_map_bytes / 8);
    if (!e->dram_def || !e->pdm_def) return false;
    e->one_row = xmalloc(np);
    memset(e->one_row, 1, np);
    for (int s = 0; s < 3; s++)
        for (int c = 0; c < NCYC; c++)
            for (int w = 0; w < 4; w++) e->sdefbuf[s][c][w] = e->sdef[s][c][w] = zalloc(np);
    e->strict = true;
    return true;
}

/* ---- PE ids ---- */
static inline int pe_sub(const Emu *e, int pe) {
    (void)e;
    return pe & 3;
}
static inline int pe_mab(const Emu *e, int pe) { return pe / e->m.pe_per_mab; }
static inline int pe_l1b(const Emu *e, int pe) { return pe / e->pe_per_l1b; }
static inline int pe_mab_in_l1b(const Emu *e, int pe) { return pe_mab(e, pe) % e->m.mab_per_l1b; }

/* ---- operand access ---- */

uint32_t *emu_pe_mem(Emu *e, int kind, uint32_t *words) {
    switch (kind) {
    case K_LM0: *words = e->lmw[0]; return e->lm[0];
    case K_LM1: *words = e->lmw[1]; return e->lm[1];
    case K_GRF0: *words = e->grfw[0]; return e->grf[0];
    case K_GRF1: *words = e->grfw[1]; return e->grf[1];
    default: return NULL;
    }
}

static uint32_t op_addr(const VOperand *o, int c) { return vsm_op_addr(o, c); }

static int64_t *raw_slot(Emu *e, int kind, uint32_t addr) {
    if (kind == K_GRF0) return &e->grf_w[0][addr % e->grfw[0]];
    if (kind == K_GRF1) return &e->grf_w[1][addr % e->grfw[1]];
    return NULL;
}

/* Read-after-write rules of the PE memories (docs/vsm.md, "Hazards"). */
static bool check_read(Emu *e, const VOperand *o, int c) {
    int64_t lim;
    if (o->kind == K_LM0 || o->kind == K_LM1) {
        lim = e->m.lm_raw_steps;
        int64_t w = e->lm_w[o->kind == K_LM1];
        if (e->step - w <= lim)
            return emu_fail(e,
                            "hazard: %s read %" PRId64 " step(s) after a write to it (LM needs %" PRId64
                            " steps between, any address)",
                            vsm_kind_name(o->kind), e->step - w, lim);
        return true;
    }
    if (o->kind == K_GRF0 || o->kind == K_GRF1) {
        lim = e->m.grf_raw_steps;
        uint32_t a = op_addr(o, c);
        for (uint32_t k = 0; k < o->width; k++) {
            int64_t w = *raw_slot(e, o->kind, a + k);
            if (e->step - w <= lim)
                return emu_fail(e,
                                "hazard: %s word %u read %" PRId64 " step(s) after it was written (needs %" PRId64
                                " steps between)",
                                vsm_kind_name(o->kind), (a + k) % e->grfw[o->kind == K_GRF1], e->step - w, lim);
        }
        return true;
    }
    if (o->kind == K_T) {
        lim = e->m.grf_raw_steps;
        for (int k = 0; k < 4; k++)
            if (e->step - e->t_w[c * 4 + k] <= lim)
                return emu_fail(
                    e, "hazard: T read %" PRId64 " step(s) after it was written (needs %" PRId64 " steps between)",
                    e->step - e->t_w[c * 4 + k], lim);
    }
    return true;
}

/* Value of a fixed input at precision prec, per PE. */
static uint64_t fixed_value(const Emu *e, int kind, int prec, int pe, int lane_bits) {
    int64_t v;
    switch (kind) {
    case K_PEID: v = pe_mab_in_l1b(e, pe) * 4 + pe_sub(e, pe); break;
    case K_SUBPEID: v = pe_sub(e, pe); break;
    case K_MABID: v = pe_mab_in_l1b(e, pe); break;
    case K_L1BID: v = pe_l1b(e, pe) % e->l1b_per_l2b; break;
    case K_L2BID: v = pe_l1b(e, pe) / e->l1b_per_l2b; break;
    case K_MSB1: return lane_bits == 64 ? 0x8000000000000000ull : lane_bits == 32 ? 0x80000000u : 0x8000u;
    default: return 0;
    }
    if (prec == P_D) return d_bits((double)v);
    if (prec == P_F) return f_bits((float)v);
    if (prec == P_H) return f_to_mnh((float)v);
    return (uint64_t)v;
}

int emu_lane_bits(int prec) { return prec & (P_D | P_L) ? 64 : prec & (P_F | P_I) ? 32 : 16; }

/* Point rows[c][0..3] at operand o's data for all 4 cycles: straight at the memory
 * rows where the address is the same on every PE, else at scratch rows (buf). */
uint8_t *emu_mem_def(Emu *e, int kind) {
    switch (kind) {
    case K_LM0: return e->lm_def[0];
    case K_LM1: return e->lm_def[1];
    case K_GRF0: return e->grf_def[0];
    case K_GRF1: return e->grf_def[1];
    default: return NULL;
    }
}

static bool read_operand_into(Emu *e, const VOperand *o, int prec, uint32_t *rows[NCYC][4], uint32_t *buf[NCYC][4],
                              uint8_t *defs[NCYC][4], uint8_t *defbuf[NCYC][4]) {
    size_t np = (size_t)e->npe, rb = np * 4;
    for (int c = 0; c < NCYC; c++) {
        if (!check_read(e, o, c)) return false;
        for (int w = 0; w < 4; w++) rows[c][w] = e->zero_row;
        if (e->strict)
            for (int w = 0; w < 4; w++) defs[c][w] = e->one_row;
        uint32_t words;
        uint32_t *mem = emu_pe_mem(e, o->kind, &words);
        if (mem && o->amode == A_TIND) {
            for (int w = 0; w < o->width; w++) rows[c][w] = buf[c][w];
            if (e->strict)
                for (int w = 0; w < o->width; w++) defs[c][w] = defbuf[c][w];
            uint8_t *md = emu_mem_def(e, o->kind);
            for (size_t p = 0; p < np; p++) {
                if (p == 0 && e->step - e->t_w[c * 4 + 1] <= e->m.grf_raw_steps)
                    return emu_fail(
                        e, "hazard: T read (for T-indirect addresses) %" PRId64 " step(s) after it was written",
                        e->step - e->t_w[c * 4 + 1]);
                if (e->strict && !e->t_def[(size_t)(c * 4 + 1) * np + p])
                    return emu_fail(e, "strict: a T-indirect address in cycle %d of PE %zu is undefined", c, p);
                uint32_t base = o->addr + (uint32_t)(c * o->stride) + e->t[(size_t)(c * 4 + 1) * np + p];
                base &= ~(uint32_t)(o->width - 1); /* unaligned run-time addresses truncate */
                for (int w = 0; w < o->width; w++) {
                    size_t at = (size_t)((base + (uint32_t)w) % words) * np + p;
                    rows[c][w][p] = mem[at];
                    if (e->strict) defs[c][w][p] = md[at];
                }
            }
        } else if (mem) {
            uint32_t a = op_addr(o, c);
            for (int w = 0; w < o->width; w++) rows[c][w] = mem + (size_t)((a + (uint32_t)w) % words) * np;
            if (e->strict)
                for (int w = 0; w < o->width; w++)
                    defs[c][w] = emu_mem_def(e, o->kind) + (size_t)((a + (uint32_t)w) % words) * np;
        } else if (o->kind == K_T) {
            for (int w = 0; w < 4; w++) rows[c][w] = e->t + (size_t)(c * 4 + w) * np;
            if (e->strict)
                for (int w = 0; w < 4; w++) defs[c][w] = e->t_def + (size_t)(c * 4 + w) * np;
        } else if (o->kind == K_ALUF || o->kind == K_MAUF || o->kind == K_LBF || o->kind == K_MREADF) {
            int f = o->kind == K_ALUF ? FW_ALU : o->kind == K_MAUF ? FW_MAU : o->kind == K_LBF ? FW_LB : FW_MREAD;
            for (int w = 0; w < 4; w++) rows[c][w] = e->fwd[f] + (size_t)(c * 4 + w) * np;
            if (e->strict)
                for (int w = 0; w < 4; w++) defs[c][w] = e->fwd_def[f] + (size_t)(c * 4 + w) * np;
        } else if (o->kind >= K_PEID && o->kind <= K_MSB1) {
            int lb = emu_lane_bits(prec == P_NONE ? P_L : prec);
            for (int w = 0; w < 4; w++) rows[c][w] = buf[c][w];
            for (size_t p = 0; p < np; p++) {
                uint64_t v = fixed_value(e, o->kind, prec == P_NONE ? P_L : prec, (int)p, lb);
                if (lb == 64) {
                    rows[c][0][p] = rows[c][2][p] = (uint32_t)(v >> 32);
                    rows[c][1][p] = rows[c][3][p] = (uint32_t)v;
                } else if (lb == 32)
                    rows[c][0][p] = rows[c][1][p] = rows[c][2][p] = rows[c][3][p] = (uint32_t)v;
                else
                    rows[c][0][p] = rows[c][1][p] = rows[c][2][p] = rows[c][3][p] = (uint32_t)(v << 16 | v);
            }
        } else
            return emu_fail(e, "%s cannot be read here", vsm_kind_name(o->kind));
        (void)rb;
    }
    return true;
}

/* source slot i of the current expression */
bool emu_read_src(Emu *e, const VOperand *o, int prec, int i) {
    return read_operand_into(e, o, prec, e->src[i], e->srcbuf[i], e->sdef[i], e->sdefbuf[i]);
}

/* --strict: result definedness of an elementwise instruction: a lane is defined when
 * that lane of every source is. lane_bits 0: every result word depends on every
 * source word of the cycle (precision-changing MAU forms). */
void emu_def_lanes(Emu *e, int nsrc, int lane_bits, Result *r) {
    size_t np = (size_t)e->npe;
    for (int c = 0; c < NCYC; c++)
        for (int w = 0; w < 4; w++) {
            uint8_t *d = r->def[c][w];
            memset(d, 1, np);
            for (int s = 0; s < nsrc; s++) {
                if (lane_bits == 0) {
                    for (int k = 0; k < 4; k++)
                        for (size_t p = 0; p < np; p++) d[p] &= e->sdef[s][c][k][p];
                } else if (lane_bits == 64) {
                    const uint8_t *a = e->sdef[s][c][w & ~1], *b = e->sdef[s][c][w | 1];
                    for (size_t p = 0; p < np; p++) d[p] &= a[p] & b[p];
                } else {
                    const uint8_t *a = e->sdef[s][c][w];
                    for (size_t p = 0; p < np; p++) d[p] &= a[p];
                }
            }
        }
}

void emu_def_all(Emu *e, Result *r, uint8_t v) {
    for (int c = 0; c < NCYC; c++)
        for (int w = 0; w < 4; w++) memset(r->def[c][w], v, (size_t)e->npe);
}

/* ---- masks and writes ---- */

static uint16_t mask_entry_value(const Emu *e, int entry, size_t p) {
    if (entry == 0 || entry >= 16) return vsm_mask_fixed(entry);
    return e->omr[(size_t)entry * (size_t)e->npe + p];
}

static int target_bit(int kind) {
    switch (kind) {
    case K_GRF0: return MT_R;
    case K_GRF1: return MT_S;
    case K_T: return MT_T;
    case K_LM0: return MT_M;
    case K_LM1: return MT_N;
    case K_OMR: return MT_K;
    default: return 0;
    }
}

/* The 4-bit enable of cycle c for PE p writing destination o (zero: no write). */
static inline unsigned write_bits(const Emu *e, const VOperand *o, int c, size_t p) {
    uint16_t m;
    if (o->mkind == M_PATTERN)
        m = (o->mval >> (3 - c)) & 1 ? 0xffff : 0;
    else if (o->mkind == M_ENTRY)
        m = mask_entry_value(e, o->mval, p);
    else if (e->mask_entry && (e->mask_targets & target_bit(o->kind)))
        m = mask_entry_value(e, e->mask_entry, p);
    else
        return 0xf;
    if (o->mkind == M_PATTERN) return m & 0xf;
    return (m >> (4 * (3 - c))) & 0xf;
}

/* --strict: a mask entry used while any of its bits came from undefined data. */
static bool check_mask_defined(Emu *e, uint8_t mkind, uint8_t mval, int kind) {
    if (!e->strict) return true;
    int entry = mkind == M_ENTRY                                                              ? mval
                : mkind == M_DEFAULT && e->mask_entry && (e->mask_targets & target_bit(kind)) ? e->mask_entry
                                                                                              : 0;
    if (entry < 1 || entry > 15) return true;
    const uint16_t *d = e->omr_def + (size_t)entry * (size_t)e->npe;
    for (size_t p = 0; p < (size_t)e->npe; p++)
        if (d[p] != 0xffff)
            return emu_fail(e, "strict: mask entry %d of PE %zu was computed from undefined data", entry, p);
    return true;
}

static inline uint32_t bits_to_wordmask(unsigned b, int w) {
    unsigned hi = w & 1 ? (b >> 1 & 1) : (b >> 3 & 1), lo = w & 1 ? (b & 1) : (b >> 2 & 1);
    return (hi ? 0xffff0000u : 0) | (lo ? 0xffffu : 0);
}

static bool apply_zero_flush(Emu *e, const VExpr *x, Result *r) {
    if (!x->zkind) return true;
    if (!check_mask_defined(e, x->zkind, x->zval, K_NONE)) return false;
    VOperand z = {0};
    z.mkind = x->zkind;
    z.mval = x->zval;
    size_t np = (size_t)e->npe;
    for (int c = 0; c < NCYC; c++)
        for (size_t p = 0; p < np; p++) {
            unsigned b = write_bits(e, &z, c, p);
            for (int w = 0; w < 4; w++) {
                uint32_t m = bits_to_wordmask(b, w);
                r->w[c][w][p] &= m;
                if (e->strict && !m) r->def[c][w][p] = 1; /* flushed to a defined zero */
            }
        }
    return true;
}

static bool commit_dst(Emu *e, const VExpr *x, const Result *r, const VOperand *o) {
    size_t np = (size_t)e->npe;
    if (o->kind == K_NOWRITE) return true;
    if (!check_mask_defined(e, o->mkind, o->mval, o->kind)) return false;
    if (o->kind == K_OMR) {
        uint16_t *dst = e->omr + (size_t)o->addr * np, *dd = e->strict ? e->omr_def + (size_t)o->addr * np : NULL;
        for (size_t p = 0; p < np; p++) {
            uint16_t v = dst[p], dv = dd ? dd[p] : 0;
            for (int c = 0; c < NCYC; c++) {
                unsigned en = write_bits(e, o, c, p), f = r->flag[c][p];
                unsigned sh = 4 * (3 - (unsigned)c);
                v = (uint16_t)((v & ~(en << sh)) | ((f & en) << sh));
                if (dd) { /* flags are defined where the MSB long word of the result is */
                    unsigned fd = r->def[c][0][p] && r->def[c][1][p] ? 0xf : 0;
                    dv = (uint16_t)((dv & ~(en << sh)) | ((fd & en) << sh));
                }
            }
            dst[p] = v;
            if (dd) dd[p] = dv;
        }
        (void)x;
        return true;
    }
    if (o->kind == K_T) {
        for (int c = 0; c < NCYC; c++) {
            for (int w = 0; w < 4; w++) {
                uint32_t *dst = e->t + (size_t)(c * 4 + w) * np;
                uint8_t *dd = e->strict ? e->t_def + (size_t)(c * 4 + w) * np : NULL;
                for (size_t p = 0; p < np; p++) {
                    uint32_t m = bits_to_wordmask(write_bits(e, o, c, p), w);
                    dst[p] = (dst[p] & ~m) | (r->w[c][w][p] & m);
                    if (dd && m) dd[p] = m == ~0u ? r->def[c][w][p] : dd[p] & r->def[c][w][p];
                }
                e->t_w[c * 4 + w] = e->step;
            }
        }
        return true;
    }
    uint32_t words;
    uint32_t *mem = emu_pe_mem(e, o->kind, &words);
    if (!mem) return emu_fail(e, "%s cannot be written by %s", vsm_kind_name(o->kind), vsm_insns[x->insn].name);
    if (o->amode == A_TIND) return emu_fail(e, "T-indirect addressing is for reads only");
    /* a mask that is the same on every PE (none, or a /bbbb pattern) is applied per cycle */
    bool uniform = o->mkind == M_PATTERN ||
                   (o->mkind == M_DEFAULT && !(e->mask_entry && (e->mask_targets & target_bit(o->kind)))) ||
                   (o->mkind == M_ENTRY && (o->mval == 0 || o->mval >= 16));
    for (int c = 0; c < NCYC; c++) {
        uint32_t a = op_addr(o, c);
        unsigned ub = uniform ? write_bits(e, o, c, 0) : 0;
        for (int w = 0; w < o->width; w++) {
            uint32_t *dst = mem + (size_t)((a + (uint32_t)w) % words) * np;
            const uint32_t *src = r->w[c][w];
            if (uniform) {
                uint32_t m = bits_to_wordmask(ub, w);
                if (m == ~0u)
                    memcpy(dst, src, np * 4);
                else if (m)
                    for (size_t p = 0; p < np; p++) dst[p] = (dst[p] & ~m) | (src[p] & m);
            } else
                for (size_t p = 0; p < np; p++) {
                    uint32_t m = bits_to_wordmask(write_bits(e, o, c, p), w);
                    dst[p] = (dst[p] & ~m) | (src[p] & m);
                }
            if (e->strict) { /* a partly written word is defined only if both parts are */
                uint8_t *dd = emu_mem_def(e, o->kind) + (size_t)((a + (uint32_t)w) % words) * np;
                const uint8_t *sd = r->def[c][w];
                if (uniform) {
                    uint32_t m = bits_to_wordmask(ub, w);
                    if (m == ~0u)
                        memcpy(dd, sd, np);
                    else if (m)
                        for (size_t p = 0; p < np; p++) dd[p] &= sd[p];
                } else
                    for (size_t p = 0; p < np; p++) {
                        uint32_t m = bits_to_wordmask(write_bits(e, o, c, p), w);
                        if (m) dd[p] = m == ~0u ? sd[p] : dd[p] & sd[p];
                    }
            }
            int64_t *slot = raw_slot(e, o->kind, a + (uint32_t)w);
            if (slot) *slot = e->step;
        }
    }
    if (o->kind == K_LM0 || o->kind == K_LM1) {
        e->lm_w[o->kind == K_LM1] = e->step;
        for (int c = 0; c < NCYC; c++) {
            int64_t top = ((int64_t)(op_addr(o, c) % words) + o->width + 1) / 2;
            if (top > e->st.lm_peak_lw[o->kind == K_LM1]) e->st.lm_peak_lw[o->kind == K_LM1] = top;
        }
    }
    return true;
}

/* ---- tree transfers ---- */

static uint64_t *l1bm_at(Emu *e, int l1b, uint32_t lw) {
    return &e->l1bm[(size_t)l1b * (size_t)e->m.l1bm_lw + lw % (uint32_t)e->m.l1bm_lw];
}
static uint64_t *l2bm_at(Emu *e, int l2b, uint32_t lw) {
    return &e->l2bm[(size_t)l2b * (size_t)e->m.l2bm_lw + lw % (uint32_t)e->m.l2bm_lw];
}

static uint8_t *l1bm_d(Emu *e, int l1b, uint32_t lw) {
    return &e->l1bm_def[(size_t)l1b * (size_t)e->m.l1bm_lw + lw % (uint32_t)e->m.l1bm_lw];
}
static uint8_t *l2bm_d(Emu *e, int l2b, uint32_t lw) {
    return &e->l2bm_def[(size_t)l2b * (size_t)e->m.l2bm_lw + lw % (uint32_t)e->m.l2bm_lw];
}

bool emu_check_inflight(Emu *e, int kind, int g, int64_t lo, int64_t n, const char *what) {
    for (int i = 0; i < e->ninflight; i++) {
        Inflight *f = &e->inflight[i];
        if (f->kind == kind && f->done > e->cycle && (g < 0 || f->group < 0 || g == f->group) && lo < f->hi &&
            lo + n > f->lo)
            return emu_fail(
                e, "hazard: %s reads %s [%" PRId64 ", %" PRId64 ") before the MV writing it completes (use wait)", what,
                vsm_kind_name(kind), lo, lo + n);
    }
    return true;
}

bool emu_check_upper_read(Emu *e, int kind, uint32_t lo, uint32_t n, const char *what) {
    int64_t *w = kind == K_L1BM ? e->l1bm_w : e->l2bm_w;
    int64_t lim = kind == K_L1BM ? e->m.l1bm_raw_steps : e->m.l2bm_raw_steps;
    uint32_t size = (uint32_t)(kind == K_L1BM ? e->m.l1bm_lw : e->m.l2bm_lw);
    for (uint32_t i = 0; i < n; i++)
        if (e->step - w[(lo + i) % size] <= lim)
            return emu_fail(e,
                            "hazard: %s reads %s long word %u %" PRId64 " step(s) after it was written (needs %" PRId64
                            " steps between)",
                            what, vsm_kind_name(kind), (lo + i) % size, e->step - w[(lo + i) % size], lim);
    return emu_check_inflight(e, kind, -1, lo, n, what);
}

static void mark_upper_write(Emu *e, int kind, uint32_t lo, uint32_t n) {
    int64_t *w = kind == K_L1BM ? e->l1bm_w : e->l2bm_w;
    uint32_t size = (uint32_t)(kind == K_L1BM ? e->m.l1bm_lw : e->m.l2bm_lw);
    for (uint32_t i = 0; i < n; i++) w[(lo + i) % size] = e->step;
}

/* RRN reduction of two long words. */
uint64_t emu_rrn(int op, uint64_t a, uint64_t b) {
    switch (op) {
    case RRN_dfadd: return out_d(in_d(a) + in_d(b));
    case RRN_dmax:
        return (int64_t)(a ^ (a >> 63 ? 0x7fffffffffffffffull : 0)) >=
                       (int64_t)(b ^ (b >> 63 ? 0x7fffffffffffffffull : 0))
                   ? a
                   : b;
    case RRN_dmin:
        return (int64_t)(a ^ (a >> 63 ? 0x7fffffffffffffffull : 0)) <=
                       (int64_t)(b ^ (b >> 63 ? 0x7fffffffffffffffull : 0))
                   ? a
                   : b;
    case RRN_liadd: return a + b;
    case RRN_lbor: return a | b;
    case RRN_lband: return a & b;
    default: break;
    }
    uint64_t r = 0;
    int bits =
        op == RRN_ffadd || op == RRN_fmax || op == RRN_fmin || op == RRN_iiadd || op == RRN_ibor || op == RRN_iband
            ? 32
            : 16;
    for (int sh = 64 - bits; sh >= 0; sh -= bits) {
        uint64_t m = bits == 32 ? 0xffffffffu : 0xffffu;
        uint64_t x = a >> sh & m, y = b >> sh & m, o;
        switch (op) {
        case RRN_ffadd: o = out_f(in_f((uint32_t)x) + in_f((uint32_t)y)); break;
        case RRN_hfadd: /* normalised like every float add: a zero is +0 */
            o = f_to_mnh(mnh_to_f((uint16_t)x) + mnh_to_f((uint16_t)y));
            if (!(o & 0x7e00)) o = 0;
            break;
        case RRN_fmax:
        case RRN_hmax:
        case RRN_fmin:
        case RRN_hmin: {
            uint64_t sb = 1ull << (bits - 1);
            int64_t kx = (int64_t)(x & sb ? (sb - 1) - (x & (sb - 1)) : x + sb),
                    ky = (int64_t)(y & sb ? (sb - 1) - (y & (sb - 1)) : y + sb);
            bool mx = op == RRN_fmax || op == RRN_hmax;
            o = (mx ? kx >= ky : kx <= ky) ? x : y;
            break;
        }
        case RRN_iiadd:
        case RRN_siadd: o = (x + y) & m; break;
        case RRN_ibor:
        case RRN_sbor: o = x | y; break;
        default: o = x & y; break; /* iband, sband */
        }
        r |= o << sh;
    }
    return r;
}

/* Rows of a PE-side value as long words: LW k of cycle c of PE p. */
static inline uint64_t row_lw(uint32_t *rows[NCYC][4], int c, int k, size_t p) {
    return (uint64_t)rows[c][2 * k][p] << 32 | rows[c][2 * k + 1][p];
}

/* L1BM offset of (cycle, LW k, mab m, pe j) for each transfer form (x, ppl and W in scope; to exec_l1bm's end) */
#define OFF(c, k, m, j)                                                      \
    (x->insn == VI_l1bmp   ? (uint32_t)((c) + 4 * (k))                       \
     : x->insn == VI_l1bmd ? (uint32_t)((c)*ppl * W + (k)*ppl + (m)*4 + (j)) \
                           : (uint32_t)((c)*4 * W + 4 * (k) + (j)))

/* An L1BM -> PE transfer's reads (exec_l1bm), for the PEs [lo, hi) (whole L1Bs): every offset is inside the L1BM
 * (checked before), PE p = (l1, m, j) reads L1B l1's words from a on */
typedef struct {
    Emu *e;
    const VExpr *x;
    Result *r;
    uint32_t a;
    int W;
} L1bmDown;

static void l1bm_down(void *ctx, size_t lo, size_t hi) {
    const L1bmDown *v = ctx;
    Emu *e = v->e;
    const VExpr *x = v->x;
    Result *r = v->r;
    int W = v->W, ppl = e->pe_per_l1b, nm = e->m.mab_per_l1b, ppm = e->m.pe_per_mab;
    for (int c = 0; c < NCYC; c++) {
        for (int w = 0; w < 4; w++) memset(r->w[c][w] + lo, 0, (hi - lo) * 4);
        memset(r->flag[c] + lo, 0, hi - lo);
        for (int l1 = (int)(lo / (size_t)ppl); l1 < (int)(hi / (size_t)ppl); l1++) {
            const uint64_t *L = l1bm_at(e, l1, v->a);
            const uint8_t *LD = e->strict ? l1bm_d(e, l1, v->a) : NULL;
            for (int m = 0; m < nm; m++)
                for (int j = 0; j < ppm; j++) {
                    size_t p = (size_t)l1 * (size_t)ppl + (size_t)(m * ppm + j);
                    for (int k = 0; k < W; k++) {
                        put64(r->w[c], k, p, L[OFF(c, k, m, j)]);
                        if (LD) r->def[c][2 * k][p] = r->def[c][2 * k + 1][p] = LD[OFF(c, k, m, j)];
                    }
                }
        }
    }
}

static bool exec_l1bm(Emu *e, const VExpr *x, Result *r) {
    size_t np = (size_t)e->npe;
    const VOperand *s = &x->src[0], *d = &x->dst[0];
    bool down = s->kind == K_L1BM; /* L1BM -> PE */
    const VOperand *b = down ? s : d;
    if ((down && d->kind == K_L1BM) || (!down && d->kind != K_L1BM))
        return emu_fail(e, "%s moves between L1BM and a PE operand", vsm_insns[x->insn].name);
    if (!down && x->ndst != 1) return emu_fail(e, "a PE -> L1BM transfer has one destination");
    int W = b->width == 4 ? 2 : 1; /* long words per PE per cycle */
    int ppl = e->pe_per_l1b, nm = e->m.mab_per_l1b;
    uint32_t a = b->addr;
    {
        uint32_t span = x->insn == VI_l1bmd   ? (uint32_t)(4 * ppl * W)
                        : x->insn == VI_l1bmp ? (uint32_t)(4 * W)
                                              : (uint32_t)(16 * W);
        if ((uint64_t)a + span > (uint64_t)e->m.l1bm_lw)
            return emu_fail(e, "L1BM range [%u, %u) is outside the %" PRId64 "-long-word L1BM", a, a + span,
                            e->m.l1bm_lw);
    }
    if (down) {
        if (x->insn == VI_l1bmr) return emu_fail(e, "l1bmr reduces PE values into L1BM");
        uint32_t span = x->insn == VI_l1bmd   ? (uint32_t)(4 * ppl * W)
                        : x->insn == VI_l1bmp ? (uint32_t)(4 * W)
                                              : (uint32_t)(16 * W);
        if (!emu_check_upper_read(e, K_L1BM, a, span, vsm_insns[x->insn].name)) return false;
        r->fw = FW_LB;
        r->has_flags = false;
        if (e->strict) emu_def_all(e, r, 1);
        L1bmDown v = {e, x, r, a, W};
        emu_pool_run(e->pool, np, (size_t)ppl, l1bm_down, &v);
        return true;
    }
    /* PE -> L1BM: individual (l1bmm@M), reduce (l1bmr), combine (l1bmd) */
    if (x->insn == VI_l1bmp) return emu_fail(e, "l1bmp broadcasts L1BM to PEs");
    if (x->insn == VI_l1bmm && x->sel < 0) return emu_fail(e, "PE -> L1BM with l1bmm needs @<mab>");
    if (x->insn == VI_l1bmm && x->sel >= nm) return emu_fail(e, "l1bmm@%d: the L1B has MABs 0..%d", x->sel, nm - 1);
    if (x->insn == VI_l1bmr && x->rrn == RRN_NONE) return emu_fail(e, "l1bmr needs a reduction");
    if (s->width != 2 * W && !(s->kind == K_T || (s->kind >= K_ALUF && s->kind <= K_MREADF)))
        return emu_fail(e, "source width does not match $%sb (%d long word%s per cycle)", W == 2 ? "ll" : "l", W,
                        W == 2 ? "s" : "");
    if (!emu_read_src(e, s, P_L, 0)) return false;
    uint32_t span = x->insn == VI_l1bmd ? (uint32_t)(4 * ppl * W) : (uint32_t)(16 * W);
    for (int l1 = 0; l1 < e->nl1b; l1++) {
        for (int c = 0; c < NCYC; c++)
            for (int k = 0; k < W; k++)
                for (int j = 0; j < 4; j++) {
#define PDEF(p) (e->sdef[0][c][2 * k][p] & e->sdef[0][c][2 * k + 1][p])
                    if (x->insn == VI_l1bmr) {
                        uint64_t acc = 0;
                        uint8_t d = 1;
                        for (int m = 0; m < nm; m++) {
                            size_t p = (size_t)(l1 * ppl + m * 4 + j);
                            uint64_t v = row_lw(e->src[0], c, k, p);
                            acc = m ? emu_rrn(x->rrn, acc, v) : v;
                            if (e->strict) d &= PDEF(p);
                        }
                        if (x->rrn == RRN_dfadd) acc = out_d(in_d(acc));
                        *l1bm_at(e, l1, a + OFF(c, k, 0, j)) = acc;
                        if (e->strict) *l1bm_d(e, l1, a + OFF(c, k, 0, j)) = d;
                    } else if (x->insn == VI_l1bmm) {
                        size_t p = (size_t)(l1 * ppl + x->sel * 4 + j);
                        *l1bm_at(e, l1, a + OFF(c, k, 0, j)) = row_lw(e->src[0], c, k, p);
                        if (e->strict) *l1bm_d(e, l1, a + OFF(c, k, 0, j)) = PDEF(p);
                    } else
                        for (int m = 0; m < nm; m++) {
                            size_t p = (size_t)(l1 * ppl + m * 4 + j);
                            *l1bm_at(e, l1, a + OFF(c, k, m, j)) = row_lw(e->src[0], c, k, p);
                            if (e->strict) *l1bm_d(e, l1, a + OFF(c, k, m, j)) = PDEF(p);
                        }
#undef PDEF
                }
    }
#undef OFF
    mark_upper_write(e, K_L1BM, a, span);
    r->fw = -1;
    r->writes_pe = false;
    return true;
}

static bool exec_l2bm(Emu *e, const VExpr *x) {
    const VOperand *s = &x->src[0], *d = &x->dst[0];
    bool down = s->kind == K_L2BM;
    if (!((s->kind == K_L2BM && d->kind == K_L1BM) || (s->kind == K_L1BM && d->kind == K_L2BM)) || x->ndst != 1)
        return emu_fail(e, "%s moves between $lc (L2BM) and $lb (L1BM)", vsm_insns[x->insn].name);
    int nj = e->l1b_per_l2b;
    if (x->sel >= nj) return emu_fail(e, "@%d: an L2B has L1Bs 0..%d", x->sel, nj - 1);
    uint32_t lc = down ? s->addr : d->addr, lb = down ? d->addr : s->addr;
    const uint32_t B = 64, D = 32; /* long words per step: broadcast/individual, distribute share */
    uint32_t cspan = x->insn == VI_l2bmd ? D * (uint32_t)nj : B, bspan = x->insn == VI_l2bmd ? D : B;
    if ((uint64_t)lc + cspan > (uint64_t)e->m.l2bm_lw)
        return emu_fail(e, "L2BM range [%u, %u) is outside the L2BM", lc, lc + cspan);
    if ((uint64_t)lb + bspan > (uint64_t)e->m.l1bm_lw)
        return emu_fail(e, "L1BM range [%u, %u) is outside the L1BM", lb, lb + bspan);
    uint64_t *tmp = xmalloc(sizeof(uint64_t) * (size_t)B * (size_t)nj);
    bool ok = true;
    if (down) {
        if (x->insn == VI_l2bmr) {
            free(tmp);
            return emu_fail(e, "l2bmr reduces L1BMs into L2BM");
        }
        uint32_t span = x->insn == VI_l2bmd ? D * (uint32_t)nj : B;
        ok = emu_check_upper_read(e, K_L2BM, lc, span, vsm_insns[x->insn].name);
        for (int l2 = 0; ok && l2 < e->nl2b; l2++)
            for (int j = 0; j < nj; j++) {
                if (x->sel >= 0 && j != x->sel) continue;
                if (x->insn == VI_l2bm && x->sel < 0) {
                    ok = emu_fail(e, "l2bm needs @<l1b>");
                    break;
                }
                int l1 = l2 * nj + j;
                uint32_t n = x->insn == VI_l2bmd ? D : B, off = x->insn == VI_l2bmd ? D * (uint32_t)j : 0;
                for (uint32_t i = 0; i < n; i++) {
                    *l1bm_at(e, l1, lb + i) = *l2bm_at(e, l2, lc + off + i);
                    if (e->strict) *l1bm_d(e, l1, lb + i) = *l2bm_d(e, l2, lc + off + i);
                }
            }
        if (ok) mark_upper_write(e, K_L1BM, lb, x->insn == VI_l2bmd ? D : B);
    } else {
        if (x->insn == VI_l2bmb) {
            free(tmp);
            return emu_fail(e, "l2bmb broadcasts L2BM to L1BMs");
        }
        if (x->insn == VI_l2bm && x->sel < 0) {
            free(tmp);
            return emu_fail(e, "l2bm needs @<l1b>");
        }
        if (x->insn == VI_l2bmr && x->rrn == RRN_NONE) {
            free(tmp);
            return emu_fail(e, "l2bmr needs a reduction");
        }
        uint32_t span = x->insn == VI_l2bmd ? D : B;
        ok = emu_check_upper_read(e, K_L1BM, lb, span, vsm_insns[x->insn].name);
        for (int l2 = 0; ok && l2 < e->nl2b; l2++) {
            if (x->insn == VI_l2bmd)
                for (int j = 0; j < nj; j++)
                    for (uint32_t i = 0; i < D; i++) {
                        *l2bm_at(e, l2, lc + D * (uint32_t)j + i) = *l1bm_at(e, l2 * nj + j, lb + i);
                        if (e->strict) *l2bm_d(e, l2, lc + D * (uint32_t)j + i) = *l1bm_d(e, l2 * nj + j, lb + i);
                    }
            else if (x->insn == VI_l2bm)
                for (uint32_t i = 0; i < B; i++) {
                    *l2bm_at(e, l2, lc + i) = *l1bm_at(e, l2 * nj + x->sel, lb + i);
                    if (e->strict) *l2bm_d(e, l2, lc + i) = *l1bm_d(e, l2 * nj + x->sel, lb + i);
                }
            else
                for (uint32_t i = 0; i < B; i++) {
                    uint64_t acc = *l1bm_at(e, l2 * nj, lb + i);
                    uint8_t d = e->strict ? *l1bm_d(e, l2 * nj, lb + i) : 1;
                    for (int j = 1; j < nj; j++) {
                        acc = emu_rrn(x->rrn, acc, *l1bm_at(e, l2 * nj + j, lb + i));
                        if (e->strict) d &= *l1bm_d(e, l2 * nj + j, lb + i);
                    }
                    if (x->rrn == RRN_dfadd) acc = out_d(in_d(acc));
                    *l2bm_at(e, l2, lc + i) = acc;
                    if (e->strict) *l2bm_d(e, l2, lc + i) = d;
                }
        }
        if (ok) mark_upper_write(e, K_L2BM, lc, x->insn == VI_l2bmd ? D * (uint32_t)nj : B);
    }
    free(tmp);
    return ok;
}

/* ---- one step ---- */

static bool run_step(Emu *e, const VStep *s) {
    char why[160];
    if (!vsm_step_rules(s, why, sizeof why)) return emu_fail(e, "%s", why);
    int nres = 0, steps = 1, mwrite_at = -1;
    int64_t wait_until = -1;
    bool fwd_update = true;
    int idx[VSM_MAX_EXPR];
    for (int i = 0; i < s->nexpr; i++) {
        const VExpr *x = &s->e[i];
        const VInsnInfo *in = &vsm_insns[x->insn];
        int cost = e->insn_steps[x->insn][x->prec == P_NONE ? 0 : __builtin_ctz(x->prec)];
        if (cost > steps) steps = cost;
        e->st.insns[in->unit]++;
        Result *r = &e->res[nres];
        r->has_flags = false;
        r->writes_pe = true;
        r->fw = -1;
        bool ok = true;
        switch (in->unit) {
        case U_NOP: fwd_update = false; continue;
        case U_NOFWD: fwd_update = false; continue;
        case U_WAIT:
            if (!e->tag_done[x->tag]) return emu_fail(e, "wait i%02x: no MV with that tag was issued", x->tag);
            if (e->tag_done[x->tag] > wait_until) wait_until = e->tag_done[x->tag];
            continue;
        case U_ALU: ok = emu_exec_alu(e, x, r); break;
        case U_MAU:
            ok = x->insn >= VI_mmulu && x->insn <= VI_mfma ? emu_exec_matvec(e, x, r) : emu_exec_mau_vec(e, x, r);
            break;
        case U_MWRITE: /* writes the matrix register: done after every read of the step */
            mwrite_at = i;
            r->writes_pe = false;
            break;
        case U_MREAD: ok = emu_exec_mread(e, x, r); break;
        case U_L1BM: ok = exec_l1bm(e, x, r); break;
        case U_L2BM:
            ok = x->insn == VI_l2bmdars || x->insn == VI_l2bmdarw ? emu_exec_dar(e, x) : exec_l2bm(e, x);
            r->writes_pe = false;
            break;
        case U_MV:
            ok = emu_exec_mv(e, x);
            r->writes_pe = false;
            break;
        default: ok = emu_fail(e, "bad unit");
        }
        if (!ok) return false;
        if (r->writes_pe || r->fw >= 0) {
            if (!apply_zero_flush(e, x, r)) return false;
            idx[nres++] = i;
        }
    }
    /* phase 2: writes; the matrix register first (its source is read before any PE
     * write lands), mask registers last (masks of this step's writes are the old ones) */
    if (mwrite_at >= 0 && !emu_exec_mwrite(e, &s->e[mwrite_at])) return false;
    bool fw_set[FW_COUNT] = {0};
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < nres; k++) {
            const VExpr *x = &s->e[idx[k]];
            Result *r = &e->res[k];
            if (r->writes_pe)
                for (int d = 0; d < x->ndst; d++)
                    if ((x->dst[d].kind == K_OMR) == (pass == 1) && !commit_dst(e, x, r, &x->dst[d])) return false;
        }
    for (int k = 0; k < nres; k++) {
        Result *r = &e->res[k];
        if (r->fw >= 0 && fwd_update) {
            size_t np = (size_t)e->npe;
            for (int c = 0; c < NCYC; c++)
                for (int w = 0; w < 4; w++) {
                    memcpy(e->fwd[r->fw] + (size_t)(c * 4 + w) * np, r->w[c][w], np * 4);
                    if (e->strict) memcpy(e->fwd_def[r->fw] + (size_t)(c * 4 + w) * np, r->def[c][w], np);
                }
            fw_set[r->fw] = true;
        }
    }
    (void)fw_set;
    int64_t cyc = (int64_t)steps * e->m.cycles_per_step;
    if (e->trace) {
        static const char *units[U_UNIT_COUNT] = {"nop",    "wait",  "noforward", "alu",  "mau",
                                                  "mwrite", "mread", "l1bm",      "l2bm", "mv"};
        for (int i = 0; i < s->nexpr; i++) {
            const VExpr *x = &s->e[i];
            const VInsnInfo *in = &vsm_insns[x->insn];
            buf_printf(e->trace,
                       "%s{\"name\":\"%s%s%s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.4f,\"dur\":%.4f,\"pid\":0,\"tid\":%"
                       "d,\"args\":{\"line\":%d,\"step\":%" PRId64 "}}",
                       e->trace->len ? ",\n" : "", vsm_prec_letter(x->prec), in->name, vsm_rrn_names[x->rrn],
                       units[in->unit], (double)e->cycle / e->m.clock_mhz, (double)cyc / e->m.clock_mhz, (int)in->unit,
                       s->line, e->step);
            if (in->unit == U_MV && e->ninflight)
                buf_printf(e->trace,
                           ",\n{\"name\":\"%s "
                           "transfer\",\"cat\":\"dram\",\"ph\":\"X\",\"ts\":%.4f,\"dur\":%.4f,\"pid\":0,\"tid\":%d}",
                           in->name, (double)e->cycle / e->m.clock_mhz,
                           (double)(e->inflight[e->ninflight - 1].done - e->cycle) / e->m.clock_mhz, U_UNIT_COUNT);
        }
    }
    e->cycle += cyc;
    if (wait_until > e->cycle) {
        e->st.stall_cycles += wait_until - e->cycle;
        e->cycle = wait_until;
    }
    e->step += steps;
    e->st.steps += steps;
    return true;
}

bool emu_run(Emu *e, const VProgram *p, MNBuf *out, char *err, size_t errlen) {
    e->err = err;
    e->errlen = errlen;
    err[0] = 0;
    e->st.model_cycles += vsm_program_cycles(p, &e->m); /* what the timing model alone predicts */
    for (int i = 0; i < p->nsteps; i++) {
        const VStep *s = &p->steps[i];
        e->cur = s;
        if (s->kind == ST_DEBUG) {
            if (!emu_run_debug(e, s, out)) return false;
        } else if (s->kind == ST_MASK) {
            e->mask_targets = s->mask_targets;
            e->mask_entry = s->mask_entry;
            e->mask_width = s->mask_width;
        } else
            for (uint32_t r = 0; r < s->repeat; r++)
                if (!run_step(e, s)) return false;
    }
    e->st.cycles = e->cycle;
    return true;
}

/* the host's view of DRAM or PDM (kind) of one group: the long words [a, a + n), NULL outside */
static uint64_t *host_at(Emu *e, int kind, int group, uint64_t a, size_t n, uint8_t **def) {
    uint64_t size = (uint64_t)(kind == K_PDM ? e->m.pdm_lw : e->m.dram_lw);
    if ((kind != K_DRAM && kind != K_PDM) || group < 0 || group >= e->ng || a > size || n > size - a) return NULL;
    size_t at = (size_t)group * (size_t)size + a;
    uint8_t *d = kind == K_PDM ? e->pdm_def : e->dram_def;
    *def = e->strict ? d + at : NULL;
    return (kind == K_PDM ? e->pdm : e->dram) + at;
}

bool emu_host_write(Emu *e, int kind, int group, uint64_t a, const uint64_t *data, size_t n) {
    uint8_t *def;
    uint64_t *p = host_at(e, kind, group, a, n, &def);
    if (!p) return false;
    memcpy(p, data, n * 8);
    if (def) memset(def, 1, n);
    return true;
}

int64_t emu_host_first_undefined(Emu *e, int kind, int group, uint64_t a, size_t n) {
    uint8_t *def;
    if (!host_at(e, kind, group, a, n, &def) || !def) return -1;
    for (size_t i = 0; i < n; i++)
        if (!def[i]) return (int64_t)i;
    return -1;
}

bool emu_host_read(Emu *e, int kind, int group, uint64_t a, uint64_t *data, size_t n) {
    uint8_t *def;
    uint64_t *p = host_at(e, kind, group, a, n, &def);
    if (!p) return false;
    memcpy(data, p, n * 8);
    return true;
}

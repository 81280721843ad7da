/* mnemu's private interface: the machine state (structure-of-arrays, see emu.c) and
 * what the step engine (emu.c) and the compute units (emu_units.c: ALU, MAU vector
 * ops, matrix unit) share. Not for use outside emu/. */
#ifndef MN_EMU_IMPL_H
#define MN_EMU_IMPL_H
#include "emu.h"
#include "diag.h"
#include "emu_num.h"
#include "emu_pool.h"
#include "mv.h"
#include "vsm.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { FW_ALU, FW_MAU, FW_LB, FW_MREAD, FW_COUNT };
#define NCYC 4

typedef struct {
    uint32_t *w[NCYC][4]; /* result rows: cycle, word -> [npe] */
    uint8_t *def[NCYC][4]; /* --strict: 1 where the word is defined */
    uint8_t *flag[NCYC]; /* per cycle: 4 mask-flag bits per PE */
    bool has_flags, writes_pe;
    int fw; /* forwarding register this result goes to, -1 none */
} Result;

typedef struct {
    int64_t *ia, *ib, *io;
    double *fa, *fb, *fc, *fo;
    uint8_t *lf;
} Lanes;

typedef struct {
    int kind, group; /* the memory an MV in flight writes; group -1: every group */
    int64_t lo, hi; /* its range of long words */
    int64_t done; /* completion cycle */
} Inflight;

typedef struct { /* a long word an MV writes, once every source has been read */
    uint64_t *at;
    uint8_t *def;
    uint64_t v;
    uint8_t d;
} MvWrite;

struct Emu {
    MNMachine m;
    int npe, nmab, nl1b, nl2b, ng, pe_per_l1b, l1b_per_l2b;
    uint32_t lmw[2], grfw[2];
    uint32_t *lm[2], *grf[2], *t;
    uint16_t *omr; /* [32][npe] */
    uint32_t *fwd[FW_COUNT];
    bool fwd_valid[FW_COUNT];
    double *mx[2]; /* [nmab][16 x 16] */
    uint64_t *l1bm, *l2bm, *dram, *pdm;
    size_t dram_map_bytes, pdm_map_bytes;
    MvClock clk; /* the MV ports (isa/mv.h) */
    uint32_t *dar, *darbuf; /* per group MV_DAR_ENTRIES: DRAM addresses in 16-LW units, and their staging */
    MvWrite *mvw; /* an MV's writes, made after its reads */
    size_t nmvw, capmvw;
    /* timing and hazards */
    int64_t step, cycle, last_mv_step;
    int64_t lm_w[2], *grf_w[2], t_w[16];
    int64_t *l1bm_w, *l2bm_w;
    int64_t tag_done[64];
    Inflight *inflight;
    int ninflight, capinflight;
    uint8_t mask_targets, mask_entry, mask_width;
    EmuStats st;
    /* scratch */
    Result res[VSM_MAX_EXPR];
    uint32_t *src[3][NCYC][4]; /* views: scratch rows or memory rows, read-only */
    uint32_t *srcbuf[3][NCYC][4]; /* the scratch rows */
    uint32_t *zero_row;
    uint32_t *tmp;
    uint64_t *lane64[3], *lane64o;
    Lanes lanes; /* per-lane scratch, one entry per PE */
    int insn_steps[VI_COUNT][8]; /* cost by instruction and precision: the table, raised by the machine */
    MNBuf *trace;
    EmuPool *pool; /* worker threads (emu_set_threads); NULL: the caller's thread alone */
    /* --strict: definedness, 1 byte per word (PE side) or long word (upper memories),
     * laid out like the data; 0 = never written (memory starts undefined) */
    bool strict;
    uint8_t *lm_def[2], *grf_def[2], *t_def, *fwd_def[FW_COUNT], *mx_def[2], *l1bm_def, *l2bm_def, *dram_def, *pdm_def;
    uint16_t *omr_def; /* per entry and PE: the defined flag bits */
    uint8_t *sdef[3][NCYC][4], *sdefbuf[3][NCYC][4], *one_row;
    const VStep *cur;
    char *err;
    size_t errlen;
};
static inline uint64_t get64(uint32_t *const row[4], int lane, size_t p) {
    return (uint64_t)row[2 * lane][p] << 32 | row[2 * lane + 1][p];
}
static inline void put64(uint32_t *row[4], int lane, size_t p, uint64_t v) {
    row[2 * lane][p] = (uint32_t)(v >> 32);
    row[2 * lane + 1][p] = (uint32_t)v;
}
static inline uint16_t get16(uint32_t *const row[4], int lane, size_t p) {
    uint32_t w = row[lane / 2][p];
    return (uint16_t)(lane & 1 ? w : w >> 16);
}
static inline void put16(uint32_t *row[4], int lane, size_t p, uint16_t v) {
    uint32_t *w = &row[lane / 2][p];
    *w = lane & 1 ? (*w & 0xffff0000u) | v : (*w & 0xffffu) | (uint32_t)v << 16;
}

/* Stop the run with a message naming the line, step and location. */
bool emu_fail(Emu *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int emu_lane_bits(int prec);
/* Read source operand i of the step's expression at precision prec into e->src[i]. */
bool emu_read_src(Emu *e, const VOperand *o, int prec, int i);
/* Definedness (--strict) of a result from its sources, per lane or all at once. */
void emu_def_lanes(Emu *e, int nsrc, int lane_bits, Result *r);
void emu_def_all(Emu *e, Result *r, uint8_t v);

/* Hazards of upper memories (emu.c): a read of [lo, lo + n) of kind too soon after a
 * tree transfer wrote it, or before an MV writing it completes, fails the run. */
bool emu_check_upper_read(Emu *e, int kind, uint32_t lo, uint32_t n, const char *what);
/* A read by an MV of [lo, lo + n) of kind in group g (-1 every group) before an MV in
 * flight that writes it completes fails the run. */
bool emu_check_inflight(Emu *e, int kind, int g, int64_t lo, int64_t n, const char *what);
/* emu_mv.c: one MV line (docs/vsm.md 5.6): moves its data at issue and times it. */
bool emu_exec_mv(Emu *e, const VExpr *x);
/* l2bmdars (L2BM -> DARBUF) and l2bmdarw (DARBUF -> DAR) */
bool emu_exec_dar(Emu *e, const VExpr *x);
/* the RRN reduction of two long words (section 5.7) */
uint64_t emu_rrn(int op, uint64_t a, uint64_t b);

/* The compute units (emu_units.c): each computes one expression for every PE into r. */
bool emu_exec_alu(Emu *e, const VExpr *x, Result *r);
bool emu_exec_mau_vec(Emu *e, const VExpr *x, Result *r);
bool emu_exec_mwrite(Emu *e, const VExpr *x);
bool emu_exec_matvec(Emu *e, const VExpr *x, Result *r);
bool emu_exec_mread(Emu *e, const VExpr *x, Result *r);
/* emu.c: a PE memory's rows (words [address][PE]) and its definedness; emu_debug.c: a
 * step's debug commands (d set, d get), their output appended to out */
uint32_t *emu_pe_mem(Emu *e, int kind, uint32_t *words);
uint8_t *emu_mem_def(Emu *e, int kind);
bool emu_run_debug(Emu *e, const VStep *s, MNBuf *out);
#endif

/* VSM, the MN-Core-2-style assembly: the one table of instructions.
 *
 * INSN(name, unit, nsrc, precs, flags, steps)
 *   name   the base mnemonic; typed instructions are written [u]<prec><name>[r]
 *   unit   issue group (one expression per group per step, DESIGN of docs/vsm.md)
 *   nsrc   number of source operands
 *   precs  accepted precision letters (P_D double, P_F float, P_H half, P_L long,
 *          P_I int, P_S short; P_NONE untyped)
 *   flags  F_U: the u (unsigned) prefix is accepted; F_RED: output-reducing `r`
 *          suffix accepted; F_RRN: followed by a reduction opcode (l1bmr<op>);
 *          F_SEL: takes @<n> (a MAB or L1B selector); F_EXT: our extension (not in
 *          the public documents; see docs/vsm.md); F_MV: an MV (DRAM/L2BM) line
 *   steps  issue cost in steps (a step is 4 cycles); the cost model and the
 *          emulator's cycle count read this column, raised per machine by its
 *          description's instruction_steps (e.g. elementary functions)
 * The parser, printer, binary encoder, emulator and cost model all use this table. */
#ifndef MN_ISA_H
#define MN_ISA_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { P_NONE = 1 << 0, P_D = 1 << 1, P_F = 1 << 2, P_H = 1 << 3, P_L = 1 << 4, P_I = 1 << 5, P_S = 1 << 6 };
#define P_FLT (P_D | P_F | P_H)
#define P_INT (P_L | P_I | P_S)
#define P_ALL (P_FLT | P_INT)
enum { F_U = 1, F_RED = 2, F_RRN = 4, F_SEL = 8, F_EXT = 16, F_MV = 32 };

typedef enum { U_NOP, U_WAIT, U_NOFWD, U_ALU, U_MAU, U_MWRITE, U_MREAD, U_L1BM, U_L2BM, U_MV, U_UNIT_COUNT } VUnit;

/* a table, one row per line: */
/* clang-format off */
#define VSM_INSNS(INSN)                                                                   \
    /* control */                                                                         \
    INSN(nop, U_NOP, 0, P_NONE, 0, 1)                                                     \
    INSN(wait, U_WAIT, 0, P_NONE, 0, 0)                                                   \
    INSN(noforward, U_NOFWD, 0, P_NONE, 0, 0)                                             \
    /* ALU: untyped */                                                                    \
    INSN(zero, U_ALU, 0, P_NONE, 0, 1)                                                    \
    INSN(imm, U_ALU, 0, P_NONE, 0, 1)                                                     \
    INSN(msl, U_ALU, 1, P_NONE, 0, 1)                                                     \
    INSN(msr, U_ALU, 1, P_NONE, 0, 1)                                                     \
    /* ALU: typed, one source */                                                          \
    INSN(passa, U_ALU, 1, P_ALL, 0, 1)                                                    \
    INSN(inc, U_ALU, 1, P_INT, F_U, 1)                                                    \
    INSN(dec, U_ALU, 1, P_INT, F_U, 1)                                                    \
    INSN(not, U_ALU, 1, P_INT, 0, 1)                                                      \
    INSN(lnot, U_ALU, 1, P_INT, 0, 1)                                                     \
    INSN(floor, U_ALU, 1, P_FLT, 0, 1)                                                    \
    INSN(ftoi, U_ALU, 1, P_D | P_F, F_U, 1)                                               \
    INSN(itof, U_ALU, 1, P_D | P_F, F_U | F_EXT, 1)                                       \
    INSN(rsqrt, U_ALU, 1, P_D | P_F, 0, 1)                                                \
    INSN(rcp, U_ALU, 1, P_D | P_F, F_EXT, 1)                                              \
    INSN(exp, U_ALU, 1, P_D | P_F, F_EXT, 1)                                              \
    INSN(log, U_ALU, 1, P_D | P_F, F_EXT, 1)                                              \
    INSN(bfn, U_ALU, 1, P_D | P_F, 0, 1)                                                  \
    /* ALU: typed, two sources */                                                         \
    INSN(max, U_ALU, 2, P_ALL, F_U, 1)                                                    \
    INSN(min, U_ALU, 2, P_ALL, F_U, 1)                                                    \
    INSN(and, U_ALU, 2, P_INT, 0, 1)                                                      \
    INSN(or, U_ALU, 2, P_INT, 0, 1)                                                       \
    INSN(xor, U_ALU, 2, P_INT, 0, 1)                                                      \
    INSN(add, U_ALU, 2, P_INT, F_U, 1)                                                    \
    INSN(sub, U_ALU, 2, P_INT, F_U, 1)                                                    \
    INSN(lsl, U_ALU, 2, P_INT, 0, 1)                                                      \
    INSN(lsr, U_ALU, 2, P_INT, F_U, 1)                                                    \
    INSN(relu, U_ALU, 2, P_FLT, 0, 1)                                                     \
    /* MAU: vector (elementwise) */                                                       \
    INSN(vpassa, U_MAU, 1, P_FLT, F_RED, 1)                                               \
    INSN(vadd, U_MAU, 2, P_FLT, F_RED, 1)                                                 \
    INSN(vmul, U_MAU, 2, P_F | P_H, F_RED, 1)                                             \
    INSN(vfma, U_MAU, 3, P_F | P_H, F_RED, 1)                                             \
    INSN(vmulu, U_MAU, 2, P_D, F_RED, 1)                                                  \
    INSN(vmuld, U_MAU, 2, P_D, F_RED, 1)                                                  \
    INSN(vfmau, U_MAU, 3, P_D, F_RED, 1)                                                  \
    INSN(vfmad, U_MAU, 3, P_D, F_RED, 1)                                                  \
    /* MAU: matrix register */                                                            \
    INSN(mwrite, U_MWRITE, 1, P_D | P_F | P_H, 0, 1)                                            \
    INSN(mread, U_MREAD, 1, P_D | P_F | P_H, 0, 1)                                              \
    INSN(mmulu, U_MAU, 2, P_D, F_RED, 1)                                                  \
    INSN(mmuld, U_MAU, 2, P_D, F_RED, 1)                                                  \
    INSN(mfmau, U_MAU, 3, P_D, F_RED, 1)                                                  \
    INSN(mfmad, U_MAU, 3, P_D, F_RED, 1)                                                  \
    INSN(mmul, U_MAU, 2, P_F | P_H, F_RED, 1)                                           \
    INSN(mfma, U_MAU, 3, P_F | P_H, F_RED, 1)                                           \
    /* L1BM <-> PE tree transfers */                                                      \
    INSN(l1bmp, U_L1BM, 1, P_NONE, 0, 1)                                                  \
    INSN(l1bmm, U_L1BM, 1, P_NONE, F_SEL, 1)                                              \
    INSN(l1bmr, U_L1BM, 1, P_NONE, F_RRN, 1)                                              \
    INSN(l1bmd, U_L1BM, 1, P_NONE, 0, 1)                                                  \
    /* L2BM <-> L1BM tree transfers */                                                    \
    INSN(l2bmb, U_L2BM, 1, P_NONE, F_SEL, 1)                                              \
    INSN(l2bm, U_L2BM, 1, P_NONE, F_SEL, 1)                                               \
    INSN(l2bmd, U_L2BM, 1, P_NONE, 0, 1)                                                  \
    INSN(l2bmr, U_L2BM, 1, P_NONE, F_RRN, 1)                                              \
    /* L2BM -> DAR: entries staged in DARBUF, then written (1 entry a cycle: 128 in 32 steps) */ \
    INSN(l2bmdars, U_L2BM, 1, P_NONE, 0, 1)                                               \
    INSN(l2bmdarw, U_L2BM, 0, P_NONE, 0, 32)                                              \
    /* DRAM, PDM <-> L2BM, within and across groups (MV lines; forms in isa/mv.h) */ \
    INSN(mvp, U_MV, 1, P_NONE, F_MV, 1)                                                   \
    INSN(mvb2, U_MV, 1, P_NONE, F_MV, 1)                                                  \
    INSN(mvr2, U_MV, 1, P_NONE, F_MV | F_RRN, 1)                                          \
    INSN(mvb, U_MV, 1, P_NONE, F_MV, 1)                                                   \
    INSN(mvb4, U_MV, 1, P_NONE, F_MV, 1)                                                  \
    INSN(mvr, U_MV, 1, P_NONE, F_MV | F_RRN, 1)                                           \
    INSN(mvr4, U_MV, 1, P_NONE, F_MV | F_RRN, 1)                                          \
    INSN(mvd, U_MV, 1, P_NONE, F_MV, 1)
/* clang-format on */

typedef enum {
#define INSN(name, unit, nsrc, precs, flags, steps) VI_##name,
    VSM_INSNS(INSN)
#undef INSN
        VI_COUNT
} VInsn;

typedef struct {
    const char *name;
    VUnit unit;
    int nsrc, precs, flags, steps;
} VInsnInfo;
extern const VInsnInfo vsm_insns[VI_COUNT];

/* Reduction opcodes of the RRN (l1bmr<op>, l2bmr<op>, mvr<op>, mvr2<op>, mvr4<op>). */
/* a table, one row per line: */
/* clang-format off */
#define VSM_RRNS(R) R(dfadd) R(ffadd) R(hfadd) R(dmax) R(fmax) R(hmax) R(dmin) R(fmin) R(hmin) \
    R(liadd) R(iiadd) R(siadd) R(lbor) R(ibor) R(sbor) R(lband) R(iband) R(sband)
/* clang-format on */
typedef enum {
    RRN_NONE,
#define R(n) RRN_##n,
    VSM_RRNS(R)
#undef R
        RRN_COUNT
} VRrn;
extern const char *const vsm_rrn_names[RRN_COUNT];

/* ---- operands ---- */
typedef enum {
    K_NONE,
    /* PE memories (word addressed) */
    K_LM0,
    K_LM1,
    K_GRF0,
    K_GRF1,
    K_T,
    /* other PE-side operands */
    K_OMR, /* mask register entry (write) */
    K_NOWRITE, /* forwarding only */
    K_ALUF,
    K_MAUF,
    K_LBF,
    K_MREADF,
    K_PEID,
    K_SUBPEID,
    K_MABID,
    K_L1BID,
    K_L2BID,
    K_MSB1,
    /* MAB matrix registers */
    K_MX,
    K_MY,
    /* upper memories (long-word addressed) */
    K_L1BM,
    K_L2BM,
    K_DRAM,
    K_PDM,
    K_DAR, /* a group's DRAM address registers ($dar<entry>; l2bmdars) */
    K_COUNT
} VKind;

/* addressing: fixed, v<k>, [a,b,c,d], indirect (LM0 through T: $lmt; DRAM through the DAR: $di) */
enum { A_PLAIN, A_STRIDE, A_FLAT, A_TIND };
enum { M_DEFAULT, M_PATTERN, M_ENTRY }; /* write/zero-flush mask source */

typedef struct {
    uint8_t kind; /* VKind */
    uint8_t width; /* words per cycle: 1, 2 (l) or 4 (ll) */
    uint8_t amode; /* A_* */
    uint8_t neg; /* -$x (MAU inputs) */
    int16_t stride; /* A_STRIDE: words per cycle */
    uint32_t addr; /* word address (PE memories) / long-word address (upper) / entry */
    uint16_t flat[4];
    uint8_t mkind, mval; /* write mask on a destination: M_PATTERN bits or M_ENTRY */
    int16_t group, l2b; /* upper-memory selectors (@g.l2b); -1: all / default */
    /* relocation: sym = 1 + the id of the value whose address the operand's addresses are
     * relative to ($lm{12}8: word 8 of value 12), which the linker adds (LM operands in
     * words, DRAM in long words) and then records in reloc (the same id) for the app's
     * relocation table; 0: absolute */
    uint32_t sym, reloc;
} VOperand;

typedef struct {
    uint16_t insn; /* VInsn */
    uint8_t prec; /* a P_* letter bit, P_NONE for untyped */
    uint8_t uns, reduce;
    uint8_t rrn; /* VRrn */
    int16_t sel; /* @<n>, -1 none */
    uint8_t zkind, zval; /* zero-flush mask */
    uint8_t nsrc, ndst;
    VOperand src[3], dst[4];
    uint64_t imm[2]; /* imm: the 128-bit value, word 0 in the top of imm[0] */
    uint32_t size; /* MV: long words */
    uint16_t nd; /* MV nd<k>: a DAR entry serves k 16-LW pieces ($di); 0 absent */
    uint8_t tag; /* MV i<tag> / wait i<tag> */
} VExpr;

enum { ST_STEP, ST_MASK, ST_DEBUG }; /* a program line */

#define VSM_MAX_EXPR 12
typedef struct {
    uint8_t kind;
    uint8_t nexpr;
    uint32_t repeat; /* nop/N */
    VExpr *e; /* nexpr of them: a step holds only the expressions it has (a program
                      * of a million steps, mostly of one or two, would take 3 KB a step) */
    /* ST_MASK: mask[l|ll]<letters> <entry> */
    uint8_t mask_targets, mask_width, mask_entry;
    const char *text; /* ST_DEBUG: the command line */
    int line; /* source line, for messages */
} VStep;

typedef struct {
    VStep *steps;
    int nsteps, cap;
    VExpr **blk; /* the steps' expressions, in blocks that never move, each twice the last
                  * (up to 4096): a node's few lines cost little, a million lines few mallocs */
    int nblk, blk_used, blk_cap;
} VProgram;

/* mask-statement target letters */
enum { MT_R = 1, MT_S = 2, MT_T = 4, MT_M = 8, MT_N = 16, MT_K = 32 };

const char *vsm_prec_letter(int prec); /* "d", "f", ... "" */
/* word address of operand o in cycle c (uniform over PEs; T-indirect apart) */
uint32_t vsm_op_addr(const VOperand *o, int c);
bool vsm_is_pe_mem(int kind); /* LM0, LM1, GRF0, GRF1 */
/* The issue rules of one step (docs/vsm.md section 6: units, read ports, double
 * writes, imm and LM0), which the emulator enforces and the linker's merge obeys; false
 * with the broken rule in why. */
bool vsm_step_rules(const VStep *s, char *why, size_t n);
const char *vsm_kind_name(int kind);
#endif

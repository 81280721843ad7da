/* mnemu's core: the state of one machine and the execution of VSM programs on it.
 * The semantics and the timing model are those written in docs/vsm.md. */
#ifndef MN_EMU_H
#define MN_EMU_H
#include "buf.h"
#include "isa.h"
#include "machine.h"
#include "timing.h"

typedef struct Emu Emu;

typedef struct {
    int64_t steps, cycles, stall_cycles;
    int64_t insns[U_UNIT_COUNT];
    int64_t dram_bytes, pe_element_ops;
    int64_t lm_peak_lw[2]; /* highest long word written by the program in LM0 / LM1, plus one */
    int64_t model_cycles; /* the cycles vsm_program_cycles predicts (equal to cycles for a run to the end) */
    /* per group (docs/vsm.md 5.6): long words each DRAM and PDM moved and the cycles it was busy */
    int groups;
    int64_t dram_lw[64], dram_busy[64], pdm_lw[64], pdm_busy[64];
    int64_t link_busy_max; /* the busiest link between two groups */
} EmuStats;

Emu *emu_new(const MNMachine *m, char *err, size_t errlen);
void emu_free(Emu *e);
/* Run a program; debug output (d get) is appended to out. False on a run-time error,
 * with "line N: step S: message" in err. */
/* --strict: memory starts undefined and definedness is tracked (docs/vsm.md); call
 * before running. False when the shadow state cannot be allocated. */
bool emu_set_strict(Emu *e);
/* Run each instruction's per-PE work on n threads (0: one per online core, at most 8); the
 * results, cycles and figures are the same for every n. Call before running. */
void emu_set_threads(Emu *e, int n);
/* Append a Chrome/Perfetto trace event per executed line (and per MV transfer) to t. */
void emu_set_trace(Emu *e, MNBuf *t);
bool emu_run(Emu *e, const VProgram *p, MNBuf *out, char *err, size_t errlen);
const EmuStats *emu_stats(const Emu *e);
/* Host access to the DRAM or PDM (kind K_DRAM, K_PDM) of one group, in long words, for
 * placing inputs and parameters and reading outputs; false outside the memory. */
bool emu_host_write(Emu *e, int kind, int group, uint64_t lw_addr, const uint64_t *data, size_t n);
bool emu_host_read(Emu *e, int kind, int group, uint64_t lw_addr, uint64_t *data, size_t n);
/* --strict: index of the first long word in [a, a+n) holding undefined data, or -1. */
int64_t emu_host_first_undefined(Emu *e, int kind, int group, uint64_t lw_addr, size_t n);
#endif

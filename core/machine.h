/* Machine descriptions: presets/machines/NAME.json, read with cJSON. Every key is
 * required and checked; unknown keys are errors, so a typo cannot silently fall back
 * to a default. */
#ifndef MN_MACHINE_H
#define MN_MACHINE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct MNMachine {
    char name[64];
    char source[4352]; /* the file it was read from */
    int groups, l2b_per_group, l1b_per_l2b, mab_per_l1b, pe_per_mab;
    int64_t lm0_lw, lm1_lw, grf0_lw, grf1_lw, l1bm_lw, l2bm_lw, dram_lw, pdm_lw; /* dram and pdm per group */
    int half_bits, word_bits, long_bits;
    double clock_mhz;
    int cycles_per_step, mv_issue_steps, lm_raw_steps, grf_raw_steps, l1bm_raw_steps, l2bm_raw_steps;
    double bw_l1bm_pe_broadcast, bw_l1bm_pe_distribute, bw_l2bm_l1bm_broadcast, bw_l2bm_l1bm_distribute, bw_dram_l2bm;
    /* the MV ports of docs/vsm.md 5.6: a group's PDM, an L2BM's MV side, a link between two groups */
    double bw_pdm, bw_l2bm_mv, bw_cross_group;
    int dram_latency_cycles, pdm_latency_cycles;
    int address_alignment_lw;
    /* instruction_steps: cost overrides in steps, by full mnemonic ("frcp", "fmmul") */
    int nsteps_override;
    struct {
        char name[24];
        int steps;
    } steps_override[64];
    /* derived */
    int n_l2b, n_l1b, n_mab, n_pe;
} MNMachine;

/* presets/REL as the program finds it: under $MNCC_PRESETS, else beside the program
 * (PREFIX/share/mncc/presets when installed, the source tree's presets/ when run from
 * build/); path is filled even when no such file exists */
void mn_data_path(const char *rel, char *path, size_t n);
/* A machine or preset given as NAME or PATH: a path (a '/' or ".json" in it) as it is,
 * a name as DIR NAME.json in the data directory (dir "machines/" or "") */
void mn_data_named(const char *name, const char *dir, char *path, size_t n);
/* the file machine NAME|PATH is read from (filled even when it does not exist) */
void machine_path(const char *name, char *path, size_t n);
/* NAME (a file presets/machines/NAME.json next to the program) or a path to a .json. */
bool machine_load(const char *name_or_path, MNMachine *m, char *err, size_t errlen);
bool machine_parse(const char *json, const char *what, MNMachine *m, char *err, size_t errlen);
/* the long words one value may take: it lives in one bank, so the smaller LM */
static inline int64_t machine_lm_cap(const MNMachine *m) { return m->lm0_lw < m->lm1_lw ? m->lm0_lw : m->lm1_lw; }
#endif

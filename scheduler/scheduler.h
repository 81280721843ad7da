/* Node Simulation, the schedulers and the address planner: the passes after the
 * graph planners (driver/passes.c runs them). */
#ifndef MN_SCHED_H
#define MN_SCHED_H
#include "compile.h"
#include "layout.h"

/* The unit a node keeps busy: one track each in trace.json. */
typedef enum { SIM_COMPUTE, SIM_DRAM, SIM_TREE, SIM_NRES } SimResource;

/* One way to run a node, with what it costs. */
typedef struct {
    int out_bank; /* 0 LM0, 1 LM1; -1: in place, in input 0's bank and space */
    bool fast; /* double-buffered: temp_lw more LM for fewer cycles */
    int64_t cycles; /* its LM inputs in different banks (or one of them) */
    int64_t cycles_conflict; /* two LM inputs in one bank: one read port per bank */
    int64_t lm_lw; /* LM in use while it runs: LM inputs, outputs, temp */
    int64_t temp_lw;
} SimVariant;

#define SIM_MAX_VARIANTS 6
typedef struct {
    SimResource res;
    int nvar;
    SimVariant var[SIM_MAX_VARIANTS];
    uint64_t key; /* hash of the signature: what the cache is addressed by */
} SimNode;

/* one event of the schedule's timeline (trace.json's, for the dashboard) */
typedef struct {
    const char *name, *what; /* the node or value; its op, or reload / spill / move / recompute */
    int track; /* 0 compute, 1 DRAM transfer, 2 tree transfer */
    int64_t start, cycles;
} SchedEvent;

typedef struct SchedState {
    SimNode *sim; /* MNNode.sim indexes it */
    int nsim;
    int64_t dram_top; /* the address pass: DRAM in use per group, in long words */
    SchedEvent *events; /* the timeline by start (arena), when trace.json was written */
    int nevents;
    /* the residency the schedule decided (the dashboard plots it): LM0 and LM1 long
     * words held after each of its nres events (res_lw[2 e + bank]), and the peaks of
     * their addresses (the lm0_peak_lw and lm1_peak_lw figures) */
    int64_t *res_lw;
    int nres;
    int64_t peak_lw[2];
    struct SimResults *results; /* simulation_result.json while its text is made (sim.c) */
} SchedState;

bool sched_node_simulation(MNCompile *c);
bool sched_schedule(MNCompile *c);
/* simulation_result.json, once its text is made (at the end of the schedule pass, or of
 * the compile when that pass did not run); true when there is none to write */
bool sched_results_write(MNCompile *c);
bool sched_address(MNCompile *c);

/* The cost model's pieces the scheduler also needs for what it inserts. */
int64_t sim_dram_cycles(const MNMachine *m, const MNValue *v); /* one DRAM <-> LM transfer of v */
int64_t sim_dram_bytes(const MNValue *v); /* v's DRAM image */
int64_t sim_move_cycles(const MNMachine *m, const MNValue *v); /* LM0 <-> LM1 */
/* Simulate node n (no cache): its resource and variants for the given mode. */
void sim_node(const MNMachine *m, const MNNode *n, int mode, SimNode *out);
uint64_t sim_hash(const void *p, size_t n);

/* Content-addressed store of SimNodes under dir (sim_cache.c). get: true and *out on a
 * valid entry for sig; a missing, corrupt or colliding entry counts and returns false.
 * put: written atomically (temp file + rename), so concurrent compiles sharing dir only
 * ever see whole entries; a failed write (read-only dir) counts, nothing else. */
typedef struct {
    const char *dir;
    int64_t hits, misses, corrupt, write_failures;
} SimCache;
bool sim_cache_get(SimCache *sc, const char *sig, uint64_t key, SimNode *out);
void sim_cache_put(SimCache *sc, const char *sig, uint64_t key, const SimNode *sn);

/* Address planning of intervals (addr.c): each [start, end] positions, size; offsets
 * aligned to align, no two intervals that overlap in time overlapping in memory. Two
 * heuristics, the smaller peak kept; returns the peak, *load the largest sum of
 * simultaneously live sizes (a lower bound for any placement), *which the heuristic. */
typedef struct {
    int64_t start, end, size, offset;
} SchedInterval;
int64_t sched_place(SchedInterval *iv, int n, int64_t align, int64_t *load, const char **which);
#endif

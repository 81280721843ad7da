/* What sched.c (the simulation and the driver), anneal.c (simulated annealing) and
 * materialize.c (the schedule written into the graph) share. */
#ifndef MN_SCHED_IMPL_H
#define MN_SCHED_IMPL_H
#include "scheduler.h"
#include "ops.h"

enum { EV_NODE, EV_LOAD, EV_STORE, EV_FORGET, EV_MOVE, EV_RECOMPUTE };

typedef struct {
    int kind;
    int node; /* position in the order (EV_NODE), or the producer's (EV_RECOMPUTE) */
    int v; /* value id (all but EV_NODE) */
    int bank; /* where the value (or the node's outputs) goes */
    int variant; /* EV_NODE */
    int64_t start, dur;
    int res;
    int64_t addr; /* the LM address of the copy a load, move or recompute makes; a node's temp */
    int64_t temp; /* EV_NODE: the long words of its temp at addr (a fast variant's, or a gather's scratch) */
} Event;

typedef struct {
    MNCompile *c;
    MNGraph *g;
    int nn, nv, policy;
    MNNode **order;
    int64_t cap[2];
    /* per value (original ids) */
    int64_t *size; /* LM long words, 0: not an LM value */
    bool *dram_src; /* an LM copy made by a download: its source stays in DRAM */
    int *prod; /* producing node's index in nodes0, -1 none */
    int *cons_start, *cons; /* consumers (node indices in nodes0), CSR */
    MNNode **nodes0; /* the original order */
    bool *recompute; /* SA's choice per value */
    int64_t *xfer, *bytes; /* per value: one DRAM transfer's cycles, its DRAM image */
    int64_t *scratch; /* per node (its sim index): the LM0 range Code Emit's gather scratch needs while it runs */
} Sched;

typedef struct {
    /* results */
    int64_t makespan, dram_read, dram_written, spills, reloads, recomputes, moves, forgets;
    bool fail;
    int fail_node;
    /* the log, when asked for */
    Event *ev;
    int nev, cap_ev;
    int *reloaded; /* values reloaded (SA's recompute candidates), when want_reloaded */
    int nreloaded, cap_reloaded;
    bool want_reloaded;
    int *def_bank; /* with the log: the bank and address each value got where it was made */
    int64_t *def_off;
} Run;

/* append to a malloc'd array, doubling it */
#define PUSH_HEAP(arr, n, cap, x)                                                                                  \
    do {                                                                                                           \
        if ((n) == (cap)) (cap) = (cap) ? 2 * (cap) : 64, (arr) = xrealloc((arr), sizeof(*(arr)) * (size_t)(cap)); \
        (arr)[(n)++] = (x);                                                                                        \
    } while (0)

static inline bool lm_value(const MNValue *v) {
    return v && v->loc_kind == MN_LOC_KIND_LM && mn_dtype_bytes(v->dtype) && v->num_lw > 0;
}

typedef struct {
    int bank;
    int64_t start, end, size, offset;
} Slot;

typedef struct {
    Slot *slot;
    int nslot;
    int *def_slot; /* per value: the buffer it is made in, -1 */
    int *ev_slot; /* per event: the buffer of the copy a load, move or recompute makes,
                      or the temp of a node */
} Slots;

typedef struct {
    int64_t steps, accepted, improved, start_cost, best_cost;
} SaStats;

/* sched.c: one simulation of s's order and choices into r (the log of events when log) */
void sched_sim_run(const Sched *s, Run *r, bool log, bool want_reloaded);
void sched_run_free(Run *r);
/* anneal.c: auto_recompute_sa's search from s's spill_opt order; the best state kept in s */
void sched_anneal(Sched *s, SaStats *stats);
/* materialize.c: the buffers of a run's log, their addresses, and the graph rewritten */
void sched_plan_slots(const Sched *s, const Run *r, Slots *S);
void sched_place_slots(const Sched *s, Slots *S, int64_t peak[2], int64_t load[2], const char *which[2]);
void sched_slots_free(Slots *S);
void sched_materialize(Sched *s, const Run *r, const Slots *S);
#endif

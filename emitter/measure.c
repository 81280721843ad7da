/* Code Emit as the scheduler's cost model (MNCompile.code): a node's cycles timed from
 * its code emitted alone, and each node's scratch need before the schedule, both from
 * the same checks and emission as the program itself, so that the scheduler's figures
 * are the emitted code's. */
#include "emit.h"
#include "emit_impl.h"
#include "memo.h"
#include "app.h"
#include "layout.h"
#include "ops.h"
#include "timing.h"
#include "vsm.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void scratch_needs(MNCompile *c, int64_t *need) {
    MNGraph *g = c->g;
    /* before the schedule a value is in LM, in no bank yet: LM0 for the checks, which
     * look at kinds and layouts only, then as it was */
    MNLoc *was = xmalloc(sizeof(MNLoc) * (size_t)(g->nvalues + 1));
    for (int v = 0; v < g->nvalues; v++) {
        was[v] = g->values[v]->loc;
        if (g->values[v]->loc_kind == MN_LOC_KIND_LM && was[v] != MN_LOC_LM1) g->values[v]->loc = MN_LOC_LM0;
    }
    Walk wk;
    emit_walk_init(&wk, g);
    wk.dry = true;
    c->emit_memo = memo_new(); /* what emission's walk memoizes; its own: keys may hold banks */
    for (int i = 0; i < g->nnodes; i++) {
        wk.pos = i;
        wk.dry_need = 0;
        (void)emit_why_not(c, g->nodes[i], &wk);
        need[i] = wk.dry_need;
    }
    emit_walk_free(&wk);
    memo_free(c->emit_memo);
    c->emit_memo = NULL;
    for (int v = 0; v < g->nvalues; v++) g->values[v]->loc = was[v];
    free(was);
}

/* Node Simulation's best mode: node n alone, its LM inputs at the bottom of the banks
 * bank[k] names (LM0 0, LM1 1), its LM outputs after them in out_bank (-1: output 0
 * over input 0), nothing else resident; the cycles of its code on the emulator's timing
 * model, or -1 when it cannot be emitted so (or does not fit). */
/* false with the reason when the emitted code cannot run on machine m at all */
bool emit_machine_ok(const MNMachine *m, char *why, size_t n) {
    if (m->lm_raw_steps > 2 || m->grf_raw_steps > 1 || m->l1bm_raw_steps > 2 || m->l2bm_raw_steps > 3) {
        /* the emitted spacing (nops) is the mncore2 timing; a slower machine would reject it */
        snprintf(why, n,
                 "machine %s: read-after-write distances beyond those the emitter spaces for (LM 2, GRF 1, L1BM 2, "
                 "L2BM 3 steps)",
                 m->name);
        return false;
    }
    MNLayout probe = {0};
    AppLayoutImage pim;
    return app_layout_image(&probe, m, &pim, why, n); /* the transfers cannot run on this machine */
}

static int64_t measure(MNCompile *c, const MNNode *n, const int *bank, int out_bank) {
    enum { MAXV = 64 };
    char why[300];
    if (n->nin + n->nout > MAXV || !emit_machine_ok(&c->machine, why, sizeof why)) return -1;
    /* what the emission makes (index tables, names) lives in an arena of its own, freed at
     * the end: a node timed for Node Simulation leaves nothing in the compile's */
    Arena *scratch = arena_new(0);
    MNValue vals[MAXV], **vp = ARENA_ARRAY(scratch, MNValue *, MAXV);
    MNValue *ins[MAXV], *outs[MAXV];
    const MNValue *orig[MAXV];
    bool isin[MAXV] = {0};
    int nv = 0;
    int64_t used[2] = {0, 0}, cap[2] = {c->machine.lm0_lw, c->machine.lm1_lw},
            al = c->machine.address_alignment_lw > 0 ? c->machine.address_alignment_lw : 1;
    for (int side = 0; side < 2; side++)
        for (int k = 0; k < (side ? n->nout : n->nin); k++) {
            const MNValue *v = side ? n->out[k] : n->in[k];
            MNValue **slot = side ? &outs[k] : &ins[k];
            if (!v) {
                *slot = NULL;
                continue;
            }
            int j = 0; /* a value read twice is one copy */
            while (j < nv && orig[j] != v) j++;
            if (j == nv) {
                orig[nv] = v;
                isin[nv] = !side;
                vals[nv] = *v;
                vals[nv].id = nv;
                vp[nv] = &vals[nv];
                MNValue *x = &vals[nv++];
                if (x->addr < 0) x->addr = 0; /* DRAM not placed yet: any address times the same */
                if (x->loc_kind == MN_LOC_KIND_LM) {
                    int b =
                        side ? (out_bank < 0 ? ins[0] && emit_in_lm(ins[0]) ? ins[0]->loc == MN_LOC_LM1 : 0 : out_bank)
                             : bank[k];
                    x->loc = b ? MN_LOC_LM1 : MN_LOC_LM0;
                    if (side && k == 0 && out_bank < 0 && ins[0] && emit_in_lm(ins[0]))
                        x->addr = ins[0]->addr;
                    else {
                        x->addr = used[b];
                        used[b] += (x->num_lw + al - 1) / al * al;
                        if (used[b] > cap[b]) {
                            arena_free(scratch);
                            return -1;
                        }
                    }
                }
            }
            *slot = &vals[j];
        }
    MNNode m = *n;
    m.in = ins;
    m.out = outs;
    MNNode *mp = &m;
    MNGraph g = *c->g; /* its own value list and name table: the tables emission adds stay out of the real graph */
    g.nodes = &mp;
    g.nnodes = 1;
    g.cap_nodes = 1;
    g.values = vp;
    g.nvalues = nv;
    g.cap_values = MAXV;
    g.table_cap = 256;
    g.table = ARENA_ARRAY(scratch, MNValue *, g.table_cap);
    g.arena = scratch;
    MNCompile cc = *c;
    cc.g = &g;
    cc.arena = scratch;
    Walk wk;
    emit_walk_init(&wk, &g);
    wk.pos = 0;
    for (int k = 0; k < nv; k++) /* the inputs are resident before the node */
        if (emit_in_lm(&vals[k]) && isin[k]) {
            wk.at[k] = wk.n;
            wk.list[wk.n++] = k;
            emit_walk_add(&g, &wk, &vals[k]);
        }
    emit_walk_before(&g, &wk, &m);
    int64_t cyc = -1;
    if (!emit_why_not(&cc, &m, &wk)) {
        MNBuf b = {0};
        Em e = {.c = &cc, .b = &b};
        emit_node(&e, &m, &wk);
        emit_smap_cache_free(&e);
        char err[600];
        cyc = vsm_text_cycles("measure.vsm", b.data ? b.data : "", b.len, true, &c->machine, err, sizeof err);
        if (cyc < 0) die("emitted VSM does not assemble: %s", err);
        buf_free(&b);
    }
    emit_walk_free(&wk);
    arena_free(scratch);
    return cyc;
}

const MNCodeModel emit_code_model = {measure, scratch_needs};

/* Address planner, DRAM side (the LM banks are placed by the scheduler, which must
 * know that its schedule fits before it writes it; see sched.c).
 *
 * DRAM holds what the host exchanges and writes at load time (graph inputs and
 * outputs, parameters: alive for the whole program, laid out one after another at the
 * bottom), and what the schedule makes there (spills, values Time-Slice keeps whole in
 * DRAM): alive from the node that writes them to their last reader, placed above with
 * the same heuristics as LM (addr.c). Offsets are in long words, aligned to DRAM_ALIGN
 * so that every transfer starts on a burst boundary. report.json gets peak and LOAD
 * per memory; the bench prints their ratio. */
#include "scheduler.h"
#include "app.h"
#include <stdlib.h>
#include <string.h>

#define DRAM_ALIGN 64 /* long words: a transfer's granule */

static bool dram_value(const MNValue *v) {
    /* graph inputs and outputs always: the host exchanges them (a folded output too) */
    return v && mn_dtype_bytes(v->dtype) &&
           (((v->loc_kind == MN_LOC_KIND_DRAM || v->loc_kind == MN_LOC_KIND_INOUT) && v->nuses > 0) || v->is_output ||
            v->is_input);
}

bool sched_address(MNCompile *c) {
    MNGraph *g = c->g;
    int nv = g->nvalues;
    int64_t *first = xmalloc(sizeof(int64_t) * (size_t)(nv + 1)), *last = xmalloc(sizeof(int64_t) * (size_t)(nv + 1));
    for (int v = 0; v < nv; v++) {
        first[v] = -1;
        last[v] = -1;
    }
    for (int i = 0; i < g->nnodes; i++) {
        const MNNode *n = g->nodes[i];
        for (int k = 0; k < n->nout; k++)
            if (n->out[k] && first[n->out[k]->id] < 0) first[n->out[k]->id] = i;
        for (int k = 0; k < n->nin; k++)
            if (n->in[k]) last[n->in[k]->id] = i;
    }
    SchedInterval *iv = xmalloc(sizeof(SchedInterval) * (size_t)(nv + 1));
    int *who = xmalloc(sizeof(int) * (size_t)(nv + 1));
    int n = 0;
    int64_t base = 0;
    int nperm = 0;
    for (int v = 0; v < nv; v++) { /* the host's part first, in value order */
        MNValue *x = g->values[v];
        if (!dram_value(x)) continue;
        /* the layout image the transfers move (per group, at the same address in each) */
        char lerr[300];
        int64_t lw = x->layout ? (int64_t)app_layout_image_lw(x->layout, &c->machine, lerr, sizeof lerr) : 0;
        if (lw <= 0) lw = (sim_dram_bytes(x) + 7) / 8;
        bool perm = x->is_input || x->is_output || x->konst || first[v] < 0;
        if (perm) {
            x->addr = base;
            base += (lw + DRAM_ALIGN - 1) / DRAM_ALIGN * DRAM_ALIGN;
            nperm++;
            continue;
        }
        who[n] = v;
        iv[n++] = (SchedInterval){first[v], last[v] >= first[v] ? last[v] : first[v], lw, 0};
    }
    int64_t load, peak;
    const char *which;
    peak = sched_place(iv, n, DRAM_ALIGN, &load, &which);
    for (int k = 0; k < n; k++) g->values[who[k]]->addr = base + iv[k].offset;
    free(iv);
    free(who);
    free(first);
    free(last);
    int64_t total = base + peak,
            have = c->machine.dram_lw; /* per group: every group holds its part at the same address */
    c->sched->dram_top = total;
    mn_figure(c, "dram_host_lw", base);
    mn_figure(c, "dram_temp_peak_lw", peak);
    mn_figure(c, "dram_temp_load_lw", load);
    mn_figure(c, "dram_peak_lw", total);
    mn_log(c, 0,
           "DRAM addresses: %d host-exchanged values and parameters in %lld LW, then temporaries peak %lld / LOAD %lld "
           "LW (%s); %lld of %lld LW",
           nperm, (long long)base, (long long)peak, (long long)load, which, (long long)total, (long long)have);
    if (total > have)
        return diag_error(&c->diag, DIAG_RESOURCE, "%s: needs %lld LW of DRAM, machine '%s' has %lld", g->file,
                          (long long)total, c->machine.name, (long long)have);
    return true;
}

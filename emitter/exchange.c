/* Code Emit: the exchange of L2BM rows between L2Bs and groups, through the PDM.
 *
 * Tree transfers are alike on every L2B; only an MV names one. A row movement that must
 * change a row's L2B, or give each L2B rows of its own (rowmove.c's exchange form, the
 * blocks of blockmove.c), first gathers the rows into L2BM slots alike on every L2B, then
 * lists here each row an L2B takes: from a slot of the L2B that holds it to a receiving
 * slot of its own. Rows of consecutive slots that go to consecutive slots of one L2B form
 * a run, which moves as one transfer: L2BM to its group's PDM (mvp), then PDM to the
 * receiving L2BM (mvp, across groups where they differ). All runs go up before any comes
 * down, so a receiving slot may be a slot another run reads.
 *
 * Cost: two transfers a run, 64 LW a row over the PDM's port (16 LW a cycle on mncore2),
 * each with the PDM's latency; the transfers of a pass are in flight together. */
#include "emit_impl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROW = 64 }; /* a row's long words in the L2BM */

int emit_mv_tag(Em *e, bool *used) {
    int t = e->tag = e->tag % 63 + 1;
    if (used[t]) { /* a tag still in flight: wait for it before reusing it */
        buf_printf(e->b, "nop; wait i%02x\n", t);
        used[t] = false;
    }
    used[t] = true;
    return t;
}

void emit_mv_wait_all(Em *e, bool *used) {
    for (int t = 1; t < 64; t++)
        if (used[t]) buf_printf(e->b, "nop; wait i%02x\n", t), used[t] = false;
}

void emit_exchange_add(EmExchange *x, int64_t l_to, int64_t l_from, int64_t from, int64_t to) {
    int64_t *r = x->n ? x->run[x->n - 1] : NULL;
    if (r && r[0] == l_to && r[1] == l_from && r[2] + r[4] == from && r[3] + r[4] == to) {
        r[4]++;
        return;
    }
    if (x->n == x->cap) x->run = xrealloc(x->run, sizeof *x->run * (size_t)(x->cap = x->cap ? 2 * x->cap : 64));
    int64_t nr[5] = {l_to, l_from, from, to, 1};
    memcpy(x->run[x->n++], nr, sizeof nr);
}

void emit_exchange(Em *e, EmExchange *x, bool *used) {
    const MNMachine *m = &e->c->machine;
    int64_t L = m->l2b_per_group, *poff = xcalloc((size_t)x->n + 1, sizeof(int64_t)), top[64] = {0};
    for (int64_t k = 0; k < x->n; k++) { /* each run's place in its source group's PDM */
        int64_t g = x->run[k][1] / L;
        if (g >= 64) die("row exchange: more than 64 groups");
        poff[k] = top[g], top[g] += ROW * x->run[k][4];
        if (top[g] > m->pdm_lw) die("row exchange: a batch past the PDM");
    }
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t k = 0; k < x->n; k++) {
            const int64_t *r = x->run[k];
            long long n64 = ROW * r[4], gi = r[1] / L, go = r[0] / L;
            int t = emit_mv_tag(e, used);
            if (!pass)
                buf_printf(e->b, "mvp/n%lldi%02x $lc%lld@%lld.%lld $p%lld@%lld\n", n64, t, (long long)(ROW * r[2]), gi,
                           (long long)(r[1] % L), (long long)poff[k], gi);
            else
                buf_printf(e->b, "mvp/n%lldi%02x $p%lld@%lld $lc%lld@%lld.%lld\n", n64, t, (long long)poff[k], gi,
                           (long long)(ROW * r[3]), go, (long long)(r[0] % L));
        }
        emit_mv_wait_all(e, used);
    }
    free(poff);
    free(x->run);
    memset(x, 0, sizeof *x);
}

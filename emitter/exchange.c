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
 * A range that several runs read goes up once; one that every L2B takes at the same slot
 * (a value replicated from one L2B onto all) comes down as one broadcast (mvb), which reads
 * the PDM once and feeds each group over its own link, where a transfer per L2B would read
 * it once per L2B through the one PDM port.
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
    int64_t L = m->l2b_per_group, NL = m->n_l2b, *poff = xcalloc((size_t)x->n + 1, sizeof(int64_t)), top[64] = {0};
    int64_t *up = xmalloc(sizeof(int64_t) * (size_t)(x->n + 1));
    bool *done = xcalloc((size_t)x->n + 1, sizeof(bool)), seen[64];
    for (int64_t k = 0; k < x->n; k++) { /* each source range goes up once, to its place in its group's PDM */
        const int64_t *r = x->run[k];
        up[k] = k;
        for (int64_t q = 0; q < k && up[k] == k; q++)
            if (up[q] == q && x->run[q][1] == r[1] && x->run[q][2] == r[2] && x->run[q][4] == r[4]) up[k] = q;
        if (up[k] != k) continue;
        int64_t g = r[1] / L;
        if (g >= 64) die("row exchange: more than 64 groups");
        poff[k] = top[g], top[g] += ROW * r[4];
        if (top[g] > m->pdm_lw) die("row exchange: a batch past the PDM");
    }
    for (int64_t k = 0; k < x->n; k++) {
        const int64_t *r = x->run[k];
        if (up[k] != k) continue;
        long long gi = r[1] / L;
        buf_printf(e->b, "mvp/n%lldi%02x $lc%lld@%lld.%lld $p%lld@%lld\n", (long long)(ROW * r[4]),
                   emit_mv_tag(e, used), (long long)(ROW * r[2]), gi, (long long)(r[1] % L), (long long)poff[k], gi);
    }
    emit_mv_wait_all(e, used);
    for (int64_t k = 0; k < x->n; k++) {
        if (done[k]) continue;
        const int64_t *r = x->run[k];
        long long n64 = ROW * r[4], gi = r[1] / L;
        int64_t nto = 0; /* a range every L2B takes at the same slot: one broadcast */
        memset(seen, 0, sizeof seen);
        for (int64_t q = k; q < x->n && NL <= 64; q++)
            if (!done[q] && up[q] == up[k] && x->run[q][3] == r[3] && !seen[x->run[q][0]])
                seen[x->run[q][0]] = true, nto++;
        if (nto == NL && NL > 1) {
            for (int64_t q = k; q < x->n; q++)
                if (!done[q] && up[q] == up[k] && x->run[q][3] == r[3]) done[q] = true;
            buf_printf(e->b, "mvb/n%lldi%02x $p%lld@%lld $lc%lld\n", n64, emit_mv_tag(e, used), (long long)poff[up[k]],
                       gi, (long long)(ROW * r[3]));
            continue;
        }
        done[k] = true;
        buf_printf(e->b, "mvp/n%lldi%02x $p%lld@%lld $lc%lld@%lld.%lld\n", n64, emit_mv_tag(e, used),
                   (long long)poff[up[k]], gi, (long long)(ROW * r[3]), (long long)(r[0] / L), (long long)(r[0] % L));
    }
    emit_mv_wait_all(e, used);
    free(poff);
    free(up);
    free(done);
    free(x->run);
    memset(x, 0, sizeof *x);
}

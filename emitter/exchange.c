/* Code Emit: the exchange of L2BM rows between L2Bs and groups, through the PDM.
 *
 * Tree transfers are alike on every L2B; only an MV names one. A row movement that must
 * change a row's L2B, or give each L2B rows of its own (rowmove.c's exchange form, the
 * blocks of blockmove.c), first gathers the rows into L2BM slots alike on every L2B, then
 * lists here each row an L2B takes: from a slot of the L2B that holds it to a receiving
 * slot of its own. Rows of consecutive slots that go to consecutive slots of one L2B form
 * a run. Every row goes up once, L2BM to its group's PDM (mvp), where the rows of each L2B
 * lie in the order of their slots, so that consecutive slots go up in one transfer; each
 * run comes down from there to its receiving L2BM (mvp, across groups where they differ),
 * runs that continue one another in the PDM and in the L2BM in one transfer. A run that
 * every L2B takes at the same slot (a value replicated from one L2B onto all) comes down as
 * one broadcast (mvb), which reads the PDM once and feeds each group over its own link,
 * where a transfer per L2B would read it once per L2B through the one PDM port. All rows go
 * up before any comes down, so a receiving slot may be a slot another run reads.
 *
 * Cost: 64 LW a row over the PDM's port each way (16 LW a cycle on mncore2), a PDM latency
 * a transfer; the transfers of a pass are in flight together, one MV issued every 4 steps. */
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

/* a transfer down from group g's PDM at p to L2BM long word lc of L2B to (-1: every L2B), n long words */
typedef struct {
    int64_t g, p, lc, n, to;
} Down;

static void down(Em *e, const Down *d, bool *used) {
    int64_t L = e->c->machine.l2b_per_group;
    if (!d->n) return;
    if (d->to < 0)
        buf_printf(e->b, "mvb/n%lldi%02x $p%lld@%lld $lc%lld\n", (long long)d->n, emit_mv_tag(e, used), (long long)d->p,
                   (long long)d->g, (long long)d->lc);
    else
        buf_printf(e->b, "mvp/n%lldi%02x $p%lld@%lld $lc%lld@%lld.%lld\n", (long long)d->n, emit_mv_tag(e, used),
                   (long long)d->p, (long long)d->g, (long long)d->lc, (long long)(d->to / L), (long long)(d->to % L));
}

static int row_cmp(const void *a, const void *b) {
    const int64_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : x[1] != y[1] ? (x[1] < y[1] ? -1 : 1) : 0;
}

/* the index of row (l, slot) in the sorted rows u[0..n) */
static int64_t row_at(int64_t (*u)[2], int64_t n, int64_t l, int64_t slot) {
    int64_t lo = 0, hi = n - 1, key[2] = {l, slot};
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (row_cmp(u[mid], key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (n <= 0 || row_cmp(u[lo], key))
        die("row exchange: row %lld of L2B %lld not sent up", (long long)slot, (long long)l);
    return lo;
}

/* Whether run q comes down with run k in one broadcast: the same rows to the same slot */
static bool same_down(const int64_t *r, const int64_t *t) {
    return t[1] == r[1] && t[2] == r[2] && t[4] == r[4] && t[3] == r[3];
}

void emit_exchange(Em *e, EmExchange *x, bool *used) {
    const MNMachine *m = &e->c->machine;
    int64_t L = m->l2b_per_group, NL = m->n_l2b, nu = 0;
    for (int64_t k = 0; k < x->n; k++) nu += x->run[k][4];
    /* every row that goes up, once (u: by holding L2B and slot) */
    int64_t(*u)[2] = xmalloc(sizeof *u * (size_t)(nu + 1));
    nu = 0;
    for (int64_t k = 0; k < x->n; k++)
        for (int64_t i = 0; i < x->run[k][4]; i++) u[nu][0] = x->run[k][1], u[nu++][1] = x->run[k][2] + i;
    qsort(u, (size_t)nu, sizeof *u, row_cmp);
    int64_t w = 0;
    for (int64_t i = 0; i < nu; i++)
        if (!w || row_cmp(u[w - 1], u[i])) memcpy(u[w++], u[i], sizeof *u);
    nu = w;
    /* the runs every L2B takes (a broadcast each) */
    int64_t *bc = xcalloc((size_t)x->n + 1, sizeof(int64_t));
    bool seen[64];
    for (int64_t k = 0; k < x->n; k++) {
        if (bc[k]) continue;
        int64_t nto = 0;
        memset(seen, 0, sizeof seen);
        for (int64_t q = k; q < x->n && NL <= 64; q++)
            if (!bc[q] && same_down(x->run[k], x->run[q]) && !seen[x->run[q][0]]) seen[x->run[q][0]] = true, nto++;
        if (nto != NL || NL < 2) continue;
        for (int64_t q = k + 1; q < x->n; q++)
            if (!bc[q] && same_down(x->run[k], x->run[q])) bc[q] = -2;
        bc[k] = 1;
    }
    /* the rows in their groups' PDMs by holding L2B and slot: consecutive slots of one L2B go up
     * in one transfer (and a run's rows lie together there) */
    int64_t *pu = xmalloc(sizeof(int64_t) * (size_t)(nu + 1)), top[64] = {0};
    for (int64_t i = 0; i < nu; i++) {
        int64_t g = u[i][0] / L;
        if (g >= 64) die("row exchange: more than 64 groups");
        pu[i] = top[g], top[g] += ROW;
        if (top[g] > m->pdm_lw) die("row exchange: a batch past the PDM");
    }
    for (int64_t i = 0, j; i < nu; i = j) {
        for (j = i + 1; j < nu && u[j][0] == u[i][0] && u[j][1] == u[j - 1][1] + 1; j++) {}
        long long gi = u[i][0] / L;
        buf_printf(e->b, "mvp/n%lldi%02x $lc%lld@%lld.%lld $p%lld@%lld\n", (long long)(ROW * (j - i)),
                   emit_mv_tag(e, used), (long long)(ROW * u[i][1]), gi, (long long)(u[i][0] % L), (long long)pu[i],
                   gi);
    }
    emit_mv_wait_all(e, used);
    Down d = {0}; /* consecutive ranges to consecutive slots of the same L2BMs coalesce into one transfer */
    for (int64_t k = 0; k < x->n; k++) {
        const int64_t *r = x->run[k];
        if (bc[k] == -2) continue;
        Down n = {r[1] / L, pu[row_at(u, nu, r[1], r[2])], ROW * r[3], ROW * r[4], bc[k] ? -1 : r[0]};
        if (d.n && d.g == n.g && d.to == n.to && d.p + d.n == n.p && d.lc + d.n == n.lc) {
            d.n += n.n;
            continue;
        }
        down(e, &d, used);
        d = n;
    }
    down(e, &d, used);
    emit_mv_wait_all(e, used);
    free(u);
    free(pu);
    free(bc);
    free(x->run);
    memset(x, 0, sizeof *x);
}

/* auto_recompute_sa: simulated annealing from the spill_opt schedule over the node
 * order (a node moved within the window its producers and consumers leave) and over
 * recomputation; the cost is the simulated makespan, the best state is kept. */
#include "sched_impl.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_next(uint64_t *x) { /* splitmix64 */
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void sched_anneal(Sched *s, SaStats *stats) {
    int nn = s->nn;
    uint64_t rng = (uint64_t)s->c->opt->ival[MN_OPT_seed] * 0x2545f4914f6cdd1dull + 1;
    MNNode **cur = xmalloc(sizeof(MNNode *) * (size_t)(nn + 1)), **best = xmalloc(sizeof(MNNode *) * (size_t)(nn + 1));
    bool *rc_best = xcalloc((size_t)s->nv + 1, sizeof(bool));
    memcpy(cur, s->order, sizeof(MNNode *) * (size_t)nn);
    memcpy(best, cur, sizeof(MNNode *) * (size_t)nn);
    Run r;
    s->order = cur;
    sched_sim_run(s, &r, false, true);
    int64_t cost = r.fail ? INT64_MAX : r.makespan, best_cost = cost;
    stats->start_cost = cost;
    int *pos = xmalloc(sizeof(int) * (size_t)(nn + 1));
    int64_t budget = s->c->opt->ival[MN_OPT_sa_steps];
    double T0 = cost == INT64_MAX ? 1 : (double)cost * 0.02;
    for (int64_t step = 0; step < budget && cost != INT64_MAX && nn > 1; step++) {
        double T = T0 * pow(0.001, (double)step / (double)budget);
        uint64_t x = rng_next(&rng);
        int kind = r.nreloaded && (x & 3) == 0 ? 1 : 0;
        int flip = -1, from = -1, to = -1;
        if (kind == 1) { /* recompute one reloaded value instead, or stop doing so */
            flip = r.reloaded[(x >> 8) % (uint64_t)r.nreloaded];
            s->recompute[flip] = !s->recompute[flip];
        } else { /* move one node within the window its producers and consumers leave */
            for (int p = 0; p < nn; p++) pos[cur[p]->sim] = p;
            from = (int)((x >> 8) % (uint64_t)nn);
            const MNNode *n = cur[from];
            int lo = 0, hi = nn - 1;
            for (int k = 0; k < n->nin; k++) {
                const MNValue *v = n->in[k];
                if (v && s->prod[v->id] >= 0 && pos[s->nodes0[s->prod[v->id]]->sim] + 1 > lo)
                    lo = pos[s->nodes0[s->prod[v->id]]->sim] + 1;
            }
            for (int k = 0; k < n->nout; k++) {
                const MNValue *v = n->out[k];
                if (!v) continue;
                for (int j = s->cons_start[v->id]; j < s->cons_start[v->id + 1]; j++)
                    if (pos[s->nodes0[s->cons[j]]->sim] - 1 < hi) hi = pos[s->nodes0[s->cons[j]]->sim] - 1;
            }
            if (hi <= lo) continue;
            to = lo + (int)((x >> 40) % (uint64_t)(hi - lo + 1));
            if (to == from) continue;
            MNNode *t = cur[from];
            if (to > from)
                memmove(&cur[from], &cur[from + 1], sizeof(MNNode *) * (size_t)(to - from));
            else
                memmove(&cur[to + 1], &cur[to], sizeof(MNNode *) * (size_t)(from - to));
            cur[to] = t;
        }
        stats->steps++;
        Run nr;
        sched_sim_run(s, &nr, false, true);
        int64_t nc = nr.fail ? INT64_MAX : nr.makespan;
        double u = (double)(rng_next(&rng) >> 11) / 9007199254740992.0;
        if (nc <= cost || (nc != INT64_MAX && u < exp(-(double)(nc - cost) / T))) {
            stats->accepted++;
            cost = nc;
            sched_run_free(&r);
            r = nr;
            if (cost < best_cost) {
                best_cost = cost;
                stats->improved++;
                memcpy(best, cur, sizeof(MNNode *) * (size_t)nn);
                memcpy(rc_best, s->recompute, sizeof(bool) * (size_t)s->nv);
            }
        } else { /* undo */
            sched_run_free(&nr);
            if (flip >= 0)
                s->recompute[flip] = !s->recompute[flip];
            else {
                MNNode *t = cur[to];
                if (to > from)
                    memmove(&cur[from + 1], &cur[from], sizeof(MNNode *) * (size_t)(to - from));
                else
                    memmove(&cur[to], &cur[to + 1], sizeof(MNNode *) * (size_t)(from - to));
                cur[from] = t;
            }
        }
    }
    sched_run_free(&r);
    stats->best_cost = best_cost;
    memcpy(s->recompute, rc_best, sizeof(bool) * (size_t)s->nv);
    s->order = ARENA_ARRAY(s->c->arena, MNNode *, nn + 1);
    memcpy(s->order, best, sizeof(MNNode *) * (size_t)nn);
    free(cur);
    free(best);
    free(rc_best);
    free(pos);
}

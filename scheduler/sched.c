/* The scheduler: the order of execution, what stays in LM and what goes back to DRAM,
 * what is recomputed, and which LM bank every value lives in.
 *
 * One simulation serves every policy. It walks the nodes in order with the LM of each
 * bank as a budget: before a node, every LM input must be resident (reloaded from its
 * DRAM copy, or recomputed); its outputs are given a bank (in place over input 0 when
 * Node Simulation offers that and input 0 dies there; otherwise the bank where the next
 * consumer's other operand is not, since each bank has one read port); when a bank is
 * full, a resident value is first moved to the other bank if it fits there (an on-chip
 * copy), and only then evicted: written to DRAM unless a copy is there already (a
 * downloaded parameter, or an earlier spill), then forgotten. Policies differ in what
 * they evict and when:
 * - always_from_dram: after every node each result goes to DRAM and leaves LM; every
 *   use reloads (for debugging: the most traffic, the least LM);
 * - reuse_consecutive: a value stays in LM only while its next use is the next node;
 * - spill_opt: everything stays until LM is full, then the resident value with the best
 *   score leaves: the distance to its next use times its size, over what evicting it
 *   costs in DRAM cycles (Belady's farthest-next-use rule made size- and cost-aware);
 * - auto_recompute_sa: simulated annealing from the spill_opt schedule over the node
 *   order (a node moved within the window its producers and consumers leave) and over
 *   recomputation (an evicted value whose producer can run again on inputs that have
 *   DRAM copies is recomputed instead of stored and reloaded); the cost is the
 *   simulated makespan; deterministic for a seed, bounded by sa_steps, and the best
 *   state is kept, so it is never worse than spill_opt on this cost model.
 *
 * The simulation also times every step on three resources (compute, DRAM transfer,
 * tree transfer): a step starts when its unit is free and its inputs are ready, so DRAM
 * traffic overlaps compute where the order allows; the makespan is the estimate.
 *
 * The chosen schedule is then written into the graph: MNCoreUpload to a spill value,
 * MNCoreDownload back, MNCoreForget where a value leaves LM, MNCoreMove between banks,
 * copies of producers for recomputation; every LM value gets its bank (loc LM0/LM1)
 * and, from the lifetimes, its address: the simulation's own first fit within the bank
 * as it goes (a value that finds no free range is a full bank), or addr.c's offline
 * placement when that peaks lower (materialize.c). Code Emit also needs LM0 room for a
 * gather's scratch while the gather runs (Code Emit says how much, per node, through
 * MNCompile.code): the simulation makes that room as for an output and keeps it as the
 * node's temp, so that the placements leave it free.
 *
 * This file holds the simulation and the pass; anneal.c the annealing, materialize.c
 * the writing of the schedule into the graph (sched_impl.h is what they share). */
#include "sched_impl.h"
#include "ops.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- one simulation ---- */

typedef struct {
    const Sched *s;
    Run *r;
    int *pos; /* node index (nodes0) -> position in this order */
    int *bank; /* resident bank per value, -1 */
    bool *have_dram; /* a DRAM copy exists */
    int64_t free_[2];
    int *use_start, *use_pos, *use_cur; /* uses as positions, sorted, CSR; cursor */
    int *pin; /* stamp: pinned at this position */
    int *outpin; /* stamp: an output of the node at this position (not made yet) */
    int64_t *ready, *dram_ready, res_free[SIM_NRES];
    int *rank; /* per position: the nodes before it that are not downloads */
    /* the values resident in each bank, sorted by address; off: each one's address */
    int *rl[2], nr[2];
    int64_t *off;
    bool log;
} Sim;

static void logev(Sim *m, Event e) {
    if (!m->log) return;
    Run *r = m->r;
    if (r->nev == r->cap_ev) {
        r->cap_ev = r->cap_ev ? 2 * r->cap_ev : 256;
        r->ev = xrealloc(r->ev, sizeof(Event) * (size_t)r->cap_ev);
    }
    r->ev[r->nev++] = e;
}

/* start a step on resource res after dep; returns its start */
static int64_t occupy(Sim *m, int res, int64_t dep, int64_t dur, int64_t *start) {
    int64_t s = m->res_free[res] > dep ? m->res_free[res] : dep;
    m->res_free[res] = s + dur;
    if (s + dur > m->r->makespan) m->r->makespan = s + dur;
    *start = s;
    return s + dur;
}

static int next_use(const Sim *m, int v, int p) { /* first use at or after position p, INT_MAX none */
    for (int k = m->use_cur[v]; k < m->use_start[v + 1]; k++)
        if (m->use_pos[k] >= p) return m->use_pos[k];
    return 0x7fffffff;
}

/* The lowest address in bank b where size long words are free, -1 none (first fit:
 * the simulation places as it goes, so fragmentation is part of what it decides on). */
static int64_t gap(const Sim *m, int b, int64_t size) {
    int64_t at = 0;
    for (int k = 0; k < m->nr[b]; k++) {
        int v = m->rl[b][k];
        if (m->off[v] - at >= size) return at;
        if (m->off[v] + m->s->size[v] > at) at = m->off[v] + m->s->size[v];
    }
    return m->s->cap[b] - at >= size ? at : -1;
}

static void res_add(Sim *m, int v, int b, int64_t at) {
    int k = m->nr[b]++;
    while (k > 0 && m->off[m->rl[b][k - 1]] > at) {
        m->rl[b][k] = m->rl[b][k - 1];
        k--;
    }
    m->rl[b][k] = v;
    m->bank[v] = b;
    m->off[v] = at;
}
static void res_del(Sim *m, int v) {
    int b = m->bank[v], lo = 0, hi = m->nr[b] - 1;
    while (lo < hi) { /* addresses are distinct within a bank */
        int mid = (lo + hi) / 2;
        if (m->off[m->rl[b][mid]] < m->off[v])
            lo = mid + 1;
        else
            hi = mid;
    }
    if (m->rl[b][lo] != v) die("resident list of LM%d lost '%s'", b, m->s->g->values[v]->name);
    memmove(&m->rl[b][lo], &m->rl[b][lo + 1], sizeof(int) * (size_t)(m->nr[b] - lo - 1));
    m->nr[b]--;
    m->bank[v] = -1;
}

static void forget(Sim *m, int v, int p) {
    m->free_[m->bank[v]] += m->s->size[v];
    res_del(m, v);
    m->r->forgets++;
    logev(m, (Event){EV_FORGET, p, v, -1, 0, m->res_free[SIM_COMPUTE], 0, SIM_COMPUTE});
}

static void store(Sim *m, int v, int p) {
    const MNValue *val = m->s->g->values[v];
    int64_t st, dur = m->s->xfer[v];
    (void)val;
    m->dram_ready[v] = occupy(m, SIM_DRAM, m->ready[v], dur, &st);
    m->have_dram[v] = true;
    m->r->spills++;
    m->r->dram_written += m->s->bytes[v];
    logev(m, (Event){EV_STORE, p, v, -1, 0, st, dur, SIM_DRAM});
}

/* Could v be recomputed later instead of stored: its producer is a compute node with
 * one output whose LM inputs can all be brought back from DRAM? */
static bool recomputable(const Sim *m, int v) {
    const Sched *s = m->s;
    if (!s->recompute || !s->recompute[v] || s->prod[v] < 0) return false;
    const MNNode *n = s->nodes0[s->prod[v]];
    const SimNode *sn = &s->c->sched->sim[n->sim];
    if (sn->res != SIM_COMPUTE || n->nout != 1 || s->scratch[n->sim])
        return false; /* a copy would need its scratch too */
    for (int j = s->cons_start[v]; j < s->cons_start[v + 1];
         j++) /* a concat gathers stored pieces: it cannot recompute */
        if (s->nodes0[s->cons[j]]->op == OP_MNCoreOutputConcat) return false;
    for (int k = 0; k < n->nin; k++) {
        const MNValue *x = n->in[k];
        if (lm_value(x) && !m->have_dram[x->id] && !s->dram_src[x->id]) return false;
    }
    return true;
}

static void evict(Sim *m, int v, int p) {
    if (!m->have_dram[v] && !recomputable(m, v)) store(m, v, p);
    forget(m, v, p);
}

static void move_value(Sim *m, int v, int to, int p) {
    const MNValue *val = m->s->g->values[v];
    int64_t st, dur = sim_move_cycles(&m->s->c->machine, val);
    int64_t at = gap(m, to, m->s->size[v]);
    if (at < 0) die("move of '%s' without room", val->name);
    m->free_[m->bank[v]] += m->s->size[v];
    m->free_[to] -= m->s->size[v];
    res_del(m, v);
    res_add(m, v, to, at);
    m->ready[v] = occupy(m, SIM_COMPUTE, m->ready[v], dur, &st);
    m->r->moves++;
    logev(m, (Event){EV_MOVE, p, v, to, 0, st, dur, SIM_COMPUTE, m->off[v]});
}

/* The largest move into the other bank that fits there among cand (n of them): -1 none. */
static int64_t widest_gap(const Sim *m, int b) {
    int64_t at = 0, w = 0;
    for (int k = 0; k < m->nr[b]; k++) {
        int v = m->rl[b][k];
        if (m->off[v] - at > w) w = m->off[v] - at;
        if (m->off[v] + m->s->size[v] > at) at = m->off[v] + m->s->size[v];
    }
    return m->s->cap[b] - at > w ? m->s->cap[b] - at : w;
}
static int best_move(const Sim *m, const int *cand, int n, int to) {
    int64_t room = widest_gap(m, to);
    int u = -1;
    for (int k = 0; k < n; k++) {
        int v = cand[k];
        if (m->s->size[v] <= room &&
            (u < 0 || m->s->size[v] > m->s->size[u] || (m->s->size[v] == m->s->size[u] && v < u)))
            u = v;
    }
    return u;
}

/* Make room for size long words, preferably in bank want; returns the bank or -1.
 * Room is a free range: the simulation keeps addresses, so what it evicts must open
 * one. The blocks the running node pins split a bank into windows; room is made in the
 * window that can hold the value at all and costs least to empty, by moving a block
 * to the other bank where it fits there (an on-chip copy), else by evicting the
 * best-scored one: distance to its next use times its size, over what evicting it
 * costs in DRAM cycles. When no window is wide enough, the node's own operands are
 * moved between banks before it starts. */
static int make_room(Sim *m, int64_t size, int want, int p, bool only) {
    const Sched *s = m->s;
    int *cand = xmalloc(sizeof(int) * (size_t)(m->nr[0] + m->nr[1] + 1));
    int got = -1;
    /* moves between banks can undo each other (an operand moved across to open a window
     * in one bank closes the other's): bounded, after which there is no room */
    for (int iter = 0; iter <= 4 * (m->nr[0] + m->nr[1]) + 16; iter++) {
        if (want >= 0 && gap(m, want, size) >= 0) {
            got = want;
            break;
        }
        int b = m->free_[0] >= m->free_[1] ? 0 : 1;
        if (!only && (gap(m, b, size) >= 0 || gap(m, 1 - b, size) >= 0)) {
            got = gap(m, b, size) >= 0 ? b : 1 - b;
            break;
        }
        /* the cheapest window: [lo, hi) between pinned blocks, at least size long */
        int wb = -1;
        int64_t wlo = 0, whi = 0;
        double wcost = 0;
        for (int t = 0; t < 2; t++) {
            if (only && t != want) continue;
            int64_t lo = 0;
            double cost = 0;
            for (int k = 0; k <= m->nr[t]; k++) {
                int v = k < m->nr[t] ? m->rl[t][k] : -1;
                bool barrier = v < 0 || m->pin[v] == p + 1;
                if (!barrier) {
                    cost += (double)s->size[v];
                    continue;
                }
                int64_t hi = v < 0 ? s->cap[t] : m->off[v];
                if (hi - lo >= size && (wb < 0 || cost < wcost)) {
                    wb = t;
                    wlo = lo;
                    whi = hi;
                    wcost = cost;
                }
                if (v >= 0) {
                    lo = m->off[v] + s->size[v];
                    cost = 0;
                }
            }
        }
        int nc = 0;
        if (wb < 0) { /* the node's own operands sit badly: move one across first */
            int u = -1;
            for (int t = 0; t < 2 && u < 0; t++) {
                if (only && t != want) continue;
                nc = 0;
                for (int k = 0; k < m->nr[t]; k++)
                    if (m->outpin[m->rl[t][k]] != p + 1)
                        cand[nc++] = m->rl[t][k]; /* an output cannot move before it is made */
                u = best_move(m, cand, nc, 1 - t);
            }
            if (u < 0) break;
            move_value(m, u, 1 - m->bank[u], p);
            continue;
        }
        nc = 0;
        for (int k = 0; k < m->nr[wb]; k++) {
            int v = m->rl[wb][k];
            if (m->off[v] >= wlo && m->off[v] + s->size[v] <= whi && m->pin[v] != p + 1) cand[nc++] = v;
        }
        int mv = best_move(m, cand, nc, 1 - wb);
        if (mv >= 0) {
            move_value(m, mv, 1 - wb, p);
            continue;
        }
        int ev = -1;
        double best = -1;
        for (int k = 0; k < nc; k++) {
            int v = cand[k];
            int nu = next_use(m, v, p);
            double cost = (double)s->xfer[v] * (m->have_dram[v] ? 1 : 2);
            double score = (double)(nu == 0x7fffffff ? 1e9 : nu - p) * (double)s->size[v] / (cost > 0 ? cost : 1);
            if (score > best || (score == best && v < ev)) {
                best = score;
                ev = v;
            }
        }
        if (ev < 0) break;
        evict(m, ev, p);
    }
    free(cand);
    return got;
}

static void alloc(Sim *m, int v, int bank) {
    int64_t at = gap(m, bank, m->s->size[v]);
    if (at < 0) die("allocation of '%s' in LM%d without room", m->s->g->values[v]->name, bank);
    res_add(m, v, bank, at);
    if (m->r->def_bank && m->r->def_bank[v] < 0) {
        m->r->def_bank[v] = bank;
        m->r->def_off[v] = at;
    }
    m->free_[bank] -= m->s->size[v];
}

/* bring v back before position p: recompute or reload */
static bool bring(Sim *m, int v, int p);

static bool recompute_value(Sim *m, int v, int p) {
    const Sched *s = m->s;
    const MNNode *n = s->nodes0[s->prod[v]];
    for (int k = 0; k < n->nin; k++) m->pin[n->in[k] ? n->in[k]->id : 0] = n->in[k] ? p + 1 : m->pin[0];
    int64_t dep = 0;
    for (int k = 0; k < n->nin; k++) {
        const MNValue *x = n->in[k];
        if (!lm_value(x)) continue;
        if (m->bank[x->id] < 0 && !bring(m, x->id, p)) return false;
        if (m->ready[x->id] > dep) dep = m->ready[x->id];
    }
    int b = make_room(m, s->size[v], -1, p, false);
    if (b < 0) return false;
    alloc(m, v, b);
    const SimNode *sn = &s->c->sched->sim[n->sim];
    int64_t st, dur = sn->var[0].cycles;
    m->ready[v] = occupy(m, SIM_COMPUTE, dep, dur, &st);
    m->r->recomputes++;
    logev(m, (Event){EV_RECOMPUTE, s->prod[v], v, b, 0, st, dur, SIM_COMPUTE, m->off[v]});
    for (int k = 0; k < n->nin; k++) { /* what was brought back only for this leaves again */
        const MNValue *x = n->in[k];
        if (lm_value(x) && m->bank[x->id] >= 0 && next_use(m, x->id, p) == 0x7fffffff) forget(m, x->id, p);
    }
    return true;
}

static bool bring(Sim *m, int v, int p) {
    const Sched *s = m->s;
    m->pin[v] = p + 1;
    if (!m->have_dram[v] && recomputable(m, v)) return recompute_value(m, v, p);
    if (!m->have_dram[v]) die("value '%s' left LM without a DRAM copy", s->g->values[v]->name);
    int b = make_room(m, s->size[v], -1, p, false);
    if (b < 0) return false;
    alloc(m, v, b);
    const MNValue *val = s->g->values[v];
    int64_t st, dur = s->xfer[v];
    (void)val;
    m->ready[v] = occupy(m, SIM_DRAM, m->dram_ready[v], dur, &st);
    m->r->reloads++;
    m->r->dram_read += s->bytes[v];
    if (m->r->want_reloaded) PUSH_HEAP(m->r->reloaded, m->r->nreloaded, m->r->cap_reloaded, v);
    logev(m, (Event){EV_LOAD, p, v, b, 0, st, dur, SIM_DRAM, m->off[v]});
    return true;
}

static bool run_node(Sim *m, int p) {
    const Sched *s = m->s;
    MNNode *n = s->order[p];
    const SimNode *sn = &s->c->sched->sim[n->sim];
    for (int k = 0; k < n->nin; k++)
        if (n->in[k]) m->pin[n->in[k]->id] = p + 1;
    for (int k = 0; k < n->nout; k++)
        if (n->out[k]) m->pin[n->out[k]->id] = m->outpin[n->out[k]->id] = p + 1;
    /* a concat gathers its pieces in DRAM: one in LM is written there now, one that was
     * evicted already went to its place when it was stored */
    bool gather = n->op == OP_MNCoreOutputConcat;
    /* the variant: in place when input 0 dies here; double-buffered when the temp fits
     * without evicting; the output bank away from the next consumer's other operand */
    int var = 0;
    const MNValue *in0 = n->nin ? n->in[0] : NULL;
    bool in0_dies = in0 && lm_value(in0) && next_use(m, in0->id, p + 1) == 0x7fffffff && !in0->is_output;
    for (int k = 1; in0_dies && k < n->nin; k++) in0_dies = n->in[k] != in0;
    int inplace = -1, fast = -1;
    for (int i = 0; i < sn->nvar; i++) {
        if (sn->var[i].out_bank < 0 && in0_dies) inplace = i;
        if (sn->var[i].fast && fast < 0) fast = i;
    }
    /* what needs room, largest first (as a packing would): inputs to bring back and
     * outputs to make; small ones then fill what the large ones leave */
    int *need = xmalloc(sizeof(int) * (size_t)(n->nin + n->nout + 1)), nneed = 0;
    for (int k = 0; k < n->nin + n->nout; k++) {
        const MNValue *x = k < n->nin ? n->in[k] : n->out[k - n->nin];
        if (!lm_value(x) || (k < n->nin && (gather || m->bank[x->id] >= 0)) || (k == n->nin && inplace >= 0)) continue;
        bool dup = false;
        for (int j = 0; j < nneed && !dup; j++) dup = (need[j] >> 1) == x->id;
        if (!dup) need[nneed++] = x->id << 1 | (k >= n->nin);
    }
    for (int a = 1; a < nneed; a++)
        for (int b = a; b > 0 && s->size[need[b] >> 1] > s->size[need[b - 1] >> 1]; b--) {
            int t = need[b];
            need[b] = need[b - 1];
            need[b - 1] = t;
        }
    for (int q = 0; q < nneed; q++) {
        int v = need[q] >> 1;
        if (!(need[q] & 1)) {
            if (m->bank[v] < 0 && !bring(m, v, p)) {
                free(need);
                return false;
            }
            continue;
        }
        int want = -1, first = next_use(m, v, p + 1);
        if (first != 0x7fffffff) { /* the consumer's other LM operand, if resident */
            const MNNode *cn = s->order[first];
            for (int j = 0; j < cn->nin; j++)
                if (cn->in[j] && cn->in[j]->id != v && lm_value(cn->in[j]) && m->bank[cn->in[j]->id] >= 0)
                    want = 1 - m->bank[cn->in[j]->id];
        }
        int b = make_room(m, s->size[v], want, p, false);
        if (b < 0) {
            free(need);
            return false;
        }
        alloc(m, v, b);
    }
    free(need);
    int64_t dep = 0, gather_cycles = 0;
    for (int k = 0; k < n->nin; k++) {
        const MNValue *x = n->in[k];
        if (!x) continue;
        if (gather && lm_value(x)) {
            if (m->bank[x->id] >= 0)
                gather_cycles += s->xfer[x->id];
            else if (!m->have_dram[x->id])
                die("concat piece '%s' is neither in LM nor in DRAM", x->name);
        }
        int64_t rd = lm_value(x) && m->bank[x->id] >= 0 ? m->ready[x->id] : m->dram_ready[x->id];
        if (rd > dep) dep = rd;
    }
    int64_t temp = 0, scratch = s->scratch[n->sim];
    int tbank = -1;
    /* a gather's scratch: an LM0 range free while it runs, made as for an output */
    if (scratch > s->cap[0] || (scratch && make_room(m, scratch, 0, p, true) < 0))
        scratch = 0; /* Code Emit will say why */
    if (inplace >= 0) {
        var = inplace;
        const MNValue *o = n->out[0];
        int b = m->bank[in0->id];
        int64_t at = m->off[in0->id];
        m->free_[b] += s->size[in0->id] - s->size[o->id];
        res_del(m, in0->id); /* the output takes its place */
        res_add(m, o->id, b, at);
        if (m->r->def_bank) {
            m->r->def_bank[o->id] = b;
            m->r->def_off[o->id] = at;
        }
    } else {
        if (fast >= 0 && !scratch) { /* a temp where a free range holds it, without evicting */
            temp = sn->var[fast].temp_lw;
            tbank = gap(m, 0, temp) >= 0 ? 0 : gap(m, 1, temp) >= 0 ? 1 : -1;
            if (tbank >= 0)
                var = fast;
            else
                temp = 0;
        }
        if (var == 0 && n->nout && lm_value(n->out[0]) && m->bank[n->out[0]->id] == 1) var = sn->nvar > 1 ? 1 : 0;
    }
    if (scratch) {
        temp = scratch;
        tbank = 0;
    }
    int64_t toff = -1;
    if (temp) toff = gap(m, tbank, temp); /* held only while the node runs: nothing else is placed meanwhile */
    /* two LM operands in one bank cost a read step each; a node's one LM input in the
     * output's bank (not written over it) makes the writes wait for the reads: the
     * variant's conflict figure (sim.c's time_variants times both cases) */
    bool conflict = false;
    int nlm = 0, last = -1; /* distinct LM inputs: Mul(x, x) reads one */
    for (int a = 0; a < n->nin; a++) {
        bool again = false;
        for (int b2 = 0; b2 < a; b2++) again |= n->in[b2] == n->in[a];
        if (lm_value(n->in[a]) && m->bank[n->in[a]->id] >= 0 && !again) {
            nlm++;
            last = a;
        }
    }
    if (nlm == 1 && sn->var[var].out_bank >= 0 && m->bank[n->in[last]->id] == sn->var[var].out_bank) conflict = true;
    for (int a = 0; a < n->nin; a++)
        for (int b2 = a + 1; b2 < n->nin; b2++)
            if (lm_value(n->in[a]) && lm_value(n->in[b2]) && n->in[a] != n->in[b2] && m->bank[n->in[a]->id] >= 0 &&
                m->bank[n->in[a]->id] == m->bank[n->in[b2]->id])
                conflict = true;
    int64_t st, dur = gather ? gather_cycles : conflict ? sn->var[var].cycles_conflict : sn->var[var].cycles;
    int64_t end = occupy(m, sn->res, dep, dur, &st);
    for (int k = 0; k < n->nout; k++)
        if (n->out[k]) {
            m->ready[n->out[k]->id] = end;
            m->dram_ready[n->out[k]->id] = end;
        }
    if (sn->res == SIM_DRAM) {
        for (int k = 0; k < n->nin; k++)
            if (n->in[k] && !lm_value(n->in[k]) && n->op != OP_MNCoreUpload && n->op != OP_MNCoreOutputConcat)
                m->r->dram_read += s->bytes[n->in[k]->id];
        for (int k = 0; k < n->nout; k++)
            if (n->out[k] && !lm_value(n->out[k])) m->r->dram_written += s->bytes[n->out[k]->id];
        if (n->op == OP_MNCoreInputSplit)
            for (int k = 0; k < n->nout; k++) m->r->dram_read += n->out[k] ? s->bytes[n->out[k]->id] : 0;
    }
    logev(m, (Event){EV_NODE, p, -1, tbank, var, st, dur, sn->res, toff, temp});
    /* what dies here leaves LM */
    for (int k = 0; k < n->nin; k++) {
        const MNValue *x = n->in[k];
        if (!lm_value(x) || m->bank[x->id] < 0) continue;
        m->use_cur[x->id]++;
        if (next_use(m, x->id, p + 1) == 0x7fffffff) forget(m, x->id, p);
    }
    for (int k = 0; k < n->nout; k++) {
        const MNValue *o = n->out[k];
        if (lm_value(o) && m->bank[o->id] >= 0 && next_use(m, o->id, p + 1) == 0x7fffffff) forget(m, o->id, p);
    }
    /* and what the policy sends back (a download's copy waits for its reader: the
     * downloads of a node's operands come right before it) */
    if ((s->policy == MN_SCHED_ALWAYS_FROM_DRAM || s->policy == MN_SCHED_REUSE_CONSECUTIVE) &&
        n->op != OP_MNCoreDownload) {
        bool always = s->policy == MN_SCHED_ALWAYS_FROM_DRAM;
        for (int k = 0; k < n->nin + n->nout; k++) {
            const MNValue *x = k < n->nin ? n->in[k] : n->out[k - n->nin];
            if (!lm_value(x) || m->bank[x->id] < 0) continue;
            int nu = next_use(m, x->id, p + 1);
            if (always || nu == 0x7fffffff || m->rank[nu] > m->rank[p] + 1) evict(m, x->id, p);
        }
    }
    return true;
}

void sched_sim_run(const Sched *s, Run *r, bool log, bool want_reloaded) {
    memset(r, 0, sizeof *r);
    Sim m = {0};
    m.s = s;
    m.r = r;
    m.log = log;
    int nv = s->nv;
    m.pos = xcalloc((size_t)s->nn + 1, sizeof(int));
    for (int p = 0; p < s->nn; p++) m.pos[s->order[p]->sim] = p;
    m.bank = xmalloc(sizeof(int) * (size_t)(nv + 1));
    m.have_dram = xcalloc((size_t)nv + 1, sizeof(bool));
    m.pin = xcalloc((size_t)nv + 1, sizeof(int));
    m.outpin = xcalloc((size_t)nv + 1, sizeof(int));
    m.ready = xcalloc((size_t)nv + 1, sizeof(int64_t));
    m.dram_ready = xcalloc((size_t)nv + 1, sizeof(int64_t));
    m.use_start = xcalloc((size_t)nv + 2, sizeof(int));
    m.use_cur = xcalloc((size_t)nv + 1, sizeof(int));
    for (int v = 0; v < nv; v++) {
        m.bank[v] = -1;
        m.have_dram[v] = s->dram_src[v];
    }
    /* uses as positions in this order, sorted */
    int total = 0;
    for (int p = 0; p < s->nn; p++)
        for (int k = 0; k < s->order[p]->nin; k++)
            if (s->order[p]->in[k]) {
                m.use_start[s->order[p]->in[k]->id + 1]++;
                total++;
            }
    for (int v = 0; v < nv; v++) m.use_start[v + 1] += m.use_start[v];
    m.use_pos = xmalloc(sizeof(int) * (size_t)(total + 1));
    int *fill = xmalloc(sizeof(int) * (size_t)(nv + 1));
    memcpy(fill, m.use_start, sizeof(int) * (size_t)nv);
    for (int p = 0; p < s->nn; p++)
        for (int k = 0; k < s->order[p]->nin; k++)
            if (s->order[p]->in[k]) m.use_pos[fill[s->order[p]->in[k]->id]++] = p;
    for (int v = 0; v < nv; v++) m.use_cur[v] = m.use_start[v];
    free(fill);
    r->want_reloaded = want_reloaded;
    if (log) {
        r->def_bank = xmalloc(sizeof(int) * (size_t)(nv + 1));
        r->def_off = xmalloc(sizeof(int64_t) * (size_t)(nv + 1));
        for (int v = 0; v < nv; v++) {
            r->def_bank[v] = -1;
            r->def_off[v] = -1;
        }
    }
    m.free_[0] = s->cap[0];
    m.free_[1] = s->cap[1];
    m.rank = xmalloc(sizeof(int) * (size_t)(s->nn + 1));
    m.rl[0] = xmalloc(sizeof(int) * (size_t)(nv + 1));
    m.rl[1] = xmalloc(sizeof(int) * (size_t)(nv + 1));
    m.off = xmalloc(sizeof(int64_t) * (size_t)(nv + 1));
    for (int p = 0, k = 0; p < s->nn; p++) {
        m.rank[p] = k;
        k += s->order[p]->op != OP_MNCoreDownload;
    }
    for (int p = 0; p < s->nn && !r->fail; p++)
        if (!run_node(&m, p)) {
            r->fail = true;
            r->fail_node = p;
        }
    free(m.pos);
    free(m.bank);
    free(m.have_dram);
    free(m.pin);
    free(m.outpin);
    free(m.ready);
    free(m.dram_ready);
    free(m.use_start);
    free(m.use_cur);
    free(m.use_pos);
    free(m.rank);
    free(m.rl[0]);
    free(m.rl[1]);
    free(m.off);
}

void sched_run_free(Run *r) {
    free(r->ev);
    free(r->reloaded);
    free(r->def_bank);
    free(r->def_off);
    memset(r, 0, sizeof *r);
}

static const char *policy_name(int p) {
    static const char *n[] = {"always_from_dram", "reuse_consecutive", "spill_opt", "auto_recompute_sa"};
    return n[p];
}

/* cycles at mhz as microseconds, to 9 decimals (femtoseconds: far below a cycle) with
 * trailing zeros dropped; glibc's %.17g of each was half of this pass */
static void us_text(MNBuf *b, int64_t cycles, double mhz) {
    double v = (double)cycles / mhz;
    long long ip = (long long)floor(v), fr = llround((v - (double)ip) * 1e9);
    if (fr >= 1000000000) {
        ip++;
        fr -= 1000000000;
    }
    char t[48], *p = buf_int(t, ip);
    if (fr) {
        *p++ = '.';
        for (long long d = 100000000; d; d /= 10) *p++ = (char)('0' + fr / d % 10);
        while (p[-1] == '0') p--;
    }
    buf_append(b, t, (size_t)(p - t));
}

/* trace.json (Chrome trace-event format, opens in Perfetto): one track per resource,
 * times in microseconds at the machine's clock; written as a stream */
static bool write_trace(MNCompile *c, const Sched *s, const Run *r) {
    double mhz = c->machine.clock_mhz;
    MNBuf b = {0};
    static const char *tracks[SIM_NRES] = {"compute", "DRAM transfer", "tree transfer"};
    buf_printf(&b, "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n");
    for (int t = 0; t < SIM_NRES; t++) /* the comma before each event: a graph with none (all folded) is still JSON */
        buf_printf(
            &b, "%s{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": %d, \"args\": {\"name\": \"%s\"}}",
            t ? ",\n" : "", t + 1, tracks[t]);
    /* events sorted by start (stable: the schedule order breaks ties) */
    int *ord = xmalloc(sizeof(int) * (size_t)(r->nev + 1)), n = 0;
    for (int i = 0; i < r->nev; i++)
        if (r->ev[i].kind != EV_FORGET && r->ev[i].dur > 0) ord[n++] = i;
    for (int i = 1; i < n; i++) { /* insertion sort on nearly sorted data */
        int x = ord[i], j = i;
        while (j > 0 && r->ev[ord[j - 1]].start > r->ev[x].start) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = x;
    }
    SchedEvent *tl = c->sched->events = ARENA_ARRAY(c->arena, SchedEvent, n + 1);
    c->sched->nevents = n;
    for (int k = 0; k < n; k++) {
        const Event *e = &r->ev[ord[k]];
        const MNNode *nd = e->kind == EV_NODE ? s->order[e->node] : e->kind == EV_RECOMPUTE ? s->nodes0[e->node] : NULL;
        const char *what = e->kind == EV_LOAD        ? "reload"
                           : e->kind == EV_STORE     ? "spill"
                           : e->kind == EV_MOVE      ? "move"
                           : e->kind == EV_RECOMPUTE ? "recompute"
                                                     : "node";
        tl[k] = (SchedEvent){nd ? nd->name : s->g->values[e->v]->name, e->kind == EV_NODE ? nd->op_type : what, e->res,
                             e->start, e->dur};
        buf_printf(&b, ",\n{\"name\": ");
        buf_json_string(&b, nd ? nd->name : s->g->values[e->v]->name);
        buf_printf(&b, ", \"cat\": ");
        buf_json_string(&b, e->kind == EV_NODE ? nd->op_type : what);
        buf_printf(&b, ", \"ph\": \"X\", \"ts\": ");
        us_text(&b, e->start, mhz);
        buf_printf(&b, ", \"dur\": ");
        us_text(&b, e->dur, mhz);
        buf_printf(&b,
                   ", \"pid\": 1, \"tid\": %d, \"args\": {\"cycles\": %lld, \"start_cycle\": %lld, \"step\": \"%s\"}}",
                   e->res + 1, (long long)e->dur, (long long)e->start, what);
    }
    free(ord);
    buf_printf(&b, "\n]}\n");
    return mn_art_write_owned(c, "trace.json", b.data, b.len); /* the writer's once it is large */
}

/* a schedule with its LM addresses */
typedef struct {
    Run r;
    Slots S;
    int64_t peak[2], load[2];
    const char *which[2];
} Placed;

/* false (p->r.fail_node says where) when a node's operands do not fit the budget */
/* The residency the schedule decided, kept for the dashboard (so that it plots the
 * schedule's own figures): the long words held in each bank after each event (the sum
 * of the live buffers, whose largest is the load figure), and the address peaks. */
static void residency(MNCompile *c, const Run *r, const Slots *S, const int64_t peak[2]) {
    SchedState *st = c->sched;
    int n = r->nev;
    int64_t *d = xcalloc((size_t)(2 * (n + 2)), sizeof(int64_t)); /* differences: +size at start, -size after end */
    for (int i = 0; i < S->nslot; i++) {
        const Slot *t = &S->slot[i];
        d[2 * t->start + t->bank] += t->size;
        d[2 * (t->end + 1) + t->bank] -= t->size;
    }
    st->nres = n;
    st->res_lw = ARENA_ARRAY(c->arena, int64_t, 2 * (size_t)n + 2);
    for (int e = 0; e < n; e++)
        for (int b = 0; b < 2; b++) st->res_lw[2 * e + b] = d[2 * e + b] + (e ? st->res_lw[2 * (e - 1) + b] : 0);
    st->peak_lw[0] = peak[0];
    st->peak_lw[1] = peak[1];
    free(d);
}

static bool placed(Sched *s, Placed *p) {
    memset(&p->S, 0, sizeof p->S);
    sched_sim_run(s, &p->r, true, false);
    if (p->r.fail) return false;
    sched_plan_slots(s, &p->r, &p->S);
    sched_place_slots(s, &p->S, p->peak, p->load, p->which);
    return true;
}

static bool schedule(MNCompile *c);

/* the simulation's per-value and per-node arrays */
static void sched_arrays_free(Sched *s) {
    free(s->size);
    free(s->dram_src);
    free(s->prod);
    free(s->cons_start);
    free(s->cons);
    free(s->recompute);
    free(s->xfer);
    free(s->bytes);
    free(s->scratch);
}

bool sched_schedule(MNCompile *c) {
    bool ok = schedule(c);
    return sched_results_write(c) && ok; /* its text was made while this pass ran */
}

static bool schedule(MNCompile *c) {
    MNGraph *g = c->g;
    if (!c->sched) die("schedule before node simulation");
    Sched s = {0};
    s.c = c;
    s.g = g;
    s.nn = g->nnodes;
    s.nv = g->nvalues;
    s.policy = (int)c->opt->ival[MN_OPT_scheduler];
    s.nodes0 = ARENA_ARRAY(c->arena, MNNode *, s.nn + 1);
    memcpy(s.nodes0, g->nodes, sizeof(MNNode *) * (size_t)s.nn);
    s.order = ARENA_ARRAY(c->arena, MNNode *, s.nn + 1);
    memcpy(s.order, g->nodes, sizeof(MNNode *) * (size_t)s.nn);
    s.size = xcalloc((size_t)s.nv + 1, sizeof(int64_t));
    s.dram_src = xcalloc((size_t)s.nv + 1, sizeof(bool));
    s.prod = xmalloc(sizeof(int) * (size_t)(s.nv + 1));
    s.cons_start = xcalloc((size_t)s.nv + 2, sizeof(int));
    for (int v = 0; v < s.nv; v++) {
        const MNValue *x = g->values[v];
        s.prod[v] = -1;
        if (lm_value(x)) s.size[v] = x->num_lw;
        /* copies of DRAM data: a download's, or a piece cut out of a value in DRAM */
        s.dram_src[v] = lm_value(x) && x->producer &&
                        (x->producer->op == OP_MNCoreDownload ||
                         (x->producer->op == OP_MNCoreInputSplit && !lm_value(x->producer->in[0])));
    }
    int total = 0;
    for (int i = 0; i < s.nn; i++) {
        const MNNode *n = g->nodes[i];
        for (int k = 0; k < n->nout; k++)
            if (n->out[k]) s.prod[n->out[k]->id] = i;
        for (int k = 0; k < n->nin; k++)
            if (n->in[k]) {
                s.cons_start[n->in[k]->id + 1]++;
                total++;
            }
    }
    for (int v = 0; v < s.nv; v++) s.cons_start[v + 1] += s.cons_start[v];
    s.cons = xmalloc(sizeof(int) * (size_t)(total + 1));
    int *fill = xmalloc(sizeof(int) * (size_t)(s.nv + 1));
    memcpy(fill, s.cons_start, sizeof(int) * (size_t)s.nv);
    for (int i = 0; i < s.nn; i++)
        for (int k = 0; k < g->nodes[i]->nin; k++)
            if (g->nodes[i]->in[k]) s.cons[fill[g->nodes[i]->in[k]->id]++] = i;
    free(fill);
    s.recompute = xcalloc((size_t)s.nv + 1, sizeof(bool));
    s.xfer = xmalloc(sizeof(int64_t) * (size_t)(s.nv + 1));
    s.bytes = xmalloc(sizeof(int64_t) * (size_t)(s.nv + 1));
    for (int v = 0; v < s.nv; v++) { /* parsed once: the simulation asks for them again and again */
        const MNValue *x = g->values[v];
        bool data = mn_dtype_bytes(x->dtype) && x->type.rank >= 0;
        s.bytes[v] = data ? sim_dram_bytes(x) : 0;
        s.xfer[v] = data ? sim_dram_cycles(&c->machine, x) : 0;
    }
    s.cap[0] = c->machine.lm0_lw;
    s.cap[1] = c->machine.lm1_lw;
    /* each gather's scratch, by node: room made for it in LM0 while it runs */
    int64_t *need = xcalloc((size_t)s.nn + 1, sizeof(int64_t)), scratch_max = 0;
    s.scratch = xcalloc((size_t)s.nn + 1, sizeof(int64_t));
    if (c->code) c->code->scratch_needs(c, need);
    for (int i = 0; i < s.nn; i++) {
        s.scratch[g->nodes[i]->sim] = need[i];
        if (need[i] <= s.cap[0] && need[i] > scratch_max) scratch_max = need[i];
    }
    free(need);
    mn_figure(c, "lm0_scratch_max_lw", scratch_max);

    SaStats sa = {0};
    Run base = {0};
    if (s.policy == MN_SCHED_AUTO_RECOMPUTE_SA) {
        s.policy = MN_SCHED_SPILL_OPT; /* its cost model and its start */
        sched_sim_run(&s, &base, false, false);
        sched_anneal(&s, &sa);
    }
    /* the schedule, with the addresses it placed as it went (or better ones) */
    Placed pl;
    if (!placed(&s, &pl)) {
        const MNNode *n = s.order[pl.r.fail_node];
        int64_t need = 0;
        for (int k = 0; k < n->nin; k++) need += lm_value(n->in[k]) ? n->in[k]->num_lw : 0;
        for (int k = 0; k < n->nout; k++) need += lm_value(n->out[k]) ? n->out[k]->num_lw : 0;
        diag_error(&c->diag, DIAG_RESOURCE,
                   "%s: does not fit machine '%s' (LM0 %lld + LM1 %lld LW per PE): node '%s' (%s) needs %lld LW of "
                   "operands in LM at once, each in one free range of a bank",
                   g->file, c->machine.name, (long long)c->machine.lm0_lw, (long long)c->machine.lm1_lw, n->name,
                   n->op_type, (long long)need);
        sched_run_free(&pl.r);
        sched_run_free(&base);
        sched_arrays_free(&s);
        return false;
    }
    Run r = pl.r;
    Slots S = pl.S;
    int64_t *peak = pl.peak, *load = pl.load;
    const char **which = pl.which;
    sched_materialize(&s, &r, &S);
    residency(c, &r, &S, peak);
    sched_slots_free(&S);
    for (int b = 0; b < 2; b++) {
        mn_figure(c, b ? "lm1_peak_lw" : "lm0_peak_lw", peak[b]);
        mn_figure(c, b ? "lm1_load_lw" : "lm0_load_lw", load[b]);
    }
    mn_log(c, 0, "LM addresses: LM0 peak %lld / LOAD %lld LW (%s), LM1 peak %lld / LOAD %lld LW (%s)",
           (long long)peak[0], (long long)load[0], which[0], (long long)peak[1], (long long)load[1], which[1]);
    mn_figure(c, "est_cycles", r.makespan);
    mn_figure(c, "dram_bytes_read", r.dram_read);
    mn_figure(c, "dram_bytes_written", r.dram_written);
    mn_figure(c, "spills", r.spills);
    mn_figure(c, "reloads", r.reloads);
    mn_figure(c, "recomputes", r.recomputes);
    mn_figure(c, "moves", r.moves);
    mn_figure(c, "forgets", r.forgets);
    if (sa.steps || c->opt->ival[MN_OPT_scheduler] == MN_SCHED_AUTO_RECOMPUTE_SA) {
        mn_figure(c, "spill_opt_est_cycles", base.makespan);
        mn_figure(c, "sa_steps", sa.steps);
        mn_figure(c, "sa_accepted", sa.accepted);
        mn_figure(c, "sa_improvements", sa.improved);
    }
    mn_log(c, 0,
           "schedule (%s): about %lld cycles; DRAM %lld bytes read, %lld written; %lld spills, %lld reloads, %lld "
           "recomputed, %lld moves between banks",
           policy_name((int)c->opt->ival[MN_OPT_scheduler]), (long long)r.makespan, (long long)r.dram_read,
           (long long)r.dram_written, (long long)r.spills, (long long)r.reloads, (long long)r.recomputes,
           (long long)r.moves);
    bool ok = !c->out_dir || write_trace(c, &s, &r);
    sched_run_free(&r);
    sched_run_free(&base);
    sched_arrays_free(&s);
    return ok;
}

/* The chosen schedule written into the graph: the buffers of the run's log and their
 * LM addresses (the simulation's first fit, or the offline placement when it peaks
 * lower), then MNCoreUpload to a spill value, MNCoreDownload back, MNCoreForget,
 * MNCoreMove between banks and recomputed copies, every LM value's bank and address. */
#include "sched_impl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MNValue *clone_value(MNGraph *g, const MNValue *v, const char *name) {
    MNValue *c = ir_value_new(g, name);
    ir_type_set(g, &c->type, v->type.elem, v->type.rank, v->type.dims);
    c->dtype = v->dtype;
    c->lay = v->lay;
    c->layout = v->layout;
    c->layout_kind = v->layout_kind;
    c->padded_shape = v->padded_shape;
    c->num_lw = v->num_lw;
    c->gene = v->gene;
    c->loc_kind = v->loc_kind;
    c->addr = -1;
    return c;
}

static MNNode *mk(MNGraph *g, const char *op, int nin, int nout, const char *name) {
    MNNode *n = ir_node_new(g, op, nin, nout);
    n->name = name;
    n->domain = "mncore";
    return n;
}

/* LM buffers: what the address planner places. A value made in place shares the
 * buffer of the input it overwrites; a double-buffered node's temp has its own. */

static int new_slot(Slots *S, int bank, int64_t at, int64_t size, int64_t addr) {
    S->slot[S->nslot] = (Slot){bank, at, at, size, addr};
    return S->nslot++;
}

void sched_plan_slots(const Sched *s, const Run *r, Slots *S) {
    int nv = s->nv;
    S->slot = xmalloc(sizeof(Slot) * (size_t)(2 * r->nev + nv + 1));
    S->nslot = 0;
    S->def_slot = xmalloc(sizeof(int) * (size_t)(nv + 1));
    S->ev_slot = xmalloc(sizeof(int) * (size_t)(r->nev + 1));
    int *cur = xmalloc(sizeof(int) * (size_t)(nv + 1));
    for (int v = 0; v < nv; v++) {
        cur[v] = -1;
        S->def_slot[v] = -1;
    }
#define TOUCH(id, e) ((id) >= 0 && cur[id] >= 0 ? (void)(S->slot[cur[id]].end = (e)) : (void)0)
    for (int e = 0; e < r->nev; e++) {
        const Event *ev = &r->ev[e];
        S->ev_slot[e] = -1;
        switch (ev->kind) {
        case EV_NODE: {
            const MNNode *n = s->order[ev->node];
            const SimVariant *var = &s->c->sched->sim[n->sim].var[ev->variant];
            for (int k = 0; k < n->nin; k++)
                if (lm_value(n->in[k])) TOUCH(n->in[k]->id, e);
            for (int k = 0; k < n->nout; k++) {
                const MNValue *o = n->out[k];
                if (!lm_value(o)) continue;
                if (k == 0 && var->out_bank < 0) {
                    cur[o->id] = cur[n->in[0]->id];
                    cur[n->in[0]->id] = -1;
                } else
                    cur[o->id] = new_slot(S, r->def_bank[o->id], e, s->size[o->id], r->def_off[o->id]);
                S->def_slot[o->id] = cur[o->id];
            }
            if (ev->temp && ev->bank >= 0) S->ev_slot[e] = new_slot(S, ev->bank, e, ev->temp, ev->addr);
            break;
        }
        case EV_RECOMPUTE: {
            const MNNode *p = s->nodes0[ev->node];
            for (int k = 0; k < p->nin; k++)
                if (lm_value(p->in[k])) TOUCH(p->in[k]->id, e);
            cur[ev->v] = S->ev_slot[e] = new_slot(S, ev->bank, e, s->size[ev->v], ev->addr);
            break;
        }
        case EV_LOAD: cur[ev->v] = S->ev_slot[e] = new_slot(S, ev->bank, e, s->size[ev->v], ev->addr); break;
        case EV_MOVE:
            TOUCH(ev->v, e);
            cur[ev->v] = S->ev_slot[e] = new_slot(S, ev->bank, e, s->size[ev->v], ev->addr);
            break;
        case EV_STORE: TOUCH(ev->v, e); break;
        case EV_FORGET:
            TOUCH(ev->v, e);
            cur[ev->v] = -1;
            break;
        }
    }
#undef TOUCH
    free(cur);
}

void sched_slots_free(Slots *S) {
    free(S->slot);
    free(S->def_slot);
    free(S->ev_slot);
    memset(S, 0, sizeof *S);
}

/* Addresses for every buffer of each bank: the simulation's own (first fit as it went,
 * valid by construction), or the offline heuristics' placement of the same lifetimes
 * when that needs less of the bank. */
void sched_place_slots(const Sched *s, Slots *S, int64_t peak[2], int64_t load[2], const char *which[2]) {
    SchedInterval *iv = xmalloc(sizeof(SchedInterval) * (size_t)(S->nslot + 1));
    int *idx = xmalloc(sizeof(int) * (size_t)(S->nslot + 1));
    for (int b = 0; b < 2; b++) {
        int n = 0;
        int64_t online = 0;
        for (int i = 0; i < S->nslot; i++)
            if (S->slot[i].bank == b) {
                idx[n] = i;
                iv[n++] = (SchedInterval){S->slot[i].start, S->slot[i].end, S->slot[i].size, 0};
                if (S->slot[i].offset + S->slot[i].size > online) online = S->slot[i].offset + S->slot[i].size;
            }
        const char *h;
        int64_t offline = sched_place(iv, n, s->c->machine.address_alignment_lw, &load[b], &h);
        if (n && offline < online) {
            for (int k = 0; k < n; k++) S->slot[idx[k]].offset = iv[k].offset;
            peak[b] = offline;
            which[b] = h;
        } else {
            peak[b] = online;
            which[b] = "first_fit_online";
        }
    }
    free(iv);
    free(idx);
}

static MNLoc bank_loc(int b) { return b ? MN_LOC_LM1 : MN_LOC_LM0; }

/* Write the logged run into the graph: every event becomes a node in the new order. */
void sched_materialize(Sched *s, const Run *r, const Slots *S) {
    MNGraph *g = s->g;
    int nv = s->nv;
    MNValue **cur = xcalloc((size_t)nv + 1, sizeof(MNValue *)), **spill = xcalloc((size_t)nv + 1, sizeof(MNValue *));
    int *count = xcalloc((size_t)nv + 1, sizeof(int));
    bool *resident = xcalloc((size_t)nv + 1, sizeof(bool));
    for (int v = 0; v < nv; v++) cur[v] = g->values[v];
    /* the operands as they were: a recomputation copies a node already renamed */
    MNValue ***orig_in = xmalloc(sizeof(MNValue **) * (size_t)(s->nn + 1));
    MNAttr **orig_attrs = xmalloc(sizeof(MNAttr *) * (size_t)(s->nn + 1)); /* before in_place / temp_* were added */
    int *orig_nattr = xmalloc(sizeof(int) * (size_t)(s->nn + 1));
    for (int i = 0; i < s->nn; i++) {
        const MNNode *n = s->nodes0[i];
        orig_in[i] = ARENA_ARRAY(g->arena, MNValue *, n->nin + 1);
        memcpy(orig_in[i], n->in, sizeof(MNValue *) * (size_t)n->nin);
        orig_attrs[i] = n->attrs;
        orig_nattr[i] = n->nattr;
    }
    MNNode **out = ARENA_ARRAY(g->arena, MNNode *, r->nev + 1);
    int w = 0;
    for (int e = 0; e < r->nev; e++) {
        const Event *ev = &r->ev[e];
        int id = ev->v;
        MNValue *v = id >= 0 ? g->values[id] : NULL;
        MNValue *made = NULL;
        MNNode *n = NULL;
        switch (ev->kind) {
        case EV_NODE: {
            n = s->order[ev->node];
            const SimVariant *var = &s->c->sched->sim[n->sim].var[ev->variant];
            int in0_id = n->nin && n->in[0] ? n->in[0]->id : -1; /* before renaming */
            for (int k = 0; k < n->nin; k++) {
                if (!lm_value(n->in[k])) continue;
                int id0 = n->in[k]->id;
                if (n->op == OP_MNCoreOutputConcat && !resident[id0]) { /* gathered from where it was stored */
                    if (!spill[id0]) die("concat piece '%s' has no DRAM copy", n->in[k]->name);
                    n->in[k] = spill[id0];
                } else
                    n->in[k] = cur[id0];
            }
            if (var->out_bank < 0) {
                ir_attr_set_int(g, n, "in_place", 1);
                if (in0_id >= 0) resident[in0_id] = false; /* its space is the output's now */
            }
            if (S->ev_slot[e] >= 0 && var->fast) { /* a gather's scratch is Code Emit's to place within its range */
                const Slot *t = &S->slot[S->ev_slot[e]];
                ir_attr_set_int(g, n, "temp_lw", t->size);
                ir_attr_set_int(g, n, "temp_bank", t->bank);
                ir_attr_set_int(g, n, "temp_addr", t->offset);
            }
            for (int k = 0; k < n->nout; k++) {
                MNValue *o = n->out[k];
                if (!lm_value(o)) continue;
                const Slot *sl = &S->slot[S->def_slot[o->id]];
                o->loc = bank_loc(sl->bank);
                o->addr = sl->offset;
                cur[o->id] = o;
                resident[o->id] = true;
            }
            break;
        }
        case EV_LOAD: {
            MNValue *src = s->dram_src[id] ? v->producer->in[0] : spill[id];
            if (!src) die("reload of '%s' without a DRAM copy", v->name);
            if (s->dram_src[id] && v->producer->op == OP_MNCoreInputSplit) { /* the piece cut out again */
                n = mk(g, "MNCoreInputSplit", 1, 1, arena_printf(g->arena, "%s_reload%d", v->name, ++count[id]));
                n->nattr = v->producer->nattr;
                n->attrs = v->producer->attrs;
            } else
                n = mk(g, "MNCoreDownload", 1, 1, arena_printf(g->arena, "%s_reload%d", v->name, ++count[id]));
            n->in[0] = src;
            made = clone_value(g, v, arena_printf(g->arena, "%s_reload%d", v->name, count[id]));
            break;
        }
        case EV_STORE: {
            n = mk(g, "MNCoreUpload", 1, 1, arena_printf(g->arena, "%s_spill", v->name));
            n->in[0] = cur[id];
            MNValue *c = clone_value(g, v, arena_printf(g->arena, "%s_spill", v->name));
            c->loc_kind = MN_LOC_KIND_DRAM;
            c->loc = MN_LOC_DRAM;
            c->producer = n;
            n->out[0] = c;
            spill[id] = c;
            break;
        }
        case EV_FORGET:
            n = mk(g, "MNCoreForget", 1, 0, arena_printf(g->arena, "%s_forget", cur[id]->name));
            n->in[0] = cur[id];
            resident[id] = false;
            break;
        case EV_MOVE:
            n = mk(g, "MNCoreMove", 1, 1, arena_printf(g->arena, "%s_to_lm%d", v->name, ev->bank));
            n->in[0] = cur[id];
            made = clone_value(g, v, arena_printf(g->arena, "%s_lm%d", v->name, ev->bank));
            break;
        case EV_RECOMPUTE: {
            const MNNode *p = s->nodes0[ev->node];
            n = ir_node_new(g, p->op_type, p->nin, 1);
            n->name = arena_printf(g->arena, "%s_recompute%d", p->name, ++count[id]);
            n->domain = p->domain;
            n->nattr = orig_nattr[ev->node];
            n->attrs = orig_attrs[ev->node]; /* the plain variant */
            n->sim = p->sim;
            MNValue **pin = orig_in[ev->node];
            for (int k = 0; k < p->nin; k++) n->in[k] = pin[k] && lm_value(pin[k]) ? cur[pin[k]->id] : pin[k];
            made = clone_value(g, v, arena_printf(g->arena, "%s_recompute%d", v->name, count[id]));
            break;
        }
        }
        if (made) {
            const Slot *sl = &S->slot[S->ev_slot[e]];
            made->loc = bank_loc(sl->bank);
            made->addr = sl->offset;
            made->producer = n;
            made->producer_out = 0;
            n->out[0] = made;
            cur[id] = made;
            resident[id] = true;
        }
        out[w++] = n;
    }
    g->nnodes = 0;
    for (int i = 0; i < w; i++) g->nodes[g->nnodes++] = out[i];
    ir_recount_uses(g);
    free(cur);
    free(spill);
    free(count);
    free(resident);
    free(orig_in);
    free(orig_attrs);
    free(orig_nattr);
}

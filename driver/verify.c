/* The invariant checker: run after every pass with --verify (and always in the test
 * sweeps). It checks what every pass must leave true, so a planner bug shows up at the
 * pass that made it rather than as wrong code much later. */
#include "driver.h"
#include "ops.h"
#include "plan.h"
#include "infer.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VFAIL(...) (snprintf(err, errlen, __VA_ARGS__), false)

/* A split's pieces (or a concat's, or a sum's terms) must tile the whole value: same
 * rank and element type, equal extents off the axis and extents adding up along it (a
 * sum's terms all have the whole shape; a split with "starts" cuts overlapping windows,
 * each inside the value). A slip here is a silently wrong answer. */
static bool check_pieces(const MNNode *n, char *err, size_t errlen) {
    bool split = n->op == OP_MNCoreInputSplit;
    if ((split ? n->nin : n->nout) != 1 || (split ? n->nout : n->nin) < 1)
        return VFAIL("node '%s': %s has a wrong number of inputs or outputs", n->name, n->op_type);
    const MNValue *whole = split ? n->in[0] : n->out[0];
    int ax = n->op == OP_MNCoreOutputSum ? -1 : (int)ir_attr_int(n, "axis", -1);
    if (n->op != OP_MNCoreOutputSum && (ax < 0 || ax >= whole->type.rank))
        return VFAIL("node '%s': axis %d out of range", n->name, ax);
    int np = split ? n->nout : n->nin;
    int64_t along = 0;
    for (int k = 0; k < np; k++) {
        const MNValue *p = split ? n->out[k] : n->in[k];
        if (!p || p->type.rank != whole->type.rank || p->type.elem != whole->type.elem)
            return VFAIL("node '%s': piece %d does not match '%s' in rank or type", n->name, k, whole->name);
        if (n->op != OP_MNCoreOutputSum && p->dtype != whole->dtype)
            return VFAIL("node '%s': piece '%s' is %s, '%s' is %s", n->name, p->name, mn_dtype_name(p->dtype),
                         whole->name, mn_dtype_name(whole->dtype));
        if (ax >= 0 && p->type.dims[ax] <= 0)
            return VFAIL("node '%s': piece '%s' is empty on axis %d", n->name, p->name, ax);
        for (int d = 0; d < whole->type.rank; d++)
            if (d != ax && p->type.dims[d] != whole->type.dims[d])
                return VFAIL("node '%s': piece '%s' has extent %lld on axis %d, '%s' has %lld", n->name, p->name,
                             (long long)p->type.dims[d], d, whole->name, (long long)whole->type.dims[d]);
        if (ax >= 0) along += p->type.dims[ax];
    }
    const MNAttr *st = split ? ir_attr(n, "starts") : NULL;
    if (st) { /* overlapping windows (a halo): each piece within the value, in order */
        if (st->type != MN_ATTR_INTS || st->n != np)
            return VFAIL("node '%s': starts has %d entries for %d pieces", n->name, st->n, np);
        for (int k = 0; k < np; k++)
            if (st->ints[k] < 0 || st->ints[k] + n->out[k]->type.dims[ax] > whole->type.dims[ax] ||
                (k && st->ints[k] < st->ints[k - 1]))
                return VFAIL("node '%s': piece '%s' at %lld is outside '%s' or out of order", n->name, n->out[k]->name,
                             (long long)st->ints[k], whole->name);
        return true;
    }
    if (ax >= 0 && along != whole->type.dims[ax])
        return VFAIL("node '%s': pieces add up to %lld on axis %d, '%s' has %lld", n->name, (long long)along, ax,
                     whole->name, (long long)whole->type.dims[ax]);
    return true;
}

/* After the scheduler: walking the order, every LM operand is resident where it is read
 * (made, not yet forgotten), each bank's resident values and temps fit it; after the
 * address planner, every LM value has an aligned address inside its bank and no two
 * resident values of one bank overlap, and every DRAM value has an address. */
static bool check_schedule(const MNGraph *g, const MNMachine *m, int stage, char *err, size_t errlen) {
    int nv = g->nvalues;
    bool *live = xcalloc((size_t)nv + 1, sizeof(bool));
    const MNValue **res[2];
    int nres[2] = {0, 0};
    res[0] = xmalloc(sizeof(MNValue *) * (size_t)(nv + 1));
    res[1] = xmalloc(sizeof(MNValue *) * (size_t)(nv + 1));
    int64_t used[2] = {0, 0}, cap[2] = {m->lm0_lw, m->lm1_lw};
    bool ok = true;
#define BANK(v) ((v)->loc == MN_LOC_LM1 ? 1 : 0)
    for (int i = 0; i < g->nnodes && ok; i++) {
        const MNNode *n = g->nodes[i];
        for (int k = 0; ok && k < n->nin; k++) {
            const MNValue *v = n->in[k];
            if (v && v->loc_kind == MN_LOC_KIND_LM && mn_dtype_bytes(v->dtype) && !live[v->id])
                ok =
                    VFAIL("node '%s' reads '%s', which is not in LM then (never made, or forgotten)", n->name, v->name);
        }
        bool inplace = ir_attr_int(n, "in_place", 0) != 0;
        /* in place: the output is written over input 0, so it is there, in its bank */
        if (ok && inplace && stage >= 7 && n->nin && n->nout && n->in[0] && n->out[0] &&
            (n->in[0]->loc != n->out[0]->loc || n->in[0]->addr != n->out[0]->addr))
            ok = VFAIL("node '%s' runs in place but writes '%s' somewhere else than '%s'", n->name, n->out[0]->name,
                       n->in[0]->name);
        for (int k = 0; ok && k < n->nin; k++) { /* a forget, or an in-place node over input 0, ends a residency */
            const MNValue *v = n->in[k];
            if (!v || !live[v->id] || !(n->op == OP_MNCoreForget || n->op == OP_MNCoreMove || (inplace && k == 0)))
                continue;
            live[v->id] = false;
            int b = BANK(v);
            used[b] -= v->num_lw;
            for (int j = 0; j < nres[b]; j++)
                if (res[b][j] == v) res[b][j] = res[b][--nres[b]];
        }
        for (int k = 0; ok && k < n->nout; k++) {
            const MNValue *v = n->out[k];
            if (!v || v->loc_kind != MN_LOC_KIND_LM || !mn_dtype_bytes(v->dtype)) continue;
            if (v->loc != MN_LOC_LM0 && v->loc != MN_LOC_LM1) {
                ok = VFAIL("value '%s' is in LM without a bank after the scheduler", v->name);
                break;
            }
            int b = BANK(v);
            if (stage >= 7) {
                if (v->addr < 0 || (m->address_alignment_lw > 1 && v->addr % m->address_alignment_lw) ||
                    v->addr + v->num_lw > cap[b])
                    ok = VFAIL("value '%s' has LM%d address %lld (size %lld, bank of %lld, alignment %d)", v->name, b,
                               (long long)v->addr, (long long)v->num_lw, (long long)cap[b], m->address_alignment_lw);
                for (int j = 0; ok && j < nres[b]; j++) {
                    const MNValue *u = res[b][j];
                    if (u->addr < v->addr + v->num_lw && v->addr < u->addr + u->num_lw)
                        ok = VFAIL("values '%s' and '%s' share LM%d addresses while both are resident", u->name,
                                   v->name, b);
                }
            }
            live[v->id] = true;
            res[b][nres[b]++] = v;
            used[b] += v->num_lw;
        }
        int64_t temp = ir_attr_int(n, "temp_lw", 0), taddr = ir_attr_int(n, "temp_addr", -1);
        int tb = (int)ir_attr_int(n, "temp_bank", 0);
        if (ok && temp && stage >= 7) { /* the temp is free space while the node runs */
            if (tb < 0 || tb > 1 || taddr < 0 || taddr + temp > cap[tb])
                ok = VFAIL("node '%s' has its temp outside LM%d", n->name, tb);
            for (int j = 0; ok && j < nres[tb]; j++) {
                const MNValue *u = res[tb][j];
                if (u->addr < taddr + temp && taddr < u->addr + u->num_lw)
                    ok = VFAIL("node '%s': its temp overlaps '%s' in LM%d", n->name, u->name, tb);
            }
        }
        for (int b = 0; ok && b < 2; b++)
            if (used[b] + (b == tb ? temp : 0) > cap[b])
                ok = VFAIL("after node '%s' LM%d holds %lld LW, more than its %lld", n->name, b,
                           (long long)(used[b] + (b == tb ? temp : 0)), (long long)cap[b]);
        for (int k = 0; ok && stage >= 7 && k < n->nout; k++) {
            const MNValue *v = n->out[k];
            if (v && (v->loc_kind == MN_LOC_KIND_DRAM || v->loc_kind == MN_LOC_KIND_INOUT) &&
                mn_dtype_bytes(v->dtype) && v->nuses > 0 && v->addr < 0)
                ok = VFAIL("DRAM value '%s' has no address after the address planner", v->name);
        }
    }
#undef BANK
    free(live);
    free(res[0]);
    free(res[1]);
    return ok;
}

bool ir_verify(const MNGraph *g, const MNMachine *m, int stage, char *err, size_t errlen) {
    bool *seen = xcalloc((size_t)g->nvalues + 1, sizeof(bool)); /* defined so far */
    bool ok = true;
    for (int i = 0; i < g->nvalues && ok; i++) {
        const MNValue *v = g->values[i];
        if (v->id != i)
            ok = VFAIL("value '%s' has id %d at position %d", v->name, v->id, i);
        else if (ir_value_lookup(g, v->name) != v)
            ok = VFAIL("value '%s' is not found by its name", v->name);
        if (v->is_input || v->konst) seen[i] = true;
    }
    for (int i = 0; i < g->nnodes && ok; i++) {
        const MNNode *n = g->nodes[i];
        if (n->dead) ok = VFAIL("node '%s' is dead but still in the order", n->name);
        for (int k = 0; ok && k < n->nin; k++) {
            const MNValue *v = n->in[k];
            if (!v) continue;
            if (v->id < 0 || v->id >= g->nvalues || g->values[v->id] != v)
                ok = VFAIL("node '%s': input %d is not a value of the graph", n->name, k);
            else if (!seen[v->id])
                ok = VFAIL("node '%s': input '%s' is used before it is produced", n->name, v->name);
            else if (stage >= 1 && !ir_type_static(&v->type))
                ok = VFAIL("node '%s': input '%s' has no static shape", n->name, v->name);
        }
        for (int k = 0; ok && k < n->nout; k++) {
            const MNValue *v = n->out[k];
            if (!v) continue;
            if (v->producer != n || v->producer_out != k)
                ok = VFAIL("value '%s' does not name node '%s' as its producer", v->name, n->name);
            else if (v->konst)
                ok = VFAIL("node '%s' produces the constant '%s'", n->name, v->name);
            else if (seen[v->id])
                ok = VFAIL("value '%s' is produced twice", v->name);
            else if (stage >= 1 && !ir_type_static(&v->type))
                ok = VFAIL("node '%s': output '%s' has no static shape", n->name, v->name);
            else if (stage >= 2 && onnx_type_numeric(v->type.elem) && v->dtype == MN_DT_Unknown)
                ok = VFAIL("value '%s' has no dtype after the dtype planner", v->name);
            if (ok) seen[v->id] = true;
        }
        for (int k = 0; ok && stage >= 3 && k < n->nout; k++) {
            const MNValue *v = n->out[k];
            if (v && onnx_type_numeric(v->type.elem) && (!v->layout || v->num_lw < 0))
                ok = VFAIL("value '%s' has no layout after the layout planner", v->name);
        }
        /* a pass that rewrote a standard op (a slice copy, new pads) kept it consistent
         * (compile-time operands stay constants, so inference still sees them) */
        if (ok && stage >= 3 && strcmp(n->domain, "mncore") && n->op != OP_UNSUPPORTED)
            ok = infer_node_agrees((MNGraph *)g, n, err, errlen);
        if (ok && (n->op == OP_MNCoreInputSplit || n->op == OP_MNCoreOutputConcat || n->op == OP_MNCoreOutputSum))
            ok = check_pieces(n, err, errlen);
        if (ok && stage >= 2 && n->op == OP_MNCoreCast && (n->out[0]->dtype == n->in[0]->dtype))
            ok = VFAIL("cast '%s' converts %s to itself", n->name, mn_dtype_name(n->in[0]->dtype));
    }
    /* after the sliced location planner every node computes on LM values that fit */
    if (ok && stage >= 5 && m) {
        MNBuf why = {0};
        if (plan_lm_misfits(g, m, &why)) ok = VFAIL("operands outside LM or larger than one LM: %s", why.data);
        buf_free(&why);
    }
    if (ok && stage >= 6 && m) ok = check_schedule(g, m, stage, err, errlen);
    /* every node's layout demands hold (through a switch where they conflicted) */
    if (ok && stage >= 3 && m) ok = plan_layout_demands_hold(g, m, err, errlen);
    for (int i = 0; ok && i < g->noutputs; i++) {
        const MNValue *v = g->outputs[i];
        if (!seen[v->id]) ok = VFAIL("graph output '%s' is never produced", v->name);
    }
    free(seen);
    return ok;
}

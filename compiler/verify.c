/* The invariant checker: run after every pass with --verify (and always in the test
 * sweeps). It checks what every pass must leave true, so a planner bug shows up at the
 * pass that made it rather than as wrong code much later. */
#include "compile.h"
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
    if ((split ? n->nin : n->nout) != 1 || (split ? n->nout : n->nin) < 1) return VFAIL("node '%s': %s has a wrong number of inputs or outputs", n->name, n->op_type);
    const MNValue *whole = split ? n->in[0] : n->out[0];
    int ax = n->op == OP_MNCoreOutputSum ? -1 : (int)ir_attr_int(n, "axis", -1);
    if (n->op != OP_MNCoreOutputSum && (ax < 0 || ax >= whole->type.rank)) return VFAIL("node '%s': axis %d out of range", n->name, ax);
    int np = split ? n->nout : n->nin;
    int64_t along = 0;
    for (int k = 0; k < np; k++) {
        const MNValue *p = split ? n->out[k] : n->in[k];
        if (!p || p->type.rank != whole->type.rank || p->type.elem != whole->type.elem) return VFAIL("node '%s': piece %d does not match '%s' in rank or type", n->name, k, whole->name);
        if (n->op != OP_MNCoreOutputSum && p->dtype != whole->dtype) return VFAIL("node '%s': piece '%s' is %s, '%s' is %s", n->name, p->name, mn_dtype_name(p->dtype), whole->name, mn_dtype_name(whole->dtype));
        if (ax >= 0 && p->type.dims[ax] <= 0) return VFAIL("node '%s': piece '%s' is empty on axis %d", n->name, p->name, ax);
        for (int d = 0; d < whole->type.rank; d++)
            if (d != ax && p->type.dims[d] != whole->type.dims[d]) return VFAIL("node '%s': piece '%s' has extent %lld on axis %d, '%s' has %lld", n->name, p->name, (long long)p->type.dims[d], d, whole->name, (long long)whole->type.dims[d]);
        if (ax >= 0) along += p->type.dims[ax];
    }
    const MNAttr *st = split ? ir_attr(n, "starts") : NULL;
    if (st) { /* overlapping windows (a halo): each piece within the value, in order */
        if (st->type != MN_ATTR_INTS || st->n != np) return VFAIL("node '%s': starts has %d entries for %d pieces", n->name, st->n, np);
        for (int k = 0; k < np; k++)
            if (st->ints[k] < 0 || st->ints[k] + n->out[k]->type.dims[ax] > whole->type.dims[ax] || (k && st->ints[k] < st->ints[k - 1]))
                return VFAIL("node '%s': piece '%s' at %lld is outside '%s' or out of order", n->name, n->out[k]->name, (long long)st->ints[k], whole->name);
        return true;
    }
    if (ax >= 0 && along != whole->type.dims[ax]) return VFAIL("node '%s': pieces add up to %lld on axis %d, '%s' has %lld", n->name, (long long)along, ax, whole->name, (long long)whole->type.dims[ax]);
    return true;
}

bool ir_verify(const MNGraph *g, const MNMachine *m, int stage, char *err, size_t errlen) {
    bool *seen = xcalloc((size_t)g->nvalues + 1, sizeof(bool)); /* defined so far */
    bool ok = true;
    for (int i = 0; i < g->nvalues && ok; i++) {
        const MNValue *v = g->values[i];
        if (v->id != i) ok = VFAIL("value '%s' has id %d at position %d", v->name, v->id, i);
        else if (ir_value_lookup(g, v->name) != v) ok = VFAIL("value '%s' is not found by its name", v->name);
        if (v->is_input || v->konst) seen[i] = true;
    }
    for (int i = 0; i < g->nnodes && ok; i++) {
        const MNNode *n = g->nodes[i];
        if (n->dead) ok = VFAIL("node '%s' is dead but still in the order", n->name);
        for (int k = 0; ok && k < n->nin; k++) {
            const MNValue *v = n->in[k];
            if (!v) continue;
            if (v->id < 0 || v->id >= g->nvalues || g->values[v->id] != v) ok = VFAIL("node '%s': input %d is not a value of the graph", n->name, k);
            else if (!seen[v->id]) ok = VFAIL("node '%s': input '%s' is used before it is produced", n->name, v->name);
            else if (stage >= 1 && !ir_type_static(&v->type)) ok = VFAIL("node '%s': input '%s' has no static shape", n->name, v->name);
        }
        for (int k = 0; ok && k < n->nout; k++) {
            const MNValue *v = n->out[k];
            if (!v) continue;
            if (v->producer != n || v->producer_out != k) ok = VFAIL("value '%s' does not name node '%s' as its producer", v->name, n->name);
            else if (v->konst) ok = VFAIL("node '%s' produces the constant '%s'", n->name, v->name);
            else if (seen[v->id]) ok = VFAIL("value '%s' is produced twice", v->name);
            else if (stage >= 1 && !ir_type_static(&v->type)) ok = VFAIL("node '%s': output '%s' has no static shape", n->name, v->name);
            else if (stage >= 2 && onnx_type_numeric(v->type.elem) && v->dtype == MN_DT_Unknown)
                ok = VFAIL("value '%s' has no dtype after the dtype planner", v->name);
            if (ok) seen[v->id] = true;
        }
        for (int k = 0; ok && stage >= 3 && k < n->nout; k++) {
            const MNValue *v = n->out[k];
            if (v && onnx_type_numeric(v->type.elem) && (!v->layout || v->num_lw < 0)) ok = VFAIL("value '%s' has no layout after the layout planner", v->name);
        }
        /* a pass that rewrote a standard op (a slice copy, new pads) kept it consistent
         * (compile-time operands stay constants, so inference still sees them) */
        if (ok && stage >= 3 && strcmp(n->domain, "mncore") && n->op != OP_UNSUPPORTED) ok = infer_node_agrees((MNGraph *)g, n, err, errlen);
        if (ok && (n->op == OP_MNCoreInputSplit || n->op == OP_MNCoreOutputConcat || n->op == OP_MNCoreOutputSum)) ok = check_pieces(n, err, errlen);
        if (ok && stage >= 2 && n->op == OP_MNCoreCast && (n->out[0]->dtype == n->in[0]->dtype))
            ok = VFAIL("cast '%s' converts %s to itself", n->name, mn_dtype_name(n->in[0]->dtype));
    }
    /* after the sliced location planner every node computes on LM values that fit */
    if (ok && stage >= 5 && m) {
        MNBuf why = {0};
        if (plan_lm_misfits(g, m, &why)) ok = VFAIL("operands outside LM or larger than one LM: %s", why.data);
        buf_free(&why);
    }
    /* every node's layout demands hold (through a switch where they conflicted) */
    if (ok && stage >= 3 && m) ok = plan_layout_demands_hold(g, m, err, errlen);
    for (int i = 0; ok && i < g->noutputs; i++) {
        const MNValue *v = g->outputs[i];
        if (!seen[v->id]) ok = VFAIL("graph output '%s' is never produced", v->name);
    }
    free(seen);
    return ok;
}

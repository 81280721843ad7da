/* The invariant checker: run after every pass with --verify (and always in the test
 * sweeps). It checks what every pass must leave true, so a planner bug shows up at the
 * pass that made it rather than as wrong code much later. */
#include "compile.h"
#include "ops.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VFAIL(...) (snprintf(err, errlen, __VA_ARGS__), false)

bool ir_verify(const MNGraph *g, int stage, char *err, size_t errlen) {
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
        /* after the location planner every node but a download reads LM (or immediates) */
        for (int k = 0; ok && stage >= 5 && n->op != OP_MNCoreDownload && n->op != OP_MNCoreInputSplit && k < n->nin; k++) {
            const MNValue *v = n->in[k];
            if (v && v->loc_kind != MN_LOC_KIND_LM && v->loc_kind != MN_LOC_KIND_IMM && !(v->producer && v->loc_kind == MN_LOC_KIND_DRAM))
                ok = VFAIL("node '%s' reads '%s', which is not in LM", n->name, v->name);
        }
        if (ok && stage >= 2 && n->op == OP_MNCoreCast && (n->out[0]->dtype == n->in[0]->dtype))
            ok = VFAIL("cast '%s' converts %s to itself", n->name, mn_dtype_name(n->in[0]->dtype));
    }
    for (int i = 0; ok && i < g->noutputs; i++) {
        const MNValue *v = g->outputs[i];
        if (!seen[v->id]) ok = VFAIL("graph output '%s' is never produced", v->name);
    }
    free(seen);
    return ok;
}

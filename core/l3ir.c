/* l3ir.txt: the MNGraph as text, each node in computation order followed by its values
 * (DESIGN.md section 4). Fields the planners have not decided yet print as Unknown, so
 * the same format serves every stage of the pipeline. */
#include "compile.h"
#include <inttypes.h>

static void print_value(MNBuf *b, const char *tag, int k, const MNValue *v) {
    if (!v) {
        buf_printf(b, "%s(%d):<none>\n", tag, k);
        return;
    }
    const MNType *t = &v->type;
    buf_printf(b, "%s(%d):%s onnx_type=Tensor(dtype=%s shape=", tag, k, v->name, onnx_type_name(t->elem));
    if (t->rank < 0) buf_printf(b, "Unknown");
    for (int i = 0; i < t->rank; i++) {
        if (t->dims[i] >= 0)
            buf_printf(b, i ? ",%" PRId64 : "%" PRId64, t->dims[i]);
        else
            buf_printf(b, i ? ",?" : "?");
    }
    buf_printf(b, ")");
    if (v->num_lw >= 0)
        buf_printf(b, " num_lw=%" PRId64, v->num_lw);
    else
        buf_printf(b, " num_lw=Unknown");
    buf_printf(b, " padded_shape=");
    if (v->padded_shape)
        for (int i = 0; i < t->rank; i++) buf_printf(b, i ? ",%" PRId64 : "%" PRId64, v->padded_shape[i]);
    else
        buf_printf(b, "Unknown");
    static const char *locs[] = {"Unknown", "DRAM", "LM0", "LM1", "IMM", "InOut"};
    /* an LM value whose bank is not assigned yet prints as LM */
    const char *loc = v->loc == MN_LOC_UNKNOWN && v->loc_kind == MN_LOC_KIND_LM ? "LM" : locs[v->loc];
    buf_printf(b, " layout=%s layout_kind=%s dtype=%s gene=%s loc=%s", v->layout ? v->layout : "Unknown",
               v->layout_kind ? v->layout_kind : "Unknown", mn_dtype_name(v->dtype), v->gene ? v->gene : "Unknown",
               loc);
    if (v->addr >= 0)
        buf_printf(b, " addr=%" PRId64 ")\n", v->addr);
    else
        buf_printf(b, " addr=Unknown)\n");
}

void ir_print_l3ir(MNBuf *b, const MNGraph *g) {
    for (int i = 0; i < g->nnodes; i++) {
        const MNNode *n = g->nodes[i];
        if (n->dead) continue;
        buf_printf(b, "%s(", n->op_type);
        for (int k = 0; k < n->nin; k++) buf_printf(b, "%s%s", k ? ", " : "", n->in[k] ? n->in[k]->name : "");
        buf_printf(b, ") -> (");
        for (int k = 0; k < n->nout; k++) buf_printf(b, "%s%s", k ? ", " : "", n->out[k] ? n->out[k]->name : "");
        buf_printf(b, ")\n");
        for (int k = 0; k < n->nin; k++) print_value(b, "   in", k, n->in[k]);
        for (int k = 0; k < n->nout; k++) print_value(b, "  out", k, n->out[k]);
    }
}

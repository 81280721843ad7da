/* Dtype planner: the MN dtype of every value.
 *
 * float_dtype=float keeps each ONNX type's natural MN dtype (FLOAT32 -> Float, FLOAT16
 * -> Half, integers and bools their matching types). float_dtype=mixed runs the matrix
 * unit in half: the data operands of MatMul, Gemm, Conv and ConvTranspose become Half,
 * their results stay Float (the unit accumulates in single), and everything else —
 * BatchNormalization, reductions, Softmax, the LayerNorm patterns — stays Float. A
 * conversion is placed where it costs least: a constant is converted once at compile
 * time; a value whose every consumer wants Half is produced in Half by its producer (the
 * MAU rounds its output, the `r` forms), unless that producer is precision-sensitive or
 * the value is a graph input or output; only the remaining values get an MNCoreCast
 * node, one per value, shared by all its Half consumers. Casts only ever narrow, so no
 * pair can undo another. */
#include "plan.h"
#include "ops.h"
#include <stdlib.h>
#include <string.h>

static bool wants_half(const MNNode *n, int k) {
    switch (n->op) {
    case OP_MatMul:
    case OP_Gemm:
    case OP_Conv:
    case OP_ConvTranspose: return k <= 1;
    default: return false;
    }
}

/* producers that must keep full precision in their output */
static bool precision_sensitive(const MNNode *n) { return mn_op_has(n->op, MN_PREC); }

bool plan_dtype(MNCompile *c) {
    MNGraph *g = c->g;
    ir_recount_uses(g);
    for (int i = 0; i < g->nvalues; i++) {
        MNValue *v = g->values[i];
        v->dtype = onnx_type_default_mn(v->type.elem);
        if (v->dtype == MN_DT_Unknown && (v->nuses || v->producer))
            return diag_error(&c->diag, DIAG_UNSUPPORTED, "%s: value '%s': the machine has no dtype for %s", g->file,
                              v->name, onnx_type_name(v->type.elem));
    }
    int casts = 0, fused = 0, consts = 0;
    if (c->opt->ival[MN_OPT_float_dtype] == MN_FLOAT_DTYPE_MIXED) {
        ir_recount_uses(g);
        int nv = g->nvalues, nn = g->nnodes;
        int *demand = xcalloc((size_t)nv, sizeof(int));
        for (int i = 0; i < nn; i++) {
            MNNode *n = g->nodes[i];
            for (int k = 0; k < n->nin; k++)
                if (n->in[k] && wants_half(n, k) && n->in[k]->dtype == MN_DT_Float) demand[n->in[k]->id]++;
        }
        MNValue **half = xcalloc((size_t)nv, sizeof(MNValue *)); /* the Half version of a value */
        MNNode **cast_of = xcalloc((size_t)nv, sizeof(MNNode *));
        for (int id = 0; id < nv; id++) {
            if (!demand[id]) continue;
            MNValue *v = g->values[id];
            if (v->konst) { /* convert the data once, now */
                MNValue *h = demand[id] == v->nuses && !v->is_output
                                 ? v
                                 : ir_value_new(g, arena_printf(g->arena, "%s_half", v->name));
                if (h != v) {
                    h->type = v->type;
                    h->konst = v->konst;
                    h->is_initializer = true;
                }
                h->dtype = MN_DT_Half;
                half[id] = h;
                consts++;
            } else if (demand[id] == v->nuses && !v->is_output && !v->is_input && v->producer &&
                       !precision_sensitive(v->producer)) {
                v->dtype = MN_DT_Half; /* its producer writes Half */
                half[id] = v;
                fused++;
            } else {
                MNNode *cn = ir_node_new(g, "MNCoreCast", 1, 1); /* appended; placed below */
                cn->name = arena_printf(g->arena, "%s_to_half", v->name);
                cn->domain = "mncore";
                cn->in[0] = v;
                MNValue *h = ir_value_new(g, arena_printf(g->arena, "%s_half", v->name));
                h->type = v->type;
                h->dtype = MN_DT_Half;
                h->producer = cn;
                cn->out[0] = h;
                half[id] = h;
                cast_of[id] = cn;
                casts++;
            }
        }
        /* rewire the Half consumers, and put each cast just before its first consumer */
        MNNode **order = ARENA_ARRAY(g->arena, MNNode *, g->nnodes + 1);
        int w = 0;
        for (int i = 0; i < nn; i++) {
            MNNode *n = g->nodes[i];
            for (int k = 0; k < n->nin; k++) {
                MNValue *v = n->in[k];
                if (!v || v->id >= nv || !wants_half(n, k) || !half[v->id]) continue;
                if (cast_of[v->id]) {
                    order[w++] = cast_of[v->id];
                    cast_of[v->id] = NULL;
                }
                n->in[k] = half[v->id];
            }
            order[w++] = n;
        }
        ASSERT(w == g->nnodes);
        memcpy(g->nodes, order, sizeof(MNNode *) * (size_t)w);
        free(demand);
        free(half);
        free(cast_of);
        ir_recount_uses(g);
    }
    mn_figure(c, "casts_inserted", casts);
    mn_figure(c, "outputs_produced_in_half", fused);
    mn_figure(c, "constants_converted", consts);
    mn_log(c, 0, "dtypes: %d casts inserted, %d values produced in half, %d constants converted", casts, fused, consts);
    return true;
}

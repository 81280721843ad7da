/* The MNGraph as an ONNX model: `l3ir_stripped.onnx` (the final graph) and
 * `-O out_onnx=PATH` (the graph as it enters the planners).
 *
 * The file is for reading what the compiler did, with python3-onnx or a viewer, so it
 * keeps the graph's structure and drops the bulk:
 * - nodes in the graph's order (after scheduling: the schedule), ONNX ops in the
 *   default domain with their attributes, mncc's own nodes (MNCoreDownload, ...) in the
 *   domain "mncore" (opset 1);
 * - every value carries its type and static shape; what the planners decided (MN dtype,
 *   layout, location, address, LM long words, gene) is the value_info doc_string,
 *   "mncore: dtype=Float; layout=...; loc=LM0; addr=64; num_lw=4", the l3ir.txt fields;
 * - with strip, a constant of more than 16 elements loses its data. ONNX has no tensor
 *   without data (onnx.checker wants exactly one value field, and external data must
 *   exist), so such a constant becomes a graph input of the same type whose doc_string
 *   says "constant, data stripped"; small constants (shapes, scalars) keep
 *   their data, which is what one reads them for. The model's metadata_props name the
 *   compiler, the machine and the stripped constants' count.
 * Everything is allocated in the compilation's arena. */
#include "onnx_write.h"
#include "onnx.pb-c.h"
#include "ops.h"
#include "version.h"
#include <inttypes.h>
#include <string.h>

enum { KEEP_ELEMS = 16 };

/* attributes the planners and the scheduler put on nodes (layout_plan.c: a streamed B,
 * a node's input tiles; scheduler/sched.c): an ONNX op's schema does not know them, so
 * on those they go to the node's doc_string */
static bool sched_attr(const char *name) {
    static const char *const names[] = {"in_place", "temp_lw", "temp_bank", "temp_addr", "b_streamed", "tile_in"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(name, names[i])) return true;
    return false;
}

typedef struct {
    Arena *a;
    const MNGraph *g;
    bool strip;
    int nstripped;
} W;

static char *s_dup(W *w, const char *s) { return arena_strdup(w->a, s ? s : ""); }

static Onnx__TypeProto *type_of(W *w, const MNValue *v) {
    Onnx__TypeProto *t = ARENA_NEW(w->a, Onnx__TypeProto);
    onnx__type_proto__init(t);
    Onnx__TypeProto__Tensor *tt = ARENA_NEW(w->a, Onnx__TypeProto__Tensor);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = v->type.elem;
    if (v->type.rank >= 0) {
        Onnx__TensorShapeProto *sh = ARENA_NEW(w->a, Onnx__TensorShapeProto);
        onnx__tensor_shape_proto__init(sh);
        sh->n_dim = (size_t)v->type.rank;
        sh->dim = ARENA_ARRAY(w->a, Onnx__TensorShapeProto__Dimension *, v->type.rank + 1);
        for (int k = 0; k < v->type.rank; k++) {
            Onnx__TensorShapeProto__Dimension *d = ARENA_NEW(w->a, Onnx__TensorShapeProto__Dimension);
            onnx__tensor_shape_proto__dimension__init(d);
            if (v->type.dims[k] >= 0) {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
                d->dim_value = v->type.dims[k];
            } else if (v->type.dim_param && v->type.dim_param[k]) {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
                d->dim_param = s_dup(w, v->type.dim_param[k]);
            }
            sh->dim[k] = d;
        }
        tt->shape = sh;
    }
    t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    t->tensor_type = tt;
    return t;
}

/* "mncore: NOTE; dtype=Float; layout=...; loc=LM0; ...": the planners' decisions about v
 * as l3ir.txt prints them (none before the planners ran) */
static char *doc_of(W *w, const MNValue *v, const char *note) {
    static const char *locs[] = {"Unknown", "DRAM", "LM0", "LM1", "IMM", "InOut"};
    const char *loc = v->loc == MN_LOC_UNKNOWN && v->loc_kind == MN_LOC_KIND_LM ? "LM" : locs[v->loc];
    MNBuf b = {0};
    buf_printf(&b, "mncore:");
    if (note) buf_printf(&b, " %s", note);
    if (v->dtype != MN_DT_Unknown || v->layout || v->loc != MN_LOC_UNKNOWN || v->loc_kind != MN_LOC_KIND_UNKNOWN) {
        buf_printf(&b, "%s dtype=%s; layout=%s; loc=%s", note ? ";" : "", mn_dtype_name(v->dtype),
                   v->layout ? v->layout : "Unknown", loc);
        if (v->addr >= 0) buf_printf(&b, "; addr=%" PRId64, v->addr);
        if (v->num_lw >= 0) buf_printf(&b, "; num_lw=%" PRId64, v->num_lw);
        if (v->gene) buf_printf(&b, "; gene=%s", v->gene);
    }
    char *s = b.len > 7 ? s_dup(w, b.data) : NULL;
    buf_free(&b);
    return s;
}

static Onnx__ValueInfoProto *info_of(W *w, const MNValue *v, const char *note) {
    Onnx__ValueInfoProto *vi = ARENA_NEW(w->a, Onnx__ValueInfoProto);
    onnx__value_info_proto__init(vi);
    vi->name = s_dup(w, v->name);
    vi->type = type_of(w, v);
    vi->doc_string = doc_of(w, v, note);
    return vi;
}

static Onnx__TensorProto *tensor_of(W *w, const MNTensor *t, const char *name) {
    Onnx__TensorProto *tp = ARENA_NEW(w->a, Onnx__TensorProto);
    onnx__tensor_proto__init(tp);
    tp->n_dims = (size_t)t->rank;
    tp->dims = t->dims;
    tp->has_data_type = 1;
    tp->data_type = t->elem;
    tp->name = s_dup(w, name);
    tp->has_raw_data = 1;
    tp->raw_data.len = (size_t)t->numel * (size_t)onnx_type_size(t->elem);
    tp->raw_data.data = t->data;
    return tp;
}

static Onnx__AttributeProto *attr_of(W *w, const MNAttr *at) {
    Onnx__AttributeProto *p = ARENA_NEW(w->a, Onnx__AttributeProto);
    onnx__attribute_proto__init(p);
    p->name = s_dup(w, at->name);
    p->has_type = 1;
    p->type = (Onnx__AttributeProto__AttributeType)at->type;
    switch (at->type) {
    case MN_ATTR_FLOAT:
        p->has_f = 1;
        p->f = (float)at->f;
        break;
    case MN_ATTR_INT:
        p->has_i = 1;
        p->i = at->i;
        break;
    case MN_ATTR_STRING:
        p->has_s = 1;
        p->s.len = at->slen;
        p->s.data = (uint8_t *)at->s;
        break;
    case MN_ATTR_TENSOR:
        if (!at->t) return NULL;
        p->t = tensor_of(w, at->t, "");
        break;
    case MN_ATTR_FLOATS:
        p->n_floats = (size_t)at->n;
        p->floats = ARENA_ARRAY(w->a, float, at->n + 1);
        for (int k = 0; k < at->n; k++) p->floats[k] = (float)at->floats[k];
        break;
    case MN_ATTR_INTS:
        p->n_ints = (size_t)at->n;
        p->ints = at->ints;
        break;
    case MN_ATTR_STRINGS:
        p->n_strings = (size_t)at->n;
        p->strings = ARENA_ARRAY(w->a, ProtobufCBinaryData, at->n + 1);
        for (int k = 0; k < at->n; k++) {
            p->strings[k].data = (uint8_t *)at->strings[k];
            p->strings[k].len = strlen(at->strings[k]);
        }
        break;
    default: return NULL; /* graphs and the rest: the loader rejects them before here */
    }
    return p;
}

static Onnx__StringStringEntryProto *meta(W *w, const char *k, const char *v) {
    Onnx__StringStringEntryProto *e = ARENA_NEW(w->a, Onnx__StringStringEntryProto);
    onnx__string_string_entry_proto__init(e);
    e->key = s_dup(w, k);
    e->value = s_dup(w, v);
    return e;
}

bool onnx_write_model(MNCompile *c, const MNGraph *g, bool strip, MNBuf *out) {
    return onnx_write_model_in(c->arena, c, g, strip, out);
}

bool onnx_write_model_in(Arena *a, const MNCompile *c, const MNGraph *g, bool strip, MNBuf *out) {
    W w = {a, g, strip, 0};
    Onnx__GraphProto *gp = ARENA_NEW(w.a, Onnx__GraphProto);
    onnx__graph_proto__init(gp);
    gp->name = s_dup(&w, g->name ? g->name : "mncc");
    int nn = 0;
    for (int i = 0; i < g->nnodes; i++) nn += !g->nodes[i]->dead;
    gp->node = ARENA_ARRAY(w.a, Onnx__NodeProto *, nn + 1);
    bool custom = false;
    for (int i = 0; i < g->nnodes; i++) {
        const MNNode *n = g->nodes[i];
        if (n->dead) continue;
        Onnx__NodeProto *np = ARENA_NEW(w.a, Onnx__NodeProto);
        onnx__node_proto__init(np);
        np->name = s_dup(&w, n->name);
        np->op_type = s_dup(&w, n->op_type);
        bool own = n->op > 0 && n->op < OP_COUNT && mn_ops[n->op].since <= 0;
        custom |= own;
        np->domain = s_dup(&w, own ? "mncore" : n->domain);
        np->n_input = (size_t)n->nin;
        np->input = ARENA_ARRAY(w.a, char *, n->nin + 1);
        for (int k = 0; k < n->nin; k++) np->input[k] = s_dup(&w, n->in[k] ? n->in[k]->name : "");
        np->n_output = (size_t)n->nout;
        np->output = ARENA_ARRAY(w.a, char *, n->nout + 1);
        for (int k = 0; k < n->nout; k++) np->output[k] = s_dup(&w, n->out[k] ? n->out[k]->name : "");
        np->attribute = ARENA_ARRAY(w.a, Onnx__AttributeProto *, n->nattr + 1);
        MNBuf doc = {0};
        for (int k = 0; k < n->nattr; k++) {
            if (!own && sched_attr(n->attrs[k].name)) {
                const MNAttr *at = &n->attrs[k];
                buf_printf(&doc, "%s%s=", doc.len ? "; " : "mncore: ", at->name);
                if (at->type == MN_ATTR_INTS)
                    for (int j = 0; j < at->n; j++) buf_printf(&doc, "%s%" PRId64, j ? "," : "", at->ints[j]);
                else
                    buf_printf(&doc, "%" PRId64, at->i);
                continue;
            }
            Onnx__AttributeProto *p = attr_of(&w, &n->attrs[k]);
            if (p) np->attribute[np->n_attribute++] = p;
        }
        if (doc.len) np->doc_string = s_dup(&w, doc.data);
        buf_free(&doc);
        gp->node[gp->n_node++] = np;
    }
    /* values: graph inputs, constants (kept or stripped), the rest as value_info */
    gp->input = ARENA_ARRAY(w.a, Onnx__ValueInfoProto *, g->nvalues + 1);
    gp->initializer = ARENA_ARRAY(w.a, Onnx__TensorProto *, g->nvalues + 1);
    gp->value_info = ARENA_ARRAY(w.a, Onnx__ValueInfoProto *, g->nvalues + 1);
    gp->output = ARENA_ARRAY(w.a, Onnx__ValueInfoProto *, g->noutputs + 1);
    bool *used = ARENA_ARRAY(w.a, bool, g->nvalues + 1);
    for (int i = 0; i < g->nnodes; i++) {
        const MNNode *n = g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->nin; k++)
            if (n->in[k] && n->in[k]->id >= 0 && n->in[k]->id < g->nvalues) used[n->in[k]->id] = true;
        for (int k = 0; k < n->nout; k++)
            if (n->out[k] && n->out[k]->id >= 0 && n->out[k]->id < g->nvalues) used[n->out[k]->id] = true;
    }
    for (int i = 0; i < g->noutputs; i++)
        if (g->outputs[i]->id >= 0 && g->outputs[i]->id < g->nvalues) used[g->outputs[i]->id] = true;
    for (int i = 0; i < g->ninputs; i++) gp->input[gp->n_input++] = info_of(&w, g->inputs[i], NULL);
    for (int i = 0; i < g->nvalues; i++) {
        const MNValue *v = g->values[i];
        bool live_producer = v->producer && !v->producer->dead;
        if (!used[i] || v->is_input || live_producer) continue;
        if (!v->konst) continue; /* an unused or dangling value: nothing to say */
        if (strip && v->konst->numel > KEEP_ELEMS) {
            gp->input[gp->n_input++] = info_of(&w, v, "constant, data stripped");
            w.nstripped++;
        } else {
            gp->initializer[gp->n_initializer++] = tensor_of(&w, v->konst, v->name);
            gp->value_info[gp->n_value_info++] = info_of(&w, v, "constant");
        }
    }
    for (int i = 0; i < g->nvalues; i++) {
        const MNValue *v = g->values[i];
        if (!used[i] || v->is_input || v->is_output || !v->producer || v->producer->dead) continue;
        gp->value_info[gp->n_value_info++] = info_of(&w, v, NULL);
    }
    for (int i = 0; i < g->noutputs; i++) gp->output[gp->n_output++] = info_of(&w, g->outputs[i], NULL);

    Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
    /* IR 4 at least (initializers need not be inputs), and no newer than this writer's */
    m.has_ir_version = 1;
    m.ir_version = g->ir_version < 4                           ? 4
                   : g->ir_version > ONNX__VERSION__IR_VERSION ? ONNX__VERSION__IR_VERSION
                                                               : g->ir_version;
    m.producer_name = "mncc";
    m.producer_version = (char *)mncc_version;
    m.graph = gp;
    Onnx__OperatorSetIdProto ops[2] = {ONNX__OPERATOR_SET_ID_PROTO__INIT, ONNX__OPERATOR_SET_ID_PROTO__INIT};
    Onnx__OperatorSetIdProto *opp[2] = {&ops[0], &ops[1]};
    ops[0].domain = "";
    ops[0].has_version = 1;
    ops[0].version = g->opset;
    ops[1].domain = "mncore";
    ops[1].has_version = 1;
    ops[1].version = 1;
    m.n_opset_import = custom ? 2 : 1;
    m.opset_import = opp;
    Onnx__StringStringEntryProto *md[3] = {meta(&w, "mncore.compiler", arena_printf(w.a, "mncc %s", mncc_version)),
                                           meta(&w, "mncore.machine", c->machine.name[0] ? c->machine.name : "unknown"),
                                           meta(&w, "mncore.stripped_constants", arena_printf(w.a, "%d", w.nstripped))};
    m.n_metadata_props = 3;
    m.metadata_props = md;
    size_t len = onnx__model_proto__get_packed_size(&m);
    out->len = 0;
    buf_reserve(out, len);
    onnx__model_proto__pack(&m, (uint8_t *)out->data);
    out->len = len;
    out->data[len] = 0;
    return true;
}

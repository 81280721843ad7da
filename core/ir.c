#include "ir.h"
#include "num.h"
#include "buf.h"
#include "ops.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

static uint64_t hash_str(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

MNGraph *ir_graph_new(Arena *a, const char *file) {
    MNGraph *g = ARENA_NEW(a, MNGraph);
    g->arena = a;
    g->file = arena_strdup(a, file ? file : "<memory>");
    g->name = "";
    g->table_cap = 1024;
    g->table = ARENA_ARRAY(a, MNValue *, g->table_cap);
    return g;
}

static void table_insert(MNGraph *g, MNValue *v) {
    if ((size_t)(g->nvalues + 1) * 2 > g->table_cap) {
        size_t cap = g->table_cap * 2;
        MNValue **t = ARENA_ARRAY(g->arena, MNValue *, cap);
        for (size_t i = 0; i < g->table_cap; i++) {
            MNValue *w = g->table[i];
            if (!w) continue;
            size_t j = hash_str(w->name) & (cap - 1);
            while (t[j]) j = (j + 1) & (cap - 1);
            t[j] = w;
        }
        g->table = t;
        g->table_cap = cap;
    }
    size_t j = hash_str(v->name) & (g->table_cap - 1);
    while (g->table[j]) j = (j + 1) & (g->table_cap - 1);
    g->table[j] = v;
}

MNValue *ir_value_lookup(const MNGraph *g, const char *name) {
    size_t j = hash_str(name) & (g->table_cap - 1);
    for (MNValue *v; (v = g->table[j]); j = (j + 1) & (g->table_cap - 1))
        if (strcmp(v->name, name) == 0) return v;
    return NULL;
}

MNValue *ir_value_new(MNGraph *g, const char *name) {
    const char *nm = name;
    for (int k = 1; ir_value_lookup(g, nm); k++) nm = arena_printf(g->arena, "%s_%d", name, k);
    MNValue *v = ARENA_NEW(g->arena, MNValue);
    v->name = nm == name ? arena_strdup(g->arena, name) : nm;
    v->id = g->nvalues;
    v->type.rank = -1;
    v->num_lw = -1;
    v->addr = -1;
    table_insert(g, v);
    ARENA_PUSH(g->arena, g->values, g->nvalues, g->cap_values, v);
    return v;
}

MNNode *ir_node_new(MNGraph *g, const char *op_type, int nin, int nout) {
    MNNode *n = ARENA_NEW(g->arena, MNNode);
    n->op_type = arena_strdup(g->arena, op_type);
    n->op = ops_lookup(op_type);
    n->domain = "";
    n->nin = nin;
    n->nout = nout;
    n->in = ARENA_ARRAY(g->arena, MNValue *, nin);
    n->out = ARENA_ARRAY(g->arena, MNValue *, nout);
    n->index = g->nnodes;
    n->sim = -1;
    ARENA_PUSH(g->arena, g->nodes, g->nnodes, g->cap_nodes, n);
    return n;
}

const MNAttr *ir_attr(const MNNode *n, const char *name) {
    for (int i = 0; i < n->nattr; i++)
        if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}
static void attr_set(MNGraph *g, MNNode *n, MNAttr v) {
    MNAttr *a = ARENA_ARRAY(g->arena, MNAttr, n->nattr + 1);
    int k = 0;
    for (int i = 0; i < n->nattr; i++) /* a copy without the old value: slices share the original's */
        if (strcmp(n->attrs[i].name, v.name)) a[k++] = n->attrs[i];
    a[k++] = v;
    n->attrs = a;
    n->nattr = k;
}
void ir_attr_set_int(MNGraph *g, MNNode *n, const char *name, int64_t v) {
    attr_set(g, n, (MNAttr){.name = name, .type = MN_ATTR_INT, .i = v});
}
void ir_attr_set_float(MNGraph *g, MNNode *n, const char *name, double v) {
    attr_set(g, n, (MNAttr){.name = name, .type = MN_ATTR_FLOAT, .f = v});
}

void ir_attr_set_ints(MNGraph *g, MNNode *n, const char *name, const int64_t *v, int cnt) {
    int64_t *copy = ARENA_ARRAY(g->arena, int64_t, cnt + 1);
    memcpy(copy, v, sizeof(int64_t) * (size_t)cnt);
    attr_set(g, n, (MNAttr){.name = name, .type = MN_ATTR_INTS, .ints = copy, .n = cnt});
}

int64_t ir_attr_int(const MNNode *n, const char *name, int64_t dflt) {
    const MNAttr *a = ir_attr(n, name);
    return a && a->type == MN_ATTR_INT ? a->i : dflt;
}
double ir_attr_float(const MNNode *n, const char *name, double dflt) {
    const MNAttr *a = ir_attr(n, name);
    return a && a->type == MN_ATTR_FLOAT ? a->f : dflt;
}
const char *ir_attr_string(const MNNode *n, const char *name, const char *dflt) {
    const MNAttr *a = ir_attr(n, name);
    return a && a->type == MN_ATTR_STRING ? a->s : dflt;
}

void ir_recount_uses(MNGraph *g) {
    for (int i = 0; i < g->nvalues; i++) g->values[i]->nuses = 0;
    for (int i = 0; i < g->nnodes; i++) {
        MNNode *n = g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->nin; k++)
            if (n->in[k]) n->in[k]->nuses++;
    }
    for (int i = 0; i < g->noutputs; i++) g->outputs[i]->nuses++;
}

void ir_compact(MNGraph *g) {
    int w = 0;
    for (int i = 0; i < g->nnodes; i++)
        if (!g->nodes[i]->dead) g->nodes[w++] = g->nodes[i];
    g->nnodes = w;
    ir_recount_uses(g);
}

int ir_node_count_live(const MNGraph *g) {
    int c = 0;
    for (int i = 0; i < g->nnodes; i++) c += !g->nodes[i]->dead;
    return c;
}

int64_t ir_shape_numel(const MNType *t) {
    if (t->rank < 0) return -1;
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) {
        if (t->dims[i] < 0) return -1;
        if (t->dims[i] && n > INT64_MAX / t->dims[i]) return -2;
        n *= t->dims[i];
    }
    return n;
}

bool ir_type_static(const MNType *t) {
    if (t->rank < 0) return false;
    for (int i = 0; i < t->rank; i++)
        if (t->dims[i] < 0) return false;
    return true;
}

void ir_type_set(MNGraph *g, MNType *t, int32_t elem, int rank, const int64_t *dims) {
    t->elem = elem;
    t->rank = rank;
    t->dims = ARENA_ARRAY(g->arena, int64_t, rank > 0 ? rank : 1); /* never NULL, even for scalars */
    t->dim_param = NULL;
    if (rank > 0 && dims) memcpy(t->dims, dims, sizeof(int64_t) * (size_t)rank);
}

/* ---- tensors ---- */

MNTensor *ir_tensor_new(Arena *a, int32_t elem, int rank, const int64_t *dims) {
    MNTensor *t = ARENA_NEW(a, MNTensor);
    t->elem = elem;
    t->rank = rank;
    t->dims = ARENA_ARRAY(a, int64_t, rank > 0 ? rank : 1);
    t->numel = 1;
    for (int i = 0; i < rank; i++) {
        t->dims[i] = dims[i];
        t->numel *= dims[i];
    }
    size_t sz = (size_t)t->numel * (size_t)onnx_type_size(elem);
    t->data = arena_alloc(a, sz ? sz : 1);
    return t;
}

double ir_tensor_get_f(const MNTensor *t, int64_t i) {
    const void *p = t->data;
    switch (t->elem) {
    case ONNX_FLOAT32: return ((const float *)p)[i];
    case ONNX_DOUBLE: return ((const double *)p)[i];
    case ONNX_FLOAT16: return num_half_to_float(((const uint16_t *)p)[i]);
    case ONNX_BFLOAT16: return num_bf16_to_float(((const uint16_t *)p)[i]);
    case ONNX_UINT64: return (double)((const uint64_t *)p)[i];
    default: return (double)ir_tensor_get_i(t, i);
    }
}

int64_t ir_tensor_get_i(const MNTensor *t, int64_t i) {
    const void *p = t->data;
    switch (t->elem) {
    case ONNX_UINT8: return ((const uint8_t *)p)[i];
    case ONNX_BOOL: return ((const uint8_t *)p)[i] != 0;
    case ONNX_INT8: return ((const int8_t *)p)[i];
    case ONNX_UINT16: return ((const uint16_t *)p)[i];
    case ONNX_INT16: return ((const int16_t *)p)[i];
    case ONNX_INT32: return ((const int32_t *)p)[i];
    case ONNX_INT64: return ((const int64_t *)p)[i];
    case ONNX_UINT32: return ((const uint32_t *)p)[i];
    case ONNX_UINT64: return (int64_t)((const uint64_t *)p)[i];
    default: {
        double d = ir_tensor_get_f(t, i);
        if (isnan(d)) return 0;
        if (d >= 9.2233720368547758e18) return INT64_MAX;
        if (d <= -9.2233720368547758e18) return INT64_MIN;
        return (int64_t)d;
    }
    }
}

void ir_tensor_set_i(MNTensor *t, int64_t i, int64_t v) {
    void *p = t->data;
    switch (t->elem) {
    case ONNX_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case ONNX_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case ONNX_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case ONNX_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case ONNX_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case ONNX_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case ONNX_INT64: ((int64_t *)p)[i] = v; break;
    case ONNX_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case ONNX_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    default: ir_tensor_set_f(t, i, (double)v); break;
    }
}

/* Float-to-integer conversion as numpy's astype does on x86: truncation toward zero;
 * out-of-range values are undefined in ONNX, we saturate so folding is deterministic. */
static int64_t f2i(double d) {
    if (isnan(d)) return 0;
    if (d >= 9.2233720368547758e18) return INT64_MAX;
    if (d <= -9.2233720368547758e18) return INT64_MIN;
    return (int64_t)d;
}

void ir_tensor_set_f(MNTensor *t, int64_t i, double v) {
    void *p = t->data;
    switch (t->elem) {
    case ONNX_FLOAT32: ((float *)p)[i] = (float)v; break;
    case ONNX_DOUBLE: ((double *)p)[i] = v; break;
    case ONNX_FLOAT16: ((uint16_t *)p)[i] = num_float_to_half((float)v); break;
    case ONNX_BFLOAT16: ((uint16_t *)p)[i] = num_float_to_bf16((float)v); break;
    case ONNX_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case ONNX_UINT64:
        ((uint64_t *)p)[i] = v <= 0 ? (uint64_t)f2i(v) : v >= 1.8446744073709552e19 ? UINT64_MAX : (uint64_t)v;
        break;
    default: ir_tensor_set_i(t, i, f2i(v)); break;
    }
}

MNTensor *ir_tensor_cast(Arena *a, const MNTensor *t, int32_t elem) {
    MNTensor *r = ir_tensor_new(a, elem, t->rank, t->dims);
    bool src_int = !onnx_type_is_float(t->elem);
    for (int64_t i = 0; i < t->numel; i++) {
        if (src_int && t->elem != ONNX_UINT64)
            ir_tensor_set_i(r, i, ir_tensor_get_i(t, i));
        else
            ir_tensor_set_f(r, i, ir_tensor_get_f(t, i));
    }
    return r;
}

char *ir_dims_str(Arena *a, int rank, const int64_t *dims) {
    if (rank <= 0) return arena_strdup(a, "");
    char *buf = arena_alloc(a, (size_t)rank * 21 + 1), *p = buf;
    for (int i = 0; i < rank; i++) p += sprintf(p, i ? ",%lld" : "%lld", (long long)dims[i]);
    return buf;
}

bool ir_attrs_key(MNBuf *b, const MNNode *n) {
    bool all = true;
    for (int i = 0; i < n->nattr; i++) {
        const MNAttr *a = &n->attrs[i];
        buf_printf(b, "attr %s %d", a->name, (int)a->type);
        if (a->type == MN_ATTR_INT)
            buf_printf(b, " %lld", (long long)a->i);
        else if (a->type == MN_ATTR_FLOAT)
            buf_printf(b, " %.17g", a->f);
        else if (a->type == MN_ATTR_STRING)
            buf_printf(b, " %zu:%.*s", (size_t)a->slen, (int)a->slen, a->s);
        else if (a->type == MN_ATTR_INTS)
            for (int j = 0; j < a->n; j++) buf_printf(b, " %lld", (long long)a->ints[j]);
        else if (a->type == MN_ATTR_FLOATS)
            for (int j = 0; j < a->n; j++) buf_printf(b, " %.17g", a->floats[j]);
        else
            all = false;
        buf_printf(b, "\n");
    }
    return all;
}

/* nodes whose results nothing reads, dropped (from the last: a chain goes at once) */
int ir_remove_dead(MNGraph *g) {
    ir_recount_uses(g);
    int removed = 0;
    for (int i = g->nnodes - 1; i >= 0; i--) {
        MNNode *n = g->nodes[i];
        bool used = false;
        for (int k = 0; k < n->nout; k++) used |= n->out[k] && n->out[k]->nuses > 0;
        if (used) continue;
        n->dead = true;
        removed++;
        for (int k = 0; k < n->nin; k++)
            if (n->in[k]) n->in[k]->nuses--;
    }
    ir_compact(g);
    return removed;
}

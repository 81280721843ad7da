/* ONNX loader: ModelProto (protobuf-c) -> MNGraph.
 *
 * Decides what the rest of the compiler may assume about its input: names are unique
 * and each value has one producer, every consumed value exists, the nodes are in a
 * topological order, tensors are dense arrays of a known numeric type, and every op is
 * one we handle at the model's opset (all unsupported ones are listed in one error).
 * protobuf-c allocates through the compilation arena, so the parsed proto and the
 * graph are freed together and the arena's limit bounds what a hostile file can make
 * us allocate. */
#include "onnx_load.h"
#include "onnx.pb-c.h"
#include "ops.h"
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

typedef struct {
    Arena *a;
    MNGraph *g;
    MNDiag *d;
    const char *path;
    char *dir; /* model directory, for external data */
    int depth;
} Loader;

static bool fail(Loader *L, MNDiagKind k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(Loader *L, MNDiagKind k, const char *fmt, ...) {
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return diag_error(L->d, k, "%s: %s", L->path, msg);
}

static void *pb_alloc(void *ud, size_t n) { return arena_try_alloc(ud, n); }
static void pb_free(void *ud, void *p) { (void)ud, (void)p; }

/* ---- tensors ---- */

static bool check_dims(Loader *L, const char *what, size_t nd, const int64_t *dims, int64_t *numel) {
    if (nd > MN_MAX_RANK)
        return fail(L, DIAG_UNSUPPORTED, "%s: rank %zu exceeds mncc's limit of %d", what, nd, MN_MAX_RANK);
    int64_t n = 1;
    for (size_t i = 0; i < nd; i++) {
        if (dims[i] < 0) return fail(L, DIAG_INVALID, "%s: dim %zu is negative (%lld)", what, i, (long long)dims[i]);
        if (dims[i] && n > INT64_MAX / dims[i])
            return fail(L, DIAG_INVALID, "%s: element count overflows 64 bits", what);
        n *= dims[i];
    }
    *numel = n;
    return true;
}

static bool parse_u64(const char *s, int64_t *out) {
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || s[0] == '-' || v > (unsigned long long)INT64_MAX) return false;
    *out = (int64_t)v;
    return true;
}

/* External data: a path relative to the model's directory that stays inside it. */
static bool read_external(Loader *L, const Onnx__TensorProto *tp, const char *what, void *dst, size_t want) {
    const char *loc = NULL;
    int64_t off = 0, len = -1;
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = tp->external_data[i];
        if (!e->key) continue;
        if (!strcmp(e->key, "location"))
            loc = e->value;
        else if (!strcmp(e->key, "offset") && !parse_u64(e->value, &off))
            return fail(L, DIAG_INVALID, "%s: external data offset '%s' is not a number", what,
                        e->value ? e->value : "");
        else if (!strcmp(e->key, "length") && !parse_u64(e->value, &len))
            return fail(L, DIAG_INVALID, "%s: external data length '%s' is not a number", what,
                        e->value ? e->value : "");
    }
    if (!loc || !*loc) return fail(L, DIAG_INVALID, "%s: external data without a 'location'", what);
    if (loc[0] == '/') return fail(L, DIAG_INVALID, "%s: external data location '%s' is an absolute path", what, loc);
    for (const char *p = loc; *p;) {
        const char *q = strchr(p, '/');
        size_t n = q ? (size_t)(q - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return fail(L, DIAG_INVALID, "%s: external data location '%s' escapes the model directory", what, loc);
        p += n + (q != NULL);
    }
    char *full = arena_printf(L->a, "%s/%s", L->dir, loc);
    char real_dir[PATH_MAX], real_file[PATH_MAX];
    if (!realpath(full, real_file))
        return fail(L, DIAG_INVALID, "%s: external data file '%s' cannot be opened: %s", what, full, strerror(errno));
    if (!realpath(L->dir, real_dir))
        return fail(L, DIAG_IO, "%s: model directory '%s': %s", what, L->dir, strerror(errno));
    size_t dl = strlen(real_dir);
    if (strncmp(real_file, real_dir, dl) || (real_file[dl] != '/' && dl > 1))
        return fail(L, DIAG_INVALID, "%s: external data location '%s' resolves outside the model directory", what, loc);
    FILE *f = fopen(real_file, "rb");
    if (!f)
        return fail(L, DIAG_INVALID, "%s: external data file '%s' cannot be opened: %s", what, full, strerror(errno));
    if (L->g) { /* remembered once each: what the compile read besides the model */
        int k = 0;
        while (k < L->g->next_files && strcmp(L->g->ext_files[k], real_file)) k++;
        if (k == L->g->next_files) {
            const char **nf = ARENA_ARRAY(L->a, const char *, k + 1);
            if (k) memcpy(nf, L->g->ext_files, sizeof(char *) * (size_t)k);
            nf[k] = arena_strdup(L->a, real_file);
            L->g->ext_files = nf;
            L->g->next_files = k + 1;
        }
    }
    struct stat st;
    bool ok = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
    if (!ok) {
        fclose(f);
        return fail(L, DIAG_INVALID, "%s: external data '%s' is not a regular file", what, full);
    }
    if (len < 0) len = (int64_t)st.st_size - off;
    if (off > st.st_size || len > (int64_t)st.st_size - off) {
        fclose(f);
        return fail(L, DIAG_INVALID,
                    "%s: external data range offset %lld length %lld is past the end of '%s' (%lld bytes)", what,
                    (long long)off, (long long)len, loc, (long long)st.st_size);
    }
    if ((uint64_t)len != want) {
        fclose(f);
        return fail(L, DIAG_INVALID, "%s: external data holds %lld bytes, the tensor needs %zu", what, (long long)len,
                    want);
    }
    ok = fseeko(f, off, SEEK_SET) == 0 && fread(dst, 1, want, f) == want;
    fclose(f);
    if (!ok) return fail(L, DIAG_IO, "%s: reading external data from '%s' failed", what, full);
    return true;
}

static MNTensor *load_tensor(Loader *L, const Onnx__TensorProto *tp, const char *what) {
    if (!tp->has_data_type || tp->data_type == ONNX_UNDEFINED) {
        fail(L, DIAG_INVALID, "%s: tensor has no data type", what);
        return NULL;
    }
    int32_t et = tp->data_type;
    if (!onnx_type_known(et)) {
        fail(L, DIAG_INVALID, "%s: unknown tensor element type %d", what, et);
        return NULL;
    }
    if (!onnx_type_numeric(et)) {
        fail(L, DIAG_UNSUPPORTED, "%s: element type %s is not supported", what, onnx_type_name(et));
        return NULL;
    }
    if (tp->segment) {
        fail(L, DIAG_UNSUPPORTED, "%s: segmented tensors are not supported", what);
        return NULL;
    }
    int64_t numel = 0;
    if (!check_dims(L, what, tp->n_dims, tp->dims, &numel)) return NULL;
    size_t esz = (size_t)onnx_type_size(et);
    if ((uint64_t)numel > SIZE_MAX / esz / 2) {
        fail(L, DIAG_RESOURCE, "%s: tensor of %lld elements is too large", what, (long long)numel);
        return NULL;
    }
    size_t bytes = (size_t)numel * esz;
    MNTensor *t = ARENA_NEW(L->a, MNTensor);
    t->elem = et;
    t->rank = (int)tp->n_dims;
    t->dims = ARENA_ARRAY(L->a, int64_t, t->rank ? t->rank : 1);
    if (tp->n_dims) memcpy(t->dims, tp->dims, sizeof(int64_t) * tp->n_dims);
    t->numel = numel;
    size_t nfields = (tp->n_float_data > 0) + (tp->n_int32_data > 0) + (tp->n_int64_data > 0) +
                     (tp->n_double_data > 0) + (tp->n_uint64_data > 0) + (tp->n_string_data > 0) +
                     (tp->has_raw_data && tp->raw_data.len > 0);
    bool external = tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    /* raw_data as it stands: the message's bytes are the arena's (pb_alloc, aligned), and
     * the message is not read again, so the tensor takes them (a weight-heavy model's
     * megabytes were copied a second time) */
    if (!external && nfields == 1 && tp->has_raw_data && tp->raw_data.len == bytes && bytes &&
        (uintptr_t)tp->raw_data.data % 16 == 0) {
        t->data = tp->raw_data.data;
        if (et == ONNX_BOOL)
            for (size_t i = 0; i < bytes; i++) ((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
        return t;
    }
    t->data = arena_try_alloc(L->a, bytes ? bytes : 1);
    if (!t->data) {
        fail(L, DIAG_RESOURCE, "%s: %zu bytes exceed the memory limit", what, bytes);
        return NULL;
    }
    if (external) {
        if (nfields) {
            fail(L, DIAG_INVALID, "%s: tensor has both external and inline data", what);
            return NULL;
        }
        return read_external(L, tp, what, t->data, bytes) ? t : NULL;
    }
    if (nfields > 1) {
        fail(L, DIAG_INVALID, "%s: tensor data is given in more than one field", what);
        return NULL;
    }
    size_t have;
    const char *field;
#define TYPED(nfield, arr, cond, conv)                                                                   \
    if (tp->nfield) {                                                                                    \
        field = #arr;                                                                                    \
        have = tp->nfield;                                                                               \
        if (!(cond)) {                                                                                   \
            fail(L, DIAG_INVALID, "%s: %s is not valid for %s tensors", what, #arr, onnx_type_name(et)); \
            return NULL;                                                                                 \
        }                                                                                                \
        if (have != (size_t)numel) goto count_mismatch;                                                  \
        for (size_t i = 0; i < have; i++) conv;                                                          \
        return t;                                                                                        \
    }
    TYPED(n_float_data, float_data, et == ONNX_FLOAT32, ((float *)t->data)[i] = tp->float_data[i])
    TYPED(n_double_data, double_data, et == ONNX_DOUBLE, ((double *)t->data)[i] = tp->double_data[i])
    TYPED(n_int64_data, int64_data, et == ONNX_INT64, ((int64_t *)t->data)[i] = tp->int64_data[i])
    TYPED(n_uint64_data, uint64_data, et == ONNX_UINT32 || et == ONNX_UINT64,
          ir_tensor_set_i(t, (int64_t)i, (int64_t)tp->uint64_data[i]))
    /* int32_data carries the narrow integer types and the 16-bit float bit patterns */
    TYPED(n_int32_data, int32_data,
          et == ONNX_INT32 || et == ONNX_INT16 || et == ONNX_INT8 || et == ONNX_UINT16 || et == ONNX_UINT8 ||
              et == ONNX_BOOL || et == ONNX_FLOAT16 || et == ONNX_BFLOAT16,
          (et == ONNX_FLOAT16 || et == ONNX_BFLOAT16) ? (void)(((uint16_t *)t->data)[i] = (uint16_t)tp->int32_data[i])
                                                      : ir_tensor_set_i(t, (int64_t)i, tp->int32_data[i]))
#undef TYPED
    if (tp->n_string_data) {
        fail(L, DIAG_INVALID, "%s: string_data in a %s tensor", what, onnx_type_name(et));
        return NULL;
    }
    if (tp->has_raw_data && tp->raw_data.len) {
        if (tp->raw_data.len != bytes) {
            fail(L, DIAG_INVALID, "%s: raw_data has %zu bytes, shape [%s] of %s needs %zu", what, tp->raw_data.len,
                 ir_dims_str(L->a, t->rank, t->dims), onnx_type_name(et), bytes);
            return NULL;
        }
        memcpy(t->data, tp->raw_data.data, bytes); /* little-endian on the host, as ONNX */
        if (et == ONNX_BOOL)
            for (size_t i = 0; i < bytes; i++) ((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
        return t;
    }
    if (numel == 0) return t;
    fail(L, DIAG_INVALID, "%s: tensor of %lld elements has no data", what, (long long)numel);
    return NULL;
count_mismatch:
    fail(L, DIAG_INVALID, "%s: %s has %zu elements, shape [%s] needs %lld", what, field, have,
         ir_dims_str(L->a, t->rank, t->dims), (long long)numel);
    return NULL;
}

/* ---- types ---- */

static bool load_type(Loader *L, const Onnx__ValueInfoProto *vi, MNType *t) {
    t->elem = 0;
    t->rank = -1;
    const Onnx__TypeProto *tp = vi->type;
    if (!tp) return true;
    if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
        const char *k = tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE        ? "sequence"
                        : tp->value_case == ONNX__TYPE_PROTO__VALUE_MAP_TYPE           ? "map"
                        : tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE      ? "optional"
                        : tp->value_case == ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE ? "sparse tensor"
                                                                                       : "unknown";
        if (tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET) return true;
        return fail(L, DIAG_UNSUPPORTED, "value '%s': %s types are not supported (tensors only)", vi->name, k);
    }
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    if (!tt) return true;
    if (tt->has_elem_type && tt->elem_type != 0) {
        if (!onnx_type_known(tt->elem_type))
            return fail(L, DIAG_INVALID, "value '%s': unknown tensor element type %d", vi->name, tt->elem_type);
        if (!onnx_type_numeric(tt->elem_type))
            return fail(L, DIAG_UNSUPPORTED, "value '%s': element type %s is not supported", vi->name,
                        onnx_type_name(tt->elem_type));
        t->elem = tt->elem_type;
    }
    if (!tt->shape) return true;
    if (tt->shape->n_dim > MN_MAX_RANK)
        return fail(L, DIAG_UNSUPPORTED, "value '%s': rank %zu exceeds mncc's limit of %d", vi->name, tt->shape->n_dim,
                    MN_MAX_RANK);
    t->rank = (int)tt->shape->n_dim;
    t->dims = ARENA_ARRAY(L->a, int64_t, t->rank ? t->rank : 1);
    t->dim_param = ARENA_ARRAY(L->a, const char *, t->rank ? t->rank : 1);
    int64_t numel = 1;
    for (int i = 0; i < t->rank; i++) {
        const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[i];
        t->dims[i] = -1;
        if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            if (dm->dim_value < 0)
                return fail(L, DIAG_INVALID, "value '%s': dim %d is negative (%lld)", vi->name, i,
                            (long long)dm->dim_value);
            t->dims[i] = dm->dim_value;
            if (dm->dim_value && numel > INT64_MAX / dm->dim_value)
                return fail(L, DIAG_INVALID, "value '%s': element count of its shape overflows 64 bits", vi->name);
            numel *= dm->dim_value;
        } else if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dm->dim_param &&
                   *dm->dim_param)
            t->dim_param[i] = arena_strdup(L->a, dm->dim_param);
    }
    return true;
}

/* ---- attributes ---- */

static bool load_attr(Loader *L, const Onnx__NodeProto *np, const char *node, const Onnx__AttributeProto *ap,
                      MNAttr *a) {
    a->name = arena_strdup(L->a, ap->name ? ap->name : "");
    if (ap->ref_attr_name && *ap->ref_attr_name)
        return fail(L, DIAG_INVALID, "node '%s' (%s): attribute '%s' refers to a function attribute outside a function",
                    node, np->op_type, a->name);
    int type = ap->has_type ? (int)ap->type : 0;
    if (!type) { /* IR version 1: the populated field names the type */
        type = ap->has_f       ? MN_ATTR_FLOAT
               : ap->has_i     ? MN_ATTR_INT
               : ap->has_s     ? MN_ATTR_STRING
               : ap->t         ? MN_ATTR_TENSOR
               : ap->g         ? MN_ATTR_GRAPH
               : ap->n_floats  ? MN_ATTR_FLOATS
               : ap->n_ints    ? MN_ATTR_INTS
               : ap->n_strings ? MN_ATTR_STRINGS
               : ap->n_tensors ? MN_ATTR_TENSORS
               : ap->n_graphs  ? MN_ATTR_GRAPHS
                               : 0;
        if (!type)
            return fail(L, DIAG_INVALID, "node '%s' (%s): attribute '%s' has no type and no value", node, np->op_type,
                        a->name);
    }
    a->type = (MNAttrType)type;
    char *what = arena_printf(L->a, "node '%s' (%s): attribute '%s'", node, np->op_type, a->name);
    switch (type) {
    case MN_ATTR_FLOAT: a->f = ap->f; break;
    case MN_ATTR_INT: a->i = ap->i; break;
    case MN_ATTR_STRING:
        a->s = arena_strndup(L->a, (const char *)ap->s.data, ap->s.len);
        a->slen = ap->s.len;
        break;
    case MN_ATTR_TENSOR:
        if (!ap->t) return fail(L, DIAG_INVALID, "%s: declared TENSOR but holds none", what);
        if (!(a->t = load_tensor(L, ap->t, what))) return false;
        break;
    case MN_ATTR_FLOATS:
        a->n = (int)ap->n_floats;
        a->floats = ARENA_ARRAY(L->a, double, a->n);
        for (int i = 0; i < a->n; i++) a->floats[i] = ap->floats[i];
        break;
    case MN_ATTR_INTS:
        a->n = (int)ap->n_ints;
        a->ints = ARENA_ARRAY(L->a, int64_t, a->n);
        if (a->n) memcpy(a->ints, ap->ints, sizeof(int64_t) * (size_t)a->n);
        break;
    case MN_ATTR_STRINGS:
        a->n = (int)ap->n_strings;
        a->strings = ARENA_ARRAY(L->a, const char *, a->n);
        for (int i = 0; i < a->n; i++)
            a->strings[i] = arena_strndup(L->a, (const char *)ap->strings[i].data, ap->strings[i].len);
        break;
    case MN_ATTR_GRAPH:
        if (!ap->g) return fail(L, DIAG_INVALID, "%s: declared GRAPH but holds none", what);
        a->graph = ap->g;
        break;
    case MN_ATTR_GRAPHS:
    case MN_ATTR_TENSORS:
    case MN_ATTR_SPARSE_TENSOR:
    case MN_ATTR_SPARSE_TENSORS:
    case MN_ATTR_TYPE_PROTO:
    case MN_ATTR_TYPE_PROTOS: break; /* kept by type only: no supported op takes these */
    default: return fail(L, DIAG_INVALID, "%s: unknown attribute type %d", what, type);
    }
    return true;
}

/* ---- graph ---- */

static bool is_default_domain(const char *d) { return !d || !*d || !strcmp(d, "ai.onnx"); }

static MNValue *declare(Loader *L, const char *name) {
    MNValue *v = ir_value_lookup(L->g, name);
    return v ? v : ir_value_new(L->g, name);
}

static bool topo_sort(Loader *L) {
    MNGraph *g = L->g;
    int n = g->nnodes;
    int *pending = xcalloc((size_t)n, sizeof(int));
    /* consumers per value: CSR built from node inputs */
    int *cnt = xcalloc((size_t)g->nvalues + 1, sizeof(int)), total = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < g->nodes[i]->nin; k++) {
            MNValue *v = g->nodes[i]->in[k];
            if (v && v->producer) {
                pending[i]++;
                cnt[v->id + 1]++;
                total++;
            }
        }
    for (int i = 0; i < g->nvalues; i++) cnt[i + 1] += cnt[i];
    int *users = xmalloc(sizeof(int) * (size_t)(total ? total : 1)), *fill = xcalloc((size_t)g->nvalues, sizeof(int));
    for (int i = 0; i < n; i++)
        for (int k = 0; k < g->nodes[i]->nin; k++) {
            MNValue *v = g->nodes[i]->in[k];
            if (v && v->producer) users[cnt[v->id] + fill[v->id]++] = i;
        }
    /* Kahn's algorithm with a min-heap on file position: the result is the file order
     * whenever the file is already sorted, and deterministic otherwise. */
    int *heap = xmalloc(sizeof(int) * (size_t)(n ? n : 1)), hn = 0;
    MNNode **order = ARENA_ARRAY(L->a, MNNode *, n ? n : 1);
    int done = 0;
#define PUSH(x)                                    \
    do {                                           \
        int j = hn++;                              \
        heap[j] = (x);                             \
        while (j && heap[(j - 1) / 2] > heap[j]) { \
            int t = heap[j];                       \
            heap[j] = heap[(j - 1) / 2];           \
            heap[(j - 1) / 2] = t;                 \
            j = (j - 1) / 2;                       \
        }                                          \
    } while (0)
    for (int i = 0; i < n; i++)
        if (!pending[i]) PUSH(i);
    while (hn) {
        int top = heap[0];
        heap[0] = heap[--hn];
        for (int j = 0;;) {
            int l = 2 * j + 1, r = l + 1, m = j;
            if (l < hn && heap[l] < heap[m]) m = l;
            if (r < hn && heap[r] < heap[m]) m = r;
            if (m == j) break;
            int t = heap[j];
            heap[j] = heap[m];
            heap[m] = t;
            j = m;
        }
        MNNode *nd = g->nodes[top];
        order[done++] = nd;
        for (int o = 0; o < nd->nout; o++) {
            MNValue *v = nd->out[o];
            if (!v) continue;
            for (int u = cnt[v->id]; u < cnt[v->id + 1]; u++)
                if (--pending[users[u]] == 0) PUSH(users[u]);
        }
    }
#undef PUSH
    int stuck = -1;
    for (int i = 0; i < n && stuck < 0; i++)
        if (pending[i]) stuck = i;
    free(pending);
    free(cnt);
    free(users);
    free(fill);
    free(heap);
    if (stuck >= 0) {
        MNNode *s = g->nodes[stuck];
        return fail(L, DIAG_INVALID,
                    "node '%s' (%s): the graph has a cycle through this node (%d nodes are on or behind cycles)",
                    s->name, s->op_type, n - done);
    }
    if (n) memcpy(g->nodes, order, sizeof(MNNode *) * (size_t)n);
    return true;
}

/* Every op type we cannot handle, with its count and first node, in one message. */
static bool check_supported(Loader *L) {
    MNGraph *g = L->g;
    typedef struct {
        const char *key, *first;
        int count;
    } Bad;
    Bad *bad = NULL;
    int nbad = 0, total = 0;
    for (int i = 0; i < g->nnodes; i++) {
        MNNode *n = g->nodes[i];
        const char *key = NULL;
        if (!is_default_domain(n->domain))
            key = arena_printf(L->a, "%s.%s", n->domain, n->op_type);
        else if (g->opset == 0) {
            fail(L, DIAG_INVALID, "node '%s' (%s): the model imports no opset of the default ONNX domain", n->name,
                 n->op_type);
            free(bad);
            return false;
        } else if (n->op == OP_UNSUPPORTED)
            key = n->op_type;
        else if (g->opset < mn_ops[n->op].since || g->opset > mn_ops[n->op].max)
            key = arena_printf(L->a, "%s@opset%lld (handled for %d..%d)", n->op_type, (long long)g->opset,
                               mn_ops[n->op].since, mn_ops[n->op].max);
        if (!key) continue;
        total++;
        int j = 0;
        while (j < nbad && strcmp(bad[j].key, key)) j++;
        if (j == nbad) {
            bad = xrealloc(bad, sizeof(Bad) * (size_t)(nbad + 1));
            bad[nbad++] = (Bad){key, n->name, 0};
        }
        bad[j].count++;
    }
    if (!nbad) return true;
    size_t cap = 64 + (size_t)nbad * 96, len = 0;
    char *msg = xmalloc(cap);
    for (int j = 0; j < nbad; j++)
        len += (size_t)snprintf(msg + len, cap - len, "%s%s x%d (first: '%s')", j ? ", " : "", bad[j].key, bad[j].count,
                                bad[j].first);
    fail(L, DIAG_UNSUPPORTED, "%d unsupported op%s of %d type%s: %s", total, total == 1 ? "" : "s", nbad,
         nbad == 1 ? "" : "s", msg);
    free(msg);
    free(bad);
    return false;
}

static bool load_graph(Loader *L, const Onnx__ModelProto *m) {
    MNGraph *g = L->g;
    const Onnx__GraphProto *gp = m->graph;
    g->name = arena_strdup(L->a, gp->name ? gp->name : "");
    if (gp->n_sparse_initializer) return fail(L, DIAG_UNSUPPORTED, "sparse initializers are not supported");

    for (size_t i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        if (!tp->name || !*tp->name) return fail(L, DIAG_INVALID, "initializer %zu has no name", i);
        if (ir_value_lookup(g, tp->name)) return fail(L, DIAG_INVALID, "initializer '%s' is defined twice", tp->name);
        MNValue *v = ir_value_new(g, tp->name);
        char *what = arena_printf(L->a, "initializer '%s'", tp->name);
        if (!(v->konst = load_tensor(L, tp, what))) return false;
        v->is_initializer = true;
        ir_type_set(g, &v->type, v->konst->elem, v->konst->rank, v->konst->dims);
    }
    int nin = 0;
    g->inputs = ARENA_ARRAY(L->a, MNValue *, gp->n_input + 1);
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        if (!vi->name || !*vi->name) return fail(L, DIAG_INVALID, "graph input %zu has no name", i);
        MNValue *v = ir_value_lookup(g, vi->name);
        MNType t;
        if (!load_type(L, vi, &t)) return false;
        if (v && v->is_initializer) {
            /* An input with a default: mncc compiles for the default (the initializer).
             * The declared type must still agree with it. */
            if ((t.elem && t.elem != v->type.elem) || (t.rank >= 0 && t.rank != v->type.rank))
                return fail(L, DIAG_INVALID, "graph input '%s' disagrees with its initializer's type", vi->name);
            continue;
        }
        if (v) return fail(L, DIAG_INVALID, "graph input '%s' is listed twice", vi->name);
        v = ir_value_new(g, vi->name);
        v->type = t;
        v->is_input = true;
        if (!t.elem) return fail(L, DIAG_INVALID, "graph input '%s' has no element type", vi->name);
        g->inputs[nin++] = v;
    }
    g->ninputs = nin;

    /* Nodes: create every output first so inputs may refer to later nodes (an unsorted
     * file), then resolve inputs. */
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        if (!np->op_type || !*np->op_type) return fail(L, DIAG_INVALID, "node %zu has no op_type", i);
        MNNode *n = ir_node_new(g, np->op_type, (int)np->n_input, (int)np->n_output);
        n->name = np->name && *np->name ? arena_strdup(L->a, np->name) : arena_printf(L->a, "%s_%zu", np->op_type, i);
        n->domain = arena_strdup(L->a, np->domain ? np->domain : "");
        if (!is_default_domain(n->domain)) n->op = OP_UNSUPPORTED;
        for (size_t k = 0; k < np->n_output; k++) {
            const char *nm = np->output[k];
            if (!nm || !*nm) continue;
            MNValue *v = ir_value_lookup(g, nm);
            if (v && v->producer)
                return fail(L, DIAG_INVALID, "node '%s' (%s): value '%s' is also produced by node '%s'", n->name,
                            n->op_type, nm, v->producer->name);
            if (v && (v->is_input || v->is_initializer))
                return fail(L, DIAG_INVALID, "node '%s' (%s): value '%s' is also a graph input or initializer", n->name,
                            n->op_type, nm);
            if (!v) v = ir_value_new(g, nm);
            v->producer = n;
            v->producer_out = (int)k;
            n->out[k] = v;
        }
        n->nattr = (int)np->n_attribute;
        n->attrs = ARENA_ARRAY(L->a, MNAttr, n->nattr);
        for (int k = 0; k < n->nattr; k++) {
            if (!load_attr(L, np, n->name, np->attribute[k], &n->attrs[k])) return false;
            for (int j = 0; j < k; j++)
                if (!strcmp(n->attrs[j].name, n->attrs[k].name))
                    return fail(L, DIAG_INVALID, "node '%s' (%s): attribute '%s' given twice", n->name, n->op_type,
                                n->attrs[k].name);
        }
    }
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        MNNode *n = g->nodes[i];
        for (size_t k = 0; k < np->n_input; k++) {
            const char *nm = np->input[k];
            if (!nm || !*nm) continue;
            MNValue *v = ir_value_lookup(g, nm);
            if (!v || (!v->producer && !v->is_input && !v->is_initializer))
                return fail(L, DIAG_INVALID, "node '%s' (%s): value '%s' is used but never produced", n->name,
                            n->op_type, nm);
            n->in[k] = v;
        }
    }
    g->outputs = ARENA_ARRAY(L->a, MNValue *, gp->n_output + 1);
    for (size_t i = 0; i < gp->n_output; i++) {
        const Onnx__ValueInfoProto *vi = gp->output[i];
        MNValue *v = vi->name ? ir_value_lookup(g, vi->name) : NULL;
        if (!v || (!v->producer && !v->is_input && !v->is_initializer))
            return fail(L, DIAG_INVALID, "graph output '%s' is never produced", vi->name ? vi->name : "");
        if (v->is_output) return fail(L, DIAG_INVALID, "graph output '%s' is listed twice", vi->name);
        MNType t;
        if (!load_type(L, vi, &t)) return false;
        if (v->producer) v->type = t; /* declared; checked against inference */
        v->is_output = true;
        g->outputs[g->noutputs++] = v;
    }
    if (!g->noutputs) return fail(L, DIAG_INVALID, "the graph has no outputs");
    for (size_t i = 0; i < gp->n_value_info; i++) {
        const Onnx__ValueInfoProto *vi = gp->value_info[i];
        MNValue *v = vi->name ? ir_value_lookup(g, vi->name) : NULL;
        if (!v || !v->producer) continue; /* info about an unused name: harmless */
        MNType t;
        if (!load_type(L, vi, &t)) return false;
        if (!v->is_output) v->type = t;
    }
    (void)declare;
    return topo_sort(L) && check_supported(L);
}

/* ---- a body graph's nodes, once more ---- */

/* the value body name nm stands for: bound, made by the body, or the outer graph's (*outer) */
static MNValue *body_value(const char *nm, const char *const *names, MNValue *const *vals, int n, MNGraph *g,
                           bool *outer) {
    *outer = false;
    for (int i = n - 1; i >= 0; i--)
        if (!strcmp(names[i], nm)) return vals[i];
    *outer = true;
    return ir_value_lookup(g, nm);
}

bool onnx_body_instantiate(MNGraph *g, const void *body, const char *prefix, MNValue *const *bind, int nbind,
                           MNValue **outs, int nouts, MNDiag *d) {
    const Onnx__GraphProto *gp = body;
    Loader L = {.a = g->arena, .g = g, .d = d, .path = g->file};
    if ((int)gp->n_input != nbind || (int)gp->n_output != nouts)
        return fail(&L, DIAG_INVALID, "body of %s: %zu inputs and %zu outputs, the node gives %d and takes %d", prefix,
                    gp->n_input, gp->n_output, nbind, nouts);
    if (gp->n_sparse_initializer) return fail(&L, DIAG_UNSUPPORTED, "body of %s: sparse initializers", prefix);
    int cap = nbind + (int)gp->n_initializer + 1;
    for (size_t i = 0; i < gp->n_node; i++) cap += (int)gp->node[i]->n_output;
    const char **names = ARENA_ARRAY(g->arena, const char *, cap);
    MNValue **vals = ARENA_ARRAY(g->arena, MNValue *, cap);
    int n = 0;
    for (int k = 0; k < nbind; k++) names[n] = gp->input[k]->name ? gp->input[k]->name : "", vals[n++] = bind[k];
    for (size_t i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        MNValue *v = ir_value_new(g, arena_printf(g->arena, "%s%s", prefix, tp->name ? tp->name : "init"));
        if (!(v->konst = load_tensor(&L, tp, arena_printf(g->arena, "body of %s: initializer", prefix)))) return false;
        ir_type_set(g, &v->type, v->konst->elem, v->konst->rank, v->konst->dims);
        names[n] = tp->name ? tp->name : "", vals[n++] = v;
    }
    /* the body's nodes in its order (ONNX's: every input made before it is read) */
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        if (!np->op_type || !*np->op_type)
            return fail(&L, DIAG_INVALID, "body of %s: node %zu has no op_type", prefix, i);
        MNNode *nd = ir_node_new(g, np->op_type, (int)np->n_input, (int)np->n_output);
        nd->name = arena_printf(g->arena, "%s%s", prefix,
                                np->name && *np->name ? np->name : arena_printf(g->arena, "%s_%zu", np->op_type, i));
        nd->domain = arena_strdup(g->arena, np->domain ? np->domain : "");
        if (!is_default_domain(nd->domain) || nd->op == OP_UNSUPPORTED)
            return fail(&L, DIAG_UNSUPPORTED, "node '%s' (%s%s%s): not supported", nd->name, nd->domain,
                        *nd->domain ? "." : "", np->op_type);
        for (size_t k = 0; k < np->n_input; k++) {
            const char *nm = np->input[k];
            if (!nm || !*nm) continue;
            bool outer;
            MNValue *v = nd->in[k] = body_value(nm, names, vals, n, g, &outer);
            if (!v)
                return fail(&L, DIAG_INVALID, "node '%s' (%s): value '%s' is used but never produced", nd->name,
                            np->op_type, nm);
            if (outer && v->producer && !v->inferred) /* (a file out of order) */
                return fail(&L, DIAG_INVALID, "node '%s' (%s): value '%s' is made after the loop that reads it",
                            nd->name, np->op_type, nm);
        }
        for (size_t k = 0; k < np->n_output; k++) {
            const char *nm = np->output[k];
            if (!nm || !*nm) continue;
            MNValue *v = ir_value_new(g, arena_printf(g->arena, "%s%s", prefix, nm));
            v->producer = nd;
            v->producer_out = (int)k;
            nd->out[k] = v;
            names[n] = nm, vals[n++] = v;
        }
        nd->nattr = (int)np->n_attribute;
        nd->attrs = ARENA_ARRAY(g->arena, MNAttr, nd->nattr);
        for (int k = 0; k < nd->nattr; k++)
            if (!load_attr(&L, np, nd->name, np->attribute[k], &nd->attrs[k])) return false;
    }
    for (int k = 0; k < nouts; k++) {
        const char *nm = gp->output[k]->name;
        bool outer;
        if (!nm || !(outs[k] = body_value(nm, names, vals, n, g, &outer)))
            return fail(&L, DIAG_INVALID, "body of %s: output '%s' is never produced", prefix, nm ? nm : "");
    }
    return true;
}

/* ---- nesting depth, before protobuf-c sees the bytes ----
 *
 * protobuf-c unpacks nested messages by recursion, so a file of a few MB that nests
 * graphs in node attributes (or types in sequence types) a million levels deep would
 * overflow the stack. The messages that can nest without bound are walked here first,
 * without recursion, and a file nested deeper than MAX_NESTING is refused. Only the
 * fields that lead to one of these messages are followed; everything else is skipped
 * by its wire length. */
enum { MAX_NESTING = 64 };
typedef enum {
    PB_MODEL,
    PB_GRAPH,
    PB_NODE,
    PB_ATTR,
    PB_VALUEINFO,
    PB_TYPE,
    PB_TYPE_ELEM,
    PB_TYPE_MAP,
    PB_TRAINING,
    PB_FUNCTION,
    PB_NONE
} PbMsg;

/* the message field f of a t holds, PB_NONE when it is not one of the nesting ones */
static PbMsg pb_child(PbMsg t, uint64_t f) {
    switch (t) {
    case PB_MODEL: return f == 7 ? PB_GRAPH : f == 20 ? PB_TRAINING : f == 25 ? PB_FUNCTION : PB_NONE;
    case PB_GRAPH: return f == 1 ? PB_NODE : f == 11 || f == 12 || f == 13 ? PB_VALUEINFO : PB_NONE;
    case PB_NODE: return f == 5 ? PB_ATTR : PB_NONE;
    case PB_ATTR: return f == 6 || f == 11 ? PB_GRAPH : f == 14 || f == 15 ? PB_TYPE : PB_NONE;
    case PB_VALUEINFO: return f == 2 ? PB_TYPE : PB_NONE;
    case PB_TYPE: return f == 4 || f == 9 ? PB_TYPE_ELEM : f == 5 ? PB_TYPE_MAP : PB_NONE; /* sequence, optional; map */
    case PB_TYPE_ELEM: return f == 1 ? PB_TYPE : PB_NONE;
    case PB_TYPE_MAP: return f == 2 ? PB_TYPE : PB_NONE;
    case PB_TRAINING: return f == 1 || f == 2 ? PB_GRAPH : PB_NONE;
    case PB_FUNCTION: return f == 7 ? PB_NODE : PB_NONE;
    default: return PB_NONE;
    }
}

static bool pb_varint(const uint8_t *b, size_t end, size_t *at, uint64_t *v) {
    *v = 0;
    for (int sh = 0; sh < 64; sh += 7) {
        if (*at >= end) return false;
        uint8_t c = b[(*at)++];
        *v |= (uint64_t)(c & 0x7f) << sh;
        if (!(c & 0x80)) return true;
    }
    return false;
}

/* the deepest nesting of the unbounded messages, or -1 when it passes MAX_NESTING;
 * malformed bytes stop the walk (protobuf-c then says what is wrong) */
static int pb_depth(const uint8_t *b, size_t len) {
    struct {
        PbMsg t;
        size_t end;
    } st[MAX_NESTING + 1];
    int sp = 0, deepest = 0;
    st[0].t = PB_MODEL;
    st[0].end = len;
    size_t at = 0;
    while (sp >= 0) {
        if (at >= st[sp].end) {
            at = st[sp].end;
            sp--;
            continue;
        }
        uint64_t key, v;
        if (!pb_varint(b, st[sp].end, &at, &key)) return deepest;
        switch (key & 7) {
        case 0:
            if (!pb_varint(b, st[sp].end, &at, &v)) return deepest;
            break;
        case 1: at += 8; break;
        case 5: at += 4; break;
        case 2: {
            if (!pb_varint(b, st[sp].end, &at, &v) || v > st[sp].end - at) return deepest;
            PbMsg c = pb_child(st[sp].t, key >> 3);
            if (c == PB_NONE) {
                at += v;
                break;
            }
            if (sp == MAX_NESTING) return -1;
            sp++;
            st[sp].t = c;
            st[sp].end = at + v;
            if (sp > deepest) deepest = sp;
            break;
        }
        default: return deepest; /* groups (3, 4) are not in ONNX's messages */
        }
    }
    return deepest;
}

MNGraph *onnx_load_buffer(Arena *a, const char *path, const uint8_t *buf, size_t len, MNDiag *d) {
    Loader L = {.a = a, .d = d, .path = path};
    const char *slash = strrchr(path, '/');
    L.dir = slash ? arena_strndup(a, path, (size_t)(slash - path)) : arena_strdup(a, ".");
    if (slash == path) L.dir = arena_strdup(a, "/");
    if (len == 0) {
        fail(&L, DIAG_INVALID, "file is empty, not an ONNX model");
        return NULL;
    }
    if (pb_depth(buf, len) < 0) {
        fail(&L, DIAG_RESOURCE,
             "messages nested more than %d deep (graphs in node attributes, or types in sequence types): refused",
             MAX_NESTING);
        return NULL;
    }
    ProtobufCAllocator alloc = {pb_alloc, pb_free, a};
    Onnx__ModelProto *m = onnx__model_proto__unpack(&alloc, len, buf);
    if (!m) {
        if (arena_over_limit(a))
            fail(&L, DIAG_RESOURCE, "model needs more memory than the memory limit allows (memory_limit_mb)");
        else
            fail(&L, DIAG_INVALID, "not a valid ONNX model (protobuf decoding failed: truncated or not a ModelProto)");
        return NULL;
    }
    if (!m->graph) {
        fail(&L, DIAG_INVALID, "not an ONNX model: it has no graph");
        return NULL;
    }
    if (!m->has_ir_version || m->ir_version < 1) {
        fail(&L, DIAG_INVALID, "not an ONNX model: no ir_version");
        return NULL;
    }
    MNGraph *g = ir_graph_new(a, path);
    L.g = g;
    g->ir_version = m->ir_version;
    g->producer_name = arena_strdup(a, m->producer_name ? m->producer_name : "");
    g->opset = -1;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *os = m->opset_import[i];
        if (is_default_domain(os->domain) && os->has_version) g->opset = os->version;
    }
    /* IR versions before 3 predate opset imports; a later model that imports only
     * other domains gets opset 0, and any default-domain node in it is an error. */
    if (g->opset < 0) g->opset = m->ir_version >= 3 ? 0 : 1;
    if (!load_graph(&L, m)) return NULL;
    return g;
}

MNGraph *onnx_load_file(Arena *a, const char *path, MNDiag *d) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        diag_error(d, DIAG_IO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        diag_error(d, DIAG_IO, "%s: not a regular file", path);
        return NULL;
    }
    size_t len = (size_t)st.st_size;
    if (len >=
        ((size_t)1 << 20)) { /* a large model is read through the page cache in place: unpacking copies what it keeps */
        void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fileno(f), 0);
        if (map != MAP_FAILED) {
            fclose(f);
            MNGraph *g = onnx_load_buffer(a, path, map, len, d);
            munmap(map, len);
            return g;
        }
    }
    uint8_t *buf = arena_try_alloc(a, len ? len : 1);
    if (!buf) {
        fclose(f);
        diag_error(d, DIAG_RESOURCE, "%s: file of %zu bytes exceeds the memory limit", path, len);
        return NULL;
    }
    size_t got = fread(buf, 1, len, f);
    fclose(f);
    if (got != len) {
        diag_error(d, DIAG_IO, "%s: read failed", path);
        return NULL;
    }
    return onnx_load_buffer(a, path, buf, len, d);
}

MNTensor *onnx_load_tensor_file(Arena *a, const char *path, MNDiag *d) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        diag_error(d, DIAG_IO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    fseeko(f, 0, SEEK_END);
    off_t len = ftello(f);
    fseeko(f, 0, SEEK_SET);
    uint8_t *buf = len > 0 ? arena_try_alloc(a, (size_t)len) : NULL;
    bool ok = buf && fread(buf, 1, (size_t)len, f) == (size_t)len;
    fclose(f);
    if (!ok) {
        diag_error(d, DIAG_IO, "%s: cannot read", path);
        return NULL;
    }
    ProtobufCAllocator alloc = {pb_alloc, pb_free, a};
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(&alloc, (size_t)len, buf);
    if (!tp) {
        diag_error(d, DIAG_INVALID, "%s: not a TensorProto", path);
        return NULL;
    }
    const char *slash = strrchr(path, '/');
    Loader L = {.a = a,
                .d = d,
                .path = path,
                .dir = slash ? arena_strndup(a, path, (size_t)(slash - path)) : arena_strdup(a, ".")};
    return load_tensor(&L, tp, "tensor");
}

bool onnx_tensor_to_pb(const MNTensor *t, const char *name, MNBuf *out) {
    Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
    tp.n_dims = (size_t)t->rank;
    tp.dims = t->dims;
    tp.has_data_type = 1;
    tp.data_type = t->elem;
    tp.name = (char *)(name ? name : "");
    tp.has_raw_data = 1;
    tp.raw_data.len = (size_t)t->numel * (size_t)onnx_type_size(t->elem);
    tp.raw_data.data = t->data;
    size_t n = onnx__tensor_proto__get_packed_size(&tp);
    uint8_t *b = xmalloc(n ? n : 1);
    onnx__tensor_proto__pack(&tp, b);
    out->len = 0;
    buf_append(out, b, n);
    free(b);
    return true;
}

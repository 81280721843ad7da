/* Common subexpression elimination: two nodes of one op, with the same attributes, reading
 * the same values compute the same outputs, so the later one's readers read the earlier
 * one's outputs and the later one goes. Small constants (64 elements at most) count as the
 * same value when their types and contents are: exporters write a scalar such as 0.5 or
 * sqrt(d) once for every use, and the nodes reading them then match too. The constants
 * themselves stay apart: one read by nodes that lay it out differently would need a switch
 * of a value that lives in DRAM. Nodes are taken
 * in graph order, each reading what the ones before it were merged into, so a chain of
 * duplicates (a repeated LayerNorm's ReduceMean, Sub, Pow ...) merges node by node. It runs
 * after constant folding, whose static shapes have made the exporters' shape arithmetic
 * constants. Left as they are: nodes with an attribute ir_attrs_key cannot spell (a graph,
 * a tensor) and nodes one of whose outputs is a graph output (its name is the model's).
 * Every op mncc accepts is deterministic (there is no random op), so equal inputs mean
 * equal outputs. */
#include "plan.h"
#include "ops.h"
#include <stdlib.h>
#include <string.h>

enum { KONST_MAX = 64 };

typedef struct {
    char **key;
    void **val;
    size_t cap, n;
} Table;

static uint64_t hash(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* the value stored under key (len bytes), or NULL after storing v there */
static void *find_or_put(Table *t, Arena *a, const char *key, size_t len, void *v) {
    if (2 * (t->n + 1) > t->cap) {
        Table g = {xcalloc(t->cap ? 2 * t->cap : 256, sizeof(char *)),
                   xcalloc(t->cap ? 2 * t->cap : 256, sizeof(void *)), t->cap ? 2 * t->cap : 256, 0};
        for (size_t i = 0; i < t->cap; i++)
            if (t->key[i]) {
                size_t j = hash(t->key[i] + sizeof(size_t), *(size_t *)t->key[i]) & (g.cap - 1);
                while (g.key[j]) j = (j + 1) & (g.cap - 1);
                g.key[j] = t->key[i], g.val[j] = t->val[i], g.n++;
            }
        free(t->key), free(t->val);
        *t = g;
    }
    size_t j = hash(key, len) & (t->cap - 1);
    for (; t->key[j]; j = (j + 1) & (t->cap - 1))
        if (*(size_t *)t->key[j] == len && !memcmp(t->key[j] + sizeof(size_t), key, len)) return t->val[j];
    char *k = arena_alloc(a, sizeof(size_t) + len); /* the length, then the bytes */
    memcpy(k, &len, sizeof(size_t));
    memcpy(k + sizeof(size_t), key, len);
    t->key[j] = k, t->val[j] = v, t->n++;
    return NULL;
}

/* the first constant of v's type and contents (v itself when it is the first): what v counts as in a node's key */
static MNValue *same_konst(Table *t, Arena *a, MNValue *v) {
    const MNTensor *k = v->konst;
    int sz = onnx_type_size(k->elem);
    if (k->numel > KONST_MAX || sz <= 0 || v->is_output || v->is_input) return v; /* (an input may be fed) */
    MNBuf b = {0};
    buf_printf(&b, "%d %d", (int)k->elem, k->rank);
    for (int d = 0; d < k->rank; d++) buf_printf(&b, " %lld", (long long)k->dims[d]);
    buf_printf(&b, ":");
    buf_append(&b, k->data, (size_t)k->numel * (size_t)sz);
    MNValue *first = find_or_put(t, a, b.data, b.len, v);
    buf_free(&b);
    return first ? first : v;
}

bool plan_cse(MNCompile *c) {
    MNGraph *g = c->g;
    Arena *a = g->arena;
    MNValue **rep = xcalloc((size_t)g->nvalues + 1, sizeof(MNValue *)); /* what a merged value is read as */
    Table nodes = {0}, konsts = {0};
    int merged = 0;
    MNBuf key = {0};
    for (int i = 0; i < g->nnodes; i++) {
        MNNode *n = g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->nin; k++)
            if (n->in[k] && rep[n->in[k]->id]) n->in[k] = rep[n->in[k]->id];
        bool outputs = n->nout > 0;
        for (int k = 0; k < n->nout; k++) outputs &= !(n->out[k] && n->out[k]->is_output);
        key.len = 0;
        buf_printf(&key, "%s\n%s\n%d %d\n", n->op_type, n->domain ? n->domain : "", n->nin, n->nout);
        for (int k = 0; k < n->nin; k++) {
            MNValue *v = n->in[k];
            if (v && v->konst && !v->producer) v = same_konst(&konsts, a, v);
            buf_printf(&key, "%d ", v ? v->id : -1);
        }
        for (int k = 0; k < n->nout; k++) buf_printf(&key, "%c", n->out[k] ? 'o' : '-'); /* the outputs asked for */
        buf_printf(&key, "\n");
        if (!outputs || !ir_attrs_key(&key, n)) continue;
        MNNode *m = find_or_put(&nodes, a, key.data, key.len, n);
        if (!m) continue;
        for (int k = 0; k < n->nout; k++)
            if (n->out[k]) rep[n->out[k]->id] = m->out[k];
        n->dead = true;
        merged++;
    }
    buf_free(&key);
    free(nodes.key), free(nodes.val), free(konsts.key), free(konsts.val), free(rep);
    ir_compact(g);
    mn_figure(c, "cse_nodes_merged", merged);
    if (merged) mn_log(c, 0, "common subexpressions: %d nodes merged into an equal one", merged);
    return true;
}

/* Code Emit's memo (memo.h): an open-addressing table of string keys. */
#include "memo.h"
#include "emit_impl.h"
#include "diag.h"
#include "dtypes.h"
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t h;
    char *key;
    void *val;
    size_t len;
} Ent;

struct EmMemo {
    Ent *e;
    size_t cap, n;
    pthread_mutex_t lock;
};

static uint64_t hash(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

EmMemo *memo_new(void) {
    EmMemo *m = xcalloc(1, sizeof *m);
    m->cap = 64;
    m->e = xcalloc(m->cap, sizeof(Ent));
    if (pthread_mutex_init(&m->lock, NULL)) die("pthread_mutex_init failed");
    return m;
}

void memo_free(EmMemo *m) {
    if (!m) return;
    for (size_t i = 0; i < m->cap; i++) {
        free(m->e[i].key);
        free(m->e[i].val);
    }
    free(m->e);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

static Ent *slot(const EmMemo *m, const char *key, uint64_t h) {
    for (size_t j = h & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
        Ent *x = &m->e[j];
        if (!x->key || (x->h == h && !strcmp(x->key, key))) return x;
    }
}

const void *memo_get(EmMemo *m, const char *key, size_t *len) {
    uint64_t h = hash(key);
    pthread_mutex_lock(&m->lock);
    Ent *x = slot(m, key, h);
    const void *v = x->key ? x->val : NULL;
    if (v && len) *len = x->len;
    pthread_mutex_unlock(&m->lock);
    return v;
}

void memo_put(EmMemo *m, const char *key, const void *val, size_t len) {
    uint64_t h = hash(key);
    pthread_mutex_lock(&m->lock);
    if (2 * (m->n + 1) > m->cap) {
        EmMemo big = {xcalloc(2 * m->cap, sizeof(Ent)), 2 * m->cap, m->n};
        for (size_t i = 0; i < m->cap; i++)
            if (m->e[i].key) *slot(&big, m->e[i].key, m->e[i].h) = m->e[i];
        free(m->e);
        m->e = big.e;
        m->cap = big.cap;
    }
    Ent *x = slot(m, key, h);
    if (!x->key) { /* (a key put again keeps its first value: see memo.h) */
        x->key = xstrdup(key);
        x->h = h;
        x->val = xmalloc(len ? len : 1);
        memcpy(x->val, val, len);
        x->len = len;
        m->n++;
    }
    pthread_mutex_unlock(&m->lock);
}

void emit_value_key(MNBuf *k, const MNValue *v) {
    buf_printf(k, "|%s|%lld|%d|%d|%d", v->layout ? v->layout : "-", (long long)v->num_lw, emit_in_lm(v), v->dtype,
               v->type.rank);
    for (int d = 0; d < v->type.rank; d++) buf_printf(k, ",%lld", (long long)v->type.dims[d]);
}

bool emit_node_key(MNBuf *k, const MNNode *n, bool bytes) {
    buf_printf(k, "node %s::%s|", n->domain, n->op_type);
    if (!ir_attrs_key(k, n)) return false;
    for (int side = 0; side < 2; side++)
        for (int i = 0; i < (side ? n->nout : n->nin); i++) {
            const MNValue *v = side ? n->out[i] : n->in[i];
            buf_printf(k, "\n%s%d", side ? "out" : "in", i);
            if (!v) continue;
            emit_value_key(k, v);
            const MNTensor *t = emit_konst_of(v);
            if (!t) continue;
            if (!bytes) {
                buf_printf(k, " k%d", t->elem);
                continue;
            }
            size_t nb = (size_t)t->numel * (size_t)onnx_type_size(t->elem);
            if (nb > 4096) return false;
            buf_printf(k, " k%d:", t->elem);
            buf_reserve(k, 2 * nb + 1);
            for (size_t b = 0; b < nb; b++) {
                uint8_t x = ((const uint8_t *)t->data)[b];
                k->data[k->len++] = "0123456789abcdef"[x >> 4];
                k->data[k->len++] = "0123456789abcdef"[x & 15];
            }
            k->data[k->len] = 0;
        }
    return true;
}

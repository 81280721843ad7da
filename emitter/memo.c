/* Code Emit's memo (memo.h): an open-addressing table of string keys. */
#include "memo.h"
#include "emit_impl.h"
#include "diag.h"
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
    return m;
}

void memo_free(EmMemo *m) {
    if (!m) return;
    for (size_t i = 0; i < m->cap; i++) {
        free(m->e[i].key);
        free(m->e[i].val);
    }
    free(m->e);
    free(m);
}

static Ent *slot(const EmMemo *m, const char *key, uint64_t h) {
    for (size_t j = h & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
        Ent *x = &m->e[j];
        if (!x->key || (x->h == h && !strcmp(x->key, key))) return x;
    }
}

const void *memo_get(const EmMemo *m, const char *key, size_t *len) {
    Ent *x = slot(m, key, hash(key));
    if (!x->key) return NULL;
    if (len) *len = x->len;
    return x->val;
}

void memo_put(EmMemo *m, const char *key, const void *val, size_t len) {
    if (2 * (m->n + 1) > m->cap) {
        EmMemo big = {xcalloc(2 * m->cap, sizeof(Ent)), 2 * m->cap, m->n};
        for (size_t i = 0; i < m->cap; i++)
            if (m->e[i].key) *slot(&big, m->e[i].key, m->e[i].h) = m->e[i];
        free(m->e);
        *m = big;
    }
    uint64_t h = hash(key);
    Ent *x = slot(m, key, h);
    if (x->key)
        free(x->val);
    else {
        x->key = xstrdup(key);
        x->h = h;
        m->n++;
    }
    x->val = xmalloc(len ? len : 1);
    memcpy(x->val, val, len);
    x->len = len;
}

void emit_value_key(MNBuf *k, const MNValue *v) {
    buf_printf(k, "|%s|%lld|%d|%d|%d", v->layout ? v->layout : "-", (long long)v->num_lw, emit_in_lm(v), v->dtype,
               v->type.rank);
    for (int d = 0; d < v->type.rank; d++) buf_printf(k, ",%lld", (long long)v->type.dims[d]);
}

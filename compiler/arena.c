#include "arena.h"
#include "diag.h"
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Blocks grow geometrically so that a 100k-node graph costs a few dozen mallocs. */
typedef struct Block {
    struct Block *next;
    size_t cap, used;
    _Alignas(16) unsigned char data[];
} Block;

struct Arena {
    Block *head;
    size_t total, limit, next_cap;
    bool over;
};

Arena *arena_new(size_t limit) {
    Arena *a = xcalloc(1, sizeof *a);
    a->limit = limit;
    a->next_cap = 64 * 1024;
    return a;
}

void arena_free(Arena *a) {
    if (!a) return;
    for (Block *b = a->head, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    free(a);
}

void *arena_try_alloc(Arena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    if (n == 0) n = 16;
    if (a->limit && (n > a->limit || a->total > a->limit - n)) {
        a->over = true;
        return NULL;
    }
    Block *b = a->head;
    if (!b || b->cap - b->used < n) {
        size_t cap = a->next_cap;
        if (cap < n) cap = n;
        if (a->next_cap < ((size_t)64 << 20)) a->next_cap *= 2;
        b = malloc(sizeof(Block) + cap);
        if (!b) {
            a->over = true;
            return NULL;
        }
        b->cap = cap;
        b->used = 0;
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    a->total += n;
    memset(p, 0, n);
    return p;
}

void *arena_alloc(Arena *a, size_t n) {
    void *p = arena_try_alloc(a, n);
    if (!p) {
        /* The loader checks sizes against the limit before large allocations; reaching
         * this means a small allocation hit the limit, which callers see through
         * arena_over_limit(). Hand out a scratch block so they can unwind cleanly. */
        Block *b = malloc(sizeof(Block) + ((n + 15) & ~(size_t)15) + 16);
        if (!b) die("out of memory allocating %zu bytes", n);
        b->cap = n;
        b->used = n;
        b->next = a->head;
        a->head = b;
        memset(b->data, 0, n);
        p = b->data;
    }
    return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
    char *p = arena_alloc(a, n + 1);
    if (n) memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s ? s : "", strlen(s ? s : "")); }

char *arena_printf(Arena *a, const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) die("vsnprintf failed");
    char *p = arena_alloc(a, (size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

size_t arena_used(const Arena *a) { return a->total; }
bool arena_over_limit(const Arena *a) { return a->over; }

void *arena_grow(Arena *a, void *arr, int n, int *cap, size_t elem) {
    if (n < *cap) return arr;
    int nc = *cap ? *cap * 2 : 256;
    void *na = arena_alloc(a, elem * (size_t)nc);
    if (n) memcpy(na, arr, elem * (size_t)n);
    *cap = nc;
    return na;
}

#include "arena.h"
#include "buf.h"
#include "diag.h"
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Blocks grow geometrically so that a 100k-node graph costs a few dozen mallocs. A block
 * of a megabyte or more is mapped from the kernel, whose fresh pages are zero: an
 * allocation there needs no clearing (a block's memory is handed out once), which saved
 * writing every byte twice (the clearing, then the caller's data). Such a block asks for
 * huge pages (where the kernel gives them on request): its first touch then faults once
 * per 2 MB, not per 4 KB, and a large model's weights fill gigabytes of blocks (vit_b_16:
 * 95,000 faults fewer, 1.4 s less time in the kernel). */
typedef struct Block {
    struct Block *next;
    size_t cap, used, mapped; /* mapped: the mapping's length, 0 for malloc'd */
    _Alignas(16) unsigned char data[];
} Block;

/* Under AddressSanitizer blocks stay malloc'd: LeakSanitizer does not look for pointers
 * in mappings of our own, and would call what only the arena points to a leak. */
#if defined(__SANITIZE_ADDRESS__)
#define ARENA_MAP 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_MAP 0
#endif
#endif
#ifndef ARENA_MAP
#define ARENA_MAP 1
#endif
enum { MAP_MIN = 1 << 20 };

struct Arena {
    Block *head;
    size_t total, limit, next_cap, mapped;
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
        if (b->mapped)
            munmap(b, b->mapped);
        else
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
        size_t len = sizeof(Block) + cap, mapped = 0;
        b = NULL;
        if (ARENA_MAP && cap >= MAP_MIN) {
            void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m != MAP_FAILED) {
                b = m;
                mapped = len;
                (void)madvise(m, len, MADV_HUGEPAGE);
            }
        }
        if (!b) b = malloc(len);
        if (!b) {
            a->over = true;
            return NULL;
        }
        b->cap = cap;
        b->used = 0;
        b->mapped = mapped;
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    a->total += n;
    if (!b->mapped)
        memset(p, 0, n);
    else
        a->mapped += n; /* a mapping's untouched rest takes no memory: only what is handed out counts */
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
        b->mapped = 0;
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
    MNBuf b = {0};
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(&b, fmt, ap);
    va_end(ap);
    char *p = arena_strndup(a, b.data ? b.data : "", b.len);
    buf_free(&b);
    return p;
}

size_t arena_used(const Arena *a) { return a->total; }
size_t arena_mapped(const Arena *a) { return a->mapped; }
bool arena_over_limit(const Arena *a) { return a->over; }

void *arena_grow(Arena *a, void *arr, int n, int *cap, size_t elem) {
    if (n < *cap) return arr;
    int nc = *cap ? *cap * 2 : 256;
    void *na = arena_alloc(a, elem * (size_t)nc);
    if (n) memcpy(na, arr, elem * (size_t)n);
    *cap = nc;
    return na;
}

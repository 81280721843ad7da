/* One arena per compilation: every IR object, name and tensor of a compile is carved
 * from it and released by one arena_free(). A byte limit (option arena_limit) turns
 * runaway allocation on hostile models into a clean error instead of an OOM kill. */
#ifndef MN_ARENA_H
#define MN_ARENA_H
#include <stddef.h>
#include <stdbool.h>

typedef struct Arena Arena;

Arena *arena_new(size_t limit_bytes); /* 0 = no limit */
void arena_free(Arena *a);
/* Zeroed memory; NULL only when the limit would be exceeded (never on success paths
 * that cannot fail: use arena_alloc_or_die there). */
void *arena_try_alloc(Arena *a, size_t n);
void *arena_alloc(Arena *a, size_t n);
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
size_t arena_used(const Arena *a);
/* bytes handed out from blocks mapped from the kernel (the heap's figures do not count
 * them; a block's untouched rest costs no memory) */
size_t arena_mapped(const Arena *a);
bool arena_over_limit(const Arena *a);

/* A growing array in the arena: room for element n of arr (*cap allocated), moved to
 * twice the room (at least 256) when full; the old block stays with the arena. */
void *arena_grow(Arena *a, void *arr, int n, int *cap, size_t elem);
#define ARENA_PUSH(a, arr, n, cap, x) ((arr) = arena_grow((a), (arr), (n), &(cap), sizeof *(arr)), (arr)[(n)++] = (x))

#define ARENA_NEW(a, T) ((T *)arena_alloc((a), sizeof(T)))
#define ARENA_ARRAY(a, T, n) ((T *)arena_alloc((a), sizeof(T) * (size_t)(n)))
#endif

/* Code Emit's memos: results of the per-element checks (an operand's element map, a
 * product's matrix plan, a row move's map) by what they depend on (layouts, shapes,
 * attributes), so that a thousand alike nodes walk their elements once. Keys are
 * strings; values are copied blobs.
 *
 * Two live in a compile. MNCompile.check_memo holds results that are plain data and
 * depend on nothing but their key: it lasts the whole compile, so that Node Simulation
 * (on its threads), the schedule's scratch needs and Code Emit check a node's movement
 * once between them, where each did it again (a densenet's elementwise operand maps
 * were three quarters of its compile). MNCompile.emit_memo holds what Code Emit's own
 * walk makes (index tables in its graph, constants by address) and lives while it runs.
 *
 * Every call takes the memo's lock. A key is put once: a second put of a key (two threads
 * that checked alike nodes at once) keeps the first value, which is the same, so that a
 * value memo_get returned stays where it is until memo_free. */
#ifndef MN_MEMO_H
#define MN_MEMO_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct EmMemo EmMemo;
EmMemo *memo_new(void);
void memo_free(EmMemo *m);
/* the value stored under key (its length in *len), or NULL; it stays valid until memo_free */
const void *memo_get(EmMemo *m, const char *key, size_t *len);
void memo_put(EmMemo *m, const char *key, const void *val, size_t len);
/* a stored record read back in order: n bytes at *p into dst (false: fewer left before end) */
static inline bool memo_take(const uint8_t **p, const uint8_t *end, void *dst, size_t n) {
    if ((size_t)(end - *p) < n) return false;
    memcpy(dst, *p, n);
    *p += n;
    return true;
}
#endif

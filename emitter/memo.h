/* Code Emit's memo: results of the per-element checks (an operand's element map, a
 * product's matrix plan) by what they depend on (layouts and shapes), so that a
 * thousand alike nodes walk their elements once. Keys are strings; values are copied
 * blobs. Only Code Emit's own walk uses one (MNCompile.emit_memo, NULL elsewhere: Node
 * Simulation's threads do without). */
#ifndef MN_MEMO_H
#define MN_MEMO_H
#include <stdbool.h>
#include <stddef.h>

typedef struct EmMemo EmMemo;
EmMemo *memo_new(void);
void memo_free(EmMemo *m);
/* the value stored under key (its length in *len), or NULL */
const void *memo_get(const EmMemo *m, const char *key, size_t *len);
void memo_put(EmMemo *m, const char *key, const void *val, size_t len);
#endif

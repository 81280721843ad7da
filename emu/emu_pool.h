/* mnemu's worker threads: the per-PE (per-MAB) loops of one instruction split over them.
 * Every PE's result depends on its own state alone, so the split changes nothing a
 * program computes: outputs, cycles and every figure are the same for any thread count. */
#ifndef MN_EMU_POOL_H
#define MN_EMU_POOL_H
#include <stddef.h>

typedef struct EmuPool EmuPool;
/* work on the items [lo, hi) */
typedef void (*EmuParFn)(void *ctx, size_t lo, size_t hi);

/* n threads in all (the caller's one of them); NULL for n < 2 */
EmuPool *emu_pool_new(int n);
void emu_pool_free(EmuPool *p);
/* fn over [0, n) in one contiguous part a thread, parts multiples of align; returns when all are done. A NULL
 * pool, or n too small to share, runs fn on the calling thread. */
void emu_pool_run(EmuPool *p, size_t n, size_t align, EmuParFn fn, void *ctx);
/* the threads of a pool (1 for NULL) */
int emu_pool_threads(const EmuPool *p);
#endif

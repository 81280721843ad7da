/* mnemu's worker threads (emu_pool.h). A run cuts the items into a few parts per thread,
 * which the threads (the caller's among them) claim one at a time: a thread the machine
 * runs slowly (another process on its core) takes fewer, instead of holding up the rest.
 * Workers wait for the next run on a generation counter, spinning briefly first
 * (consecutive instructions follow within microseconds, and a sleep and wake costs as much
 * as a small instruction's work), then on a condition variable. Where the machine has no
 * free core for them (other processes, or more threads than cores), a worker that is not
 * running holds up the part it claimed: runs that wait longer than they work send the
 * next ones to the calling thread alone for a while. */
#include "emu_pool.h"
#include "diag.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

enum { SPIN = 4000, MIN_PART = 64, PARTS_PER_THREAD = 16, SLOW_RUNS = 8, SERIAL_RUNS = 2000 };

struct EmuPool {
    int n;
    pthread_t *th;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    atomic_uint gen; /* runs started */
    atomic_int left; /* workers still on the current run */
    atomic_size_t next; /* the next part to claim */
    bool quit;
    /* the current run */
    EmuParFn fn;
    void *ctx;
    size_t items, align, parts;
    int slow, serial; /* runs in a row whose wait outlasted the work; runs left to do alone (emu_pool_run) */
};

/* claim parts until none is left */
static void work(EmuPool *p) {
    size_t units = (p->items + p->align - 1) / p->align, per = (units + p->parts - 1) / p->parts;
    for (size_t k; (k = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed)) < p->parts;) {
        size_t lo = k * per * p->align, hi = lo + per * p->align;
        if (hi > p->items) hi = p->items;
        if (lo < hi) p->fn(p->ctx, lo, hi);
    }
}

static void *worker(void *arg) {
    EmuPool *p = arg;
    unsigned seen = 0;
    for (;;) {
        for (int s = 0; s < SPIN && atomic_load_explicit(&p->gen, memory_order_acquire) == seen; s++) sched_yield();
        if (atomic_load_explicit(&p->gen, memory_order_acquire) == seen) {
            pthread_mutex_lock(&p->mu);
            while (atomic_load(&p->gen) == seen && !p->quit) pthread_cond_wait(&p->go, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        if (p->quit) return NULL;
        seen = atomic_load_explicit(&p->gen, memory_order_acquire);
        work(p);
        if (atomic_fetch_sub_explicit(&p->left, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
}

EmuPool *emu_pool_new(int n) {
    if (n < 2) return NULL;
    EmuPool *p = xcalloc(1, sizeof *p);
    p->n = n;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    p->th = xcalloc((size_t)n, sizeof *p->th);
    for (int k = 1; k < n; k++) {
        if (pthread_create(&p->th[k], NULL, worker, p)) { /* fewer threads: the parts still cover it all */
            p->n = k;
            break;
        }
    }
    return p;
}

void emu_pool_free(EmuPool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->quit = true;
    atomic_fetch_add(&p->gen, 1);
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (int k = 1; k < p->n; k++) pthread_join(p->th[k], NULL);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    free(p->th);
    free(p);
}

int emu_pool_threads(const EmuPool *p) { return p ? p->n : 1; }

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void emu_pool_run(EmuPool *p, size_t n, size_t align, EmuParFn fn, void *ctx) {
    if (!p || n < 2 * MIN_PART || n <= align || p->serial > 0) {
        if (p && p->serial > 0) p->serial--;
        if (n) fn(ctx, 0, n);
        return;
    }
    double t0 = now();
    p->fn = fn, p->ctx = ctx, p->items = n, p->align = align ? align : 1;
    p->parts = (size_t)p->n * PARTS_PER_THREAD;
    atomic_store(&p->next, 0);
    atomic_store(&p->left, p->n - 1);
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add_explicit(&p->gen, 1, memory_order_release);
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    work(p);
    double t1 = now();
    for (int s = 0; s < SPIN && atomic_load_explicit(&p->left, memory_order_acquire) > 0; s++) sched_yield();
    pthread_mutex_lock(&p->mu);
    while (atomic_load(&p->left) > 0) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
    /* waiting longer for the workers than working: their cores are taken (more threads than the machine has free);
     * after a few such runs in a row, the next ones run on this thread alone, then the workers are tried again */
    p->slow = now() - t1 > t1 - t0 ? p->slow + 1 : 0;
    if (p->slow >= SLOW_RUNS) p->slow = 0, p->serial = SERIAL_RUNS;
}

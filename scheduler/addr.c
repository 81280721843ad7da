/* Placing lifetimes in memory: offsets for intervals [start, end] of given sizes such
 * that two intervals live at the same time never share an address.
 *
 * This is offline dynamic storage allocation, NP-hard in general; production planners
 * run a few greedy heuristics and keep the best, and so do we:
 * - greedy by size: largest first, each at the lowest offset free over its whole
 *   lifetime (large blocks placed first leave the small ones to fill the gaps);
 * - best fit by start: in order of birth, each in the smallest gap that the blocks
 *   alive at its start leave (what a good runtime allocator would do, with hindsight
 *   of the sizes only).
 * LOAD, the largest sum of sizes alive at one time, bounds any placement from below;
 * the report gives peak / LOAD. */
#include "scheduler.h"
#include <stdlib.h>
#include <string.h>

static int64_t align_up(int64_t x, int64_t a) { return a > 1 ? (x + a - 1) / a * a : x; }

typedef struct {
    int64_t pos;
    int64_t delta;
} Ev;

static int ev_cmp(const void *a, const void *b) {
    const Ev *x = a, *y = b;
    if (x->pos != y->pos) return x->pos < y->pos ? -1 : 1;
    return x->delta < y->delta ? -1 : x->delta > y->delta; /* frees before allocations at one position */
}

static int64_t load_of(const SchedInterval *iv, int n) {
    Ev *ev = xmalloc(sizeof(Ev) * (size_t)(2 * n + 1));
    for (int i = 0; i < n; i++) {
        ev[2 * i] = (Ev){iv[i].start, iv[i].size};
        ev[2 * i + 1] = (Ev){iv[i].end + 1, -iv[i].size};
    }
    qsort(ev, (size_t)(2 * n), sizeof(Ev), ev_cmp);
    int64_t cur = 0, best = 0;
    for (int i = 0; i < 2 * n; i++) {
        cur += ev[i].delta;
        if (cur > best) best = cur;
    }
    free(ev);
    return best;
}

static int by_size(const void *a, const void *b, void *ctx) {
    const SchedInterval *iv = ctx, *x = &iv[*(const int *)a], *y = &iv[*(const int *)b];
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return *(const int *)a - *(const int *)b;
}
static int by_start(const void *a, const void *b, void *ctx) {
    const SchedInterval *iv = ctx, *x = &iv[*(const int *)a], *y = &iv[*(const int *)b];
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    return *(const int *)a - *(const int *)b;
}
static int by_offset(const void *a, const void *b, void *ctx) {
    const int64_t *off = ctx;
    int64_t x = off[*(const int *)a], y = off[*(const int *)b];
    return x < y ? -1 : x > y;
}

/* the lowest aligned offset where size fits among the blocks cand (sorted by offset) */
static int64_t lowest_gap(const SchedInterval *iv, const int64_t *off, const int *cand, int nc, int64_t size,
                          int64_t align, bool best_fit) {
    int64_t at = 0, best = -1, best_gap = INT64_MAX;
    for (int k = 0; k < nc; k++) {
        int64_t o = off[cand[k]];
        if (o - at >= size) {
            if (!best_fit) return at;
            if (o - at < best_gap) {
                best_gap = o - at;
                best = at;
            }
        }
        int64_t e = align_up(o + iv[cand[k]].size, align);
        if (e > at) at = e;
    }
    return best >= 0 ? best : at;
}

#define BUCKET 64
#define GREEDY_MAX 20000
/* the block visits greedy by size may make, or it is not run (best fit by start places
 * alone): a large conv net's long-lived parameters made it quadratic, most of a 10k-node
 * compile */
#define GREEDY_WORK(n) (64 * (int64_t)(n) + (1 << 21))

static int64_t greedy_by_size(const SchedInterval *iv, int n, int64_t align, int64_t *off) {
    int64_t tmax = 0;
    for (int i = 0; i < n; i++)
        if (iv[i].end > tmax) tmax = iv[i].end;
    int nb = (int)(tmax / BUCKET) + 1;
    /* the visits it would make, known before it starts: block i visits the blocks placed
     * before it in each bucket it lives in, so all of them make the sum over the buckets
     * of cnt (cnt - 1) / 2, counted here in one pass over the blocks. */
    int64_t *cnt = xcalloc((size_t)nb + 1, sizeof(int64_t)), total = 0, alive = 0;
    for (int i = 0; i < n; i++) cnt[iv[i].start / BUCKET]++, cnt[iv[i].end / BUCKET + 1]--;
    for (int b = 0; b < nb; b++) {
        alive += cnt[b];
        total += alive * (alive - 1) / 2;
    }
    free(cnt);
    if (total > GREEDY_WORK(n)) return INT64_MAX; /* too costly here: the other heuristic's placement */
    int *ord = xmalloc(sizeof(int) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) ord[i] = i;
    qsort_r(ord, (size_t)n, sizeof(int), by_size, (void *)iv);
    /* per time bucket, the placed blocks living in it */
    int **bl = xcalloc((size_t)nb, sizeof(int *));
    int *bn = xcalloc((size_t)nb, sizeof(int)), *bc = xcalloc((size_t)nb, sizeof(int));
    int *stamp = xcalloc((size_t)n + 1, sizeof(int)), *cand = xmalloc(sizeof(int) * (size_t)(n + 1));
    int64_t peak = 0, work = 0;
    for (int r = 0; r < n; r++) {
        int i = ord[r], nc = 0;
        for (int64_t b = iv[i].start / BUCKET; b <= iv[i].end / BUCKET; b++) {
            work += bn[b];
            for (int k = 0; k < bn[b]; k++) {
                int j = bl[b][k];
                if (stamp[j] == r + 1 || iv[j].end < iv[i].start || iv[j].start > iv[i].end) continue;
                stamp[j] = r + 1;
                cand[nc++] = j;
            }
        }
        if (work > GREEDY_WORK(n))
            die("greedy by size: %lld visits past the %lld counted", (long long)work, (long long)total);
        qsort_r(cand, (size_t)nc, sizeof(int), by_offset, off);
        off[i] = lowest_gap(iv, off, cand, nc, iv[i].size, align, false);
        if (off[i] + iv[i].size > peak) peak = off[i] + iv[i].size;
        for (int64_t b = iv[i].start / BUCKET; b <= iv[i].end / BUCKET; b++) {
            if (bn[b] == bc[b]) {
                bc[b] = bc[b] ? 2 * bc[b] : 8;
                bl[b] = xrealloc(bl[b], sizeof(int) * (size_t)bc[b]);
            }
            bl[b][bn[b]++] = i;
        }
    }
    for (int b = 0; b < nb; b++) free(bl[b]);
    free(bl);
    free(bn);
    free(bc);
    free(stamp);
    free(cand);
    free(ord);
    return peak;
}

static int64_t best_fit_by_start(const SchedInterval *iv, int n, int64_t align, int64_t *off) {
    int *ord = xmalloc(sizeof(int) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) ord[i] = i;
    qsort_r(ord, (size_t)n, sizeof(int), by_start, (void *)iv);
    int *act = xmalloc(sizeof(int) * (size_t)(n + 1)); /* alive, sorted by offset */
    int na = 0;
    int64_t peak = 0;
    for (int r = 0; r < n; r++) {
        int i = ord[r], w = 0;
        for (int k = 0; k < na; k++)
            if (iv[act[k]].end >= iv[i].start) act[w++] = act[k];
        na = w;
        off[i] = lowest_gap(iv, off, act, na, iv[i].size, align, true);
        if (off[i] + iv[i].size > peak) peak = off[i] + iv[i].size;
        int k = na++;
        while (k > 0 && off[act[k - 1]] > off[i]) {
            act[k] = act[k - 1];
            k--;
        }
        act[k] = i;
    }
    free(act);
    free(ord);
    return peak;
}

int64_t sched_place(SchedInterval *iv, int n, int64_t align, int64_t *load, const char **which) {
    *load = load_of(iv, n);
    if (n == 0) {
        *which = "none";
        return 0;
    }
    int64_t *a = xmalloc(sizeof(int64_t) * (size_t)n), *b = xmalloc(sizeof(int64_t) * (size_t)n);
    /* greedy by size looks at every placed block alive at the same time as the next:
     * quadratic when many blocks live long, so it runs on up to GREEDY_MAX blocks */
    int64_t pb = best_fit_by_start(iv, n, align, b), pa = n <= GREEDY_MAX ? greedy_by_size(iv, n, align, a) : INT64_MAX;
    const int64_t *best = pa <= pb ? a : b;
    *which = pa <= pb ? "greedy_by_size" : "best_fit_by_start";
    for (int i = 0; i < n; i++) iv[i].offset = best[i];
    free(a);
    free(b);
    return pa <= pb ? pa : pb;
}

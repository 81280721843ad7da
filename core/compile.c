/* The compilation's shared services for every pass: its log, the figures each pass
 * reports, the thread count it may use, the memory limit it checks, and file hashes for
 * compile.stamp. (The pass table that runs the passes is driver/passes.c.) */
#include "compile.h"
#include <malloc.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void mn_log(MNCompile *c, int level, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char msg[1200];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->nlog == c->caplog) {
        c->caplog = c->caplog ? c->caplog * 2 : 32;
        c->log = xrealloc(c->log, sizeof(MNLogLine) * (size_t)c->caplog);
    }
    c->log[c->nlog++] = (MNLogLine){level, c->cur_pass ? c->cur_pass : "driver", arena_strdup(c->arena, msg)};
}

void mn_figure(MNCompile *c, const char *name, int64_t value) {
    MNPassRecord *r = &c->passes[c->npasses]; /* the running pass's record, filled in after it */
    if (r->nfigures < (int)(sizeof r->figures / sizeof r->figures[0]))
        r->figures[r->nfigures++] = (MNFigure){name, value};
}

static long online_cpus(void) {
    static atomic_long n; /* sysconf reads /sys each time */
    long v = atomic_load(&n);
    if (!v) atomic_store(&n, v = sysconf(_SC_NPROCESSORS_ONLN));
    return v;
}

int mn_threads(const MNCompile *c) {
    int64_t n = c->opt->ival[MN_OPT_num_threads];
    if (n == 0) n = online_cpus();
    if (n > 8 && c->opt->ival[MN_OPT_num_threads] == 0) n = 8;
    return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

#ifdef __SANITIZE_ADDRESS__
/* ASan's allocator serves malloc, so mallinfo2 sees none of it: its own count (libasan) */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

bool mn_memory_ok(MNCompile *c) {
    int64_t lim = c->opt->ival[MN_OPT_memory_limit_mb];
    if (lim <= 0) return true;
    struct mallinfo2 mi = mallinfo2();
    size_t heap = mi.uordblks + mi.hblkhd;
#ifdef __SANITIZE_ADDRESS__
    heap = __sanitizer_get_current_allocated_bytes();
#endif
    size_t used = heap + arena_mapped(c->arena); /* the arena maps its large blocks itself */
    if (!arena_over_limit(c->arena) && used <= ((size_t)lim << 20)) return true;
    return diag_error(&c->diag, DIAG_RESOURCE,
                      "%s: compilation exceeded the memory limit in %s (memory_limit_mb=%lld, %zu MiB in use)",
                      c->g ? c->g->file : "model", c->cur_pass ? c->cur_pass : "start", (long long)lim, used >> 20);
}

uint64_t mn_file_hash(const char *path) {
    size_t n = 0;
    char *t = buf_read_file(path, 0, &n);
    uint64_t h = t ? 0xcbf29ce484222325ull : 0;
    for (size_t i = 0; t && i < n; i++) h = (h ^ (unsigned char)t[i]) * 0x100000001b3ull;
    free(t);
    return h;
}

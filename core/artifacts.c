/* Writing the codegen dir. Every file is written under a temporary name in the same
 * directory and renamed into place, so a reader never sees a half-written artifact;
 * report.json's status says whether the set is complete. Artifacts from an earlier
 * compile into the same directory are removed first so that a failed compile cannot
 * leave a stale, complete-looking set behind. */
#include "compile.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

static const char *const known_artifacts[] = {
    "model.onnx",
    "l3ir.txt",
    "out.txt",
    "out.json",
    "model.app",
    "model.vsm",
    "l3ir_stripped.onnx",
    "l3ir_stripped.onnx.zst",
    "simulation_result.json",
    "trace.json",
    "dashboard.html",
    "compile.stamp",
};

static bool io_fail(MNCompile *c, const char *what, const char *path) {
    return diag_error(&c->diag, DIAG_IO, "%s: %s '%s': %s", c->model_path, what, path, strerror(errno));
}

static bool mkdir_p(const char *dir) {
    char *p = xstrdup(dir);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        if (mkdir(p, 0777) && errno != EEXIST) {
            free(p);
            return false;
        }
        *s = '/';
    }
    bool ok = !mkdir(p, 0777) || errno == EEXIST;
    free(p);
    struct stat st;
    return ok && stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ".NAME.tmpPID" of an artifact NAME that mn_art_write makes: nothing else is ours */
static bool own_temp(const char *f) {
    if (f[0] != '.') return false;
    const char *t = strstr(f, ".tmp");
    if (!t || !t[4]) return false;
    for (const char *p = t + 4; *p; p++)
        if (*p < '0' || *p > '9') return false;
    size_t n = (size_t)(t - f - 1);
    for (size_t i = 0; i < sizeof known_artifacts / sizeof known_artifacts[0]; i++)
        if (strlen(known_artifacts[i]) == n && !strncmp(f + 1, known_artifacts[i], n)) return true;
    return n > 11 && !strncmp(f + 1, "layout.", 7) && !strncmp(f + 1 + n - 4, ".txt", 4);
}

static bool art_remove_later(MNCompile *c, const char *path);

bool mn_art_prepare_dir(MNCompile *c, const char *const *passes, int npasses) {
    if (!mkdir_p(c->out_dir)) return io_fail(c, "cannot create output directory", c->out_dir);
    char path[4096], old[4200];
    /* temporary files of a compile that was killed before it could rename them */
    DIR *d = opendir(c->out_dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (own_temp(e->d_name)) {
            snprintf(path, sizeof path, "%s/%s", c->out_dir, e->d_name);
            unlink(path);
        }
    if (d) closedir(d);
    /* the artifacts of an earlier compile: out of the way at once (renamed to temporary
     * names no compile writes, ".NAME.tmp0"), removed on the writer thread (the kernel's
     * freeing of a large file's pages was a few percent of a compile) */
    for (size_t i = 0; i < sizeof known_artifacts / sizeof known_artifacts[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", c->out_dir, known_artifacts[i]);
        snprintf(old, sizeof old, "%s/.%s.tmp0", c->out_dir, known_artifacts[i]);
        if (!rename(path, old)) {
            if (!art_remove_later(c, old) && unlink(old) && errno != ENOENT)
                return io_fail(c, "cannot remove stale artifact", old);
        } else if (errno != ENOENT && unlink(path) && errno != ENOENT)
            return io_fail(c, "cannot remove stale artifact", path);
    }
    /* layout.<pass>.txt dumps of an earlier run */
    for (int i = 0; i < npasses; i++) {
        snprintf(path, sizeof path, "%s/layout.%s.txt", c->out_dir, passes[i]);
        if (unlink(path) && errno != ENOENT) return io_fail(c, "cannot remove stale artifact", path);
    }
    return true;
}

/* The segments' bytes (or, with src_fd >= 0, len bytes of that file, in the kernel
 * where it can: copy_file_range does not read the input model into memory a second
 * time) to fd, at most limit bytes of them; errno set on failure */
static bool put_bytes(int fd, const MNSpan *seg, int nseg, int src_fd, size_t len, size_t limit) {
    struct iovec iov[256];
    int k = 0;
    size_t off = 0; /* bytes of seg[k] written */
    while (src_fd < 0 && k < nseg &&
           limit) { /* up to 256 pieces a call: an app is a few large vectors among many small ones */
        int ni = 0;
        size_t want = 0;
        for (int q = k; q < nseg && ni < 256 && want < limit; q++) {
            size_t n = seg[q].n - (q == k ? off : 0);
            if (n > limit - want) n = limit - want;
            if (!n) continue;
            iov[ni].iov_base = (char *)seg[q].p + (q == k ? off : 0);
            iov[ni].iov_len = n;
            ni++;
            want += n;
        }
        if (!ni) break;
        ssize_t w = writev(fd, iov, ni);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return w == 0 ? (errno = ENOSPC, false) : false;
        limit -= (size_t)w;
        for (size_t left = (size_t)w; k < nseg;) { /* past the pieces written */
            size_t rest = seg[k].n - off;
            if (left < rest) {
                off += left;
                break;
            }
            left -= rest;
            k++;
            off = 0;
        }
    }
    if (src_fd < 0) return true;
    if (len > limit) len = limit;
    while (len) {
        ssize_t w = copy_file_range(src_fd, NULL, fd, NULL, len, 0);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP || errno == EPERM))
            break;
        if (w <= 0) return w == 0 ? (errno = EIO, false) : false; /* the file got shorter */
        len -= (size_t)w;
    }
    char *chunk = len ? xmalloc(1 << 20) : NULL;
    while (chunk && len) {
        ssize_t r = read(src_fd, chunk, len < (1 << 20) ? len : (1 << 20));
        if (r < 0 && errno == EINTR) continue;
        MNSpan one = {chunk, r > 0 ? (size_t)r : 0};
        if (r <= 0 || !put_bytes(fd, &one, 1, -1, 0, one.n)) {
            if (r == 0) errno = EIO;
            free(chunk);
            return false;
        }
        len -= (size_t)r;
    }
    free(chunk);
    return true;
}

/* path written under a temporary name and renamed into place; false with errno set
 * and *what saying which step failed (no MNCompile: the writer thread runs this too) */
static bool put_file_raw(const char *path, const MNSpan *seg, int nseg, int src_fd, size_t src_len, const char **what,
                         char *where, size_t wn) {
    char tmp[4200];
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(tmp, sizeof tmp, "%.*s/.%s.tmp%ld", (int)(slash - path), path, slash + 1, (long)getpid());
    else
        snprintf(tmp, sizeof tmp, ".%s.tmp%ld", path, (long)getpid());
    *what = "cannot write";
    snprintf(where, wn, "%s", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0) {
        snprintf(where, wn, "%s", tmp);
        return false;
    }
    size_t len = src_fd >= 0 ? src_len : 0;
    for (int k = 0; src_fd < 0 && k < nseg; k++) len += seg[k].n;
    /* fault injection for the tests: MNCC_FAIL_WRITE=NAME makes the write of the file
     * named NAME stop halfway with ENOSPC, as a full disk would */
    const char *inject = getenv("MNCC_FAIL_WRITE");
    bool fail = inject && *inject && !strcmp(inject, slash ? slash + 1 : path);
    if (!put_bytes(fd, seg, nseg, src_fd, len, fail ? len / 2 : len) || fail) {
        int e = fail ? ENOSPC : errno;
        close(fd);
        unlink(tmp);
        errno = e;
        return false;
    }
    if (close(fd)) {
        int e = errno;
        unlink(tmp);
        errno = e;
        return false;
    }
    if (rename(tmp, path)) {
        int e = errno;
        *what = "cannot rename into place";
        unlink(tmp);
        errno = e;
        return false;
    }
    return true;
}

static bool put_file(MNCompile *c, const char *path, const void *data, size_t len) {
    const char *what;
    char where[4200];
    MNSpan one = {data, len};
    if (put_file_raw(path, &one, 1, -1, 0, &what, where, sizeof where)) return true;
    return io_fail(c, what, where);
}

/* Large artifacts are written by one writer thread (num_threads > 1), in the order they
 * were handed over, while the compile goes on: model.onnx's copy while the model loads,
 * model.vsm and model.app while the graph's dumps are made. After a failed write the
 * writer writes nothing more, and every artifact operation after it fails with the
 * error the write would have given in line; mn_art_wait waits for the writer. */
typedef struct {
    char name[256], path[4096], where[4200];
    MNSpan *seg;
    int nseg, src_fd; /* src_fd >= 0: a copy of src_len bytes of that file */
    size_t src_len;
    void (*release)(void *);
    void *ctx;
    const char *what;
    int err;
    bool ok, tried, remove; /* remove: path only unlinked (a stale artifact's) */
} MNArtJob;

typedef struct MNArtQ {
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    MNArtJob **job;
    int n, cap, next; /* jobs handed over, the first not yet taken */
    bool closing, failed;
} MNArtQ;

static void job_release(MNArtJob *j) {
    if (j->release) j->release(j->ctx);
    if (j->src_fd >= 0) close(j->src_fd);
    j->release = NULL;
    j->src_fd = -1;
}

/* the next job, written (or, after a failure, skipped); false when none is left */
static bool art_take(MNArtQ *q, bool wait) {
    pthread_mutex_lock(&q->mu);
    while (wait && q->next == q->n && !q->closing) pthread_cond_wait(&q->cv, &q->mu);
    if (q->next == q->n) {
        pthread_mutex_unlock(&q->mu);
        return false;
    }
    MNArtJob *j = q->job[q->next++];
    bool skip = q->failed;
    pthread_mutex_unlock(&q->mu);
    if (j->remove) {
        j->ok = true;
        unlink(j->path);
    } /* as in line: gone, or never there */
    else if (!skip) {
        j->tried = true;
        j->ok = put_file_raw(j->path, j->seg, j->nseg, j->src_fd, j->src_len, &j->what, j->where, sizeof j->where);
        j->err = errno;
    }
    job_release(j);
    if (j->tried && !j->ok) {
        pthread_mutex_lock(&q->mu);
        q->failed = true;
        pthread_mutex_unlock(&q->mu);
    }
    return true;
}

static void *art_writer(void *arg) {
    while (art_take(arg, true)) continue;
    return NULL;
}

static void art_record(MNCompile *c, const char *name);
static void art_unrecord(MNCompile *c, const char *name);

bool mn_art_wait(MNCompile *c) {
    MNArtQ *q = c->art_q;
    if (!q) return true;
    c->art_q = NULL;
    pthread_mutex_lock(&q->mu);
    q->closing = true;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
    /* the last artifacts come together (model.app, the dumps): written two at a time,
     * this thread taking the next while the writer writes one (a write is mostly the
     * kernel filling new page-cache pages: one core's worth) */
    while (art_take(q, false)) continue;
    pthread_join(q->tid, NULL);
    bool ok = true;
    for (int k = 0; k < q->n; k++) {
        MNArtJob *j = q->job[k];
        if (!j->ok) art_unrecord(c, j->name);
        if (j->tried && !j->ok) { /* the first failure says it (two writes at once may both fail) */
            errno = j->err;
            if (ok) io_fail(c, j->what, j->where);
            if (!strcmp(j->name, "model.app")) c->app_status = "not written: its write failed";
        }
        ok &= j->ok;
        free(j->seg);
        free(j);
    }
    free(q->job);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
    free(q);
    return ok;
}

/* false once a write of the writer's failed (the error then said) */
static bool art_healthy(MNCompile *c) {
    MNArtQ *q = c->art_q;
    if (!q) return true;
    pthread_mutex_lock(&q->mu);
    bool failed = q->failed;
    pthread_mutex_unlock(&q->mu);
    return !failed || mn_art_wait(c);
}

/* the job to the writer (started at the first), or false when it cannot take it */
static bool art_enqueue(MNCompile *c, MNArtJob *j) {
    MNArtQ *q = c->art_q;
    if (!q) {
        q = xcalloc(1, sizeof *q);
        pthread_mutex_init(&q->mu, NULL);
        pthread_cond_init(&q->cv, NULL);
        if (pthread_create(&q->tid, NULL, art_writer, q)) {
            pthread_mutex_destroy(&q->mu);
            pthread_cond_destroy(&q->cv);
            free(q);
            return false;
        }
        c->art_q = q;
    }
    pthread_mutex_lock(&q->mu);
    if (q->n == q->cap) q->job = xrealloc(q->job, sizeof(MNArtJob *) * (size_t)(q->cap = q->cap ? 2 * q->cap : 16));
    q->job[q->n++] = j;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
    if (!j->remove) art_record(c, j->name);
    return true;
}

/* path unlinked by the writer; false when there is none (then in line) */
static bool art_remove_later(MNCompile *c, const char *path) {
    size_t n = strlen(path);
    if (mn_threads(c) < 2 || n >= sizeof((MNArtJob *)0)->path) return false;
    MNArtJob *j = xcalloc(1, sizeof *j);
    memcpy(j->path, path, n + 1);
    j->seg = xmalloc(sizeof(MNSpan));
    j->src_fd = -1;
    j->remove = true;
    if (art_enqueue(c, j)) return true;
    free(j->seg);
    free(j);
    return false;
}

/* one job of a large artifact; in line when it is small or there is no writer */
static bool art_submit(MNCompile *c, const char *name, const MNSpan *seg, int nseg, int src_fd, size_t src_len,
                       void (*release)(void *), void *ctx) {
    MNArtJob *j = xcalloc(1, sizeof *j);
    snprintf(j->name, sizeof j->name, "%s", name);
    snprintf(j->path, sizeof j->path, "%s/%s", c->out_dir, name);
    j->seg = xmalloc(sizeof(MNSpan) * (size_t)(nseg + 1));
    if (nseg) memcpy(j->seg, seg, sizeof(MNSpan) * (size_t)nseg);
    j->nseg = nseg;
    j->src_fd = src_fd;
    j->src_len = src_len;
    j->release = release;
    j->ctx = ctx;
    size_t len = src_len;
    for (int k = 0; k < nseg; k++) len += seg[k].n;
    bool ok = art_healthy(c); /* the writer's failure first, if it had one: this one fails with it */
    if (ok && mn_threads(c) >= 2 && strlen(name) < 256 && len >= ((size_t)256 << 10) && art_enqueue(c, j)) return true;
    if (ok) { /* in line */
        ok = put_file_raw(j->path, j->seg, j->nseg, src_fd, src_len, &j->what, j->where, sizeof j->where);
        if (ok)
            art_record(c, name);
        else
            io_fail(c, j->what, j->where);
    }
    job_release(j);
    free(j->seg);
    free(j);
    return ok;
}

bool mn_art_write_segs(MNCompile *c, const char *name, const MNSpan *seg, int nseg, void (*release)(void *),
                       void *ctx) {
    return art_submit(c, name, seg, nseg, -1, 0, release, ctx);
}

bool mn_art_write_owned(MNCompile *c, const char *name, void *data, size_t len) {
    MNSpan one = {data ? data : "", len};
    return art_submit(c, name, &one, 1, -1, 0, free, data);
}

bool mn_art_write_path(MNCompile *c, const char *path, const void *data, size_t len) {
    return art_healthy(c) && put_file(c, path, data ? data : "", len);
}

static void art_record(MNCompile *c, const char *name) {
    int k = 0;
    while (k < c->nartifacts && strcmp(c->artifacts[k], name)) k++;
    if (k == c->nartifacts && k < (int)(sizeof c->artifacts / sizeof c->artifacts[0]))
        c->artifacts[c->nartifacts++] = arena_strdup(c->arena, name);
}

static void art_unrecord(MNCompile *c, const char *name) {
    for (int k = 0; k < c->nartifacts; k++)
        if (!strcmp(c->artifacts[k], name)) {
            memmove(&c->artifacts[k], &c->artifacts[k + 1], sizeof(c->artifacts[0]) * (size_t)(c->nartifacts - k - 1));
            c->nartifacts--;
            return;
        }
}

bool mn_art_write(MNCompile *c, const char *name, const void *data, size_t len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", c->out_dir, name);
    if (!mn_art_write_path(c, path, data, len)) return false;
    art_record(c, name);
    return true;
}

bool mn_art_copy_file(MNCompile *c, const char *name, const char *src) {
    if (!art_healthy(c)) return false;
    int fd = open(src, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        if (fd >= 0) {
            close(fd);
            errno = EINVAL;
        }
        return io_fail(c, "cannot read", src);
    }
    return art_submit(c, name, NULL, 0, fd, (size_t)st.st_size, NULL, NULL);
}

bool mn_art_remove(MNCompile *c, const char *name) {
    mn_art_wait(c);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", c->out_dir, name);
    if (unlink(path)) return false;
    art_unrecord(c, name);
    return true;
}

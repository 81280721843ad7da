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
#include <unistd.h>

static const char *const known_artifacts[] = {
    "model.onnx", "l3ir.txt", "out.txt", "out.json", "model.app", "model.vsm", "l3ir_stripped.onnx",
    "l3ir_stripped.onnx.zst", "simulation_result.json", "trace.json", "dashboard.html", "compile.stamp",
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

bool mn_art_prepare_dir(MNCompile *c) {
    if (!mkdir_p(c->out_dir)) return io_fail(c, "cannot create output directory", c->out_dir);
    char path[4096];
    for (size_t i = 0; i < sizeof known_artifacts / sizeof known_artifacts[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", c->out_dir, known_artifacts[i]);
        if (unlink(path) && errno != ENOENT) return io_fail(c, "cannot remove stale artifact", path);
    }
    /* temporary files of a compile that was killed before it could rename them */
    DIR *d = opendir(c->out_dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (own_temp(e->d_name)) {
            snprintf(path, sizeof path, "%s/%s", c->out_dir, e->d_name);
            unlink(path);
        }
    if (d) closedir(d);
    /* layout.<pass>.txt dumps of an earlier run */
    int n;
    const char *const *names = mn_pass_names(&n);
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/layout.%s.txt", c->out_dir, names[i]);
        if (unlink(path) && errno != ENOENT) return io_fail(c, "cannot remove stale artifact", path);
    }
    return true;
}

/* len bytes to fd: from data, or (data NULL) from src_fd, in the kernel where it can
 * (copy_file_range: the input model is not read into memory a second time), else read
 * a chunk at a time; errno set on failure */
static bool put_bytes(int fd, const void *data, size_t len, int src_fd) {
    const char *p = data;
    while (data && len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return w == 0 ? (errno = ENOSPC, false) : false;
        p += w, len -= (size_t)w;
    }
    while (!data && len) {
        ssize_t w = copy_file_range(src_fd, NULL, fd, NULL, len, 0);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP || errno == EPERM)) break;
        if (w <= 0) return w == 0 ? (errno = EIO, false) : false; /* the file got shorter */
        len -= (size_t)w;
    }
    char *chunk = !data && len ? xmalloc(1 << 20) : NULL;
    while (chunk && len) {
        ssize_t r = read(src_fd, chunk, len < (1 << 20) ? len : (1 << 20));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0 || !put_bytes(fd, chunk, (size_t)r, -1)) {
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
 * and *what saying which step failed (no MNCompile: a background write runs this too) */
static bool put_file_raw(const char *path, const void *data, size_t len, int src_fd, const char **what, char *where, size_t wn) {
    char tmp[4200];
    const char *slash = strrchr(path, '/');
    if (slash) snprintf(tmp, sizeof tmp, "%.*s/.%s.tmp%ld", (int)(slash - path), path, slash + 1, (long)getpid());
    else snprintf(tmp, sizeof tmp, ".%s.tmp%ld", path, (long)getpid());
    *what = "cannot write";
    snprintf(where, wn, "%s", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0) return snprintf(where, wn, "%s", tmp), false;
    /* fault injection for the tests: MNCC_FAIL_WRITE=NAME makes the write of the file
     * named NAME stop halfway with ENOSPC, as a full disk would */
    const char *inject = getenv("MNCC_FAIL_WRITE");
    bool fail = inject && *inject && !strcmp(inject, slash ? slash + 1 : path);
    if (!put_bytes(fd, data, fail ? len / 2 : len, src_fd) || fail) {
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

static bool put_file(MNCompile *c, const char *path, const void *data, size_t len, int src_fd) {
    const char *what;
    char where[4200];
    if (put_file_raw(path, data, len, src_fd, &what, where, sizeof where)) return true;
    return io_fail(c, what, where);
}

/* One artifact at a time may be written on a thread of its own (num_threads > 1) while
 * the compile goes on: model.vsm while model.app is built, model.app while the graph's
 * dumps are. The next artifact operation waits for it first and fails if it did, with
 * the error the write would have given in line. */
typedef struct MNArtBg {
    pthread_t tid;
    char name[256], path[4096], where[4200];
    void *data; /* owned: freed once written */
    size_t len;
    const char *what;
    int err;
    bool ok;
} MNArtBg;

static void *bg_write(void *arg) {
    MNArtBg *j = arg;
    j->ok = put_file_raw(j->path, j->data, j->len, -1, &j->what, j->where, sizeof j->where);
    j->err = errno;
    return NULL;
}

static void art_record(MNCompile *c, const char *name);

bool mn_art_wait(MNCompile *c) {
    MNArtBg *j = c->art_bg;
    if (!j) return true;
    c->art_bg = NULL;
    pthread_join(j->tid, NULL);
    bool ok = j->ok;
    if (ok) art_record(c, j->name);
    else {
        errno = j->err;
        io_fail(c, j->what, j->where);
        if (!strcmp(j->name, "model.app")) c->app_status = "not written: its write failed";
    }
    free(j->data);
    free(j);
    return ok;
}

bool mn_art_write_owned(MNCompile *c, const char *name, void *data, size_t len) {
    if (!mn_art_wait(c)) return free(data), false;
    if (mn_threads(c) < 2 || strlen(name) >= 256 || len < ((size_t)256 << 10)) { /* a small file: written at once */
        bool ok = mn_art_write(c, name, data ? data : "", len);
        free(data);
        return ok;
    }
    MNArtBg *j = xcalloc(1, sizeof *j);
    snprintf(j->name, sizeof j->name, "%s", name);
    snprintf(j->path, sizeof j->path, "%s/%s", c->out_dir, name);
    j->data = data, j->len = len;
    if (pthread_create(&j->tid, NULL, bg_write, j)) {
        free(j);
        bool ok = mn_art_write(c, name, data ? data : "", len);
        free(data);
        return ok;
    }
    c->art_bg = j;
    return true;
}

bool mn_art_write_path(MNCompile *c, const char *path, const void *data, size_t len) { return mn_art_wait(c) && put_file(c, path, data ? data : "", len, -1); }

static void art_record(MNCompile *c, const char *name) {
    int k = 0;
    while (k < c->nartifacts && strcmp(c->artifacts[k], name)) k++;
    if (k == c->nartifacts && k < (int)(sizeof c->artifacts / sizeof c->artifacts[0])) c->artifacts[c->nartifacts++] = arena_strdup(c->arena, name);
}

bool mn_art_write(MNCompile *c, const char *name, const void *data, size_t len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", c->out_dir, name);
    if (!mn_art_write_path(c, path, data, len)) return false;
    art_record(c, name);
    return true;
}

bool mn_art_copy_file(MNCompile *c, const char *name, const char *src) {
    if (!mn_art_wait(c)) return false;
    int fd = open(src, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        if (fd >= 0) close(fd), errno = EINVAL;
        return io_fail(c, "cannot read", src);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", c->out_dir, name);
    bool ok = put_file(c, path, NULL, (size_t)st.st_size, fd);
    close(fd);
    if (ok) art_record(c, name);
    return ok;
}

bool mn_art_remove(MNCompile *c, const char *name) {
    mn_art_wait(c);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", c->out_dir, name);
    if (unlink(path)) return false;
    for (int k = 0; k < c->nartifacts; k++)
        if (!strcmp(c->artifacts[k], name)) {
            memmove(&c->artifacts[k], &c->artifacts[k + 1], sizeof(c->artifacts[0]) * (size_t)(c->nartifacts - k - 1));
            c->nartifacts--;
            break;
        }
    return true;
}

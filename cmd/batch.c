/* mncc batch: many models compiled for CI.
 *
 *   mncc batch LIST|DIR -o OUTROOT [-j N] [--shard K/N] [--quiet] [compile options...]
 *
 * DIR: every *.onnx below it (sorted). LIST: one model a line, `PATH [options...]`, the
 * options as on mncc's command line (--input-shape, -O, --preset, ...), PATH relative
 * to the list file; `--name NAME` names its output directory; `#` starts a comment.
 * Model NAME (its path below DIR, or from LIST, without .onnx, with '/' as '_') goes
 * to OUTROOT/NAME/.
 *
 * Each compile is a child process running this same program, so that one model that
 * fails (or crashes) cannot take the others with it; up to N run at once. The children
 * share the Node Simulation cache, which is safe for concurrent writers (scheduler/
 * sim_cache.c). A model whose OUTROOT/NAME/batch.stamp matches (same model bytes,
 * options and the files they name, compiler version) and whose report.json says ok is
 * up to date and skipped. --shard K/N keeps the models whose name hashes to K-1 mod N,
 * a subset that stays the same as models are added, so a CI job matrix can spread the
 * work over machines.
 *
 * Writes OUTROOT/summary.json and OUTROOT/junit.xml (one testcase per model, the
 * compiler's error as the failure message). Exit code 1 if any model failed. On a
 * terminal one status line is redrawn (models done / total, the pass each running
 * compile is in, from its report.json, and an ETA); otherwise a plain line per
 * model; nothing with --quiet. */
#include "compile.h"
#include "version.h"
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    char *name, *path;
    char **argv; /* per-model options */
    int argc;
    const char *status; /* "ok", "failed", "up to date" */
    char *error;
    double seconds;
    pid_t pid;
    double t0;
    char *key; /* the up-to-date stamp's content */
} Job;

typedef struct {
    Job *j;
    int n, cap;
} Jobs;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *slurp(const char *path, size_t *len) { return buf_read_file(path, 0, len); }

static uint64_t fnv(const void *p, size_t n, uint64_t h) {
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 0x100000001b3ull;
    return h;
}

static void add_job(Jobs *js, const char *name, const char *path, char **argv, int argc) {
    if (js->n == js->cap) js->cap = js->cap ? 2 * js->cap : 64, js->j = xrealloc(js->j, sizeof(Job) * (size_t)js->cap);
    Job *j = &js->j[js->n++];
    memset(j, 0, sizeof *j);
    j->name = xstrdup(name), j->path = xstrdup(path), j->argv = argv, j->argc = argc;
    for (char *s = j->name; *s; s++)
        if (*s == '/') *s = '_';
}

static int by_path(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* every .onnx below dir, relative paths, sorted */
static void walk(const char *root, const char *rel, char ***out, int *n, int *cap) {
    char path[4096];
    snprintf(path, sizeof path, "%s%s%s", root, *rel ? "/" : "", rel);
    DIR *d = opendir(path);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char r[4096], full[8200];
        snprintf(r, sizeof r, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
        snprintf(full, sizeof full, "%s/%s", root, r);
        struct stat st;
        if (stat(full, &st)) continue;
        if (S_ISDIR(st.st_mode)) walk(root, r, out, n, cap);
        else if (strlen(r) > 5 && !strcmp(r + strlen(r) - 5, ".onnx")) {
            if (*n == *cap) *cap = *cap ? 2 * *cap : 64, *out = xrealloc(*out, sizeof(char *) * (size_t)*cap);
            (*out)[(*n)++] = xstrdup(r);
        }
    }
    closedir(d);
}

/* a list file: PATH [options...] [--name NAME] per line */
static bool read_list(const char *list, Jobs *js, char *err, size_t errlen) {
    char *text = slurp(list, NULL);
    if (!text) return snprintf(err, errlen, "%s: cannot read: %s", list, strerror(errno)), false;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", list);
    char *sl = strrchr(dir, '/');
    if (sl) *sl = 0;
    else snprintf(dir, sizeof dir, ".");
    int lineno = 0;
    bool ok = true;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line && ok; line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char **tok = NULL;
        int nt = 0;
        for (char *s2 = NULL, *t = strtok_r(line, " \t\r", &s2); t; t = strtok_r(NULL, " \t\r", &s2)) {
            tok = xrealloc(tok, sizeof(char *) * (size_t)(nt + 1));
            tok[nt++] = xstrdup(t);
        }
        if (!nt) {
            free(tok);
            continue;
        }
        char path[8200], name[4096] = "";
        snprintf(path, sizeof path, "%s%s%s", tok[0][0] == '/' ? "" : dir, tok[0][0] == '/' ? "" : "/", tok[0]);
        char **args = xcalloc((size_t)nt + 1, sizeof(char *));
        int na = 0;
        for (int i = 1; i < nt; i++) {
            if (!strcmp(tok[i], "--name")) {
                if (i + 1 >= nt) {
                    snprintf(err, errlen, "%s:%d: --name needs a value", list, lineno);
                    ok = false;
                    break;
                }
                snprintf(name, sizeof name, "%s", tok[++i]);
            } else
                args[na++] = xstrdup(tok[i]);
        }
        if (!*name) {
            snprintf(name, sizeof name, "%s", tok[0]);
            size_t l = strlen(name);
            if (l > 5 && !strcmp(name + l - 5, ".onnx")) name[l - 5] = 0;
        }
        for (int i = 0; i < nt; i++) free(tok[i]);
        free(tok);
        for (int k = 0; ok && k < js->n; k++)
            if (!strcmp(js->j[k].name, name)) snprintf(err, errlen, "%s:%d: model name '%s' used twice (give one --name)", list, lineno, name), ok = false;
        if (ok) add_job(js, name, path, args, na);
        else {
            for (int i = 0; i < na; i++) free(args[i]);
            free(args);
        }
    }
    free(text);
    return ok;
}

/* the files options name, whose contents decide the compile as much as the model's */
static void hash_named_files(MNBuf *k, char **argv, int argc) {
    for (int i = 0; i + 1 < argc; i++) {
        const char *f = argv[i], *v = argv[i + 1];
        char path[4200];
        if (!strcmp(f, "--preset")) opt_preset_path(v, path, sizeof path);
        else if (!strcmp(f, "--machine")) {
            if (strchr(v, '/') || strstr(v, ".json")) snprintf(path, sizeof path, "%s", v);
            else {
                char rel[300];
                snprintf(rel, sizeof rel, "machines/%.250s.json", v);
                mn_data_path(rel, path, sizeof path);
            }
        } else if (!strcmp(f, "--option-json") || !strcmp(f, "--input-value")) snprintf(path, sizeof path, "%s", strchr(v, '=') && f[2] == 'i' ? strchr(v, '=') + 1 : v);
        else continue;
        size_t n = 0;
        char *t = slurp(path, &n);
        buf_printf(k, "file %s %016llx\n", path, t ? (unsigned long long)fnv(t, n, 0xcbf29ce484222325ull) : 0ull);
        free(t);
    }
}

static char *job_key(const Job *j, char **common, int ncommon) {
    MNBuf k = {0};
    size_t n = 0;
    char *model = slurp(j->path, &n);
    buf_printf(&k, "mncc %s\nmodel %016llx %zu\n", mncc_version, model ? (unsigned long long)fnv(model, n, 0xcbf29ce484222325ull) : 0ull, n);
    free(model);
    for (int i = 0; i < ncommon; i++) buf_printf(&k, "arg %s\n", common[i]);
    for (int i = 0; i < j->argc; i++) buf_printf(&k, "arg %s\n", j->argv[i]);
    hash_named_files(&k, common, ncommon);
    hash_named_files(&k, j->argv, j->argc);
    return k.data;
}

static bool report_ok(const char *dir, char *pass, size_t passlen, char *error, size_t errlen) {
    char path[4200];
    snprintf(path, sizeof path, "%s/report.json", dir);
    char *t = slurp(path, NULL);
    if (pass) *pass = 0;
    if (error) *error = 0;
    if (!t) return false;
    cJSON *r = cJSON_Parse(t);
    free(t);
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(r, "status"), *ps = cJSON_GetObjectItemCaseSensitive(r, "passes");
    const cJSON *er = cJSON_GetObjectItemCaseSensitive(r, "error");
    bool ok = cJSON_IsString(st) && !strcmp(st->valuestring, "ok");
    int np = cJSON_GetArraySize(ps);
    const cJSON *last = np > 0 ? cJSON_GetArrayItem(ps, np - 1) : NULL, *nm = last ? cJSON_GetObjectItemCaseSensitive(last, "name") : NULL;
    if (pass && cJSON_IsString(nm)) snprintf(pass, passlen, "%s", nm->valuestring);
    const cJSON *msg = er ? cJSON_GetObjectItemCaseSensitive(er, "message") : NULL;
    if (error && cJSON_IsString(msg)) snprintf(error, errlen, "%s", msg->valuestring);
    cJSON_Delete(r);
    return ok;
}

static void xml_escape(MNBuf *b, const char *s) {
    for (; s && *s; s++)
        switch (*s) {
        case '<': buf_printf(b, "&lt;"); break;
        case '>': buf_printf(b, "&gt;"); break;
        case '&': buf_printf(b, "&amp;"); break;
        case '"': buf_printf(b, "&quot;"); break;
        case '\n': buf_printf(b, "&#10;"); break;
        default:
            if ((unsigned char)*s < 0x20 && *s != '\t') buf_printf(b, "?");
            else buf_append(b, s, 1);
        }
}

static bool write_file(const char *path, const char *data, size_t len) {
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    bool ok = f && fwrite(data, 1, len, f) == len;
    if (f && fclose(f)) ok = false;
    if (ok && rename(tmp, path)) ok = false;
    if (!ok) remove(tmp);
    return ok;
}

static int usage(const char *msg) {
    fprintf(stderr, "mncc batch: %s\nusage: mncc batch LIST|DIR -o OUTROOT [-j N] [--shard K/N] [--quiet] [compile options...]\n", msg);
    return 2;
}

int mncc_batch(int argc, char **argv) {
    const char *src = NULL, *outroot = NULL;
    int jobs = (int)sysconf(_SC_NPROCESSORS_ONLN), shard_k = 1, shard_n = 1;
    bool quiet = false;
    char **common = xcalloc((size_t)argc + 1, sizeof(char *));
    int ncommon = 0;
    if (jobs < 1) jobs = 1;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-o") && i + 1 < argc) outroot = argv[++i];
        else if ((!strcmp(a, "-j") && i + 1 < argc) || (!strncmp(a, "-j", 2) && a[2])) {
            char *end;
            long v = strtol(a[2] ? a + 2 : argv[++i], &end, 10);
            if (*end || v < 1 || v > 256) return free(common), usage("-j needs a number of jobs from 1 to 256");
            jobs = (int)v;
        } else if (!strcmp(a, "--shard") && i + 1 < argc) {
            if (sscanf(argv[++i], "%d/%d", &shard_k, &shard_n) != 2 || shard_n < 1 || shard_k < 1 || shard_k > shard_n)
                return free(common), usage("--shard needs K/N with 1 <= K <= N");
        } else if (!strcmp(a, "--quiet")) quiet = true;
        else if (a[0] != '-' && !src) src = a;
        else if (a[0] == '-' && strcmp(a, "--summary")) {
            /* a compile option: passed to every compile, with its value when it takes one */
            common[ncommon++] = argv[i];
            bool takes = !strchr(a, '=') && (!strcmp(a, "-O") || !strcmp(a, "--input-shape") || !strcmp(a, "--input-value") || !strcmp(a, "--preset") ||
                                              !strcmp(a, "--option-json") || !strcmp(a, "--cache-dir") ||
                                              (opt_flag(a) >= 0 && strcmp(mn_opt_info[opt_flag(a)].type, "BOOL")));
            if (takes && i + 1 < argc) common[ncommon++] = argv[++i];
        } else
            return free(common), usage(a[0] == '-' ? "--summary does not apply to a batch" : "more than one LIST or DIR given");
    }
    if (!src || !outroot) return free(common), usage("needs a LIST or DIR and -o OUTROOT");
    Jobs js = {0};
    char err[4400];
    struct stat st;
    if (stat(src, &st)) return free(common), fprintf(stderr, "mncc batch: %s: %s\n", src, strerror(errno)), 1;
    if (S_ISDIR(st.st_mode)) {
        char **paths = NULL;
        int np = 0, cap = 0;
        walk(src, "", &paths, &np, &cap);
        qsort(paths, (size_t)np, sizeof(char *), by_path);
        for (int i = 0; i < np; i++) {
            char full[8200], name[4096];
            snprintf(full, sizeof full, "%s/%s", src, paths[i]);
            snprintf(name, sizeof name, "%.*s", (int)strlen(paths[i]) - 5, paths[i]);
            add_job(&js, name, full, NULL, 0);
            free(paths[i]);
        }
        free(paths);
    } else if (!read_list(src, &js, err, sizeof err))
        return free(common), fprintf(stderr, "mncc batch: %s\n", err), 1;
    /* names that came out alike after '/' -> '_' get a suffix */
    for (int i = 0; i < js.n; i++)
        for (int k = 0; k < i; k++)
            if (!strcmp(js.j[i].name, js.j[k].name)) {
                char *nn = xmalloc(strlen(js.j[i].name) + 16);
                sprintf(nn, "%s_%d", js.j[i].name, i);
                free(js.j[i].name), js.j[i].name = nn;
            }
    /* the shard */
    int nsel = 0;
    for (int i = 0; i < js.n; i++) {
        uint64_t h = fnv(js.j[i].name, strlen(js.j[i].name), 0xcbf29ce484222325ull);
        if ((int)(h % (uint64_t)shard_n) == shard_k - 1) js.j[nsel++] = js.j[i];
        else {
            for (int a = 0; a < js.j[i].argc; a++) free(js.j[i].argv[a]);
            free(js.j[i].argv), free(js.j[i].name), free(js.j[i].path);
        }
    }
    js.n = nsel;
    if (mkdir(outroot, 0777) && errno != EEXIST) return free(common), fprintf(stderr, "mncc batch: cannot create %s: %s\n", outroot, strerror(errno)), 1;
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0) snprintf(self, sizeof self, "%s", argv[0]);
    else self[sl] = 0;
    bool tty = !quiet && isatty(2);
    double t_start = now_s();
    int next = 0, running = 0, done = 0, nfail = 0, nskip = 0;
    double work = 0; /* seconds of the compiles done, for the ETA */
    while (done < js.n) {
        while (running < jobs && next < js.n) {
            Job *j = &js.j[next++];
            char dir[4200], stamp[4300];
            snprintf(dir, sizeof dir, "%s/%s", outroot, j->name);
            snprintf(stamp, sizeof stamp, "%s/batch.stamp", dir);
            j->key = job_key(j, common, ncommon);
            char *old = slurp(stamp, NULL);
            bool fresh = old && !strcmp(old, j->key) && report_ok(dir, NULL, 0, NULL, 0);
            free(old);
            if (fresh) {
                j->status = "up to date";
                done++, nskip++;
                if (!quiet && !tty) fprintf(stderr, "mncc batch: [%d/%d] up to date %s\n", done, js.n, j->name);
                continue;
            }
            remove(stamp); /* stale until this compile succeeds */
            char **av = xcalloc((size_t)(ncommon + j->argc + 5), sizeof(char *));
            int na = 0;
            av[na++] = self, av[na++] = j->path, av[na++] = "-o", av[na++] = dir;
            for (int k = 0; k < ncommon; k++) av[na++] = common[k];
            for (int k = 0; k < j->argc; k++) av[na++] = j->argv[k];
            fflush(NULL);
            j->t0 = now_s();
            char errf[4300];
            snprintf(errf, sizeof errf, "%s/.%s.stderr", outroot, j->name);
            pid_t pid = fork();
            if (pid == 0) {
                int fd = open("/dev/null", O_WRONLY), fe = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0666);
                if (fd >= 0) dup2(fd, 1);
                if (fe >= 0) dup2(fe, 2);
                execv(self, av);
                _exit(127);
            }
            free(av);
            if (pid < 0) {
                j->status = "failed", j->error = xstrdup("cannot start a compile (fork failed)");
                done++, nfail++;
                continue;
            }
            j->pid = pid, running++;
        }
        if (!running) continue;
        int wst;
        pid_t p = waitpid(-1, &wst, tty ? WNOHANG : 0);
        if (p < 0 && errno != EINTR) die("waitpid: %s", strerror(errno));
        if (p > 0) {
            Job *j = NULL;
            for (int i = 0; i < next && !j; i++)
                if (js.j[i].pid == p) j = &js.j[i];
            if (!j) continue;
            j->pid = 0, running--, done++;
            j->seconds = now_s() - j->t0;
            work += j->seconds;
            char dir[4200], e[2048] = "", errf[4300];
            snprintf(dir, sizeof dir, "%s/%s", outroot, j->name);
            snprintf(errf, sizeof errf, "%s/.%s.stderr", outroot, j->name);
            bool ok = WIFEXITED(wst) && WEXITSTATUS(wst) == 0 && report_ok(dir, NULL, 0, NULL, 0);
            char *said = slurp(errf, NULL); /* the compiler's own error line, when it gave one */
            remove(errf);
            if (said && *said) {
                char *nl = strchr(said, '\n');
                if (nl) *nl = 0;
                snprintf(e, sizeof e, "%s", strncmp(said, "mncc: error: ", 13) ? said : said + 13);
            }
            free(said);
            if (ok) {
                char stamp[4300];
                snprintf(stamp, sizeof stamp, "%s/batch.stamp", dir);
                write_file(stamp, j->key, strlen(j->key));
                j->status = "ok";
            } else {
                j->status = "failed", nfail++;
                if (WIFSIGNALED(wst)) snprintf(e, sizeof e, "the compiler was killed by signal %d (%s)", WTERMSIG(wst), strsignal(WTERMSIG(wst)));
                else if (!*e) snprintf(e, sizeof e, "the compiler exited with %d and left no error in report.json", WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
                j->error = xstrdup(e);
            }
            if (!quiet && !tty)
                fprintf(stderr, "mncc batch: [%d/%d] %s %s (%.1f s)%s%s\n", done, js.n, j->status, j->name, j->seconds, ok ? "" : ": ", ok ? "" : j->error);
        } else if (tty) {
            struct timespec ts = {0, 200 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (tty) { /* the status line: done / total, the passes of the running compiles, ETA */
            char line[400], pass[64];
            int n = snprintf(line, sizeof line, "[%d/%d] %d failed", done, js.n, nfail);
            for (int i = 0; i < next && n < 300; i++)
                if (js.j[i].pid) {
                    char dir[4200];
                    snprintf(dir, sizeof dir, "%s/%s", outroot, js.j[i].name);
                    report_ok(dir, pass, sizeof pass, NULL, 0);
                    n += snprintf(line + n, sizeof line - (size_t)n, " | %.40s: %s", js.j[i].name, *pass ? pass : "starting");
                }
            int compiled = done - nskip;
            if (compiled > 0 && done < js.n) {
                double eta = work / compiled * (js.n - done) / jobs;
                n += snprintf(line + n, sizeof line - (size_t)n, " | ETA %d:%02d", (int)eta / 60, (int)eta % 60);
            }
            fprintf(stderr, "\r\033[K%.*s", 200, line);
        }
    }
    double total = now_s() - t_start;
    if (tty) fprintf(stderr, "\r\033[K");
    /* summary.json and junit.xml */
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "compiler_version", mncc_version);
    cJSON_AddStringToObject(r, "source", src);
    cJSON_AddNumberToObject(r, "jobs", jobs);
    char shard[32];
    snprintf(shard, sizeof shard, "%d/%d", shard_k, shard_n);
    cJSON_AddStringToObject(r, "shard", shard);
    cJSON_AddNumberToObject(r, "models", js.n);
    cJSON_AddNumberToObject(r, "ok", js.n - nfail - nskip);
    cJSON_AddNumberToObject(r, "up_to_date", nskip);
    cJSON_AddNumberToObject(r, "failed", nfail);
    cJSON_AddNumberToObject(r, "wall_s", total);
    cJSON *arr = cJSON_AddArrayToObject(r, "results");
    MNBuf x = {0};
    buf_printf(&x, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\"mncc batch\" tests=\"%d\" failures=\"%d\" skipped=\"0\" time=\"%.3f\">\n",
               js.n, nfail, total);
    for (int i = 0; i < js.n; i++) {
        Job *j = &js.j[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", j->name);
        cJSON_AddStringToObject(e, "model", j->path);
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/%s", outroot, j->name);
        cJSON_AddStringToObject(e, "out", dir);
        cJSON_AddStringToObject(e, "status", j->status);
        cJSON_AddNumberToObject(e, "wall_s", j->seconds);
        if (j->error) cJSON_AddStringToObject(e, "error", j->error);
        cJSON_AddItemToArray(arr, e);
        buf_printf(&x, "<testcase classname=\"mncc\" name=\"");
        xml_escape(&x, j->name);
        buf_printf(&x, "\" time=\"%.3f\">", j->seconds);
        if (j->error) {
            buf_printf(&x, "<failure message=\"");
            xml_escape(&x, j->error);
            buf_printf(&x, "\">");
            xml_escape(&x, j->error);
            buf_printf(&x, "</failure>");
        } else if (!strcmp(j->status, "up to date"))
            buf_printf(&x, "<system-out>up to date: not compiled again</system-out>");
        buf_printf(&x, "</testcase>\n");
    }
    buf_printf(&x, "</testsuite>\n</testsuites>\n");
    char *s = cJSON_Print(r);
    char path[4200];
    snprintf(path, sizeof path, "%s/summary.json", outroot);
    bool ok = write_file(path, s, strlen(s));
    snprintf(path, sizeof path, "%s/junit.xml", outroot);
    ok = write_file(path, x.data, x.len) && ok;
    free(s);
    cJSON_Delete(r);
    buf_free(&x);
    if (!ok) fprintf(stderr, "mncc batch: cannot write summary.json or junit.xml under %s\n", outroot);
    if (!quiet) fprintf(stderr, "mncc batch: %d models, %d compiled, %d up to date, %d failed in %.1f s\n", js.n, js.n - nfail - nskip, nskip, nfail, total);
    for (int i = 0; i < js.n; i++) {
        for (int a = 0; a < js.j[i].argc; a++) free(js.j[i].argv[a]);
        free(js.j[i].argv), free(js.j[i].name), free(js.j[i].path), free(js.j[i].error), free(js.j[i].key);
    }
    free(js.j), free(common);
    return nfail || !ok ? 1 : 0;
}

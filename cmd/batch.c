/* mncc batch: many models compiled for CI.
 *
 *   mncc batch LIST|DIR -o OUTROOT [-j N] [--shard K/N] [--timeout S] [--quiet]
 *              [compile options...]
 *
 * DIR: every *.onnx below it (sorted; symbolic links to directories are not followed).
 * LIST: one model a line, `PATH [options...] [--name NAME]`, the options as on mncc's
 * command line (--input-shape, -O, --preset, ...), PATH relative to the list file;
 * "double quotes" (with \" and \\) hold spaces, and a word starting with # starts a
 * comment. A model's NAME (its path below DIR, or in the LIST, without .onnx, with '/'
 * as '_') names OUTROOT/NAME/; names that would clash get a suffix from a hash of the
 * model's path, so no model's name depends on the others.
 *
 * Each compile is a child process running this same program with --if-changed, so that
 * one model that fails, crashes or hangs (--timeout) cannot take the others with it, and
 * an output that is up to date (the child's compile.stamp: compiler build, model bytes,
 * every effective option, machine file, input shapes and values) is not compiled again;
 * up to N run at once and share the Node Simulation cache, which is safe for concurrent
 * writers (scheduler/sim_cache.c). --shard K/N keeps the models whose name hashes to K-1
 * mod N: the same subset however many models are added, so a CI job matrix can spread
 * the work over machines. SIGINT or SIGTERM stops the running compiles and still writes
 * the summary.
 *
 * Writes OUTROOT/summary.json and OUTROOT/junit.xml (one testcase per model, the
 * compiler's error as the failure message). Exit code 1 if any model failed. On a
 * terminal one status line, cut to its width, is redrawn (models done / total, the pass
 * each running compile is in, from its report.json, and an ETA), with a line for every
 * failure; otherwise a plain line per model; nothing with --quiet. */
#include "driver.h"
#include "version.h"
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    char *name, *path;
    char **argv; /* per-model options */
    int argc;
    const char *status; /* "ok", "failed", "up to date", "not run" */
    char *error;
    double seconds;
    pid_t pid;
    double t0;
    bool killed; /* by --timeout */
} Job;

typedef struct {
    Job *j;
    int n, cap;
} Jobs;

static volatile sig_atomic_t stop_signal;
static void on_signal(int s) { stop_signal = s; }

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t fnv(const char *s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static void free_args(char **argv, int argc) {
    for (int a = 0; a < argc; a++) free(argv[a]);
    free(argv);
}

static void add_job(Jobs *js, const char *name, const char *path, char **argv, int argc) {
    if (js->n == js->cap) {
        js->cap = js->cap ? 2 * js->cap : 64;
        js->j = xrealloc(js->j, sizeof(Job) * (size_t)js->cap);
    }
    Job *j = &js->j[js->n++];
    memset(j, 0, sizeof *j);
    j->name = xstrdup(name);
    j->path = xstrdup(path);
    j->argv = argv;
    j->argc = argc;
    j->status = "not run";
    for (char *s = j->name; *s; s++)
        if (*s == '/') *s = '_';
}

static int by_path(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* every .onnx below root, relative paths; directories reached by a symbolic link are
 * left out (a link back up would loop) */
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
        struct stat st, lst;
        if (stat(full, &st) || lstat(full, &lst)) continue;
        if (S_ISDIR(st.st_mode)) {
            if (!S_ISLNK(lst.st_mode)) walk(root, r, out, n, cap);
        } else if (strlen(r) > 5 && !strcmp(r + strlen(r) - 5, ".onnx")) {
            if (*n == *cap) *cap = *cap ? 2 * *cap : 64, *out = xrealloc(*out, sizeof(char *) * (size_t)*cap);
            (*out)[(*n)++] = xstrdup(r);
        }
    }
    closedir(d);
}

/* the words of a LIST line: blanks separate, "..." quotes (\" and \\ inside), a word
 * that starts with # ends the line; false on an unclosed quote */
static bool words(const char *line, char ***out, int *n) {
    *out = NULL, *n = 0;
    const char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r') p++;
        if (!*p || *p == '#') return true;
        MNBuf w = {0};
        buf_append(&w, "", 0);
        while (*p && *p != ' ' && *p != '\t' && *p != '\r') {
            if (*p == '"') {
                for (p++; *p && *p != '"'; p++) {
                    if (*p == '\\' && (p[1] == '"' || p[1] == '\\')) p++;
                    buf_append(&w, p, 1);
                }
                if (!*p) {
                    buf_free(&w);
                    return false;
                }
                p++;
            } else
                buf_append(&w, p++, 1);
        }
        *out = xrealloc(*out, sizeof(char *) * (size_t)(*n + 1));
        (*out)[(*n)++] = w.data ? w.data : xstrdup("");
    }
}

/* a model name: one path component that is not hidden, . or .. */
static bool good_name(const char *s) { return *s && *s != '.' && !strchr(s, '/'); }

/* a list file: PATH [options...] [--name NAME] per line */
static bool read_list(const char *list, Jobs *js, char *err, size_t errlen) {
    char *text = buf_read_file(list, 0, NULL);
    if (!text) {
        snprintf(err, errlen, "%s: cannot read: %s", list, strerror(errno));
        return false;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", list);
    char *sl = strrchr(dir, '/');
    if (sl)
        *sl = 0;
    else
        snprintf(dir, sizeof dir, ".");
    bool ok = true;
    int lineno = 0;
    for (char *line = text; line && ok; lineno++) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        char **tok;
        int nt;
        if (!words(line, &tok, &nt)) {
            snprintf(err, errlen, "%s:%d: a quote that is not closed", list, lineno + 1);
            ok = false;
        }
        if (ok && nt) {
            char path[8200], name[4096] = "";
            snprintf(path, sizeof path, "%s%s%s", tok[0][0] == '/' ? "" : dir, tok[0][0] == '/' ? "" : "/", tok[0]);
            char **args = xcalloc((size_t)nt + 1, sizeof(char *));
            int na = 0;
            for (int i = 1; i < nt && ok; i++) {
                if (!strcmp(tok[i], "-o") || !strncmp(tok[i], "-o", 2) || !strcmp(tok[i], "--if-changed")) {
                    snprintf(err, errlen, "%s:%d: '%s' in a LIST: every output goes to OUTROOT/NAME (use --name)", list,
                             lineno + 1, tok[i]);
                    ok = false;
                    break;
                }
                bool eq = !strncmp(tok[i], "--name=", 7);
                if (strcmp(tok[i], "--name") && !eq) {
                    args[na++] = xstrdup(tok[i]);
                    continue;
                }
                const char *nm = eq ? tok[i] + 7 : i + 1 < nt ? tok[++i] : "";
                if (!good_name(nm)) {
                    snprintf(err, errlen, "%s:%d: --name needs a name without '/' that does not start with '.'", list,
                             lineno + 1);
                    ok = false;
                } else
                    snprintf(name, sizeof name, "%s", nm);
            }
            if (!*name) {
                snprintf(name, sizeof name, "%s", tok[0]);
                size_t l = strlen(name);
                if (l > 5 && !strcmp(name + l - 5, ".onnx")) name[l - 5] = 0;
                for (char *s = name; *s; s++)
                    if (*s == '/') *s = '_';
                if (name[0] == '.') name[0] = '_'; /* ../x.onnx: not a hidden or parent name */
            }
            for (int k = 0; ok && k < js->n; k++)
                if (!strcmp(js->j[k].name, name)) {
                    snprintf(err, errlen, "%s:%d: model name '%s' used twice (give one --name)", list, lineno + 1,
                             name);
                    ok = false;
                }
            if (ok)
                add_job(js, name, path, args, na);
            else
                free_args(args, na);
        }
        for (int i = 0; i < nt; i++) free(tok[i]);
        free(tok);
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    return ok;
}

/* what a child's report.json says: complete or not, the pass it is in, its error */
static bool report_ok(const char *dir, char *pass, size_t passlen) {
    char path[4200];
    snprintf(path, sizeof path, "%s/report.json", dir);
    char *t = buf_read_file(path, 0, NULL);
    if (pass) *pass = 0;
    if (!t) return false;
    cJSON *r = cJSON_Parse(t);
    free(t);
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(r, "status"),
                *ps = cJSON_GetObjectItemCaseSensitive(r, "passes");
    bool ok = cJSON_IsString(st) && !strcmp(st->valuestring, "ok");
    int np = cJSON_GetArraySize(ps);
    const cJSON *last = np > 0 ? cJSON_GetArrayItem(ps, np - 1) : NULL,
                *nm = last ? cJSON_GetObjectItemCaseSensitive(last, "name") : NULL;
    if (pass && cJSON_IsString(nm)) snprintf(pass, passlen, "%s", nm->valuestring);
    cJSON_Delete(r);
    return ok;
}

/* s with every byte that is not part of valid UTF-8 as '?' (summary.json and junit.xml
 * must parse whatever the file names are) */
static char *utf8(const char *s) {
    size_t n = strlen(s);
    char *o = xmalloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        int len = c < 0x80                          ? 1
                  : (c & 0xe0) == 0xc0 && c >= 0xc2 ? 2
                  : (c & 0xf0) == 0xe0              ? 3
                  : (c & 0xf8) == 0xf0 && c <= 0xf4 ? 4
                                                    : 0;
        bool valid = len > 0 && i + (size_t)len <= n;
        for (int j = 1; valid && j < len; j++) valid = ((unsigned char)s[i + (size_t)j] & 0xc0) == 0x80;
        if (valid) {
            memcpy(o + k, s + i, (size_t)len);
            k += (size_t)len;
            i += (size_t)len;
        } else {
            o[k++] = '?';
            i++;
        }
    }
    o[k] = 0;
    return o;
}

static void xml_escape(MNBuf *b, const char *raw) {
    char *s = utf8(raw);
    for (const char *p = s; *p; p++) switch (*p) {
        case '<': buf_printf(b, "&lt;"); break;
        case '>': buf_printf(b, "&gt;"); break;
        case '&': buf_printf(b, "&amp;"); break;
        case '"': buf_printf(b, "&quot;"); break;
        case '\n': buf_printf(b, "&#10;"); break;
        default:
            if ((unsigned char)*p < 0x20 && *p != '\t')
                buf_printf(b, "?");
            else
                buf_append(b, p, 1);
        }
    free(s);
}

static void json_str(cJSON *o, const char *key, const char *raw) {
    char *s = utf8(raw);
    cJSON_AddStringToObject(o, key, s);
    free(s);
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

static bool mkdir_p(const char *dir) {
    char *p = xstrdup(dir);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0777) && errno != EEXIST) break;
            *s = '/';
        }
    bool ok = !mkdir(p, 0777) || errno == EEXIST;
    free(p);
    struct stat st;
    return ok && !stat(dir, &st) && S_ISDIR(st.st_mode);
}

static int usage(const char *msg) {
    fprintf(stderr,
            "mncc batch: %s\nusage: mncc batch LIST|DIR -o OUTROOT [-j N] [--shard K/N] [--timeout S] [--quiet] "
            "[compile options...]\n",
            msg);
    return 2;
}

/* "K/N" exactly */
static bool parse_shard(const char *s, int *k, int *n) {
    char *end;
    long a = strtol(s, &end, 10);
    if (end == s || *end != '/') return false;
    const char *q = end + 1;
    long b = strtol(q, &end, 10);
    if (end == q || *end || b < 1 || b > 1000000 || a < 1 || a > b) return false;
    *k = (int)a, *n = (int)b;
    return true;
}

static bool parse_count(const char *s, long lo, long hi, long *v) {
    char *end;
    *v = strtol(s, &end, 10);
    return end != s && !*end && *v >= lo && *v <= hi;
}

/* the value of flag a at argv[i] ("-j 2", "-j2", "--shard=1/2"), NULL if a is not it */
static const char *flag_value(const char *flag, int argc, char **argv, int *i) {
    const char *a = argv[*i];
    size_t n = strlen(flag);
    if (strncmp(a, flag, n)) return NULL;
    if (!a[n]) return *i + 1 < argc ? argv[++*i] : "";
    if (a[n] == '=') return a + n + 1;
    if (flag[1] != '-') return a + n; /* -j4 */
    return NULL;
}

/* the terminal's width, 80 when it does not say */
static int columns(void) {
    struct winsize w;
    return !ioctl(2, TIOCGWINSZ, &w) && w.ws_col > 10 ? w.ws_col : 80;
}

int mncc_batch(int argc, char **argv) {
    const char *src = NULL, *outroot = NULL, *v;
    long jobs = sysconf(_SC_NPROCESSORS_ONLN), timeout = 0;
    int shard_k = 1, shard_n = 1;
    bool quiet = false;
    if (jobs < 1) jobs = 1;
    const char **common = xcalloc((size_t)argc + 4, sizeof(char *));
    int ncommon = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if ((v = flag_value("-o", argc, argv, &i))) {
            if (!*v) {
                free(common);
                return usage("-o needs a directory");
            }
            outroot = v;
        } else if ((v = flag_value("-j", argc, argv, &i))) {
            if (!parse_count(v, 1, 256, &jobs)) {
                free(common);
                return usage("-j needs a number of jobs from 1 to 256");
            }
        } else if ((v = flag_value("--shard", argc, argv, &i))) {
            if (!parse_shard(v, &shard_k, &shard_n)) {
                free(common);
                return usage("--shard needs K/N with 1 <= K <= N");
            }
        } else if ((v = flag_value("--timeout", argc, argv, &i))) {
            if (!parse_count(v, 0, 1000000, &timeout)) {
                free(common);
                return usage("--timeout needs seconds (0: none)");
            }
        } else if (!strcmp(a, "--quiet"))
            quiet = true;
        else if (a[0] != '-' && !src)
            src = a;
        else if (a[0] == '-' && strcmp(a, "--summary") && strcmp(a, "--if-changed")) {
            /* a compile option: passed to every compile, with its value when it takes one */
            common[ncommon++] = argv[i];
            int k = opt_flag(a);
            bool takes =
                !strchr(a, '=') && (!strcmp(a, "-O") || !strcmp(a, "--input-shape") || !strcmp(a, "--input-value") ||
                                    !strcmp(a, "--preset") || !strcmp(a, "--option-json") ||
                                    !strcmp(a, "--cache-dir") || (k >= 0 && strcmp(mn_opt_info[k].type, "BOOL")));
            if (takes && i + 1 < argc) common[ncommon++] = argv[++i];
        } else
            return free(common), usage(a[0] == '-' ? "--summary and --if-changed do not apply to a batch"
                                                   : "more than one LIST or DIR given");
    }
    if (!src || !outroot) {
        free(common);
        return usage("needs a LIST or DIR and -o OUTROOT");
    }
    /* the jobs share the cores: a thread each, unless the command line says otherwise (it comes later, and wins) */
    if (jobs > 1) {
        memmove(common + 2, common, sizeof(char *) * (size_t)ncommon);
        common[0] = "-O";
        common[1] = "num_threads=1";
        ncommon += 2;
    }
    Jobs js = {0};
    char err[4400];
    struct stat st;
    int rc = 1;
    if (stat(src, &st)) {
        fprintf(stderr, "mncc batch: %s: %s\n", src, strerror(errno));
        goto out;
    }
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
    } else if (!read_list(src, &js, err, sizeof err)) {
        fprintf(stderr, "mncc batch: %s\n", err);
        goto out;
    }
    /* names alike after '/' -> '_': a suffix from the model's own path, so a name never
     * depends on which other models there are */
    bool *clash = xcalloc((size_t)js.n + 1, sizeof(bool));
    for (int round = 0, again = 1; again && round < 8; round++) {
        again = 0;
        for (int i = 0; i < js.n; i++)
            for (int k = 0; k < js.n && !clash[i]; k++) clash[i] = k != i && !strcmp(js.j[i].name, js.j[k].name);
        for (int i = 0; i < js.n; i++)
            if (clash[i]) {
                char salt[16];
                snprintf(salt, sizeof salt, "%d", round);
                char *key = xmalloc(strlen(js.j[i].path) + 20);
                sprintf(key, "%s%s", js.j[i].path, round ? salt : "");
                char *nn = xmalloc(strlen(js.j[i].name) + 20);
                sprintf(nn, "%s_%08llx", js.j[i].name, (unsigned long long)(fnv(key) & 0xffffffffu));
                free(key);
                free(js.j[i].name);
                js.j[i].name = nn;
                clash[i] = false;
                again = 1;
            }
    }
    free(clash);
    /* the shard */
    int nsel = 0;
    for (int i = 0; i < js.n; i++) {
        if ((int)(fnv(js.j[i].name) % (uint64_t)shard_n) == shard_k - 1)
            js.j[nsel++] = js.j[i];
        else {
            free_args(js.j[i].argv, js.j[i].argc);
            free(js.j[i].name);
            free(js.j[i].path);
        }
    }
    js.n = nsel;
    if (!mkdir_p(outroot)) {
        fprintf(stderr, "mncc batch: cannot create %s: %s\n", outroot, strerror(errno));
        goto out;
    }
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0)
        snprintf(self, sizeof self, "%s", argv[0]);
    else
        self[sl] = 0;
    struct sigaction sa = {0}, old_int, old_term;
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    bool tty = !quiet && isatty(2);
    double t_start = now_s(), drawn = 0;
    int next = 0, running = 0, done = 0, nfail = 0, nskip = 0, ncompiled = 0;
    double work = 0; /* seconds of the compiles done, for the ETA */
    while (done < js.n && !(stop_signal && !running)) {
        while (!stop_signal && running < jobs && next < js.n) {
            Job *j = &js.j[next++];
            char dir[4200], errf[4300];
            snprintf(dir, sizeof dir, "%s/%s", outroot, j->name);
            snprintf(errf, sizeof errf, "%s/.%s.stderr", outroot, j->name);
            const char **av = xcalloc((size_t)(ncommon + j->argc + 8), sizeof(char *));
            int na = 0;
            av[na++] = self;
            av[na++] = j->path;
            av[na++] = "-o";
            av[na++] = dir;
            av[na++] = "--if-changed";
            for (int k = 0; k < ncommon; k++) av[na++] = common[k];
            for (int k = 0; k < j->argc; k++) av[na++] = j->argv[k];
            fflush(NULL);
            j->t0 = now_s();
            pid_t pid = fork();
            if (pid == 0) {
                setpgid(0, 0); /* its own group: a stop reaches whatever it runs */
                int fd = open("/dev/null", O_WRONLY), fe = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0666);
                if (fd >= 0) dup2(fd, 1);
                dup2(fe >= 0 ? fe : fd, 2);
                execv(self, (char **)av);
                _exit(127);
            }
            free(av);
            if (pid < 0) {
                j->status = "failed";
                j->error = xstrdup("cannot start a compile (fork failed)");
                done++;
                nfail++;
                continue;
            }
            setpgid(pid, pid);
            j->pid = pid;
            running++;
        }
        if (stop_signal) /* stop the running compiles; each is reaped below */
            for (int i = 0; i < next; i++)
                if (js.j[i].pid) kill(-js.j[i].pid, SIGKILL);
        if (timeout > 0)
            for (int i = 0; i < next; i++)
                if (js.j[i].pid && !js.j[i].killed && now_s() - js.j[i].t0 > (double)timeout) {
                    js.j[i].killed = true;
                    kill(-js.j[i].pid, SIGKILL);
                }
        int reaped = 0, wst;
        pid_t p;
        while (running && (p = waitpid(-1, &wst, WNOHANG)) > 0) {
            Job *j = NULL;
            for (int i = 0; i < next && !j; i++)
                if (js.j[i].pid == p) j = &js.j[i];
            if (!j) continue;
            reaped++;
            j->pid = 0;
            running--;
            done++;
            j->seconds = now_s() - j->t0;
            char dir[4200], e[2048] = "", errf[4300];
            snprintf(dir, sizeof dir, "%s/%s", outroot, j->name);
            snprintf(errf, sizeof errf, "%s/.%s.stderr", outroot, j->name);
            char *said = buf_read_file(errf, 0, NULL); /* the compiler's own line */
            remove(errf);
            bool fresh = said && strstr(said, " is up to date\n");
            bool ok = WIFEXITED(wst) && WEXITSTATUS(wst) == 0 && (fresh || report_ok(dir, NULL, 0));
            if (said && *said) {
                char *nl = strchr(said, '\n');
                if (nl) *nl = 0;
                snprintf(e, sizeof e, "%s", strncmp(said, "mncc: error: ", 13) ? said : said + 13);
            }
            free(said);
            if (ok) {
                j->status = fresh ? "up to date" : "ok";
                if (fresh)
                    nskip++;
                else {
                    ncompiled++;
                    work += j->seconds;
                }
            } else {
                char why[2300];
                j->status = "failed";
                nfail++;
                if (j->killed)
                    snprintf(why, sizeof why, "timed out after %ld s%s%s", timeout, *e ? ": " : "", e);
                else if (stop_signal && WIFSIGNALED(wst))
                    snprintf(why, sizeof why, "stopped: the batch got signal %d", (int)stop_signal);
                else if (WIFSIGNALED(wst))
                    snprintf(why, sizeof why, "the compiler was killed by signal %d (%s)%s%s", WTERMSIG(wst),
                             strsignal(WTERMSIG(wst)), *e ? ": " : "", e);
                else if (*e)
                    snprintf(why, sizeof why, "%s", e);
                else
                    snprintf(why, sizeof why, "the compiler exited with %d and said nothing",
                             WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
                j->error = xstrdup(why);
            }
            if (!quiet && (!tty || !ok)) {
                char *nm = utf8(j->name);
                fprintf(stderr, "%s[%d/%d] %s %s (%.1f s)%s%s\n", tty ? "\r\033[K" : "mncc batch: ", done, js.n,
                        j->status, nm, j->seconds, ok ? "" : ": ", ok ? "" : j->error);
                free(nm);
                drawn = 0;
            }
        }
        if (!reaped && running) {
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (tty && now_s() - drawn > 0.2) { /* the status line: done / total, the passes of the running compiles, ETA */
            drawn = now_s();
            MNBuf line = {0};
            buf_printf(&line, "[%d/%d] %d failed", done, js.n, nfail);
            for (int i = 0; i < next; i++)
                if (js.j[i].pid) {
                    char dir[4200], pass[64];
                    snprintf(dir, sizeof dir, "%s/%s", outroot, js.j[i].name);
                    report_ok(dir, pass, sizeof pass);
                    char *nm = utf8(js.j[i].name);
                    buf_printf(&line, " | %s: %s", nm, *pass ? pass : "starting");
                    free(nm);
                }
            if (ncompiled > 0 && done < js.n) {
                double eta = work / ncompiled * (js.n - done) / (double)jobs;
                buf_printf(&line, " | ETA %d:%02d", (int)eta / 60, (int)eta % 60);
            }
            int w = columns() - 1;
            fprintf(stderr, "\r\033[K%.*s", (int)line.len < w ? (int)line.len : w, line.data);
            buf_free(&line);
        }
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    double total = now_s() - t_start;
    if (tty) fprintf(stderr, "\r\033[K");
    int nrun = js.n - (next < js.n ? js.n - next : 0);
    /* summary.json and junit.xml */
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "compiler_version", mncc_version);
    json_str(r, "source", src);
    cJSON_AddNumberToObject(r, "jobs", (double)jobs);
    char shard[32];
    snprintf(shard, sizeof shard, "%d/%d", shard_k, shard_n);
    cJSON_AddStringToObject(r, "shard", shard);
    cJSON_AddNumberToObject(r, "models", js.n);
    cJSON_AddNumberToObject(r, "ok", ncompiled);
    cJSON_AddNumberToObject(r, "up_to_date", nskip);
    cJSON_AddNumberToObject(r, "failed", nfail);
    cJSON_AddNumberToObject(r, "not_run", js.n - nrun);
    if (stop_signal) cJSON_AddNumberToObject(r, "stopped_by_signal", (double)stop_signal);
    cJSON_AddNumberToObject(r, "wall_s", total);
    cJSON *arr = cJSON_AddArrayToObject(r, "results");
    MNBuf x = {0};
    buf_printf(&x,
               "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\"mncc batch\" tests=\"%d\" "
               "failures=\"%d\" skipped=\"%d\" time=\"%.3f\">\n",
               js.n, nfail, js.n - nrun, total);
    for (int i = 0; i < js.n; i++) {
        Job *j = &js.j[i];
        cJSON *e = cJSON_CreateObject();
        json_str(e, "name", j->name);
        json_str(e, "model", j->path);
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/%s", outroot, j->name);
        json_str(e, "out", dir);
        cJSON_AddStringToObject(e, "status", j->status);
        cJSON_AddNumberToObject(e, "wall_s", j->seconds);
        if (j->error) json_str(e, "error", j->error);
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
        else if (!strcmp(j->status, "not run"))
            buf_printf(&x, "<skipped message=\"the batch was stopped\"/>");
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
    if (!quiet)
        fprintf(stderr, "mncc batch: %d models, %d compiled, %d up to date, %d failed%s in %.1f s\n", js.n, ncompiled,
                nskip, nfail, stop_signal ? ", stopped by a signal" : "", total);
    rc = stop_signal ? 128 + (int)stop_signal : nfail || !ok ? 1 : 0;
out:
    for (int i = 0; i < js.n; i++) {
        free_args(js.j[i].argv, js.j[i].argc);
        free(js.j[i].name);
        free(js.j[i].path);
        free(js.j[i].error);
    }
    free(js.j);
    free(common);
    return rc;
}

#include "options.h"
#include "buf.h"
#include "machine.h"
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const MNOptInfo mn_opt_info[MN_OPT_COUNT] = {
#define X(name, type, dflt, values, help) {#name, #type, dflt, values, help},
    MN_OPTIONS(X)
#undef X
};

static bool parse_int(const char *s, int64_t *out) {
    if (!*s) return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < 0) return false;
    *out = v;
    return true;
}

/* index of v among the |-separated values, -1 if absent */
static int enum_index(const char *values, const char *v, size_t vl) {
    int k = 0;
    for (const char *p = values; *p; k++) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == vl && !strncmp(p, v, n)) return k;
        if (!bar) break;
        p = bar + 1;
    }
    return -1;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool is_type(int i, const char *t) { return !strcmp(mn_opt_info[i].type, t); }

static bool parse_value(int i, const char *v, int64_t *out) {
    if (is_type(i, "STRING")) {
        *out = 0;
        return true;
    }
    if (is_type(i, "BOOL")) {
        if (!strcmp(v, "true") || !strcmp(v, "1")) {
            *out = 1;
            return true;
        }
        if (!strcmp(v, "false") || !strcmp(v, "0")) {
            *out = 0;
            return true;
        }
        return false;
    }
    if (!strcmp(mn_opt_info[i].type, "ENUM")) {
        int k = enum_index(mn_opt_info[i].values, v, strlen(v));
        if (k < 0) return false;
        *out = k;
        return true;
    }
    return parse_int(v, out);
}

const char *opt_value_text(const MNOptions *o, int id, char *buf, size_t n) {
    if (is_type(id, "STRING"))
        snprintf(buf, n, "%s", o->sval[id] ? o->sval[id] : "");
    else if (is_type(id, "BOOL"))
        snprintf(buf, n, "%s", o->ival[id] ? "true" : "false");
    else if (!strcmp(mn_opt_info[id].type, "ENUM")) {
        const char *p = mn_opt_info[id].values;
        for (int64_t k = 0; k < o->ival[id] && strchr(p, '|'); k++) p = strchr(p, '|') + 1;
        const char *bar = strchr(p, '|');
        snprintf(buf, n, "%.*s", (int)(bar ? (size_t)(bar - p) : strlen(p)), p);
    } else
        snprintf(buf, n, "%lld", (long long)o->ival[id]);
    return buf;
}

void opt_init(MNOptions *o) {
    memset(o, 0, sizeof *o);
    for (int i = 0; i < MN_OPT_COUNT; i++) {
        if (!parse_value(i, mn_opt_info[i].dflt, &o->ival[i])) die("bad default for option %s", mn_opt_info[i].name);
        if (is_type(i, "STRING")) o->sval[i] = xstrdup(mn_opt_info[i].dflt);
    }
}

void opt_free(MNOptions *o) {
    for (int i = 0; i < o->nshapes; i++) free((char *)o->shapes[i].name);
    free(o->shapes);
    for (int i = 0; i < o->nvalues; i++) {
        free((char *)o->values[i].name);
        free((char *)o->values[i].path);
    }
    free(o->values);
    for (int i = 0; i < MN_OPT_COUNT; i++) {
        free(o->sval[i]);
        free(o->from[i]);
    }
    free(o->preset);
    free(o->option_file);
}

bool opt_set_from(MNOptions *o, const char *kv, MNOptSource src, const char *file, char *err, size_t errlen) {
    const char *eq = strchr(kv, '=');
    size_t kl = eq ? (size_t)(eq - kv) : strlen(kv);
    const char *where = src == MN_SRC_CMDLINE ? "" : file;
    for (int i = 0; i < MN_OPT_COUNT; i++) {
        if (strlen(mn_opt_info[i].name) != kl || strncmp(mn_opt_info[i].name, kv, kl)) continue;
        int64_t v;
        if (!eq || !parse_value(i, eq + 1, &v)) {
            const char *got = eq ? eq + 1 : "";
            if (is_type(i, "ENUM"))
                snprintf(err, errlen, "%s%soption %s: '%s' is not one of %s", where, *where ? ": " : "",
                         mn_opt_info[i].name, got, mn_opt_info[i].values);
            else if (is_type(i, "BOOL"))
                snprintf(err, errlen, "%s%soption %s: expected true or false, got '%s'", where, *where ? ": " : "",
                         mn_opt_info[i].name, got);
            else if (is_type(i, "STRING"))
                snprintf(err, errlen, "%s%soption %s needs a value (%s=TEXT)", where, *where ? ": " : "",
                         mn_opt_info[i].name, mn_opt_info[i].name);
            else
                snprintf(err, errlen, "%s%soption %s: expected a non-negative integer, got '%s'", where,
                         *where ? ": " : "", mn_opt_info[i].name, got);
            return false;
        }
        o->ival[i] = v;
        if (is_type(i, "STRING")) {
            free(o->sval[i]);
            o->sval[i] = xstrdup(eq + 1);
        }
        o->src[i] = src;
        free(o->from[i]);
        o->from[i] = file ? xstrdup(file) : NULL;
        return true;
    }
    size_t n = (size_t)snprintf(err, errlen, "%s%sunknown option '%.*s'; valid options:", where, *where ? ": " : "",
                                (int)kl, kv);
    for (int i = 0; i < MN_OPT_COUNT && n < errlen; i++)
        n += (size_t)snprintf(err + n, errlen - n, " %s", mn_opt_info[i].name);
    return false;
}

bool opt_set(MNOptions *o, const char *kv, char *err, size_t errlen) {
    return opt_set_from(o, kv, MN_SRC_CMDLINE, NULL, err, errlen);
}

int opt_flag(const char *flag) {
    if (strncmp(flag, "--", 2)) return -1;
    for (int i = 0; i < MN_OPT_COUNT; i++) {
        const char *a = flag + 2, *b = mn_opt_info[i].name;
        while (*a && *b && (*a == *b || (*a == '-' && *b == '_'))) {
            a++;
            b++;
        }
        if (!*a && !*b) return i;
    }
    return -1;
}

const char *opt_source_text(const MNOptions *o, int i, char *buf, size_t n) {
    switch (o->src[i]) {
    case MN_SRC_PRESET: snprintf(buf, n, "preset %s", o->from[i] ? o->from[i] : ""); break;
    case MN_SRC_OPTION_FILE: snprintf(buf, n, "option file %s", o->from[i] ? o->from[i] : ""); break;
    case MN_SRC_CMDLINE: snprintf(buf, n, "command line"); break;
    default: snprintf(buf, n, "default"); break;
    }
    return buf;
}

bool opt_dump_after_has(const MNOptions *o, const char *pass) {
    const char *p = o->sval[MN_OPT_dump_after];
    size_t pl = strlen(pass);
    while (p && *p) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        if (l == pl && !strncmp(p, pass, l)) return true;
        p = c ? c + 1 : NULL;
    }
    return false;
}

void opt_preset_path(const char *name, char *path, size_t n) { mn_data_named(name, "", path, n); }

static char *slurp_text(const char *path, char *err, size_t errlen) {
    errno = 0;
    char *t = buf_read_file(path, 1u << 20, NULL);
    if (!t)
        snprintf(err, errlen, "%s: cannot read (or larger than 1 MiB): %s", path,
                 errno ? strerror(errno) : "too large");
    return t;
}

/* every member of object obj as key=value from source src */
static bool apply_object(MNOptions *o, const cJSON *obj, MNOptSource src, const char *file, char *err, size_t errlen) {
    for (const cJSON *it = obj->child; it; it = it->next) {
        MNBuf kv = {0};
        if (cJSON_IsString(it))
            buf_printf(&kv, "%s=%s", it->string, it->valuestring);
        else if (cJSON_IsBool(it))
            buf_printf(&kv, "%s=%s", it->string, cJSON_IsTrue(it) ? "true" : "false");
        else if (cJSON_IsNumber(it) && it->valuedouble >= 0 && it->valuedouble < 9.2e18 &&
                 it->valuedouble == (double)(int64_t)it->valuedouble)
            buf_printf(&kv, "%s=%lld", it->string, (long long)it->valuedouble);
        else
            return snprintf(err, errlen, "%s: option %s: expected a string, a boolean or a non-negative integer", file,
                            it->string),
                   false;
        bool ok = opt_set_from(o, kv.data, src, file, err, errlen);
        buf_free(&kv);
        if (!ok) return false;
    }
    return true;
}

/* from: the preset naming this one as its base ("" for the user's): a relative path
 * is relative to that preset's folder */
/* the NAME of every NAME.json in dir, space-separated, into buf */
void opt_list_json(const char *dir, char *buf, size_t n) {
    DIR *d = opendir(dir);
    char *names[256];
    int k = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && k < 256) {
        size_t l = strlen(e->d_name);
        if (l > 5 && !strcmp(e->d_name + l - 5, ".json")) {
            names[k] = xstrdup(e->d_name);
            names[k++][l - 5] = 0;
        }
    }
    if (d) closedir(d);
    qsort(names, (size_t)k, sizeof(char *), cmp_str);
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < k; i++) {
        if (at < n) at += (size_t)snprintf(buf + at, n - at, " %s", names[i]);
        free(names[i]);
    }
    if (!k && n > 5) snprintf(buf, n, " (none)");
}

static bool load_preset(MNOptions *o, const char *name, const char *from, int depth, char *err, size_t errlen) {
    char path[4200];
    const char *slash = strrchr(from, '/');
    if ((strchr(name, '/') || strstr(name, ".json")) && name[0] != '/' && slash)
        snprintf(path, sizeof path, "%.*s/%s", (int)(slash - from), from, name);
    else
        opt_preset_path(name, path, sizeof path);
    if (depth > 8) {
        snprintf(err, errlen, "preset %s: more than 8 presets deep in \"base\" (a cycle?)", name);
        return false;
    }
    char *text = slurp_text(path, err, errlen);
    if (!text) {
        if (!strchr(name, '/') && !strstr(name, ".json")) {
            size_t n =
                (size_t)snprintf(err, errlen, "preset '%s' not found (looked for %s); shipped presets:", name, path);
            char dir[4200];
            snprintf(dir, sizeof dir, "%s", path);
            char *sl = strrchr(dir, '/');
            if (sl) *sl = 0;
            opt_list_json(dir, err + (n < errlen ? n : errlen - 1), n < errlen ? errlen - n : 1);
        }
        return false;
    }
    cJSON *j = cJSON_Parse(text);
    free(text);
    bool ok = false;
    const cJSON *opts = j ? cJSON_GetObjectItemCaseSensitive(j, "options") : NULL,
                *base = j ? cJSON_GetObjectItemCaseSensitive(j, "base") : NULL;
    if (!cJSON_IsObject(j))
        snprintf(err, errlen, "%s: not a JSON object", path);
    else if (opts && !cJSON_IsObject(opts))
        snprintf(err, errlen, "%s: \"options\" is not an object", path);
    else if (base && !cJSON_IsString(base))
        snprintf(err, errlen, "%s: \"base\" is not a preset name", path);
    else {
        ok = true;
        for (const cJSON *it = j->child; it && ok; it = it->next)
            if (strcmp(it->string, "options") && strcmp(it->string, "base") && strcmp(it->string, "description")) {
                ok = false;
                snprintf(err, errlen, "%s: unknown key '%s' (a preset has description, base and options)", path,
                         it->string);
            }
        if (ok && base) ok = load_preset(o, base->valuestring, path, depth + 1, err, errlen);
        /* a value is said to come from the preset file that sets it (a base's own) */
        if (ok && opts) ok = apply_object(o, opts, MN_SRC_PRESET, path, err, errlen);
    }
    cJSON_Delete(j);
    return ok;
}

bool opt_load_preset(MNOptions *o, const char *name, char *err, size_t errlen) {
    free(o->preset);
    o->preset = xstrdup(name);
    return load_preset(o, name, "", 0, err, errlen);
}

bool opt_load_json(MNOptions *o, const char *path, char *err, size_t errlen) {
    free(o->option_file);
    o->option_file = xstrdup(path);
    char *text = slurp_text(path, err, errlen);
    if (!text) return false;
    cJSON *j = cJSON_Parse(text);
    free(text);
    const cJSON *opts = j ? cJSON_GetObjectItemCaseSensitive(j, "options") : NULL;
    bool ok = false;
    if (!cJSON_IsObject(j))
        snprintf(err, errlen, "%s: not a JSON object", path);
    else if (opts && !cJSON_IsObject(opts))
        snprintf(err, errlen, "%s: \"options\" is not an object", path);
    else {
        ok = true;
        for (const cJSON *it = j->child; opts && it && ok;
             it = it->next) /* beside "options": nothing that would be ignored */
            if (strcmp(it->string, "options") && strcmp(it->string, "description")) {
                ok = false;
                snprintf(err, errlen,
                         "%s: unknown key '%s' beside \"options\" (an option file has options and description)", path,
                         it->string);
            }
        if (ok) ok = apply_object(o, opts ? opts : j, MN_SRC_OPTION_FILE, path, err, errlen);
    }
    cJSON_Delete(j);
    return ok;
}

bool opt_add_input_shape(MNOptions *o, const char *spec, char *err, size_t errlen) {
    const char *eq = strrchr(spec, '=');
    if (!eq || eq == spec) {
        snprintf(err, errlen, "--input-shape expects NAME=d1,d2,... (got '%s')", spec);
        return false;
    }
    MNInputShape s = {0};
    const char *p = eq + 1;
    if (*p) {
        for (;;) {
            char *end;
            errno = 0;
            long long v = strtoll(p, &end, 10);
            if (end == p || errno || v < 0) {
                snprintf(err, errlen, "--input-shape %s: dims must be non-negative integers", spec);
                return false;
            }
            if (s.rank == MN_MAX_RANK) {
                snprintf(err, errlen, "--input-shape %s: more than %d dims", spec, MN_MAX_RANK);
                return false;
            }
            s.dims[s.rank++] = v;
            if (*end == 0) break;
            if (*end != ',') {
                snprintf(err, errlen, "--input-shape %s: unexpected '%c'", spec, *end);
                return false;
            }
            p = end + 1;
        }
    }
    char *name = xmalloc((size_t)(eq - spec) + 1);
    memcpy(name, spec, (size_t)(eq - spec));
    name[eq - spec] = 0;
    for (int i = 0; i < o->nshapes; i++)
        if (!strcmp(o->shapes[i].name, name)) {
            snprintf(err, errlen, "--input-shape given twice for '%s'", name);
            free(name);
            return false;
        }
    s.name = name;
    o->shapes = xrealloc(o->shapes, sizeof(MNInputShape) * (size_t)(o->nshapes + 1));
    o->shapes[o->nshapes++] = s;
    return true;
}

bool opt_add_input_value(MNOptions *o, const char *spec, char *err, size_t errlen) {
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || !eq[1]) {
        snprintf(err, errlen, "--input-value expects NAME=FILE.pb (got '%s')", spec);
        return false;
    }
    char *name = xmalloc((size_t)(eq - spec) + 1);
    memcpy(name, spec, (size_t)(eq - spec));
    name[eq - spec] = 0;
    for (int i = 0; i < o->nvalues; i++)
        if (!strcmp(o->values[i].name, name)) {
            snprintf(err, errlen, "--input-value given twice for '%s'", name);
            free(name);
            return false;
        }
    o->values = xrealloc(o->values, sizeof(MNInputValue) * (size_t)(o->nvalues + 1));
    o->values[o->nvalues++] = (MNInputValue){name, xstrdup(eq + 1)};
    return true;
}

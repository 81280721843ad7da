#include "options.h"
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

static bool parse_value(int i, const char *v, int64_t *out) {
    if (!strcmp(mn_opt_info[i].type, "ENUM")) {
        int k = enum_index(mn_opt_info[i].values, v, strlen(v));
        if (k < 0) return false;
        *out = k;
        return true;
    }
    return parse_int(v, out);
}

const char *opt_value_text(const MNOptions *o, int id, char *buf, size_t n) {
    if (!strcmp(mn_opt_info[id].type, "ENUM")) {
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
    for (int i = 0; i < MN_OPT_COUNT; i++)
        if (!parse_value(i, mn_opt_info[i].dflt, &o->ival[i])) die("bad default for option %s", mn_opt_info[i].name);
}

void opt_free(MNOptions *o) {
    for (int i = 0; i < o->nshapes; i++) free((char *)o->shapes[i].name);
    free(o->shapes);
    for (int i = 0; i < o->nvalues; i++) free((char *)o->values[i].name), free((char *)o->values[i].path);
    free(o->values);
    for (int i = 0; i < o->ndump_after; i++) free(o->dump_after[i]);
    free(o->dump_after);
}

bool opt_set(MNOptions *o, const char *kv, char *err, size_t errlen) {
    const char *eq = strchr(kv, '=');
    size_t kl = eq ? (size_t)(eq - kv) : strlen(kv);
    for (int i = 0; i < MN_OPT_COUNT; i++) {
        if (strlen(mn_opt_info[i].name) != kl || strncmp(mn_opt_info[i].name, kv, kl)) continue;
        if (!eq || !parse_value(i, eq + 1, &o->ival[i])) {
            if (!strcmp(mn_opt_info[i].type, "ENUM"))
                snprintf(err, errlen, "option %s: '%s' is not one of %s", mn_opt_info[i].name, eq ? eq + 1 : "", mn_opt_info[i].values);
            else
                snprintf(err, errlen, "option %s: expected a non-negative integer, got '%s'", mn_opt_info[i].name, eq ? eq + 1 : "");
            return false;
        }
        o->src[i] = MN_SRC_CMDLINE;
        return true;
    }
    size_t n = (size_t)snprintf(err, errlen, "unknown option '%.*s'; valid options:", (int)kl, kv);
    for (int i = 0; i < MN_OPT_COUNT && n < errlen; i++) n += (size_t)snprintf(err + n, errlen - n, " %s", mn_opt_info[i].name);
    return false;
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

bool opt_add_dump_after(MNOptions *o, const char *list) {
    char *copy = xstrdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        o->dump_after = xrealloc(o->dump_after, sizeof(char *) * (size_t)(o->ndump_after + 1));
        o->dump_after[o->ndump_after++] = xstrdup(t);
    }
    free(copy);
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

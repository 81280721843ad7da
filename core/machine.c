#include "machine.h"
#include "buf.h"
#include "diag.h"
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const char *section, *key;
    char type; /* i: int64, d: double, s: string */
    size_t off;
    double lo, hi;
} Field;

#define FI(sec, key, field, lo, hi) \
    { sec, key, 'i', offsetof(MNMachine, field), lo, hi }
#define FD(sec, key, field, lo, hi) \
    { sec, key, 'd', offsetof(MNMachine, field), lo, hi }
#define FINT(sec, key, field, lo, hi) \
    { sec, key, 'n', offsetof(MNMachine, field), lo, hi }

static const Field fields[] = {
    FINT("hierarchy", "groups", groups, 1, 64),
    FINT("hierarchy", "l2b_per_group", l2b_per_group, 1, 64),
    FINT("hierarchy", "l1b_per_l2b", l1b_per_l2b, 1, 64),
    FINT("hierarchy", "mab_per_l1b", mab_per_l1b, 1, 64),
    FINT("hierarchy", "pe_per_mab", pe_per_mab, 4, 4),
    FI("memory_lw", "lm0", lm0_lw, 8, 2048),
    FI("memory_lw", "lm1", lm1_lw, 8, 2048),
    FI("memory_lw", "grf0", grf0_lw, 8, 256),
    FI("memory_lw", "grf1", grf1_lw, 8, 256),
    FI("memory_lw", "l1bm", l1bm_lw, 64, 1 << 20),
    FI("memory_lw", "l2bm", l2bm_lw, 256, 1 << 22),
    FI("memory_lw", "dram_per_group", dram_lw, 1024, (double)(1ll << 40)),
    FI("memory_lw", "pdm_per_group", pdm_lw, 1024, (double)(1ll << 32)),
    FINT("word_bits", "half", half_bits, 16, 16),
    FINT("word_bits", "word", word_bits, 32, 32),
    FINT("word_bits", "long", long_bits, 64, 64),
    FD(NULL, "clock_mhz", clock_mhz, 1, 1e5),
    FINT("issue", "cycles_per_step", cycles_per_step, 4, 4),
    FINT("issue", "mv_issue_steps", mv_issue_steps, 1, 64),
    FINT("issue", "lm_read_after_write_steps", lm_raw_steps, 0, 64),
    FINT("issue", "grf_read_after_write_steps", grf_raw_steps, 0, 64),
    FINT("issue", "l1bm_read_after_write_steps", l1bm_raw_steps, 0, 64),
    FINT("issue", "l2bm_read_after_write_steps", l2bm_raw_steps, 0, 64),
    FD("bandwidth_lw_per_cycle", "l1bm_pe_broadcast", bw_l1bm_pe_broadcast, 0.01, 1e4),
    FD("bandwidth_lw_per_cycle", "l1bm_pe_distribute", bw_l1bm_pe_distribute, 0.01, 1e4),
    FD("bandwidth_lw_per_cycle", "l2bm_l1bm_broadcast", bw_l2bm_l1bm_broadcast, 0.01, 1e4),
    FD("bandwidth_lw_per_cycle", "l2bm_l1bm_distribute", bw_l2bm_l1bm_distribute, 0.01, 1e4),
    FD("bandwidth_lw_per_cycle", "dram_l2bm_per_group", bw_dram_l2bm, 0.01, 1e4),
    FD("bandwidth_lw_per_cycle", "pdm_per_group", bw_pdm, 0.01, 1e4),
    FD("bandwidth_lw_per_cycle", "l2bm_mv", bw_l2bm_mv, 0.01, 1e4),
    FD("bandwidth_lw_per_cycle", "cross_group", bw_cross_group, 0.01, 1e4),
    FINT("latency_cycles", "dram", dram_latency_cycles, 0, 1 << 20),
    FINT("latency_cycles", "pdm", pdm_latency_cycles, 0, 1 << 20),
    FINT(NULL, "address_alignment_lw", address_alignment_lw, 1, 64),
};

static const char *const sections[] = {"hierarchy",     "memory_lw", "word_bits", "issue", "bandwidth_lw_per_cycle",
                                       "latency_cycles"};

static bool known(const char *section, const char *key) {
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (!strcmp(fields[i].key, key) &&
            ((!section && !fields[i].section) || (section && fields[i].section && !strcmp(section, fields[i].section))))
            return true;
    return false;
}

bool machine_parse(const char *json, const char *what, MNMachine *m, char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    cJSON *root = cJSON_Parse(json);
    if (!root || !cJSON_IsObject(root)) {
        snprintf(err, errlen, "%s: not a JSON object", what);
        cJSON_Delete(root);
        return false;
    }
    bool ok = true;
    for (cJSON *it = root->child; ok && it; it = it->next) {
        bool is_section = false;
        for (size_t s = 0; s < sizeof sections / sizeof sections[0]; s++)
            if (!strcmp(it->string, sections[s])) is_section = true;
        if (is_section) {
            if (!cJSON_IsObject(it)) {
                ok = false;
                snprintf(err, errlen, "%s: '%s' must be an object", what, it->string);
            }
            for (cJSON *k = it->child; ok && k; k = k->next)
                if (!known(it->string, k->string)) {
                    ok = false;
                    snprintf(err, errlen, "%s: unknown key '%s.%s'", what, it->string, k->string);
                }
        } else if (!strcmp(it->string, "instruction_steps")) {
            if (!cJSON_IsObject(it)) {
                ok = false;
                snprintf(err, errlen, "%s: 'instruction_steps' must be an object", what);
            }
            for (cJSON *k = it->child; ok && k; k = k->next) {
                if (!cJSON_IsNumber(k) || k->valuedouble < 1 || k->valuedouble > 1000 ||
                    k->valuedouble != (int)k->valuedouble) {
                    ok = false;
                    snprintf(err, errlen, "%s: 'instruction_steps.%s' must be an integer in [1, 1000]", what,
                             k->string);
                } else if (strlen(k->string) >= sizeof m->steps_override[0].name || m->nsteps_override == 64) {
                    ok = false;
                    snprintf(err, errlen, "%s: bad or too many instruction_steps entries", what);
                } else {
                    snprintf(m->steps_override[m->nsteps_override].name, sizeof m->steps_override[0].name, "%s",
                             k->string);
                    m->steps_override[m->nsteps_override++].steps = (int)k->valuedouble;
                }
            }
        } else if (strcmp(it->string, "name") && strcmp(it->string, "description") && !known(NULL, it->string)) {
            ok = false;
            snprintf(err, errlen, "%s: unknown key '%s'", what, it->string);
        }
    }
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
    if (ok && (!cJSON_IsString(name) || strlen(name->valuestring) >= sizeof m->name || !name->valuestring[0])) {
        ok = false;
        snprintf(err, errlen, "%s: 'name' must be a non-empty string", what);
    }
    if (ok) snprintf(m->name, sizeof m->name, "%s", name->valuestring);
    for (size_t i = 0; ok && i < sizeof fields / sizeof fields[0]; i++) {
        const Field *f = &fields[i];
        const cJSON *sec = f->section ? cJSON_GetObjectItemCaseSensitive(root, f->section) : root;
        const cJSON *v = sec ? cJSON_GetObjectItemCaseSensitive(sec, f->key) : NULL;
        char full[96];
        snprintf(full, sizeof full, "%s%s%s", f->section ? f->section : "", f->section ? "." : "", f->key);
        if (!v) {
            ok = false;
            snprintf(err, errlen, "%s: missing key '%s'", what, full);
            break;
        }
        if (!cJSON_IsNumber(v) || v->valuedouble < f->lo || v->valuedouble > f->hi ||
            (f->type != 'd' && v->valuedouble != (double)(int64_t)v->valuedouble)) {
            ok = false;
            snprintf(err, errlen, "%s: '%s' must be %s in [%g, %g]", what, full,
                     f->type == 'd' ? "a number" : "an integer", f->lo, f->hi);
            break;
        }
        if (f->type == 'd')
            *(double *)((char *)m + f->off) = v->valuedouble;
        else if (f->type == 'i')
            *(int64_t *)((char *)m + f->off) = (int64_t)v->valuedouble;
        else
            *(int *)((char *)m + f->off) = (int)v->valuedouble;
    }
    cJSON_Delete(root);
    if (!ok) return false;
    if (m->lm0_lw & (m->lm0_lw - 1) || m->lm1_lw & (m->lm1_lw - 1) || m->grf0_lw & (m->grf0_lw - 1) ||
        m->grf1_lw & (m->grf1_lw - 1)) {
        snprintf(err, errlen, "%s: PE memory sizes must be powers of two (addresses wrap around)", what);
        return false;
    }
    m->n_l2b = m->groups * m->l2b_per_group;
    m->n_l1b = m->n_l2b * m->l1b_per_l2b;
    m->n_mab = m->n_l1b * m->mab_per_l1b;
    m->n_pe = m->n_mab * m->pe_per_mab;
    return true;
}

void mn_data_path(const char *rel, char *path, size_t n) {
    const char *env = getenv("MNCC_PRESETS");
    if (env) {
        snprintf(path, n, "%s/%s", env, rel);
        return;
    }
    char exe[PATH_MAX - 256];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0) {
        snprintf(path, n, "presets/%s", rel);
        return;
    }
    exe[k] = 0;
    char *s = strrchr(exe, '/');
    if (s) *s = 0;
    /* installed (PREFIX/bin -> PREFIX/share/mncc/presets), or build/mncc and
     * build/san/mncc in the source tree */
    static const char *const up[] = {"/../share/mncc/presets", "/../presets", "/../../presets"};
    int first_dir = -1; /* no such file: name it in the first presets directory there is */
    for (size_t i = 0; i < sizeof up / sizeof up[0]; i++) {
        snprintf(path, n, "%s%s/%s", exe, up[i], rel);
        char real[PATH_MAX];
        if (!access(path, R_OK)) {
            if (realpath(path, real) && strlen(real) < n) snprintf(path, n, "%s", real);
            return;
        }
        snprintf(path, n, "%s%s", exe, up[i]);
        if (first_dir < 0 && !access(path, R_OK)) first_dir = (int)i;
    }
    char dir[PATH_MAX];
    snprintf(path, n, "%s%s", exe, up[first_dir < 0 ? 1 : first_dir]);
    if (realpath(path, dir) && strlen(dir) + strlen(rel) + 2 < n)
        snprintf(path, n, "%s/%s", dir, rel);
    else
        snprintf(path, n, "%s%s/%s", exe, up[first_dir < 0 ? 1 : first_dir], rel);
}

void mn_data_named(const char *name, const char *dir, char *path, size_t n) {
    if (strchr(name, '/') || strstr(name, ".json")) {
        snprintf(path, n, "%s", name);
        return;
    }
    char rel[300];
    snprintf(rel, sizeof rel, "%.20s%.250s.json", dir, name);
    mn_data_path(rel, path, n);
}

void machine_path(const char *name, char *path, size_t n) { mn_data_named(name, "machines/", path, n); }

bool machine_load(const char *name, MNMachine *m, char *err, size_t errlen) {
    char path[PATH_MAX + 128];
    if (strlen(name) > 200) {
        snprintf(err, errlen, "machine name too long");
        return false;
    }
    machine_path(name, path, sizeof path);
    char *text = buf_read_file(path, 1 << 20, NULL);
    if (!text) {
        snprintf(err, errlen, "machine '%s': cannot read %s", name, path);
        return false;
    }
    bool ok = machine_parse(text, path, m, err, errlen);
    free(text);
    if (ok) snprintf(m->source, sizeof m->source, "%s", path);
    return ok;
}

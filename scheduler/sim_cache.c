/* The Node Simulation cache: one small JSON file per signature, under
 * DIR/<first two hex digits>/<key>.json. An entry holds the whole signature (so a hash
 * collision reads as a miss, never as someone else's result) and a checksum over its
 * results (so a truncated or edited file reads as corrupt and is recomputed and
 * rewritten). Entries are written to a temporary file in the same directory and
 * renamed into place: rename is atomic, so a concurrent compile reads either nothing
 * or a whole entry, and two compiles writing the same key write the same bytes. */
#include "scheduler.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void path_of(const SimCache *sc, uint64_t key, char *p, size_t n, bool dir_only) {
    if (dir_only)
        snprintf(p, n, "%s/%02x", sc->dir, (unsigned)(key >> 56));
    else
        snprintf(p, n, "%s/%02x/%016llx.json", sc->dir, (unsigned)(key >> 56), (unsigned long long)key);
}

/* the results as text, for the checksum */
static void results_text(const SimNode *sn, MNBuf *b) {
    buf_printf(b, "%d %d", (int)sn->res, sn->nvar);
    for (int i = 0; i < sn->nvar; i++) {
        const SimVariant *v = &sn->var[i];
        buf_printf(b, " %d %d %lld %lld %lld %lld", v->out_bank, v->fast, (long long)v->cycles,
                   (long long)v->cycles_conflict, (long long)v->lm_lw, (long long)v->temp_lw);
    }
}

static bool get_int(const cJSON *o, int64_t *v) {
    if (!cJSON_IsNumber(o) || !(o->valuedouble >= -1e15 && o->valuedouble <= 1e15)) return false; /* NaN too */
    *v = (int64_t)o->valuedouble;
    return (double)*v == o->valuedouble;
}

bool sim_cache_get(SimCache *sc, const char *sig, uint64_t key, SimNode *out) {
    char path[4400];
    path_of(sc, key, path, sizeof path, false);
    size_t len;
    char *text = buf_read_file(path, 0, &len);
    if (!text) {
        sc->misses++;
        return false;
    }
    const char *end = NULL; /* the whole file must be the one object: no trailing bytes */
    cJSON *j = cJSON_ParseWithLengthOpts(text, len + 1, &end, true);
    if (j && end != text + len) {
        cJSON_Delete(j);
        j = NULL;
    }
    free(text);
    SimNode sn;
    memset(&sn, 0, sizeof sn);
    bool ok = j != NULL;
    const cJSON *s = ok ? cJSON_GetObjectItemCaseSensitive(j, "signature") : NULL;
    if (ok && (!cJSON_IsString(s) || strcmp(s->valuestring, sig))) { /* another node with the same hash */
        cJSON_Delete(j);
        sc->misses++;
        return false;
    }
    const cJSON *vs = ok ? cJSON_GetObjectItemCaseSensitive(j, "variants") : NULL;
    const cJSON *res = ok ? cJSON_GetObjectItemCaseSensitive(j, "resource") : NULL;
    const cJSON *ck = ok ? cJSON_GetObjectItemCaseSensitive(j, "check") : NULL;
    int64_t r;
    ok = ok && cJSON_IsArray(vs) && get_int(res, &r) && r >= 0 && r < SIM_NRES && cJSON_IsString(ck);
    int nv = ok ? cJSON_GetArraySize(vs) : 0;
    ok = ok && nv >= 1 && nv <= SIM_MAX_VARIANTS;
    if (ok) {
        sn.res = (SimResource)r;
        sn.nvar = nv;
        for (int i = 0; ok && i < nv; i++) {
            const cJSON *a = cJSON_GetArrayItem(vs, i);
            int64_t f[6];
            ok = cJSON_IsArray(a) && cJSON_GetArraySize(a) == 6;
            for (int k = 0; ok && k < 6; k++) ok = get_int(cJSON_GetArrayItem(a, k), &f[k]);
            ok = ok && f[0] >= -1 && f[0] <= 1 && (f[1] == 0 || f[1] == 1) && f[2] >= 0 && f[3] >= 0 && f[4] >= 0 &&
                 f[5] >= 0;
            if (ok) sn.var[i] = (SimVariant){(int)f[0], f[1] != 0, f[2], f[3], f[4], f[5]};
        }
    }
    if (ok) {
        MNBuf t = {0};
        results_text(&sn, &t);
        char want[24];
        snprintf(want, sizeof want, "%016llx", (unsigned long long)sim_hash(t.data, t.len));
        ok = !strcmp(ck->valuestring, want);
        buf_free(&t);
    }
    cJSON_Delete(j);
    if (!ok) {
        sc->corrupt++;
        sc->misses++;
        return false;
    }
    *out = sn;
    sc->hits++;
    return true;
}

void sim_cache_put(SimCache *sc, const char *sig, uint64_t key, const SimNode *sn) {
    char dir[4400], path[4400], tmp[4500];
    if (mkdir(sc->dir, 0777) && errno != EEXIST) {
        /* the parents too: a fresh $XDG_CACHE_HOME/mncc/sim */
        char p[4400];
        snprintf(p, sizeof p, "%s", sc->dir);
        for (char *s = p[0] ? p + 1 : p; *s; s++)
            if (*s == '/') {
                *s = 0;
                mkdir(p, 0777);
                *s = '/';
            }
        mkdir(p, 0777);
    }
    path_of(sc, key, dir, sizeof dir, true);
    path_of(sc, key, path, sizeof path, false);
    if (mkdir(dir, 0777) && errno != EEXIST) {
        sc->write_failures++;
        return;
    }
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "signature", sig);
    cJSON_AddNumberToObject(j, "resource", (double)sn->res);
    cJSON *vs = cJSON_AddArrayToObject(j, "variants");
    for (int i = 0; i < sn->nvar; i++) {
        const SimVariant *v = &sn->var[i];
        double f[6] = {v->out_bank,      v->fast,           (double)v->cycles, (double)v->cycles_conflict,
                       (double)v->lm_lw, (double)v->temp_lw};
        cJSON_AddItemToArray(vs, cJSON_CreateDoubleArray(f, 6));
    }
    MNBuf t = {0};
    results_text(sn, &t);
    char ck[24];
    snprintf(ck, sizeof ck, "%016llx", (unsigned long long)sim_hash(t.data, t.len));
    buf_free(&t);
    cJSON_AddStringToObject(j, "check", ck);
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    static _Atomic unsigned counter; /* unique among this process's threads; the pid among processes */
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&counter, 1));
    FILE *f = fopen(tmp, "wb");
    bool ok = f && fputs(s, f) >= 0;
    if (f && fclose(f)) ok = false;
    free(s);
    if (ok && rename(tmp, path)) ok = false;
    if (!ok) {
        unlink(tmp);
        sc->write_failures++;
    }
}

/* `mncc asm`: a GPFNApp from a hand-written VSM program and a JSON description of its
 * DRAM interface, for kernels written by hand and for the emulator's tests.
 *
 * IO.json: {"inputs":  [{"name": "x", "dtype": "FLOAT32", "shape": [2, 3], "address": 0, "group": 0}],
 *           "outputs": [...same...],
 *           "params":  [{... , "data": "w.pb"}]}   (a TensorProto file, relative to IO.json)
 * mn_dtype defaults to the dtype's MN dtype; layout is RowMajor; "location" is "DRAM" (the
 * default) or "PDM" for an input or output the host places in or reads from a group's PDM. */
#include "app_asm.h"
#include "app.h"
#include "diag.h"
#include "machine.h"
#include "onnx_load.h"
#include "version.h"
#include "vsm.h"
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    MNBuf b = {0};
    char chunk[65536];
    for (size_t n; (n = fread(chunk, 1, sizeof chunk, f)) > 0;) buf_append(&b, chunk, n);
    fclose(f);
    buf_append(&b, "", 1);
    return b.data;
}

static bool onnx_dtype_by_name(const char *s, int32_t *out) {
    for (int32_t id = 1; id < ONNX_TYPE_MAX; id++)
        if (onnx_type_known(id) && !strcmp(onnx_type_name(id), s)) {
            *out = id;
            return true;
        }
    return false;
}

static bool read_list(Arena *a, const cJSON *root, const char *key, const char *dir, AppTensor **out, int *n,
                      bool param, char *err, size_t errlen) {
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(root, key);
    *n = 0;
    *out = NULL;
    if (!l) return true;
    if (!cJSON_IsArray(l)) {
        snprintf(err, errlen, "io: '%s' must be a list", key);
        return false;
    }
    int cnt = cJSON_GetArraySize(l);
    *out = ARENA_ARRAY(a, AppTensor, cnt + 1);
    for (int i = 0; i < cnt; i++) {
        const cJSON *e = cJSON_GetArrayItem(l, i);
        AppTensor *t = &(*out)[i];
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name"),
                    *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype"),
                    *sh = cJSON_GetObjectItemCaseSensitive(e, "shape"),
                    *ad = cJSON_GetObjectItemCaseSensitive(e, "address"),
                    *gr = cJSON_GetObjectItemCaseSensitive(e, "group"),
                    *md = cJSON_GetObjectItemCaseSensitive(e, "mn_dtype"),
                    *lo = cJSON_GetObjectItemCaseSensitive(e, "location");
        if (!cJSON_IsString(nm) || !cJSON_IsString(dt) || !cJSON_IsArray(sh) || !cJSON_IsNumber(ad)) {
            snprintf(err, errlen, "io: %s[%d] needs name, dtype, shape and address", key, i);
            return false;
        }
        t->name = arena_strdup(a, nm->valuestring);
        if (!onnx_dtype_by_name(dt->valuestring, &t->onnx_dtype) || !onnx_type_numeric(t->onnx_dtype)) {
            snprintf(err, errlen, "io: %s: unknown dtype '%s'", t->name, dt->valuestring);
            return false;
        }
        t->rank = cJSON_GetArraySize(sh);
        int64_t *s = ARENA_ARRAY(a, int64_t, t->rank + 1), numel = 1;
        for (int k = 0; k < t->rank; k++) {
            const cJSON *d = cJSON_GetArrayItem(sh, k);
            if (!cJSON_IsNumber(d) || d->valuedouble < 0 || d->valuedouble > 1e12) {
                snprintf(err, errlen, "io: %s: bad shape", t->name);
                return false;
            }
            s[k] = (int64_t)d->valuedouble;
            numel *= s[k];
        }
        t->shape = s;
        t->mn_dtype = md && cJSON_IsString(md) ? arena_strdup(a, md->valuestring)
                                               : mn_dtype_name(onnx_type_default_mn(t->onnx_dtype));
        if (!app_dtype_bytes(t->mn_dtype)) {
            snprintf(err, errlen, "io: %s: unknown mn_dtype '%s'", t->name, t->mn_dtype);
            return false;
        }
        t->layout = "RowMajor";
        t->location = lo && cJSON_IsString(lo) ? arena_strdup(a, lo->valuestring) : "DRAM";
        if (strcmp(t->location, "DRAM") && strcmp(t->location, "PDM")) {
            snprintf(err, errlen, "io: %s: location '%s' is DRAM or PDM", t->name, t->location);
            return false;
        }
        if (param && strcmp(t->location, "DRAM")) {
            snprintf(err, errlen, "io: param %s: parameters live in DRAM", t->name);
            return false;
        }
        t->group = gr && cJSON_IsNumber(gr) ? (int32_t)gr->valuedouble : 0;
        t->address = (uint64_t)ad->valuedouble;
        t->num_lw = app_image_lw(t->mn_dtype, numel);
        if (param) {
            const cJSON *data = cJSON_GetObjectItemCaseSensitive(e, "data");
            if (!cJSON_IsString(data)) {
                snprintf(err, errlen, "io: param %s needs \"data\": FILE.pb", t->name);
                return false;
            }
            char *path = arena_printf(a, "%s/%s", dir, data->valuestring);
            MNDiag d = {0};
            MNTensor *v = onnx_load_tensor_file(a, path, &d);
            if (!v) {
                snprintf(err, errlen, "io: %s", d.msg);
                return false;
            }
            if (v->numel != numel || v->elem != t->onnx_dtype) {
                snprintf(err, errlen, "io: %s: %s does not match its dtype and shape", t->name, path);
                return false;
            }
            uint64_t *img = ARENA_ARRAY(a, uint64_t, t->num_lw + 1);
            if (!app_encode(v, t->mn_dtype, img, err, errlen)) return false;
            size_t cap = ZSTD_compressBound(t->num_lw * 8);
            uint8_t *z = arena_alloc(a, cap);
            size_t zn = ZSTD_compress(z, cap, img, t->num_lw * 8, 19);
            if (ZSTD_isError(zn)) {
                snprintf(err, errlen, "zstd: %s", ZSTD_getErrorName(zn));
                return false;
            }
            t->zstd = z;
            t->zstd_len = zn;
        }
    }
    *n = cnt;
    return true;
}

bool app_assemble(const char *vsm_path, const char *io_path, const char *machine, MNBuf *out, char *err,
                  size_t errlen) {
    Arena *a = arena_new(0);
    bool ok = false;
    char *text = slurp(vsm_path), *io = io_path ? slurp(io_path) : NULL;
    cJSON *root = NULL;
    VProgram p = {0};
    MNMachine m;
    if (!text) {
        snprintf(err, errlen, "%s: cannot read", vsm_path);
        goto done;
    }
    if (io_path && !io) {
        snprintf(err, errlen, "%s: cannot read", io_path);
        goto done;
    }
    if (!machine_load(machine, &m, err, errlen) || !vsm_parse(vsm_path, text, &p, err, errlen)) goto done;
    root = io ? cJSON_Parse(io) : cJSON_CreateObject();
    if (!root) {
        snprintf(err, errlen, "%s: not JSON", io_path);
        goto done;
    }
    MNApp app = {0};
    app.compiler = "mncc asm";
    app.version = mncc_version;
    app.machine = m.name;
    char *mj = slurp(m.source); /* embed the description the program was assembled for */
    app.machine_json = mj ? arena_strdup(a, mj) : "";
    free(mj);
    MNBuf code = {0}, vtext = {0};
    vsm_encode(&p, &code);
    vsm_print(&vtext, &p);
    app.code_format = "VSMB";
    app.code_version = VSMB_VERSION;
    app.code = (const uint8_t *)arena_strndup(a, code.data, code.len);
    app.code_len = code.len;
    app.vsm = arena_strdup(a, vtext.data ? vtext.data : "");
    buf_free(&code);
    buf_free(&vtext);
    char dir[600];
    snprintf(dir, sizeof dir, "%s", io_path ? io_path : ".");
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(dir, sizeof dir, ".");
    if (!read_list(a, root, "inputs", dir, &app.inputs, &app.ninputs, false, err, errlen) ||
        !read_list(a, root, "outputs", dir, &app.outputs, &app.noutputs, false, err, errlen) ||
        !read_list(a, root, "params", dir, &app.params, &app.nparams, true, err, errlen))
        goto done;
    app_write(a, &app, out);
    ok = true;
done:
    cJSON_Delete(root);
    vsm_program_free(&p);
    free(text);
    free(io);
    arena_free(a);
    return ok;
}

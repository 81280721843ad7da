/* mnemu's GPFNApp mode: the host side. Places parameters and the inputs the host hands
 * over (in graph-input order) into DRAM or PDM as their descriptions say, runs the
 * program, and hands every output back (cmd/mnemu.c keeps them in input_K.pb and
 * output_K.pb files). */
#include "emu_app.h"
#include "app.h"
#include "diag.h"
#include "vsm.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

static bool in_layout(const AppTensor *t) { return t->layout && !strncmp(t->layout, "PadLayout", 9); }
/* the memory the host places a tensor in or reads it from: DRAM, or the PDM (docs/vsm.md 5.6) */
static int where(const AppTensor *t) { return t->location && !strcmp(t->location, "PDM") ? K_PDM : K_DRAM; }

/* A RowMajor image goes whole to its group (or to every group); a layout image has a
 * part per group, each at the same address. */
static bool place(Emu *e, const MNMachine *m, const AppTensor *t, const uint64_t *img, char *err, size_t errlen) {
    for (int g = 0; g < m->groups; g++) {
        if (t->group >= 0 && g != t->group) continue;
        if (!emu_host_write(e, where(t), g, t->address, img + (in_layout(t) ? (size_t)g * t->num_lw : 0), t->num_lw)) {
            snprintf(err, errlen, "%s: %s range [%llu, %llu) of group %d is outside the machine", t->name, t->location,
                     (unsigned long long)t->address, (unsigned long long)(t->address + t->num_lw), g);
            return false;
        }
    }
    return true;
}

static bool check_tensor(const AppTensor *t, const MNMachine *m, bool output, char *err, size_t errlen) {
    if (t->rank > MN_MAX_RANK) {
        snprintf(err, errlen, "corrupt file: %s has rank %d", t->name, t->rank);
        return false;
    }
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) {
        if (t->shape[i] < 0 || (t->shape[i] && n > INT64_MAX / t->shape[i])) {
            snprintf(err, errlen, "corrupt file: %s has a bad shape", t->name);
            return false;
        }
        n *= t->shape[i];
    }
    if (!onnx_type_numeric(t->onnx_dtype)) {
        snprintf(err, errlen, "corrupt file: %s has element type %d", t->name, t->onnx_dtype);
        return false;
    }
    if (!app_dtype_bytes(t->mn_dtype)) {
        snprintf(err, errlen, "corrupt file: %s has MN dtype '%s'", t->name, t->mn_dtype);
        return false;
    }
    if (in_layout(t)) {
        char lerr[300];
        uint64_t want = app_layout_image_lw(t->layout, m, lerr, sizeof lerr);
        if (!want) {
            snprintf(err, errlen, "corrupt file: %s: %s", t->name, lerr);
            return false;
        }
        if (want != t->num_lw)
            return snprintf(err, errlen, "corrupt file: %s claims %llu long words for a layout image of %llu", t->name,
                            (unsigned long long)t->num_lw, (unsigned long long)want),
                   false;
        if (t->group != -1) {
            snprintf(err, errlen, "corrupt file: %s: a layout image spans every group", t->name);
            return false;
        }
    } else if (app_image_lw(t->mn_dtype, n) != t->num_lw)
        return snprintf(err, errlen, "corrupt file: %s claims %llu long words for %lld elements of %s", t->name,
                        (unsigned long long)t->num_lw, (long long)n, t->mn_dtype),
               false;
    (void)output;
    if (t->group < -1 || t->group >= m->groups)
        return snprintf(err, errlen, "%s: DRAM group %d does not exist on machine %s", t->name, t->group, m->name),
               false;
    if (strcmp(t->location, "DRAM") && strcmp(t->location, "PDM")) {
        snprintf(err, errlen, "corrupt file: %s is placed in '%s' (DRAM or PDM)", t->name, t->location);
        return false;
    }
    uint64_t size = (uint64_t)(where(t) == K_PDM ? m->pdm_lw : m->dram_lw);
    if (t->address > size || t->num_lw > size - t->address)
        return snprintf(err, errlen, "%s: %s range [%llu, +%llu) is outside the machine's %s", t->name, t->location,
                        (unsigned long long)t->address, (unsigned long long)t->num_lw, t->location),
               false;
    return true;
}

static int64_t numel_of(const AppTensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) n *= t->shape[i];
    return n;
}

bool emu_run_app(const uint8_t *buf, size_t len, bool strict, int threads, MNBuf *trace, const char *machine_override,
                 const EmuHost *host, MNBuf *debug_out, EmuStats *stats, char *err, size_t errlen) {
    Arena *a = arena_new(0);
    MNApp app;
    VProgram p = {0};
    Emu *e = NULL;
    bool ok = false;
    MNMachine m;
    if (!app_read(a, buf, len, &app, err, errlen)) goto done;
    if (machine_override) {
        if (!machine_load(machine_override, &m, err, errlen)) goto done;
    } else if (!app.machine_json[0] || !machine_parse(app.machine_json, "the app's machine", &m, err, errlen)) {
        if (!app.machine_json[0]) snprintf(err, errlen, "the app carries no machine description; pass --machine");
        goto done;
    }
    if (!vsm_decode(app.code, app.code_len, &p, err, errlen)) goto done;
    /* the descriptions are untrusted too: every field is checked before it is used */
    for (int l = 0; l < 3; l++) {
        const AppTensor *list = l == 0 ? app.inputs : l == 1 ? app.outputs : app.params;
        int cnt = l == 0 ? app.ninputs : l == 1 ? app.noutputs : app.nparams;
        for (int i = 0; i < cnt; i++)
            if (!check_tensor(&list[i], &m, l == 1, err, errlen)) goto done;
    }
    if (!(e = emu_new(&m, err, errlen))) goto done;
    if (trace) emu_set_trace(e, trace);
    emu_set_threads(e, threads);
    if (strict && !emu_set_strict(e)) {
        snprintf(err, errlen, "cannot allocate the --strict shadow memory");
        goto done;
    }
    for (int i = 0; i < app.nparams; i++) {
        const AppTensor *t = &app.params[i];
        if (t->num_lw > (1ull << 32)) {
            snprintf(err, errlen, "parameter %s: %llu long words is implausible", t->name,
                     (unsigned long long)t->num_lw);
            goto done;
        }
        if (t->alike && !in_layout(t)) {
            snprintf(err, errlen, "parameter %s: 'alike' on a %s image (only layout images have a part per group)",
                     t->name, t->layout);
            goto done;
        }
        size_t part = t->num_lw * 8, ng = in_layout(t) ? (size_t)m.groups : 1;
        size_t n = part * (t->alike ? 1 : ng); /* a layout image: every group's part, or one for all */
        uint64_t *img = arena_alloc(a, part * ng + 8);
        size_t got = ZSTD_decompress(img, n, t->zstd, t->zstd_len);
        if (ZSTD_isError(got) || got != n) {
            snprintf(err, errlen, "parameter %s: corrupt zstd data", t->name);
            goto done;
        }
        for (size_t g = 1; t->alike && g < ng; g++) memcpy((char *)img + g * part, img, part);
        if (!place(e, &m, t, img, err, errlen)) goto done;
    }
    for (int i = 0; i < app.ninputs; i++) {
        const AppTensor *t = &app.inputs[i];
        MNTensor *v = host->input(host->ctx, a, i, t->name, err, errlen);
        if (!v) goto done;
        bool shape_ok = v->rank == t->rank && v->elem == t->onnx_dtype;
        for (int k = 0; shape_ok && k < t->rank; k++) shape_ok = v->dims[k] == t->shape[k];
        if (!shape_ok) {
            snprintf(err, errlen, "input %d: the tensor does not match input %s (%s, rank %d)", i, t->name,
                     onnx_type_name(t->onnx_dtype), t->rank);
            goto done;
        }
        uint64_t *img = arena_alloc(a, t->num_lw * 8 * (in_layout(t) ? (size_t)m.groups : 1) + 8);
        if (in_layout(t)
                ? !app_encode_layout(v, t->mn_dtype, t->layout, &m, img, err, errlen)
                : (app_image_lw(t->mn_dtype, v->numel) != t->num_lw || !app_encode(v, t->mn_dtype, img, err, errlen))) {
            if (!err[0]) snprintf(err, errlen, "input %s: image size mismatch", t->name);
            goto done;
        }
        if (!place(e, &m, t, img, err, errlen)) goto done;
    }
    if (!emu_run(e, &p, debug_out, err, errlen)) goto done;
    for (int i = 0; host->output && i < app.noutputs; i++) {
        const AppTensor *t = &app.outputs[i];
        int ng = in_layout(t) ? m.groups : 1;
        uint64_t *img = arena_alloc(a, t->num_lw * 8 * (size_t)ng + 8);
        int64_t bad = -1;
        for (int g = 0; g < ng; g++) {
            int grp = in_layout(t) ? g : t->group < 0 ? 0 : t->group;
            if (!emu_host_read(e, where(t), grp, t->address, img + (size_t)g * t->num_lw, t->num_lw)) {
                snprintf(err, errlen, "output %s: %s range outside the machine", t->name, t->location);
                goto done;
            }
            if (!in_layout(t))
                bad = emu_host_first_undefined(e, where(t), grp, t->address,
                                               t->num_lw); /* a layout image has padding never written */
        }
        if (bad >= 0) {
            int per = 8 / app_dtype_bytes(t->mn_dtype);
            snprintf(err, errlen,
                     "strict: output %s: element %lld (%s long word %llu) was never written with defined data", t->name,
                     (long long)bad * per, t->location, (unsigned long long)(t->address + (uint64_t)bad));
            goto done;
        }
        MNTensor *v = ir_tensor_new(a, t->onnx_dtype, t->rank, t->shape);
        if (v->numel != numel_of(t) ||
            !(in_layout(t) ? app_decode_layout(img, t->mn_dtype, t->layout, &m, v, err, errlen)
                           : app_decode(img, t->mn_dtype, v, err, errlen)))
            goto done;
        if (!host->output(host->ctx, i, t->name, v, err, errlen)) goto done;
    }
    *stats = *emu_stats(e);
    ok = true;
done:
    emu_free(e);
    vsm_program_free(&p);
    arena_free(a);
    return ok;
}

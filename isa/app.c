/* GPFNApp writer and reader over the hand-written FlatBuffers module (core/fb.c).
 * The reader trusts nothing: each access is bounds-checked by fb.c, counts are capped
 * by the buffer size, and strings must be terminated. */
#include "num.h"
#include "app.h"
#include "diag.h"
#include "dtypes.h"
#include "fb.h"
#include "layout.h"
#include "machine.h"
#include "vsm.h"
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    APP_producer,
    APP_program,
    APP_vsm,
    APP_inputs,
    APP_outputs,
    APP_params,
    APP_relocs_v1,
    APP_symbols,
    APP_relocs,
    APP_N
};
enum { PR_compiler, PR_version, PR_machine, PR_machine_json, PR_options, PR_N };
enum { OP_key, OP_value, OP_source, OP_N };
enum { TD_name, TD_onnx_dtype, TD_shape, TD_mn_dtype, TD_layout, TD_location, TD_group, TD_address, TD_num_lw, TD_N };
enum {
    PA_name,
    PA_onnx_dtype,
    PA_shape,
    PA_mn_dtype,
    PA_layout,
    PA_group,
    PA_address,
    PA_num_lw,
    PA_zstd,
    PA_alike,
    PA_N
};
typedef AppRelocRec RelocRec;
_Static_assert(sizeof(RelocRec) == 24, "struct Reloc is 24 bytes");
enum { PG_format, PG_version, PG_code, PG_N };

static FbObj *str(Arena *a, const char *s) { return fb_string(a, s ? s : ""); }

static FbObj *tensor_obj(Arena *a, const AppTensor *t, bool param) {
    FbObj *o = fb_table(a, param ? PA_N : TD_N);
    fb_set_obj(o, param ? PA_name : TD_name, str(a, t->name));
    fb_set_i32(o, param ? PA_onnx_dtype : TD_onnx_dtype, t->onnx_dtype);
    fb_set_obj(o, param ? PA_shape : TD_shape, fb_vec_scalar(a, t->shape, (size_t)t->rank, 8));
    fb_set_obj(o, param ? PA_mn_dtype : TD_mn_dtype, str(a, t->mn_dtype));
    fb_set_obj(o, param ? PA_layout : TD_layout, str(a, t->layout));
    fb_set_i32(o, param ? PA_group : TD_group, t->group);
    fb_set_u64(o, param ? PA_address : TD_address, t->address);
    fb_set_u64(o, param ? PA_num_lw : TD_num_lw, t->num_lw);
    if (param) {
        fb_set_obj(o, PA_zstd, fb_vec_scalar(a, t->zstd, t->zstd_len, 1));
        if (t->alike) fb_set_scalar(o, PA_alike, &(uint8_t){1}, 1);
    } else
        fb_set_obj(o, TD_location, str(a, t->location));
    return o;
}

static FbObj *app_tree(Arena *a, const MNApp *app);

void app_write(Arena *a, const MNApp *app, MNBuf *out) { fb_finish(app_tree(a, app), "MNAP", out); }
MNSpan *app_write_spans(Arena *a, const MNApp *app, MNBuf *own, int *nspans) {
    return fb_finish_spans(app_tree(a, app), "MNAP", own, nspans);
}

static FbObj *app_tree(Arena *a, const MNApp *app) {
    FbObj *root = fb_table(a, APP_N);
    FbObj *pr = fb_table(a, PR_N);
    fb_set_obj(pr, PR_compiler, str(a, app->compiler));
    fb_set_obj(pr, PR_version, str(a, app->version));
    fb_set_obj(pr, PR_machine, str(a, app->machine));
    fb_set_obj(pr, PR_machine_json, str(a, app->machine_json));
    FbObj **opts = ARENA_ARRAY(a, FbObj *, app->noptions + 1);
    for (int i = 0; i < app->noptions; i++) {
        opts[i] = fb_table(a, OP_N);
        fb_set_obj(opts[i], OP_key, str(a, app->options[i].key));
        fb_set_obj(opts[i], OP_value, str(a, app->options[i].value));
        fb_set_obj(opts[i], OP_source, str(a, app->options[i].source));
    }
    fb_set_obj(pr, PR_options, fb_vec_obj(a, opts, (size_t)app->noptions));
    fb_set_obj(root, APP_producer, pr);
    FbObj *pg = fb_table(a, PG_N);
    fb_set_obj(pg, PG_format, str(a, app->code_format ? app->code_format : "VSMB"));
    fb_set_u32(pg, PG_version, app->code_version);
    fb_set_obj(pg, PG_code,
               app->code_spans ? fb_vec_pieces(a, app->code_spans, app->ncode_spans, 1)
                               : fb_vec_scalar(a, app->code, app->code_len, 1));
    fb_set_obj(root, APP_program, pg);
    if (app->vsm) fb_set_obj(root, APP_vsm, str(a, app->vsm)); /* optional: mncc keeps it in model.vsm */
    const AppTensor *lists[3] = {app->inputs, app->outputs, app->params};
    int counts[3] = {app->ninputs, app->noutputs, app->nparams};
    for (int l = 0; l < 3; l++) {
        FbObj **v = ARENA_ARRAY(a, FbObj *, counts[l] + 1);
        for (int i = 0; i < counts[l]; i++) v[i] = tensor_obj(a, &lists[l][i], l == 2);
        fb_set_obj(root, APP_inputs + l, fb_vec_obj(a, v, (size_t)counts[l]));
    }
    /* the relocations as the file's records, which index the symbols (the writer's: the
     * linker makes both) */
    FbObj **sv = ARENA_ARRAY(a, FbObj *, app->nsymbols + 1);
    for (int i = 0; i < app->nsymbols; i++) sv[i] = str(a, app->symbols[i]);
    fb_set_obj(root, APP_symbols, fb_vec_obj(a, sv, (size_t)app->nsymbols));
    fb_set_obj(root, APP_relocs,
               app->reloc_spans ? fb_vec_pieces(a, app->reloc_spans, app->nreloc_spans, (int)sizeof(RelocRec))
                                : fb_vec_scalar(a, app->reloc_recs, (size_t)app->nreloc_recs, (int)sizeof(RelocRec)));
    return root;
}

/* ---- reading ---- */

static const char *rd_str(Arena *a, const FbTable *t, int f, bool *ok) {
    const char *s;
    uint32_t n;
    if (!fb_str(t, f, &s, &n)) {
        *ok = false;
        return "";
    }
    return arena_strndup(a, s, n);
}

static bool vec_count(const FbTable *t, int f, uint32_t *n) {
    const uint8_t *d;
    return fb_vec(t, f, 4, &d, n);
}

static bool read_tensor(Arena *a, const FbTable *t, bool param, AppTensor *o) {
    bool ok = true;
    o->name = rd_str(a, t, param ? PA_name : TD_name, &ok);
    o->onnx_dtype = fb_i32(t, param ? PA_onnx_dtype : TD_onnx_dtype);
    const uint8_t *d;
    uint32_t n;
    ok = ok && fb_vec(t, param ? PA_shape : TD_shape, 8, &d, &n);
    if (ok && n > 64) ok = false;
    if (ok) {
        int64_t *s = ARENA_ARRAY(a, int64_t, n + 1);
        if (n) memcpy(s, d, 8 * (size_t)n);
        o->shape = s;
        o->rank = (int)n;
    }
    o->mn_dtype = rd_str(a, t, param ? PA_mn_dtype : TD_mn_dtype, &ok);
    o->layout = rd_str(a, t, param ? PA_layout : TD_layout, &ok);
    o->location = param ? "DRAM" : rd_str(a, t, TD_location, &ok);
    o->group = fb_i32(t, param ? PA_group : TD_group);
    o->address = fb_u64(t, param ? PA_address : TD_address);
    o->num_lw = fb_u64(t, param ? PA_num_lw : TD_num_lw);
    if (param && ok) {
        uint32_t zn;
        ok = fb_vec(t, PA_zstd, 1, &d, &zn);
        o->zstd = d;
        o->zstd_len = zn;
        uint8_t al = 0;
        ok = ok && fb_scalar(t, PA_alike, 1, &al);
        o->alike = al != 0;
    }
    return ok;
}

bool app_read(Arena *a, const uint8_t *buf, size_t len, MNApp *app, char *err, size_t errlen) {
    memset(app, 0, sizeof *app);
    char ferr[256] = "";
    FbReader r = {buf, len, ferr, 0};
    FbTable root, pr, pg, t;
    bool ok = fb_root(&r, "MNAP", &root);
    if (ok && !fb_table_field(&root, APP_producer, &pr)) ok = false;
    if (ok && !fb_table_field(&root, APP_program, &pg)) ok = false;
    if (ok) {
        app->compiler = rd_str(a, &pr, PR_compiler, &ok);
        app->version = rd_str(a, &pr, PR_version, &ok);
        app->machine = rd_str(a, &pr, PR_machine, &ok);
        app->machine_json = rd_str(a, &pr, PR_machine_json, &ok);
        uint32_t n = 0;
        ok = ok && vec_count(&pr, PR_options, &n);
        app->options = ARENA_ARRAY(a, AppOption, n + 1);
        for (uint32_t i = 0; ok && i < n; i++) {
            ok = fb_vec_table(&pr, PR_options, i, &t);
            app->options[i].key = rd_str(a, &t, OP_key, &ok);
            app->options[i].value = rd_str(a, &t, OP_value, &ok);
            app->options[i].source = rd_str(a, &t, OP_source, &ok);
        }
        app->noptions = (int)n;
    }
    if (ok) {
        app->code_format = rd_str(a, &pg, PG_format, &ok);
        app->code_version = fb_u32(&pg, PG_version);
        const uint8_t *d = NULL;
        uint32_t n = 0;
        ok = ok && fb_vec(&pg, PG_code, 1, &d, &n);
        app->code = d;
        app->code_len = n;
        app->vsm = fb_has(&root, APP_vsm) ? rd_str(a, &root, APP_vsm, &ok) : NULL;
    }
    AppTensor **lists[3] = {&app->inputs, &app->outputs, &app->params};
    int *counts[3] = {&app->ninputs, &app->noutputs, &app->nparams};
    for (int l = 0; ok && l < 3; l++) {
        uint32_t n = 0;
        ok = vec_count(&root, APP_inputs + l, &n);
        *lists[l] = ARENA_ARRAY(a, AppTensor, n + 1);
        for (uint32_t i = 0; ok && i < n; i++)
            ok = fb_vec_table(&root, APP_inputs + l, i, &t) && read_tensor(a, &t, l == 2, &(*lists[l])[i]);
        *counts[l] = (int)n;
    }
    if (ok && fb_has(&root, APP_relocs_v1)) {
        snprintf(err, errlen,
                 "an app of an older mncc (relocations in the form before GPFNBin %d): compile the model again",
                 VSMB_VERSION);
        return false;
    }
    if (ok) {
        uint32_t ns = 0, n = 0;
        ok = vec_count(&root, APP_symbols, &ns);
        app->symbols = ARENA_ARRAY(a, const char *, ns + 1);
        for (uint32_t i = 0; ok && i < ns; i++) {
            const char *s;
            uint32_t sl;
            ok = fb_vec_str(&root, APP_symbols, i, &s, &sl);
            app->symbols[i] = ok ? arena_strndup(a, s, sl) : "";
        }
        app->nsymbols = (int)ns;
        const uint8_t *d = NULL;
        ok = ok && fb_vec(&root, APP_relocs, (int)sizeof(RelocRec), &d, &n);
        app->relocs = ARENA_ARRAY(a, AppReloc, n + 1);
        for (uint32_t i = 0; ok && i < n; i++) {
            RelocRec q;
            memcpy(&q, d + sizeof q * i, sizeof q);
            if (q.symbol >= ns) {
                snprintf(ferr, sizeof ferr, "corrupt file: relocation %u names symbol %u of %u", i, q.symbol, ns);
                ok = false;
                break;
            }
            app->relocs[i] = (AppReloc){q.line, q.expr, q.operand, app->symbols[q.symbol], q.addend, q.symbol};
        }
        app->nrelocs = (int)n;
    }
    if (!ok) {
        snprintf(err, errlen, "%s", ferr[0] ? ferr : "corrupt file: a required table is missing");
        return false;
    }
    if (strcmp(app->code_format, "VSMB")) {
        snprintf(err, errlen, "unknown program format '%s'", app->code_format);
        return false;
    }
    return true;
}

/* ---- dumping ---- */

static void json_str(MNBuf *b, const char *s) {
    buf_printf(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            buf_printf(b, "\\%c", *p);
        else if (*p == '\n')
            buf_printf(b, "\\n");
        else if (*p == '\t')
            buf_printf(b, "\\t");
        else if (*p < 0x20)
            buf_printf(b, "\\u%04x", *p);
        else
            buf_printf(b, "%c", *p);
    }
    buf_printf(b, "\"");
}

static void json_bytes(MNBuf *b, const uint8_t *d, size_t n) {
    buf_printf(b, "[");
    for (size_t i = 0; i < n; i++) buf_printf(b, i ? ",%u" : "%u", d[i]);
    buf_printf(b, "]");
}

static void json_tensor(MNBuf *b, const AppTensor *t, bool param) {
    buf_printf(b, "{\"name\":");
    json_str(b, t->name);
    buf_printf(b, ",\"onnx_dtype\":%d,\"shape\":[", t->onnx_dtype);
    for (int i = 0; i < t->rank; i++) buf_printf(b, i ? ",%" PRId64 : "%" PRId64, t->shape[i]);
    buf_printf(b, "],\"mn_dtype\":");
    json_str(b, t->mn_dtype);
    buf_printf(b, ",\"layout\":");
    json_str(b, t->layout);
    if (!param) {
        buf_printf(b, ",\"location\":");
        json_str(b, t->location);
    }
    buf_printf(b, ",\"group\":%d,\"address\":%" PRIu64 ",\"num_lw\":%" PRIu64, t->group, t->address, t->num_lw);
    if (param) {
        buf_printf(b, ",\"zstd\":");
        json_bytes(b, t->zstd, t->zstd_len);
        buf_printf(b, ",\"alike\":%s", t->alike ? "true" : "false");
    }
    buf_printf(b, "}");
}

void app_dump(const MNApp *app, MNBuf *b, bool json) {
    if (json) {
        buf_printf(b, "{\"producer\":{\"compiler\":");
        json_str(b, app->compiler);
        buf_printf(b, ",\"version\":");
        json_str(b, app->version);
        buf_printf(b, ",\"machine\":");
        json_str(b, app->machine);
        buf_printf(b, ",\"machine_json\":");
        json_str(b, app->machine_json);
        buf_printf(b, ",\"options\":[");
        for (int i = 0; i < app->noptions; i++) {
            buf_printf(b, "%s{\"key\":", i ? "," : "");
            json_str(b, app->options[i].key);
            buf_printf(b, ",\"value\":");
            json_str(b, app->options[i].value);
            buf_printf(b, ",\"source\":");
            json_str(b, app->options[i].source);
            buf_printf(b, "}");
        }
        buf_printf(b, "]},\"program\":{\"format\":");
        json_str(b, app->code_format);
        buf_printf(b, ",\"version\":%u,\"code\":", app->code_version);
        json_bytes(b, app->code, app->code_len);
        buf_printf(b, "}");
        if (app->vsm) {
            buf_printf(b, ",\"vsm\":");
            json_str(b, app->vsm);
        }
        const char *names[3] = {"inputs", "outputs", "params"};
        const AppTensor *lists[3] = {app->inputs, app->outputs, app->params};
        int counts[3] = {app->ninputs, app->noutputs, app->nparams};
        for (int l = 0; l < 3; l++) {
            buf_printf(b, ",\"%s\":[", names[l]);
            for (int i = 0; i < counts[l]; i++) {
                if (i) buf_printf(b, ",");
                json_tensor(b, &lists[l][i], l == 2);
            }
            buf_printf(b, "]");
        }
        buf_printf(b, ",\"symbols\":[");
        for (int i = 0; i < app->nsymbols; i++) {
            if (i) buf_printf(b, ",");
            json_str(b, app->symbols[i]);
        }
        buf_printf(b, "],\"relocs\":[");
        for (int i = 0; i < app->nrelocs; i++) {
            const AppReloc *r = &app->relocs[i];
            buf_printf(b, "%s{\"line\":%u,\"expr\":%u,\"operand\":%u,\"symbol\":%u,\"addend\":%" PRId64 "}",
                       i ? "," : "", r->line, r->expr, r->operand, r->sym, r->addend);
        }
        buf_printf(b, "]}\n");
        return;
    }
    buf_printf(b, "GPFNApp produced by %s %s for machine %s\n", app->compiler, app->version, app->machine);
    for (int i = 0; i < app->noptions; i++)
        buf_printf(b, "  option %s = %s (%s)\n", app->options[i].key, app->options[i].value, app->options[i].source);
    buf_printf(b, "program: %s v%u, %zu bytes\n", app->code_format, app->code_version, app->code_len);
    const char *names[3] = {"input", "output", "param"};
    const AppTensor *lists[3] = {app->inputs, app->outputs, app->params};
    int counts[3] = {app->ninputs, app->noutputs, app->nparams};
    for (int l = 0; l < 3; l++)
        for (int i = 0; i < counts[l]; i++) {
            const AppTensor *t = &lists[l][i];
            buf_printf(b, "%-6s %s %s[", names[l], t->name, onnx_type_name(t->onnx_dtype));
            for (int k = 0; k < t->rank; k++) buf_printf(b, k ? ",%" PRId64 : "%" PRId64, t->shape[k]);
            buf_printf(b, "] as %s %s in %s group %d at LW %" PRIu64 ", %" PRIu64 " LW", t->mn_dtype, t->layout,
                       l == 2 ? "DRAM" : t->location, t->group, t->address, t->num_lw);
            if (l == 2)
                buf_printf(b, ", %zu bytes zstd%s", t->zstd_len,
                           t->alike ? " (one group's part, alike in every group)" : "");
            buf_printf(b, "\n");
        }
    for (int i = 0; i < app->nrelocs; i++)
        buf_printf(b, "reloc  line %u expr %u operand %u -> %s%+" PRId64 "\n", app->relocs[i].line, app->relocs[i].expr,
                   app->relocs[i].operand, app->relocs[i].symbol, app->relocs[i].addend);
    if (app->vsm && *app->vsm) {
        buf_printf(b, "vsm:\n%s", app->vsm);
        return;
    }
    VProgram p; /* no text in the app: the code, disassembled */
    char err[300];
    if (!app->code || !app->code_len) {
        buf_printf(b, "code: none\n");
        return;
    }
    if (!vsm_decode(app->code, app->code_len, &p, err, sizeof err)) {
        buf_printf(b, "code: %s\n", err);
        return;
    }
    buf_printf(b, "code (disassembled):\n");
    vsm_print(b, &p);
    vsm_program_free(&p);
}

/* ---- DRAM images ---- */

int app_dtype_bytes(const char *d) {
    static const struct {
        const char *n;
        int b;
    } t[] = {
        {"Half", 2},       {"Float", 4},    {"Float32", 4}, {"Double", 8}, {"HalfBool", 2},
        {"SingleBool", 4}, {"LongBool", 8}, {"Int8", 1},    {"Byte", 1},   {"Short", 2},
        {"UShort", 2},     {"Int", 4},      {"UInt", 4},    {"Long", 8},   {"ULong", 8},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(t[i].n, d)) return t[i].b;
    return 0;
}

uint64_t app_image_lw(const char *d, int64_t numel) {
    int b = app_dtype_bytes(d);
    return b ? ((uint64_t)numel * (uint64_t)b + 7) / 8 : 0;
}

/* how an MN dtype's elements are encoded (looked up once per tensor, not per element) */
enum { EB_FLOAT, EB_DOUBLE, EB_HALF, EB_INT };
static int elem_kind(const char *d) {
    return !strcmp(d, "Float") || !strcmp(d, "Float32") ? EB_FLOAT
           : !strcmp(d, "Double")                       ? EB_DOUBLE
           : !strcmp(d, "Half")                         ? EB_HALF
                                                        : EB_INT;
}

/* element bits of value i in the MN dtype of kind k */
static uint64_t elem_bits_k(const MNTensor *t, int k, int64_t i) {
    /* the common pairs without the tensor accessors' per-element dispatch */
    if (k == EB_FLOAT && t->elem == ONNX_FLOAT32) {
        uint32_t u;
        memcpy(&u, (const float *)t->data + i, 4);
        return u;
    }
    if (k == EB_INT && t->elem == ONNX_INT32) return (uint64_t)(int64_t)((const int32_t *)t->data)[i];
    if (k == EB_INT && t->elem == ONNX_INT64) return (uint64_t)((const int64_t *)t->data)[i];
    if (k == EB_FLOAT) {
        float f = (float)ir_tensor_get_f(t, i);
        uint32_t u;
        memcpy(&u, &f, 4);
        return u;
    }
    if (k == EB_DOUBLE) {
        double v = ir_tensor_get_f(t, i);
        uint64_t u;
        memcpy(&u, &v, 8);
        return u;
    }
    if (k == EB_HALF) return num_float_to_mnhalf((float)ir_tensor_get_f(t, i));
    return (uint64_t)ir_tensor_get_i(t, i);
}

bool app_encode(const MNTensor *t, const char *d, uint64_t *lw, char *err, size_t errlen) {
    int b = app_dtype_bytes(d);
    if (!b) {
        snprintf(err, errlen, "unknown MN dtype '%s'", d);
        return false;
    }
    uint64_t n = app_image_lw(d, t->numel);
    memset(lw, 0, n * 8);
    int per = 8 / b;
    uint64_t mask = b == 8 ? ~0ull : (1ull << (8 * b)) - 1;
    int ek = elem_kind(d);
    for (int64_t i = 0; i < t->numel; i++) {
        int slot = (int)(i % per);
        lw[i / per] |= (elem_bits_k(t, ek, i) & mask) << (64 - 8 * b * (slot + 1));
    }
    return true;
}

bool app_decode(const uint64_t *lw, const char *d, MNTensor *t, char *err, size_t errlen) {
    int b = app_dtype_bytes(d);
    if (!b) {
        snprintf(err, errlen, "unknown MN dtype '%s'", d);
        return false;
    }
    int per = 8 / b;
    uint64_t mask = b == 8 ? ~0ull : (1ull << (8 * b)) - 1;
    bool is_float = !strcmp(d, "Float") || !strcmp(d, "Float32") || !strcmp(d, "Double") || !strcmp(d, "Half");
    bool is_signed = !strcmp(d, "Int8") || !strcmp(d, "Short") || !strcmp(d, "Int") || !strcmp(d, "Long");
    for (int64_t i = 0; i < t->numel; i++) {
        uint64_t v = lw[i / per] >> (64 - 8 * b * ((int)(i % per) + 1)) & mask;
        if (is_float) {
            double x;
            if (b == 4) {
                float f;
                uint32_t u = (uint32_t)v;
                memcpy(&f, &u, 4);
                x = f;
            } else if (b == 8)
                memcpy(&x, &v, 8);
            else
                x = num_mnhalf_to_float((uint16_t)v);
            ir_tensor_set_f(t, i, x);
        } else {
            int64_t s = (int64_t)v;
            if (is_signed && b < 8 && (v >> (8 * b - 1) & 1)) s = (int64_t)(v | ~mask);
            ir_tensor_set_i(t, i, s);
        }
    }
    return true;
}

/* ---- layout images ---- */

bool app_layout_image(const MNLayout *l, const MNMachine *m, AppLayoutImage *im, char *err, size_t errlen) {
    int64_t P = (int64_t)m->mab_per_l1b * m->pe_per_mab, J = m->l1b_per_l2b, L = m->l2b_per_group;
    if (P % 8 || m->pe_per_mab != 4 || (J * P * 4) % 64)
        return snprintf(err, errlen,
                        "machine %s: the transfers need 4 PEs per MAB, a multiple of 8 PEs per L1B and 16 per L2B "
                        "(DRAM moves multiples of 64 long words)",
                        m->name),
               false;
    int64_t n = layout_num_lw(l, m->address_alignment_lw);
    im->tree = (l->bcast & (1u << LV_L1B)) && (l->bcast & (1u << LV_L2B)) && (P * 4) % 64 == 0;
    int64_t cmax = m->l2bm_lw / (J * P);
    if (m->l1bm_lw / P < cmax) cmax = m->l1bm_lw / P;
    cmax = cmax / 4 * 4;
    if (cmax < 4)
        return snprintf(err, errlen, "machine %s: L1BM/L2BM too small for a transfer of 4 long words per PE", m->name),
               false;
    int64_t mmax = (m->l2bm_lw / 2 < m->l1bm_lw ? m->l2bm_lw / 2 : m->l1bm_lw) / 4 / 16 * 16; /* two buffers in L2BM */
    im->mab = im->tree && (l->bcast & (1u << LV_MAB)) && m->mab_per_l1b > 1 && mmax >= 16;
    int64_t q = im->mab ? 16 : 4;
    im->n4 = (n + q - 1) / q * q;
    if (im->n4 == 0) im->n4 = q;
    if (im->mab) cmax = mmax;
    im->C = im->n4 < cmax ? im->n4 : cmax;
    im->slices = layout_extent(l, LV_TIME);
    im->per_slice = im->n4 * (im->mab ? 4 : P) * (im->tree ? 1 : J * L);
    im->per_group = im->per_slice * im->slices;
    return true;
}

/* the LW offset in its group's image of long word c[ADDR] of the PE at place c: the
 * slices over time one after another, each the image of one slice */
int64_t app_image_offset(const AppLayoutImage *im, const MNMachine *m, const int64_t *c, int *group) {
    int64_t P = (int64_t)m->mab_per_l1b * m->pe_per_mab, J = m->l1b_per_l2b, L = m->l2b_per_group;
    int64_t a = c[LV_ADDR];
    *group = (int)(c[LV_L2B] / L);
    if (im->mab) return c[LV_TIME] * im->per_slice + 4 * a + c[LV_PE]; /* every MAB, L1B and L2B the same */
    /* every L1B and L2B the same: chunk k's C addresses after k C P, i.e. a P */
    if (im->tree) return c[LV_TIME] * im->per_slice + a * P + 4 * c[LV_MAB] + c[LV_PE];
    int64_t k = a / im->C, ai = a % im->C, ck = im->n4 - k * im->C < im->C ? im->n4 - k * im->C : im->C;
    int64_t i1 = ai * P + 4 * c[LV_MAB] + c[LV_PE], i2 = i1 / 32 * 32 * J + 32 * c[LV_L1B] + i1 % 32;
    return c[LV_TIME] * im->per_slice + k * im->C * P * J * L + (c[LV_L2B] % L) * J * P * ck + i2;
}

typedef struct {
    MNLayout l;
    AppLayoutImage im;
    int per, b;
    uint64_t mask;
} LayoutCodec;

static bool codec(const char *layout, const char *d, const MNMachine *m, LayoutCodec *k, char *err, size_t errlen) {
    k->b = app_dtype_bytes(d);
    if (!k->b) {
        snprintf(err, errlen, "unknown MN dtype '%s'", d);
        return false;
    }
    if (!layout_parse(layout, &k->l, err, errlen) || !app_layout_image(&k->l, m, &k->im, err, errlen)) return false;
    k->per = 8 / k->b;
    k->mask = k->b == 8 ? ~0ull : (1ull << (8 * k->b)) - 1;
    return true;
}

uint64_t app_layout_image_lw(const char *layout, const MNMachine *m, char *err, size_t errlen) {
    MNLayout l;
    AppLayoutImage im;
    if (!layout_parse(layout, &l, err, errlen) || !app_layout_image(&l, m, &im, err, errlen)) return 0;
    return (uint64_t)im.per_group;
}

bool app_layout_alike(const char *layout) {
    MNLayout l;
    char err[200];
    return layout_parse(layout, &l, err, sizeof err) && (l.bcast & (1u << LV_L2B));
}

static bool encode_layout(const MNTensor *t, const char *d, const char *layout, const MNMachine *m, uint64_t *img,
                          bool copies, char *err, size_t errlen);

bool app_encode_layout(const MNTensor *t, const char *d, const char *layout, const MNMachine *m, uint64_t *img,
                       char *err, size_t errlen) {
    return encode_layout(t, d, layout, m, img, true, err, errlen);
}

bool app_encode_layout_alike(const MNTensor *t, const char *d, const char *layout, const MNMachine *m, uint64_t *img,
                             char *err, size_t errlen) {
    if (!app_layout_alike(layout)) {
        snprintf(err, errlen, "layout %s differs between groups", layout);
        return false;
    }
    return encode_layout(t, d, layout, m, img, false, err, errlen);
}

/* the tensor's elements are the layout's, in row-major order (its shape may be a view of the
 * layout's: planners/io_view.c) */
static bool same_count(const MNTensor *t, const LayoutCodec *k, char *err, size_t errlen) {
    int64_t n = 1;
    for (int i = 0; i < k->l.rank; i++) n *= k->l.shape[i];
    if (n == t->numel) return true;
    snprintf(err, errlen, "a layout of %lld elements for a tensor of %lld", (long long)n, (long long)t->numel);
    return false;
}

/* the layout's least significant subaxis, or NULL */
static const MNSubaxis *innermost(const MNLayout *l) {
    int d = l->rank - 1;
    return d >= 0 && l->nsub[d] > 0 ? &l->sub[d][l->nsub[d] - 1] : NULL;
}

/* The elements of the walk's run along the layout's innermost subaxis from where it is (at
 * most max): the digit and the dimension both go on without a carry */
static int64_t run_len(const MNPlaceWalk *pw, const MNLayout *l, int64_t max) {
    int d = l->rank - 1, sk = d >= 0 ? l->nsub[d] - 1 : -1;
    if (sk < 0) return max < 1 ? max : 1;
    int64_t left = (l->shape[d] ? l->shape[d] : 1) - pw->idx[d], in_sub = l->sub[d][sk].size - pw->dig[d][sk];
    int64_t run = left < in_sub ? left : in_sub;
    return run < max ? run : max;
}

/* the walk moved to the last element of a run of n (place_walk_next then goes on from it) */
static void run_skip(MNPlaceWalk *pw, int64_t n) {
    const MNLayout *l = pw->l;
    int d = l->rank - 1, sk = d >= 0 ? l->nsub[d] - 1 : -1;
    if (n <= 1 || sk < 0) return;
    pw->idx[d] += n - 1;
    pw->dig[d][sk] += n - 1;
    pw->p.c[l->sub[d][sk].level] += l->sub[d][sk].stride * (n - 1);
}

static bool encode_layout(const MNTensor *t, const char *d, const char *layout, const MNMachine *m, uint64_t *img,
                          bool copies, char *err, size_t errlen) {
    LayoutCodec k;
    if (!codec(layout, d, m, &k, err, errlen) || !same_count(t, &k, err, errlen)) return false;
    /* a value alike on every L2B has one image, which every group gets a copy of: only
     * group 0's is encoded */
    bool alike = k.l.bcast & (1u << LV_L2B);
    int groups = alike ? 1 : m->groups;
    memset(img, 0, sizeof(uint64_t) * (size_t)(k.im.per_group * groups));
    int64_t counts[LV_COUNT] = {
        0, m->pe_per_mab, m->mab_per_l1b, m->l1b_per_l2b, alike ? m->l2b_per_group : m->n_l2b, 0, 0};
    int ek = elem_kind(d);
    if (k.im.tree) { /* one copy per group: L2B 0 of each */
        counts[LV_L1B] = 1;
        counts[LV_L2B] = groups;
    }
    if (k.im.mab) counts[LV_MAB] = 1; /* ... and MAB 0 */
    MNPlaceWalk pw;
    place_walk_start(&pw, &k.l);
    /* every replica along the broadcast levels, the slots of a long word included */
    counts[LV_W] = k.per;
    int64_t reps = 1;
    for (int lv = LV_PE; lv <= LV_W; lv++)
        if (k.l.bcast & (1u << lv)) reps *= counts[lv];
    if (reps == 1 && (k.im.tree || k.im.mab)) {
        /* one place per element, alike on every L1B and L2B (an index table): group 0's
         * image, the offset of app_image_offset inline (the call was a third of the loop) */
        int64_t P = (int64_t)m->mab_per_l1b * m->pe_per_mab, ps = k.im.per_slice, coef[LV_COUNT] = {0};
        coef[LV_TIME] = ps; /* the offset is linear in the place: coef . c */
        coef[LV_ADDR] = k.im.mab ? 4 : P;
        coef[LV_MAB] = k.im.mab ? 0 : 4;
        coef[LV_PE] = 1;
        /* blocks of the trailing dimensions d0.. (at most BLOCK elements): a block's offsets
         * and slots are its first element's plus the sum of those dimensions' parts
         * (layout_place_dim), tabled once; the walk then moves to the block's last element */
        enum { BLOCK = 1 << 16 };
        int d0 = k.l.rank;
        int64_t L = 1;
        while (d0 > 0 && L * (k.l.shape[d0 - 1] > 0 ? k.l.shape[d0 - 1] : 1) <= BLOCK)
            L *= k.l.shape[--d0] > 0 ? k.l.shape[d0] : 1;
        int64_t *doff = xmalloc(sizeof(int64_t) * (size_t)L), *dw = xmalloc(sizeof(int64_t) * (size_t)L);
        MNPlace last = {{0}};
        for (int64_t j = 0; j < L; j++) {
            MNPlace sum = {{0}};
            for (int64_t d = k.l.rank - 1, q = j; d >= d0; d--) {
                int64_t n = k.l.shape[d] > 0 ? k.l.shape[d] : 1;
                MNPlace pl;
                layout_place_dim(&k.l, (int)d, q % n, &pl);
                for (int lv = 0; lv < LV_COUNT; lv++) sum.c[lv] += pl.c[lv];
                q /= n;
            }
            doff[j] = 0;
            for (int lv = 0; lv < LV_COUNT; lv++) doff[j] += coef[lv] * sum.c[lv];
            dw[j] = sum.c[LV_W];
            last = sum;
        }
        for (int64_t i = 0; i < t->numel; place_walk_next(&pw)) {
            const int64_t *c = pw.p.c;
            int64_t off = 0, w = c[LV_W];
            for (int lv = 0; lv < LV_COUNT; lv++) off += coef[lv] * c[lv];
            for (int64_t j = 0; j < L; j++, i++)
                img[off + doff[j]] |= (elem_bits_k(t, ek, i) & k.mask) << (64 - 8 * k.b * ((int)(w + dw[j]) + 1));
            for (int d = d0; d < k.l.rank; d++) { /* to the block's last element (its dimensions' parts were 0) */
                int64_t v = (k.l.shape[d] > 0 ? k.l.shape[d] : 1) - 1;
                pw.idx[d] = v;
                for (int q = k.l.nsub[d] - 1; q >= 0; q--) {
                    pw.dig[d][q] = v % k.l.sub[d][q].size;
                    v /= k.l.sub[d][q].size;
                }
            }
            for (int lv = 0; lv < LV_COUNT; lv++) pw.p.c[lv] += last.c[lv];
        }
        free(doff);
        free(dw);
        for (int g = groups; copies && g < m->groups; g++)
            memcpy(img + (size_t)g * (size_t)k.im.per_group, img, sizeof(uint64_t) * (size_t)k.im.per_group);
        return true;
    }
    /* one place per element, along an innermost PE or word subaxis: the offset and the slot
     * move by fixed steps in a run (the image is linear in the PE within a MAB's quad) */
    const MNSubaxis *in = innermost(&k.l);
    if (reps == 1 && in && (in->level == LV_PE || in->level == LV_W)) {
        int64_t doff = in->level == LV_PE ? in->stride : 0, dw = in->level == LV_W ? in->stride : 0;
        for (int64_t i = 0; i < t->numel; place_walk_next(&pw)) {
            int g;
            int64_t off = app_image_offset(&k.im, m, pw.p.c, &g), w = pw.p.c[LV_W],
                    run = run_len(&pw, &k.l, t->numel - i);
            uint64_t *gi = img + g * k.im.per_group;
            for (int64_t j = 0; j < run; j++, i++, off += doff, w += dw)
                gi[off] |= (elem_bits_k(t, ek, i) & k.mask) << (64 - 8 * k.b * ((int)w + 1));
            run_skip(&pw, run);
        }
        for (int g = groups; copies && g < m->groups; g++)
            memcpy(img + (size_t)g * (size_t)k.im.per_group, img, sizeof(uint64_t) * (size_t)k.im.per_group);
        return true;
    }
    for (int64_t i = 0; i < t->numel; i++, place_walk_next(&pw)) {
        const MNPlace p = pw.p;
        uint64_t bits = elem_bits_k(t, ek, i) & k.mask;
        for (int64_t r = 0; r < reps; r++) {
            int64_t c[LV_COUNT], q = r;
            memcpy(c, p.c, sizeof c);
            for (int lv = LV_PE; lv <= LV_W; lv++)
                if (k.l.bcast & (1u << lv)) {
                    c[lv] = q % counts[lv];
                    q /= counts[lv];
                }
            if (k.im.tree) c[LV_L2B] *= m->l2b_per_group;
            int g;
            int64_t off = app_image_offset(&k.im, m, c, &g);
            img[g * k.im.per_group + off] |= bits << (64 - 8 * k.b * ((int)c[LV_W] + 1));
        }
    }
    for (int g = groups; copies && g < m->groups; g++)
        memcpy(img + (size_t)g * (size_t)k.im.per_group, img, sizeof(uint64_t) * (size_t)k.im.per_group);
    return true;
}

bool app_decode_layout(const uint64_t *img, const char *d, const char *layout, const MNMachine *m, MNTensor *t,
                       char *err, size_t errlen) {
    LayoutCodec k;
    if (!codec(layout, d, m, &k, err, errlen) || !same_count(t, &k, err, errlen)) return false;
    MNPlaceWalk pw;
    place_walk_start(&pw, &k.l);
    for (int64_t i = 0; i < t->numel; i++, place_walk_next(&pw)) {
        const MNPlace p = pw.p; /* the replica at broadcast coordinates 0 */
        int g;
        int64_t off = app_image_offset(&k.im, m, p.c, &g);
        uint64_t lw = img[g * k.im.per_group + off] >> (64 - 8 * k.b * ((int)p.c[LV_W] + 1)) & k.mask;
        uint64_t packed = lw << (64 - 8 * k.b); /* as the first slot of a one-element image */
        MNTensor e = *t;
        e.numel = 1;
        e.data = (char *)t->data + i * (int64_t)onnx_type_size(t->elem);
        if (!app_decode(&packed, d, &e, err, errlen)) return false;
    }
    return true;
}

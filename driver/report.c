/* report.json, out.txt, out.json: the record of a compilation. Rewritten after every
 * pass (atomically), so a compile that stops midway still leaves a valid record whose
 * status says "running" or "error". Wall times live in their own fields ("wall_ms") so
 * that comparing two reports for determinism can drop exactly those. */
#include "driver.h"
#include "version.h"
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static const char *level_name(int l) { return l == 0 ? "info" : l == 1 ? "warning" : "error"; }

static bool write_json(MNCompile *c, const char *name, cJSON *j) {
    char *s = cJSON_Print(j);
    if (!s) die("cJSON_Print failed");
    size_t n = strlen(s);
    MNBuf b = {0};
    buf_append(&b, s, n);
    buf_append(&b, "\n", 1);
    free(s);
    bool ok = mn_art_write(c, name, b.data, b.len);
    buf_free(&b);
    return ok;
}

void *mn_report_json(MNCompile *c) {
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "compiler", "mncc");
    cJSON_AddStringToObject(r, "compiler_version", mncc_version);
    cJSON_AddStringToObject(r, "model", c->model_path);
    const char *status = diag_failed(&c->diag) ? "error" : c->finished ? "ok" : "running";
    cJSON_AddStringToObject(r, "status", status);
    if (diag_failed(&c->diag)) {
        cJSON *e = cJSON_AddObjectToObject(r, "error");
        cJSON_AddStringToObject(e, "kind", diag_kind_name(c->diag.kind));
        cJSON_AddStringToObject(e, "pass", c->cur_pass ? c->cur_pass : "");
        cJSON_AddStringToObject(e, "message", c->diag.msg);
    }
    if (c->machine.name[0]) {
        cJSON *m = cJSON_AddObjectToObject(r, "machine");
        cJSON_AddStringToObject(m, "name", c->machine.name);
        cJSON_AddStringToObject(m, "source", c->machine.source);
        cJSON_AddNumberToObject(m, "pes", c->machine.n_pe);
        cJSON_AddNumberToObject(m, "lm_lw", (double)c->machine.lm0_lw);
    }
    cJSON *opts = cJSON_AddObjectToObject(r, "options");
    for (int i = 0; i < MN_OPT_COUNT; i++) {
        cJSON *o = cJSON_AddObjectToObject(opts, mn_opt_info[i].name);
        char vb[4200], sb[4300];
        if (!strcmp(mn_opt_info[i].type, "INT"))
            cJSON_AddNumberToObject(o, "value", (double)c->opt->ival[i]);
        else if (!strcmp(mn_opt_info[i].type, "BOOL"))
            cJSON_AddBoolToObject(o, "value", c->opt->ival[i] != 0);
        else
            cJSON_AddStringToObject(o, "value", opt_value_text(c->opt, i, vb, sizeof vb));
        cJSON_AddStringToObject(o, "source", opt_source_text(c->opt, i, sb, sizeof sb));
    }
    if (c->opt->preset) cJSON_AddStringToObject(r, "preset", c->opt->preset);
    if (c->opt->option_file) cJSON_AddStringToObject(r, "option_file", c->opt->option_file);
    cJSON *shapes = cJSON_AddObjectToObject(r, "input_shapes");
    for (int i = 0; i < c->opt->nshapes; i++) {
        cJSON *a = cJSON_AddArrayToObject(shapes, c->opt->shapes[i].name);
        for (int k = 0; k < c->opt->shapes[i].rank; k++)
            cJSON_AddItemToArray(a, cJSON_CreateNumber((double)c->opt->shapes[i].dims[k]));
    }
    if (c->g) {
        cJSON *m = cJSON_AddObjectToObject(r, "graph");
        cJSON_AddNumberToObject(m, "opset", (double)c->g->opset);
        cJSON_AddNumberToObject(m, "ir_version", (double)c->g->ir_version);
        cJSON_AddStringToObject(m, "producer", c->g->producer_name ? c->g->producer_name : "");
        cJSON_AddNumberToObject(m, "nodes_loaded", c->nodes_loaded);
        cJSON_AddNumberToObject(m, "nodes_folded", c->nodes_folded);
        cJSON_AddNumberToObject(m, "nodes_removed_dead", c->nodes_dead);
        cJSON_AddNumberToObject(m, "nodes", ir_node_count_live(c->g));
        cJSON *io = cJSON_AddArrayToObject(m, "inputs");
        for (int pass = 0; pass < 2; pass++) {
            if (pass) io = cJSON_AddArrayToObject(m, "outputs");
            int nv = pass ? c->g->noutputs : c->g->ninputs;
            for (int i = 0; i < nv; i++) {
                MNValue *v = pass ? c->g->outputs[i] : c->g->inputs[i];
                cJSON *e = cJSON_CreateObject();
                cJSON_AddStringToObject(e, "name", v->name);
                cJSON_AddStringToObject(e, "dtype", onnx_type_name(v->type.elem));
                const MNType *t = v->host ? v->host : &v->type; /* the shape the host passes */
                cJSON *sh = t->rank >= 0 ? cJSON_AddArrayToObject(e, "shape") : NULL;
                for (int k = 0; sh && k < t->rank; k++)
                    cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)t->dims[k]));
                if (pass) cJSON_AddBoolToObject(e, "constant", v->konst != NULL);
                cJSON_AddItemToArray(io, e);
            }
        }
    }
    cJSON *ps = cJSON_AddArrayToObject(r, "passes");
    for (int i = 0; i < c->npasses; i++) {
        MNPassRecord *p = &c->passes[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", p->name);
        cJSON_AddStringToObject(e, "status", p->ok ? "ok" : "error");
        cJSON_AddNumberToObject(e, "nodes", p->nodes);
        cJSON_AddNumberToObject(e, "values", p->values);
        cJSON_AddNumberToObject(e, "wall_ms", p->wall_ms);
        if (p->nfigures) {
            cJSON *f = cJSON_AddObjectToObject(e, "figures");
            for (int k = 0; k < p->nfigures; k++)
                cJSON_AddNumberToObject(f, p->figures[k].name, (double)p->figures[k].value);
        }
        cJSON_AddItemToArray(ps, e);
    }
    if (c->app_status) cJSON_AddStringToObject(r, "model_app", c->app_status);
    if (c->cache_dir) { /* depends on what earlier compiles left: like wall_ms, not part of the result */
        cJSON *k = cJSON_AddObjectToObject(r, "cache");
        cJSON_AddStringToObject(k, "dir", c->cache_dir);
        cJSON_AddNumberToObject(k, "hits", (double)c->cache_hits);
        cJSON_AddNumberToObject(k, "misses", (double)c->cache_misses);
        cJSON_AddNumberToObject(k, "corrupt", (double)c->cache_corrupt);
        cJSON_AddNumberToObject(k, "write_failures", (double)c->cache_write_failures);
    }
    return r;
}

bool mn_report_write(MNCompile *c) {
    if (!c->out_dir) return true;
    cJSON *r = mn_report_json(c);
    bool ok = write_json(c, "report.json", r);
    cJSON_Delete(r);

    MNBuf t = {0};
    cJSON *lj = cJSON_CreateArray();
    for (int i = 0; i < c->nlog; i++) {
        MNLogLine *l = &c->log[i];
        buf_printf(&t, "[%s] %s: %s\n", l->pass, level_name(l->level), l->msg);
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "level", level_name(l->level));
        cJSON_AddStringToObject(e, "pass", l->pass);
        cJSON_AddStringToObject(e, "message", l->msg);
        cJSON_AddItemToArray(lj, e);
    }
    ok = ok && mn_art_write(c, "out.txt", t.data ? t.data : "", t.len);
    ok = ok && write_json(c, "out.json", lj);
    buf_free(&t);
    cJSON_Delete(lj);
    return ok;
}

/* Loads every model.onnx under the given ONNX test-data directories through the front
 * of the pipeline (load, static shapes, folding) and sorts each into: loaded, rejected
 * only because something is unsupported, or failed for any other reason (the goal is
 * zero of those). For a model that loads, the inferred shape and type of every graph
 * output is compared with the reference output_K.pb of each test_data_set_N, and an
 * output that folding turned into a constant is compared value by value.
 *
 * usage: load_sweep [-v] [--json FILE] DIR... */
#include "driver.h"
#include "onnx_load.h"
#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static char **list_dir(const char *dir, int *n) {
    DIR *d = opendir(dir);
    char **v = NULL;
    *n = 0;
    if (!d) return NULL;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        v = xrealloc(v, sizeof(char *) * (size_t)(*n + 1));
        v[(*n)++] = xstrdup(e->d_name);
    }
    closedir(d);
    qsort(v, (size_t)*n, sizeof(char *), cmp_str);
    return v;
}

static bool is_file(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Compare our view of graph output k with a reference tensor; message on mismatch. */
static bool check_output(const MNValue *v, const MNTensor *ref, char *why, size_t n) {
    const MNType *t = v->host ? v->host : &v->type; /* the shape the host reads (io_view.c) */
    /* The ONNX test data of this era stores BFLOAT16 references as UINT16 bit patterns. */
    bool bf16_quirk = t->elem == ONNX_BFLOAT16 && ref->elem == ONNX_UINT16;
    if (t->elem != ref->elem && !bf16_quirk) {
        snprintf(why, n, "output '%s': inferred type %s, reference %s", v->name, onnx_type_name(t->elem),
                 onnx_type_name(ref->elem));
        return false;
    }
    bool same = t->rank == ref->rank;
    for (int i = 0; same && i < t->rank; i++) same = t->dims[i] == ref->dims[i];
    if (!same) {
        snprintf(why, n, "output '%s': inferred shape [", v->name);
        for (int i = 0; i < t->rank; i++)
            snprintf(why + strlen(why), n - strlen(why), i ? ",%lld" : "%lld", (long long)t->dims[i]);
        snprintf(why + strlen(why), n - strlen(why), "], reference rank %d", ref->rank);
        return false;
    }
    if (!v->konst || bf16_quirk) return true;
    for (int64_t i = 0; i < ref->numel; i++) {
        double a = ir_tensor_get_f(v->konst, i), b = ir_tensor_get_f(ref, i);
        if (isnan(a) && isnan(b)) continue;
        if (a == b) continue;
        if (fabs(a - b) > 1e-7 + 1e-3 * fabs(b)) {
            snprintf(why, n, "output '%s' (folded): element %lld is %.9g, reference %.9g", v->name, (long long)i, a, b);
            return false;
        }
    }
    return true;
}

/* Fold mode: freeze every graph input to the test's input_K.pb and let constant
 * folding evaluate the whole graph; every output that became a constant must match
 * output_K.pb. This checks fold.c (and inference) against the ONNX reference results
 * for every op that has an evaluator. Returns the number of mismatches. */
static int nfold_runs, nfold_values;
static int fold_check(const char *dsdir, MNGraph *g0, bool verbose) {
    int fails = 0, nds;
    for (int k = 0; k < g0->ninputs; k++)
        if (g0->inputs[k]->type.elem == ONNX_BFLOAT16) return 0; /* references stored as UINT16: see check_output */
    char **ds = list_dir(dsdir, &nds);
    for (int di = 0; di < nds; di++) {
        if (strncmp(ds[di], "test_data_set_", 14)) {
            free(ds[di]);
            continue;
        }
        MNOptions o;
        opt_init(&o);
        o.ival[MN_OPT_fold_max_elems] = 1 << 24;
        o.ival[MN_OPT_plan_only] = 1; /* the folded outputs are what is checked */
        char p[4400], err[256], model[4400];
        bool all = true;
        for (int k = 0; k < g0->ninputs; k++) {
            snprintf(p, sizeof p, "%s=%s/%s/input_%d.pb", g0->inputs[k]->name, dsdir, ds[di], k);
            if (!is_file(strchr(p, '=') + 1) || !opt_add_input_value(&o, p, err, sizeof err)) all = false;
        }
        snprintf(model, sizeof model, "%s/model.onnx", dsdir);
        MNCompile c;
        if (all && mn_compile(&c, model, NULL, &o) == 0) {
            nfold_runs++;
            for (int k = 0; k < c.g->noutputs; k++) {
                if (!c.g->outputs[k]->konst) continue;
                snprintf(p, sizeof p, "%s/%s/output_%d.pb", dsdir, ds[di], k);
                MNDiag d = {0};
                MNTensor *ref = is_file(p) ? onnx_load_tensor_file(c.arena, p, &d) : NULL;
                if (!ref) continue;
                char why[600];
                nfold_values++;
                if (!check_output(c.g->outputs[k], ref, why, sizeof why)) {
                    printf("failed       %s [fold %s] %s\n", dsdir, ds[di], why);
                    fails++;
                }
            }
        } else if (all && c.diag.kind != DIAG_UNSUPPORTED) {
            printf("failed       %s [fold %s] %s\n", dsdir, ds[di], c.diag.msg);
            fails++;
        } else if (verbose && all)
            printf("fold-skip    %s [%s] %s\n", dsdir, ds[di], c.diag.msg);
        if (all) mn_compile_free(&c);
        opt_free(&o);
        free(ds[di]);
    }
    free(ds);
    return fails;
}

/* a figure of a finished compilation, summed over the passes that report it */
static int64_t figure(const MNCompile *c, const char *name) {
    int64_t t = 0;
    for (int i = 0; i < c->npasses; i++)
        for (int k = 0; k < c->passes[i].nfigures; k++)
            if (!strcmp(c->passes[i].figures[k].name, name)) t += c->passes[i].figures[k].value;
    return t;
}

int main(int argc, char **argv) {
    bool verbose = false;
    const char *json_path = NULL;
    int nok = 0, nunsup = 0, nfail = 0, ncompared = 0, nfolded_checked = 0;
    cJSON *results = cJSON_CreateArray();
    MNOptions opt, mixed;
    opt_init(&opt);
    opt_init(&mixed);
    opt.ival[MN_OPT_verify] = mixed.ival[MN_OPT_verify] = 1;
    /* the planners and the schedule, not Code Emit (make conformance runs the programs) */
    opt.ival[MN_OPT_plan_only] = mixed.ival[MN_OPT_plan_only] = 1;
    mixed.ival[MN_OPT_float_dtype] = MN_FLOAT_DTYPE_MIXED;
    free(mixed.sval[MN_OPT_machine]),
        mixed.sval[MN_OPT_machine] = xstrdup("tiny"); /* the second run also plans for the small machine */
    mixed.ival[MN_OPT_scheduler] = MN_SCHED_SPILL_OPT; /* where LM is tight: evictions, moves */
    opt.ival[MN_OPT_sa_steps] = mixed.ival[MN_OPT_sa_steps] = 200;
    int nmodel = 0;
    int nmixed = 0, tiny_sliced = 0, tiny_rejected = 0;
    int64_t tiny_slices = 0, tiny_ksplits = 0, tiny_switches = 0;
    for (int ai = 1; ai < argc; ai++) {
        if (!strcmp(argv[ai], "-v")) {
            verbose = true;
            continue;
        }
        if (!strcmp(argv[ai], "--json") && ai + 1 < argc) {
            json_path = argv[++ai];
            continue;
        }
        int nt;
        char **tests = list_dir(argv[ai], &nt);
        if (!tests) {
            fprintf(stderr, "load_sweep: cannot read %s\n", argv[ai]);
            return 2;
        }
        for (int ti = 0; ti < nt; ti++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s/model.onnx", argv[ai], tests[ti]);
            if (!is_file(path)) {
                free(tests[ti]);
                continue;
            }
            MNCompile c;
            opt.ival[MN_OPT_scheduler] = nmodel++ % 4; /* every scheduler, in turn, on mncore2 */
            int rc = mn_compile(&c, path, NULL, &opt);
            const char *cls;
            char why[1400] = "";
            if (rc) {
                cls = c.diag.kind == DIAG_UNSUPPORTED ? "unsupported" : "failed";
                snprintf(why, sizeof why, "%s", c.diag.msg);
            } else {
                cls = "loaded";
                char dsdir[4200];
                snprintf(dsdir, sizeof dsdir, "%s/%s", argv[ai], tests[ti]);
                int nds;
                char **ds = list_dir(dsdir, &nds);
                for (int di = 0; di < nds; di++) {
                    if (strncmp(ds[di], "test_data_set_", 14) || !strcmp(cls, "failed")) continue;
                    for (int k = 0; k < c.g->noutputs; k++) {
                        char op[4400];
                        snprintf(op, sizeof op, "%s/%s/output_%d.pb", dsdir, ds[di], k);
                        if (!is_file(op)) continue;
                        MNDiag d = {0};
                        MNTensor *ref = onnx_load_tensor_file(c.arena, op, &d);
                        if (!ref) {
                            if (d.kind == DIAG_UNSUPPORTED) continue; /* e.g. string outputs */
                            snprintf(why, sizeof why, "%s", d.msg);
                            cls = "failed";
                            break;
                        }
                        ncompared++;
                        nfolded_checked += c.g->outputs[k]->konst != NULL;
                        if (!check_output(c.g->outputs[k], ref, why, sizeof why)) {
                            cls = "failed";
                            break;
                        }
                    }
                }
                for (int di = 0; di < nds; di++) free(ds[di]);
                free(ds);
            }
            if (!strcmp(cls, "loaded")) { /* the planners must also take it in mixed precision */
                MNCompile c2;
                if (mn_compile(&c2, path, NULL, &mixed)) {
                    /* a model too large for the 16-PE machine is a clean rejection, counted;
                     * any other error is a failure */
                    if (c2.diag.kind == DIAG_RESOURCE && strstr(c2.diag.msg, "does not fit machine 'tiny'"))
                        tiny_rejected++;
                    else {
                        cls = "failed";
                        snprintf(why, sizeof why, "float_dtype=mixed --machine tiny: %s", c2.diag.msg);
                    }
                } else {
                    nmixed++;
                    tiny_sliced += figure(&c2, "nodes_sliced") > 0;
                    tiny_slices += figure(&c2, "slices");
                    tiny_ksplits += figure(&c2, "reduction_splits");
                    tiny_switches += figure(&c2, "layout_switches");
                }
                mn_compile_free(&c2);
            }
            if (strcmp(cls, "failed") && c.g && c.npasses && c.passes[0].ok) {
                char dsdir[4200];
                snprintf(dsdir, sizeof dsdir, "%s/%s", argv[ai], tests[ti]);
                if (fold_check(dsdir, c.g, verbose)) {
                    cls = "failed";
                    snprintf(why, sizeof why, "fold mode: mismatch (above)");
                }
            }
            if (!strcmp(cls, "loaded"))
                nok++;
            else if (!strcmp(cls, "unsupported"))
                nunsup++;
            else
                nfail++;
            if (verbose || !strcmp(cls, "failed")) printf("%-12s %s/%s %s\n", cls, argv[ai], tests[ti], why);
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "model", path);
            cJSON_AddStringToObject(e, "result", cls);
            if (*why) cJSON_AddStringToObject(e, "message", why);
            cJSON_AddItemToArray(results, e);
            mn_compile_free(&c);
            free(tests[ti]);
        }
        free(tests);
    }
    if (json_path) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddNumberToObject(root, "loaded", nok);
        cJSON_AddNumberToObject(root, "rejected_unsupported", nunsup);
        cJSON_AddNumberToObject(root, "failed", nfail);
        cJSON_AddItemToObject(root, "models", results);
        char *s = cJSON_Print(root);
        FILE *f = fopen(json_path, "w");
        if (f) {
            fputs(s, f);
            fclose(f);
        }
        free(s);
        cJSON_Delete(root);
    } else
        cJSON_Delete(results);
    printf("sweep: %d passed, %d failed\n", nok + nunsup, nfail);
    printf("sweep: %d models also planned with float_dtype=mixed for the tiny machine; the invariant checker ran after "
           "every pass\n",
           nmixed);
    printf("sweep: on tiny %d models were time-sliced (%lld slices, %lld K-splits, %lld layout switches in all); %d "
           "were rejected as too large for it\n",
           tiny_sliced, (long long)tiny_slices, (long long)tiny_ksplits, (long long)tiny_switches, tiny_rejected);
    printf("sweep: fold mode evaluated %d test data sets, compared %d folded outputs with the references\n", nfold_runs,
           nfold_values);
    printf("sweep: %d models: %d loaded, %d rejected only as unsupported, %d failed otherwise; %d reference outputs "
           "compared (%d folded to constants)\n",
           nok + nunsup + nfail, nok, nunsup, nfail, ncompared, nfolded_checked);
    opt_free(&opt);
    opt_free(&mixed);
    return nfail ? 1 : 0;
}

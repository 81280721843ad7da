/* mncc: the compiler driver. Exit codes: 0 success, 1 bad input or failed compile,
 * 2 usage error. */
#include "app_asm.h"
#include "driver.h"
#include "emit.h"
#include "ops.h"
#include "version.h"
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <cjson/cJSON.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f) {
    fprintf(f, "usage: mncc MODEL.onnx -o DIR [options]\n"
               "       mncc asm FILE.vsm [--io IO.json] [--machine NAME|PATH] -o OUT.app\n"
               "       mncc batch LIST|DIR -o OUTROOT [-j N] [--shard K/N] [--timeout S] [--quiet] [options]\n"
               "       mncc --list-ops | --help | --version\n"
               "\n"
               "Compiles an ONNX model for the MN-Core-style accelerator into the codegen\n"
               "directory DIR (report.json, l3ir.txt, model.onnx, out.txt, out.json).\n"
               "mncc batch compiles every .onnx under DIR, or the models of a LIST file (a\n"
               "line: PATH [options] [--name NAME]), into OUTROOT/NAME/ in N processes, and\n"
               "writes OUTROOT/summary.json and OUTROOT/junit.xml; --shard K/N takes a stable\n"
               "K-th of N parts; --timeout S stops a compile after S seconds; up-to-date\n"
               "outputs are skipped; exit 1 if any model failed.\n"
               "\n"
               "options:\n"
               "  -o DIR                    output (codegen) directory\n"
               "  --input-shape NAME=D,D    bind the shape of a graph input (repeatable)\n"
               "  --input-value NAME=F.pb   freeze a graph input to the tensor in F.pb (folds\n"
               "                            everything computable from it)\n"
               "  --preset NAME|PATH        options from a preset (presets/NAME.json: O0 .. O4, debug)\n"
               "  --option-json FILE        options from a JSON file ({\"key\": value, ...})\n"
               "  -O KEY=VALUE              set a compiler option (repeatable); keys below\n"
               "  --KEY-NAME VALUE          the same as -O KEY_NAME=VALUE (--KEY-NAME alone for a\n"
               "                            boolean true, --KEY-NAME=false), e.g. --scheduler\n"
               "                            spill_opt, --dump-all\n"
               "                            The command line wins over --option-json, which wins\n"
               "                            over --preset, whatever their order.\n"
               "  --cache-dir DIR|none      Node Simulation cache (default $XDG_CACHE_HOME/mncc/sim,\n"
               "                            else ~/.cache/mncc/sim)\n"
               "  --summary                 print a short summary on success\n"
               "  --if-changed              do nothing when DIR holds a complete compile of the\n"
               "                            same model, options, machine and compiler\n"
               "  --quiet                   no status line (on a terminal: the pass running)\n"
               "  --list-ops                print the supported ONNX ops and opset ranges\n"
               "  --help, --version\n"
               "\n"
               "compiler options (-O):\n");
    for (int i = 0; i < MN_OPT_COUNT; i++) {
        fprintf(f, "  %-22s %s (", mn_opt_info[i].name, mn_opt_info[i].help);
        if (mn_opt_info[i].dflt[0])
            fprintf(f, "default %s", mn_opt_info[i].dflt);
        else
            fprintf(f, "default none");
        if (mn_opt_info[i].values[0])
            fprintf(f, "; one of %s", mn_opt_info[i].values);
        else if (!strcmp(mn_opt_info[i].type, "BOOL"))
            fprintf(f, "; true or false");
        fprintf(f, ")\n");
    }
    int n;
    const char *const *p = mn_pass_names(&n);
    fprintf(f, "\npasses:");
    for (int i = 0; i < n; i++) fprintf(f, " %s", p[i]);
    fprintf(f, "\n");
}

/* "--key=value" up to the '=' (one at a time: the buffer is reused) */
static const char *xstrndup_tmp(const char *a) {
    static char b[256];
    const char *eq = strchr(a, '=');
    size_t n = eq ? (size_t)(eq - a) : strlen(a);
    if (n >= sizeof b) n = sizeof b - 1;
    memcpy(b, a, n);
    b[n] = 0;
    return b;
}

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "mncc: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'mncc --help'.\n");
    return 2;
}

static void summary(const MNCompile *c) {
    const MNGraph *g = c->g;
    printf("mncc %s: %s -> %s\n", mncc_version, c->model_path, c->out_dir);
    printf("  opset %lld, %d nodes loaded, %d folded into constants, %d dead removed, %d nodes remain\n",
           (long long)g->opset, c->nodes_loaded, c->nodes_folded, c->nodes_dead, ir_node_count_live(g));
    for (int pass = 0; pass < 2; pass++) {
        int nv = pass ? g->noutputs : g->ninputs;
        for (int i = 0; i < nv; i++) {
            const MNValue *v = pass ? g->outputs[i] : g->inputs[i];
            printf("  %-6s %s %s[%s]%s\n", pass ? "output" : "input", v->name, onnx_type_name(v->type.elem),
                   ir_dims_str(c->arena, v->type.rank, v->type.dims), v->konst ? " (constant)" : "");
        }
    }
    double total = 0;
    for (int i = 0; i < c->npasses; i++) total += c->passes[i].wall_ms;
    printf("  %d passes in %.1f ms; artifacts:", c->npasses, total);
    for (int i = 0; i < c->nartifacts; i++) printf(" %s", c->artifacts[i]);
    printf("\n");
    if (c->app_status && strcmp(c->app_status, "written")) printf("  model.app %s\n", c->app_status);
}

/* mncc asm FILE.vsm [--io IO.json] [--machine NAME|PATH] -o OUT.app */
static int cmd_asm(int argc, char **argv) {
    const char *vsm = NULL, *io = NULL, *machine = "mncore2", *out = NULL;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--io") && i + 1 < argc)
            io = argv[++i];
        else if (!strcmp(argv[i], "--machine") && i + 1 < argc)
            machine = argv[++i];
        else if (!strcmp(argv[i], "-o") && i + 1 < argc)
            out = argv[++i];
        else if (argv[i][0] != '-' && !vsm)
            vsm = argv[i];
        else
            return usage_error("asm: unexpected argument '%s'", argv[i]);
    }
    if (!vsm || !out)
        return usage_error("%s", "usage: mncc asm FILE.vsm [--io IO.json] [--machine NAME|PATH] -o OUT.app");
    MNBuf b = {0};
    char err[1024];
    if (!app_assemble(vsm, io, machine, &b, err, sizeof err)) {
        fprintf(stderr, "mncc: error: %s\n", err);
        return 1;
    }
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    FILE *f = fopen(tmp, "wb");
    bool ok = f && fwrite(b.data, 1, b.len, f) == b.len;
    if (f && fclose(f)) ok = false;
    if (ok && rename(tmp, out)) ok = false;
    buf_free(&b);
    if (!ok) {
        remove(tmp);
        fprintf(stderr, "mncc: error: %s: cannot write\n", out);
        return 1;
    }
    return 0;
}

int mncc_batch(int argc, char **argv); /* batch.c */

/* What decides a compile's output, for --if-changed: this program's own bytes (a new
 * build is a new compiler), the model's bytes, every option's effective value (so a
 * preset or option file counts by what it sets), the machine file's bytes, the input
 * shapes and frozen inputs. */
static char *compile_stamp(const char *model, const MNOptions *o) {
    MNBuf k = {0};
    buf_printf(&k, "mncc %s %016llx\n", mncc_version, (unsigned long long)mn_file_hash("/proc/self/exe"));
    buf_printf(&k, "model %016llx\n", (unsigned long long)mn_file_hash(model));
    for (int i = 0; i < MN_OPT_COUNT; i++) {
        char v[4200];
        if (i == MN_OPT_verify || i == MN_OPT_num_threads) continue; /* do not change the output */
        buf_printf(&k, "option %s=%s\n", mn_opt_info[i].name, opt_value_text(o, i, v, sizeof v));
    }
    const char *mach = o->sval[MN_OPT_machine];
    char path[4200];
    machine_path(mach, path, sizeof path);
    buf_printf(&k, "machine %016llx\n", (unsigned long long)mn_file_hash(path));
    for (int i = 0; i < o->nshapes; i++) {
        buf_printf(&k, "shape %s", o->shapes[i].name);
        for (int d = 0; d < o->shapes[i].rank; d++) buf_printf(&k, " %lld", (long long)o->shapes[i].dims[d]);
        buf_printf(&k, "\n");
    }
    for (int i = 0; i < o->nvalues; i++)
        buf_printf(&k, "value %s %016llx\n", o->values[i].name, (unsigned long long)mn_file_hash(o->values[i].path));
    return k.data;
}

/* DIR holds a complete compile (report.json says ok) with this stamp */
static bool stamp_matches(const char *dir, const char *stamp) {
    char path[4200];
    snprintf(path, sizeof path, "%s/compile.stamp", dir);
    char *old = buf_read_file(path, 0, NULL);
    size_t sl = strlen(stamp);
    bool same = old && !strncmp(old, stamp, sl);
    /* then the external data files the compile read, each with the hash it had */
    for (char *l = same ? old + sl : NULL; l && *l && same;) {
        char *nl = strchr(l, '\n');
        if (nl) *nl = 0;
        unsigned long long h;
        int at = 0;
        same = sscanf(l, "external %16llx %n", &h, &at) == 1 && at > 0 && mn_file_hash(l + at) == h;
        l = nl ? nl + 1 : NULL;
    }
    free(old);
    if (!same) return false;
    snprintf(path, sizeof path, "%s/report.json", dir);
    char *r = buf_read_file(path, 0, NULL);
    cJSON *j = r ? cJSON_Parse(r) : NULL;
    free(r);
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "status");
    bool ok = cJSON_IsString(st) && !strcmp(st->valuestring, "ok");
    cJSON_Delete(j);
    return ok;
}

int main(int argc, char **argv) {
    /* Large buffers from the heap, and the heap kept: a buffer freed mid-compile (the
     * node code, once linked) is reused by the next (model.app) instead of fresh pages
     * from the kernel, whose first touch costs more than the copy into them. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    if (argc > 1 && !strcmp(argv[1], "asm")) return cmd_asm(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "batch")) return mncc_batch(argc, argv);
    MNOptions opt;
    opt_init(&opt);
    const char *model = NULL, *out = NULL, *preset = NULL, *option_json = NULL;
    const char **cli = xcalloc((size_t)argc, sizeof(char *)); /* key=value, applied last */
    char **owned = xcalloc((size_t)argc, sizeof(char *));
    int ncli = 0;
    bool want_summary = false, quiet = false, if_changed = false;
    char err[8192];
    int rc = 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
#define ARG(flag)                                                                                             \
    (!strcmp(a, flag)                                                                                         \
         ? (i + 1 < argc ? (val = argv[++i], true) : (usage_error("%s needs a value", flag), exit(2), false)) \
     : !strncmp(a, flag "=", strlen(flag) + 1) ? (val = a + strlen(flag) + 1, true)                           \
                                               : false)
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            rc = 0;
            goto done;
        } else if (!strcmp(a, "--version")) {
            printf("mncc %s\n", mncc_version);
            rc = 0;
            goto done;
        } else if (!strcmp(a, "--list-ops")) {
            printf("%-24s %-8s %s\n", "op", "opsets", "code emitted for");
            for (int k = 1; k < OP_COUNT; k++) /* not mncc's own nodes */
                if (mn_ops[k].since > 0) {
                    char r[32];
                    snprintf(r, sizeof r, "%d-%d", mn_ops[k].since, mn_ops[k].max);
                    const char *d = mn_ops[k].types;
                    printf("%-24s %-8s %s\n", mn_ops[k].name, r, d ? d : "- (planned, no model.app yet)");
                }
            rc = 0;
            goto done;
        } else if (ARG("-o")) {
            out = val;
        } else if (ARG("--input-shape")) {
            if (!opt_add_input_shape(&opt, val, err, sizeof err)) {
                rc = usage_error("%s", err);
                goto done;
            }
        } else if (ARG("--input-value")) {
            if (!opt_add_input_value(&opt, val, err, sizeof err)) {
                rc = usage_error("%s", err);
                goto done;
            }
        } else if (ARG("-O")) {
            cli[ncli++] = val;
        } else if (ARG("--preset")) {
            if (preset) {
                rc = usage_error("%s", "--preset given twice (a preset builds on another with \"base\")");
                goto done;
            }
            preset = val;
        } else if (ARG("--option-json")) {
            if (option_json) {
                rc = usage_error("%s", "--option-json given twice");
                goto done;
            }
            option_json = val;
        } else if (ARG("--cache-dir")) {
            if (!*val) {
                rc = usage_error("%s", "--cache-dir needs a directory, or none");
                goto done;
            }
            opt.cache_dir = val;
        } else if (!strcmp(a, "--summary")) {
            want_summary = true;
        } else if (!strcmp(a, "--quiet")) {
            quiet = true;
        } else if (!strcmp(a, "--if-changed")) {
            if_changed = true;
        } else if (a[0] == '-' && a[1] == '-' && opt_flag(strchr(a, '=') ? xstrndup_tmp(a) : a) >= 0) {
            /* a long flag naming an option: --key-name VALUE, --key-name=VALUE, or a
             * boolean alone */
            const char *eq = strchr(a, '=');
            int k = opt_flag(eq ? xstrndup_tmp(a) : a);
            const char *v = eq                                     ? eq + 1
                            : !strcmp(mn_opt_info[k].type, "BOOL") ? "true"
                            : i + 1 < argc                         ? argv[++i]
                                                                   : NULL;
            if (!v) {
                rc = usage_error("%s needs a value", a);
                goto done;
            }
            size_t n = strlen(mn_opt_info[k].name) + strlen(v) + 2;
            owned[ncli] = xmalloc(n);
            snprintf(owned[ncli], n, "%s=%s", mn_opt_info[k].name, v);
            cli[ncli] = owned[ncli];
            ncli++;
        } else if (a[0] == '-' && a[1]) {
            rc = usage_error("unknown option '%s'", a);
            goto done;
        } else if (model) {
            rc = usage_error("more than one model given ('%s')", a);
            goto done;
        } else
            model = a;
#undef ARG
    }
    if ((preset && !opt_load_preset(&opt, preset, err, sizeof err)) ||
        (option_json && !opt_load_json(&opt, option_json, err, sizeof err))) {
        rc = usage_error("%s", err);
        goto done;
    }
    for (int i = 0; i < ncli; i++) {
        const char *kv = cli[i];
        char *both = NULL;
        if (!strncmp(kv, "dump_after=", 11) && opt.src[MN_OPT_dump_after] == MN_SRC_CMDLINE &&
            opt.sval[MN_OPT_dump_after][0]) { /* repeated: the passes add up */
            both = xmalloc(strlen(kv) + strlen(opt.sval[MN_OPT_dump_after]) + 2);
            sprintf(both, "dump_after=%s,%s", opt.sval[MN_OPT_dump_after], kv + 11);
            kv = both;
        }
        bool ok = opt_set(&opt, kv, err, sizeof err);
        free(both);
        if (!ok) {
            rc = usage_error("%s", err);
            goto done;
        }
    }
    if (!model) {
        rc = usage_error("%s", "no model given");
        goto done;
    }
    if (!out) {
        rc = usage_error("%s", "no output directory given (-o DIR)");
        goto done;
    }
    int np;
    const char *const *passes = mn_pass_names(&np);
    for (const char *p = opt.sval[MN_OPT_dump_after]; p && *p;) {
        const char *comma = strchr(p, ',');
        int l = comma ? (int)(comma - p) : (int)strlen(p);
        bool found = false;
        for (int k = 0; k < np; k++) found |= (int)strlen(passes[k]) == l && !strncmp(passes[k], p, (size_t)l);
        if (!found) {
            snprintf(err, sizeof err, "dump_after: unknown pass '%.*s' (see --help for the pass names)", l, p);
            rc = usage_error("%s", err);
            goto done;
        }
        p = comma ? comma + 1 : NULL;
    }
    /* a machine by name must be one of presets/machines: say which there are */
    const char *mach = opt.sval[MN_OPT_machine];
    if (!strchr(mach, '/') && !strstr(mach, ".json")) {
        char path[4200];
        machine_path(mach, path, sizeof path);
        if (access(path, R_OK)) {
            char *sl = strrchr(path, '/'), names[1024];
            if (sl) *sl = 0;
            opt_list_json(path, names, sizeof names);
            snprintf(err, sizeof err, "unknown machine '%s' (no %s/%s.json); machines:%s", mach, path, mach, names);
            rc = usage_error("%s", err);
            goto done;
        }
    }
    struct stat s_in, s_out; /* out_onnx must not overwrite the model it reads */
    if (opt.sval[MN_OPT_out_onnx][0] && !stat(model, &s_in) && !stat(opt.sval[MN_OPT_out_onnx], &s_out) &&
        s_in.st_dev == s_out.st_dev && s_in.st_ino == s_out.st_ino) {
        rc = usage_error("out_onnx=%s is the model being compiled", opt.sval[MN_OPT_out_onnx]);
        goto done;
    }
    char *stamp = if_changed ? compile_stamp(model, &opt) : NULL;
    opt.stamp = stamp;
    if (stamp && stamp_matches(out, stamp)) {
        if (!quiet) fprintf(stderr, "mncc: %s is up to date\n", out);
        free(stamp);
        rc = 0;
        goto done;
    }
    opt.progress = !quiet && isatty(2); /* the pass running, on a terminal */
    MNCompile c;
    rc = mn_compile(&c, model, out, &opt);
    if (rc)
        fprintf(stderr, "mncc: error: %s\n", c.diag.msg);
    else if (want_summary)
        summary(&c);
    free(stamp);
    mn_compile_free(&c);
done:
    for (int i = 0; i < argc; i++) free(owned[i]);
    free(owned);
    free(cli);
    opt_free(&opt);
    return rc;
}

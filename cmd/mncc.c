/* mncc: the compiler driver. Exit codes: 0 success, 1 bad input or failed compile,
 * 2 usage error. */
#include "app_asm.h"
#include "compile.h"
#include "ops.h"
#include "version.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f) {
    fprintf(f,
            "usage: mncc MODEL.onnx -o DIR [options]\n"
            "       mncc asm FILE.vsm [--io IO.json] [--machine NAME|PATH] -o OUT.app\n"
            "       mncc batch LIST|DIR -o OUTROOT [-j N] [--shard K/N] [--quiet] [options]\n"
            "       mncc --list-ops | --help | --version\n"
            "\n"
            "Compiles an ONNX model for the MN-Core-style accelerator into the codegen\n"
            "directory DIR (report.json, l3ir.txt, model.onnx, out.txt, out.json).\n"
            "mncc batch compiles every .onnx under DIR, or the models of a LIST file (a\n"
            "line: PATH [options] [--name NAME]), into OUTROOT/NAME/ in N processes, and\n"
            "writes OUTROOT/summary.json and OUTROOT/junit.xml; --shard K/N takes a stable\n"
            "K-th of N parts; up-to-date outputs are skipped; exit 1 if any model failed.\n"
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
            "                            boolean), e.g. --scheduler spill_opt, --dump-all\n"
            "                            The command line wins over --option-json, which wins\n"
            "                            over --preset, whatever their order.\n"
            "  --cache-dir DIR|none      Node Simulation cache (default $XDG_CACHE_HOME/mncc/sim,\n"
            "                            else ~/.cache/mncc/sim)\n"
            "  --summary                 print a short summary on success\n"
            "  --quiet                   no status line (on a terminal: the pass running)\n"
            "  --list-ops                print the supported ONNX ops and opset ranges\n"
            "  --help, --version\n"
            "\n"
            "compiler options (-O):\n");
    for (int i = 0; i < MN_OPT_COUNT; i++) {
        fprintf(f, "  %-22s %s (", mn_opt_info[i].name, mn_opt_info[i].help);
        if (mn_opt_info[i].dflt[0]) fprintf(f, "default %s", mn_opt_info[i].dflt);
        else fprintf(f, "default none");
        if (mn_opt_info[i].values[0]) fprintf(f, "; one of %s", mn_opt_info[i].values);
        else if (!strcmp(mn_opt_info[i].type, "BOOL")) fprintf(f, "; true or false");
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
    printf("  opset %lld, %d nodes loaded, %d folded into constants, %d dead removed, %d nodes remain\n", (long long)g->opset,
           c->nodes_loaded, c->nodes_folded, c->nodes_dead, ir_node_count_live(g));
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
        if (!strcmp(argv[i], "--io") && i + 1 < argc) io = argv[++i];
        else if (!strcmp(argv[i], "--machine") && i + 1 < argc) machine = argv[++i];
        else if (!strcmp(argv[i], "-o") && i + 1 < argc) out = argv[++i];
        else if (argv[i][0] != '-' && !vsm) vsm = argv[i];
        else return usage_error("asm: unexpected argument '%s'", argv[i]);
    }
    if (!vsm || !out) return usage_error("%s", "usage: mncc asm FILE.vsm [--io IO.json] [--machine NAME|PATH] -o OUT.app");
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

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "asm")) return cmd_asm(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "batch")) return mncc_batch(argc, argv);
    MNOptions opt;
    opt_init(&opt);
    const char *model = NULL, *out = NULL, *preset = NULL, *option_json = NULL;
    const char **cli = xcalloc((size_t)argc, sizeof(char *)); /* key=value, applied last */
    char **owned = xcalloc((size_t)argc, sizeof(char *));
    int ncli = 0;
    bool want_summary = false, quiet = false;
    char err[2048];
    int rc = 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
#define ARG(flag)                                                                              \
    (!strcmp(a, flag) ? (i + 1 < argc ? (val = argv[++i], true) : (usage_error("%s needs a value", flag), exit(2), false)) \
                      : !strncmp(a, flag "=", strlen(flag) + 1) ? (val = a + strlen(flag) + 1, true) : false)
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            rc = 0;
            goto done;
        } else if (!strcmp(a, "--version")) {
            printf("mncc %s\n", mncc_version);
            rc = 0;
            goto done;
        } else if (!strcmp(a, "--list-ops")) {
            printf("%-24s %s\n", "op", "opsets");
            for (int k = 1; k < OP_COUNT; k++)
                if (mn_ops[k].since > 0) printf("%-24s %d-%d\n", mn_ops[k].name, mn_ops[k].since, mn_ops[k].max); /* not mncc's own nodes */
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
            preset = val;
        } else if (ARG("--option-json")) {
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
        } else if (a[0] == '-' && a[1] == '-' && opt_flag(strchr(a, '=') ? xstrndup_tmp(a) : a) >= 0) {
            /* a long flag naming an option: --key-name VALUE, --key-name=VALUE, or a
             * boolean alone */
            const char *eq = strchr(a, '=');
            int k = opt_flag(eq ? xstrndup_tmp(a) : a);
            const char *v = eq ? eq + 1 : !strcmp(mn_opt_info[k].type, "BOOL") ? "true" : i + 1 < argc ? argv[++i] : NULL;
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
    if ((preset && !opt_load_preset(&opt, preset, err, sizeof err)) || (option_json && !opt_load_json(&opt, option_json, err, sizeof err))) {
        rc = usage_error("%s", err);
        goto done;
    }
    for (int i = 0; i < ncli; i++)
        if (!opt_set(&opt, cli[i], err, sizeof err)) {
            rc = usage_error("%s", err);
            goto done;
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
    opt.progress = !quiet && isatty(2); /* the pass running, on a terminal */
    MNCompile c;
    rc = mn_compile(&c, model, out, &opt);
    if (rc) fprintf(stderr, "mncc: error: %s\n", c.diag.msg);
    else if (want_summary) summary(&c);
    mn_compile_free(&c);
done:
    for (int i = 0; i < argc; i++) free(owned[i]);
    free(owned), free(cli);
    opt_free(&opt);
    return rc;
}

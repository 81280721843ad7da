#include "num.h"
#include "driver.h"
#include "fb.h"
#include "options.h"
#include "unit.h"
#include "vsm.h"
#include "timing.h"
#include "machine.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void test_arena(void) {
    Arena *a = arena_new(1 << 20);
    char *p = arena_alloc(a, 13);
    CHECK(((uintptr_t)p & 15) == 0);
    for (int i = 0; i < 13; i++) CHECK(p[i] == 0);
    CHECK(!strcmp(arena_printf(a, "%s-%d", "x", 7), "x-7"));
    CHECK(arena_try_alloc(a, 2 << 20) == NULL);
    CHECK(arena_over_limit(a));
    arena_free(a);
    a = arena_new(0);
    for (int i = 0; i < 10000; i++) CHECK(arena_alloc(a, 100) != NULL); /* many blocks */
    CHECK(arena_used(a) >= 10000 * 100);
    int *v = NULL, n = 0, cap = 0;
    for (int i = 0; i < 1000; i++) ARENA_PUSH(a, v, n, cap, i * 3);
    int bad = 0;
    for (int i = 0; i < 1000; i++) bad += v[i] != i * 3;
    CHECK_EQ_I(n, 1000);
    CHECK_EQ_I(bad, 0);
    CHECK(cap >= 1000 && cap < 2048);
    arena_free(a);
}

void test_half(void) {
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = num_half_to_float((uint16_t)h);
        if (isnan(f)) continue;
        bad += num_float_to_half(f) != h;
    }
    CHECK_EQ_I(bad, 0);
    CHECK_EQ_I(num_float_to_half(1.0f), 0x3c00);
    CHECK_EQ_I(num_float_to_half(65504.0f), 0x7bff);
    CHECK_EQ_I(num_float_to_half(65520.0f), 0x7c00); /* rounds to infinity */
    CHECK_EQ_I(num_float_to_half(ldexpf(1, -24)), 0x0001); /* smallest subnormal */
    CHECK_EQ_I(num_float_to_half(ldexpf(1, -25)), 0x0000); /* tie to even: 0 */
    CHECK_EQ_I(num_float_to_half(ldexpf(3, -25)), 0x0002); /* tie to even: 2 */
    CHECK_EQ_I(num_float_to_half(1.0f + ldexpf(1, -11)), 0x3c00); /* tie to even, down */
    CHECK(isnan(num_half_to_float(num_float_to_half(NAN))));
    CHECK(num_half_to_float(0xfc00) == -INFINITY);
}

void test_bf16(void) {
    CHECK_EQ_I(num_float_to_bf16(1.0f), 0x3f80);
    CHECK(num_bf16_to_float(0x3f80) == 1.0f);
    CHECK_EQ_I(num_float_to_bf16(1.0f + ldexpf(1, -8)), 0x3f80); /* tie to even, down */
    CHECK_EQ_I(num_float_to_bf16(1.0f + ldexpf(3, -8)), 0x3f82); /* tie to even, up */
    CHECK(isnan(num_bf16_to_float(num_float_to_bf16(NAN))));
}

void test_tensor_cast(void) {
    Arena *a = arena_new(0);
    int64_t d = 4;
    MNTensor *f = ir_tensor_new(a, ONNX_FLOAT32, 1, &d);
    float v[4] = {-1.7f, 2.5f, 0.0f, 300.0f};
    memcpy(f->data, v, sizeof v);
    MNTensor *i = ir_tensor_cast(a, f, ONNX_INT32);
    CHECK_EQ_I(ir_tensor_get_i(i, 0), -1);
    CHECK_EQ_I(ir_tensor_get_i(i, 1), 2);
    MNTensor *b = ir_tensor_cast(a, f, ONNX_BOOL);
    CHECK_EQ_I(ir_tensor_get_i(b, 0), 1);
    CHECK_EQ_I(ir_tensor_get_i(b, 2), 0);
    MNTensor *u8 = ir_tensor_cast(a, i, ONNX_UINT8);
    CHECK_EQ_I(ir_tensor_get_i(u8, 3), 44); /* 300 wraps modulo 256 */
    MNTensor *h = ir_tensor_cast(a, f, ONNX_FLOAT16);
    CHECK(ir_tensor_get_f(h, 1) == 2.5);
    MNTensor *big = ir_tensor_new(a, ONNX_UINT64, 1, &d);
    ir_tensor_set_i(big, 0, -1); /* all ones */
    MNTensor *bd = ir_tensor_cast(a, big, ONNX_DOUBLE);
    CHECK(ir_tensor_get_f(bd, 0) == 18446744073709551615.0);
    arena_free(a);
}

void test_value_table(void) {
    TG t;
    tg_init(&t, 13);
    char name[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "v%d", i);
        ir_value_new(t.g, name);
    }
    int found = 0;
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "v%d", i);
        MNValue *v = ir_value_lookup(t.g, name);
        found += v && v->id == i;
    }
    CHECK_EQ_I(found, 5000);
    CHECK(ir_value_lookup(t.g, "nope") == NULL);
    MNValue *dup = ir_value_new(t.g, "v7");
    CHECK(!strcmp(dup->name, "v7_1"));
    tg_done(&t);
}

void test_ops_table(void) {
    for (int i = 1; i < OP_COUNT; i++) {
        CHECK_EQ_I(ops_lookup(mn_ops[i].name), i);
        CHECK(infer_ops[i].infer != NULL && infer_ops[i].fold != NULL);
        CHECK(mn_ops[i].since <= mn_ops[i].max);
    }
    CHECK_EQ_I(ops_lookup("NoSuchOp"), OP_UNSUPPORTED);
    CHECK_EQ_I(ops_lookup(""), OP_UNSUPPORTED);
}

void test_options(void) {
    MNOptions o;
    char err[256];
    opt_init(&o);
    CHECK(o.ival[MN_OPT_fold_max_elems] == 4194304);
    CHECK(opt_set(&o, "fold_max_elems=10", err, sizeof err) && o.ival[MN_OPT_fold_max_elems] == 10);
    CHECK(o.src[MN_OPT_fold_max_elems] == MN_SRC_CMDLINE);
    CHECK(!opt_set(&o, "fold_max_elems=-1", err, sizeof err));
    CHECK(!opt_set(&o, "nope=1", err, sizeof err) && strstr(err, "memory_limit_mb"));
    CHECK(opt_add_input_shape(&o, "x=1,3,224,224", err, sizeof err));
    CHECK(o.nshapes == 1 && o.shapes[0].rank == 4 && o.shapes[0].dims[3] == 224);
    CHECK(opt_add_input_shape(&o, "scalar=", err, sizeof err) && o.shapes[1].rank == 0);
    CHECK(opt_add_input_shape(&o, "a=b=2", err, sizeof err) && !strcmp(o.shapes[2].name, "a=b"));
    CHECK(!opt_add_input_shape(&o, "x=1,,2", err, sizeof err));
    CHECK(!opt_add_input_shape(&o, "y=-1", err, sizeof err));
    CHECK(!opt_add_input_shape(&o, "noeq", err, sizeof err));
    /* booleans, strings and long flags */
    CHECK(opt_set(&o, "verify=true", err, sizeof err) && o.ival[MN_OPT_verify] == 1);
    CHECK(!opt_set(&o, "verify=yes", err, sizeof err) && strstr(err, "true or false"));
    CHECK(opt_set(&o, "machine=tiny", err, sizeof err) && !strcmp(o.sval[MN_OPT_machine], "tiny"));
    CHECK(!opt_set(&o, "scheduler=fastest", err, sizeof err) && strstr(err, "always_from_dram|reuse_consecutive"));
    CHECK_EQ_I(opt_flag("--dump-all"), MN_OPT_dump_all);
    CHECK_EQ_I(opt_flag("--simulation-mode"), MN_OPT_simulation_mode);
    CHECK_EQ_I(opt_flag("--nosuch"), -1);
    CHECK_EQ_I(opt_flag("-dump-all"), -1);
    CHECK(opt_set(&o, "dump_after=load,emit", err, sizeof err) && opt_dump_after_has(&o, "emit") &&
          opt_dump_after_has(&o, "load"));
    CHECK(!opt_dump_after_has(&o, "lo") && !opt_dump_after_has(&o, "dtype"));
    opt_free(&o);

    /* a preset building on another, then an option file: each value says where it came from */
    char dir[] = "/tmp/mncc_presetXXXXXX", a[300], b[300], j[300], bad[300], cyc[300];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(a, sizeof a, "%s/a.json", dir), snprintf(b, sizeof b, "%s/b.json", dir),
        snprintf(j, sizeof j, "%s/o.json", dir);
    snprintf(bad, sizeof bad, "%s/bad.json", dir), snprintf(cyc, sizeof cyc, "%s/cyc.json", dir);
    FILE *f = fopen(a, "w");
    fprintf(f, "{\"options\": {\"scheduler\": \"spill_opt\", \"seed\": 7, \"verify\": true}}");
    fclose(f);
    f = fopen(b, "w");
    fprintf(f, "{\"description\": \"x\", \"base\": \"%s\", \"options\": {\"seed\": 9}}", a);
    fclose(f);
    f = fopen(j, "w");
    fprintf(f, "{\"sa_steps\": 5, \"link\": \"merge\"}");
    fclose(f);
    f = fopen(bad, "w");
    fprintf(f, "{\"options\": {\"link\": \"glue\"}}");
    fclose(f);
    f = fopen(cyc, "w");
    fprintf(f, "{\"base\": \"%s\"}", cyc);
    fclose(f);
    opt_init(&o);
    CHECK(opt_load_preset(&o, b, err, sizeof err));
    CHECK(o.ival[MN_OPT_scheduler] == MN_SCHED_SPILL_OPT && o.ival[MN_OPT_seed] == 9 && o.ival[MN_OPT_verify] == 1);
    CHECK(o.src[MN_OPT_seed] == MN_SRC_PRESET && !strcmp(o.from[MN_OPT_seed], b) &&
          !strcmp(o.from[MN_OPT_scheduler], a));
    CHECK(opt_load_json(&o, j, err, sizeof err) && o.ival[MN_OPT_sa_steps] == 5 &&
          o.src[MN_OPT_link] == MN_SRC_OPTION_FILE);
    CHECK(opt_set(&o, "seed=3", err, sizeof err) && o.src[MN_OPT_seed] == MN_SRC_CMDLINE &&
          o.from[MN_OPT_seed] == NULL);
    char sb[400];
    CHECK(!strcmp(opt_source_text(&o, MN_OPT_fold_max_elems, sb, sizeof sb), "default"));
    CHECK(!strncmp(opt_source_text(&o, MN_OPT_scheduler, sb, sizeof sb), "preset /tmp/", 12));
    CHECK(!opt_load_preset(&o, bad, err, sizeof err) && strstr(err, "bad.json") && strstr(err, "concat|merge"));
    CHECK(!opt_load_preset(&o, cyc, err, sizeof err) && strstr(err, "deep"));
    CHECK(!opt_load_preset(&o, "no_such_preset", err, sizeof err) && strstr(err, "not found"));
    opt_free(&o);
    remove(a), remove(b), remove(j), remove(bad), remove(cyc), rmdir(dir);
}

/* The verifier rejects a split whose pieces do not tile the value, and a sum whose terms
 * differ in shape from the result. */
void test_verify_pieces(void) {
    char err[256];
    for (int bad = 0; bad < 3; bad++) {
        TG t;
        tg_init(&t, 17);
        MNValue *x = tg_input(&t, "x", ONNX_FLOAT32, 2, DIMS(4, 10));
        MNNode *sp = tg_node(&t, "MNCoreInputSplit", "sp", 1, INS(x), 2);
        tg_attr_int(&t, sp, "axis", 1);
        ir_type_set(t.g, &sp->out[0]->type, ONNX_FLOAT32, 2, DIMS(4, 6));
        ir_type_set(t.g, &sp->out[1]->type, ONNX_FLOAT32, 2, bad == 1 ? DIMS(4, 5) : DIMS(4, 4));
        MNNode *sum = tg_node(&t, "MNCoreOutputSum", "sum", 2, INS(sp->out[0], sp->out[0]), 1);
        ir_type_set(t.g, &sum->out[0]->type, ONNX_FLOAT32, 2, bad == 2 ? DIMS(4, 4) : DIMS(4, 6));
        tg_output(&t, sum->out[0]);
        bool ok = ir_verify(t.g, NULL, 1, err, sizeof err);
        CHECK(ok == (bad == 0));
        if (bad == 1) CHECK(strstr(err, "add up to 11") != NULL);
        if (bad == 2) CHECK(strstr(err, "piece 'sp_out0' has extent 6 on axis 1") != NULL);
        tg_done(&t);
    }
}

/* A GPFNBin whose debug record holds a NUL is corrupt, also as its last record (the
 * decoder once kept the text cut at the NUL and accepted the program); the intact bytes
 * decode to the same step, and a program of many steps keeps every expression. */
void test_vsm_decode(void) {
    VProgram p, q;
    char err[300];
    MNBuf text = {0};
    for (int i = 0; i < 300; i++)
        buf_printf(&text, "fvadd $lm%dv $ln%dv $lr0v; lpassa $lm8v $ls0v\n", 8 * (i % 200), 8 * (i % 200));
    buf_printf(&text, "d get lm0:0\n");
    CHECK(vsm_parse("t.vsm", text.data, &p, err, sizeof err));
    MNBuf bin = {0};
    vsm_encode(&p, &bin);
    CHECK(vsm_decode((const uint8_t *)bin.data, bin.len, &q, err, sizeof err));
    CHECK(q.nsteps == 301 && q.steps[299].nexpr == 2 && q.steps[299].e[1].insn == p.steps[299].e[1].insn);
    CHECK(q.steps[300].kind == ST_DEBUG && !strcmp(q.steps[300].text, "d get lm0:0"));
    MNBuf again = {0}; /* one encoding per program: decoding and encoding gives the bytes back */
    vsm_encode(&q, &again);
    CHECK(again.len == bin.len && !memcmp(again.data, bin.data, bin.len));
    buf_free(&again);
    vsm_program_free(&q);
    /* "nop/3": the repeat is the varint after the line's kind; as 0x83 0x00 (3, overlong) it is refused */
    VProgram n3, back;
    CHECK(vsm_parse("n.vsm", "nop/3\n", &n3, err, sizeof err));
    MNBuf nb = {0}, over = {0};
    vsm_encode(&n3, &nb);
    CHECK(nb.len > 14 && (uint8_t)nb.data[13] == 3);
    CHECK(vsm_decode((const uint8_t *)nb.data, nb.len, &back, err, sizeof err) && back.steps[0].repeat == 3);
    vsm_program_free(&back);
    buf_append(&over, nb.data, 13), buf_append(&over, "\x83\x00", 2), buf_append(&over, nb.data + 14, nb.len - 14);
    CHECK(!vsm_decode((const uint8_t *)over.data, over.len, &back, err, sizeof err) && strstr(err, "corrupt"));
    vsm_program_free(&n3);
    buf_free(&nb), buf_free(&over);
    char *at = memmem(bin.data, bin.len, "lm0:0", 5);
    CHECK(at != NULL);
    if (at) {
        at[3] = 0;
        CHECK(!vsm_decode((const uint8_t *)bin.data, bin.len, &q, err, sizeof err) && strstr(err, "corrupt"));
    }
    vsm_program_free(&p);
    buf_free(&bin), buf_free(&text);
}

/* buf_printf formats the common conversions itself: it must print what snprintf does,
 * and hand everything else to it */
void test_buf_printf(void) {
#define SAME(...)                                              \
    do {                                                       \
        MNBuf b = {0};                                         \
        char want[256];                                        \
        buf_append(&b, "x", 1);                                \
        buf_printf(&b, __VA_ARGS__);                           \
        snprintf(want, sizeof want, "x" __VA_ARGS__);          \
        CHECK(!strcmp(b.data, want) && b.len == strlen(want)); \
        buf_free(&b);                                          \
    } while (0)
    SAME("plain");
    SAME("%d %d %d %i", 0, -1, INT32_MIN, INT32_MAX);
    SAME("%u %x %x", 4294967295u, 0u, 0xdeadbeefu);
    SAME("%ld %lu %lx", -1234567890123L, 18446744073709551615UL, 0xabcUL);
    SAME("%lld %lld %llu %llx", (long long)INT64_MIN, (long long)INT64_MAX, (unsigned long long)UINT64_MAX,
         0x1234567890abcdefULL);
    SAME("%zu%%%c%s", (size_t)42, 'q', "tail");
    SAME("$lm{%d}%lldv @%s %s", 7, (long long)-3, "", "a b");
    SAME("%02x %-6s|%.17g %+lld %5d", 5u, "ab", 0.1, (long long)3, 12); /* snprintf's */
    SAME("%s then %lld", "mixed", (long long)99);
    SAME("i%02x i%02x %016llx %5d|%05d|%3u|%08x|%2d", 5u, 0x3fu, 0xabcULL, -42, -42, 7u, 0xbeefu, 12345);
    SAME("%-3d|%4s|%0lld", 1, "ab", (long long)-5); /* snprintf's, and a 0 flag without width */
#undef SAME
    MNBuf big = {0};
    char s[3000];
    memset(s, 'z', sizeof s - 1), s[sizeof s - 1] = 0;
    buf_printf(&big, "%s%s%d", s, s, 1); /* beyond the first reserve */
    CHECK(big.len == 2 * (sizeof s - 1) + 1 && big.data[big.len - 1] == '1' && big.data[big.len] == 0);
    buf_free(&big);
}

/* fb_finish_spans leaves large strings and vectors where they lie: its spans, one after
 * another, must be the bytes fb_finish copies into one buffer, and a vector given in
 * pieces the same as one given whole */
void test_fb_spans(void) {
    Arena *a = arena_new(0);
    static uint8_t big[3][9000];
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < sizeof big[k]; i++) big[k][i] = (uint8_t)(i * 7 + k);
    char *bigs = arena_alloc(a, 5001);
    memset(bigs, 'q', 5000), bigs[5000] = 0;
    for (int variant = 0; variant < 2; variant++) {
        FbObj *root = fb_table(a, 6), *items[3];
        fb_set_obj(root, 0, fb_string(a, "small"));
        fb_set_obj(root, 1, fb_string(a, bigs));
        fb_set_u64(root, 2, 0x1122334455667788ull);
        for (int k = 0; k < 3; k++) {
            items[k] = fb_table(a, 2);
            fb_set_i32(items[k], 0, k);
            fb_set_obj(items[k], 1, fb_vec_scalar(a, big[k], sizeof big[k] - 8 * (size_t)k, 1));
        }
        fb_set_obj(root, 3, fb_vec_obj(a, items, 3));
        /* 24-byte records, whole or in three pieces (one of them small, one empty) */
        static int64_t rec[600 * 3];
        for (int i = 0; i < 600 * 3; i++) rec[i] = i * 31 - 7;
        MNSpan pc[3] = {{rec, 24 * 100}, {rec + 300, 0}, {rec + 300, 24 * 500}};
        fb_set_obj(root, 4, variant ? fb_vec_pieces(a, pc, 3, 24) : fb_vec_scalar(a, rec, 600, 24));
        fb_set_obj(root, 5, fb_vec_scalar(a, rec, 3, 8));
        MNBuf whole = {0}, own = {0}, joined = {0};
        fb_finish(root, "TEST", &whole);
        int n;
        MNSpan *sp = fb_finish_spans(root, "TEST", &own, &n);
        for (int k = 0; k < n; k++) buf_append(&joined, sp[k].p, sp[k].n);
        CHECK(n > 4 && own.len < whole.len / 2); /* the large ones were not copied */
        CHECK(joined.len == whole.len && !memcmp(joined.data, whole.data, whole.len));
        char e[256] = "";
        FbReader r = {(const uint8_t *)whole.data, whole.len, e, 0};
        FbTable t;
        CHECK(fb_root(&r, "TEST", &t));
        free(sp);
        buf_free(&whole), buf_free(&own), buf_free(&joined);
    }
    arena_free(a);
}

/* A line with value ids is linked once and then filled in from its template for the
 * lines that differ only in their ids: the filled text and code must be those of the
 * line parsed, resolved (each value's address added, LM in words, DRAM in long words),
 * printed and encoded */
void test_vsm_template(void) {
    static const char *first[] = {"fvadd $lm{3}8v $ln{5}0v $lr0v", "fmwrite $ln{5}[0,64,16,80] $lx0",
                                  "mvp/n4096i01 $d{7}64 $lc0@.1", "fpassa $m{2}376 $r0v"};
    static const char *next[] = {"fvadd $lm{11}8v $ln{4}0v $lr0v", "fmwrite $ln{9}[0,64,16,80] $lx0",
                                 "mvp/n4096i01 $d{12}64 $lc0@.1", "fpassa $m{6}376 $r0v"};
    const int64_t addr[16] = {0, 0, 10, 0, 100, 0, 31, 0, 0, 200, 0, 7, 5000};
    for (size_t t = 0; t < sizeof first / sizeof first[0]; t++) {
        VLineCache *lc = vsm_line_cache_new();
        VProgram p = {0}, q = {0};
        char err[300];
        CHECK(vsm_parse_relative_cached(lc, "t", first[t], strlen(first[t]), &p, err, sizeof err));
        vsm_line_cache_set_tmpl(lc, first[t], strlen(first[t]));
        VLinkTmpl tm;
        uint32_t ids[VSM_LINE_IDS];
        int nids = 0;
        bool have = vsm_line_cache_tmpl(lc, next[t], strlen(next[t]), &tm, ids, &nids);
        int braces = 0;
        for (const char *c = next[t]; *c; c++) braces += *c == '{';
        CHECK(have && nids == braces && tm.nrel == braces);
        CHECK(vsm_parse_relative("t", next[t], &q, err, sizeof err) && q.nsteps == 1);
        if (!have || q.nsteps != 1) {
            vsm_program_free(&p), vsm_program_free(&q), vsm_line_cache_free(lc);
            continue;
        }
        int64_t add[VSM_LINE_IDS];
        for (int r = 0; r < tm.nrel; r++) add[r] = tm.rel[r].unit * addr[ids[r]];
        MNBuf ft = {0}, fc = {0}, wt = {0}, wc = {0};
        int bad = -1;
        CHECK(vsm_tmpl_fill(&tm, add, &ft, &fc, &bad));
        VStep *st = &q.steps[0];
        for (int k = 0; k < st->nexpr; k++)
            for (int j = 0; j < st->e[k].nsrc + st->e[k].ndst; j++) {
                VOperand *o = j < st->e[k].nsrc ? &st->e[k].src[j] : &st->e[k].dst[j - st->e[k].nsrc];
                if (!o->sym) continue;
                int64_t a = (o->kind == K_DRAM ? 1 : 2) * addr[o->sym - 1];
                if (o->amode == A_FLAT)
                    for (int c = 0; c < 4; c++) o->flat[c] = (uint16_t)(o->flat[c] + a);
                else
                    o->addr += (uint32_t)a;
                o->reloc = o->sym, o->sym = 0;
            }
        vsm_print_step(&wt, st);
        vsm_encode_step(&wc, st);
        CHECK(ft.len == wt.len && !memcmp(ft.data, wt.data, wt.len));
        CHECK(fc.len == wc.len && !memcmp(fc.data, wc.data, wc.len));
        /* a flat address pushed past 16 bits is refused, not wrapped */
        if (tm.rel[0].flat) {
            int64_t far[1] = {70000};
            ft.len = fc.len = 0;
            CHECK(!vsm_tmpl_fill(&tm, far, &ft, &fc, &bad) && bad == 0);
        }
        buf_free(&ft), buf_free(&fc), buf_free(&wt), buf_free(&wc);
        vsm_program_free(&p), vsm_program_free(&q), vsm_line_cache_free(lc);
    }
}

/* The cycles counted from text, each line shape parsed once, are the parsed program's:
 * lines of one shape with other numbers, MVs and waits (parsed every time), a nop's
 * repeat, masks, debug lines and comments, a step of several expressions; and a count
 * stops at "quit" as a parse does */
void test_vsm_text_cycles(void) {
    MNMachine m;
    char err[300];
    CHECK(machine_load("mncore2", &m, err, sizeof err));
    static const char *text = "mvp/n32768i01 $d{3}0 $lc0@.0\n"
                              "mvp/n4096i02 $d{3}65536 $lc0@.1\n"
                              "l2bmd $lc0 $lb0\n"
                              "l2bmd $lc256 $lb32\n"
                              "nop/3\n"
                              "nop; wait i01\n"
                              "l2bmd $lc512 $lb64 # a comment 12\n"
                              "fvadd $lm{3}8v $ln{5}0v $lr0v; fmwrite $ln{5}[0,64,16,80] $lx0\n"
                              "fvadd $lm{3}16v $ln{5}8v $lr0v; fmwrite $ln{5}[8,72,24,88] $lx0\n"
                              "d print lm 0\n"
                              "nop/2\n"
                              "nop; wait i02\n"
                              "fvadd $lm{3}24v $ln{5}16v $lr0v\n"
                              "nop/3\n"
                              "nop/2\n"
                              "nop/5\n"
                              "quit\n"
                              "l2bmd $lc768 $lb96\n";
    VProgram p = {0};
    CHECK(vsm_parse_relative("t", text, &p, err, sizeof err));
    int64_t want = vsm_program_cycles(&p, &m);
    vsm_program_free(&p);
    CHECK(want > 0);
    CHECK_EQ_I(vsm_text_cycles("t", text, strlen(text), true, &m, err, sizeof err), want);
    static const char *bad = "l2bmd $lc0 $lb0\nfvadd $lm{3}8v\n";
    CHECK_EQ_I(vsm_text_cycles("t", bad, strlen(bad), true, &m, err, sizeof err), -1);
    CHECK(strstr(err, "t:2") != NULL);
}

#include "layout.h"
#include "plan.h"
#include "unit.h"
#include <stdlib.h>

static MNMachine test_machine(void) {
    MNMachine m;
    memset(&m, 0, sizeof m);
    m.groups = 4, m.l2b_per_group = 2, m.l1b_per_l2b = 8, m.mab_per_l1b = 16, m.pe_per_mab = 4;
    m.n_l2b = 8, m.n_l1b = 64, m.n_mab = 1024, m.n_pe = 4096;
    return m;
}

static bool reprint(const char *in, const char *want) {
    MNLayout l;
    char err[200];
    if (!layout_parse(in, &l, err, sizeof err)) {
        fprintf(stderr, "  parse failed: %s\n", err);
        return false;
    }
    MNBuf b = {0};
    layout_print(&l, &b);
    bool ok = !strcmp(b.data, want);
    if (!ok) fprintf(stderr, "  printed %s\n  wanted  %s\n", b.data, want);
    buf_free(&b);
    return ok;
}

void test_layout_parse_print(void) {
    /* the two forms of DESIGN.md, with and without spaces */
    const char *a = "PadLayout{(3,4)/((3:1), (1:1, 2_W:1, 4_PE:1); B@[MAB,L1B,L2B])}";
    CHECK(reprint(a, a));
    CHECK(reprint("PadLayout{(64,128)/((8_L2B:1,8:2),(16_MAB:1,2:1,4_PE:1); B@[L1B,W])}",
                  "PadLayout{(64,128)/((8_L2B:1, 8:2), (16_MAB:1, 2:1, 4_PE:1); B@[L1B,W])}"));
    CHECK(reprint("PadLayout{()/()}", "PadLayout{()/()}"));
    CHECK(reprint("PadLayout{()/(; B@[PE,MAB])}", "PadLayout{()/(; B@[PE,MAB])}"));
    CHECK(reprint("PadLayout{(5)/((2_Time:1, 4_PE:1))}", "PadLayout{(5)/((2_Time:1, 4_PE:1))}"));
    MNLayout l;
    char err[200];
    CHECK(!layout_parse("PadLayout{(3,4)/((3:1))}", &l, err, sizeof err)); /* fewer axes */
    CHECK(!layout_parse("PadLayout{(3)/((3_XY:1))}", &l, err, sizeof err));
    CHECK(!layout_parse("PadLayout{(3)/((3:0))}", &l, err, sizeof err));
    CHECK(!layout_parse("PadLayout{(3)/((3:1)) junk", &l, err, sizeof err));
    CHECK(!layout_parse("PadLayout{(3)/((3:1); B@[W,Q])}", &l, err, sizeof err));
}

void test_layout_figures(void) {
    MNLayout l;
    char err[200];
    MNMachine m = test_machine();
    CHECK(layout_parse("PadLayout{(3,4)/((3:1), (1:1, 2_W:1, 4_PE:1); B@[MAB,L1B,L2B])}", &l, err, sizeof err));
    CHECK_EQ_I(layout_padded(&l, 0), 3);
    CHECK_EQ_I(layout_padded(&l, 1), 8); /* padded_shape 3,8 as in DESIGN.md */
    CHECK_EQ_I(layout_num_lw(&l, 2), 4); /* 3 long words rounded to the alignment of 2 */
    CHECK_EQ_I(layout_extent(&l, LV_PE), 4);
    CHECK(layout_valid(&l, &m, 4, err, sizeof err));
    CHECK(!layout_valid(&l, &m, 8, err, sizeof err)); /* 2 W slots need elements of <= 4 bytes */
    CHECK(layout_parse("PadLayout{(64,128)/((8_L2B:1,8:2),(16_MAB:1,2:1,4_PE:1); B@[L1B,W])}", &l, err, sizeof err));
    CHECK_EQ_I(layout_num_lw(&l, 1), 16);
    CHECK_EQ_I(layout_extent(&l, LV_MAB), 16);
    CHECK(layout_valid(&l, &m, 4, err, sizeof err));
    /* overlapping subaxes on one level, a level that is too large, used and broadcast */
    CHECK(layout_parse("PadLayout{(4,4)/((4_PE:1), (4_PE:2))}", &l, err, sizeof err));
    CHECK(!layout_valid(&l, &m, 4, err, sizeof err) && strstr(err, "overlap"));
    CHECK(layout_parse("PadLayout{(32)/((32_MAB:1))}", &l, err, sizeof err));
    CHECK(!layout_valid(&l, &m, 4, err, sizeof err) && strstr(err, "does not divide"));
    CHECK(layout_parse("PadLayout{(3)/((3_MAB:1))}", &l, err, sizeof err));
    CHECK(!layout_valid(&l, &m, 4, err, sizeof err)); /* 3 does not divide 16 */
    CHECK(layout_parse("PadLayout{(4)/((4_PE:1); B@[PE])}", &l, err, sizeof err));
    CHECK(!layout_valid(&l, &m, 4, err, sizeof err) && strstr(err, "broadcast"));
    CHECK(layout_parse("PadLayout{(9)/((2:1, 4_PE:1))}", &l, err, sizeof err));
    CHECK(!layout_valid(&l, &m, 4, err, sizeof err) && strstr(err, "smaller"));
}

void test_layout_place(void) {
    MNLayout l;
    char err[200];
    CHECK(layout_parse("PadLayout{(3,4)/((3:1), (1:1, 2_W:1, 4_PE:1); B@[MAB,L1B,L2B])}", &l, err, sizeof err));
    MNPlace p;
    /* element (2, 3): address 2, then 3 = w 0 * 4 + pe 3 */
    layout_place(&l, (const int64_t[]){2, 3}, &p);
    CHECK(p.c[LV_ADDR] == 2 && p.c[LV_W] == 0 && p.c[LV_PE] == 3);
    layout_place(&l, (const int64_t[]){1, 6}, &p); /* padding: 6 = w 1, pe 2 */
    CHECK(p.c[LV_ADDR] == 1 && p.c[LV_W] == 1 && p.c[LV_PE] == 2);
    int64_t idx[2];
    bool pad;
    CHECK(layout_index(&l, &p, idx, &pad) && idx[0] == 1 && idx[1] == 6 && pad);
    p.c[LV_MAB] = 9; /* broadcast: any MAB holds a copy */
    CHECK(layout_index(&l, &p, idx, &pad) && idx[1] == 6);
    p.c[LV_ADDR] = 3; /* beyond the addresses the layout uses */
    CHECK(!layout_index(&l, &p, idx, &pad));
}

/* Random layouts: index -> place -> index is the identity, and every place a layout
 * uses maps back to the place it came from. */
void test_layout_roundtrip(void) {
    srand(12345);
    int checked = 0, walked = 0;
    for (int trial = 0; trial < 300; trial++) {
        MNLayout l;
        memset(&l, 0, sizeof l);
        l.rank = 1 + rand() % 3;
        int64_t next_stride[LV_COUNT];
        for (int v = 0; v < LV_COUNT; v++) next_stride[v] = 1 + (rand() % 2); /* gaps allowed */
        for (int i = 0; i < l.rank; i++) {
            l.nsub[i] = (uint8_t)(1 + rand() % 3);
            int64_t pad = 1;
            for (int k = l.nsub[i] - 1; k >= 0; k--) { /* assign strides from the least significant up */
                MNSubaxis *s = &l.sub[i][k];
                s->level = (uint8_t)(rand() % LV_COUNT);
                s->size = 1 + rand() % 4;
                s->stride = (int32_t)next_stride[s->level];
                next_stride[s->level] = s->stride * s->size + (rand() % 3 == 0);
                pad *= s->size;
            }
            l.shape[i] = 1 + rand() % pad;
        }
        char err[200];
        if (!layout_valid(&l, NULL, 0, err, sizeof err)) {
            fprintf(stderr, "  random layout invalid: %s\n", err);
            unit_failures++;
            continue;
        }
        /* print -> parse -> print */
        MNBuf b1 = {0}, b2 = {0};
        layout_print(&l, &b1);
        MNLayout l2;
        CHECK(layout_parse(b1.data, &l2, err, sizeof err));
        layout_print(&l2, &b2);
        CHECK(!strcmp(b1.data, b2.data));
        buf_free(&b1), buf_free(&b2);
        /* every padded index */
        int64_t n = 1, idx[MN_MAX_RANK], back[MN_MAX_RANK];
        for (int i = 0; i < l.rank; i++) n *= layout_padded(&l, i);
        for (int64_t f = 0; f < n; f++) {
            int64_t r = f;
            for (int i = l.rank - 1; i >= 0; i--) idx[i] = r % layout_padded(&l, i), r /= layout_padded(&l, i);
            MNPlace p, q;
            bool pad;
            layout_place(&l, idx, &p);
            if (!layout_index(&l, &p, back, &pad)) {
                unit_failures++;
                fprintf(stderr, "  trial %d: a placed index did not map back\n", trial);
                break;
            }
            for (int i = 0; i < l.rank; i++) CHECK(back[i] == idx[i]);
            layout_place(&l, back, &q);
            CHECK(!memcmp(&p, &q, sizeof p));
            /* the DRAM image holds every index once, inside its size */
            int64_t lw;
            int slot;
            layout_dram_pos(&l, idx, &lw, &slot);
            CHECK(lw >= 0 && lw < layout_dram_lw(&l) && slot >= 0 && slot < layout_extent(&l, LV_W));
            checked++;
        }
        /* the walk over the elements meets each at the place layout_place gives it */
        MNPlaceWalk w;
        place_walk_start(&w, &l);
        int64_t ns = 1;
        for (int i = 0; i < l.rank; i++) ns *= l.shape[i];
        for (int64_t f = 0; f < ns; f++, place_walk_next(&w)) {
            int64_t r = f;
            for (int i = l.rank - 1; i >= 0; i--) idx[i] = r % l.shape[i], r /= l.shape[i];
            MNPlace p;
            layout_place(&l, idx, &p);
            CHECK(!memcmp(&p, &w.p, sizeof p));
            walked++;
        }
    }
    CHECK(checked > 1000 && walked > 1000);
}

void test_layout_dram(void) {
    MNLayout l;
    char err[200];
    CHECK(layout_parse("PadLayout{(3,4)/((3:1), (1:1, 2_W:1, 4_PE:1); B@[MAB,L1B,L2B])}", &l, err, sizeof err));
    /* 4 PEs x 3 long words; broadcast copies are stored once */
    CHECK_EQ_I(layout_dram_lw(&l), 12);
    int64_t lw;
    int slot;
    layout_dram_pos(&l, (const int64_t[]){2, 3}, &lw, &slot); /* PE 3, address 2, slot 0 */
    CHECK(lw == 3 * 3 + 2 && slot == 0);
    layout_dram_pos(&l, (const int64_t[]){0, 5}, &lw, &slot); /* PE 1, address 0, slot 1 */
    CHECK(lw == 1 * 3 + 0 && slot == 1);
    /* distinct elements never share a (long word, slot) */
    bool used[12][2];
    memset(used, 0, sizeof used);
    int clash = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 8; j++) {
            layout_dram_pos(&l, (const int64_t[]){i, j}, &lw, &slot);
            if (used[lw][slot]) clash++;
            used[lw][slot] = true;
        }
    CHECK_EQ_I(clash, 0);
}

void test_xla(void) {
    MNXlaShape x;
    char err[200];
    /* the XLA documentation's 2x3 array a b c / d e f */
    CHECK(xla_parse("f32[2,3]{0,1}", &x, err, sizeof err));
    const char *want01 = "adbecf", *want10 = "abcdef";
    char got[7] = {0};
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 3; c++) got[xla_linear(&x, (const int64_t[]){r, c})] = (char)('a' + r * 3 + c);
    CHECK(!strcmp(got, want01));
    CHECK(xla_parse("f32[2,3]{1,0}", &x, err, sizeof err));
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 3; c++) got[xla_linear(&x, (const int64_t[]){r, c})] = (char)('a' + r * 3 + c);
    CHECK(!strcmp(got, want10));
    /* tiles pad to whole tiles: f32[3,5] with 2x2 tiles is a 2x3 grid of 4-element tiles */
    CHECK(xla_parse("f32[3,5]{1,0:T(2,2)}", &x, err, sizeof err));
    CHECK_EQ_I(xla_num_elems(&x), 24);
    CHECK_EQ_I(xla_linear(&x, (const int64_t[]){0, 0}), 0);
    CHECK_EQ_I(xla_linear(&x, (const int64_t[]){0, 1}), 1);
    CHECK_EQ_I(xla_linear(&x, (const int64_t[]){1, 0}), 2);
    CHECK_EQ_I(xla_linear(&x, (const int64_t[]){0, 2}), 4); /* second tile of the first tile row */
    CHECK_EQ_I(xla_linear(&x, (const int64_t[]){2, 0}), 12); /* first tile of the second tile row */
    CHECK_EQ_I(xla_linear(&x, (const int64_t[]){2, 4}), 20);
    CHECK(xla_parse("f32[64,128]{1,0:T(8,128)S(1)}", &x, err, sizeof err));
    CHECK(x.mem_space == 1 && x.ntile == 2 && xla_num_elems(&x) == 64 * 128);
    CHECK_EQ_I(xla_linear(&x, (const int64_t[]){9, 3}), 8 * 128 + 1 * 128 + 3);
    MNBuf b = {0};
    xla_print(&x, &b);
    CHECK(!strcmp(b.data, "f32[64,128]{1,0:T(8,128)S(1)}"));
    buf_free(&b);
    CHECK(xla_parse("bf16[4]", &x, err, sizeof err) && x.elem == ONNX_BFLOAT16 && x.m2m[0] == 0);
    CHECK(!xla_parse("f32[2,3]{0,0}", &x, err, sizeof err));
    CHECK(!xla_parse("q7[2]", &x, err, sizeof err));
    /* a linear index is a bijection onto [0, num_elems) without tiles */
    CHECK(xla_parse("s32[3,4,5]{0,2,1}", &x, err, sizeof err));
    bool seen[60] = {0};
    int dup = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 5; k++) {
                int64_t v = xla_linear(&x, (const int64_t[]){i, j, k});
                if (v < 0 || v >= 60 || seen[v])
                    dup++;
                else
                    seen[v] = true;
            }
    CHECK_EQ_I(dup, 0);
}

/* The verifier's demand check: a MatMul's B must be K-packed; a canonical B is caught,
 * the demanded layout passes. */
void test_demands_hold(void) {
    MNMachine m = test_machine();
    m.half_bits = 16, m.word_bits = 32, m.long_bits = 64, m.address_alignment_lw = 2;
    m.lm0_lw = 2048; /* the packed B (its K on every MAB) within a quarter of LM0: demanded */
    TG t;
    tg_init(&t, 17);
    MNValue *a = tg_input(&t, "a", ONNX_FLOAT32, 2, DIMS(64, 32));
    MNValue *b = tg_input(&t, "b", ONNX_FLOAT32, 2, DIMS(32, 16));
    MNNode *mm = tg_node(&t, "MatMul", "mm", 2, INS(a, b), 1);
    ir_type_set(t.g, &mm->out[0]->type, ONNX_FLOAT32, 2, DIMS(64, 16));
    MNValue *vs[3] = {a, b, mm->out[0]};
    MNLayout l;
    for (int i = 0; i < 3; i++) {
        vs[i]->dtype = MN_DT_Float;
        CHECK(plan_layout_canonical(&vs[i]->type, MN_DT_Float, &m, &l));
        layout_set(t.a, vs[i], &l);
    }
    char err[512] = "";
    CHECK(!plan_layout_demands_hold(t.g, &m, err, sizeof err));
    CHECK(strstr(err, "node 'mm' wants input 'b'") != NULL);
    MNMachine small = m;
    small.lm0_lw = 16; /* beyond a quarter of LM0 it is not: the canonical B holds */
    CHECK(plan_layout_demands_hold(t.g, &small, err, sizeof err));
    CHECK(plan_layout_kpacked(&b->type, MN_DT_Float, 0, &l));
    layout_set(t.a, b, &l);
    CHECK(plan_layout_demands_hold(t.g, &m, err, sizeof err));
    tg_done(&t);
}

static const char *canonical_str(MNBuf *b, const MNMachine *m, int rank, const int64_t *dims, MNDtype dt) {
    MNType ty = {0};
    ty.elem = ONNX_FLOAT32, ty.rank = rank, ty.dims = (int64_t *)dims;
    MNLayout l;
    b->len = 0;
    if (!plan_layout_canonical(&ty, dt, m, &l)) return "";
    char err[200];
    if (!layout_valid(&l, m, mn_dtype_bytes(dt), err, sizeof err)) return "invalid";
    layout_print(&l, b);
    return b->data;
}

/* Canonical layouts spread the leading dimensions over every level they can fill: a
 * batch-1 1000x1000 image uses all 4096 PEs (125 LW each), each level goes whole to the
 * dimension that uses most of it, and no place is left empty; beyond the L1B only while
 * more than 16 LW per PE would be left. */
void test_canonical_spread(void) {
    MNMachine m = test_machine();
    MNBuf b = {0};
    CHECK(!strcmp(
        canonical_str(&b, &m, 4, DIMS(1, 1, 1000, 1000), MN_DT_Float),
        "PadLayout{(1,1,1000,1000)/((1:125), (1:125), (1:125, 8_L2B:1, 8_L1B:1, 16_MAB:1), (125:1, 2_W:1, 4_PE:1))}"));
    CHECK(!strcmp(canonical_str(&b, &m, 2, DIMS(3, 4), MN_DT_Float),
                  "PadLayout{(3,4)/((1:1, 4_MAB:1), (1:1, 2_W:1, 4_PE:1); B@[L1B,L2B])}"));
    /* 64 channels take the 16 MABs, 8 rows the 8 L1Bs (they gain 8x there, the channels'
     * rest only 4x); then 8 LW per PE are left, too few to spread over the L2Bs */
    CHECK(!strcmp(canonical_str(&b, &m, 4, DIMS(2, 64, 8, 8), MN_DT_Float),
                  "PadLayout{(2,64,8,8)/((2:4), (4:1, 16_MAB:1), (1:1, 8_L1B:1), (1:1, 2_W:1, 4_PE:1); B@[L2B])}"));
    /* 16 LW per PE after the MABs: small enough to stay on one L1B */
    CHECK(!strcmp(canonical_str(&b, &m, 3, DIMS(16, 16, 8), MN_DT_Float),
                  "PadLayout{(16,16,8)/((1:16, 16_MAB:1), (16:1), (1:1, 2_W:1, 4_PE:1); B@[L1B,L2B])}"));
    /* one more row of 16 and the L1Bs are used */
    CHECK(!strcmp(canonical_str(&b, &m, 3, DIMS(17, 16, 8), MN_DT_Float),
                  "PadLayout{(17,16,8)/((3:1, 8_L1B:1), (1:1, 16_MAB:1), (1:1, 2_W:1, 4_PE:1); B@[L2B])}"));
    buf_free(&b);
}

/* layout_reshape regroups the input's digits into the output's dimensions, so every element
 * keeps its place: checked element by element against the input's places in row-major order */
static const char *reshaped_str(MNBuf *b, const char *in, int rank, const int64_t *dims) {
    MNLayout li, lo;
    MNType t = {0};
    char err[200];
    if (!layout_parse(in, &li, err, sizeof err)) return "unparsed";
    int64_t dd[LAYOUT_MAX_RANK];
    for (int d = 0; d < rank; d++) dd[d] = dims[d];
    t.rank = rank;
    t.dims = dd;
    b->len = 0;
    if (!layout_reshape(&li, &t, &lo)) return "none";
    int64_t n = 1, ii[LAYOUT_MAX_RANK], io[LAYOUT_MAX_RANK];
    for (int d = 0; d < rank; d++) n *= dims[d];
    for (int64_t e = 0; e < n; e++) {
        int64_t r = e;
        for (int d = li.rank - 1; d >= 0; d--) ii[d] = r % li.shape[d], r /= li.shape[d];
        r = e;
        for (int d = rank - 1; d >= 0; d--) io[d] = r % dims[d], r /= dims[d];
        MNPlace pi, po;
        layout_place(&li, ii, &pi);
        layout_place(&lo, io, &po);
        if (memcmp(&pi, &po, sizeof pi)) return "moved";
    }
    layout_print(&lo, b);
    return b->data;
}

void test_layout_reshape(void) {
    MNBuf b = {0};
    /* attention's head split: 512 features as 8 heads of 64, the batch kept on its L2Bs */
    CHECK(!strcmp(
        reshaped_str(&b, "PadLayout{(64,4,512)/((1:64, 4_L1B:1, 16_MAB:1), (1:64, 4_L2B:1), (64:1, 2_W:1, 4_PE:1))}", 3,
                     DIMS(64, 32, 64)),
        "PadLayout{(64,32,64)/((1:64, 4_L1B:1, 16_MAB:1), (4_L2B:1, 8:8), (8:1, 2_W:1, 4_PE:1))}"));
    /* and the merge back: heads on the L1Bs become part of the features' dimension */
    CHECK(!strcmp(reshaped_str(&b, "PadLayout{(64,32,64)/((4:8, 16_MAB:1), (4_L2B:1, 8_L1B:1), (8:1, 2_W:1, 4_PE:1))}",
                               2, DIMS(256, 512)),
                  "PadLayout{(256,512)/((4:8, 16_MAB:1, 4_L2B:1), (8_L1B:1, 8:1, 2_W:1, 4_PE:1))}"));
    /* a padded dimension passes whole to an output one of its size, not merged */
    CHECK(!strcmp(reshaped_str(&b, "PadLayout{(197,768)/((2_L2B:1, 8_L1B:1, 16_MAB:1), (96:1, 2_W:1, 4_PE:1))}", 3,
                               DIMS(197, 12, 64)),
                  "PadLayout{(197,12,64)/((2_L2B:1, 8_L1B:1, 16_MAB:1), (12:8), (8:1, 2_W:1, 4_PE:1))}"));
    /* ... past a dimension of one element before it (a Conv1d's rows back to a sequence: 100 steps on 128
     * places) */
    CHECK(
        !strcmp(reshaped_str(&b, "PadLayout{(1,256,1,100)/((1:256), (32:1, 2_W:1, 4_PE:1), (1:256), (16_MAB:1, 8:32))}",
                             3, DIMS(1, 256, 100)),
                "PadLayout{(1,256,100)/((1:1), (32:1, 2_W:1, 4_PE:1), (16_MAB:1, 8:32))}"));
    CHECK(!strcmp(reshaped_str(&b, "PadLayout{(14,14)/((2_L2B:1, 8_L1B:1), (16_MAB:1))}", 1, DIMS(196)), "none"));
    /* a boundary inside a digit it does not divide */
    CHECK(!strcmp(reshaped_str(&b, "PadLayout{(6,4)/((6:4), (1:1, 4_PE:1))}", 2, DIMS(4, 6)), "none"));
    buf_free(&b);
}

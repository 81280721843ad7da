/* MatMul split (matmul_split=true): a product whose constant B is too large for the
 * matrix unit, cut along K into products that fit it.
 *
 * The MAB matrix unit (emitter/matmul.c) needs B replicated on every MAB with K packed;
 * the layout planner demands that only while B takes at most a quarter of LM0 per PE
 * (layout_plan.c, kpacked_fits). A larger B (a wake-word model's first Gemm: 2400 x 32
 * weights) is left spread over the machine, and the product becomes a window op on the
 * vector unit: index tables of two entries per term of every output, 170 tables and 89k
 * lines of VSM for that one Gemm, most of its compile time and of its run time. So
 *   Y = Gemm(A [M, K], B, C)  (or MatMul(A, B), B constant)
 * becomes, for K cut into chunks [k0, k0 + kc) whose B part fits:
 *   A_j = Slice(A, k0, k0 + kc, axis 1)
 *   Y_j = Gemm(A_j, B_j, C for j = 0 only)     B_j: B's rows or columns k0..k0+kc
 *   Y   = Add(... Add(Y_0, Y_1) ..., Y_last)
 * Each chunk runs on the matrix unit; the slices of A move nothing across PEs when A
 * has K last (chunks start at multiples of 8, so every element keeps its PE and slot).
 * The sum adds the partial products in another order than one product would: float
 * results differ by rounding only.
 *
 * Only float products with A of rank 2, no transposed A, alpha 1, beta 1 (or no C), K a
 * multiple of 8 (the matrix unit's packing), A and B within a quarter of LM per PE
 * (Time-Slice cuts larger ones), at most MAX_CHUNKS chunks and an A whose
 * slices the gather can take (plan_gather_fits: a split the emitter could not express
 * would lose a model the window op compiles) are cut; the rest keep their window op. */
#include "plan.h"
#include "layout.h"
#include "ops.h"
#include <stdlib.h>
#include <string.h>

enum { MAX_CHUNKS = 64 };

static MNValue *int64_const(MNGraph *g, const char *name, int64_t x) {
    int64_t one = 1;
    MNValue *v = plan_value_new(g, name, ONNX_INT64, 1, &one);
    v->konst = ir_tensor_new(g->arena, ONNX_INT64, 1, &one);
    memcpy(v->konst->data, &x, sizeof x);
    return v;
}

/* does B's part of kc rows (K) fit the matrix unit's demand (replicated, K packed, a
 * quarter of LM0 per PE)? */
static bool chunk_fits(MNGraph *g, const MNMachine *m, int64_t kc, int64_t N, bool transb) {
    int64_t dims[2] = {transb ? N : kc, transb ? kc : N};
    MNType t = {0};
    ir_type_set(g, &t, ONNX_FLOAT32, 2, dims);
    MNLayout l;
    return plan_layout_kpacked(&t, MN_DT_Float, transb ? 1 : 0, &l) &&
           layout_num_lw(&l, m->address_alignment_lw) <= m->lm0_lw / 4;
}

/* Laid out canonically, does every chunk of A's columns keep its elements on their PEs
 * and slots (then the emitter copies it long word by long word, no gather)? An estimate
 * of the layout planner's choice, as plan_gather_fits is. */
static bool slices_copy(MNGraph *g, const MNMachine *m, int64_t M, int64_t K, int64_t kc) {
    int64_t dA[2] = {M, K};
    MNType ta = {0};
    ir_type_set(g, &ta, ONNX_FLOAT32, 2, dA);
    MNLayout la;
    if (!plan_layout_canonical(&ta, MN_DT_Float, m, &la)) return false;
    for (int64_t k0 = 0; k0 < K; k0 += kc) {
        int64_t kj = K - k0 < kc ? K - k0 : kc, dS[2] = {M, kj};
        MNType ts = {0};
        ir_type_set(g, &ts, ONNX_FLOAT32, 2, dS);
        MNLayout ls;
        if (!plan_layout_canonical(&ts, MN_DT_Float, m, &ls) || ls.bcast != la.bcast) return false;
        for (int64_t r = 0; r < M; r++)
            for (int64_t k = 0; k < kj; k++) {
                int64_t is[2] = {r, k}, ia[2] = {r, k0 + k};
                MNPlace ps, pa;
                layout_place(&ls, is, &ps);
                layout_place(&la, ia, &pa);
                for (int lv = LV_PE; lv <= LV_W; lv++)
                    if (!(la.bcast & (1u << lv)) && ps.c[lv] != pa.c[lv]) return false;
                if (ps.c[LV_TIME] || pa.c[LV_TIME]) return false;
            }
    }
    return true;
}

static MNNode *slice_node(MNGraph *g, const char *base, int j, MNValue *a, MNValue *aj, int64_t k0, int64_t kc) {
    Arena *ar = g->arena;
    MNNode *s;
    if (g->opset >= 10) {
        s = ir_node_new(g, "Slice", 4, 1);
        s->in[1] = int64_const(g, arena_printf(ar, "%s_k%d_start", base, j), k0);
        s->in[2] = int64_const(g, arena_printf(ar, "%s_k%d_end", base, j), k0 + kc);
        s->in[3] = int64_const(g, arena_printf(ar, "%s_k%d_axis", base, j), 1);
    } else { /* before opset 10: attributes */
        s = ir_node_new(g, "Slice", 1, 1);
        int64_t *v = ARENA_ARRAY(ar, int64_t, 3);
        v[0] = k0;
        v[1] = k0 + kc;
        v[2] = 1;
        s->nattr = 3;
        s->attrs = ARENA_ARRAY(ar, MNAttr, 3);
        s->attrs[0] = (MNAttr){.name = "starts", .type = MN_ATTR_INTS, .n = 1, .ints = &v[0]};
        s->attrs[1] = (MNAttr){.name = "ends", .type = MN_ATTR_INTS, .n = 1, .ints = &v[1]};
        s->attrs[2] = (MNAttr){.name = "axes", .type = MN_ATTR_INTS, .n = 1, .ints = &v[2]};
    }
    s->name = arena_printf(ar, "%s_k%d_slice", base, j);
    s->in[0] = a;
    s->out[0] = aj;
    aj->producer = s;
    aj->producer_out = 0;
    return s;
}

/* the nodes replacing product n (appended to the graph), or false when it stays whole */
static bool split(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    const MNMachine *m = &c->machine;
    bool gemm = n->op == OP_Gemm;
    if (n->nin < 2 || n->nout != 1 || !n->out[0]) return false;
    MNValue *a = n->in[0], *b = n->in[1], *bias = gemm && n->nin > 2 ? n->in[2] : NULL, *y = n->out[0];
    if (!a || !b || a->type.rank != 2 || b->type.rank != 2 || y->type.rank != 2 || a->type.elem != ONNX_FLOAT32 ||
        !b->konst || b->konst->elem != ONNX_FLOAT32 || y->type.elem != ONNX_FLOAT32)
        return false;
    bool transb = gemm && ir_attr_int(n, "transB", 0);
    if (gemm && (ir_attr_int(n, "transA", 0) || ir_attr_float(n, "alpha", 1.0) != 1.0)) return false;
    if (bias && ir_attr_float(n, "beta", 1.0) != 1.0) {
        if (ir_attr_float(n, "beta", 1.0) != 0.0) return false;
        bias = NULL;
    }
    int64_t M = a->type.dims[0], K = a->type.dims[1], N = transb ? b->type.dims[0] : b->type.dims[1];
    if ((transb ? b->type.dims[1] : b->type.dims[0]) != K || y->type.dims[0] != M || y->type.dims[1] != N || K % 8 ||
        K == 0 || N == 0)
        return false;
    if (chunk_fits(g, m, K, N, transb)) return false; /* the matrix unit takes it whole */
    /* A and B small next to LM (a quarter, as conv lowering asks): larger ones are
     * Time-Slice's, which cuts a product whose weights overflow LM along K itself */
    int64_t dA0[2] = {M, K}, lmq = machine_lm_cap(m) / 4;
    MNType tA = {0}, tB = {0};
    ir_type_set(g, &tA, ONNX_FLOAT32, 2, dA0);
    ir_type_set(g, &tB, ONNX_FLOAT32, 2, b->type.dims);
    MNLayout lA, lB;
    if (!plan_layout_canonical(&tA, MN_DT_Float, m, &lA) || !plan_layout_canonical(&tB, MN_DT_Float, m, &lB) ||
        layout_num_lw(&lA, m->address_alignment_lw) > lmq || layout_num_lw(&lB, m->address_alignment_lw) > lmq)
        return false;
    int64_t kc = (m->lm0_lw / 4) * 8 / N / 8 * 8;
    if (kc > K) kc = K / 8 * 8;
    while (kc >= 8 && !chunk_fits(g, m, kc, N, transb)) kc -= 8;
    if (kc < 8 || (K + kc - 1) / kc > MAX_CHUNKS) return false;
    int nc = (int)((K + kc - 1) / kc);
    int64_t dA[2] = {M, K}, dS[2] = {M, kc};
    if (!slices_copy(g, m, M, K, kc) && (!plan_gather_fits(g, m, 2, dA) || !plan_gather_fits(g, m, 2, dS)))
        return false;
    Arena *ar = g->arena;
    const char *base = n->name;
    const float *bd = b->konst->data;
    MNValue *acc = NULL;
    for (int j = 0; j < nc; j++) {
        int64_t k0 = j * kc, kj = K - k0 < kc ? K - k0 : kc;
        /* a chunk without C is a MatMul before opset 11 (a Gemm's C is required there) */
        bool as_gemm = gemm && ((j == 0 && bias) || g->opset >= 11), tb = as_gemm && transb;
        int64_t da[2] = {M, kj}, db[2] = {tb ? N : kj, tb ? kj : N}, dy[2] = {M, N};
        MNValue *aj = plan_value_new(g, arena_printf(ar, "%s_k%d_a", base, j), ONNX_FLOAT32, 2, da);
        slice_node(g, base, j, a, aj, k0, kj);
        MNValue *bj = plan_value_new(g, arena_printf(ar, "%s_k%d_b", b->name, j), ONNX_FLOAT32, 2, db);
        bj->konst = ir_tensor_new(ar, ONNX_FLOAT32, 2, db);
        float *w = bj->konst->data;
        for (int64_t k = 0; k < kj; k++)
            for (int64_t o = 0; o < N; o++) {
                float x = transb ? bd[o * K + k0 + k] : bd[(k0 + k) * N + o];
                if (tb)
                    w[o * kj + k] = x;
                else
                    w[k * N + o] = x;
            }
        bool last = j == nc - 1;
        MNValue *yj = nc == 1 ? y : plan_value_new(g, arena_printf(ar, "%s_k%d", base, j), ONNX_FLOAT32, 2, dy);
        MNNode *p = ir_node_new(g, as_gemm ? "Gemm" : "MatMul", as_gemm && j == 0 && bias ? 3 : 2, 1);
        p->name = arena_printf(ar, "%s_k%d", base, j);
        p->in[0] = aj;
        p->in[1] = bj;
        p->out[0] = yj;
        if (as_gemm && j == 0 && bias) p->in[2] = bias;
        if (tb) {
            p->nattr = 1;
            p->attrs = ARENA_ARRAY(ar, MNAttr, 1);
            p->attrs[0] = (MNAttr){.name = "transB", .type = MN_ATTR_INT, .i = 1};
        }
        yj->producer = p;
        yj->producer_out = 0;
        if (!acc) {
            acc = yj;
            continue;
        }
        MNValue *sum = last ? y : plan_value_new(g, arena_printf(ar, "%s_k%d_sum", base, j), ONNX_FLOAT32, 2, dy);
        MNNode *ad = ir_node_new(g, "Add", 2, 1);
        ad->name = arena_printf(ar, "%s_k%d_add", base, j);
        ad->in[0] = acc;
        ad->in[1] = yj;
        ad->out[0] = sum;
        sum->producer = ad;
        sum->producer_out = 0;
        acc = sum;
    }
    n->dead = true;
    return true;
}

static bool is_product(const MNNode *n) { return n->op == OP_MatMul || n->op == OP_Gemm; }

bool plan_matmul_split(MNCompile *c) {
    if (!c->opt->ival[MN_OPT_matmul_split]) return true;
    int cut = plan_replace_nodes(c, is_product, split);
    mn_figure(c, "products_split", cut);
    if (cut)
        mn_log(c, 0,
               "matmul split: %d products with weights too large for the matrix unit cut along K into products that "
               "fit it",
               cut);
    return true;
}

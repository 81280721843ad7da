#include "unit.h"
#include <stdlib.h>

int unit_failures;

/* a table, one row per line: */
/* clang-format off */
#define UNIT_TESTS(X)                                                                   \
    X(test_arena) X(test_half) X(test_bf16) X(test_tensor_cast) X(test_value_table)     \
    X(test_ops_table) X(test_options) X(test_infer_conv_pool) X(test_infer_matmul)      \
    X(test_infer_reshape_squeeze) X(test_infer_slice_gather) X(test_fold_shape_chain)   \
    X(test_fold_arith) X(test_infer_errors) X(test_infer_resize_pad_split)          \
    X(test_layout_parse_print) X(test_layout_figures) X(test_layout_place) X(test_layout_roundtrip) X(test_layout_dram) X(test_xla) X(test_verify_pieces) X(test_demands_hold) X(test_canonical_spread) X(test_layout_reshape) X(test_sched_place) X(test_sim_cache) X(test_vsm_decode) X(test_buf_printf) X(test_fb_spans) X(test_vsm_template) X(test_vsm_text_cycles)
/* clang-format on */

#define X(t) void t(void);
UNIT_TESTS(X)
#undef X

void tg_init(TG *t, int64_t opset) {
    memset(t, 0, sizeof *t);
    t->a = arena_new(0);
    t->g = ir_graph_new(t->a, "unit.onnx");
    t->g->opset = opset;
    t->g->inputs = ARENA_ARRAY(t->a, MNValue *, 64);
    t->g->outputs = ARENA_ARRAY(t->a, MNValue *, 64);
}
void tg_done(TG *t) { arena_free(t->a); }

MNValue *tg_input(TG *t, const char *name, int32_t elem, int rank, const int64_t *dims) {
    MNValue *v = ir_value_new(t->g, name);
    ir_type_set(t->g, &v->type, elem, rank, dims);
    v->is_input = true;
    t->g->inputs[t->g->ninputs++] = v;
    return v;
}

static MNValue *konst(TG *t, const char *name, MNTensor *k) {
    MNValue *v = ir_value_new(t->g, name);
    v->konst = k;
    v->is_initializer = true;
    ir_type_set(t->g, &v->type, k->elem, k->rank, k->dims);
    return v;
}

MNValue *tg_const_i64(TG *t, const char *name, int n, const int64_t *vals) {
    int64_t d = n;
    MNTensor *k = ir_tensor_new(t->a, ONNX_INT64, 1, &d);
    if (n) memcpy(k->data, vals, sizeof(int64_t) * (size_t)n);
    return konst(t, name, k);
}

MNValue *tg_const_f32(TG *t, const char *name, int rank, const int64_t *dims, const float *vals) {
    MNTensor *k = ir_tensor_new(t->a, ONNX_FLOAT32, rank, dims);
    memcpy(k->data, vals, sizeof(float) * (size_t)k->numel);
    return konst(t, name, k);
}

MNNode *tg_node(TG *t, const char *op, const char *name, int nin, MNValue **in, int nout) {
    MNNode *n = ir_node_new(t->g, op, nin, nout);
    n->name = arena_strdup(t->a, name);
    n->attrs = ARENA_ARRAY(t->a, MNAttr, 16);
    for (int k = 0; k < nin; k++) n->in[k] = in[k];
    for (int k = 0; k < nout; k++) {
        n->out[k] = ir_value_new(t->g, arena_printf(t->a, "%s_out%d", name, k));
        n->out[k]->producer = n;
        n->out[k]->producer_out = k;
    }
    return n;
}

static MNAttr *new_attr(TG *t, MNNode *n, const char *name, MNAttrType ty) {
    MNAttr *a = &n->attrs[n->nattr++];
    a->name = arena_strdup(t->a, name);
    a->type = ty;
    return a;
}
void tg_attr_int(TG *t, MNNode *n, const char *name, int64_t v) { new_attr(t, n, name, MN_ATTR_INT)->i = v; }
void tg_attr_float(TG *t, MNNode *n, const char *name, double v) { new_attr(t, n, name, MN_ATTR_FLOAT)->f = v; }
void tg_attr_str(TG *t, MNNode *n, const char *name, const char *s) {
    new_attr(t, n, name, MN_ATTR_STRING)->s = arena_strdup(t->a, s);
}
void tg_attr_ints(TG *t, MNNode *n, const char *name, int cnt, const int64_t *v) {
    MNAttr *a = new_attr(t, n, name, MN_ATTR_INTS);
    a->n = cnt;
    a->ints = ARENA_ARRAY(t->a, int64_t, cnt);
    memcpy(a->ints, v, sizeof(int64_t) * (size_t)cnt);
}
void tg_output(TG *t, MNValue *v) {
    v->is_output = true;
    t->g->outputs[t->g->noutputs++] = v;
}
bool tg_infer(TG *t) { return infer_graph(t->g, &t->d, 1 << 20, &t->nfolded); }
bool tg_shape_is(const MNValue *v, int rank, const int64_t *dims) {
    if (v->type.rank != rank) return false;
    for (int i = 0; i < rank; i++)
        if (v->type.dims[i] != dims[i]) return false;
    return true;
}

int main(int argc, char **argv) {
    static const struct {
        const char *name;
        void (*fn)(void);
    } tests[] = {
#define X(t) {#t, t},
        UNIT_TESTS(X)
#undef X
    };
    int pass = 0, fail = 0;
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        if (argc > 1 && strcmp(argv[1], tests[i].name)) continue;
        int before = unit_failures;
        tests[i].fn();
        if (unit_failures == before) {
            pass++;
            printf("ok %s\n", tests[i].name);
        } else {
            fail++;
            printf("FAIL unit %s\n", tests[i].name);
        }
    }
    printf("unit: %d passed, %d failed\n", pass, fail);
    return fail ? 1 : 0;
}

#include "unit.h"
#include <stdint.h>

void test_infer_conv_pool(void) {
    TG t;
    tg_init(&t, 13);
    MNValue *x = tg_input(&t, "x", ONNX_FLOAT32, 4, DIMS(1, 3, 224, 224));
    MNValue *w = tg_input(&t, "w", ONNX_FLOAT32, 4, DIMS(64, 3, 7, 7));
    MNNode *conv = tg_node(&t, "Conv", "conv", 2, INS(x, w), 1);
    tg_attr_ints(&t, conv, "strides", 2, DIMS(2, 2));
    tg_attr_ints(&t, conv, "pads", 4, DIMS(3, 3, 3, 3));
    MNNode *pool = tg_node(&t, "MaxPool", "pool", 1, INS(conv->out[0]), 1);
    tg_attr_ints(&t, pool, "kernel_shape", 2, DIMS(3, 3));
    tg_attr_ints(&t, pool, "strides", 2, DIMS(2, 2));
    tg_attr_ints(&t, pool, "pads", 4, DIMS(1, 1, 1, 1));
    /* SAME_UPPER, stride 2 on 7: out ceil(7/2) = 4 */
    MNValue *y = tg_input(&t, "y", ONNX_FLOAT32, 4, DIMS(1, 2, 7, 7));
    MNValue *wy = tg_input(&t, "wy", ONNX_FLOAT32, 4, DIMS(4, 1, 3, 3));
    MNNode *same = tg_node(&t, "Conv", "same", 2, INS(y, wy), 1);
    tg_attr_ints(&t, same, "strides", 2, DIMS(2, 2));
    tg_attr_str(&t, same, "auto_pad", "SAME_UPPER");
    tg_attr_int(&t, same, "group", 2);
    /* ceil_mode: 5 with k2 s2 -> 3 */
    MNValue *z = tg_input(&t, "z", ONNX_FLOAT32, 4, DIMS(1, 1, 5, 5));
    MNNode *cp = tg_node(&t, "AveragePool", "cp", 1, INS(z), 1);
    tg_attr_ints(&t, cp, "kernel_shape", 2, DIMS(2, 2));
    tg_attr_ints(&t, cp, "strides", 2, DIMS(2, 2));
    tg_attr_int(&t, cp, "ceil_mode", 1);
    MNValue *wt = tg_input(&t, "wt", ONNX_FLOAT32, 4, DIMS(1, 3, 3, 3));
    MNNode *ct = tg_node(&t, "ConvTranspose", "ct", 2, INS(z, wt), 1);
    tg_attr_ints(&t, ct, "strides", 2, DIMS(2, 2));
    tg_attr_ints(&t, ct, "output_padding", 2, DIMS(1, 1));
    MNNode *gp = tg_node(&t, "GlobalAveragePool", "gp", 1, INS(pool->out[0]), 1);
    CHECK(tg_infer(&t));
    CHECK(tg_shape_is(conv->out[0], 4, DIMS(1, 64, 112, 112)));
    CHECK(tg_shape_is(pool->out[0], 4, DIMS(1, 64, 56, 56)));
    CHECK(tg_shape_is(same->out[0], 4, DIMS(1, 4, 4, 4)));
    CHECK(tg_shape_is(cp->out[0], 4, DIMS(1, 1, 3, 3)));
    CHECK(tg_shape_is(ct->out[0], 4, DIMS(1, 3, 12, 12))); /* 2*(5-1)+1+3 */
    CHECK(tg_shape_is(gp->out[0], 4, DIMS(1, 64, 1, 1)));
    tg_done(&t);
}

void test_infer_matmul(void) {
    TG t;
    tg_init(&t, 13);
    MNValue *a = tg_input(&t, "a", ONNX_FLOAT32, 4, DIMS(2, 1, 3, 4));
    MNValue *b = tg_input(&t, "b", ONNX_FLOAT32, 3, DIMS(5, 4, 6));
    MNValue *v = tg_input(&t, "v", ONNX_FLOAT32, 1, DIMS(4));
    MNValue *m = tg_input(&t, "m", ONNX_FLOAT32, 2, DIMS(4, 6));
    MNValue *m2 = tg_input(&t, "m2", ONNX_FLOAT32, 2, DIMS(3, 4));
    MNNode *n1 = tg_node(&t, "MatMul", "n1", 2, INS(a, b), 1);
    MNNode *n2 = tg_node(&t, "MatMul", "n2", 2, INS(v, m), 1);
    MNNode *n3 = tg_node(&t, "MatMul", "n3", 2, INS(m2, v), 1);
    MNNode *g = tg_node(&t, "Gemm", "g", 2, INS(m2, m), 1);
    MNNode *gt = tg_node(&t, "Gemm", "gt", 2, INS(m, m), 1);
    tg_attr_int(&t, gt, "transA", 1);
    CHECK(tg_infer(&t));
    CHECK(tg_shape_is(n1->out[0], 4, DIMS(2, 5, 3, 6)));
    CHECK(tg_shape_is(n2->out[0], 1, DIMS(6)));
    CHECK(tg_shape_is(n3->out[0], 1, DIMS(3)));
    CHECK(tg_shape_is(g->out[0], 2, DIMS(3, 6)));
    CHECK(tg_shape_is(gt->out[0], 2, DIMS(6, 6)));
    tg_done(&t);
}

void test_infer_reshape_squeeze(void) {
    TG t;
    tg_init(&t, 13);
    MNValue *x = tg_input(&t, "x", ONNX_FLOAT32, 3, DIMS(2, 3, 4));
    MNNode *r1 = tg_node(&t, "Reshape", "r1", 2, INS(x, tg_const_i64(&t, "s1", 2, DIMS(0, -1))), 1);
    MNNode *r2 = tg_node(&t, "Reshape", "r2", 2, INS(x, tg_const_i64(&t, "s2", 4, DIMS(1, 2, 1, 12))), 1);
    MNNode *sq = tg_node(&t, "Squeeze", "sq", 1, INS(r2->out[0]), 1);
    MNNode *sq1 = tg_node(&t, "Squeeze", "sq1", 2, INS(r2->out[0], tg_const_i64(&t, "ax", 1, DIMS(-2))), 1);
    MNNode *us = tg_node(&t, "Unsqueeze", "us", 2, INS(x, tg_const_i64(&t, "ax2", 2, DIMS(0, -1))), 1);
    MNNode *fl = tg_node(&t, "Flatten", "fl", 1, INS(x), 1);
    tg_attr_int(&t, fl, "axis", -1);
    MNNode *tr = tg_node(&t, "Transpose", "tr", 1, INS(x), 1);
    MNNode *tp = tg_node(&t, "Transpose", "tp", 1, INS(x), 1);
    tg_attr_ints(&t, tp, "perm", 3, DIMS(1, 0, 2));
    CHECK(tg_infer(&t));
    CHECK(tg_shape_is(r1->out[0], 2, DIMS(2, 12)));
    CHECK(tg_shape_is(sq->out[0], 2, DIMS(2, 12)));
    CHECK(tg_shape_is(sq1->out[0], 3, DIMS(1, 2, 12)));
    CHECK(tg_shape_is(us->out[0], 5, DIMS(1, 2, 3, 4, 1)));
    CHECK(tg_shape_is(fl->out[0], 2, DIMS(6, 4)));
    CHECK(tg_shape_is(tr->out[0], 3, DIMS(4, 3, 2)));
    CHECK(tg_shape_is(tp->out[0], 3, DIMS(3, 2, 4)));
    tg_done(&t);
}

void test_infer_slice_gather(void) {
    TG t;
    tg_init(&t, 13);
    MNValue *x = tg_input(&t, "x", ONNX_FLOAT32, 3, DIMS(3, 4, 10));
    /* reverse the last axis completely: start -1, end -INT64_MAX, step -1 */
    MNNode *s1 = tg_node(&t, "Slice", "s1", 5,
                         INS(x, tg_const_i64(&t, "st", 1, DIMS(-1)), tg_const_i64(&t, "en", 1, DIMS(-INT64_MAX)),
                             tg_const_i64(&t, "ax", 1, DIMS(2)), tg_const_i64(&t, "sp", 1, DIMS(-1))),
                         1);
    /* every third element from 1, out of range end clamps */
    MNNode *s2 = tg_node(&t, "Slice", "s2", 5,
                         INS(x, tg_const_i64(&t, "st2", 1, DIMS(1)), tg_const_i64(&t, "en2", 1, DIMS(1000)),
                             tg_const_i64(&t, "ax2", 1, DIMS(-1)), tg_const_i64(&t, "sp2", 1, DIMS(3))),
                         1);
    MNValue *idx = tg_input(&t, "idx", ONNX_INT64, 2, DIMS(2, 2));
    MNNode *g = tg_node(&t, "Gather", "g", 2, INS(x, idx), 1);
    tg_attr_int(&t, g, "axis", 1);
    CHECK(tg_infer(&t));
    CHECK(tg_shape_is(s1->out[0], 3, DIMS(3, 4, 10)));
    CHECK(tg_shape_is(s2->out[0], 3, DIMS(3, 4, 3)));
    CHECK(tg_shape_is(g->out[0], 4, DIMS(3, 2, 2, 10)));
    tg_done(&t);
}

/* The PyTorch exporter's dynamic reshape folds away completely. */
void test_fold_shape_chain(void) {
    TG t;
    tg_init(&t, 13);
    MNValue *x = tg_input(&t, "x", ONNX_FLOAT32, 4, DIMS(8, 3, 4, 4));
    MNNode *sh = tg_node(&t, "Shape", "sh", 1, INS(x), 1);
    MNNode *ga = tg_node(&t, "Gather", "ga", 2, INS(sh->out[0], tg_const_i64(&t, "zero", 1, DIMS(0))), 1);
    MNNode *cc = tg_node(&t, "Concat", "cc", 2, INS(ga->out[0], tg_const_i64(&t, "m1", 1, DIMS(-1))), 1);
    tg_attr_int(&t, cc, "axis", 0);
    MNNode *rs = tg_node(&t, "Reshape", "rs", 2, INS(x, cc->out[0]), 1);
    tg_output(&t, rs->out[0]);
    CHECK(tg_infer(&t));
    CHECK_EQ_I(t.nfolded, 3);
    CHECK_EQ_I(t.g->nnodes, 1);
    CHECK(tg_shape_is(rs->out[0], 2, DIMS(8, 48)));
    const MNTensor *k = cc->out[0]->konst;
    CHECK(k && k->numel == 2 && ir_tensor_get_i(k, 0) == 8 && ir_tensor_get_i(k, 1) == -1);
    tg_done(&t);
}

void test_fold_arith(void) {
    TG t;
    tg_init(&t, 13);
    MNNode *r =
        tg_node(&t, "Range", "r", 3,
                INS(tg_const_i64(&t, "a", 0, NULL), tg_const_i64(&t, "b", 0, NULL), tg_const_i64(&t, "c", 0, NULL)), 1);
    /* scalars: rank-0 int64 constants made by hand */
    int64_t vals[3] = {1, 10, 3};
    for (int k = 0; k < 3; k++) {
        MNTensor *s = ir_tensor_new(t.a, ONNX_INT64, 0, NULL);
        ir_tensor_set_i(s, 0, vals[k]);
        r->in[k]->konst = s;
        ir_type_set(t.g, &r->in[k]->type, ONNX_INT64, 0, NULL);
    }
    MNValue *a = tg_const_i64(&t, "na", 3, DIMS(-7, 7, -8));
    MNValue *b = tg_const_i64(&t, "nb", 3, DIMS(2, -2, 3));
    MNNode *dv = tg_node(&t, "Div", "dv", 2, INS(a, b), 1);
    MNNode *md = tg_node(&t, "Mod", "md", 2, INS(a, b), 1);
    MNNode *fm = tg_node(&t, "Mod", "fm", 2, INS(a, b), 1);
    tg_attr_int(&t, fm, "fmod", 1);
    MNNode *eq = tg_node(&t, "Less", "lt", 2, INS(a, b), 1);
    MNNode *wh = tg_node(&t, "Where", "wh", 3, INS(eq->out[0], a, b), 1);
    MNNode *rp = tg_node(&t, "ReduceProd", "rp", 1, INS(b), 1);
    tg_attr_int(&t, rp, "keepdims", 0);
    float fv[6] = {1, 2, 3, 4, 5, 6};
    MNValue *f = tg_const_f32(&t, "f", 2, DIMS(2, 3), fv);
    MNNode *tr = tg_node(&t, "Transpose", "tr", 1, INS(f), 1);
    MNNode *sm = tg_node(&t, "ReduceSum", "sm", 2, INS(f, tg_const_i64(&t, "ax", 1, DIMS(1))), 1);
    CHECK(tg_infer(&t));
    CHECK_EQ_I(t.g->nnodes, 0);
    const MNTensor *k = r->out[0]->konst;
    CHECK(k && k->numel == 3 && ir_tensor_get_i(k, 2) == 7);
    k = dv->out[0]->konst; /* integer division truncates */
    CHECK(ir_tensor_get_i(k, 0) == -3 && ir_tensor_get_i(k, 1) == -3 && ir_tensor_get_i(k, 2) == -2);
    k = md->out[0]->konst; /* Mod takes the divisor's sign */
    CHECK(ir_tensor_get_i(k, 0) == 1 && ir_tensor_get_i(k, 1) == -1 && ir_tensor_get_i(k, 2) == 1);
    k = fm->out[0]->konst; /* fmod takes the dividend's sign */
    CHECK(ir_tensor_get_i(k, 0) == -1 && ir_tensor_get_i(k, 1) == 1 && ir_tensor_get_i(k, 2) == -2);
    k = wh->out[0]->konst;
    CHECK(ir_tensor_get_i(k, 0) == -7 && ir_tensor_get_i(k, 1) == -2 && ir_tensor_get_i(k, 2) == -8);
    CHECK(ir_tensor_get_i(rp->out[0]->konst, 0) == -12 && rp->out[0]->type.rank == 0);
    k = tr->out[0]->konst;
    CHECK(tg_shape_is(tr->out[0], 2, DIMS(3, 2)) && ir_tensor_get_f(k, 1) == 4 && ir_tensor_get_f(k, 2) == 2);
    k = sm->out[0]->konst;
    CHECK(tg_shape_is(sm->out[0], 2, DIMS(2, 1)) && ir_tensor_get_f(k, 0) == 6 && ir_tensor_get_f(k, 1) == 15);
    tg_done(&t);
}

void test_infer_errors(void) {
    TG t;
    tg_init(&t, 13);
    MNValue *a = tg_input(&t, "a", ONNX_FLOAT32, 2, DIMS(2, 3));
    MNValue *b = tg_input(&t, "b", ONNX_FLOAT32, 2, DIMS(4, 3));
    tg_node(&t, "Add", "bad_add", 2, INS(a, b), 1);
    CHECK(!tg_infer(&t));
    CHECK(strstr(t.d.msg, "node 'bad_add' (Add)") && strstr(t.d.msg, "cannot be broadcast"));
    CHECK(t.d.kind == DIAG_INVALID);
    tg_done(&t);

    tg_init(&t, 13);
    a = tg_input(&t, "a", ONNX_FLOAT32, 2, DIMS(2, 3));
    MNValue *i = tg_input(&t, "i", ONNX_INT64, 1, DIMS(2));
    tg_node(&t, "Reshape", "dyn", 2, INS(a, i), 1);
    CHECK(!tg_infer(&t));
    CHECK(t.d.kind == DIAG_UNSUPPORTED && strstr(t.d.msg, "value 'i'"));
    tg_done(&t);

    tg_init(&t, 13);
    a = tg_input(&t, "a", ONNX_FLOAT32, 2, DIMS(2, 3));
    MNNode *sm = tg_node(&t, "Softmax", "sm", 1, INS(a), 1);
    tg_attr_float(&t, sm, "axis", 1.0);
    CHECK(!tg_infer(&t));
    CHECK(strstr(t.d.msg, "attribute 'axis' must be INT, got FLOAT"));
    tg_done(&t);

    tg_init(&t, 13);
    a = tg_input(&t, "a", ONNX_FLOAT32, 2, DIMS(2, 3));
    MNNode *o = tg_node(&t, "Relu", "r", 1, INS(a), 1);
    ir_type_set(t.g, &o->out[0]->type, ONNX_FLOAT32, 2, DIMS(3, 2)); /* a wrong declared shape */
    CHECK(!tg_infer(&t));
    CHECK(strstr(t.d.msg, "declared shape [3,2] but the op produces [2,3]"));
    tg_done(&t);
}

void test_infer_resize_pad_split(void) {
    TG t;
    tg_init(&t, 13);
    MNValue *x = tg_input(&t, "x", ONNX_FLOAT32, 4, DIMS(1, 2, 3, 5));
    float sc[4] = {1, 1, 2, 1.5f};
    MNNode *rz = tg_node(&t, "Resize", "rz", 3, INS(x, NULL, tg_const_f32(&t, "sc", 1, DIMS(4), sc)), 1);
    MNNode *rs = tg_node(&t, "Resize", "rs", 4, INS(x, NULL, NULL, tg_const_i64(&t, "sz", 4, DIMS(1, 2, 7, 9))), 1);
    MNNode *pd = tg_node(&t, "Pad", "pd", 2, INS(x, tg_const_i64(&t, "pads", 8, DIMS(0, 0, 1, -1, 0, 0, 2, 0))), 1);
    MNNode *sp = tg_node(&t, "Split", "sp", 1, INS(x), 3);
    tg_attr_int(&t, sp, "axis", 2);
    MNNode *sp2 = tg_node(&t, "Split", "sp2", 2, INS(x, tg_const_i64(&t, "parts", 2, DIMS(2, 3))), 2);
    tg_attr_int(&t, sp2, "axis", -1);
    CHECK(tg_infer(&t));
    CHECK(tg_shape_is(rz->out[0], 4, DIMS(1, 2, 6, 7)));
    CHECK(tg_shape_is(rs->out[0], 4, DIMS(1, 2, 7, 9)));
    CHECK(tg_shape_is(pd->out[0], 4, DIMS(1, 2, 6, 4)));
    CHECK(tg_shape_is(sp->out[2], 4, DIMS(1, 2, 1, 5)));
    CHECK(tg_shape_is(sp2->out[1], 4, DIMS(1, 2, 3, 3)));
    tg_done(&t);
}

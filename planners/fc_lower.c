/* Flattened-image products: a classifier's first fully connected layer reads a CNN's last
 * image flattened (AlexNet's 256 x 6 x 6, VGG's 512 x 7 x 7), so
 *
 *   Y = Gemm(Flatten(X), B, C)   (X: N x C x H x W, B: (OC, C H W) with transB, else (C H W, OC))
 *   becomes
 *   Y = Flatten(Conv(X, B as (OC, C, H, W), C, kernel (H, W), strides (H, W)))
 *
 * the same sums (one output pixel whose window is the whole image), on the image's own
 * tiles: the flattened row would put a pixel's channels 36 or 49 long words apart, a
 * transposition of data spread over every L2B, and K = C H W packed on one MAB (1152
 * and 3136 long words a PE) is more than LM holds. The convolution's weights stream from
 * DRAM as any tiled convolution's do, a few channel blocks at a time; the stride equal to
 * the kernel makes the single output's tile the whole image (no halo). A MatMul by a
 * constant (C H W, OC) is taken alike. Left as they are: a Gemm with alpha or beta other
 * than 1, transA, a bias that is not per output column, an image of one pixel (the global
 * pool's form, which the product takes as it is), and a Flatten read by anything else. */
#include "plan.h"
#include "ops.h"
#include <string.h>

static bool is_product(const MNNode *n) { return n->op == OP_Gemm || n->op == OP_MatMul; }

static bool lower(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    MNValue *a = n->nin >= 2 ? n->in[0] : NULL, *b = n->nin >= 2 ? n->in[1] : NULL, *y = n->nout ? n->out[0] : NULL;
    MNValue *bias = n->op == OP_Gemm && n->nin > 2 ? n->in[2] : NULL;
    if (!a || !b || !y || !a->producer || a->producer->op != OP_Flatten || a->nuses != 1 || !b->konst) return false;
    MNNode *f = a->producer;
    MNValue *x = f->in[0];
    if (!x || x->type.rank != 4 || ir_attr_int(f, "axis", 1) != 1 || x->type.elem != ONNX_FLOAT32 ||
        b->type.elem != ONNX_FLOAT32 || y->type.rank != 2)
        return false;
    bool tb = n->op == OP_Gemm && ir_attr_int(n, "transB", 0);
    if (n->op == OP_Gemm && (ir_attr_int(n, "transA", 0) || ir_attr_float(n, "alpha", 1) != 1 ||
                             (bias && ir_attr_float(n, "beta", 1) != 1)))
        return false;
    int64_t N = x->type.dims[0], C = x->type.dims[1], H = x->type.dims[2], W = x->type.dims[3], K = C * H * W;
    int64_t OC = y->type.dims[1];
    if (H * W <= 1 || b->type.rank != 2 || b->type.dims[tb ? 1 : 0] != K || b->type.dims[tb ? 0 : 1] != OC ||
        y->type.dims[0] != N)
        return false;
    if (bias && (!bias->konst || bias->type.elem != ONNX_FLOAT32 || bias->konst->numel != OC)) return false;
    Arena *ar = g->arena;
    int64_t wd[4] = {OC, C, H, W}, bd = OC, od[4] = {N, OC, 1, 1};
    MNValue *w = plan_value_new(g, arena_printf(ar, "%s_weight", n->name), ONNX_FLOAT32, 4, wd);
    w->is_initializer = true;
    if (tb) { /* (OC, C H W) is (OC, C, H, W) already: B's data, viewed so */
        w->konst = ARENA_NEW(ar, MNTensor);
        *w->konst = *b->konst;
        w->konst->rank = 4;
        w->konst->dims = ARENA_ARRAY(ar, int64_t, 4);
        memcpy(w->konst->dims, wd, sizeof wd);
    } else {
        w->konst = ir_tensor_new(ar, ONNX_FLOAT32, 4, wd);
        for (int64_t o = 0; o < OC; o++)
            for (int64_t k = 0; k < K; k++) ir_tensor_set_f(w->konst, o * K + k, ir_tensor_get_f(b->konst, k * OC + o));
    }
    MNValue *cb = NULL;
    if (bias) {
        cb = plan_value_new(g, arena_printf(ar, "%s_bias", n->name), ONNX_FLOAT32, 1, &bd);
        cb->konst = ir_tensor_new(ar, ONNX_FLOAT32, 1, &bd);
        cb->is_initializer = true;
        for (int64_t o = 0; o < OC; o++) ir_tensor_set_f(cb->konst, o, ir_tensor_get_f(bias->konst, o));
    }
    MNValue *px = plan_value_new(g, arena_printf(ar, "%s_pixel", n->name), ONNX_FLOAT32, 4, od);
    MNNode *conv = plan_node_new(g, "Conv", arena_printf(ar, "%s_conv", n->name), cb ? 3 : 2, px);
    conv->in[0] = x, conv->in[1] = w;
    if (cb) conv->in[2] = cb;
    int64_t k2[2] = {H, W};
    ir_attr_set_ints(g, conv, "kernel_shape", k2, 2);
    ir_attr_set_ints(g, conv, "strides", k2, 2);
    MNNode *fl = plan_node_new(g, "Flatten", arena_printf(ar, "%s_flatten", n->name), 1, y);
    fl->in[0] = px;
    ir_attr_set_int(g, fl, "axis", 1);
    n->dead = f->dead = true; /* the flattened row is read by nothing else */
    a->producer = NULL;
    return true;
}

bool plan_fc_lowering(MNCompile *c) {
    int lowered = plan_replace_nodes(c, is_product, lower);
    mn_figure(c, "products_of_flattened_images", lowered);
    if (lowered) mn_log(c, 0, "flattened-image products: %d as convolutions whose window is the whole image", lowered);
    return true;
}

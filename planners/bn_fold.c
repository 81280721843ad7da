/* BatchNormalization folding: an inference-mode normalisation of the output of a Conv, a
 * ConvTranspose or a Gemm whose weights are constants is a per-channel affine map of that
 * output, so it moves into the producer's constants and costs nothing at run time:
 *
 *   Y = BatchNormalization(P(X, W, b), scale, B, mean, var)   becomes   Y = P(X, W', b'),
 *   s = scale / sqrt(var + epsilon), t = B - mean * s,
 *   W' = W with output channel o scaled by s[o], b' = b * s + t   (b = 0 when absent)
 *
 * (a Gemm's output channels are its columns: B's columns are scaled, and C, times beta,
 * becomes the bias, beta 1). PaddlePaddle's and TensorFlow's exports keep the two apart;
 * torch.onnx folds them itself. The new constants are computed in double and rounded once;
 * the producer's own constants are left as they are (another node may read them). Left to
 * bn_lowering (a scale and a shift): statistics or weights computed at run time, training
 * outputs read, a producer's output read by anything else or a graph output, types other
 * than float. */
#include "plan.h"
#include "ops.h"
#include <math.h>

static bool is_bn(const MNNode *n) { return n->op == OP_BatchNormalization; }

static bool konst_f32(const MNValue *v) { return v && v->konst && v->konst->elem == ONNX_FLOAT32; }

/* the producer's output channels and, for channel o of element i of W, o (group-aware for ConvTranspose) */
static int64_t channel_of(const MNNode *p, const MNTensor *w, int64_t i) {
    if (p->op == OP_Conv) return i / (w->numel / w->dims[0]); /* (OC, C/g, k...) */
    if (p->op == OP_ConvTranspose) { /* (C, OC/g, k...): input channel ci of group ci / (C/g) */
        int64_t g = ir_attr_int(p, "group", 1), per = w->numel / w->dims[0], ocg = w->dims[1];
        int64_t ci = i / per, j = (i % per) / (per / ocg);
        return ci / (w->dims[0] / g) * ocg + j;
    }
    bool tb = ir_attr_int(p, "transB", 0) != 0; /* Gemm: B (K, N), or (N, K) with transB */
    return tb ? i / w->dims[1] : i % w->dims[1];
}

static bool fold(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    if (n->nin != 5 || n->nout < 1 || !n->out[0] || !n->in[0]) return false;
    for (int k = 1; k < n->nout; k++)
        if (n->out[k] && n->out[k]->nuses) return false; /* training statistics read */
    MNValue *x = n->in[0], *y = n->out[0];
    MNNode *p = x->producer;
    if (!p || p->dead || x->nuses != 1 || x->is_output || p->nout != 1 || y->type.elem != ONNX_FLOAT32) return false;
    if (p->op != OP_Conv && p->op != OP_ConvTranspose && p->op != OP_Gemm) return false;
    if (x->type.rank < 2 || x->type.dims[1] < 1) return false;
    int64_t C = x->type.dims[1];
    for (int k = 1; k < 5; k++)
        if (!konst_f32(n->in[k]) || n->in[k]->konst->numel != C) return false;
    if (p->nin < 2 || !konst_f32(p->in[1]) || p->in[1]->konst->rank < 2) return false;
    const MNTensor *wt = p->in[1]->konst; /* weights that make C output channels (else left alone) */
    int64_t oc = p->op == OP_Conv            ? wt->dims[0]
                 : p->op == OP_ConvTranspose ? wt->dims[1] * ir_attr_int(p, "group", 1)
                                             : wt->dims[ir_attr_int(p, "transB", 0) ? 0 : 1];
    int64_t groups = p->op == OP_ConvTranspose ? ir_attr_int(p, "group", 1) : 1;
    if (oc != C || groups < 1 || wt->dims[0] % groups) return false;
    const MNValue *bias = p->nin > 2 ? p->in[2] : NULL;
    if (bias && !konst_f32(bias)) return false;
    const MNTensor *w = p->in[1]->konst;
    bool gemm = p->op == OP_Gemm;
    if (gemm && (x->type.rank != 2 || w->rank != 2)) return false;
    /* the bias as a per-channel vector: a Conv's is (OC); a Gemm's C broadcasts to (M, N), taken when it is the same
     * in every row (a scalar, (N) or (1, N)) */
    if (bias && bias->konst->numel != C && !(gemm && bias->konst->numel == 1)) return false;
    if (bias && gemm && bias->konst->rank == 2 && bias->konst->dims[0] != 1) return false;
    double beta = gemm ? ir_attr_float(p, "beta", 1.0) : 1.0;
    double eps = ir_attr_float(n, "epsilon", 1e-5);
    Arena *a = g->arena;
    double *s = arena_alloc(a, sizeof(double) * (size_t)C), *t = arena_alloc(a, sizeof(double) * (size_t)C);
    for (int64_t o = 0; o < C; o++) {
        s[o] = ir_tensor_get_f(n->in[1]->konst, o) / sqrt(ir_tensor_get_f(n->in[4]->konst, o) + eps);
        t[o] = ir_tensor_get_f(n->in[2]->konst, o) - ir_tensor_get_f(n->in[3]->konst, o) * s[o];
    }
    MNValue *w2 = plan_value_new(g, arena_printf(a, "%s_folded_w", n->name), ONNX_FLOAT32, w->rank, w->dims);
    w2->konst = ir_tensor_new(a, ONNX_FLOAT32, w->rank, w->dims);
    for (int64_t i = 0; i < w->numel; i++)
        ir_tensor_set_f(w2->konst, i, ir_tensor_get_f(w, i) * s[channel_of(p, w, i)]);
    MNValue *b2 = plan_value_new(g, arena_printf(a, "%s_folded_b", n->name), ONNX_FLOAT32, 1, &C);
    b2->konst = ir_tensor_new(a, ONNX_FLOAT32, 1, &C);
    for (int64_t o = 0; o < C; o++) {
        double b = bias ? beta * ir_tensor_get_f(bias->konst, bias->konst->numel == 1 ? 0 : o) : 0;
        ir_tensor_set_f(b2->konst, o, b * s[o] + t[o]);
    }
    w2->is_initializer = b2->is_initializer = true;
    /* the producer again, with the new constants and the normalisation's output, where the normalisation stood */
    MNNode *r = ir_node_new(g, p->op_type, 3, 1);
    r->name = p->name;
    r->domain = p->domain;
    r->nattr = p->nattr;
    r->attrs = p->attrs;
    if (gemm) ir_attr_set_float(g, r, "beta", 1.0);
    r->in[0] = p->in[0], r->in[1] = w2, r->in[2] = b2;
    r->out[0] = y;
    y->producer = r;
    y->producer_out = 0;
    p->dead = n->dead = true;
    return true;
}

bool plan_bn_folding(MNCompile *c) {
    int folded = plan_replace_nodes(c, is_bn, fold);
    mn_figure(c, "batchnorms_folded", folded);
    if (folded) mn_log(c, 0, "BatchNormalization folding: %d nodes into their Conv, ConvTranspose or Gemm", folded);
    return true;
}

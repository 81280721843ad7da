/* MatMul + Add as Gemm: a product of two matrices followed by the addition of a bias over
 * its columns (a vector (N) or (1, N)) is one Gemm, whose code adds the bias as it writes
 * the product instead of a second pass over the output (PaddlePaddle's and TensorFlow's exports of a fully
 * connected layer are MatMul and Add; torch.onnx writes a Gemm itself).
 *
 *   Y = Add(MatMul(A, B), C)  or  Add(C, MatMul(A, B))   becomes   Y = Gemm(A, B, C)
 *
 * Left as they are: operands of another rank than 2 (Gemm has no batch), a bias of another
 * shape (a scalar, a column), a product read by anything else or a graph output, types other than float. */
#include "plan.h"
#include "ops.h"

static bool is_add(const MNNode *n) { return n->op == OP_Add; }

/* is C (a value of type t) a bias over N columns, (N) or (1, N)? (Gemm's C may broadcast from other shapes, which
 * its code does not take) */
static bool gemm_bias(const MNType *t, int64_t N) {
    if (t->elem != ONNX_FLOAT32 || t->rank < 1 || t->rank > 2 || !ir_type_static(t)) return false;
    return t->dims[t->rank - 1] == N && (t->rank == 1 || t->dims[0] == 1);
}

static bool fuse(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    if (n->nin != 2 || n->nout != 1 || !n->out[0] || !n->in[0] || !n->in[1]) return false;
    for (int k = 0; k < 2; k++) {
        MNValue *m = n->in[k], *bias = n->in[1 - k];
        MNNode *p = m->producer;
        if (!p || p->dead || p->op != OP_MatMul || p->nin != 2 || !p->in[0] || !p->in[1] || m->nuses != 1 ||
            m->is_output || m == bias)
            continue;
        const MNType *ta = &p->in[0]->type, *tb = &p->in[1]->type, *ty = &n->out[0]->type;
        if (ta->rank != 2 || tb->rank != 2 || m->type.rank != 2 || ta->elem != ONNX_FLOAT32 ||
            tb->elem != ONNX_FLOAT32 || !ir_type_static(&m->type) || ty->rank != 2 || ty->dims[0] != m->type.dims[0] ||
            ty->dims[1] != m->type.dims[1] || !gemm_bias(&bias->type, m->type.dims[1]))
            continue;
        MNNode *r = ir_node_new(g, "Gemm", 3, 1);
        r->name = arena_printf(g->arena, "%s_gemm", p->name);
        r->in[0] = p->in[0], r->in[1] = p->in[1], r->in[2] = bias;
        r->out[0] = n->out[0];
        n->out[0]->producer = r;
        n->out[0]->producer_out = 0;
        p->dead = n->dead = true;
        return true;
    }
    return false;
}

bool plan_gemm_fusion(MNCompile *c) {
    int fused = plan_replace_nodes(c, is_add, fuse);
    mn_figure(c, "matmul_adds_as_gemm", fused);
    if (fused) mn_log(c, 0, "MatMul + Add as Gemm: %d pairs", fused);
    return true;
}

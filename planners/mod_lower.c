/* Mod lowering: Mod of floats (fmod = 1, C's fmod: the remainder takes the dividend's sign)
 * as the elementwise ops the vector path has:
 *
 *   t = Sign(a / b) * Floor(|a / b|)       (a / b truncated toward zero)
 *   r = a - t * b
 *   y = r where |r| < |b|, else r - Sign(r) * |b|
 *
 * The last line mends a quotient that rounded up to the next integer (a / b a hair below
 * it): the remainder then came out as b itself, or past it. Integer Mod has code of its
 * own (exact long division, emitter/elementwise.c) and is left as it is. */
#include "plan.h"
#include "ops.h"

static bool is_float_mod(const MNNode *n) {
    if (n->op != OP_Mod || n->nin != 2 || n->nout != 1 || !n->in[0] || !n->in[1] || !n->out[0]) return false;
    int32_t t = n->out[0]->type.elem;
    return t == ONNX_FLOAT32 || t == ONNX_FLOAT16 || t == ONNX_DOUBLE;
}

static bool lower(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    MNValue *a = n->in[0], *b = n->in[1];
    int k = 0;
    MNValue *q = plan_op(g, n, "Div", a, b, NULL, 0, &k);
    MNValue *fq = plan_op(g, n, "Floor", plan_op(g, n, "Abs", q, NULL, NULL, 0, &k), NULL, NULL, 0, &k);
    MNValue *t = plan_op(g, n, "Mul", plan_op(g, n, "Sign", q, NULL, NULL, 0, &k), fq, NULL, 0, &k);
    MNValue *r = plan_op(g, n, "Sub", a, plan_op(g, n, "Mul", t, b, NULL, 0, &k), NULL, 0, &k);
    MNValue *ab = plan_op(g, n, "Abs", b, NULL, NULL, 0, &k);
    MNValue *in = plan_op(g, n, "Less", plan_op(g, n, "Abs", r, NULL, NULL, 0, &k), ab, NULL, ONNX_BOOL, &k);
    MNValue *past =
        plan_op(g, n, "Sub", r, plan_op(g, n, "Mul", plan_op(g, n, "Sign", r, NULL, NULL, 0, &k), ab, NULL, 0, &k),
                NULL, 0, &k);
    MNNode *w = plan_node_new(g, "Where", arena_printf(g->arena, "%s_Where%d", n->name, k), 3, n->out[0]);
    w->in[0] = in, w->in[1] = r, w->in[2] = past;
    n->dead = true;
    return true;
}

bool plan_mod_lowering(MNCompile *c) {
    int lowered = plan_replace_nodes(c, is_float_mod, lower);
    mn_figure(c, "float_mods_lowered", lowered);
    return true;
}

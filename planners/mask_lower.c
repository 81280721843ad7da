/* Mask lowering: ops that keep some elements of their input and zero the rest, by a
 * pattern known at compile time, become a bitwise AND with a constant mask.
 *
 * Y = Trilu(X, k) becomes Y = MNCoreBitAnd(X, M), M a constant of X's shape whose
 * elements are all ones where Trilu keeps X's element and zero elsewhere. Its type is
 * the integer type of X's element width on the machine (INT32 for FLOAT32, INT16 for
 * FLOAT16, INT64 for DOUBLE and for BOOL, a 64-bit lane), whose natural MN dtype has
 * the width of X's: the AND runs
 * on whole 64-bit lanes (`land`), so M must sit in the long words exactly as X does,
 * and AND is exact for every value (an infinity or a NaN is kept or zeroed, where a
 * product by 0 or 1 would give NaN for 0 * inf). The dtype planner never narrows the
 * result (the op is precision-sensitive there); Code Emit checks the widths and layouts
 * still agree. M has X's whole shape, not one matrix broadcast over the batch axes: a
 * broadcast constant that Time-Slice cuts along its rows is not one run of its DRAM
 * image, which Code Emit cannot download yet; so M is bounded as folding is
 * (fold_max_elems). A k computed at run time, or a larger X, leaves the node as it is:
 * Code Emit names it as not covered. A mask that keeps everything makes Y an Identity of X; one that keeps
 * nothing makes Y a constant 0 (folded, written by the host). */
#include "plan.h"
#include "infer.h"
#include "ops.h"
#include <string.h>

static bool is_trilu(const MNNode *n) { return n->op == OP_Trilu; }

static int32_t mask_elem(int32_t elem) {
    switch (mn_dtype_bytes(onnx_type_default_mn(elem))) {
    case 1: return ONNX_INT8;
    case 2: return ONNX_INT16;
    case 4: return ONNX_INT32;
    case 8: return ONNX_INT64;
    default: return ONNX_UNDEFINED;
    }
}

static bool lower(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    int64_t k;
    if (n->nout != 1 || !n->out[0] || !n->in[0] || !infer_trilu_k(n, &k)) return false;
    MNValue *x = n->in[0], *y = n->out[0];
    int32_t me = mask_elem(y->type.elem);
    int64_t numel = ir_shape_numel(&y->type);
    if (me == ONNX_UNDEFINED || numel < 0 || y->type.rank < 2) return false;
    if (numel > c->opt->ival[MN_OPT_fold_max_elems])
        return false; /* a constant as large as folding may make, no larger */
    Arena *a = g->arena;
    bool upper = ir_attr_int(n, "upper", 1) != 0;
    int64_t rows = y->type.dims[y->type.rank - 2], cols = y->type.dims[y->type.rank - 1], mat = rows * cols, kept = 0;
    for (int64_t i = 0; i < mat; i++) kept += infer_trilu_keeps(upper, k, i / cols, i % cols);
    if (mat) kept *= numel / mat; /* every matrix alike */
    if (kept == 0 && numel) { /* nothing kept: a constant 0 (x * 0 would be NaN for an infinity) */
        MNTensor *z = ir_tensor_new(a, y->type.elem, y->type.rank, y->type.dims);
        memset(z->data, 0, (size_t)onnx_type_size(y->type.elem) * (size_t)numel);
        y->konst = z;
        y->is_initializer = true;
        y->producer = NULL;
        n->dead = true;
        return true;
    }
    MNNode *r;
    if (kept == numel) { /* everything kept */
        r = ir_node_new(g, "Identity", 1, 1);
        r->name = arena_printf(a, "%s_all", n->name);
        r->in[0] = x;
    } else {
        MNValue *m = plan_value_new(g, arena_printf(a, "%s_mask", n->name), me, y->type.rank, y->type.dims);
        m->konst = ir_tensor_new(a, me, y->type.rank, y->type.dims);
        for (int64_t i = 0; i < numel; i++)
            ir_tensor_set_i(m->konst, i, infer_trilu_keeps(upper, k, i / cols % rows, i % cols) ? -1 : 0);
        m->is_initializer = true;
        r = ir_node_new(g, "MNCoreBitAnd", 2, 1);
        r->name = arena_printf(a, "%s_and", n->name);
        r->domain = "mncore";
        r->in[0] = x;
        r->in[1] = m;
    }
    r->out[0] = y;
    y->producer = r;
    y->producer_out = 0;
    n->dead = true;
    return true;
}

bool plan_mask_lowering(MNCompile *c) {
    int lowered = plan_replace_nodes(c, is_trilu, lower);
    mn_figure(c, "masks_lowered", lowered);
    if (lowered) mn_log(c, 0, "mask lowering: %d Trilu nodes as a bitwise and with a constant mask", lowered);
    return true;
}

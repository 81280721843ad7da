/* Static shapes and constant folding: the shared context of frontend/infer.c and
 * frontend/fold.c, and the helpers both use to read operands. */
#ifndef MN_INFER_H
#define MN_INFER_H
#include "ir.h"
#include "ops.h"

typedef struct MNInfer MNInfer;
struct MNInfer {
    MNGraph *g;
    MNDiag *d;
    int64_t opset;
    int64_t fold_max_elems; /* larger results stay as nodes */
    int nfolded;
    /* the conditions the unrolled Loops' iterations give back (unroll.c: infer_loops_done) */
    struct MNLoopCond {
        MNNode *loop;
        MNValue *cond;
    } * loop_conds;
    int nloop_conds, cap_loop_conds;
};

/* unroll.c: after every node is inferred, every unrolled Loop's conditions constant true */
bool infer_loops_done(MNInfer *c);
/* Report bad input about node n (and value v when not NULL); always returns false. */
bool infer_fail(MNInfer *c, const MNNode *n, const MNValue *v, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
bool infer_unsupported(MNInfer *c, const MNNode *n, const MNValue *v, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Constant integer operand (input k): NULL plus an error when absent or not constant. */
const MNTensor *infer_const_input(MNInfer *c, MNNode *n, int k, const char *what);
bool infer_norm_axis(MNInfer *c, MNNode *n, int64_t axis, int rank, int *out);
/* numpy multidirectional broadcast of shapes; false + error when incompatible */
bool infer_broadcast(MNInfer *c, MNNode *n, int nshapes, const MNType *const *ts, int *rank, int64_t *dims);

/* the helpers of infer.c that infer_move.c uses too */
/* the largest attribute values accepted (larger ones are refused as unsupported) */
#define ATTR_LIMIT ((int64_t)1 << 31) /* kernel sizes, strides, dilations, groups, blocks */
#define PAD_LIMIT ((int64_t)1 << 40)
/* Integer list from an attribute or, from a given opset on, from an input. */
typedef struct {
    int n;
    int64_t v[MN_MAX_RANK * 2 + 8];
    bool present;
} IntList;
bool infer_dim_add(int64_t a, int64_t b, int64_t *r); /* false on overflow */
bool infer_dim_mul(int64_t a, int64_t b, int64_t *r);
bool infer_set_out(MNInfer *c, MNNode *n, int k, int32_t elem, int rank, const int64_t *dims); /* output k's type */
bool infer_need_inputs(MNInfer *c, MNNode *n, int min, int max);
bool infer_need_rank(MNInfer *c, MNNode *n, int k, int lo, int hi);
bool infer_same_elem(MNInfer *c, MNNode *n, int a, int b);
bool infer_ints_attr(MNInfer *c, MNNode *n, const char *name, IntList *out);
bool infer_ints_input(MNInfer *c, MNNode *n, int k, const char *what, IntList *out);
/* input k's type, NULL when absent */
static inline MNType *infer_type(MNNode *n, int k) { return k < n->nin && n->in[k] ? &n->in[k]->type : NULL; }
static inline MNValue *infer_in(const MNNode *n, int k) { return k < n->nin ? n->in[k] : NULL; }

/* Per-op functions named by the table in ops.h, and that table's row of them per op. */
#define OP(name, since, max, infer, fold, props, types) \
    bool infer_##infer(MNInfer *c, MNNode *n);          \
    int fold_##fold(MNInfer *c, MNNode *n);
MN_OPS(OP)
#undef OP
typedef struct {
    bool (*infer)(MNInfer *c, MNNode *n);
    int (*fold)(MNInfer *c, MNNode *n); /* 1 folded, 0 kept as a node, -1 error */
} MNOpFns;
extern const MNOpFns infer_ops[OP_COUNT];
/* fold functions return 1 when the node was evaluated, 0 when it is left as a node
 * (e.g. an unsupported mode), -1 on error. */
bool fold_ready(const MNNode *n);
/* Trilu's k (0 when absent); false when it is not known at compile time */
bool infer_trilu_k(const MNNode *n, int64_t *k);
/* does Trilu keep element (row, col) of each matrix */
bool infer_trilu_keeps(bool upper, int64_t k, int64_t row, int64_t col);
/* An Einsum equation without ellipses or repeated subscripts in one operand: each input's
 * subscripts and the output's (the implicit output: those that appear once, in alphabetic
 * order). NULL, or why it is not such an equation. */
typedef struct {
    int nin, rank[2], rout;
    char in[2][MN_MAX_RANK], out[MN_MAX_RANK];
} MNEinsum;
const char *infer_einsum_parse(const char *eq, int nin, MNEinsum *e);
/* Static shapes over a whole graph whose inputs are bound; false + *d on bad input. */
bool infer_graph(MNGraph *g, MNDiag *d, int64_t fold_max_elems, int *nfolded);
/* The verifier's check after a pass rewrote n: inference on n's inputs and attributes
 * still gives its outputs' shapes and types (message in err otherwise). */
/* Sliding windows with explicit pads, and reduced axes, of nodes inference accepted. */
typedef struct {
    int ns;
    int64_t k[MN_MAX_RANK], s[MN_MAX_RANK], d[MN_MAX_RANK], pb[MN_MAX_RANK], pe[MN_MAX_RANK];
} MNWindow;
bool infer_window(MNGraph *g, MNNode *n, MNWindow *w);
bool infer_reduce_mask(MNGraph *g, MNNode *n, bool *mask);
bool infer_node_agrees(MNGraph *g, const MNNode *n, char *err, size_t errlen);
#endif

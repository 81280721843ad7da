/* MNGraph: the IR every pass reads and rewrites.
 *
 * A graph owns MNValues (tensors: graph inputs, initializers, node results) and MNNodes
 * (one operator each). g->nodes is the computation order; passes that reorder or insert
 * nodes rebuild that array. Everything lives in the compilation's arena. */
#ifndef MN_IR_H
#define MN_IR_H
#include "arena.h"
#include "buf.h"
#include "diag.h"
#include "dtypes.h"
#include <stdbool.h>
#include <stdint.h>

#define MN_MAX_RANK 16

/* Constant tensor data, stored densely in row-major order with the element width of
 * its ONNX type (FLOAT16/BFLOAT16 as their 16-bit patterns, BOOL as one byte). */
typedef struct MNTensor {
    int32_t elem;
    int rank;
    int64_t *dims;
    int64_t numel;
    void *data;
} MNTensor;

/* The ONNX type of a value. rank -1: unknown. dims[i] -1: not (yet) static; dim_param[i]
 * keeps the symbolic name so that errors can say which dim the user must bind. */
typedef struct MNType {
    int32_t elem;
    int rank;
    int64_t *dims;
    const char **dim_param;
} MNType;

typedef enum { MN_LOC_KIND_UNKNOWN, MN_LOC_KIND_DRAM, MN_LOC_KIND_LM, MN_LOC_KIND_IMM, MN_LOC_KIND_INOUT } MNLocKind;
typedef enum { MN_LOC_UNKNOWN, MN_LOC_DRAM, MN_LOC_LM0, MN_LOC_LM1, MN_LOC_IMM, MN_LOC_INOUT } MNLoc;

typedef struct MNNode MNNode;

typedef struct MNValue {
    const char *name;
    int id;
    MNType type;
    /* Decided by the planners; Unknown/NULL/-1 until then. */
    MNDtype dtype;
    MNLocKind loc_kind;
    MNLoc loc;
    const struct MNLayout *lay; /* the layout (core/layout.h), set by layout_set: what every stage reads */
    const char *layout; /* the same printed (PadLayout{...}), for l3ir.txt, the dumps and the app */
    const char *layout_kind; /* "MNCore", ... */
    int64_t *padded_shape; /* rank entries, or NULL */
    int64_t num_lw; /* -1 unknown */
    const char *gene; /* NULL: none decided */
    int64_t addr; /* -1 unknown */

    MNNode *producer; /* NULL for graph inputs and constants */
    int producer_out;
    MNTensor *konst; /* known value: an initializer or a folded result */
    bool is_input, is_output, is_initializer;
    bool inferred; /* its type was set by inference (not only declared) */
    /* a graph input or output the host passes in this shape while the machine holds it in
     * type's: the same elements in row-major order (planners/io_view.c); NULL: type's */
    const MNType *host;
    int nuses; /* node inputs that read it, plus 1 per graph output slot */
} MNValue;

typedef enum {
    MN_ATTR_UNDEFINED = 0,
    MN_ATTR_FLOAT = 1,
    MN_ATTR_INT = 2,
    MN_ATTR_STRING = 3,
    MN_ATTR_TENSOR = 4,
    MN_ATTR_GRAPH = 5,
    MN_ATTR_FLOATS = 6,
    MN_ATTR_INTS = 7,
    MN_ATTR_STRINGS = 8,
    MN_ATTR_TENSORS = 9,
    MN_ATTR_GRAPHS = 10,
    MN_ATTR_SPARSE_TENSOR = 11,
    MN_ATTR_SPARSE_TENSORS = 12,
    MN_ATTR_TYPE_PROTO = 13,
    MN_ATTR_TYPE_PROTOS = 14,
} MNAttrType;

typedef struct MNAttr {
    const char *name;
    MNAttrType type;
    double f;
    int64_t i;
    const char *s;
    size_t slen;
    MNTensor *t;
    int n; /* FLOATS / INTS / STRINGS count */
    double *floats;
    int64_t *ints;
    const char **strings;
    /* GRAPH: the body (a Loop's, a Scan's) as the loader read it, an Onnx__GraphProto that
     * lives as long as the compile; it becomes nodes when the trip count is known
     * (frontend/unroll.c) */
    const void *graph;
} MNAttr;

struct MNNode {
    const char *name; /* never empty: the loader names anonymous nodes OpType_<index> */
    int op; /* MNOp (ops.h); OP_UNSUPPORTED when not in the table */
    const char *op_type;
    const char *domain;
    int index; /* position in the source file, for stable orderings */
    int nattr;
    MNAttr *attrs;
    int nin, nout;
    MNValue **in; /* NULL entries: omitted optional inputs ("") */
    MNValue **out; /* NULL entries: omitted optional outputs */
    bool dead; /* removed by folding / DCE; dropped from g->nodes by ir_compact */
    int sim; /* its Node Simulation record (scheduler/), -1 none */
};

typedef struct MNGraph {
    Arena *arena;
    const char *file; /* model path, for messages */
    const char *name;
    int64_t opset; /* default-domain opset version */
    int64_t ir_version;
    const char *producer_name;

    MNValue **values;
    int nvalues, cap_values;
    MNNode **nodes;
    int nnodes, cap_nodes;
    MNValue **inputs; /* graph inputs that are not initializers */
    int ninputs;
    MNValue **outputs;
    int noutputs;

    /* name -> value, open addressing over cap (a power of two) */
    MNValue **table;
    size_t table_cap;
    int anon_counter;
    const char **ext_files; /* the external data files read (resolved paths), for compile.stamp */
    int next_files;
} MNGraph;

MNGraph *ir_graph_new(Arena *a, const char *file);
MNValue *ir_value_lookup(const MNGraph *g, const char *name);
/* New value with a unique name (existing names get a _N suffix). */
MNValue *ir_value_new(MNGraph *g, const char *name);
MNNode *ir_node_new(MNGraph *g, const char *op_type, int nin, int nout);
const MNAttr *ir_attr(const MNNode *n, const char *name);
int64_t ir_attr_int(const MNNode *n, const char *name, int64_t dflt);
/* appends an int attribute (the node's attribute array is copied, never shared) */
void ir_attr_set_int(MNGraph *g, MNNode *n, const char *name, int64_t v);
void ir_attr_set_float(MNGraph *g, MNNode *n, const char *name, double v);
/* attribute name := the cnt integers v (replacing one of that name) */
void ir_attr_set_ints(MNGraph *g, MNNode *n, const char *name, const int64_t *v, int cnt);
/* n's attributes as text that differs whenever they do, for cache and memo keys (a line
 * each); false when one is of a kind this cannot spell (a tensor, a graph, ...) */
bool ir_attrs_key(MNBuf *b, const MNNode *n);
double ir_attr_float(const MNNode *n, const char *name, double dflt);
const char *ir_attr_string(const MNNode *n, const char *name, const char *dflt);
/* Drop dead nodes from g->nodes and recompute use counts. */
void ir_compact(MNGraph *g);
/* drops the nodes whose results nothing reads (dead code); how many */
int ir_remove_dead(MNGraph *g);
void ir_recount_uses(MNGraph *g);
int64_t ir_shape_numel(const MNType *t); /* -1 when not static, -2 on overflow */
bool ir_type_static(const MNType *t);
void ir_type_set(MNGraph *g, MNType *t, int32_t elem, int rank, const int64_t *dims);
int ir_node_count_live(const MNGraph *g);

MNTensor *ir_tensor_new(Arena *a, int32_t elem, int rank, const int64_t *dims);
double ir_tensor_get_f(const MNTensor *t, int64_t i);
int64_t ir_tensor_get_i(const MNTensor *t, int64_t i);
void ir_tensor_set_f(MNTensor *t, int64_t i, double v);
void ir_tensor_set_i(MNTensor *t, int64_t i, int64_t v);
/* Convert element-wise into a new tensor of another type with ONNX Cast semantics. */
MNTensor *ir_tensor_cast(Arena *a, const MNTensor *t, int32_t elem);

/* Formatting helpers shared by the printers: "3,4" for dims, "" for rank 0. */
char *ir_dims_str(Arena *a, int rank, const int64_t *dims);
#endif

/* Attribute type checking. ONNX gives each attribute name one type across the ops that
 * use it (with a few per-op exceptions below), so one table of names catches a model
 * whose `axis` is a FLOAT before an op reads it with a default and silently miscompiles. */
#include "infer.h"
#include <string.h>

/* a table, one row per line: */
/* clang-format off */
#define ATTR_TYPES(X)                                                                         \
    X(axis, INT) X(keepdims, INT) X(group, INT) X(transA, INT) X(transB, INT) X(to, INT)       \
    X(blocksize, INT) X(ceil_mode, INT) X(count_include_pad, INT) X(select_last_index, INT)    \
    X(noop_with_empty_axes, INT) X(allowzero, INT) X(start, INT) X(end, INT) X(fmod, INT)     \
    X(detect_positive, INT) X(detect_negative, INT) X(exclude_outside, INT)                   \
    X(storage_order, INT) X(training_mode, INT) X(num_outputs, INT) X(stash_type, INT)        \
    X(p, INT) X(size, INT) X(spatial, INT) X(is_test, INT) X(seed, INT) X(upper, INT)            \
    X(alpha, FLOAT) X(beta, FLOAT) X(gamma, FLOAT) X(epsilon, FLOAT) X(momentum, FLOAT)        \
    X(ratio, FLOAT) X(bias, FLOAT) X(lambd, FLOAT) X(min, FLOAT) X(max, FLOAT)                 \
    X(cubic_coeff_a, FLOAT) X(extrapolation_value, FLOAT)                                      \
    X(auto_pad, STRING) X(mode, STRING) X(direction, STRING)                                   \
    X(coordinate_transformation_mode, STRING) X(nearest_mode, STRING)                          \
    X(keep_aspect_ratio_policy, STRING) X(approximate, STRING)                                 \
    X(axes, INTS) X(perm, INTS) X(kernel_shape, INTS) X(strides, INTS) X(pads, INTS)           \
    X(dilations, INTS) X(output_padding, INTS) X(output_shape, INTS) X(starts, INTS)          \
    X(ends, INTS) X(split, INTS) X(scales, FLOATS) X(consumed_inputs, INTS)                   \
    X(hidden_size, INT) X(clip, FLOAT) X(input_forget, INT) X(linear_before_reset, INT)      \
    X(layout, INT) X(activations, STRINGS) X(activation_alpha, FLOATS)                        \
    X(activation_beta, FLOATS) X(equation, STRING) X(reduction, STRING) X(ignore_index, INT)
/* clang-format on */

static const struct {
    const char *name;
    MNAttrType type;
} attr_types[] = {
#define X(n, t) {#n, MN_ATTR_##t},
    ATTR_TYPES(X)
#undef X
};

static const char *type_name(MNAttrType t) {
    static const char *names[] = {"UNDEFINED",      "FLOAT",      "INT",        "STRING",  "TENSOR", "GRAPH",
                                  "FLOATS",         "INTS",       "STRINGS",    "TENSORS", "GRAPHS", "SPARSE_TENSOR",
                                  "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"};
    return t >= 0 && t < (int)(sizeof names / sizeof names[0]) ? names[t] : "?";
}

static MNAttrType expected(const MNNode *n, const char *name) {
    if (!strcmp(name, "value")) {
        if (n->op == OP_ConstantOfShape) return MN_ATTR_TENSOR;
        if (n->op == OP_Pad) return MN_ATTR_FLOAT;
        return MN_ATTR_UNDEFINED; /* Constant: checked by infer_constant */
    }
    for (size_t i = 0; i < sizeof attr_types / sizeof attr_types[0]; i++)
        if (!strcmp(attr_types[i].name, name)) return attr_types[i].type;
    return MN_ATTR_UNDEFINED;
}

bool infer_check_attrs(MNInfer *c, MNNode *n);
bool infer_check_attrs(MNInfer *c, MNNode *n) {
    if (n->op == OP_Constant) return true;
    for (int i = 0; i < n->nattr; i++) {
        const MNAttr *a = &n->attrs[i];
        MNAttrType want = expected(n, a->name);
        if (want && a->type != want)
            return infer_fail(c, n, NULL, "attribute '%s' must be %s, got %s", a->name, type_name(want),
                              type_name(a->type));
    }
    return true;
}

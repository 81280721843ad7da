/* The ONNX operators mncc accepts: one row each.
 *
 * OP(Name, since, max, infer, fold)
 *   since..max  the default-domain opset versions whose semantics we implement; a model
 *               importing a version outside the range is rejected as unsupported.
 *   infer       shape and type inference (frontend/infer.c); every op has one.
 *   fold        constant evaluation (frontend/fold.c) or none: when every input is known
 *               the node is replaced by its result (ops like Shape fold from static
 *               shapes alone; see fold_ready()).
 * The table of names and opsets (mn_ops) is the core's; the frontend builds its table of
 * infer and fold functions from the same rows (infer_ops). */
#ifndef MN_OPS_H
#define MN_OPS_H
#include <stdbool.h>

#define MN_OPS(OP)                                                 \
    /* elementwise unary, same type out */                        \
    OP(Abs, 6, 21, unary, unary)                                   \
    OP(Neg, 6, 21, unary, unary)                                   \
    OP(Exp, 6, 21, unary, unary)                                   \
    OP(Log, 6, 21, unary, unary)                                   \
    OP(Sqrt, 6, 21, unary, unary)                                  \
    OP(Reciprocal, 6, 21, unary, unary)                            \
    OP(Floor, 6, 21, unary, unary)                                 \
    OP(Ceil, 6, 21, unary, unary)                                  \
    OP(Round, 11, 21, unary, unary)                                \
    OP(Sign, 9, 21, unary, unary)                                  \
    OP(Sin, 7, 21, unary, unary)                                   \
    OP(Cos, 7, 21, unary, unary)                                   \
    OP(Tan, 7, 21, unary, unary)                                   \
    OP(Asin, 7, 21, unary, unary)                                  \
    OP(Acos, 7, 21, unary, unary)                                  \
    OP(Atan, 7, 21, unary, unary)                                  \
    OP(Sinh, 9, 21, unary, unary)                                  \
    OP(Cosh, 9, 21, unary, unary)                                  \
    OP(Asinh, 9, 21, unary, unary)                                 \
    OP(Acosh, 9, 21, unary, unary)                                 \
    OP(Atanh, 9, 21, unary, unary)                                 \
    OP(Erf, 9, 21, unary, unary)                                   \
    OP(Relu, 6, 21, unary, unary)                                  \
    OP(LeakyRelu, 6, 21, unary, unary)                             \
    OP(Elu, 6, 21, unary, unary)                                   \
    OP(Selu, 6, 21, unary, unary)                                  \
    OP(Celu, 12, 21, unary, unary)                                 \
    OP(ThresholdedRelu, 10, 21, unary, unary)                      \
    OP(Sigmoid, 6, 21, unary, unary)                               \
    OP(HardSigmoid, 6, 21, unary, unary)                           \
    OP(HardSwish, 14, 21, unary, unary)                            \
    OP(Tanh, 6, 21, unary, unary)                                  \
    OP(Softplus, 1, 21, unary, unary)                              \
    OP(Softsign, 1, 21, unary, unary)                              \
    OP(Mish, 18, 21, unary, unary)                                 \
    OP(Gelu, 20, 21, unary, unary)                                 \
    OP(Shrink, 9, 21, unary, unary)                                \
    OP(Not, 1, 21, unary, unary)                                   \
    OP(IsNaN, 9, 21, predicate, unary)                             \
    OP(IsInf, 10, 21, predicate, unary)                            \
    OP(Identity, 1, 21, unary, identity)                           \
    OP(Dropout, 7, 21, dropout, none)                              \
    OP(Clip, 6, 21, clip, clip)                                    \
    OP(Cast, 6, 21, cast, cast)                                    \
    OP(CastLike, 15, 21, castlike, cast)                           \
    /* elementwise with numpy broadcasting */                     \
    OP(Add, 6, 21, binary, binary)                                 \
    OP(Sub, 6, 21, binary, binary)                                 \
    OP(Mul, 6, 21, binary, binary)                                 \
    OP(Div, 6, 21, binary, binary)                                 \
    OP(Pow, 6, 21, binary, binary)                                 \
    OP(Mod, 10, 21, binary, binary)                                \
    OP(PRelu, 6, 21, binary, binary)                               \
    OP(BitShift, 11, 21, binary, binary)                           \
    OP(Min, 6, 21, variadic, binary)                               \
    OP(Max, 6, 21, variadic, binary)                               \
    OP(Sum, 6, 21, variadic, binary)                               \
    OP(Mean, 6, 21, variadic, binary)                              \
    OP(Equal, 6, 21, compare, binary)                              \
    OP(Less, 6, 21, compare, binary)                               \
    OP(Greater, 6, 21, compare, binary)                            \
    OP(LessOrEqual, 12, 21, compare, binary)                       \
    OP(GreaterOrEqual, 12, 21, compare, binary)                    \
    OP(And, 6, 21, compare, binary)                                \
    OP(Or, 6, 21, compare, binary)                                 \
    OP(Xor, 6, 21, compare, binary)                                \
    OP(Where, 9, 21, where, where)                                 \
    OP(Trilu, 14, 21, trilu, trilu)                                \
    /* linear algebra, convolution, normalisation, pooling */     \
    OP(MatMul, 1, 21, matmul, none)                                \
    OP(Gemm, 6, 21, gemm, none)                                    \
    OP(Conv, 1, 21, conv, none)                                    \
    OP(ConvTranspose, 1, 21, conv_transpose, none)                 \
    OP(BatchNormalization, 6, 21, batchnorm, none)                 \
    OP(InstanceNormalization, 6, 21, same_as_input0, none)         \
    OP(LayerNormalization, 17, 21, layernorm, none)                \
    OP(LRN, 1, 21, same_as_input0, none)                           \
    OP(MaxPool, 1, 21, pool, none)                                 \
    OP(AveragePool, 1, 21, pool, none)                             \
    OP(LpPool, 2, 21, pool, none)                                  \
    OP(GlobalAveragePool, 1, 21, global_pool, none)                \
    OP(GlobalMaxPool, 1, 21, global_pool, none)                    \
    OP(Softmax, 1, 21, same_as_input0, none)                       \
    OP(LogSoftmax, 1, 21, same_as_input0, none)                    \
    OP(Hardmax, 1, 21, same_as_input0, none)                       \
    /* reductions */                                               \
    OP(ReduceSum, 1, 21, reduce, reduce)                           \
    OP(ReduceMean, 1, 21, reduce, reduce)                          \
    OP(ReduceMax, 1, 21, reduce, reduce)                           \
    OP(ReduceMin, 1, 21, reduce, reduce)                           \
    OP(ReduceProd, 1, 21, reduce, reduce)                          \
    OP(ReduceL1, 1, 21, reduce, reduce)                            \
    OP(ReduceL2, 1, 21, reduce, reduce)                            \
    OP(ReduceSumSquare, 1, 21, reduce, reduce)                     \
    OP(ReduceLogSum, 1, 21, reduce, reduce)                        \
    OP(ReduceLogSumExp, 1, 21, reduce, reduce)                     \
    OP(ArgMax, 1, 21, argreduce, none)                             \
    OP(ArgMin, 1, 21, argreduce, none)                             \
    /* data movement and shape computation */                      \
    OP(Reshape, 5, 21, reshape, identity)                          \
    OP(Flatten, 1, 21, flatten, identity)                          \
    OP(Squeeze, 1, 21, squeeze, identity)                          \
    OP(Unsqueeze, 1, 21, unsqueeze, identity)                      \
    OP(Transpose, 1, 21, transpose, transpose)                     \
    OP(Concat, 4, 21, concat, concat)                              \
    OP(Split, 2, 21, split, split)                                 \
    OP(Slice, 1, 21, slice, slice)                                \
    OP(Gather, 1, 21, gather, gather)                              \
    OP(GatherElements, 11, 21, gather_elements, none)              \
    OP(Pad, 2, 21, pad, pad)                                       \
    OP(Resize, 10, 21, resize, none)                               \
    OP(Upsample, 9, 9, resize, none)                               \
    OP(Expand, 8, 21, expand, expand)                              \
    OP(Tile, 6, 21, tile, tile)                                    \
    OP(DepthToSpace, 1, 21, depth_to_space, none)                  \
    OP(SpaceToDepth, 1, 21, space_to_depth, none)                  \
    OP(Shape, 1, 21, shape, shape)                                 \
    OP(Size, 1, 21, size, shape)                                   \
    OP(ConstantOfShape, 9, 21, constant_of_shape, constant_of_shape) \
    OP(Range, 11, 21, range, range)                                \
    OP(Constant, 1, 21, constant, constant)                        \
    /* mncc's own nodes, made by the planners (opset range 0: never in a model) */ \
    OP(MNCoreCast, 0, 0, same_as_input0, none)                    \
    OP(MNCoreDownload, 0, 0, same_as_input0, none)                \
    OP(MNCoreUpload, 0, 0, same_as_input0, none)                  \
    OP(MNCoreLayoutSwitch, 0, 0, same_as_input0, none)            \
    OP(MNCoreInputSplit, 0, 0, same_as_input0, none)              \
    OP(MNCoreOutputConcat, 0, 0, same_as_input0, none)            \
    OP(MNCoreOutputSum, 0, 0, same_as_input0, none)               \
    OP(MNCoreIm2col, 0, 0, im2col, none)                          \
    OP(MNCoreBitAnd, 0, 0, bit_and, none)                         \
    /* made by the scheduler: LM bookkeeping */                    \
    OP(MNCoreForget, 0, 0, same_as_input0, none)                  \
    OP(MNCoreMove, 0, 0, same_as_input0, none)

typedef enum {
    OP_UNSUPPORTED = 0,
#define OP(name, since, max, infer, fold) OP_##name,
    MN_OPS(OP)
#undef OP
    OP_COUNT
} MNOp;

typedef struct {
    const char *name;
    int since, max;
} MNOpInfo;

extern const MNOpInfo mn_ops[OP_COUNT];
int ops_lookup(const char *op_type); /* OP_UNSUPPORTED when unknown */
#endif

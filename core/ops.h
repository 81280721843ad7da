/* The ONNX operators mncc accepts, and mncc's own nodes: one row each, with the
 * properties every pass reads (through mn_op_has and mn_ops), so that adding an op is
 * one row here, its inference and fold, and its code.
 *
 * OP(Name, since, max, infer, fold, props, types)
 *   since..max  the default-domain opset versions whose semantics we implement; a model
 *               importing a version outside the range is rejected as unsupported.
 *   infer       shape and type inference (frontend/infer.c); every op has one.
 *   fold        constant evaluation (frontend/fold.c) or none: when every input is known
 *               the node is replaced by its result (ops like Shape fold from static
 *               shapes alone; see fold_ready()).
 *   props       what the planners, the scheduler and the emitter assume of it (MNOpProp MN_*):
 *     EW        elementwise: each output element from the elements at its position in
 *               the (broadcast) inputs; the layout planner lays the inputs out as the
 *               output, and Time-Slice cuts it along any axis
 *     INPLACE   its code may write the output over input 0 (a scheduler variant)
 *     PREC      precision-sensitive: its output stays float under float_dtype=mixed
 *     WIN       a window op: each output element folds several input elements (a
 *               reduction, Softmax, a normalization, a pool, a product)
 *     WEW       elementwise, emitted as a window of one element per operand where the
 *               vector path cannot take it (operands laid out otherwise)
 *     GATHER    moves data between PEs only: emitted as a gather
 *     REDUCE    a Reduce op: folds its input over the axes an attribute or input 1
 *               names (keepdims), with the fold of its name
 *     CHAN      works on N x C x spatial data image by image and channel by channel (a
 *               convolution: output channel by output channel): its data input 0 and
 *               output may be cut along batch and channels, its per-channel operands
 *               following (Time-Slice)
 *   types       the element types Code Emit has code for, by the path the op takes
 *               there (--list-ops prints it, the README's op table is made from it, and
 *               tests/cli checks every claim of the elementwise and gather ops by
 *               compiling and running one); NULL: none yet (the planners take every type
 *               with an MN dtype; such an op is planned but gets no model.app).
 * The table of names, opsets and properties (mn_ops) is the core's; the frontend builds
 * its table of infer and fold functions from the same rows (infer_ops). */
#ifndef MN_OPS_H
#define MN_OPS_H
#include <stdbool.h>

/* props (the rows name them without the prefix: only core/ops.c expands that column) */
typedef enum {
    MN_EW = 1,
    MN_INPLACE = 2,
    MN_PREC = 4,
    MN_WIN = 8,
    MN_WEW = 16,
    MN_GATHER = 32,
    MN_REDUCE = 64,
    MN_CHAN = 128,
    MN_VIEW = 256 /* the same elements in row-major order, another shape: no element moves */
} MNOpProp;

/* the element type sets most rows share */
#define TY_F "float"
#define TY_NUM "float double int32 int64 uint32 uint64"
#define TY_WIDE TY_NUM " bool" /* 32- and 64-bit elements: moved whole */
#define TY_SHAPE "(folded to a constant when its inputs are known, as static shapes make them)"
#define TY_GATHER TY_WIDE " (known indices); float (indices computed at run time)"
#define TY_TRILU TY_WIDE " (k known at compile time)"
#define TY_CAST "between types of one width; double, float, half to narrower; half to float"

#define MN_OPS(OP)                                                                  \
    /* elementwise unary, same type out */                                          \
    OP(Abs, 6, 21, unary, unary, EW | INPLACE, "float int32 int64")                 \
    OP(Neg, 6, 21, unary, unary, EW | INPLACE, "float double int32 int64")          \
    OP(Exp, 6, 21, unary, unary, EW | INPLACE | PREC, TY_F)                         \
    OP(Log, 6, 21, unary, unary, EW | INPLACE | PREC, TY_F)                         \
    OP(Sqrt, 6, 21, unary, unary, EW | INPLACE | PREC, TY_F)                        \
    OP(Reciprocal, 6, 21, unary, unary, EW | INPLACE | PREC, TY_F)                  \
    OP(Floor, 6, 21, unary, unary, EW | INPLACE, TY_F)                              \
    OP(Ceil, 6, 21, unary, unary, EW | INPLACE, TY_F)                               \
    OP(Round, 11, 21, unary, unary, EW | INPLACE, TY_F)                             \
    OP(Sign, 9, 21, unary, unary, EW | INPLACE, TY_F)                               \
    OP(Sin, 7, 21, unary, unary, EW, TY_F)                                          \
    OP(Cos, 7, 21, unary, unary, EW, TY_F)                                          \
    OP(Tan, 7, 21, unary, unary, EW, TY_F)                                          \
    OP(Asin, 7, 21, unary, unary, EW, TY_F)                                         \
    OP(Acos, 7, 21, unary, unary, EW, TY_F)                                         \
    OP(Atan, 7, 21, unary, unary, EW, TY_F)                                         \
    OP(Sinh, 9, 21, unary, unary, EW, TY_F)                                         \
    OP(Cosh, 9, 21, unary, unary, EW, TY_F)                                         \
    OP(Asinh, 9, 21, unary, unary, EW, TY_F)                                        \
    OP(Acosh, 9, 21, unary, unary, EW, TY_F)                                        \
    OP(Atanh, 9, 21, unary, unary, EW, TY_F)                                        \
    OP(Erf, 9, 21, unary, unary, EW | INPLACE | PREC, TY_F)                         \
    OP(Relu, 6, 21, unary, unary, EW | INPLACE, TY_F)                               \
    OP(LeakyRelu, 6, 21, unary, unary, EW | INPLACE, TY_F)                          \
    OP(Elu, 6, 21, unary, unary, EW | INPLACE, TY_F)                                \
    OP(Selu, 6, 21, unary, unary, EW, TY_F)                                         \
    OP(Celu, 12, 21, unary, unary, EW, TY_F)                                        \
    OP(ThresholdedRelu, 10, 21, unary, unary, EW, TY_F)                             \
    OP(Sigmoid, 6, 21, unary, unary, EW | INPLACE, TY_F)                            \
    OP(HardSigmoid, 6, 21, unary, unary, EW | INPLACE, TY_F)                        \
    OP(HardSwish, 14, 21, unary, unary, EW | INPLACE, TY_F)                         \
    OP(Tanh, 6, 21, unary, unary, EW | INPLACE, TY_F)                               \
    OP(Softplus, 1, 21, unary, unary, EW | INPLACE, TY_F)                           \
    OP(Softsign, 1, 21, unary, unary, EW, TY_F)                                     \
    OP(Mish, 18, 21, unary, unary, EW, TY_F)                                        \
    OP(Gelu, 20, 21, unary, unary, EW | INPLACE, TY_F)                              \
    OP(Shrink, 9, 21, unary, unary, EW, TY_F)                                       \
    OP(Not, 1, 21, unary, unary, EW, "bool")                                        \
    OP(IsNaN, 9, 21, predicate, unary, EW | WEW, TY_F)                              \
    OP(IsInf, 10, 21, predicate, unary, EW | WEW, TY_F)                             \
    OP(Identity, 1, 21, unary, identity, EW, TY_WIDE)                               \
    OP(Dropout, 7, 21, dropout, none, EW, "float double (inference)")               \
    OP(Clip, 6, 21, clip, clip, EW | INPLACE | WEW, TY_F)                           \
    OP(Cast, 6, 21, cast, cast, EW, TY_CAST)                                        \
    OP(CastLike, 15, 21, castlike, cast, EW, TY_CAST)                               \
    /* elementwise with numpy broadcasting */                                       \
    OP(Add, 6, 21, binary, binary, EW | INPLACE, TY_NUM)                            \
    OP(Sub, 6, 21, binary, binary, EW | INPLACE, TY_NUM)                            \
    OP(Mul, 6, 21, binary, binary, EW | INPLACE, TY_NUM)                            \
    OP(Div, 6, 21, binary, binary, EW | INPLACE | PREC, TY_F)                       \
    OP(Pow, 6, 21, binary, binary, EW | INPLACE | PREC | WEW, TY_F)                 \
    OP(Mod, 10, 21, binary, binary, EW, "int32 int64 uint32 uint64")                \
    OP(PRelu, 6, 21, binary, binary, EW | INPLACE | WEW, TY_F)                      \
    OP(BitShift, 11, 21, binary, binary, EW, "uint32 uint64")                       \
    OP(Min, 6, 21, variadic, binary, EW | INPLACE | WEW, TY_NUM)                    \
    OP(Max, 6, 21, variadic, binary, EW | INPLACE | WEW, TY_NUM)                    \
    OP(Sum, 6, 21, variadic, binary, EW | WEW, TY_F)                                \
    OP(Mean, 6, 21, variadic, binary, EW | WEW, TY_F)                               \
    OP(Equal, 6, 21, compare, binary, EW | WEW, "float int64 uint64")               \
    OP(Less, 6, 21, compare, binary, EW | WEW, "float int64 uint64")                \
    OP(Greater, 6, 21, compare, binary, EW | WEW, "float int64 uint64")             \
    OP(LessOrEqual, 12, 21, compare, binary, EW | WEW, "float int64 uint64")        \
    OP(GreaterOrEqual, 12, 21, compare, binary, EW | WEW, "float int64 uint64")     \
    OP(And, 6, 21, compare, binary, EW, "bool")                                     \
    OP(Or, 6, 21, compare, binary, EW, "bool")                                      \
    OP(Xor, 6, 21, compare, binary, EW, "bool")                                     \
    OP(Where, 9, 21, where, where, EW | WEW, TY_F)                                  \
    OP(Trilu, 14, 21, trilu, trilu, 0, TY_TRILU)                                    \
    /* linear algebra, convolution, normalisation, pooling */                       \
    OP(MatMul, 1, 21, matmul, none, WIN, TY_F)                                      \
    OP(Gemm, 6, 21, gemm, none, WIN, TY_F)                                          \
    OP(Conv, 1, 21, conv, none, WIN | CHAN, TY_F)                                   \
    OP(ConvTranspose, 1, 21, conv_transpose, none, WIN | CHAN, TY_F)                \
    OP(BatchNormalization, 6, 21, batchnorm, none, PREC | WIN | CHAN, TY_F)         \
    OP(InstanceNormalization, 6, 21, same_as_input0, none, PREC | WIN | CHAN, TY_F) \
    OP(LayerNormalization, 17, 21, layernorm, none, PREC | WIN, TY_F)               \
    OP(LRN, 1, 21, same_as_input0, none, PREC, "float (4-D)")                       \
    OP(RNN, 7, 21, rnn, none, PREC, "float (unrolled)")                             \
    OP(GRU, 7, 21, rnn, none, PREC, "float (unrolled)")                             \
    OP(LSTM, 7, 21, rnn, none, PREC, "float (unrolled)")                            \
    OP(Loop, 1, 21, loop, none, 0, "(unrolled: a constant trip count)")             \
    OP(Scan, 8, 21, scan, none, 0, "(unrolled)")                                    \
    OP(MaxPool, 1, 21, pool, none, WIN | CHAN, TY_F)                                \
    OP(AveragePool, 1, 21, pool, none, WIN | CHAN, TY_F)                            \
    OP(LpPool, 2, 21, pool, none, WIN | CHAN, TY_F)                                 \
    OP(GlobalAveragePool, 1, 21, global_pool, none, WIN | CHAN, TY_F)               \
    OP(GlobalMaxPool, 1, 21, global_pool, none, WIN | CHAN, TY_F)                   \
    OP(Softmax, 1, 21, same_as_input0, none, PREC | WIN, TY_F)                      \
    OP(LogSoftmax, 1, 21, same_as_input0, none, PREC | WIN, TY_F)                   \
    OP(Hardmax, 1, 21, same_as_input0, none, WIN, TY_F)                             \
    /* reductions */                                                                \
    OP(ReduceSum, 1, 21, reduce, reduce, PREC | WIN | REDUCE, TY_F)                 \
    OP(ReduceMean, 1, 21, reduce, reduce, PREC | WIN | REDUCE, TY_F)                \
    OP(ReduceMax, 1, 21, reduce, reduce, PREC | WIN | REDUCE, TY_F)                 \
    OP(ReduceMin, 1, 21, reduce, reduce, PREC | WIN | REDUCE, TY_F)                 \
    OP(ReduceProd, 1, 21, reduce, reduce, PREC | WIN | REDUCE, TY_F)                \
    OP(ReduceL1, 1, 21, reduce, reduce, PREC | WIN | REDUCE, TY_F)                  \
    OP(ReduceL2, 1, 21, reduce, reduce, PREC | WIN | REDUCE, TY_F)                  \
    OP(ReduceSumSquare, 1, 21, reduce, reduce, PREC | WIN | REDUCE, TY_F)           \
    OP(ReduceLogSum, 1, 21, reduce, reduce, PREC | WIN | REDUCE, TY_F)              \
    OP(ReduceLogSumExp, 1, 21, reduce, reduce, PREC | WIN | REDUCE, TY_F)           \
    OP(ArgMax, 1, 21, argreduce, none, WIN, TY_F)                                   \
    OP(ArgMin, 1, 21, argreduce, none, WIN, TY_F)                                   \
    /* data movement and shape computation */                                       \
    OP(Reshape, 5, 21, reshape, identity, VIEW, TY_WIDE)                            \
    OP(Flatten, 1, 21, flatten, identity, VIEW, TY_WIDE)                            \
    OP(Squeeze, 1, 21, squeeze, identity, VIEW, TY_WIDE)                            \
    OP(Unsqueeze, 1, 21, unsqueeze, identity, VIEW, TY_WIDE)                        \
    OP(Transpose, 1, 21, transpose, transpose, GATHER, TY_WIDE)                     \
    OP(Concat, 4, 21, concat, concat, GATHER, TY_WIDE)                              \
    OP(Split, 2, 21, split, split, GATHER, TY_WIDE)                                 \
    OP(Slice, 1, 21, slice, slice, GATHER, TY_WIDE)                                 \
    OP(Gather, 1, 21, gather, gather, GATHER, TY_GATHER)                            \
    OP(GatherElements, 11, 21, gather_elements, none, WIN, TY_F)                    \
    OP(Pad, 2, 21, pad, pad, GATHER, TY_WIDE)                                       \
    OP(Resize, 10, 21, resize, none, WIN, TY_F)                                     \
    OP(Upsample, 9, 9, resize, none, WIN, TY_F)                                     \
    OP(Expand, 8, 21, expand, expand, GATHER, TY_WIDE)                              \
    OP(Einsum, 12, 21, einsum, none, 0, "float (lowered)")                          \
    OP(NegativeLogLikelihoodLoss, 12, 21, loss, none, PREC, "float (lowered)")      \
    OP(SoftmaxCrossEntropyLoss, 12, 21, loss, none, PREC, "float (lowered)")        \
    OP(Tile, 6, 21, tile, tile, GATHER, TY_WIDE)                                    \
    OP(DepthToSpace, 1, 21, depth_to_space, none, GATHER, TY_WIDE)                  \
    OP(SpaceToDepth, 1, 21, space_to_depth, none, GATHER, TY_WIDE)                  \
    OP(Shape, 1, 21, shape, shape, 0, TY_SHAPE)                                     \
    OP(Size, 1, 21, size, shape, 0, TY_SHAPE)                                       \
    OP(ConstantOfShape, 9, 21, constant_of_shape, constant_of_shape, 0, TY_SHAPE)   \
    OP(Range, 11, 21, range, range, 0, TY_SHAPE)                                    \
    OP(Constant, 1, 21, constant, constant, 0, TY_SHAPE)                            \
    /* mncc's own nodes, made by the planners (opset range 0: never in a model) */  \
    OP(MNCoreCast, 0, 0, same_as_input0, none, EW, NULL)                            \
    OP(MNCoreDownload, 0, 0, same_as_input0, none, 0, NULL)                         \
    OP(MNCoreUpload, 0, 0, same_as_input0, none, 0, NULL)                           \
    OP(MNCoreLayoutSwitch, 0, 0, same_as_input0, none, 0, NULL)                     \
    OP(MNCoreInputSplit, 0, 0, same_as_input0, none, 0, NULL)                       \
    OP(MNCoreOutputConcat, 0, 0, same_as_input0, none, 0, NULL)                     \
    OP(MNCoreOutputSum, 0, 0, same_as_input0, none, INPLACE, NULL)                  \
    OP(MNCoreIm2col, 0, 0, im2col, none, GATHER, NULL)                              \
    OP(MNCoreBitAnd, 0, 0, bit_and, none, EW | INPLACE | PREC, NULL)                \
    /* made by the scheduler: LM bookkeeping */                                     \
    OP(MNCoreForget, 0, 0, same_as_input0, none, 0, NULL)                           \
    OP(MNCoreMove, 0, 0, same_as_input0, none, 0, NULL)

typedef enum {
    OP_UNSUPPORTED = 0,
#define OP(name, since, max, infer, fold, props, types) OP_##name,
    MN_OPS(OP)
#undef OP
        OP_COUNT
} MNOp;

typedef struct {
    const char *name;
    int since, max;
    unsigned props; /* MNOpProp bits */
    const char *types; /* NULL: no code yet */
} MNOpInfo;

extern const MNOpInfo mn_ops[OP_COUNT];
static inline bool mn_op_has(int op, unsigned props) { return op > 0 && op < OP_COUNT && (mn_ops[op].props & props); }
int ops_lookup(const char *op_type); /* OP_UNSUPPORTED when unknown */
#endif

/* Vocabularies of element types, one X-macro table each.
 *
 * ONNX_TYPE(name, onnx_id, c_size, is_float, is_int, is_signed, default_mn_dtype)
 * The ids are TensorProto.DataType. c_size is the size of one element as the loader
 * stores it (0 = no numeric payload we can hold: strings, complex). */
#ifndef MN_DTYPES_H
#define MN_DTYPES_H
#include <stdbool.h>
#include <stdint.h>

#define ONNX_TYPES(X)                      \
    X(UNDEFINED, 0, 0, 0, 0, 0, Unknown)   \
    X(FLOAT32, 1, 4, 1, 0, 1, Float)       \
    X(UINT8, 2, 1, 0, 1, 0, Byte)          \
    X(INT8, 3, 1, 0, 1, 1, Int8)           \
    X(UINT16, 4, 2, 0, 1, 0, UShort)       \
    X(INT16, 5, 2, 0, 1, 1, Short)         \
    X(INT32, 6, 4, 0, 1, 1, Int)           \
    X(INT64, 7, 8, 0, 1, 1, Long)          \
    X(STRING, 8, 0, 0, 0, 0, Unknown)      \
    X(BOOL, 9, 1, 0, 0, 0, LongBool)       \
    X(FLOAT16, 10, 2, 1, 0, 1, Half)       \
    X(DOUBLE, 11, 8, 1, 0, 1, Double)      \
    X(UINT32, 12, 4, 0, 1, 0, UInt)        \
    X(UINT64, 13, 8, 0, 1, 0, ULong)       \
    X(COMPLEX64, 14, 0, 0, 0, 0, Unknown)  \
    X(COMPLEX128, 15, 0, 0, 0, 0, Unknown) \
    X(BFLOAT16, 16, 2, 1, 0, 1, Unknown)

typedef enum {
#define X(n, id, sz, f, i, s, mn) ONNX_##n = id,
    ONNX_TYPES(X)
#undef X
        ONNX_TYPE_MAX = 17
} OnnxElemType;

/* The dtypes the graph compiler assigns (DESIGN.md section 2). */
/* a table, one row per line: */
/* clang-format off */
#define MN_DTYPES(X)                                                                   \
    X(Unknown) X(Half) X(Float) X(Float32) X(Double) X(HalfBool) X(SingleBool)         \
    X(LongBool) X(Int8) X(Byte) X(Short) X(UShort) X(Int) X(UInt) X(Long) X(ULong)
/* clang-format on */

typedef enum {
#define X(n) MN_DT_##n,
    MN_DTYPES(X)
#undef X
        MN_DT_COUNT
} MNDtype;

bool onnx_type_known(int32_t id); /* one of the ids in the table */
bool onnx_type_numeric(int32_t id); /* we can hold and compute on its elements */
const char *onnx_type_name(int32_t id); /* "FLOAT32"; "UNKNOWN(99)" style never returned */
int onnx_type_size(int32_t id);
bool onnx_type_is_float(int32_t id);
bool onnx_type_is_int(int32_t id); /* integer, not bool */
bool onnx_type_is_signed(int32_t id);
MNDtype onnx_type_default_mn(int32_t id);
const char *mn_dtype_name(MNDtype d);
/* bytes of one element of an MN dtype in memory (0 for Unknown) */
int mn_dtype_bytes(MNDtype d);
#endif

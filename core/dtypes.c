#include "dtypes.h"
#include <stddef.h>

typedef struct {
    const char *name;
    int size;
    bool is_float, is_int, is_signed, known;
    MNDtype mn;
} TypeInfo;

static const TypeInfo types[ONNX_TYPE_MAX] = {
#define X(n, id, sz, f, i, s, m) [id] = {#n, sz, f, i, s, true, MN_DT_##m},
    ONNX_TYPES(X)
#undef X
};

static const TypeInfo *info(int32_t id) {
    return (id >= 0 && id < ONNX_TYPE_MAX && types[id].known) ? &types[id] : NULL;
}
bool onnx_type_known(int32_t id) { return info(id) != NULL; }
bool onnx_type_numeric(int32_t id) { return info(id) && types[id].size > 0; }
const char *onnx_type_name(int32_t id) { return info(id) ? types[id].name : "INVALID"; }
int onnx_type_size(int32_t id) { return info(id) ? types[id].size : 0; }
bool onnx_type_is_float(int32_t id) { return info(id) && types[id].is_float; }
bool onnx_type_is_int(int32_t id) { return info(id) && types[id].is_int; }
bool onnx_type_is_signed(int32_t id) { return info(id) && types[id].is_signed; }
MNDtype onnx_type_default_mn(int32_t id) { return info(id) ? types[id].mn : MN_DT_Unknown; }

const char *mn_dtype_name(MNDtype d) {
    static const char *names[] = {
#define X(n) #n,
        MN_DTYPES(X)
#undef X
    };
    return (d >= 0 && d < MN_DT_COUNT) ? names[d] : "Unknown";
}

int mn_dtype_bytes(MNDtype d) {
    switch (d) {
    case MN_DT_Half:
    case MN_DT_HalfBool:
    case MN_DT_Short:
    case MN_DT_UShort: return 2;
    case MN_DT_Float:
    case MN_DT_Float32:
    case MN_DT_SingleBool:
    case MN_DT_Int:
    case MN_DT_UInt: return 4;
    case MN_DT_Double:
    case MN_DT_LongBool:
    case MN_DT_Long:
    case MN_DT_ULong: return 8;
    case MN_DT_Int8:
    case MN_DT_Byte: return 1;
    default: return 0;
    }
}

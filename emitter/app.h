/* GPFNApp (model.app): writing, verifying reading, and printing (mndump).
 * The schema is proto/gpfnapp.fbs; field numbers below follow its declaration order. */
#ifndef MN_APP_H
#define MN_APP_H
#include "arena.h"
#include "buf.h"
#include "ir.h"
#include <stdbool.h>
#include <stdint.h>

typedef struct {
    const char *key, *value, *source;
} AppOption;

typedef struct {
    const char *name;
    int32_t onnx_dtype;
    int rank;
    const int64_t *shape;
    const char *mn_dtype, *layout, *location;
    int32_t group;
    uint64_t address, num_lw;
    const uint8_t *zstd; /* parameters only */
    size_t zstd_len;
} AppTensor;

typedef struct {
    uint32_t line, expr, operand;
    const char *symbol;
    int64_t addend;
} AppReloc;

typedef struct {
    const char *compiler, *version, *machine, *machine_json;
    AppOption *options;
    int noptions;
    const char *code_format;
    uint32_t code_version;
    const uint8_t *code;
    size_t code_len;
    const char *vsm;
    AppTensor *inputs, *outputs, *params;
    int ninputs, noutputs, nparams;
    AppReloc *relocs;
    int nrelocs;
} MNApp;

void app_write(Arena *a, const MNApp *app, MNBuf *out);
/* Verifies every offset and length; strings and arrays point into buf or the arena. */
bool app_read(Arena *a, const uint8_t *buf, size_t len, MNApp *app, char *err, size_t errlen);
/* Text for humans, or JSON in the shape `flatc --json --defaults-json` prints. */
void app_dump(const MNApp *app, MNBuf *out, bool json);

/* The DRAM image of a tensor: elements of the MN dtype, row-major, packed into long
 * words most significant first ("RowMajor" layout). */
int app_dtype_bytes(const char *mn_dtype);
uint64_t app_image_lw(const char *mn_dtype, int64_t numel);
bool app_encode(const MNTensor *t, const char *mn_dtype, uint64_t *lw, char *err, size_t errlen);
bool app_decode(const uint64_t *lw, const char *mn_dtype, MNTensor *t, char *err, size_t errlen);
#endif

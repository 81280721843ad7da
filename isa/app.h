/* GPFNApp (model.app): writing, verifying reading, and printing (mndump).
 * The schema is proto/gpfnapp.fbs; field numbers below follow its declaration order. */
#ifndef MN_APP_H
#define MN_APP_H
#include "arena.h"
#include "buf.h"
#include "ir.h"
#include "layout.h"
#include "machine.h"
#include <stdbool.h>
#include <stdint.h>

typedef struct {
    const char *key, *value, *source;
} AppOption;

typedef struct {
    const char *name;
    int32_t onnx_dtype;
    int rank;
    const int64_t *shape; /* the host's; a layout's own may be a view of it (its elements in row-major order) */
    const char *mn_dtype, *layout, *location;
    int32_t group;
    uint64_t address, num_lw;
    const uint8_t *zstd; /* parameters only */
    size_t zstd_len;
    bool alike; /* a layout image alike in every group: zstd holds group 0's part only */
} AppTensor;

/* an operand relative to a value: the operand's address (in its unit: words for LM,
 * long words for DRAM; the first of an address list) is addend plus the value's address
 * in that unit */
typedef struct AppReloc {
    uint32_t line, expr, operand;
    const char *symbol;
    int64_t addend;
    uint32_t sym; /* read from a file: symbol's index in MNApp.symbols */
} AppReloc;

/* struct Reloc as it lies in the file (little-endian, 24 bytes, 8-aligned): what a
 * writer hands over (the linker makes them with symbol a value's index, which Code Emit
 * numbers before writing) */
typedef struct AppRelocRec {
    uint32_t line;
    uint16_t expr, operand;
    uint32_t symbol, pad;
    int64_t addend;
} AppRelocRec;

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
    AppReloc *relocs; /* read from a file */
    int nrelocs;
    const char **symbols; /* the names relocations index */
    int nsymbols;
    const AppRelocRec *reloc_recs; /* written: the relocations as the file's records */
    int nreloc_recs;
    /* written: the code and the records in pieces (a linker's parts), when set in place
     * of code and reloc_recs */
    const MNSpan *code_spans, *reloc_spans;
    int ncode_spans, nreloc_spans;
} MNApp;

void app_write(Arena *a, const MNApp *app, MNBuf *out);
/* The same as spans of own and of the app's large strings and vectors, which must stay
 * as they are until the spans are written (fb_finish_spans) */
MNSpan *app_write_spans(Arena *a, const MNApp *app, MNBuf *own, int *nspans);
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

/* The DRAM image of a tensor in a PadLayout (its "layout image"): what mncc's transfers
 * move between DRAM and the PEs' LM, so the host writes and reads it in this order.
 * Every group's DRAM holds its PEs' part at the same address. Within a group the LM
 * range [0, n4) of every PE (n4: the value's long words rounded up to 4) is cut into
 * chunks of C long words; chunk k holds, for each L2B l of the group, the J*P*Ck long
 * words its L2BM receives in one DRAM transfer, in the order the L2BM -> L1BM distribute
 * (32 long words per L1B in turn) and the L1BM -> PE distribute (address-major, then
 * MAB, then PE) hand them out. Broadcast levels are replicated in the image; PEs
 * beyond a level's extent get zeros. A value replicated on every L1B and L2B (tree) is
 * held once per group: chunk k is the P*Ck long words of one L1B, which the transfer
 * broadcasts into every L2BM and from there into every L1BM. One replicated on every MAB
 * too (mab: a matrix unit's weights) is held once per group for the 4 PEs of one MAB
 * (chunk k: 4*Ck long words, n4 and C multiples of 16), which the L1BM hands to the PEs
 * of every MAB at once (l1bmm): 16 times less DRAM and tree traffic. */
typedef struct {
    int64_t n4, C, per_group; /* LW per PE moved, per chunk, and the image LW per group */
    int64_t slices, per_slice; /* a layout cut over time: the slices' images one after another */
    bool tree, mab;
} AppLayoutImage;
/* the image offset (in its group's image, whose number goes to *group) of the long word
 * at place c */
int64_t app_image_offset(const AppLayoutImage *im, const MNMachine *m, const int64_t *c, int *group);
bool app_layout_image(const MNLayout *l, const MNMachine *m, AppLayoutImage *im, char *err, size_t errlen);
/* img: groups * per_group long words */
bool app_encode_layout(const MNTensor *t, const char *mn_dtype, const char *layout, const MNMachine *m, uint64_t *img,
                       char *err, size_t errlen);
/* is a value of this layout alike on every L2B (its groups' parts the same)? */
bool app_layout_alike(const char *layout);
/* such a value's image of group 0 only (per_group long words) */
bool app_encode_layout_alike(const MNTensor *t, const char *mn_dtype, const char *layout, const MNMachine *m,
                             uint64_t *img, char *err, size_t errlen);
bool app_decode_layout(const uint64_t *img, const char *mn_dtype, const char *layout, const MNMachine *m, MNTensor *t,
                       char *err, size_t errlen);
/* the image LW per group of a tensor in layout (0 and a message when it has none) */
uint64_t app_layout_image_lw(const char *layout, const MNMachine *m, char *err, size_t errlen);
#endif

/* FlatBuffers, written and read by hand (no C FlatBuffers library is packaged in
 * Debian; `flatc` is, and the tests decode what we write with it).
 *
 * The builder lays the buffer out front to back: a table is written before the
 * objects it refers to, so every uoffset points forward as the format requires, and
 * each vtable sits just before its table. The reader treats the buffer as untrusted:
 * every access checks offsets, alignment and lengths and reports the first problem. */
#ifndef MN_FB_H
#define MN_FB_H
#include "arena.h"
#include "buf.h"
#include <stdbool.h>
#include <stdint.h>

typedef struct FbObj FbObj;

/* Strings and scalar vectors refer to the caller's bytes, which must stay as they are
 * until fb_finish: a program's megabytes are copied once, into the output. */
FbObj *fb_string(Arena *a, const char *s);
FbObj *fb_bytes_string(Arena *a, const void *s, size_t n);
FbObj *fb_vec_scalar(Arena *a, const void *data, size_t count, int elem_size);
/* the same of data in pieces, one after another (the caller's until fb_finish_spans) */
FbObj *fb_vec_pieces(Arena *a, const MNSpan *pieces, int npieces, int elem_size);
FbObj *fb_vec_obj(Arena *a, FbObj *const *items, size_t count);
FbObj *fb_table(Arena *a, int nfields);
void fb_set_scalar(FbObj *t, int field, const void *v, int size);
void fb_set_u32(FbObj *t, int field, uint32_t v);
void fb_set_i32(FbObj *t, int field, int32_t v);
void fb_set_u64(FbObj *t, int field, uint64_t v);
void fb_set_i64(FbObj *t, int field, int64_t v);
void fb_set_obj(FbObj *t, int field, FbObj *child); /* child NULL: field absent */
/* Serialise root (with a 4-byte file identifier) into out. */
void fb_finish(FbObj *root, const char ident[4], MNBuf *out);
/* The same without copying large data: the output is the returned spans (*nspans of
 * them, malloc'd) one after another, pieces of own and the callers' bytes of strings and
 * vectors of 4 KB or more, which must stay as they are until the spans are written. */
MNSpan *fb_finish_spans(FbObj *root, const char ident[4], MNBuf *own, int *nspans);

typedef struct {
    const uint8_t *buf;
    size_t len;
    char *err; /* first problem found, at least 256 bytes */
    int depth;
} FbReader;

typedef struct {
    FbReader *r;
    uint32_t pos; /* table start */
    const uint8_t *vt; /* its vtable */
    uint16_t vtsize, tsize;
    bool ok;
} FbTable;

bool fb_root(FbReader *r, const char ident[4], FbTable *out);
bool fb_has(const FbTable *t, int field);
/* Scalars read as default 0 when absent; false when present but out of bounds. */
bool fb_scalar(const FbTable *t, int field, int size, void *out);
uint32_t fb_u32(const FbTable *t, int field);
int32_t fb_i32(const FbTable *t, int field);
uint64_t fb_u64(const FbTable *t, int field);
int64_t fb_i64(const FbTable *t, int field);
/* Strings and vectors; absent fields give "" / 0 elements. */
bool fb_str(const FbTable *t, int field, const char **s, uint32_t *n);
bool fb_vec(const FbTable *t, int field, int elem_size, const uint8_t **data, uint32_t *count);
bool fb_table_field(const FbTable *t, int field, FbTable *out);
/* Element i of a vector of tables or strings. */
bool fb_vec_table(const FbTable *t, int field, uint32_t i, FbTable *out);
bool fb_vec_str(const FbTable *t, int field, uint32_t i, const char **s, uint32_t *n);
#endif

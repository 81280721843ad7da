#ifndef MN_BUF_H
#define MN_BUF_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
/* A growable byte buffer for building artifacts in memory before an atomic write. */
typedef struct {
    char *data;
    size_t len, cap;
} MNBuf;
#include <stdarg.h>
void buf_printf(MNBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vprintf(MNBuf *b, const char *fmt, va_list ap);
void buf_append(MNBuf *b, const void *p, size_t n);
void buf_free(MNBuf *b);
/* the decimal digits of v at p (at most 20), returning the end */
char *buf_dec(char *p, unsigned long long v);
char *buf_int(char *p, long long v); /* the same signed */
/* a 64-bit hash of n bytes, a word at a time (the in-memory caches' keys) */
uint64_t buf_hash(const void *data, size_t n);
/* room for extra more bytes (and a NUL) without moving data again */
void buf_reserve(MNBuf *b, size_t extra);
/* A line written straight into the buffer, where buf_printf's parse of its format on every
 * call is most of the time (the emitters' hottest lines): buf_line makes room for n bytes
 * and says where they go, buf_put and buf_dec / buf_int write there, buf_line_end closes
 * the buffer at p. */
static inline char *buf_line(MNBuf *b, size_t n) {
    buf_reserve(b, n);
    return b->data + b->len;
}
static inline char *buf_put(char *p, const char *s) {
    while (*s) *p++ = *s++;
    return p;
}
static inline void buf_line_end(MNBuf *b, char *p) {
    b->len = (size_t)(p - b->data);
    b->data[b->len] = 0;
}
/* s as a JSON string literal, quotes included (for artifacts too large for a cJSON tree) */
void buf_json_string(MNBuf *b, const char *s);
/* bytes that lie elsewhere (a piece of a file to write) */
typedef struct {
    const void *p;
    size_t n;
} MNSpan;
/* Bytes in pieces, each a buffer of its own: a program the linker made in parts, kept
 * so until it is written (copying megabytes into one buffer cost more than the rest of
 * the write). */
typedef struct {
    MNBuf *part;
    int n, cap;
} MNBufs;
void bufs_take(MNBufs *l, MNBuf *b); /* b's bytes become the last piece; b is left empty */
size_t bufs_len(const MNBufs *l);
void bufs_join(const MNBufs *l, MNBuf *out); /* one buffer of them all */
void bufs_free(MNBufs *l);
/* the whole file, NUL-terminated (its length in *len when len is set); NULL when it
 * cannot be read or is larger than max bytes (0: no bound) */
char *buf_read_file(const char *path, size_t max, size_t *len);
#endif

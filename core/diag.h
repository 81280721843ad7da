/* Two kinds of error. Bad input is reported once, as one line naming the file, node and
 * value, and the compile exits 1: see MNDiag. A broken invariant of our own is a bug and
 * die()s with the source position. */
#ifndef MN_DIAG_H
#define MN_DIAG_H
#include <stdbool.h>
#include <stddef.h>

_Noreturn void die_at(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define die(...) die_at(__FILE__, __LINE__, __VA_ARGS__)
#define ASSERT(c) ((c) ? (void)0 : die("assertion failed: %s", #c))

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

typedef enum {
    DIAG_NONE = 0,
    DIAG_INVALID, /* the input is malformed or inconsistent */
    DIAG_UNSUPPORTED, /* valid ONNX that mncc does not handle (op, opset, type, mode) */
    DIAG_RESOURCE, /* a resource limit (memory, size) was exceeded */
    DIAG_IO, /* reading or writing a file failed */
} MNDiagKind;

/* The first error wins: later passes stop at the first recorded error, so the message a
 * user sees is the root cause rather than a cascade. */
typedef struct {
    MNDiagKind kind;
    char msg[1024];
} MNDiag;

bool diag_error(MNDiag *d, MNDiagKind kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline bool diag_failed(const MNDiag *d) { return d->kind != DIAG_NONE; }
const char *diag_kind_name(MNDiagKind k);
#endif

#include "diag.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Noreturn void die_at(const char *file, int line, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "mncc: internal error at %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) die("out of memory (%zu bytes)", n);
    return p;
}
void *xcalloc(size_t n, size_t m) {
    void *p = calloc(n ? n : 1, m ? m : 1);
    if (!p) die("out of memory (%zu x %zu bytes)", n, m);
    return p;
}
void *xrealloc(void *p, size_t n) {
    p = realloc(p, n ? n : 1);
    if (!p) die("out of memory (%zu bytes)", n);
    return p;
}
char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

bool diag_error(MNDiag *d, MNDiagKind kind, const char *fmt, ...) {
    if (d->kind != DIAG_NONE) return false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    /* Keep the message one line whatever names the model carries. */
    for (char *p = d->msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    d->kind = kind;
    return false;
}

const char *diag_kind_name(MNDiagKind k) {
    switch (k) {
    case DIAG_NONE: return "none";
    case DIAG_INVALID: return "invalid";
    case DIAG_UNSUPPORTED: return "unsupported";
    case DIAG_RESOURCE: return "resource";
    case DIAG_IO: return "io";
    }
    return "?";
}

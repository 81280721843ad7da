#include "buf.h"
#include "diag.h"
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_reserve(MNBuf *b, size_t extra) {
    if (b->len + extra + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra + 1) cap *= 2;
    b->data = xrealloc(b->data, cap);
    b->cap = cap;
}

void buf_append(MNBuf *b, const void *p, size_t n) {
    buf_reserve(b, n);
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = 0;
}

void buf_printf(MNBuf *b, const char *fmt, ...) {
    va_list ap;
    buf_reserve(b, 256);
    va_start(ap, fmt);
    int n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0) die("vsnprintf failed");
    if ((size_t)n >= b->cap - b->len) {
        buf_reserve(b, (size_t)n);
        va_start(ap, fmt);
        vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
}

void buf_free(MNBuf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void buf_json_string(MNBuf *b, const char *s) {
    buf_append(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char e[2] = {'\\', (char)*p};
            buf_append(b, e, 2);
        } else if (*p < 0x20)
            buf_printf(b, "\\u%04x", *p);
        else
            buf_append(b, p, 1);
    }
    buf_append(b, "\"", 1);
}

char *buf_read_file(const char *path, size_t max, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    MNBuf b = {0};
    char chunk[65536];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0 && (!max || b.len <= max)) buf_append(&b, chunk, k);
    bool bad = ferror(f) || (max && b.len > max);
    fclose(f);
    if (bad) {
        buf_free(&b);
        return NULL;
    }
    buf_append(&b, "", 1);
    if (len) *len = b.len - 1;
    return b.data;
}

#include "buf.h"
#include "diag.h"
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_reserve(MNBuf *b, size_t extra) {
    if (b->len + extra + 1 <= b->cap) return;
    size_t cap =
        b->cap ? b->cap
               : 256; /* most buffers are keys and signatures of a few hundred bytes: a page each was a fault each */
    while (cap < b->len + extra + 1) cap *= 2;
    b->data = xrealloc(b->data, cap);
    b->cap = cap;
}

void buf_append(MNBuf *b, const void *p, size_t n) {
    buf_reserve(b, n);
    if (n) memcpy(b->data + b->len, p, n); /* an empty vector may have no data pointer */
    b->len += n;
    b->data[b->len] = 0;
}

/* The conversions artifacts and VSM text use most (%s %c %d %u %x %ld %lld %lu %llu %zu
 * %lx %llx %%, without flags, width or precision) are formatted here; anything else
 * goes to vsnprintf. glibc's vfprintf per call was a tenth of a compile that prints a
 * hundred thousand VSM lines. */
char *buf_dec(char *p, unsigned long long v) {
    if (v < 10) { /* most numbers in VSM text are small */
        *p = (char)('0' + v);
        return p + 1;
    }
    static const char pairs[] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354"
        "555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";
    char t[24];
    int n = 24;
    for (; v >= 100; v /= 100) {
        t[--n] = pairs[2 * (v % 100) + 1];
        t[--n] = pairs[2 * (v % 100)];
    }
    if (v >= 10) {
        t[--n] = pairs[2 * v + 1];
        t[--n] = pairs[2 * v];
    } else
        t[--n] = (char)('0' + v);
    memcpy(p, t + n, (size_t)(24 - n));
    return p + (24 - n);
}

char *buf_int(char *p, long long v) {
    if (v < 0) *p++ = '-';
    return buf_dec(p, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v);
}

uint64_t buf_hash(const void *data, size_t n) {
    const char *s = data;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    for (; n >= 8; s += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
    }
    uint64_t w = 0;
    memcpy(&w, s, n);
    h = (h ^ w) * 0x94d049bb133111ebull;
    h ^= h >> 29;
    return h;
}

static char *fmt_hex(char *p, unsigned long long v) {
    char t[24];
    int n = 0;
    do t[n++] = "0123456789abcdef"[v & 15], v >>= 4;
    while (v);
    while (n) *p++ = t[--n];
    return p;
}

/* after a '%': the length modifier (0 none, 1 l, 2 ll, 3 z) and the conversion */
static const char *length_of(const char *f, int *l) {
    *l = 0;
    while (*f == 'l' && *l < 2) ++*l, f++;
    if (*f == 'z') *l = 3, f++;
    return f;
}

/* One pass over the format, writing past b->len and growing as it goes; b->len moves
 * only at the end, so a conversion handed to vsnprintf (false) leaves b as it was. */
static bool fast_printf(MNBuf *b, const char *fmt, va_list ap) {
    size_t start = b->len;
    buf_reserve(b, 64);
    char *p = b->data + b->len, *end = b->data + b->cap - 1; /* the NUL's byte stays free */
#define ROOM(n)                                               \
    do {                                                      \
        if ((size_t)(end - p) < (size_t)(n)) {                \
            b->len = (size_t)(p - b->data);                   \
            buf_reserve(b, (size_t)(n));                      \
            p = b->data + b->len, end = b->data + b->cap - 1; \
        }                                                     \
    } while (0)
    for (const char *f = fmt; *f; f++) {
        if (*f != '%') {
            ROOM(1);
            *p++ = *f;
            continue;
        }
        int l, width = 0;
        bool zero = f[1] == '0';
        f += 1 + zero;
        while (*f >= '0' && *f <= '9' && width < 64) width = width * 10 + (*f++ - '0');
        f = length_of(f, &l);
        if (width && *f != 'd' && *f != 'i' && *f != 'u' && *f != 'x') {
            b->len = start;
            return false;
        }
        char *at = p; /* where a number starts: padded to width below */
        switch (*f) {
        case '%':
            ROOM(1);
            *p++ = '%';
            break;
        case 'c':
            if (l) {
                b->len = start;
                return false;
            }
            ROOM(1);
            *p++ = (char)va_arg(ap, int);
            break;
        case 's': {
            if (l) {
                b->len = start;
                return false;
            }
            const char *s = va_arg(ap, const char *);
            if (!s) s = "(null)";
            size_t n = strlen(s);
            ROOM(n);
            memcpy(p, s, n);
            p += n;
            break;
        }
        case 'd':
        case 'i': {
            long long v = l == 0   ? va_arg(ap, int)
                          : l == 1 ? va_arg(ap, long)
                          : l == 2 ? va_arg(ap, long long)
                                   : (long long)va_arg(ap, size_t);
            unsigned long long u = (unsigned long long)v;
            ROOM(24 + width);
            at = p;
            if (v < 0) *p++ = '-', u = 0 - u;
            p = buf_dec(p, u);
            break;
        }
        case 'u':
        case 'x': {
            unsigned long long v = l == 0   ? va_arg(ap, unsigned)
                                   : l == 1 ? va_arg(ap, unsigned long)
                                   : l == 2 ? va_arg(ap, unsigned long long)
                                            : va_arg(ap, size_t);
            ROOM(24 + width);
            at = p;
            p = *f == 'x' ? fmt_hex(p, v) : buf_dec(p, v);
            break;
        }
        default: return b->len = start, false;
        }
        if (width && p - at < width) { /* right-aligned: zeros after a sign, or spaces before it */
            int pad = width - (int)(p - at);
            char *digits = zero && *at == '-' ? at + 1 : at;
            memmove(digits + pad, digits, (size_t)(p - digits));
            memset(digits, zero ? '0' : ' ', (size_t)pad);
            p += pad;
        }
    }
#undef ROOM
    b->len = (size_t)(p - b->data);
    b->data[b->len] = 0;
    return true;
}

void buf_vprintf(MNBuf *b, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    bool done = fast_printf(b, fmt, ap2);
    va_end(ap2);
    if (done) return;
    buf_reserve(b, 256);
    va_copy(ap2, ap);
    int n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap2);
    va_end(ap2);
    if (n < 0) die("vsnprintf failed");
    if ((size_t)n >= b->cap - b->len) {
        buf_reserve(b, (size_t)n);
        va_copy(ap2, ap);
        vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap2);
        va_end(ap2);
    }
    b->len += (size_t)n;
}

void buf_printf(MNBuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void buf_free(MNBuf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void bufs_take(MNBufs *l, MNBuf *b) {
    if (l->n == l->cap) l->part = xrealloc(l->part, sizeof(MNBuf) * (size_t)(l->cap = l->cap ? 2 * l->cap : 16));
    l->part[l->n++] = *b;
    memset(b, 0, sizeof *b);
}

size_t bufs_len(const MNBufs *l) {
    size_t n = 0;
    for (int k = 0; k < l->n; k++) n += l->part[k].len;
    return n;
}

void bufs_join(const MNBufs *l, MNBuf *out) {
    out->len = 0;
    buf_reserve(out, bufs_len(l));
    for (int k = 0; k < l->n; k++) buf_append(out, l->part[k].data, l->part[k].len);
}

void bufs_free(MNBufs *l) {
    for (int k = 0; k < l->n; k++) buf_free(&l->part[k]);
    free(l->part);
    memset(l, 0, sizeof *l);
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

#include "fb.h"
#include "diag.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { FB_STRING, FB_VEC_SCALAR, FB_VEC_OBJ, FB_TABLE } FbKind;

typedef struct {
    bool present, is_obj;
    int size; /* scalar size in bytes */
    uint8_t bytes[8];
    FbObj *obj;
} FbField;

struct FbObj {
    FbKind kind;
    const uint8_t *data; /* string bytes / scalar vector data */
    size_t count;
    int elem_size;
    FbObj **items;
    const MNSpan *pieces; /* a scalar vector's data in pieces (npieces of them; one: one) */
    int npieces;
    MNSpan one;
    int nfields;
    FbField *fields;
};

FbObj *fb_bytes_string(Arena *a, const void *s, size_t n) {
    FbObj *o = ARENA_NEW(a, FbObj);
    o->kind = FB_STRING;
    o->data = s;
    o->count = n;
    return o;
}
FbObj *fb_string(Arena *a, const char *s) { return fb_bytes_string(a, s ? s : "", s ? strlen(s) : 0); }

FbObj *fb_vec_scalar(Arena *a, const void *data, size_t count, int elem_size) {
    FbObj *o = ARENA_NEW(a, FbObj);
    o->kind = FB_VEC_SCALAR;
    o->one = (MNSpan){data, count * (size_t)elem_size};
    o->pieces = &o->one;
    o->npieces = 1;
    o->count = count;
    o->elem_size = elem_size;
    return o;
}

FbObj *fb_vec_pieces(Arena *a, const MNSpan *pieces, int npieces, int elem_size) {
    FbObj *o = ARENA_NEW(a, FbObj);
    o->kind = FB_VEC_SCALAR;
    o->pieces = pieces;
    o->npieces = npieces;
    size_t n = 0;
    for (int i = 0; i < npieces; i++) n += pieces[i].n;
    if (n % (size_t)elem_size) die("a vector of %zu bytes in pieces, elements of %d", n, elem_size);
    o->count = n / (size_t)elem_size;
    o->elem_size = elem_size;
    return o;
}

FbObj *fb_vec_obj(Arena *a, FbObj *const *items, size_t count) {
    FbObj *o = ARENA_NEW(a, FbObj);
    o->kind = FB_VEC_OBJ;
    o->items = ARENA_ARRAY(a, FbObj *, count ? count : 1);
    for (size_t i = 0; i < count; i++) o->items[i] = items[i];
    o->count = count;
    return o;
}

FbObj *fb_table(Arena *a, int nfields) {
    FbObj *o = ARENA_NEW(a, FbObj);
    o->kind = FB_TABLE;
    o->nfields = nfields;
    o->fields = ARENA_ARRAY(a, FbField, nfields);
    return o;
}

void fb_set_scalar(FbObj *t, int field, const void *v, int size) {
    ASSERT(t->kind == FB_TABLE && field >= 0 && field < t->nfields &&
           (size == 1 || size == 2 || size == 4 || size == 8));
    FbField *f = &t->fields[field];
    f->present = true;
    f->is_obj = false;
    f->size = size;
    memcpy(f->bytes, v, (size_t)size);
}
void fb_set_u32(FbObj *t, int field, uint32_t v) { fb_set_scalar(t, field, &v, 4); }
void fb_set_i32(FbObj *t, int field, int32_t v) { fb_set_scalar(t, field, &v, 4); }
void fb_set_u64(FbObj *t, int field, uint64_t v) { fb_set_scalar(t, field, &v, 8); }
void fb_set_i64(FbObj *t, int field, int64_t v) { fb_set_scalar(t, field, &v, 8); }

void fb_set_obj(FbObj *t, int field, FbObj *child) {
    ASSERT(t->kind == FB_TABLE && field >= 0 && field < t->nfields);
    FbField *f = &t->fields[field];
    f->present = child != NULL;
    f->is_obj = true;
    f->size = 4;
    f->obj = child;
}

/* Where the bytes go: b, except that with spans a large string's or vector's data (at
 * least FB_EXTERN bytes) stays where it lies and is only noted, its place in the output
 * counted in ext. Offsets are positions in the output: b's bytes and the noted ones. */
enum { FB_EXTERN = 4096 };
typedef struct {
    size_t at, n, cum; /* output position, bytes, noted bytes up to its end */
    const void *p;
} FbExt;
typedef struct {
    MNBuf *b;
    bool spans;
    FbExt *x;
    int nx, capx;
    size_t ext; /* bytes noted so far */
} Sink;

static size_t pos(const Sink *k) { return k->b->len + k->ext; }

static void pad_to(Sink *k, size_t align, size_t extra) {
    static const uint8_t zero[16] = {0};
    buf_append(k->b, zero, (align - (pos(k) + extra) % align) % align);
}

/* output position at (in b's bytes: nothing is patched in noted data) as b's offset */
static size_t own_of(const Sink *k, size_t at) {
    int lo = 0, hi = k->nx; /* the noted pieces before at: [0, lo) */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (k->x[mid].at < at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return at - (lo ? k->x[lo - 1].cum : 0);
}

static void put_u32_at(Sink *k, size_t at, uint32_t v) { memcpy(k->b->data + own_of(k, at), &v, 4); }

/* n bytes of data to the output: into b, or noted */
static void put_data(Sink *k, const void *p, size_t n) {
    if (!k->spans || n < FB_EXTERN) {
        buf_append(k->b, p, n);
        return;
    }
    if (k->nx == k->capx) k->x = xrealloc(k->x, sizeof(FbExt) * (size_t)(k->capx = k->capx ? 2 * k->capx : 64));
    k->ext += n;
    k->x[k->nx++] = (FbExt){pos(k) - n, n, k->ext, p};
}

/* Writes o at the end of the output (aligned) and returns its position; for tables the
 * position of the table (after its vtable). Children follow their parent. */
static size_t emit(Sink *k, const FbObj *o) {
    MNBuf *b = k->b;
    uint32_t u;
    switch (o->kind) {
    case FB_STRING: {
        pad_to(k, 4, 0);
        size_t at = pos(k);
        u = (uint32_t)o->count;
        buf_append(b, &u, 4);
        put_data(k, o->data, o->count);
        buf_append(b, "", 1);
        return at;
    }
    case FB_VEC_SCALAR: {
        size_t al = o->elem_size >= 8 ? 8 : 4; /* a struct of 8-byte fields: 8 */
        pad_to(k, al, 4); /* elements aligned after the 4-byte count */
        size_t at = pos(k);
        u = (uint32_t)o->count;
        buf_append(b, &u, 4);
        for (int i = 0; i < o->npieces; i++) put_data(k, o->pieces[i].p, o->pieces[i].n);
        return at;
    }
    case FB_VEC_OBJ: {
        pad_to(k, 4, 0);
        size_t at = pos(k);
        u = (uint32_t)o->count;
        buf_append(b, &u, 4);
        size_t slots = pos(k);
        for (size_t i = 0; i < o->count; i++) buf_append(b, "\0\0\0\0", 4);
        for (size_t i = 0; i < o->count; i++) {
            size_t c = emit(k, o->items[i]);
            put_u32_at(k, slots + 4 * i, (uint32_t)(c - (slots + 4 * i)));
        }
        return at;
    }
    case FB_TABLE: {
        /* inline layout: soffset first, then fields by decreasing size (keeps each
         * aligned when the table start is 8-aligned) */
        int n = o->nfields;
        while (n > 0 && !o->fields[n - 1].present) n--;
        uint16_t off[256];
        ASSERT(n <= 256);
        size_t tsize = 4;
        for (int sz = 8; sz >= 1; sz /= 2)
            for (int i = 0; i < n; i++)
                if (o->fields[i].present && o->fields[i].size == sz) {
                    if (sz == 8 && tsize % 8) tsize += 4; /* 8-byte fields after the soffset */
                    off[i] = (uint16_t)tsize;
                    tsize += (size_t)sz;
                }
        size_t vtsize = 4 + 2 * (size_t)n;
        /* place the vtable so that the table that follows it starts 8-aligned */
        pad_to(k, 8, vtsize);
        size_t vt = pos(k);
        uint16_t h[2] = {(uint16_t)vtsize, (uint16_t)tsize};
        buf_append(b, h, 4);
        for (int i = 0; i < n; i++) {
            uint16_t v = o->fields[i].present ? off[i] : 0;
            buf_append(b, &v, 2);
        }
        size_t at = pos(k);
        ASSERT(at % 8 == 0);
        int32_t so = (int32_t)(at - vt);
        uint8_t inl[4096];
        ASSERT(tsize <= sizeof inl);
        memset(inl, 0, tsize); /* not all 4 KB: a reloc table is 32 bytes, and there are 10^5 */
        memcpy(inl, &so, 4);
        for (int i = 0; i < n; i++)
            if (o->fields[i].present && !o->fields[i].is_obj)
                memcpy(inl + off[i], o->fields[i].bytes, (size_t)o->fields[i].size);
        buf_append(b, inl, tsize);
        for (int i = 0; i < n; i++) {
            if (!o->fields[i].present || !o->fields[i].is_obj) continue;
            size_t c = emit(k, o->fields[i].obj);
            put_u32_at(k, at + off[i], (uint32_t)(c - (at + off[i])));
        }
        return at;
    }
    }
    die("bad FbObj kind");
}

/* an upper bound of o's bytes with padding, so the output is allocated once */
static size_t fb_bound(const FbObj *o) {
    switch (o->kind) {
    case FB_STRING: return o->count + 8;
    case FB_VEC_SCALAR: return o->count * (size_t)o->elem_size + 16;
    case FB_VEC_OBJ: {
        size_t n = 8 + 4 * o->count;
        for (size_t i = 0; i < o->count; i++) n += fb_bound(o->items[i]);
        return n;
    }
    case FB_TABLE: {
        size_t n = 24 + 2 * (size_t)o->nfields;
        for (int i = 0; i < o->nfields; i++)
            if (o->fields[i].present) n += 12 + (o->fields[i].is_obj ? fb_bound(o->fields[i].obj) : 0);
        return n;
    }
    }
    return 0;
}

static void finish(Sink *k, FbObj *root, const char ident[4]) {
    k->b->len = 0;
    buf_append(k->b, "\0\0\0\0", 4);
    buf_append(k->b, ident, 4);
    size_t r = emit(k, root);
    put_u32_at(k, 0, (uint32_t)r);
}

void fb_finish(FbObj *root, const char ident[4], MNBuf *out) {
    Sink k = {.b = out};
    buf_reserve(out, 8 + fb_bound(root));
    finish(&k, root, ident);
}

MNSpan *fb_finish_spans(FbObj *root, const char ident[4], MNBuf *own, int *nspans) {
    Sink k = {.b = own, .spans = true};
    finish(&k, root, ident);
    MNSpan *sp = xmalloc(sizeof(MNSpan) * (size_t)(2 * k.nx + 1));
    int n = 0;
    size_t from = 0; /* b's bytes up to the next noted piece */
    for (int i = 0; i < k.nx; i++) {
        size_t upto = own_of(&k, k.x[i].at);
        if (upto > from) sp[n++] = (MNSpan){own->data + from, upto - from};
        if (k.x[i].n) sp[n++] = (MNSpan){k.x[i].p, k.x[i].n};
        from = upto;
    }
    if (own->len > from) sp[n++] = (MNSpan){own->data + from, own->len - from};
    free(k.x);
    *nspans = n;
    return sp;
}

/* ---- reader ---- */

static bool rfail(FbReader *r, const char *what, size_t at) {
    if (!r->err[0]) snprintf(r->err, 256, "corrupt file: %s at byte %zu", what, at);
    return false;
}

static bool rd_u32(FbReader *r, size_t at, uint32_t *v) {
    if (at > r->len || r->len - at < 4) return rfail(r, "offset past the end", at);
    if (at % 4) return rfail(r, "misaligned offset", at);
    memcpy(v, r->buf + at, 4);
    return true;
}

static bool table_at(FbReader *r, size_t at, FbTable *t) {
    memset(t, 0, sizeof *t);
    t->r = r;
    int32_t so;
    uint32_t u;
    if (!rd_u32(r, at, &u)) return false;
    memcpy(&so, &u, 4);
    int64_t vt = (int64_t)at - so;
    if (vt < 0 || vt % 2 || (uint64_t)vt + 4 > r->len) return rfail(r, "vtable out of range", at);
    uint16_t h[2];
    memcpy(h, r->buf + vt, 4);
    if (h[0] < 4 || h[0] % 2 || (uint64_t)vt + h[0] > r->len) return rfail(r, "bad vtable size", (size_t)vt);
    if (h[1] < 4 || (uint64_t)at + h[1] > r->len) return rfail(r, "bad table size", at);
    t->pos = (uint32_t)at;
    t->vt = r->buf + vt;
    t->vtsize = h[0];
    t->tsize = h[1];
    t->ok = true;
    return true;
}

bool fb_root(FbReader *r, const char ident[4], FbTable *out) {
    memset(out, 0, sizeof *out);
    r->err[0] = 0;
    if (r->len < 12) return rfail(r, "too short to be a FlatBuffer", 0);
    if (ident && memcmp(r->buf + 4, ident, 4)) {
        snprintf(r->err, 256, "not a %.4s file (file identifier '%.4s')", ident, (const char *)r->buf + 4);
        return false;
    }
    uint32_t root;
    if (!rd_u32(r, 0, &root)) return false;
    return table_at(r, root, out);
}

/* Position of field's inline data, 0 when absent; checks it fits the table. */
static size_t field_pos(const FbTable *t, int field, int size) {
    if (!t->ok || 4 + 2 * (size_t)field + 2 > t->vtsize) return 0;
    uint16_t o;
    memcpy(&o, t->vt + 4 + 2 * field, 2);
    if (!o) return 0;
    if ((size_t)o + (size_t)size > t->tsize) {
        rfail(t->r, "field outside its table", t->pos);
        return (size_t)-1;
    }
    return t->pos + o;
}

bool fb_has(const FbTable *t, int field) {
    size_t p = field_pos(t, field, 1);
    return p && p != (size_t)-1;
}

bool fb_scalar(const FbTable *t, int field, int size, void *out) {
    memset(out, 0, (size_t)size);
    size_t p = field_pos(t, field, size);
    if (p == (size_t)-1) return false;
    if (p) memcpy(out, t->r->buf + p, (size_t)size);
    return true;
}
uint32_t fb_u32(const FbTable *t, int field) {
    uint32_t v;
    fb_scalar(t, field, 4, &v);
    return v;
}
int32_t fb_i32(const FbTable *t, int field) {
    int32_t v;
    fb_scalar(t, field, 4, &v);
    return v;
}
uint64_t fb_u64(const FbTable *t, int field) {
    uint64_t v;
    fb_scalar(t, field, 8, &v);
    return v;
}
int64_t fb_i64(const FbTable *t, int field) {
    int64_t v;
    fb_scalar(t, field, 8, &v);
    return v;
}

/* Follow the uoffset stored at p. */
static bool deref(FbReader *r, size_t p, size_t *target) {
    uint32_t u;
    if (!rd_u32(r, p, &u)) return false;
    if (u == 0 || (uint64_t)p + u >= r->len) return rfail(r, "offset out of range", p);
    *target = p + u;
    return true;
}

static bool str_at(FbReader *r, size_t at, const char **s, uint32_t *n) {
    uint32_t len;
    if (!rd_u32(r, at, &len)) return false;
    if ((uint64_t)at + 4 + len + 1 > r->len) return rfail(r, "string past the end", at);
    if (r->buf[at + 4 + len] != 0) return rfail(r, "string without terminator", at);
    *s = (const char *)r->buf + at + 4;
    *n = len;
    return true;
}

bool fb_str(const FbTable *t, int field, const char **s, uint32_t *n) {
    *s = "";
    *n = 0;
    size_t p = field_pos(t, field, 4), at;
    if (p == (size_t)-1) return false;
    if (!p) return true;
    return deref(t->r, p, &at) && str_at(t->r, at, s, n);
}

static bool vec_at(FbReader *r, size_t at, int elem_size, const uint8_t **data, uint32_t *count) {
    uint32_t cnt;
    if (!rd_u32(r, at, &cnt)) return false;
    uint64_t bytes = (uint64_t)cnt * (uint64_t)elem_size;
    if (at + 4 + bytes > r->len) return rfail(r, "vector past the end", at);
    if (elem_size > 1 && (at + 4) % (size_t)(elem_size > 8 ? 8 : elem_size)) return rfail(r, "misaligned vector", at);
    *data = r->buf + at + 4;
    *count = cnt;
    return true;
}

bool fb_vec(const FbTable *t, int field, int elem_size, const uint8_t **data, uint32_t *count) {
    *data = NULL;
    *count = 0;
    size_t p = field_pos(t, field, 4), at;
    if (p == (size_t)-1) return false;
    if (!p) return true;
    return deref(t->r, p, &at) && vec_at(t->r, at, elem_size, data, count);
}

bool fb_table_field(const FbTable *t, int field, FbTable *out) {
    memset(out, 0, sizeof *out);
    size_t p = field_pos(t, field, 4), at;
    if (p == (size_t)-1 || !p) return false;
    return deref(t->r, p, &at) && table_at(t->r, at, out);
}

static bool vec_elem(const FbTable *t, int field, uint32_t i, size_t *target) {
    const uint8_t *d;
    uint32_t n;
    if (!fb_vec(t, field, 4, &d, &n)) return false;
    if (i >= n) return rfail(t->r, "vector index out of range", t->pos);
    return deref(t->r, (size_t)(d - t->r->buf) + 4 * (size_t)i, target);
}

bool fb_vec_table(const FbTable *t, int field, uint32_t i, FbTable *out) {
    size_t at;
    memset(out, 0, sizeof *out);
    return vec_elem(t, field, i, &at) && table_at(t->r, at, out);
}

bool fb_vec_str(const FbTable *t, int field, uint32_t i, const char **s, uint32_t *n) {
    size_t at;
    *s = "";
    *n = 0;
    return vec_elem(t, field, i, &at) && str_at(t->r, at, s, n);
}

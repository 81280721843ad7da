/* Layout algebra (see layout.h). Decides nothing itself: it is the vocabulary in
 * which the layout planner states its choices and the emitter and the host side
 * compute addresses, so every function here is exact and checked by property tests. */
#include "layout.h"
#include "buf.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const level_names[LV_COUNT] = {"", "PE", "MAB", "L1B", "L2B", "W", "Time"};
const char *layout_level_name(MNLevel l) { return l < LV_COUNT ? level_names[l] : "?"; }

typedef struct {
    const char *s;
    char *err;
    size_t errlen;
} P;

static bool pfail(P *p, const char *what) {
    snprintf(p->err, p->errlen, "bad layout: %s at '%.20s'", what, p->s);
    return false;
}
static void ws(P *p) {
    while (isspace((unsigned char)*p->s)) p->s++;
}
static bool lit(P *p, const char *t) {
    ws(p);
    size_t n = strlen(t);
    if (strncmp(p->s, t, n)) return false;
    p->s += n;
    return true;
}
static bool num(P *p, int64_t *v) {
    ws(p);
    if (!isdigit((unsigned char)*p->s)) return false;
    char *end;
    long long x = strtoll(p->s, &end, 10);
    if (x < 0 || x > (1ll << 40)) return false;
    *v = x;
    p->s = end;
    return true;
}
static bool level(P *p, int *lv) {
    ws(p);
    for (int i = LV_PE; i < LV_COUNT; i++) {
        size_t n = strlen(level_names[i]);
        if (!strncmp(p->s, level_names[i], n) && !isalnum((unsigned char)p->s[n])) {
            p->s += n;
            *lv = i;
            return true;
        }
    }
    return false;
}

/* A dimension list up to close (the opening bracket already read): "64,128)". */
static bool dim_list(P *p, int64_t *dims, int *rank, int max, const char *close) {
    if (lit(p, close)) return true;
    do {
        if (*rank == max) return pfail(p, "too many dimensions");
        if (!num(p, &dims[(*rank)++])) return pfail(p, "expected a dimension");
    } while (lit(p, ","));
    return lit(p, close) || pfail(p, close[0] == ')' ? "expected )" : "expected ]");
}

/* Layouts are parsed again and again (every pass and emitter reads the value's string):
 * each thread keeps the last few it parsed, by the string's bytes. A layout is a value
 * of its text alone, so a copy of the earlier parse is the parse. */
enum { LP_WAYS = 64, LP_KEY = 240 };
typedef struct {
    uint64_t hash;
    uint32_t len; /* 0: empty */
    char key[LP_KEY];
    MNLayout l;
} LpEntry;
static _Thread_local LpEntry lp_cache[LP_WAYS];

static bool layout_parse_text(const char *s, MNLayout *l, char *err, size_t errlen);

bool layout_parse(const char *s, MNLayout *l, char *err, size_t errlen) {
    size_t n = strnlen(s, LP_KEY);
    if (n == 0 || n >= LP_KEY) return layout_parse_text(s, l, err, errlen);
    uint64_t h = buf_hash(s, n);
    LpEntry *e = &lp_cache[(h ^ h >> 32) % LP_WAYS];
    if (e->len == n && e->hash == h && !memcmp(e->key, s, n)) {
        memcpy(l, &e->l, sizeof *l);
        return true;
    }
    if (!layout_parse_text(s, l, err, errlen)) return false;
    e->hash = h;
    e->len = (uint32_t)n;
    memcpy(e->key, s, n);
    memcpy(&e->l, l, sizeof *l);
    return true;
}

static bool layout_parse_text(const char *s, MNLayout *l, char *err, size_t errlen) {
    memset(l, 0, sizeof *l);
    P p = {s, err, errlen};
    if (!lit(&p, "PadLayout{") || !lit(&p, "(")) return pfail(&p, "expected PadLayout{(");
    if (!dim_list(&p, l->shape, &l->rank, LAYOUT_MAX_RANK, ")")) return false;
    if (!lit(&p, "/") || !lit(&p, "(")) return pfail(&p, "expected /(");
    int ax = 0;
    if (l->rank) {
        do {
            if (ax == l->rank) return pfail(&p, "more axes than dimensions");
            if (!lit(&p, "(")) return pfail(&p, "expected ( of an axis");
            do {
                if (l->nsub[ax] == LAYOUT_MAX_SUB) return pfail(&p, "too many subaxes");
                MNSubaxis *sb = &l->sub[ax][l->nsub[ax]++];
                int lv = LV_ADDR;
                int64_t st;
                if (!num(&p, &sb->size) || sb->size < 1) return pfail(&p, "expected a subaxis size");
                if (lit(&p, "_") && !level(&p, &lv)) return pfail(&p, "unknown level");
                sb->level = (uint8_t)lv;
                if (!lit(&p, ":") || !num(&p, &st) || st < 1 || st > INT32_MAX) return pfail(&p, "expected :stride");
                sb->stride = (int32_t)st;
            } while (lit(&p, ","));
            if (!lit(&p, ")")) return pfail(&p, "expected ) of an axis");
            ax++;
        } while (lit(&p, ","));
        if (ax != l->rank) return pfail(&p, "fewer axes than dimensions");
    }
    if (lit(&p, ";")) {
        if (!lit(&p, "B@[")) return pfail(&p, "expected B@[");
        if (!lit(&p, "]")) {
            do {
                int lv;
                if (!level(&p, &lv)) return pfail(&p, "unknown broadcast level");
                l->bcast |= (uint8_t)(1u << lv);
            } while (lit(&p, ","));
            if (!lit(&p, "]")) return pfail(&p, "expected ]");
        }
    }
    if (!lit(&p, ")")) return pfail(&p, "expected ) after the axes");
    if (!lit(&p, "}")) return pfail(&p, "expected }");
    ws(&p);
    if (*p.s) return pfail(&p, "trailing text");
    return true;
}

/* Printed for every value of large graphs: formatted by hand, not with printf. */
static char *put_num(char *p, int64_t v) {
    char t[24];
    int n = 0;
    do t[n++] = (char)('0' + v % 10), v /= 10;
    while (v);
    while (n) *p++ = t[--n];
    return p;
}
static char *put_str(char *p, const char *s) {
    while (*s) *p++ = *s++;
    return p;
}

void layout_print(const MNLayout *l, MNBuf *b) {
    char tmp[64 + LAYOUT_MAX_RANK * (24 + LAYOUT_MAX_SUB * 56)], *p = tmp;
    p = put_str(p, "PadLayout{(");
    for (int i = 0; i < l->rank; i++) {
        if (i) *p++ = ',';
        p = put_num(p, l->shape[i]);
    }
    p = put_str(p, ")/(");
    for (int i = 0; i < l->rank; i++) {
        p = put_str(p, i ? ", (" : "(");
        for (int k = 0; k < l->nsub[i]; k++) {
            const MNSubaxis *s = &l->sub[i][k];
            if (k) p = put_str(p, ", ");
            p = put_num(p, s->size);
            if (s->level) *p++ = '_', p = put_str(p, level_names[s->level]);
            *p++ = ':';
            p = put_num(p, s->stride);
        }
        *p++ = ')';
    }
    if (l->bcast) {
        p = put_str(p, "; B@[");
        bool first = true;
        for (int lv = LV_PE; lv < LV_COUNT; lv++)
            if (l->bcast & (1u << lv)) {
                if (!first) *p++ = ',';
                p = put_str(p, level_names[lv]);
                first = false;
            }
        *p++ = ']';
    }
    p = put_str(p, ")}");
    buf_append(b, tmp, (size_t)(p - tmp));
}

void layout_set(Arena *a, MNValue *v, const MNLayout *l) {
    MNLayout *c = arena_alloc(a, sizeof *c);
    *c = *l;
    v->lay = c;
    MNBuf b = {0};
    layout_print(l, &b);
    v->layout = arena_strdup(a, b.data);
    buf_free(&b);
}

bool layout_timed(const MNValue *v) {
    for (int i = 0; v->lay && i < v->lay->rank; i++)
        for (int k = 0; k < v->lay->nsub[i]; k++)
            if (v->lay->sub[i][k].level == LV_TIME) return true;
    return false;
}

bool layout_equal(const MNValue *a, const MNValue *b) {
    const MNLayout *x = a->lay, *y = b->lay;
    if (!x || !y) return x == y;
    if (x->rank != y->rank || x->bcast != y->bcast) return false;
    for (int i = 0; i < x->rank; i++) {
        if (x->shape[i] != y->shape[i] || x->nsub[i] != y->nsub[i]) return false;
        for (int k = 0; k < x->nsub[i]; k++) {
            const MNSubaxis *s = &x->sub[i][k], *t = &y->sub[i][k];
            if (s->size != t->size || s->stride != t->stride || s->level != t->level) return false;
        }
    }
    return true;
}

int64_t layout_padded(const MNLayout *l, int axis) {
    int64_t n = 1;
    for (int k = 0; k < l->nsub[axis]; k++) n *= l->sub[axis][k].size;
    return n;
}

int64_t layout_extent(const MNLayout *l, MNLevel lv) {
    int64_t e = 1;
    for (int i = 0; i < l->rank; i++)
        for (int k = 0; k < l->nsub[i]; k++)
            if (l->sub[i][k].level == lv) e += (l->sub[i][k].size - 1) * l->sub[i][k].stride;
    return e;
}

int64_t layout_num_lw(const MNLayout *l, int align) {
    int64_t n = layout_extent(l, LV_ADDR);
    if (align > 1) n = (n + align - 1) / align * align;
    return n;
}

/* the subaxes of one level, sorted by decreasing stride */
static int level_subs(const MNLayout *l, int lv, const MNSubaxis **out, int *axis_of, int *k_of) {
    int n = 0;
    for (int i = 0; i < l->rank; i++)
        for (int k = 0; k < l->nsub[i]; k++)
            if (l->sub[i][k].level == lv) {
                int j = n++;
                while (j > 0 && out[j - 1]->stride < l->sub[i][k].stride) {
                    out[j] = out[j - 1];
                    axis_of[j] = axis_of[j - 1];
                    k_of[j] = k_of[j - 1];
                    j--;
                }
                out[j] = &l->sub[i][k];
                axis_of[j] = i;
                k_of[j] = k;
            }
    return n;
}

bool layout_valid(const MNLayout *l, const MNMachine *m, int elem_bytes, char *err, size_t errlen) {
    for (int i = 0; i < l->rank; i++) {
        if (l->nsub[i] < 1) {
            snprintf(err, errlen, "axis %d has no subaxes", i);
            return false;
        }
        if (layout_padded(l, i) < l->shape[i])
            return snprintf(err, errlen, "axis %d: padded extent %lld is smaller than the dimension %lld", i,
                            (long long)layout_padded(l, i), (long long)l->shape[i]),
                   false;
    }
    for (int lv = 0; lv < LV_COUNT; lv++) {
        const MNSubaxis *s[LAYOUT_MAX_RANK * LAYOUT_MAX_SUB];
        int ax[LAYOUT_MAX_RANK * LAYOUT_MAX_SUB], ks[LAYOUT_MAX_RANK * LAYOUT_MAX_SUB];
        int n = level_subs(l, lv, s, ax, ks);
        if (n && (l->bcast & (1u << lv))) {
            snprintf(err, errlen, "level %s is both used and broadcast", level_names[lv]);
            return false;
        }
        /* injective: from the smallest stride up, each stride covers the ones below */
        int64_t need = 1;
        for (int j = n - 1; j >= 0; j--) {
            if (s[j]->size == 1) continue;
            if (s[j]->stride < need)
                return snprintf(err, errlen, "level %s: subaxes overlap (stride %lld below %lld)",
                                lv ? level_names[lv] : "address", (long long)s[j]->stride, (long long)need),
                       false;
            need = s[j]->stride * s[j]->size;
        }
    }
    if (m) {
        int64_t counts[LV_COUNT] = {0, m->pe_per_mab, m->mab_per_l1b, m->l1b_per_l2b, m->n_l2b, 0, 0};
        for (int lv = LV_PE; lv <= LV_L2B; lv++) {
            /* a level's subaxes each divide its count (one with a stride, a tile grid on
             * every other MAB, say, spans less than the count but need not divide it) */
            int64_t e = layout_extent(l, (MNLevel)lv);
            bool ok = e <= counts[lv];
            for (int i = 0; i < l->rank && ok; i++)
                for (int k = 0; k < l->nsub[i]; k++)
                    if (l->sub[i][k].level == lv && counts[lv] % l->sub[i][k].size) ok = false;
            if (!ok)
                return snprintf(err, errlen, "level %s spans %lld, which does not divide the machine's %lld",
                                level_names[lv], (long long)e, (long long)counts[lv]),
                       false;
        }
    }
    if (elem_bytes > 0 && layout_extent(l, LV_W) > 8 / elem_bytes)
        return snprintf(err, errlen, "W spans %lld slots but a long word holds %d elements of %d bytes",
                        (long long)layout_extent(l, LV_W), 8 / elem_bytes, elem_bytes),
               false;
    return true;
}

/* index v of dimension d's digits added into p */
static inline void add_dim(const MNLayout *l, int d, int64_t v, MNPlace *p) {
    for (int k = l->nsub[d] - 1; k >= 0; k--) {
        const MNSubaxis *s = &l->sub[d][k];
        p->c[s->level] += (v % s->size) * s->stride;
        v /= s->size;
    }
}

void layout_place(const MNLayout *l, const int64_t *idx, MNPlace *p) {
    memset(p, 0, sizeof *p);
    for (int i = 0; i < l->rank; i++) add_dim(l, i, idx[i], p);
}

void layout_place_dim(const MNLayout *l, int d, int64_t i, MNPlace *p) {
    memset(p, 0, sizeof *p);
    add_dim(l, d, i, p);
}

void place_walk_start(MNPlaceWalk *w, const MNLayout *l) {
    memset(w, 0, sizeof *w);
    w->l = l;
}

void place_walk_carry(MNPlaceWalk *w) {
    const MNLayout *l = w->l;
    for (int d = l->rank - 1; d >= 0; d--) {
        if (++w->idx[d] < (l->shape[d] ? l->shape[d] : 1)) {
            for (int k = l->nsub[d] - 1; k >= 0; k--) { /* the last subaxis is the least significant digit */
                const MNSubaxis *s = &l->sub[d][k];
                w->p.c[s->level] += s->stride;
                if (++w->dig[d][k] < s->size) return;
                w->p.c[s->level] -= s->stride * s->size;
                w->dig[d][k] = 0;
            }
            return;
        }
        w->idx[d] = 0; /* dimension d starts again: its digits' part of the place goes */
        for (int k = 0; k < l->nsub[d]; k++) {
            w->p.c[l->sub[d][k].level] -= l->sub[d][k].stride * w->dig[d][k];
            w->dig[d][k] = 0;
        }
    }
}

bool layout_index(const MNLayout *l, const MNPlace *p, int64_t *idx, bool *padding) {
    int64_t digit[LAYOUT_MAX_RANK][LAYOUT_MAX_SUB];
    memset(digit, 0, sizeof digit);
    for (int lv = 0; lv < LV_COUNT; lv++) {
        if (l->bcast & (1u << lv)) continue;
        const MNSubaxis *s[LAYOUT_MAX_RANK * LAYOUT_MAX_SUB];
        int ax[LAYOUT_MAX_RANK * LAYOUT_MAX_SUB], ks[LAYOUT_MAX_RANK * LAYOUT_MAX_SUB];
        int n = level_subs(l, lv, s, ax, ks);
        int64_t v = p->c[lv];
        if (v < 0) return false;
        for (int j = 0; j < n; j++) {
            int64_t d = v / s[j]->stride;
            if (d >= s[j]->size) d = s[j]->size - 1;
            digit[ax[j]][ks[j]] = d;
            v -= d * s[j]->stride;
        }
        if (v) return false;
    }
    *padding = false;
    for (int i = 0; i < l->rank; i++) {
        int64_t x = 0;
        for (int k = 0; k < l->nsub[i]; k++) x = x * l->sub[i][k].size + digit[i][k];
        idx[i] = x;
        if (x >= l->shape[i]) *padding = true;
    }
    return true;
}

bool layout_identical(const MNLayout *a, const MNLayout *b) {
    if (a->rank != b->rank || a->bcast != b->bcast) return false;
    for (int d = 0; d < a->rank; d++) {
        if (a->shape[d] != b->shape[d] || a->nsub[d] != b->nsub[d]) return false;
        for (int k = 0; k < a->nsub[d]; k++)
            if (a->sub[d][k].size != b->sub[d][k].size || a->sub[d][k].stride != b->sub[d][k].stride ||
                a->sub[d][k].level != b->sub[d][k].level)
                return false;
    }
    return true;
}

bool layout_same_placement(const MNLayout *a, const MNLayout *b) {
    if (a->rank != b->rank || a->bcast != b->bcast) return false;
    for (int i = 0; i < a->rank; i++) {
        if (a->shape[i] != b->shape[i] || a->nsub[i] != b->nsub[i]) return false;
        for (int k = 0; k < a->nsub[i]; k++) {
            const MNSubaxis *x = &a->sub[i][k], *y = &b->sub[i][k];
            if (x->level != y->level || x->size != y->size || (x->level != LV_ADDR && x->stride != y->stride))
                return false;
        }
    }
    return true;
}

/* ---- DRAM images ---- */

static const MNLevel dram_order[] = {LV_TIME, LV_L2B, LV_L1B, LV_MAB, LV_PE};

int64_t layout_dram_lw(const MNLayout *l) {
    int64_t n = layout_extent(l, LV_ADDR);
    for (size_t i = 0; i < sizeof dram_order / sizeof dram_order[0]; i++) n *= layout_extent(l, dram_order[i]);
    return n;
}

void layout_dram_pos(const MNLayout *l, const int64_t *idx, int64_t *lw, int *slot) {
    MNPlace p;
    layout_place(l, idx, &p);
    int64_t v = 0;
    for (size_t i = 0; i < sizeof dram_order / sizeof dram_order[0]; i++)
        v = v * layout_extent(l, dram_order[i]) + p.c[dram_order[i]];
    *lw = v * layout_extent(l, LV_ADDR) + p.c[LV_ADDR];
    *slot = (int)p.c[LV_W];
}

/* ---- XLA shapes ---- */

static const struct {
    const char *name;
    int32_t elem;
} xla_types[] = {
    {"pred", ONNX_BOOL},     {"s8", ONNX_INT8},     {"s16", ONNX_INT16},  {"s32", ONNX_INT32},  {"s64", ONNX_INT64},
    {"u8", ONNX_UINT8},      {"u16", ONNX_UINT16},  {"u32", ONNX_UINT32}, {"u64", ONNX_UINT64}, {"f16", ONNX_FLOAT16},
    {"bf16", ONNX_BFLOAT16}, {"f32", ONNX_FLOAT32}, {"f64", ONNX_DOUBLE},
};

bool xla_parse(const char *s, MNXlaShape *x, char *err, size_t errlen) {
    memset(x, 0, sizeof *x);
    x->mem_space = -1;
    P p = {s, err, errlen};
    ws(&p);
    size_t best = 0;
    for (size_t i = 0; i < sizeof xla_types / sizeof xla_types[0]; i++) {
        size_t n = strlen(xla_types[i].name);
        if (!strncmp(p.s, xla_types[i].name, n) && p.s[n] == '[' && n > best) {
            best = n;
            x->elem = xla_types[i].elem;
        }
    }
    if (!best) return pfail(&p, "unknown element type");
    p.s += best + 1;
    if (!dim_list(&p, x->dims, &x->rank, MN_MAX_RANK, "]")) return false;
    for (int i = 0; i < x->rank; i++) x->m2m[i] = x->rank - 1 - i; /* default: row-major */
    if (lit(&p, "{")) {
        bool seen[MN_MAX_RANK] = {0};
        for (int i = 0; i < x->rank; i++) {
            int64_t d;
            if (i && !lit(&p, ",")) return pfail(&p, "expected ,");
            if (!num(&p, &d) || d >= x->rank || seen[d])
                return pfail(&p, "minor_to_major must be a permutation of the dimensions");
            seen[d] = true;
            x->m2m[i] = (int)d;
        }
        if (lit(&p, ":")) {
            for (;;) {
                if (lit(&p, "T(")) {
                    do {
                        if (x->ntile == x->rank) return pfail(&p, "more tile dimensions than dimensions");
                        if (!num(&p, &x->tile[x->ntile]) || x->tile[x->ntile] < 1)
                            return pfail(&p, "expected a tile size");
                        x->ntile++;
                    } while (lit(&p, ","));
                    if (!lit(&p, ")")) return pfail(&p, "expected ) of a tile");
                } else if (lit(&p, "S(")) {
                    int64_t ms;
                    if (!num(&p, &ms) || !lit(&p, ")")) return pfail(&p, "expected S(n)");
                    x->mem_space = (int)ms;
                } else
                    break;
            }
        }
        if (!lit(&p, "}")) return pfail(&p, "expected }");
    }
    ws(&p);
    if (*p.s) return pfail(&p, "trailing text");
    return true;
}

void xla_print(const MNXlaShape *x, MNBuf *b) {
    const char *t = "?";
    for (size_t i = 0; i < sizeof xla_types / sizeof xla_types[0]; i++)
        if (xla_types[i].elem == x->elem) t = xla_types[i].name;
    buf_printf(b, "%s[", t);
    for (int i = 0; i < x->rank; i++) buf_printf(b, i ? ",%lld" : "%lld", (long long)x->dims[i]);
    buf_printf(b, "]{");
    for (int i = 0; i < x->rank; i++) buf_printf(b, i ? ",%d" : "%d", x->m2m[i]);
    if (x->ntile || x->mem_space >= 0) buf_printf(b, ":");
    if (x->ntile) {
        buf_printf(b, "T(");
        for (int i = 0; i < x->ntile; i++) buf_printf(b, i ? ",%lld" : "%lld", (long long)x->tile[i]);
        buf_printf(b, ")");
    }
    if (x->mem_space >= 0) buf_printf(b, "S(%d)", x->mem_space);
    buf_printf(b, "}");
}

/* dims major to minor, with the tile grid: g[i] = tiles (or elements) along dim maj[i] */
static void xla_grid(const MNXlaShape *x, int *maj, int64_t *g, int64_t *t) {
    for (int i = 0; i < x->rank; i++) {
        maj[i] = x->m2m[x->rank - 1 - i];
        int ti = i - (x->rank - x->ntile); /* tiles apply to the most minor dims */
        t[i] = ti >= 0 ? x->tile[ti] : 1;
        g[i] = (x->dims[maj[i]] + t[i] - 1) / t[i];
    }
}

int64_t xla_num_elems(const MNXlaShape *x) {
    int maj[MN_MAX_RANK];
    int64_t g[MN_MAX_RANK], t[MN_MAX_RANK], n = 1;
    xla_grid(x, maj, g, t);
    for (int i = 0; i < x->rank; i++) n *= g[i] * t[i];
    return n;
}

int64_t xla_linear(const MNXlaShape *x, const int64_t *idx) {
    int maj[MN_MAX_RANK];
    int64_t g[MN_MAX_RANK], t[MN_MAX_RANK], tile_elems = 1, outer = 0, inner = 0;
    xla_grid(x, maj, g, t);
    for (int i = 0; i < x->rank; i++) tile_elems *= t[i];
    for (int i = 0; i < x->rank; i++) {
        int64_t v = idx[maj[i]];
        outer = outer * g[i] + v / t[i];
        inner = inner * t[i] + v % t[i];
    }
    return outer * tile_elems + inner;
}

bool layout_reshape(const MNLayout *in, const MNType *t, MNLayout *out) {
    MNSubaxis dig[LAYOUT_MAX_SUB]; /* what is left of input dimension i's digits */
    int i = 0, nd = 0, at = 0;
    bool fresh = true; /* nothing of input dimension i taken yet */
    if (t->rank < 1 || t->rank > LAYOUT_MAX_RANK) return false;
    MNLayout l;
    memset(&l, 0, sizeof l);
    l.rank = t->rank;
    l.bcast = in->bcast;
    for (int d = 0; d < t->rank; d++) {
        int64_t need = t->dims[d]; /* what is left of this dimension to take */
        l.shape[d] = t->dims[d];
        if (need < 1) return false;
        while (fresh && need > 1 && i < in->rank && in->shape[i] == 1 && layout_padded(in, i) == 1)
            i++; /* (an input dimension of one element before it takes no digit) */
        if (fresh && i < in->rank && in->shape[i] == need && need > 1) { /* the same dimension, padding and all */
            l.nsub[d] = in->nsub[i];
            memcpy(l.sub[d], in->sub[i], sizeof l.sub[d]);
            i++;
            continue;
        }
        while (need > 1) {
            while (at == nd) { /* the next input dimension's digits (a padded one only whole, above) */
                if (i == in->rank || layout_padded(in, i) != in->shape[i]) return false;
                nd = at = 0;
                for (int k = 0; k < in->nsub[i]; k++)
                    if (in->sub[i][k].size > 1) dig[nd++] = in->sub[i][k];
                i++;
                fresh = false;
            }
            if (l.nsub[d] == LAYOUT_MAX_SUB) return false;
            MNSubaxis *s = &dig[at];
            if (s->size <= need) { /* the whole digit */
                if (need % s->size) return false;
                l.sub[d][l.nsub[d]++] = *s;
                need /= s->size;
                at++;
                continue;
            }
            if (s->size % need || (int64_t)s->stride * (s->size / need) > INT32_MAX) return false;
            /* its most significant part here, the rest for the next dimension */
            l.sub[d][l.nsub[d]++] = (MNSubaxis){need, (int32_t)(s->stride * (s->size / need)), s->level};
            s->size /= need;
            need = 1;
        }
        if (!l.nsub[d]) l.sub[d][l.nsub[d]++] = (MNSubaxis){1, 1, LV_ADDR};
        if (at == nd) fresh = true; /* the next output dimension starts at an input one */
    }
    for (; i < in->rank; i++) /* what is left must be dimensions of one element */
        if (in->shape[i] != 1) return false;
    if (at != nd) return false;
    *out = l;
    return true;
}

bool layout_permute(const MNLayout *in, const int64_t *perm, int rank, MNLayout *out) {
    if (rank != in->rank || rank > LAYOUT_MAX_RANK) return false;
    bool seen[LAYOUT_MAX_RANK] = {false};
    MNLayout l = *in;
    for (int d = 0; d < rank; d++) {
        int64_t p = perm ? perm[d] : rank - 1 - d;
        if (p < 0 || p >= rank || seen[p]) return false;
        seen[p] = true;
        l.shape[d] = in->shape[p];
        l.nsub[d] = in->nsub[p];
        memcpy(l.sub[d], in->sub[p], sizeof l.sub[d]);
    }
    *out = l;
    return true;
}

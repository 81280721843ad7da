/* The VSM assembler's text side: parsing a program and printing it back.
 *
 * Printing is canonical (one spelling per operand form) so that text -> binary ->
 * text -> binary is the identity on the bytes; see docs/vsm.md for the grammar. */
#include "diag.h"
#include "vsm.h"
#include <ctype.h>
#include <pthread.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    int line;
    char *err;
    size_t errlen;
    bool relative; /* operands may be relative to a value ({id}: per-node code before linking) */
} Ctx;

static bool perr(Ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool perr(Ctx *c, const char *fmt, ...) {
    char m[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    snprintf(c->err, c->errlen, "%s:%d: %s", c->name, c->line, m);
    return false;
}

uint16_t vsm_mask_fixed(int entry) {
    if (entry == 0) return 0xffff;
    if (entry < 16) return 0;
    uint16_t m = 0;
    for (int cyc = 0; cyc < 4; cyc++)
        if ((entry >> (3 - cyc)) & 1) m |= (uint16_t)(0xf << (4 * (3 - cyc)));
    return m;
}

/* decimal digits (as strtoul would take them, without its locale and errno) */
static bool parse_uint(const char **p, uint32_t *v) {
    const char *s = *p;
    if (!isdigit((unsigned char)*s)) return false;
    uint64_t x = 0;
    for (; isdigit((unsigned char)*s); s++)
        if ((x = x * 10 + (uint64_t)(*s - '0')) > 0xffffffffu) return false;
    *v = (uint32_t)x;
    *p = s;
    return true;
}

/* /1000, /ll0111, /$imr3, /$llimr3, each optionally followed by t or p */
static bool parse_mask(Ctx *c, const char *s, uint8_t *kind, uint8_t *val) {
    if (!strncmp(s, "ll", 2)) s += 2;
    if (s[0] == '$') {
        s++;
        if (!strncmp(s, "ll", 2)) s += 2;
        if (strncmp(s, "imr", 3)) return perr(c, "bad mask '%s'", s);
        s += 3;
        uint32_t e;
        if (!parse_uint(&s, &e) || e > 31) return perr(c, "mask entry must be 0..31");
        if (*s == 't' || *s == 'p') s++;
        if (*s) return perr(c, "junk after mask: '%s'", s);
        *kind = M_ENTRY;
        *val = (uint8_t)e;
        return true;
    }
    unsigned bits = 0;
    for (int i = 0; i < 4; i++) {
        if (s[i] != '0' && s[i] != '1') return perr(c, "a mask pattern has 4 binary digits, one per cycle");
        bits = bits << 1 | (unsigned)(s[i] - '0');
    }
    s += 4;
    if (*s == 't' || *s == 'p') s++;
    if (*s) return perr(c, "junk after mask pattern: '%s'", s);
    *kind = M_PATTERN;
    *val = (uint8_t)bits;
    return true;
}

static const struct {
    const char *name;
    int kind;
} fixed_names[] = {
    {"aluf", K_ALUF},   {"mauf", K_MAUF},       {"lbf", K_LBF},         {"mreadf", K_MREADF},
    {"peid", K_PEID},   {"subpeid", K_SUBPEID}, {"mabid", K_MABID},     {"l1bid", K_L1BID},
    {"l2bid", K_L2BID}, {"msb1", K_MSB1},       {"nowrite", K_NOWRITE},
};

/* One operand token (without a trailing /mask, which the caller splits off). */
static bool parse_operand(Ctx *c, const char *tok, VOperand *o) {
    memset(o, 0, sizeof *o);
    o->group = o->l2b = -1;
    const char *s = tok;
    if (*s == '-') {
        o->neg = 1;
        s++;
    }
    if (*s != '$') return perr(c, "expected an operand starting with $, got '%s'", tok);
    s++;
    for (size_t i = 0; i < sizeof fixed_names / sizeof fixed_names[0]; i++)
        if (s[0] == fixed_names[i].name[0] && !strcmp(s, fixed_names[i].name)) {
            o->kind = (uint8_t)fixed_names[i].kind;
            o->width = 4;
            return true;
        }
    if (!strncmp(s, "omr", 3)) {
        s += 3;
        uint32_t e;
        if (!parse_uint(&s, &e) || e < 1 || e > 15 || *s) return perr(c, "$omr takes an entry 1..15 ('%s')", tok);
        o->kind = K_OMR;
        o->addr = e;
        o->width = 2;
        return true;
    }
    if (!strncmp(s, "dar", 3)) {
        s += 3;
        if (!parse_uint(&s, &o->addr) || *s) return perr(c, "$dar takes an entry number ('%s')", tok);
        o->kind = K_DAR;
        return true;
    }
    int width = 1;
    if (!strncmp(s, "ll", 2)) {
        width = 4;
        s += 2;
    } else if (*s == 'l') {
        width = 2;
        s++;
    }
    char letter = *s++;
    switch (letter) {
    case 'm': o->kind = K_LM0; break;
    case 'n': o->kind = K_LM1; break;
    case 'r': o->kind = K_GRF0; break;
    case 's': o->kind = K_GRF1; break;
    case 't': o->kind = K_T; break;
    case 'x': o->kind = K_MX; break;
    case 'y': o->kind = K_MY; break;
    case 'b': o->kind = K_L1BM; break;
    case 'c': o->kind = K_L2BM; break;
    case 'd': o->kind = K_DRAM; break;
    case 'p': o->kind = K_PDM; break;
    default: return perr(c, "unknown operand '%s'", tok);
    }
    o->width = (uint8_t)width;
    if (o->kind == K_T) {
        o->width = 4; /* T is read and written as the cycle's whole 2-LW entry */
        if (*s) return perr(c, "T takes no address ('%s')", tok);
        return true;
    }
    if (o->kind == K_MX || o->kind == K_MY) {
        if (*s && (!parse_uint(&s, &o->addr) || o->addr > 15))
            return perr(c, "a matrix register row is 0..15 ('%s')", tok);
        if (*s) return perr(c, "junk in '%s'", tok);
        return true;
    }
    if ((o->kind == K_LM0 && *s == 't') || (o->kind == K_DRAM && *s == 'i')) {
        o->amode = A_TIND;
        s++;
    }
    if (*s == '{') { /* relative to a value's address, which the linker fills in */
        uint32_t id;
        s++;
        if (!c->relative)
            return perr(c, "'%s': an address relative to a value ({id}) appears only in mncc's code before linking",
                        tok);
        if ((o->kind != K_LM0 && o->kind != K_LM1 && o->kind != K_DRAM) || o->amode == A_TIND || !parse_uint(&s, &id) ||
            *s != '}' || id >= 0x7fffffff)
            return perr(c, "a relocation {value} is an LM or DRAM address's ('%s')", tok);
        s++;
        o->sym = id + 1;
    }
    if (*s == '[') {
        if (o->amode == A_TIND) return perr(c, "T-indirect takes a base address, not a list");
        s++;
        for (int i = 0; i < 4; i++) {
            uint32_t v;
            if (!parse_uint(&s, &v) || v > 0xffff) return perr(c, "bad address list in '%s'", tok);
            o->flat[i] = (uint16_t)v;
            if (*s != (i == 3 ? ']' : ',')) return perr(c, "an address list has 4 entries ('%s')", tok);
            s++;
        }
        o->amode = A_FLAT;
    } else if (isdigit((unsigned char)*s)) {
        if (!parse_uint(&s, &o->addr) || (o->kind <= K_GRF1 && o->addr > 0xffff))
            return perr(c, "bad address in '%s'", tok);
    } else if (o->amode != A_TIND && o->kind != K_L1BM && o->kind != K_L2BM && o->kind != K_DRAM && o->kind != K_PDM)
        return perr(c, "missing address in '%s'", tok);
    else if (o->amode != A_TIND)
        return perr(c, "missing address in '%s'", tok);
    if (*s == 'v') {
        s++;
        uint32_t k = 1;
        if (isdigit((unsigned char)*s) && (!parse_uint(&s, &k) || !k || k * (uint32_t)o->width > 32767))
            return perr(c, "bad stride in '%s' (1 to %d)", tok, 32767 / (int)o->width);
        if (o->amode == A_FLAT) return perr(c, "an address list cannot also stride");
        o->stride = (int16_t)(k * (uint32_t)o->width);
        if (o->amode != A_TIND) o->amode = A_STRIDE;
    }
    if (*s == '@') {
        s++;
        if (*s != '.') {
            uint32_t g;
            if (!parse_uint(&s, &g) || g > 32767) return perr(c, "bad group selector in '%s'", tok);
            o->group = (int16_t)g;
        }
        if (*s == '.') {
            s++;
            uint32_t l;
            if (!parse_uint(&s, &l) || l > 32767) return perr(c, "bad L2B selector in '%s'", tok);
            o->l2b = (int16_t)l;
        }
    }
    if (*s) return perr(c, "junk '%s' in operand '%s'", s, tok);
    bool pe_mem = o->kind <= K_T;
    if (pe_mem && o->width >= 2 && o->amode != A_TIND) {
        uint32_t al = o->width;
        bool bad = o->addr % al;
        for (int i = 0; o->amode == A_FLAT && i < 4; i++) bad |= o->flat[i] % al;
        if (bad)
            return perr(c, "'%s': a %s access needs an address aligned to %u words", tok,
                        o->width == 2 ? "long-word" : "double-long-word", al);
    }
    return true;
}

/* mnemonics by hash: a linear scan of the ISA table was a third of the linker's parse */
enum { INSN_HASH = 1024 };
static int16_t insn_hash[INSN_HASH]; /* 1 + index, 0 empty */
static pthread_once_t insn_once = PTHREAD_ONCE_INIT;

static unsigned name_hash(const char *s) {
    unsigned h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static void insn_hash_init(void) {
    _Static_assert(VI_COUNT < INSN_HASH / 2, "the mnemonic hash needs room");
    for (int i = 0; i < VI_COUNT; i++) {
        unsigned j = name_hash(vsm_insns[i].name) & (INSN_HASH - 1);
        while (insn_hash[j]) j = (j + 1) & (INSN_HASH - 1);
        insn_hash[j] = (int16_t)(i + 1);
    }
}

static int find_insn(const char *name) {
    pthread_once(&insn_once, insn_hash_init);
    for (unsigned j = name_hash(name) & (INSN_HASH - 1); insn_hash[j]; j = (j + 1) & (INSN_HASH - 1))
        if (!strcmp(vsm_insns[insn_hash[j] - 1].name, name)) return insn_hash[j] - 1;
    return -1;
}

static int find_rrn(const char *s) {
    for (int i = 1; i < RRN_COUNT; i++)
        if (!strcmp(vsm_rrn_names[i], s)) return i;
    return -1;
}

static int prec_of(char ch) {
    switch (ch) {
    case 'd': return P_D;
    case 'f': return P_F;
    case 'h': return P_H;
    case 'l': return P_L;
    case 'i': return P_I;
    case 's': return P_S;
    default: return 0;
    }
}

/* Mnemonic (without modifiers) -> insn, precision, u, r, rrn, sel. */
static bool parse_mnemonic(Ctx *c, const char *mn, VExpr *e) {
    char buf[64];
    size_t mlen = strnlen(mn, sizeof buf - 1);
    memcpy(buf, mn, mlen);
    buf[mlen] = 0;
    char *at = strchr(buf, '@');
    e->sel = -1;
    if (at) {
        *at = 0;
        const char *p = at + 1;
        uint32_t v;
        if (!parse_uint(&p, &v) || *p || v > 255) return perr(c, "bad selector in '%s'", mn);
        e->sel = (int16_t)v;
    }
    int i = find_insn(buf);
    if (i >= 0 && (vsm_insns[i].precs & P_NONE) && !(vsm_insns[i].flags & F_RRN)) {
        e->insn = (uint16_t)i;
        e->prec = P_NONE;
        goto check_sel;
    }
    /* mvr last: mvr2 and mvr4 begin with it */
    static const char *const rrn_bases[] = {"l1bmr", "l2bmr", "mvr2", "mvr4", "mvr"};
    for (size_t k = 0; k < sizeof rrn_bases / sizeof rrn_bases[0]; k++) {
        size_t n = strlen(rrn_bases[k]);
        if (!strncmp(buf, rrn_bases[k], n)) {
            int r = find_rrn(buf + n);
            if (r < 0)
                return perr(c, "unknown reduction '%s' in '%s' (one of dfadd ffadd hfadd dmax ... sband)", buf + n, mn);
            e->insn = (uint16_t)find_insn(rrn_bases[k]);
            e->rrn = (uint8_t)r;
            e->prec = P_NONE;
            goto check_sel;
        }
    }
    {
        const char *p = buf;
        bool u = false;
        if (*p == 'u' && prec_of(p[1])) {
            u = true;
            p++;
        }
        int prec = prec_of(*p);
        if (!prec) return perr(c, "unknown instruction '%s'", mn);
        p++;
        bool red = false;
        i = find_insn(p);
        if (i < 0 && strlen(p) > 1 && p[strlen(p) - 1] == 'r') {
            char base[64];
            snprintf(base, sizeof base, "%.*s", (int)strlen(p) - 1, p);
            i = find_insn(base);
            red = i >= 0;
        }
        if (i < 0 || (vsm_insns[i].precs & P_NONE)) return perr(c, "unknown instruction '%s'", mn);
        const VInsnInfo *in = &vsm_insns[i];
        if (!(in->precs & prec)) return perr(c, "'%s' does not take precision '%s'", in->name, vsm_prec_letter(prec));
        if (u && !(in->flags & F_U)) return perr(c, "'%s' has no unsigned form", in->name);
        if (red && !(in->flags & F_RED)) return perr(c, "'%s' has no output-reducing form", in->name);
        e->insn = (uint16_t)i;
        e->prec = (uint8_t)prec;
        e->uns = u;
        e->reduce = red;
    }
check_sel:
    if (e->sel >= 0 && !(vsm_insns[e->insn].flags & F_SEL))
        return perr(c, "'%s' takes no @ selector", vsm_insns[e->insn].name);
    return true;
}

/* MV modifiers: n<size>, i<tag> (hex), in any order */
static bool parse_mv_mods(Ctx *c, const char *s, VExpr *e) {
    while (*s) {
        if (s[0] == 'n' && s[1] == 'd') {
            s += 2;
            uint32_t k;
            if (!parse_uint(&s, &k) || !k || k > 1024) return perr(c, "nd<k> takes 1..1024");
            e->nd = (uint16_t)k;
        } else if (*s == 'n') {
            s++;
            if (!parse_uint(&s, &e->size)) return perr(c, "bad MV size");
        } else if (*s == 'i') {
            s++;
            char *end;
            unsigned long t = strtoul(s, &end, 16);
            if (end == s || t == 0 || t > 0x3f) return perr(c, "a tag is i01..i3f");
            e->tag = (uint8_t)t;
            s = end;
        } else
            return perr(c, "unknown MV modifier '%s' (n<size>, i<tag>, nd<k>)", s);
    }
    if (!e->size) return perr(c, "MV needs /n<size>");
    return true;
}

/* imm payload: i"..", ui"..", f"..", d"..", l"..", ul"..", h"..", s"..", us".." */
static bool parse_imm(Ctx *c, const char *tok, VExpr *e) {
    const char *q = strchr(tok, '"');
    size_t tl = strlen(tok);
    if (!q || tl < 3 || tok[tl - 1] != '"' || q == tok + tl - 1)
        return perr(c, "imm payload is TYPE\"value\", e.g. i\"42\" or f\"1.5\"");
    char type[8], val[96];
    snprintf(type, sizeof type, "%.*s", (int)(q - tok), tok);
    snprintf(val, sizeof val, "%.*s", (int)(tl - (size_t)(q - tok) - 2), q + 1);
    char *end;
    errno = 0;
    uint64_t lw; /* one long word, replicated into both */
    if (!strcmp(type, "f") || !strcmp(type, "d")) {
        double d = strtod(val, &end);
        if (!val[0] || *end || errno) return perr(c, "bad number '%s'", val);
        if (type[0] == 'f') {
            float f = (float)d;
            uint32_t w;
            memcpy(&w, &f, 4);
            lw = (uint64_t)w << 32 | w;
        } else
            memcpy(&lw, &d, 8);
    } else {
        bool neg = val[0] == '-';
        const char *digits = neg ? val + 1 : val;
        if (!isdigit((unsigned char)digits[0])) return perr(c, "bad integer '%s'", val);
        uint64_t v = strtoull(digits, &end, 0);
        if (*end || errno || end == digits) return perr(c, "bad integer '%s'", val);
        /* the value must fit the payload's width (signed types: either reading) */
        int bits = !strcmp(type, "l") || !strcmp(type, "ul") ? 64 : !strcmp(type, "i") || !strcmp(type, "ui") ? 32 : 16;
        if (bits < 64 && (neg ? v > (1ull << (bits - 1)) : v > (1ull << bits) - 1))
            return perr(c, "'%s' does not fit %d bits", val, bits);
        if (neg && bits == 64 && v > (1ull << 63)) return perr(c, "'%s' does not fit 64 bits", val);
        if (neg) v = (uint64_t)0 - v;
        if (!strcmp(type, "i") || !strcmp(type, "ui")) {
            uint32_t w = (uint32_t)v;
            lw = (uint64_t)w << 32 | w;
        } else if (!strcmp(type, "l") || !strcmp(type, "ul")) {
            lw = v;
        } else if (!strcmp(type, "s") || !strcmp(type, "us") || !strcmp(type, "h")) {
            uint64_t h = v & 0xffff;
            lw = h << 48 | h << 32 | h << 16 | h;
        } else
            return perr(c, "unknown imm type '%s' (i ui l ul s us h f d)", type);
    }
    e->imm[0] = e->imm[1] = lw;
    return true;
}

/* strtok_r with one or two delimiter characters, without its per-call delimiter set */
static char *next_token(char **p, char d1, char d2) {
    char *s = *p;
    while (*s == d1 || *s == d2) s++;
    if (!*s) {
        *p = s;
        return NULL;
    }
    char *t = s;
    while (*s && *s != d1 && *s != d2) s++;
    if (*s) *s++ = 0;
    *p = s;
    return t;
}

/* One ';'-separated expression. */
static bool parse_expr(Ctx *c, char *text, VExpr *e, uint32_t *repeat) {
    memset(e, 0, sizeof *e);
    char *toks[16];
    char joined[4][160];
    int nt = 0, nj = 0;
    for (char *save = text, *t = next_token(&save, ' ', '\t'); t; t = next_token(&save, ' ', '\t')) {
        if (t[0] == '/' && nt > 1) { /* "$lr0v /$imr1": a mask written apart */
            if (nj == 4 || strlen(toks[nt - 1]) + strlen(t) >= sizeof joined[0]) return perr(c, "bad mask placement");
            size_t a = strlen(toks[nt - 1]);
            memcpy(joined[nj], toks[nt - 1], a);
            strcpy(joined[nj] + a, t);
            toks[nt - 1] = joined[nj++];
            continue;
        }
        if (nt == 16) return perr(c, "too many operands");
        toks[nt++] = t;
    }
    if (!nt) return perr(c, "empty expression");
    char mn[64];
    size_t mlen = strnlen(toks[0], sizeof mn - 1);
    memcpy(mn, toks[0], mlen);
    mn[mlen] = 0;
    char *slash = strchr(mn, '/');
    char mods[64];
    mods[0] = 0;
    if (slash) {
        memcpy(mods, slash + 1, strlen(slash + 1) + 1); /* both are 64 bytes */
        *slash = 0;
    }
    if (!parse_mnemonic(c, mn, e)) return false;
    const VInsnInfo *in = &vsm_insns[e->insn];
    if (e->insn == VI_nop) {
        if (mods[0]) {
            const char *p = mods;
            if (!parse_uint(&p, repeat) || *p || !*repeat) return perr(c, "nop/N needs a positive N");
        }
        if (nt > 1) return perr(c, "nop takes no operands");
        return true;
    }
    if (in->flags & F_MV) {
        if (!parse_mv_mods(c, mods, e)) return false;
    } else if (mods[0]) {
        if (in->unit != U_ALU && in->unit != U_MAU && in->unit != U_MREAD)
            return perr(c, "'%s' takes no zero-flush mask", in->name);
        if (!parse_mask(c, mods, &e->zkind, &e->zval)) return false;
    }
    int k = 1;
    if (e->insn == VI_wait) {
        if (nt != 2 || toks[1][0] != 'i') return perr(c, "wait takes a tag: wait i01");
        char *end;
        unsigned long t = strtoul(toks[1] + 1, &end, 16);
        if (*end || t == 0 || t > 0x3f) return perr(c, "a tag is i01..i3f");
        e->tag = (uint8_t)t;
        return true;
    }
    if (e->insn == VI_noforward) return nt == 1 ? true : perr(c, "noforward takes no operands");
    if (e->insn == VI_l2bmdarw) return nt == 1 ? true : perr(c, "l2bmdarw takes no operands");
    if (e->insn == VI_imm) {
        if (nt < 3) return perr(c, "imm takes a payload and destinations");
        if (!parse_imm(c, toks[1], e)) return false;
        k = 2;
    }
    int nsrc = in->nsrc;
    if (nt - k < nsrc + 1)
        return perr(c, "'%s' takes %d source%s and at least one destination", toks[0], nsrc, nsrc == 1 ? "" : "s");
    if (nt - k - nsrc > 4) return perr(c, "at most 4 destinations");
    for (int s = 0; s < nsrc; s++) {
        if (strchr(toks[k + s], '/')) return perr(c, "a source takes no mask ('%s')", toks[k + s]);
        if (!parse_operand(c, toks[k + s], &e->src[s])) return false;
        if (e->src[s].neg && in->unit != U_MAU)
            return perr(c, "only matrix-unit inputs can be negated ('%s')", toks[k + s]);
    }
    e->nsrc = (uint8_t)nsrc;
    e->ndst = (uint8_t)(nt - k - nsrc);
    for (int d = 0; d < e->ndst; d++) {
        char buf[96];
        size_t dl = strnlen(toks[k + nsrc + d], sizeof buf - 1);
        memcpy(buf, toks[k + nsrc + d], dl);
        buf[dl] = 0;
        char *ms = strchr(buf, '/');
        VOperand *o = &e->dst[d];
        if (ms) *ms = 0;
        if (!parse_operand(c, buf, o)) return false;
        if (ms && !parse_mask(c, ms + 1, &o->mkind, &o->mval)) return false;
        if (o->neg) return perr(c, "a destination cannot be negated");
        if (o->kind >= K_ALUF && o->kind <= K_MSB1) return perr(c, "'%s' cannot be written", toks[k + nsrc + d]);
    }
    return true;
}

enum { EXPR_BLOCK = 4096 };

void vsm_push_step(VProgram *p, const VStep *s) {
    if (p->nsteps == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 64;
        p->steps = xrealloc(p->steps, sizeof(VStep) * (size_t)p->cap);
    }
    VStep *t = &p->steps[p->nsteps++];
    *t = *s;
    t->e = NULL;
    if (!s->nexpr) return;
    if (!p->nblk || p->blk_used + s->nexpr > p->blk_cap) {
        p->blk_cap = p->blk_cap ? 2 * p->blk_cap : 16;
        if (p->blk_cap > EXPR_BLOCK) p->blk_cap = EXPR_BLOCK;
        p->blk = xrealloc(p->blk, sizeof(VExpr *) * (size_t)(p->nblk + 1));
        p->blk[p->nblk++] = xmalloc(sizeof(VExpr) * (size_t)p->blk_cap);
        p->blk_used = 0;
    }
    t->e = p->blk[p->nblk - 1] + p->blk_used;
    p->blk_used += s->nexpr;
    memcpy(t->e, s->e, sizeof(VExpr) * s->nexpr);
}

static bool push_step(VProgram *p, const VStep *s) {
    vsm_push_step(p, s);
    return true;
}

/* One line of text (len bytes, no newline) into p; false with the message in c->err.
 * *quit: the line was 'quit', which ends the program. */
static bool parse_line(Ctx *c, const char *line, size_t len, VProgram *p, bool *quit) {
    char small[512]; /* most lines: no malloc */
    char *buf = len < sizeof small ? small : xmalloc(len + 1);
    memcpy(buf, line, len);
    buf[len] = 0;
    char *h = strpbrk(buf, "#!");
    if (h) *h = 0;
    char *s = buf;
    while (isspace((unsigned char)*s)) s++;
    for (char *e = s + strlen(s); e > s && isspace((unsigned char)e[-1]);) *--e = 0;
    VStep st;
    VExpr ex[VSM_MAX_EXPR]; /* parse_expr clears each it fills; only those are read */
    memset(&st, 0, sizeof st);
    st.e = ex;
    st.line = c->line;
    bool ok = true;
    if (!*s) {
    } else if (!strcmp(s, "quit")) {
        *quit = true;
    } else if (s[0] == 'd' && (s[1] == ' ' || s[1] == '\t')) {
        /* debug commands: kept as text, canonicalised (single spaces) */
        st.kind = ST_DEBUG;
        char *t = xmalloc(strlen(s) + 1), *w = t;
        for (const char *r = s; *r; r++)
            if (!isspace((unsigned char)*r) || (w > t && w[-1] != ' ')) *w++ = isspace((unsigned char)*r) ? ' ' : *r;
        *w = 0;
        st.text = t;
        ok = push_step(p, &st);
    } else if (!strncmp(s, "mask", 4) && (s[4] == ' ' || isalpha((unsigned char)s[4]))) {
        const char *q = s + 4;
        st.kind = ST_MASK;
        st.mask_width = 2;
        if (!strncmp(q, "ll", 2)) {
            st.mask_width = 4;
            q += 2;
        } else if (*q == 'l')
            q++;
        for (; *q && *q != ' '; q++) {
            const char *L = "rstmnk", *f = strchr(L, *q);
            if (!f) {
                ok = perr(c, "mask targets are letters of 'rstmnk'");
                break;
            }
            st.mask_targets |= (uint8_t)(1 << (f - L));
        }
        while (ok && *q == ' ') q++;
        uint32_t e;
        if (ok && (!parse_uint(&q, &e) || e > 31 || *q)) ok = perr(c, "mask takes an entry 0..31");
        if (ok) {
            if (!st.mask_targets) st.mask_targets = MT_R | MT_S | MT_T | MT_M | MT_N | MT_K;
            st.mask_entry = (uint8_t)e;
            ok = push_step(p, &st);
        }
    } else {
        st.kind = ST_STEP;
        st.repeat = 1;
        char *save = NULL;
        for (char *x = next_token((save = s, &save), ';', ';'); ok && x; x = next_token(&save, ';', ';')) {
            while (isspace((unsigned char)*x)) x++;
            if (!*x) continue;
            if (st.nexpr == VSM_MAX_EXPR) {
                ok = perr(c, "too many expressions in one step");
                break;
            }
            uint32_t rep = 0;
            ok = parse_expr(c, x, &st.e[st.nexpr], &rep); /* tokenises x in place: it ends at this ';' */
            if (ok && rep) st.repeat = rep;
            st.nexpr++;
        }
        if (ok && !st.nexpr) ok = perr(c, "empty step (a line of only ';')");
        if (ok) ok = push_step(p, &st);
    }
    if (buf != small) free(buf);
    return ok;
}

/* The linker's parses: a line's meaning does not depend on the values its relative
 * operands name, so a line seen before with other ids ({12} where it had {7}) is the
 * step parsed then with those ids put in. Node code repeats a handful of line shapes
 * (the same transfer or product for each layer), and a lookup costs a tenth of a parse.
 * Only plain steps are kept; anything else (comments, masks, debug lines, a line whose
 * braces are not a value id) is parsed as it stands. A line without ids is also the
 * same text and code once linked: the linker keeps those with its entry (linked). */
enum { LC_MAX = 1 << 16, LC_IDS = VSM_LINE_IDS };
typedef struct {
    uint64_t hash;
    uint32_t key, klen; /* in bytes */
    uint32_t text, tlen, code, clen; /* linked: in bytes */
    bool linked, tried; /* tried: a template was made, or cannot be */
    uint32_t tmpl; /* a line with ids: its template, +1; 0: none */
    int step; /* in steps, +1; 0: empty slot */
} LcEntry;
typedef struct {
    uint32_t text, tlen, code, clen, repeat; /* in bytes */
    uint32_t rel0, nrel, hole0, nholes; /* in rels[], holes[] */
} LcTmpl;
struct VLineCache {
    LcEntry *tab;
    uint32_t cap, n;
    MNBuf bytes;
    VProgram steps;
    MNBuf kbuf; /* lc_keyed's key */
    LcTmpl *tmpl;
    VTmplRel *rels;
    VTmplHole *holes;
    uint32_t ntmpl, captmpl, nrels, caprels, nholes, capholes;
};

VLineCache *vsm_line_cache_new(void) { return xcalloc(1, sizeof(VLineCache)); }

void vsm_line_cache_free(VLineCache *lc) {
    if (!lc) return;
    free(lc->tab);
    free(lc->tmpl);
    free(lc->rels);
    free(lc->holes);
    buf_free(&lc->kbuf);
    buf_free(&lc->bytes);
    vsm_program_free(&lc->steps);
    free(lc);
}

/* the line with each {id} as {} into key, the ids in order; false: not a cacheable line
 * (the scans are libc's: this runs for every line the linker reads) */
static bool line_key(const char *s, size_t len, MNBuf *key, uint32_t *ids, int *nids, uint64_t *hash) {
    if (!len || memchr(s, '#', len) || memchr(s, '!', len)) return false;
    key->len = 0;
    buf_reserve(key, len);
    char *k = key->data;
    size_t kn = 0;
    int n = 0;
    for (const char *p = s, *end = s + len; p < end;) {
        const char *br = memchr(p, '{', (size_t)(end - p));
        size_t run = (size_t)((br ? br + 1 : end) - p);
        memcpy(k + kn, p, run);
        kn += run;
        if (!br) break;
        uint64_t v = 0;
        const char *q = br + 1;
        while (q < end && *q >= '0' && *q <= '9' && v < 0x7fffffff) v = v * 10 + (uint64_t)(*q++ - '0');
        if (q == br + 1 || q >= end || *q != '}' || v >= 0x7fffffff || n == LC_IDS) return false;
        ids[n++] = (uint32_t)v;
        p = q; /* the '}' goes into the key next */
    }
    key->len = kn;
    *nids = n;
    *hash = buf_hash(k, kn);
    return true;
}

static LcEntry *lc_slot(VLineCache *lc, const char *k, size_t kn, uint64_t h) {
    for (uint32_t i = (uint32_t)h & (lc->cap - 1);; i = (i + 1) & (lc->cap - 1)) {
        LcEntry *e = &lc->tab[i];
        if (!e->step || (e->hash == h && e->klen == kn && !memcmp(lc->bytes.data + e->key, k, kn))) return e;
    }
}

/* the entry of a line without ids (its key is the line itself), or NULL */
static LcEntry *lc_plain(VLineCache *lc, const char *line, size_t len) {
    if (!lc->cap || !len) return NULL;
    LcEntry *e = lc_slot(lc, line, len, buf_hash(line, len));
    return e->step ? e : NULL;
}

bool vsm_line_cache_linked(VLineCache *lc, const char *line, size_t len, const char **text, size_t *tlen,
                           const char **code, size_t *clen, uint32_t *repeat) {
    LcEntry *e = lc_plain(lc, line, len);
    if (!e || !e->linked) return false;
    *text = lc->bytes.data + e->text, *tlen = e->tlen;
    *code = lc->bytes.data + e->code, *clen = e->clen;
    *repeat = lc->steps.steps[e->step - 1].repeat;
    return true;
}

void vsm_line_cache_set_linked(VLineCache *lc, const char *line, size_t len, const void *text, size_t tlen,
                               const void *code, size_t clen) {
    LcEntry *e = lc_plain(lc, line, len);
    if (!e || e->linked || lc->bytes.len + tlen + clen >= UINT32_MAX) return;
    e->text = (uint32_t)lc->bytes.len;
    e->tlen = (uint32_t)tlen;
    buf_append(&lc->bytes, text, tlen);
    e->code = (uint32_t)lc->bytes.len;
    e->clen = (uint32_t)clen;
    buf_append(&lc->bytes, code, clen);
    e->linked = true;
}

/* the entry of a line with ids (their values into ids), or NULL */
static LcEntry *lc_keyed(VLineCache *lc, const char *line, size_t len, uint32_t *ids, int *nids) {
    if (!lc->cap) return NULL;
    uint64_t h;
    LcEntry *e = NULL;
    if (line_key(line, len, &lc->kbuf, ids, nids, &h) && *nids) e = lc_slot(lc, lc->kbuf.data, lc->kbuf.len, h);
    return e && e->step ? e : NULL;
}

bool vsm_line_cache_tmpl(VLineCache *lc, const char *line, size_t len, VLinkTmpl *t, uint32_t *ids, int *nids) {
    LcEntry *e = lc_keyed(lc, line, len, ids, nids);
    if (!e || !e->tmpl) return false;
    const LcTmpl *m = &lc->tmpl[e->tmpl - 1];
    t->text = lc->bytes.data + m->text;
    t->tlen = m->tlen;
    t->code = (const uint8_t *)lc->bytes.data + m->code;
    t->clen = m->clen;
    t->repeat = m->repeat;
    t->rel = lc->rels + m->rel0;
    t->nrel = (int)m->nrel;
    t->hole = lc->holes + m->hole0;
    t->nholes = (int)m->nholes;
    return (int)m->nrel == *nids;
}

#define LC_GROW(arr, n, cap, more)                                        \
    do {                                                                  \
        if ((n) + (more) > (cap)) {                                       \
            while ((n) + (more) > (cap)) (cap) = (cap) ? 2 * (cap) : 256; \
            (arr) = xrealloc((arr), sizeof(*(arr)) * (size_t)(cap));      \
        }                                                                 \
    } while (0)

void vsm_line_cache_set_tmpl(VLineCache *lc, const char *line, size_t len) {
    uint32_t ids[LC_IDS];
    int nids;
    LcEntry *e = lc_keyed(lc, line, len, ids, &nids);
    if (!e || e->tried || lc->ntmpl >= LC_MAX) return;
    e->tried = true;
    /* the step with every relocated operand at its relative number (as if each value
     * were at address 0), printed and encoded with the places of those numbers noted */
    VProgram one = {0};
    vsm_push_step(&one, &lc->steps.steps[e->step - 1]);
    VStep *st = &one.steps[0];
    VTmplRel rel[LC_IDS];
    VTmplHole hole[VHOLES_MAX];
    int nrel = 0, nh = 0;
    bool ok = st->kind == ST_STEP;
    for (int k = 0; ok && k < st->nexpr; k++) {
        VExpr *x = &st->e[k];
        for (int j = 0; ok && j < x->nsrc + x->ndst; j++) {
            VOperand *o = j < x->nsrc ? &x->src[j] : &x->dst[j - x->nsrc];
            if (!o->sym) continue;
            if (nrel == LC_IDS || nh + 4 > VHOLES_MAX || k > 0xffff || j > 0xffff) {
                ok = false;
                break;
            }
            o->reloc = o->sym;
            o->sym = 0;
            bool flat = o->amode == A_FLAT;
            rel[nrel] = (VTmplRel){(uint16_t)k, (uint16_t)j, (uint8_t)(o->kind == K_DRAM ? 1 : 2), flat,
                                   (int64_t)(flat ? o->flat[0] : o->addr)};
            for (int c = 0; c < (flat ? 4 : 1); c++)
                hole[nh++] = (VTmplHole){0, 0, 0, 0, flat ? o->flat[c] : o->addr, (uint8_t)nrel};
            nrel++;
        }
    }
    MNBuf tx = {0}, cd = {0};
    VHoles ht, hc;
    if (ok && nrel == nids) {
        vsm_print_step_holes(&tx, st, &ht);
        vsm_encode_step_holes(&cd, st, &hc);
        ok = ht.n == nh && hc.n == nh && lc->bytes.len + tx.len + cd.len < UINT32_MAX;
    } else
        ok = false;
    if (ok) {
        for (int i = 0; i < nh; i++) {
            hole[i].toff = ht.off[i];
            hole[i].tlen = ht.len[i];
            hole[i].coff = hc.off[i];
            hole[i].clen = hc.len[i];
        }
        LC_GROW(lc->tmpl, lc->ntmpl, lc->captmpl, 1);
        LC_GROW(lc->rels, lc->nrels, lc->caprels, (uint32_t)nrel);
        LC_GROW(lc->holes, lc->nholes, lc->capholes, (uint32_t)nh);
        LcTmpl *m = &lc->tmpl[lc->ntmpl++];
        m->text = (uint32_t)lc->bytes.len;
        m->tlen = (uint32_t)tx.len;
        buf_append(&lc->bytes, tx.data, tx.len);
        m->code = (uint32_t)lc->bytes.len;
        m->clen = (uint32_t)cd.len;
        buf_append(&lc->bytes, cd.data, cd.len);
        m->repeat = st->repeat;
        m->rel0 = lc->nrels;
        m->nrel = (uint32_t)nrel;
        m->hole0 = lc->nholes;
        m->nholes = (uint32_t)nh;
        memcpy(lc->rels + lc->nrels, rel, sizeof(VTmplRel) * (size_t)nrel);
        lc->nrels += (uint32_t)nrel;
        memcpy(lc->holes + lc->nholes, hole, sizeof(VTmplHole) * (size_t)nh);
        lc->nholes += (uint32_t)nh;
        e->tmpl = lc->ntmpl;
    }
    buf_free(&tx);
    buf_free(&cd);
    vsm_program_free(&one);
}

bool vsm_tmpl_fill(const VLinkTmpl *t, const int64_t *add, MNBuf *text, MNBuf *code, int *bad) {
    buf_reserve(text, t->tlen + 12 * (size_t)t->nholes);
    buf_reserve(code, t->clen + 10 * (size_t)t->nholes);
    char *tp = text->data + text->len;
    uint8_t *cp = (uint8_t *)code->data + code->len;
    uint32_t ta = 0, ca = 0; /* template bytes copied */
    for (int i = 0; i < t->nholes; i++) {
        const VTmplHole *h = &t->hole[i];
        int64_t v = (int64_t)h->val + add[h->rel];
        if (t->rel[h->rel].flat && v > 0xffff) {
            *bad = h->rel;
            return false;
        }
        uint64_t u =
            t->rel[h->rel].flat ? (uint64_t)v : (uint64_t)(uint32_t)v; /* an address is 32 bits, as resolving adds it */
        memcpy(tp, t->text + ta, h->toff - ta);
        tp += h->toff - ta;
        ta = h->toff + h->tlen;
        tp = buf_dec(tp, u);
        memcpy(cp, t->code + ca, h->coff - ca);
        cp += h->coff - ca;
        ca = h->coff + h->clen;
        cp = vsm_varint(cp, u);
    }
    memcpy(tp, t->text + ta, t->tlen - ta);
    tp += t->tlen - ta;
    memcpy(cp, t->code + ca, t->clen - ca);
    cp += t->clen - ca;
    text->len = (size_t)(tp - text->data);
    text->data[text->len] = 0;
    code->len = (size_t)(cp - (uint8_t *)code->data);
    return true;
}

/* the ids of a line, in the order its operands read them (sources, then destinations,
 * expression by expression: the text's order) */
static void put_ids(VStep *t, const uint32_t *ids, int nids) {
    int k = 0;
    for (int x = 0; x < t->nexpr; x++) {
        VExpr *e = &t->e[x];
        for (int j = 0; j < e->nsrc + e->ndst; j++) {
            VOperand *o = j < e->nsrc ? &e->src[j] : &e->dst[j - e->nsrc];
            if (!o->sym) continue;
            if (k == nids) die("line cache: more relative operands than ids");
            o->sym = ids[k++] + 1;
        }
    }
    if (k != nids) die("line cache: %d ids for %d relative operands", nids, k);
}

static bool parse_text(const char *name, const char *text, const char *end, VProgram *p, char *err, size_t errlen,
                       bool relative, VLineCache *lc) {
    memset(p, 0, sizeof *p);
    Ctx c = {name, 0, err, errlen, relative};
    MNBuf key = {0};
    uint32_t ids[LC_IDS];
    bool ok = true;
    for (const char *line = text; ok && line < end && *line;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t len = nl ? (size_t)(nl - line) : strnlen(line, (size_t)(end - line));
        c.line++;
        const char *at = line;
        line = nl ? nl + 1 : end;
        int nids;
        uint64_t h;
        LcEntry *slot = NULL;
        if (lc && line_key(at, len, &key, ids, &nids, &h)) {
            if (lc->n * 2 >= lc->cap && lc->n < LC_MAX) { /* grow: rehash every entry */
                uint32_t cap = lc->cap ? 2 * lc->cap : 1024;
                LcEntry *old = lc->tab;
                uint32_t ocap = lc->cap;
                lc->tab = xcalloc(cap, sizeof(LcEntry));
                lc->cap = cap;
                for (uint32_t i = 0; i < ocap; i++)
                    if (old[i].step) *lc_slot(lc, lc->bytes.data + old[i].key, old[i].klen, old[i].hash) = old[i];
                free(old);
            }
            if (lc->cap) slot = lc_slot(lc, key.data, key.len, h);
            if (slot && slot->step) {
                vsm_push_step(p, &lc->steps.steps[slot->step - 1]);
                VStep *t = &p->steps[p->nsteps - 1];
                t->line = c.line;
                put_ids(t, ids, nids);
                continue;
            }
        }
        int before = p->nsteps;
        bool quit = false;
        ok = parse_line(&c, at, len, p, &quit);
        if (quit) break;
        if (ok && slot && !slot->step && lc->n < LC_MAX && p->nsteps == before + 1 &&
            p->steps[before].kind == ST_STEP && lc->bytes.len + key.len < UINT32_MAX) {
            slot->hash = h;
            slot->key = (uint32_t)lc->bytes.len;
            slot->klen = (uint32_t)key.len;
            buf_append(&lc->bytes, key.data, key.len);
            vsm_push_step(&lc->steps, &p->steps[before]);
            slot->step = lc->steps.nsteps;
            lc->n++;
        }
    }
    buf_free(&key);
    if (!ok) vsm_program_free(p);
    return ok;
}

bool vsm_parse(const char *name, const char *text, VProgram *p, char *err, size_t errlen) {
    return parse_text(name, text, text + strlen(text), p, err, errlen, false, NULL);
}
bool vsm_parse_relative(const char *name, const char *text, VProgram *p, char *err, size_t errlen) {
    return parse_text(name, text, text + strlen(text), p, err, errlen, true, NULL);
}
bool vsm_parse_line(const char *name, int lineno, const char *line, size_t len, bool relative, VProgram *p, bool *quit,
                    char *err, size_t errlen) {
    Ctx c = {name, lineno, err, errlen, relative};
    *quit = false;
    bool ok = parse_line(&c, line, len, p, quit);
    if (!ok) vsm_program_free(p);
    return ok;
}
bool vsm_parse_relative_cached(VLineCache *lc, const char *name, const char *text, size_t len, VProgram *p, char *err,
                               size_t errlen) {
    return parse_text(name, text, text + len, p, err, errlen, true, lc);
}

void vsm_program_free(VProgram *p) {
    for (int i = 0; i < p->nsteps; i++)
        if (p->steps[i].kind == ST_DEBUG) free((char *)p->steps[i].text);
    free(p->steps);
    for (int i = 0; i < p->nblk; i++) free(p->blk[i]);
    free(p->blk);
    memset(p, 0, sizeof *p);
}

/* ---- printing ---- */

/* Printing writes characters straight into the buffer: a step reserves its worst case
 * once (buf_printf's vsnprintf per token was most of the linker's printing time). */
typedef struct {
    char *p;
    char *start; /* the step's first byte */
    VHoles *h; /* or NULL: where the relocated numbers go */
} Pr;
static void pc(Pr *w, char ch) { *w->p++ = ch; }
static void ps(Pr *w, const char *s) {
    size_t n = strlen(s);
    memcpy(w->p, s, n);
    w->p += n;
}
static void pu(Pr *w, uint64_t v) { w->p = buf_dec(w->p, v); }
static void pu_hole(Pr *w, VHoles *h, uint64_t v) {
    if (h) h->off[h->n] = (uint32_t)(w->p - w->start);
    pu(w, v);
    if (h) {
        h->len[h->n] = (uint32_t)(w->p - w->start) - h->off[h->n];
        h->n++;
    }
}
static void pd(Pr *w, int64_t v) {
    if (v < 0) {
        pc(w, '-');
        v = -v;
    }
    pu(w, (uint64_t)v);
}
static void phex(Pr *w, uint64_t v, int digits) {
    for (int i = digits - 1; i >= 0; i--) *w->p++ = "0123456789abcdef"[v >> (4 * i) & 15];
}
static void ptag(Pr *w, unsigned tag) { /* %02x */
    int d = 2;
    while (tag >> (4 * d)) d++;
    phex(w, tag, d);
}

static void print_mask(Pr *b, uint8_t kind, uint8_t val) {
    if (kind == M_PATTERN) {
        pc(b, '/');
        for (int i = 3; i >= 0; i--) pc(b, (char)('0' + (val >> i & 1)));
    } else if (kind == M_ENTRY) {
        ps(b, "/$imr");
        pu(b, val);
    }
}

static void print_operand(Pr *b, const VOperand *o) {
    if (o->neg) pc(b, '-');
    pc(b, '$');
    for (size_t i = 0; o->kind >= K_NOWRITE && o->kind <= K_MSB1 && i < sizeof fixed_names / sizeof fixed_names[0]; i++)
        if (fixed_names[i].kind == o->kind) {
            ps(b, fixed_names[i].name);
            return;
        }
    if (o->kind == K_OMR) {
        ps(b, "omr");
        pu(b, o->addr);
        print_mask(b, o->mkind, o->mval);
        return;
    }
    static const char letters[K_COUNT] = {
        [K_LM0] = 'm', [K_LM1] = 'n',  [K_GRF0] = 'r', [K_GRF1] = 's', [K_T] = 't',  [K_MX] = 'x',
        [K_MY] = 'y',  [K_L1BM] = 'b', [K_L2BM] = 'c', [K_DRAM] = 'd', [K_PDM] = 'p'};
    if (o->kind == K_T) {
        ps(b, "lt");
        print_mask(b, o->mkind, o->mval);
        return;
    }
    if (o->kind == K_DAR) {
        ps(b, "dar");
        pu(b, o->addr);
        return;
    }
    if (o->width == 4) {
        pc(b, 'l');
        pc(b, 'l');
    } else if (o->width == 2)
        pc(b, 'l');
    pc(b, letters[o->kind]);
    if (o->kind == K_MX || o->kind == K_MY) {
        pu(b, o->addr);
        return;
    }
    if (o->amode == A_TIND) pc(b, o->kind == K_DRAM ? 'i' : 't');
    if (o->sym) {
        pc(b, '{');
        pu(b, o->sym - 1);
        pc(b, '}');
    }
    VHoles *h = o->reloc ? b->h : NULL; /* a relocated number: where it goes noted */
    if (o->amode == A_FLAT) {
        for (int i = 0; i < 4; i++) {
            pc(b, i ? ',' : '[');
            pu_hole(b, h, o->flat[i]);
        }
        pc(b, ']');
    } else
        pu_hole(b, h, o->addr);
    if (o->amode == A_STRIDE || (o->amode == A_TIND && o->stride)) {
        int k = o->stride / (o->width ? o->width : 1);
        pc(b, 'v');
        if (k != 1) pd(b, k);
    }
    if (o->group >= 0 || o->l2b >= 0) {
        pc(b, '@');
        if (o->group >= 0) pd(b, o->group);
        if (o->l2b >= 0) {
            pc(b, '.');
            pd(b, o->l2b);
        }
    }
    print_mask(b, o->mkind, o->mval);
}

static void print_expr(Pr *b, const VExpr *e, uint32_t repeat) {
    const VInsnInfo *in = &vsm_insns[e->insn];
    if (e->insn == VI_nop) {
        ps(b, "nop");
        if (repeat > 1) {
            pc(b, '/');
            pu(b, repeat);
        }
        return;
    }
    if (in->precs & P_NONE) {
        ps(b, in->name);
        ps(b, vsm_rrn_names[e->rrn]);
    } else {
        if (e->uns) pc(b, 'u');
        ps(b, vsm_prec_letter(e->prec));
        ps(b, in->name);
        if (e->reduce) pc(b, 'r');
    }
    if (e->sel >= 0) {
        pc(b, '@');
        pd(b, e->sel);
    }
    if (in->flags & F_MV) {
        ps(b, "/n");
        pu(b, e->size);
        if (e->tag) {
            pc(b, 'i');
            ptag(b, e->tag);
        }
        if (e->nd) {
            ps(b, "nd");
            pu(b, e->nd);
        }
    }
    print_mask(b, e->zkind, e->zval);
    if (e->insn == VI_wait) {
        ps(b, " i");
        ptag(b, e->tag);
        return;
    }
    if (e->insn == VI_imm) {
        ps(b, " ul\"0x");
        phex(b, e->imm[0], 16);
        pc(b, '"');
    }
    for (int i = 0; i < e->nsrc; i++) {
        pc(b, ' ');
        print_operand(b, &e->src[i]);
    }
    for (int i = 0; i < e->ndst; i++) {
        pc(b, ' ');
        print_operand(b, &e->dst[i]);
    }
}

/* the most a step's line can take: an operand is at most "-$ll" "t{4294967295}"
 * "[65535,65535,65535,65535]" "v-32768" "@-32768.-32768" "/$imr255" (< 96 bytes) */
enum { PRINT_OPERAND_MAX = 96, PRINT_EXPR_MAX = 96 };

void vsm_print_step(MNBuf *b, const VStep *s) { vsm_print_step_holes(b, s, NULL); }

void vsm_print_step_holes(MNBuf *b, const VStep *s, VHoles *h) {
    size_t most = 64 + (s->kind == ST_DEBUG ? strlen(s->text) : 0);
    for (int i = 0; s->kind == ST_STEP && i < s->nexpr; i++)
        most += PRINT_EXPR_MAX + (size_t)(s->e[i].nsrc + s->e[i].ndst) * PRINT_OPERAND_MAX;
    buf_reserve(b, most);
    Pr w = {b->data + b->len, b->data + b->len, h};
    if (h) h->n = 0;
    if (s->kind == ST_DEBUG) {
        ps(&w, s->text);
    } else if (s->kind == ST_MASK) {
        ps(&w, s->mask_width == 4 ? "maskll" : "mask");
        if (s->mask_targets != (MT_R | MT_S | MT_T | MT_M | MT_N | MT_K))
            for (int i = 0; i < 6; i++)
                if (s->mask_targets & (1 << i)) pc(&w, "rstmnk"[i]);
        pc(&w, ' ');
        pu(&w, s->mask_entry);
    } else
        for (int i = 0; i < s->nexpr; i++) {
            if (i) ps(&w, "; ");
            print_expr(&w, &s->e[i], s->repeat);
        }
    pc(&w, '\n');
    b->len = (size_t)(w.p - b->data);
    b->data[b->len] = 0;
}

void vsm_print(MNBuf *b, const VProgram *p) {
    for (int i = 0; i < p->nsteps; i++) vsm_print_step(b, &p->steps[i]);
}

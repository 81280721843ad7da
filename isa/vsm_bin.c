/* GPFNBin: the binary form of a VSM program. A header ("VSMB", version, step count)
 * then each line as a tagged record (docs/vsm.md section 9): small numbers as LEB128
 * varints, and the fields an expression or operand leaves at their defaults (no mask,
 * selector, immediate, size, tag, group) announced absent by a flags byte, so a typical
 * line takes about 15 bytes (the fixed-width form of version 1 took 90, three times
 * the text). Source line numbers are not part of it, so assembling the disassembly
 * gives the same bytes. The decoder treats its input as untrusted: it checks every
 * field against the ISA table and refuses any encoding but the canonical one
 * (overlong varints, a field flagged present at its default), so decoding then
 * encoding gives back the same bytes. */
#include "diag.h"
#include "vsm.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The writer reserves a step's worst case once and stores fields without a call each:
 * a million-line program is encoded in one pass at memory speed. */
typedef struct {
    uint8_t *p;
    uint8_t *start; /* the step's first byte */
    VHoles *h; /* or NULL: where the relocated numbers go */
} Wr;
static void w8(Wr *w, unsigned v) { *w->p++ = (uint8_t)v; }
uint8_t *vsm_varint(uint8_t *p, uint64_t v) { /* LEB128 */
    while (v >= 0x80) *p++ = (uint8_t)(v | 0x80), v >>= 7;
    *p++ = (uint8_t)v;
    return p;
}
static void wv(Wr *w, uint64_t v) { w->p = vsm_varint(w->p, v); }
static void wv_hole(Wr *w, VHoles *h, uint64_t v) {
    if (h) h->off[h->n] = (uint32_t)(w->p - w->start);
    wv(w, v);
    if (h) {
        h->len[h->n] = (uint32_t)(w->p - w->start) - h->off[h->n];
        h->n++;
    }
}
static void w64(Wr *w, uint64_t v) { memcpy(w->p, &v, 8), w->p += 8; }
static uint64_t zig(int64_t v) { return v < 0 ? 2 * (uint64_t)(-(v + 1)) + 1 : 2 * (uint64_t)v; }

/* the most a record part takes: an operand's kind, flags, address, stride, list, mask,
 * group and L2B; an expression's fixed part, selector, mask, immediate, size, tag, rrn */
enum { ENC_OPERAND = 2 + 5 + 3 + 4 * 3 + 2 + 3 + 3, ENC_EXPR = 3 + 3 + 1 + 2 + 16 + 5 + 1 + 1 + 3 };

/* operand flags: width code (0: 1 word, 1: 2, 2: 4), addressing, and what is present */
enum { OF_WIDTH = 3, OF_AMODE_SHIFT = 2, OF_NEG = 16, OF_MASK = 32, OF_GROUP = 64, OF_L2B = 128 };
/* expression flags */
enum { EF_UNS = 1, EF_REDUCE = 2, EF_SEL = 4, EF_ZMASK = 8, EF_IMM = 16, EF_SIZE = 32, EF_TAG = 64, EF_RRN = 128 };

static void enc_operand(Wr *b, const VOperand *o) {
    if (o->sym) die("vsm_encode: an operand still relative to value %u (link first)", o->sym - 1);
    unsigned f = (unsigned)(o->width == 4 ? 2 : o->width == 2 ? 1 : 0) | (unsigned)o->amode << OF_AMODE_SHIFT;
    if (o->neg) f |= OF_NEG;
    if (o->mkind) f |= OF_MASK;
    if (o->group >= 0) f |= OF_GROUP;
    if (o->l2b >= 0) f |= OF_L2B;
    w8(b, o->kind);
    w8(b, f);
    VHoles *h = o->reloc ? b->h : NULL; /* a relocated number: where it goes noted */
    if (o->amode != A_FLAT)
        wv_hole(b, h, o->addr);
    else
        wv(b, o->addr);
    if (o->amode == A_STRIDE || o->amode == A_TIND) wv(b, zig(o->stride));
    for (int i = 0; o->amode == A_FLAT && i < 4; i++) wv_hole(b, h, o->flat[i]);
    if (o->mkind) {
        w8(b, o->mkind);
        w8(b, o->mval);
    }
    if (o->group >= 0) wv(b, (uint64_t)o->group);
    if (o->l2b >= 0) wv(b, (uint64_t)o->l2b);
}

void vsm_encode_begin(MNBuf *out) {
    out->len = 0;
    buf_append(out, "VSMB", 4);
    uint32_t h[2] = {VSMB_VERSION, 0};
    buf_append(out, h, sizeof h);
}

void vsm_encode_step(MNBuf *out, const VStep *s) { vsm_encode_step_holes(out, s, NULL); }

void vsm_encode_step_holes(MNBuf *out, const VStep *s, VHoles *h) {
    size_t most = 1 + 5 + 1 + (s->kind == ST_DEBUG ? strlen(s->text) : 0);
    for (int k = 0; s->kind == ST_STEP && k < s->nexpr; k++)
        most += ENC_EXPR + (size_t)(s->e[k].nsrc + s->e[k].ndst) * ENC_OPERAND;
    buf_reserve(out, most);
    Wr w = {(uint8_t *)out->data + out->len, (uint8_t *)out->data + out->len, h};
    if (h) h->n = 0;
    w8(&w, s->kind);
    if (s->kind == ST_DEBUG) {
        size_t n = strlen(s->text);
        wv(&w, n);
        memcpy(w.p, s->text, n);
        w.p += n;
    } else if (s->kind == ST_MASK) {
        w8(&w, s->mask_targets);
        w8(&w, s->mask_width);
        w8(&w, s->mask_entry);
    } else {
        wv(&w, s->repeat);
        w8(&w, s->nexpr);
        for (int k = 0; k < s->nexpr; k++) {
            const VExpr *e = &s->e[k];
            unsigned f = 0;
            if (e->uns) f |= EF_UNS;
            if (e->reduce) f |= EF_REDUCE;
            if (e->sel >= 0) f |= EF_SEL;
            if (e->zkind) f |= EF_ZMASK;
            if (e->imm[0] || e->imm[1]) f |= EF_IMM;
            if (e->size) f |= EF_SIZE;
            if (e->tag) f |= EF_TAG;
            if (e->rrn) f |= EF_RRN;
            /* the count byte's bit 7: an nd<k> follows (an MV through the DAR) */
            wv(&w, e->insn);
            w8(&w, e->prec);
            w8(&w, f);
            w8(&w, (unsigned)e->nsrc << 4 | e->ndst | (e->nd ? 128u : 0));
            if (e->sel >= 0) w8(&w, (unsigned)e->sel);
            if (e->zkind) {
                w8(&w, e->zkind);
                w8(&w, e->zval);
            }
            if (f & EF_IMM) {
                w64(&w, e->imm[0]);
                w64(&w, e->imm[1]);
            }
            if (e->size) wv(&w, e->size);
            if (e->tag) w8(&w, e->tag);
            if (e->rrn) w8(&w, e->rrn);
            if (e->nd) wv(&w, e->nd);
            for (int j = 0; j < e->nsrc; j++) enc_operand(&w, &e->src[j]);
            for (int j = 0; j < e->ndst; j++) enc_operand(&w, &e->dst[j]);
        }
    }
    out->len = (size_t)(w.p - (uint8_t *)out->data);
    out->data[out->len] = 0;
}

void vsm_encode_end(MNBuf *out, uint32_t nsteps) { memcpy(out->data + 8, &nsteps, 4); }

void vsm_encode(const VProgram *p, MNBuf *out) {
    vsm_encode_begin(out);
    for (int i = 0; i < p->nsteps; i++) vsm_encode_step(out, &p->steps[i]);
    vsm_encode_end(out, (uint32_t)p->nsteps);
}

typedef struct {
    const uint8_t *p, *end;
    bool bad;
} Rd;

static void take(Rd *r, void *dst, size_t n) {
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = true;
        memset(dst, 0, n);
        return;
    }
    memcpy(dst, r->p, n);
    r->p += n;
}
static uint8_t g8(Rd *r) {
    uint8_t v;
    take(r, &v, 1);
    return v;
}
static uint32_t g32(Rd *r) {
    uint32_t v;
    take(r, &v, 4);
    return v;
}
static uint64_t g64(Rd *r) {
    uint64_t v;
    take(r, &v, 8);
    return v;
}
/* a canonical LEB128 varint of at most max (no overlong form: a last byte of zero after
 * the first) */
static uint64_t gv(Rd *r, uint64_t max) {
    uint64_t v = 0;
    for (int sh = 0;; sh += 7) {
        uint8_t b = g8(r);
        if (r->bad) return 0;
        if (sh == 63 && b > 1) break;
        v |= (uint64_t)(b & 0x7f) << sh;
        if (!(b & 0x80)) {
            if ((sh && !b) || v > max) break;
            return v;
        }
        if (sh == 63) break;
    }
    r->bad = true;
    return 0;
}

static bool dec_operand(Rd *r, VOperand *o) {
    memset(o, 0, sizeof *o);
    o->group = o->l2b = -1;
    o->kind = g8(r);
    unsigned f = g8(r), wc = f & OF_WIDTH;
    o->width = (uint8_t)(wc == 2 ? 4 : wc == 1 ? 2 : 1);
    o->amode = (uint8_t)(f >> OF_AMODE_SHIFT & 3);
    o->neg = (f & OF_NEG) != 0;
    o->addr = (uint32_t)gv(r, UINT32_MAX);
    if (o->amode == A_STRIDE || o->amode == A_TIND) {
        uint64_t z = gv(r, 0xffff);
        o->stride = (int16_t)(z & 1 ? -(int64_t)(z >> 1) - 1 : (int64_t)(z >> 1));
    }
    for (int i = 0; o->amode == A_FLAT && i < 4; i++) o->flat[i] = (uint16_t)gv(r, 0xffff);
    if (f & OF_MASK) {
        o->mkind = g8(r);
        o->mval = g8(r);
        if (!o->mkind) return false;
    }
    if (f & OF_GROUP) o->group = (int16_t)gv(r, INT16_MAX);
    if (f & OF_L2B) o->l2b = (int16_t)gv(r, INT16_MAX);
    if (r->bad || wc == 3 || o->kind <= K_NONE || o->kind >= K_COUNT || o->mkind > M_ENTRY ||
        (o->mkind == M_ENTRY && o->mval >= 32) || (o->mkind == M_PATTERN && o->mval >= 16))
        return false;
    /* what the assembler can produce for each kind, and nothing else */
    if (o->kind == K_OMR) return o->addr >= 1 && o->addr <= 15;
    if (o->kind == K_MX || o->kind == K_MY) return o->addr < 16;
    if (o->kind <= K_GRF1) { /* PE memories: aligned addresses and strides */
        if (o->addr > 0xffff || (o->amode != A_TIND && o->addr % o->width) || o->stride % o->width) return false;
        for (int i = 0; o->amode == A_FLAT && i < 4; i++)
            if (o->flat[i] % o->width) return false;
        if (o->amode == A_STRIDE && !o->stride) return false;
    }
    return true;
}

bool vsm_decode(const uint8_t *buf, size_t len, VProgram *p, char *err, size_t errlen) {
    memset(p, 0, sizeof *p);
    if (!buf) { /* no code at all: refused below as any short input */
        buf = (const uint8_t *)"";
        len = 0;
    }
    Rd r = {buf, buf + len, false};
    char magic[4];
    take(&r, magic, 4);
    uint32_t ver = g32(&r), n = g32(&r);
    if (r.bad || memcmp(magic, "VSMB", 4)) {
        snprintf(err, errlen, "not a GPFNBin program (bad magic)");
        return false;
    }
    if (ver != VSMB_VERSION) {
        snprintf(err, errlen, "GPFNBin version %u, this build reads %d", ver, VSMB_VERSION);
        return false;
    }
    if (n > len / 2) { /* the smallest line takes 2 bytes */
        snprintf(err, errlen, "corrupt GPFNBin: %u lines in %zu bytes", n, len);
        return false;
    }
    p->cap = (int)n + 1;
    p->steps = xcalloc((size_t)p->cap, sizeof(VStep));
    for (uint32_t i = 0; i < n; i++) {
        VStep st, *s = &st;
        VExpr ex[VSM_MAX_EXPR]; /* each cleared as it is read */
        memset(s, 0, sizeof *s);
        s->e = ex;
        s->kind = g8(&r);
        s->line = (int)i + 1; /* the line of the canonical text (vsm_print) */
        bool ok = !r.bad;
        if (s->kind == ST_DEBUG) {
            uint64_t tl = gv(&r, UINT32_MAX);
            ok = !r.bad && tl <= (size_t)(r.end - r.p);
            if (ok) {
                char *t = xmalloc(tl + 1);
                take(&r, t, tl);
                t[tl] = 0;
                ok = strlen(t) == tl;
                s->text = t;
                vsm_push_step(p, s); /* p owns the text now, also when it is refused below */
                if (ok) continue;
            }
        } else if (s->kind == ST_MASK) {
            s->mask_targets = g8(&r);
            s->mask_width = g8(&r);
            s->mask_entry = g8(&r);
            ok = !r.bad && s->mask_entry < 32 && s->mask_targets < 64 && (s->mask_width == 2 || s->mask_width == 4);
        } else if (s->kind == ST_STEP) {
            s->repeat = (uint32_t)gv(&r, UINT32_MAX);
            s->nexpr = g8(&r);
            ok = !r.bad && s->nexpr >= 1 && s->nexpr <= VSM_MAX_EXPR && s->repeat >= 1;
            for (int k = 0; ok && k < s->nexpr; k++) {
                VExpr *e = &s->e[k];
                memset(e, 0, sizeof *e);
                e->insn = (uint16_t)gv(&r, VI_COUNT - 1);
                e->prec = g8(&r);
                unsigned f = g8(&r), nn = g8(&r);
                e->uns = (f & EF_UNS) != 0;
                e->reduce = (f & EF_REDUCE) != 0;
                e->nsrc = (uint8_t)(nn >> 4 & 7);
                e->ndst = (uint8_t)(nn & 15);
                e->sel = -1;
                if (f & EF_SEL) e->sel = g8(&r);
                if (f & EF_ZMASK) {
                    e->zkind = g8(&r);
                    e->zval = g8(&r);
                }
                if (f & EF_IMM) {
                    e->imm[0] = g64(&r);
                    e->imm[1] = g64(&r);
                }
                if (f & EF_SIZE) e->size = (uint32_t)gv(&r, UINT32_MAX);
                if (f & EF_TAG) e->tag = g8(&r);
                if (f & EF_RRN) e->rrn = g8(&r);
                if (nn & 128) e->nd = (uint16_t)gv(&r, 1024);
                /* a field flagged present holds other than its default */
                bool canon = (!(f & EF_ZMASK) || e->zkind) && (!(f & EF_IMM) || e->imm[0] || e->imm[1]) &&
                             (!(f & EF_SIZE) || e->size) && (!(f & EF_TAG) || e->tag) && (!(f & EF_RRN) || e->rrn) &&
                             (!(nn & 128) || (e->nd && (vsm_insns[e->insn].flags & F_MV)));
                ok = !r.bad && canon && e->insn < VI_COUNT && e->rrn < RRN_COUNT && e->nsrc <= 3 && e->ndst <= 4 &&
                     e->nsrc == vsm_insns[e->insn].nsrc && (vsm_insns[e->insn].precs & e->prec) && e->prec &&
                     !(e->prec & (e->prec - 1)) && e->zkind <= M_ENTRY && (e->zkind != M_ENTRY || e->zval < 32) &&
                     (e->zkind != M_PATTERN || e->zval < 16) && e->tag <= 0x3f &&
                     (e->ndst >= 1 || vsm_insns[e->insn].unit == U_NOP || vsm_insns[e->insn].unit == U_WAIT ||
                      vsm_insns[e->insn].unit == U_NOFWD || e->insn == VI_l2bmdarw);
                for (int j = 0; ok && j < e->nsrc; j++) ok = dec_operand(&r, &e->src[j]);
                for (int j = 0; ok && j < e->ndst; j++) ok = dec_operand(&r, &e->dst[j]);
            }
        } else
            ok = false;
        if (!ok) {
            snprintf(err, errlen, "corrupt GPFNBin at line record %u", i);
            vsm_program_free(p);
            return false;
        }
        vsm_push_step(p, s);
    }
    if (p->nsteps != (int)n || r.p != r.end) {
        snprintf(err, errlen, "corrupt GPFNBin: %s", p->nsteps != (int)n ? "bad debug record" : "trailing bytes");
        vsm_program_free(p);
        return false;
    }
    return true;
}

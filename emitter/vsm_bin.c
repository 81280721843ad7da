/* GPFNBin: the binary form of a VSM program. A header ("VSMB", version, step count)
 * then each line as a tagged record of fixed-width little-endian fields. Source line
 * numbers are not part of it, so assembling the disassembly gives the same bytes. The decoder
 * treats its input as untrusted and checks every field against the ISA table. */
#include "diag.h"
#include "vsm.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VSMB_VERSION 1

/* The writer reserves a step's worst case once and stores fields without a call each:
 * a million-line program is encoded in one pass at memory speed. */
typedef struct {
    uint8_t *p;
} Wr;
static void w8(Wr *w, unsigned v) { *w->p++ = (uint8_t)v; }
static void w16(Wr *w, unsigned v) { uint16_t x = (uint16_t)v; memcpy(w->p, &x, 2), w->p += 2; }
static void w32(Wr *w, uint32_t v) { memcpy(w->p, &v, 4), w->p += 4; }
static void w64(Wr *w, uint64_t v) { memcpy(w->p, &v, 8), w->p += 8; }

enum { ENC_OPERAND = 24, ENC_EXPR = 33 };

static void enc_operand(Wr *b, const VOperand *o) {
    if (o->sym) die("vsm_encode: an operand still relative to value %u (link first)", o->sym - 1);
    w8(b, o->kind), w8(b, o->width), w8(b, o->amode), w8(b, o->neg);
    w16(b, (uint16_t)o->stride), w32(b, o->addr);
    for (int i = 0; i < 4; i++) w16(b, o->flat[i]);
    w8(b, o->mkind), w8(b, o->mval), w16(b, (uint16_t)o->group), w16(b, (uint16_t)o->l2b);
}

void vsm_encode_begin(MNBuf *out) {
    out->len = 0;
    buf_append(out, "VSMB", 4);
    uint32_t h[2] = {VSMB_VERSION, 0};
    buf_append(out, h, sizeof h);
}

void vsm_encode_step(MNBuf *out, const VStep *s) {
    size_t most = 1 + 4 + 1 + (s->kind == ST_DEBUG ? strlen(s->text) : 0);
    for (int k = 0; s->kind == ST_STEP && k < s->nexpr; k++) most += ENC_EXPR + (size_t)(s->e[k].nsrc + s->e[k].ndst) * ENC_OPERAND;
    buf_reserve(out, most);
    Wr w = {(uint8_t *)out->data + out->len};
    w8(&w, s->kind);
    if (s->kind == ST_DEBUG) {
        uint32_t n = (uint32_t)strlen(s->text);
        w32(&w, n);
        memcpy(w.p, s->text, n), w.p += n;
    } else if (s->kind == ST_MASK) {
        w8(&w, s->mask_targets), w8(&w, s->mask_width), w8(&w, s->mask_entry);
    } else {
        w32(&w, s->repeat);
        w8(&w, s->nexpr);
        for (int k = 0; k < s->nexpr; k++) {
            const VExpr *e = &s->e[k];
            w16(&w, e->insn), w8(&w, e->prec), w8(&w, e->uns), w8(&w, e->reduce), w8(&w, e->rrn);
            w16(&w, (uint16_t)e->sel), w8(&w, e->zkind), w8(&w, e->zval), w8(&w, e->nsrc), w8(&w, e->ndst);
            w64(&w, e->imm[0]), w64(&w, e->imm[1]), w32(&w, e->size), w8(&w, e->tag);
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
static uint8_t g8(Rd *r) { uint8_t v; take(r, &v, 1); return v; }
static uint16_t g16(Rd *r) { uint16_t v; take(r, &v, 2); return v; }
static uint32_t g32(Rd *r) { uint32_t v; take(r, &v, 4); return v; }
static uint64_t g64(Rd *r) { uint64_t v; take(r, &v, 8); return v; }

static bool dec_operand(Rd *r, VOperand *o) {
    o->kind = g8(r), o->width = g8(r), o->amode = g8(r), o->neg = g8(r);
    o->stride = (int16_t)g16(r), o->addr = g32(r);
    for (int i = 0; i < 4; i++) o->flat[i] = g16(r);
    o->mkind = g8(r), o->mval = g8(r), o->group = (int16_t)g16(r), o->l2b = (int16_t)g16(r);
    if (r->bad || o->kind <= K_NONE || o->kind >= K_COUNT || !(o->width == 1 || o->width == 2 || o->width == 4) || o->amode > A_TIND ||
        o->neg > 1 || o->mkind > M_ENTRY || (o->mkind == M_ENTRY && o->mval >= 32) || (o->mkind == M_PATTERN && o->mval >= 16) ||
        o->group < -1 || o->l2b < -1)
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
    if (n > len / 8) {
        snprintf(err, errlen, "corrupt GPFNBin: %u lines in %zu bytes", n, len);
        return false;
    }
    p->cap = (int)n + 1;
    p->steps = xcalloc((size_t)p->cap, sizeof(VStep));
    for (uint32_t i = 0; i < n; i++) {
        VStep st, *s = &st;
        VExpr ex[VSM_MAX_EXPR];
        memset(s, 0, sizeof *s);
        memset(ex, 0, sizeof ex);
        s->e = ex;
        s->kind = g8(&r);
        s->line = (int)i + 1; /* the line of the canonical text (vsm_print) */
        bool ok = !r.bad;
        if (s->kind == ST_DEBUG) {
            uint32_t tl = g32(&r);
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
            s->mask_targets = g8(&r), s->mask_width = g8(&r), s->mask_entry = g8(&r);
            ok = !r.bad && s->mask_entry < 32 && s->mask_targets < 64 && (s->mask_width == 2 || s->mask_width == 4);
        } else if (s->kind == ST_STEP) {
            s->repeat = g32(&r);
            s->nexpr = g8(&r);
            ok = !r.bad && s->nexpr >= 1 && s->nexpr <= VSM_MAX_EXPR && s->repeat >= 1;
            for (int k = 0; ok && k < s->nexpr; k++) {
                VExpr *e = &s->e[k];
                e->insn = g16(&r), e->prec = g8(&r), e->uns = g8(&r), e->reduce = g8(&r), e->rrn = g8(&r);
                e->sel = (int16_t)g16(&r), e->zkind = g8(&r), e->zval = g8(&r), e->nsrc = g8(&r), e->ndst = g8(&r);
                e->imm[0] = g64(&r), e->imm[1] = g64(&r), e->size = g32(&r), e->tag = g8(&r);
                ok = !r.bad && e->insn < VI_COUNT && e->rrn < RRN_COUNT && e->nsrc <= 3 && e->ndst <= 4 &&
                     e->nsrc == vsm_insns[e->insn].nsrc && (vsm_insns[e->insn].precs & e->prec) && e->prec && !(e->prec & (e->prec - 1)) &&
                     e->zkind <= M_ENTRY && (e->zkind != M_ENTRY || e->zval < 32) && (e->zkind != M_PATTERN || e->zval < 16) &&
                     e->tag <= 0x3f && e->uns <= 1 && e->reduce <= 1 && (e->ndst >= 1 || vsm_insns[e->insn].unit == U_NOP ||
                     vsm_insns[e->insn].unit == U_WAIT || vsm_insns[e->insn].unit == U_NOFWD);
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

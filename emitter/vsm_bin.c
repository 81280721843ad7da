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

static void put(MNBuf *b, const void *p, size_t n) { buf_append(b, p, n); }
static void u8(MNBuf *b, unsigned v) { uint8_t x = (uint8_t)v; put(b, &x, 1); }
static void u16(MNBuf *b, unsigned v) { uint16_t x = (uint16_t)v; put(b, &x, 2); }
static void u32(MNBuf *b, uint32_t v) { put(b, &v, 4); }
static void u64(MNBuf *b, uint64_t v) { put(b, &v, 8); }

static void enc_operand(MNBuf *b, const VOperand *o) {
    if (o->sym) die("vsm_encode: an operand still relative to value %u (link first)", o->sym - 1);
    u8(b, o->kind), u8(b, o->width), u8(b, o->amode), u8(b, o->neg);
    u16(b, (uint16_t)o->stride), u32(b, o->addr);
    for (int i = 0; i < 4; i++) u16(b, o->flat[i]);
    u8(b, o->mkind), u8(b, o->mval), u16(b, (uint16_t)o->group), u16(b, (uint16_t)o->l2b);
}

void vsm_encode(const VProgram *p, MNBuf *out) {
    out->len = 0;
    put(out, "VSMB", 4);
    u32(out, VSMB_VERSION);
    u32(out, (uint32_t)p->nsteps);
    for (int i = 0; i < p->nsteps; i++) {
        const VStep *s = &p->steps[i];
        u8(out, s->kind);
        if (s->kind == ST_DEBUG) {
            uint32_t n = (uint32_t)strlen(s->text);
            u32(out, n);
            put(out, s->text, n);
        } else if (s->kind == ST_MASK) {
            u8(out, s->mask_targets), u8(out, s->mask_width), u8(out, s->mask_entry);
        } else {
            u32(out, s->repeat);
            u8(out, s->nexpr);
            for (int k = 0; k < s->nexpr; k++) {
                const VExpr *e = &s->e[k];
                u16(out, e->insn), u8(out, e->prec), u8(out, e->uns), u8(out, e->reduce), u8(out, e->rrn);
                u16(out, (uint16_t)e->sel), u8(out, e->zkind), u8(out, e->zval), u8(out, e->nsrc), u8(out, e->ndst);
                u64(out, e->imm[0]), u64(out, e->imm[1]), u32(out, e->size), u8(out, e->tag);
                for (int j = 0; j < e->nsrc; j++) enc_operand(out, &e->src[j]);
                for (int j = 0; j < e->ndst; j++) enc_operand(out, &e->dst[j]);
            }
        }
    }
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

/* Code Emit: transfers between DRAM and LM.
 *
 * A value's DRAM image (isa/app.h) moves through the tree chunk by chunk: DRAM ->
 * L2BM by MV, L2BM -> L1BM, L1BM -> PE for a download, the same chain of combines
 * backwards for an upload. Each transfer is pipelined over its chunks: a download
 * issues the next chunk's MV while the current chunk moves down the tree, from a second
 * L2BM buffer where the L2BM holds two; an upload waits for a chunk's MV only before its
 * buffer is written again. A value alike on every L1B and L2B is held once per group
 * (mvb2 and l2bmb broadcast it); alike on every MAB too, once for 4 PEs (l1bmm hands it
 * to every MAB).
 *
 * Time-Slice's splits and concats are transfers of a slice at its offset in the whole
 * value's image (the slices of a value cut over time lie one after another there), or a
 * DRAM-to-DRAM copy for a piece that was spilled.
 *
 * Addresses of graph values are written relative to the value ({id}), for the linker. */
#include "emit_impl.h"
#include "app.h"
#include "layout.h"
#include "ops.h"
#include <stdio.h>
#include <string.h>

/* Addresses of graph values are written relative to the value ({id}): the linker adds
 * the address the address planner gave it and records the relocation. A copy standing
 * for a node's scratch or table rows in LM is not a graph value: absolute. */
bool emit_graph_value(const Em *e, const MNValue *v) {
    return v->id >= 0 && v->id < e->c->g->nvalues && e->c->g->values[v->id] == v;
}
/* "{id}word" or "word" (the hottest formatting of Code Emit: snprintf's was a tenth of it) */
static const char *at_text(const Em *e, const MNValue *v, int64_t rel, int64_t abs, char *buf) {
    char *p = buf;
    if (emit_graph_value(e, v)) {
        *p++ = '{';
        p = buf_int(p, v->id);
        *p++ = '}';
        p = buf_int(p, rel);
    } else
        p = buf_int(p, abs);
    *p = 0;
    return buf;
}
const char *emit_at(const Em *e, const MNValue *v, int64_t lw, char *buf) {
    return at_text(e, v, 2 * lw, 2 * (v->addr + lw), buf);
}
static const char *dram_at(const Em *e, const MNValue *v, int64_t lw, char *buf) {
    return at_text(e, v, lw, v->addr + lw, buf);
}

/* The MV lines of chunk k of a download (DRAM long word base of value dv) into L2BM
 * long word off; returns their tag */
static int mv_down(Em *e, const AppLayoutImage *im, const MNValue *dv, int64_t base, int64_t ck, int64_t off) {
    const MNMachine *m = &e->c->machine;
    int64_t P = (int64_t)m->mab_per_l1b * m->pe_per_mab, J = m->l1b_per_l2b, L = m->l2b_per_group;
    int tag = e->tag = e->tag % 63 + 1; /* the tags are i01..i3f */
    char d[40];
    if (im->tree) /* one copy: into every L2BM of the group */
        buf_printf(e->b, "mvb2/n%lldi%02x $d%s $lc%lld\n", (long long)((im->mab ? 4 : P) * ck), tag,
                   dram_at(e, dv, base, d), (long long)off);
    else
        for (int64_t g = 0; g < L; g++)
            buf_printf(e->b, "mvp/n%lldi%02x $d%s $lc%lld@.%lld\n", (long long)(J * P * ck), tag,
                       dram_at(e, dv, base + g * J * P * ck, d), (long long)off, (long long)g);
    return tag;
}

/* Transfers are pipelined over their chunks: a chunk's MV is issued as soon as its L2BM
 * buffer is free, so that DRAM latency overlaps the tree moves of the chunk before it.
 * Two L2BM buffers alternate where the L2BM holds two chunks (a value replicated on
 * every L2B: one copy per L2BM), else the one buffer is refilled right after it is read.
 * An upload waits for a chunk's MV only before its buffer is written again, and for
 * the last ones at the end (so the next node finds DRAM written). */
static void transfer_at(Em *e, const MNValue *dv, int64_t doff, const MNValue *lmv, bool down);
void emit_transfer(Em *e, const MNValue *dram, const MNValue *lmv, bool down) { transfer_at(e, dram, 0, lmv, down); }

/* lmv's image from or to long word doff of DRAM value dv's (in every group) */
static void transfer_at(Em *e, const MNValue *dv, int64_t doff, const MNValue *lmv, bool down) {
    const MNMachine *m = &e->c->machine;
    AppLayoutImage im;
    MNLayout l;
    emit_image_of(e->c, lmv, &im, &l);
    int64_t P = (int64_t)m->mab_per_l1b * m->pe_per_mab, J = m->l1b_per_l2b, L = m->l2b_per_group;
    const char *r = emit_bank_reg(lmv);
    int64_t U = im.mab ? 4 : P; /* image long words per LM long word in an L1B (tree) */
    int64_t nck = (im.n4 + im.C - 1) / im.C, S = im.tree ? U * im.C : P * im.C * J; /* L2BM long words per chunk */
    bool dbl = 2 * S <= m->l2bm_lw && S % 64 == 0;
#define CK(k) (im.n4 - (k)*im.C < im.C ? im.n4 - (k)*im.C : im.C)
#define BASE(k) (doff + (k)*im.C * (im.tree ? U : P * J * L))
#define OFF(k) (dbl ? (k) % 2 * S : 0)
    if (down) {
        int tag = mv_down(e, &im, dv, BASE(0), CK(0), OFF(0));
        char a[40];
        for (int64_t k = 0; k < nck; k++) {
            int64_t ck = CK(k), off = OFF(k);
            int next = 0;
            buf_printf(e->b, "nop; wait i%02x\n", tag);
            if (dbl && k + 1 < nck) next = mv_down(e, &im, dv, BASE(k + 1), CK(k + 1), OFF(k + 1));
            if (im.tree) /* every L1BM of the L2B gets the copy */
                for (int64_t s = 0; s < U * ck / 64; s++)
                    buf_printf(e->b, "l2bmb $lc%lld $lb%lld\n", (long long)(off + 64 * s), (long long)(64 * s));
            else
                for (int64_t s = 0; s < P * ck / 32; s++)
                    buf_printf(e->b, "l2bmd $lc%lld $lb%lld\n", (long long)(off + s * 32 * J), (long long)(s * 32));
            if (!dbl && k + 1 < nck) next = mv_down(e, &im, dv, BASE(k + 1), CK(k + 1), OFF(k + 1));
            buf_printf(e->b, "nop/3\n");
            for (int64_t t = 0; t < ck / 4; t++) /* mab: every MAB takes the same 16 long words */
                buf_printf(e->b, "%s $lb%lld $%s%sv%s\n", im.mab ? "l1bmm" : "l1bmd", (long long)(t * 4 * U), r,
                           emit_at(e, lmv, k * im.C + 4 * t, a), emit_tail_mask(lmv->num_lw, k * im.C + 4 * t));
            buf_printf(e->b, "nop/3\n");
            tag = next;
        }
    } else {
        int pending[2] = {0, 0}; /* per L2BM buffer, the MV still reading it */
        char a[40], d[40];
        for (int64_t k = 0; k < nck; k++) {
            int64_t ck = CK(k), off = OFF(k);
            for (int64_t t = 0; t < ck / 4; t++) /* mab: MAB 0's copy */
                buf_printf(e->b, "%s $%s%sv $lb%lld\n", im.mab ? "l1bmm@0" : "l1bmd", r,
                           emit_at(e, lmv, k * im.C + 4 * t, a), (long long)(t * 4 * U));
            buf_printf(e->b, "nop/3\n");
            if (pending[k % 2 * dbl]) buf_printf(e->b, "nop; wait i%02x\n", pending[k % 2 * dbl]);
            if (im.tree) /* every copy alike: L1B 0 of L2B 0 writes it back */
                for (int64_t s = 0; s < U * ck / 64; s++)
                    buf_printf(e->b, "l2bm@0 $lb%lld $lc%lld\n", (long long)(64 * s), (long long)(off + 64 * s));
            else
                for (int64_t s = 0; s < P * ck / 32; s++)
                    buf_printf(e->b, "l2bmd $lb%lld $lc%lld\n", (long long)(s * 32), (long long)(off + s * 32 * J));
            buf_printf(e->b, "nop/4\n");
            int tag = e->tag = e->tag % 63 + 1;
            if (im.tree)
                buf_printf(e->b, "mvp/n%lldi%02x $lc%lld@.0 $d%s\n", (long long)(U * ck), tag, (long long)off,
                           dram_at(e, dv, BASE(k), d));
            else
                for (int64_t g = 0; g < L; g++)
                    buf_printf(e->b, "mvp/n%lldi%02x $lc%lld@.%lld $d%s\n", (long long)(J * P * ck), tag,
                               (long long)off, (long long)g, dram_at(e, dv, BASE(k) + g * J * P * ck, d));
            pending[k % 2 * dbl] = tag;
        }
        for (int64_t k = nck; k < nck + 2; k++) /* the last chunks' MVs, oldest first */
            if (pending[k % 2 * dbl])
                buf_printf(e->b, "nop; wait i%02x\n", pending[k % 2 * dbl]), pending[k % 2 * dbl] = 0;
    }
#undef CK
#undef BASE
#undef OFF
}

/* A streamed range moves in chunks of at most emit_stream_chunk long words, each through
 * one of two L2BM buffers: a chunk's MV into one (emit_stream_issue) may be in flight
 * while the other's chunk moves down the tree (emit_stream_land), or while the PEs
 * compute on what came before. */
int64_t emit_stream_chunk(const MNMachine *m) {
    /* LM long words: 4 C image long words, two of them in L2BM, one in L1BM */
    return (m->l2bm_lw / 8 < m->l1bm_lw / 4 ? m->l2bm_lw / 8 : m->l1bm_lw / 4) / 16 * 16;
}

int emit_stream_issue(Em *e, const MNValue *dv, int64_t lw0, int64_t n, int buf, int64_t delta) {
    const MNMachine *m = &e->c->machine;
    if (n % 16 || lw0 % 16 || n > emit_stream_chunk(m))
        die("a streamed chunk of %lld long words at %lld", (long long)n, (long long)lw0);
    char d[40];
    int64_t off = buf * 4 * emit_stream_chunk(m);
    int tag = e->tag = e->tag % 63 + 1, first = tag;
    if (!delta) {
        buf_printf(e->b, "mvb2/n%lldi%02x $d%s $lc%lld\n", (long long)(4 * n), tag, dram_at(e, dv, 4 * lw0, d),
                   (long long)off);
        return tag;
    }
    for (int64_t l = 0, L = m->l2b_per_group; l < m->n_l2b; l++) { /* each L2B its own columns, from its group's DRAM */
        if (l) tag = e->tag = e->tag % 63 + 1;
        buf_printf(e->b, "mvp/n%lldi%02x $d%s@%lld $lc%lld@%lld.%lld\n", (long long)(4 * n), tag,
                   dram_at(e, dv, 4 * (lw0 + l * delta), d), (long long)(l / L), (long long)off, (long long)(l / L),
                   (long long)(l % L));
    }
    return first;
}

void emit_stream_land(Em *e, int tag, int64_t n, int buf, int64_t at, int64_t delta) {
    int64_t off = buf * 4 * emit_stream_chunk(&e->c->machine);
    for (int64_t l = 0; l < (delta ? e->c->machine.n_l2b : 1); l++, tag = tag % 63 + 1)
        buf_printf(e->b, "nop; wait i%02x\n", tag);
    for (int64_t s = 0; s < 4 * n / 64; s++) {
        char *o = buf_int(buf_put(buf_line(e->b, 64), "l2bmb $lc"), off + 64 * s);
        o = buf_int(buf_put(o, " $lb"), 64 * s);
        *o++ = '\n';
        buf_line_end(e->b, o);
    }
    buf_printf(e->b, "nop/3\n");
    /* every MAB takes the same 32 long words a step, 2 a PE and cycle ($llb; 16 with $lb where
     * at is odd: a two-long-word access is aligned) */
    bool two = at % 2 == 0 && n % 8 == 0;
    for (int64_t t = 0; t < n / (two ? 8 : 4); t++) {
        char *o = buf_int(buf_put(buf_line(e->b, 64), two ? "l1bmm $llb" : "l1bmm $lb"), (two ? 32 : 16) * t);
        o = buf_put(buf_int(buf_put(o, two ? " $llm" : " $lm"), 2 * (at + (two ? 8 : 4) * t)), "v\n");
        buf_line_end(e->b, o);
    }
    buf_printf(e->b, "nop/3\n");
}

void emit_stream_in(Em *e, const MNValue *dv, int64_t lw0, int64_t n, int64_t at, int64_t delta) {
    int64_t C = emit_stream_chunk(&e->c->machine), nck = (n + C - 1) / C;
    if (C < 16) die("a machine whose L2BM and L1BM take no streamed chunk");
    int tag[2] = {0, 0};
    for (int64_t k = 0; k <= nck; k++) { /* chunk k's MV, then chunk k - 1 down the tree */
        if (k < nck)
            tag[k % 2] = emit_stream_issue(e, dv, lw0 + k * C, n - k * C < C ? n - k * C : C, (int)(k % 2), delta);
        if (k > 0)
            emit_stream_land(e, tag[(k - 1) % 2], n - (k - 1) * C < C ? n - (k - 1) * C : C, (int)((k - 1) % 2),
                             at + (k - 1) * C, delta);
    }
}

/* ---- Time-Slice pieces: splits and concats ---- */

/* Where piece p (cut from or into whole w along axis ax at start) sits in w's DRAM
 * image: its own image must be one run of w's, at *delta long words, for every group
 * and slot alike (a slice over time is; a window at a start that does not fall on a long
 * word of every PE is not). */
static bool piece_delta(const MNCompile *c, const MNValue *w, const MNValue *p, int ax, int64_t start, int64_t *delta) {
    MNLayout lw, lp;
    AppLayoutImage iw, ip;
    char err[300];
    if (w->dtype != p->dtype || !layout_get(w, &lw) || !layout_get(p, &lp) ||
        !app_layout_image(&lw, &c->machine, &iw, err, sizeof err) ||
        !app_layout_image(&lp, &c->machine, &ip, err, sizeof err) || ip.slices != 1 ||
        lw.bcast !=
            lp.bcast) /* the places checked are the copies at broadcast coordinate 0: the same levels replicated */
        return false;
    int64_t ne = ir_shape_numel(&p->type), idx[LAYOUT_MAX_RANK], widx[LAYOUT_MAX_RANK];
    bool have = false;
    for (int64_t i = 0; i < ne; i++) {
        int64_t q = i;
        for (int d = p->type.rank - 1; d >= 0; d--) idx[d] = q % p->type.dims[d], q /= p->type.dims[d];
        memcpy(widx, idx, sizeof idx);
        widx[ax] += start;
        MNPlace a, b;
        layout_place(&lp, idx, &a);
        layout_place(&lw, widx, &b);
        if (a.c[LV_W] != b.c[LV_W]) return false;
        if (ip.tree) a.c[LV_L2B] *= c->machine.l2b_per_group;
        if (iw.tree) b.c[LV_L2B] *= c->machine.l2b_per_group;
        int ga, gb;
        int64_t oa = app_image_offset(&ip, &c->machine, a.c, &ga), ob = app_image_offset(&iw, &c->machine, b.c, &gb);
        if (ga != gb || (have && ob - oa != *delta)) return false;
        *delta = ob - oa, have = true;
    }
    return have && *delta >= 0 && *delta + ip.per_group <= iw.per_group;
}

static int64_t image_lw(const MNCompile *c, const MNValue *v) {
    char err[300];
    return (int64_t)app_layout_image_lw(v->layout, &c->machine, err, sizeof err);
}

const char *emit_piece_why(const MNCompile *c, const MNNode *n) {
    bool split = n->op == OP_MNCoreInputSplit;
    const MNValue *w = split ? n->in[0] : n->out[0];
    int ax = (int)ir_attr_int(n, "axis", 0);
    const MNAttr *st = ir_attr(n, "starts");
    if (emit_in_lm(w) || w->loc == MN_LOC_IMM || w->loc == MN_LOC_UNKNOWN) return "a whole value not in DRAM";
    int64_t at = 0, prev_end = 0;
    for (int k = 0; k < (split ? n->nout : n->nin); k++) {
        const MNValue *p = split ? n->out[k] : n->in[k];
        int64_t start = st && st->type == MN_ATTR_INTS && k < st->n ? st->ints[k] : at, delta;
        at += p->type.dims[ax];
        if (split && !emit_in_lm(p)) return "a piece not in LM";
        if (!piece_delta(c, w, p, ax, start, &delta)) return "a piece that is not one run of the whole's DRAM image";
        if (!split && delta < prev_end) return "pieces whose images overlap";
        prev_end = delta + image_lw(c, p);
    }
    return NULL;
}

/* n LW from DRAM value src's image to long word at of value dst's, in every group,
 * through L2BM (chunks as large as it holds) */
static void dram_copy(Em *e, const MNValue *src, const MNValue *dst, int64_t at, int64_t n) {
    char d[40];
    int64_t cap = e->c->machine.l2bm_lw / 64 * 64;
    for (int64_t o = 0; o < n; o += cap) {
        int64_t k = n - o < cap ? n - o : cap;
        if (k % 64) die("DRAM copy of %lld long words: images are multiples of 64", (long long)k);
        int t1 = e->tag = e->tag % 63 + 1;
        buf_printf(e->b, "mvp/n%lldi%02x $d%s $lc0@.0\nnop; wait i%02x\n", (long long)k, t1, dram_at(e, src, o, d), t1);
        int t2 = e->tag = e->tag % 63 + 1;
        buf_printf(e->b, "mvp/n%lldi%02x $lc0@.0 $d%s\nnop; wait i%02x\n", (long long)k, t2, dram_at(e, dst, at + o, d),
                   t2);
    }
}

void emit_pieces(Em *e, const MNNode *n) {
    bool split = n->op == OP_MNCoreInputSplit;
    const MNValue *w = split ? n->in[0] : n->out[0];
    int ax = (int)ir_attr_int(n, "axis", 0);
    const MNAttr *st = ir_attr(n, "starts");
    int64_t at = 0;
    for (int k = 0; k < (split ? n->nout : n->nin); k++) {
        const MNValue *p = split ? n->out[k] : n->in[k];
        int64_t start = st && st->type == MN_ATTR_INTS && k < st->n ? st->ints[k] : at, delta = 0;
        at += p->type.dims[ax];
        if (!piece_delta(e->c, w, p, ax, start, &delta))
            die("piece '%s' of '%s' moved without its place", p->name, w->name);
        if (emit_in_lm(p))
            transfer_at(e, w, delta, p, split);
        else
            dram_copy(e, p, w, delta, image_lw(e->c, p));
    }
}

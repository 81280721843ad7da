/* Code Emit: Cast between float widths (double, float, half) on the vector unit, and the
 * integer casts of int_cast below.
 *
 * A long word holds 1 double, 2 floats or 4 halves (lanes, the first the most significant),
 * and a layout packs a row's elements over the lanes of the long words of each PE. The
 * vector unit converts lanes in order: `fvpassar` and `dvpassar` round a value one
 * precision down and pack the results into the leading words (an `ll` access, two long
 * words, gives 4 floats or 2 doubles: one long word of results), and `hvpassa` widens the
 * 4 halves of a long word into 4 floats (two long words). So an element keeps its PE and
 * its lane index within a group of long words: output long word a of a narrowing cast is
 * made from input long words x, x + 1 (its lane s from long word x + s / Lin, lane
 * s % Lin); input long word x of a widening one makes output long words y, y + 1. Both
 * layouts are walked to find x (or y) for every long word, and the cast is refused where
 * an element sits elsewhere (another PE, lane or pairing). Double to half rounds twice,
 * through float in GRF0 (4 doubles, two conversions, then one): a tie at half precision
 * can then round otherwise than a direct conversion would. The machine's half is MN-Core's
 * (6 exponent bits, 9 mantissa bits, no subnormals), which ONNX's float16 maps to: a cast
 * to it keeps 9 of IEEE half's 10 mantissa bits. Float (or half) to double has
 * no instruction: the public ISA's precision changes round down, and no widening to
 * double is described. Where four consecutive long words convert alike (the usual case,
 * canonical layouts of one row), one step does all four (`v` operands); others take a
 * step each. Cost: a step per 4 output long words (narrowing) or per 4 input long words
 * (widening). */
#include "emit_impl.h"
#include "layout.h"
#include "ops.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_float(MNDtype d) { return d == MN_DT_Double || d == MN_DT_Float || d == MN_DT_Half; }
static bool is_long(MNDtype d) { return d == MN_DT_Long || d == MN_DT_ULong || d == MN_DT_LongBool; }
static bool is_int(MNDtype d) { return d == MN_DT_Int || d == MN_DT_UInt; }
static bool is_unsigned(MNDtype d) { return d == MN_DT_ULong || d == MN_DT_UInt || d == MN_DT_LongBool; }

static int lanes(MNDtype d) {
    return d == MN_DT_Double || is_long(d) ? 1 : d == MN_DT_Float || is_int(d) ? 2 : d == MN_DT_Half ? 4 : 0;
}

/* the integer casts with code (int_cast): 64-bit integers or bools to float, 32-bit
 * integers to and from float, between 64- and 32-bit integers, float to 64-bit integers,
 * 64-bit integers to and from bools */
static bool int_pair(MNDtype a, MNDtype b) {
    return (is_long(a) && (b == MN_DT_Float || is_int(b) || is_long(b))) ||
           (is_int(a) && (b == MN_DT_Float || is_long(b))) ||
           (a == MN_DT_Float && (is_int(b) || (is_long(b) && b != MN_DT_LongBool)));
}

bool emit_cast_node(const MNNode *n) {
    if ((n->op != OP_Cast && n->op != OP_CastLike && n->op != OP_MNCoreCast) || n->nin < 1 || n->nout != 1 ||
        !n->in[0] || !n->out[0])
        return false;
    MNDtype a = n->in[0]->dtype, b = n->out[0]->dtype;
    return a != b && lanes(a) && lanes(b) && ((is_float(a) && is_float(b)) || int_pair(a, b));
}

typedef struct {
    bool narrow; /* else widening (half to float) */
    int r; /* lanes out / lanes in (narrowing), in / out (widening): 2, or 4 (double to half) */
    int64_t n; /* units: output long words (narrowing), input long words (widening) */
    int64_t *at; /* per unit: the first input (narrowing) or output (widening) long word, -1 none */
    int *span; /* per unit: long words it takes on the other side (1 .. r) */
} CastPlan;

static void plan_free(CastPlan *p) { free(p->at), free(p->span); }

static const char *plan_cast(const MNValue *x, const MNValue *y, CastPlan *p) {
    MNLayout lx, ly;
    memset(p, 0, sizeof *p);
    if (!layout_get(x, &lx) || !layout_get(y, &ly) || layout_timed(x) || layout_timed(y)) return "no layout";
    int li = lanes(x->dtype), lo = lanes(y->dtype);
    p->narrow = lo > li;
    p->r = p->narrow ? lo / li : li / lo;
    if (!p->narrow && y->dtype == MN_DT_Double && li != lo)
        return "a widening to double (no instruction converts to it)";
    p->n = p->narrow ? y->num_lw : x->num_lw;
    p->at = xmalloc(sizeof(int64_t) * (size_t)(p->n + 1));
    p->span = xcalloc((size_t)p->n + 1, sizeof(int));
    for (int64_t i = 0; i < p->n; i++) p->at[i] = -1;
    MNPlaceWalk wx, wy;
    place_walk_start(&wx, &lx);
    place_walk_start(&wy, &ly);
    int64_t ne = ir_shape_numel(&x->type);
    const MNLevel same[4] = {LV_PE, LV_MAB, LV_L1B, LV_L2B};
    for (int64_t e = 0; e < ne; e++, place_walk_next(&wx), place_walk_next(&wy)) {
        const MNPlace *pi = &wx.p, *po = &wy.p;
        for (int k = 0; k < 4; k++)
            if (pi->c[same[k]] != po->c[same[k]]) return "an element that changes its PE, MAB, L1B or L2B";
        /* the unit's long word on this side, the other side's first, and the lane there */
        int64_t unit = p->narrow ? po->c[LV_ADDR] : pi->c[LV_ADDR], lane = p->narrow ? po->c[LV_W] : pi->c[LV_W];
        int64_t other = p->narrow ? pi->c[LV_ADDR] : po->c[LV_ADDR], olane = p->narrow ? pi->c[LV_W] : po->c[LV_W];
        int per = p->narrow ? li : lo; /* lanes a long word of the other side holds */
        if (olane != lane % per || unit < 0 || unit >= p->n) return "an element in another lane";
        int64_t first = other - lane / per;
        if (p->at[unit] >= 0 && p->at[unit] != first) return "long words that do not pair up";
        p->at[unit] = first;
        if (p->span[unit] < lane / per + 1) p->span[unit] = (int)(lane / per + 1);
    }
    for (int64_t i = 0; i < p->n; i++) /* an access of two long words starts at an even one */
        if (p->at[i] >= 0 && p->span[i] > 1 && (p->at[i] + (p->narrow ? x->addr : y->addr)) % 2)
            return "a pair of long words at an odd address";
    return NULL;
}

const char *emit_cast_why(const MNCompile *c, const MNNode *n, Walk *w) {
    (void)c, (void)w;
    if (!emit_in_lm(n->in[0]) || !emit_in_lm(n->out[0])) return "not in LM";
    CastPlan p;
    const char *why = plan_cast(n->in[0], n->out[0], &p);
    plan_free(&p);
    return why;
}

/* operand text: v's long word lw, an access of w long words (1 or 2), v: per cycle */
static const char *opnd(const Em *e, const MNValue *v, int64_t lw, int w, bool vec, char *buf) {
    char a[40];
    snprintf(buf, 80, "$%s%s%s%s", w == 2 ? "l" : "", emit_bank_reg(v), emit_at(e, v, lw, a), vec ? "v" : "");
    return buf;
}

/* units u .. u + 3 convert alike: each takes the same span, the other side's long words
 * one access apart */
static bool alike4(const CastPlan *p, int64_t u) {
    if (u + 4 > p->n) return false;
    for (int k = 0; k < 4; k++)
        if (p->at[u + k] < 0 || p->span[u + k] != p->span[u] || p->at[u + k] != p->at[u] + k * p->span[u]) return false;
    return true;
}

/* An integer cast, a unit (an output long word narrowing, an input one otherwise) at a
 * time through GRF0 (GRF1 long words 0 and 1: 32 and the low word's mask, 2 a masked word):
 *   64-bit to float     itof to doubles (two long words), dvpassar packs them as floats;
 *   64-bit to 32-bit    the first's low word shifted up, or'ed with the second's;
 *   32-bit to 64-bit    each word shifted down arithmetically (logically unsigned) from its
 *                       place, the low one shifted up first; float first truncated (ftoi);
 *   32-bit to and from float, 64-bit to bool (x != 0: two logical nots) and back, in place. */
static void int_cast(Em *e, const MNValue *x, const MNValue *y, const CastPlan *p) {
    MNDtype a = x->dtype, b = y->dtype;
    const char *u = is_unsigned(a) ? "u" : "";
    char A[80], B[80];
    buf_printf(e->b, "imm l\"32\" $ls0\nimm l\"4294967295\" $ls2\nnop\n");
    for (int64_t k = 0; k < p->n; k++) {
        if (p->at[k] < 0) continue;
        if (p->narrow && b == MN_DT_Float) { /* 64-bit integers to floats */
            buf_printf(e->b, "%sditof %s $llr0\nnop\n", u, opnd(e, x, p->at[k], p->span[k], false, A));
            buf_printf(e->b, "dvpassar $llr0 $lr4\n");
        } else if (p->narrow) { /* 64-bit to 32-bit */
            buf_printf(e->b, "llsl %s $ls0 $lr4\n", opnd(e, x, p->at[k], 1, false, A));
            if (p->span[k] > 1)
                buf_printf(e->b, "land %s $ls2 $ls4\nnop\nlor $lr4 $ls4 $lr4\n", opnd(e, x, p->at[k] + 1, 1, false, A));
        } else if (p->r == 2) { /* 32-bit (or float) to 64-bit: lane 0 to at[k], lane 1 to at[k] + 1 */
            if (a == MN_DT_Float)
                buf_printf(e->b, "%sftoi %s $lr0\nnop\n", is_unsigned(b) ? "uf" : "f", opnd(e, x, k, 1, false, A));
            else
                buf_printf(e->b, "lpassa %s $lr0\nnop\n", opnd(e, x, k, 1, false, A));
            const char *sr = is_unsigned(a) ? "ullsr" : "llsr";
            buf_printf(e->b, "%s $lr0 $ls0 $lr4\nllsl $lr0 $ls0 $lr6\nnop\n", sr);
            buf_printf(e->b, "lpassa $lr4 %s\n", opnd(e, y, p->at[k], 1, false, B));
            if (p->span[k] > 1)
                buf_printf(e->b, "%s $lr6 $ls0 $lr6\nnop\nlpassa $lr6 %s\n", sr, opnd(e, y, p->at[k] + 1, 1, false, B));
            buf_printf(e->b, "nop/2\n");
            continue;
        } else { /* in place: 32-bit and float, 64-bit and bool */
            const char *X = opnd(e, x, k, 1, false, A);
            if (b == MN_DT_Float)
                buf_printf(e->b, "%sfitof %s $lr4\n", u, X);
            else if (a == MN_DT_Float)
                buf_printf(e->b, "%sftoi %s $lr4\n", is_unsigned(b) ? "uf" : "f", X);
            else if (b == MN_DT_LongBool)
                buf_printf(e->b, "llnot %s $lr4\nnop\nllnot $lr4 $lr4\n", X);
            else
                buf_printf(e->b, "lpassa %s $lr4\n", X);
        }
        buf_printf(e->b, "nop\nlpassa $lr4 %s\nnop/2\n", opnd(e, y, p->narrow ? k : p->at[k], 1, false, B));
    }
    buf_printf(e->b, "nop/2\n");
}

void emit_cast(Em *e, const MNNode *n) {
    const MNValue *x = n->in[0], *y = n->out[0];
    CastPlan p;
    if (plan_cast(x, y, &p)) die("node '%s': a cast that was accepted has no plan", n->name);
    if (!is_float(x->dtype) || !is_float(y->dtype)) {
        int_cast(e, x, y, &p);
        plan_free(&p);
        return;
    }
    char A[80], B[80], C[80];
    const char *op = x->dtype == MN_DT_Double ? "dvpassar" : x->dtype == MN_DT_Float ? "fvpassar" : "hvpassa";
    bool same_bank = x->loc == y->loc;
    for (int64_t u = 0; u < p.n;) {
        if (p.at[u] < 0) { /* no element: padding */
            u++;
            continue;
        }
        if (p.narrow && p.r == 4) { /* double to half: 4 doubles to 4 floats in GRF0, then to halves */
            int s = p.span[u];
            buf_printf(e->b, "dvpassar %s $lr0\n", opnd(e, x, p.at[u], s > 1 ? 2 : 1, false, A));
            if (s > 2) buf_printf(e->b, "dvpassar %s $lr2\n", opnd(e, x, p.at[u] + 2, s > 3 ? 2 : 1, false, A));
            buf_printf(e->b, "nop\nfvpassar $llr0 %s/1000\n", opnd(e, y, u, 1, false, B));
            u++;
            continue;
        }
        bool four = alike4(&p, u);
        int s = p.span[u], ws = p.narrow ? 1 : s; /* long words written per access */
        const char *src = p.narrow ? opnd(e, x, p.at[u], s, four, A) : opnd(e, x, u, 1, four, A);
        const char *dst = p.narrow ? opnd(e, y, u, 1, four, B) : opnd(e, y, p.at[u], s, four, B);
        if (same_bank) { /* one bank is not read and written at two addresses in a step: through GRF0 */
            snprintf(C, sizeof C, "$%slr128%s", ws == 2 ? "l" : "", four ? "v" : "");
            buf_printf(e->b, "%s %s %s\nnop\nlpassa %s %s%s\n", op, src, C, C, dst, four ? "" : "/1000");
        } else
            buf_printf(e->b, "%s %s %s%s\n", op, src, dst, four ? "" : "/1000");
        u += four ? 4 : 1;
    }
    buf_printf(e->b, "nop/2\n");
    plan_free(&p);
}

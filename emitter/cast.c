/* Code Emit: Cast between float widths (double, float, half) on the vector unit.
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

static int lanes(MNDtype d) { return d == MN_DT_Double ? 1 : d == MN_DT_Float ? 2 : d == MN_DT_Half ? 4 : 0; }

bool emit_cast_node(const MNNode *n) {
    if ((n->op != OP_Cast && n->op != OP_CastLike && n->op != OP_MNCoreCast) || n->nin < 1 || n->nout != 1 ||
        !n->in[0] || !n->out[0])
        return false;
    MNDtype a = n->in[0]->dtype, b = n->out[0]->dtype;
    return a != b && lanes(a) && lanes(b);
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
    if (!p->narrow && y->dtype == MN_DT_Double) return "a widening to double (no instruction converts to it)";
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

void emit_cast(Em *e, const MNNode *n) {
    const MNValue *x = n->in[0], *y = n->out[0];
    CastPlan p;
    if (plan_cast(x, y, &p)) die("node '%s': a cast that was accepted has no plan", n->name);
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

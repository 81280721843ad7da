/* Code Emit: a reduction (ReduceSum, ReduceMean, ReduceMax, ReduceMin of floats) over axes
 * spread over the tree (a sequence's tokens over the MABs, L1Bs and L2Bs: mean pooling),
 * its output alike on the levels they lay on (planners/layout_plan.c, reduced_layout).
 *
 *   fold     every PE folds the input long words of each output long word that lie on it
 *            (the reduced axes' address digits), 4 output long words a step (lists of
 *            addresses), into GRF0 from the fold's identity; where some PEs hold padding at
 *            an address (197 tokens over 256 places) the step is masked to the PEs whose
 *            place along the reduced tree digits is below the address's count of tokens;
 *   tree     over the MABs (l1bmr<op>: the L1BM gets one MAB-sized block per 4 long words),
 *            over the L1Bs (l2bmr<op>), over the L2Bs (mvr<op> into the PDM, mvb back to
 *            every L2BM); where the MABs are kept, their long words go up whole (l1bmd);
 *            where the L1Bs are kept, they lie side by side in the L2BM (l2bmd);
 *   down     back to every L1B (l2bmb) and MAB (l1bmm, or l1bmd where the MABs are kept);
 *   scale    a mean's 1 / count on the way into the output.
 *
 * The output's long words pass in chunks that fit the L1BM and the L2BM. Cost: two steps an
 * input long word a PE holds (about seven with a mask: the limits set per cycle), and a few
 * steps per 4 output long words a level of the tree, plus the PDM's transfers when the L2Bs
 * take part. */
#include "emit_impl.h"
#include "infer.h"
#include "ops.h"
#include "memo.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const MNValue *x, *y;
    int64_t ny, *lim; /* ny output LW; lim[xa]: PEs whose reduced place is below it hold data (-1: all) */
    int64_t *off, *cnt, *list; /* per output LW: its input LWs list[off .. off + cnt) */
    int64_t count; /* the elements folded into each output element (a mean's divisor) */
    unsigned R; /* the tree levels reduced */
    int64_t wt[LV_COUNT]; /* a PE's reduced place: the sum of its level coordinates times these */
    int64_t ext; /* places along the reduced levels */
} Red;

static void red_free(Red *r) {
    free(r->lim), free(r->off), free(r->cnt), free(r->list);
    memset(r, 0, sizeof *r);
}

/* the levels other than addresses that n's reduced axes lie on in its input (0: none, or n
 * is no float reduction with layouts); the reduced axes into red */
static unsigned folded(const MNCompile *c, const MNNode *n, bool *red) {
    if ((n->op != OP_ReduceSum && n->op != OP_ReduceMean && n->op != OP_ReduceMax && n->op != OP_ReduceMin) ||
        n->nout != 1 || !n->out[0] || !n->out[0]->lay || !n->in[0] || !n->in[0]->lay ||
        n->in[0]->type.rank > MN_MAX_RANK || !infer_reduce_mask(c->g, (MNNode *)n, red))
        return 0;
    const MNLayout *lx = n->in[0]->lay;
    unsigned R = 0;
    for (int d = 0; d < lx->rank; d++)
        for (int k = 0; red[d] && k < lx->nsub[d]; k++)
            if (lx->sub[d][k].size > 1 && lx->sub[d][k].level != LV_ADDR) R |= 1u << lx->sub[d][k].level;
    return R;
}

static const unsigned TREE = 1u << LV_MAB | 1u << LV_L1B | 1u << LV_L2B;

bool emit_treereduce_node(const MNCompile *c, const MNNode *n) {
    bool red[MN_MAX_RANK];
    unsigned R = folded(c, n, red);
    return (R & TREE) && (n->out[0]->lay->bcast & R) == R;
}

static bool plan_walk(const MNCompile *c, const MNNode *n, Red *r) {
    const MNMachine *m = &c->machine;
    memset(r, 0, sizeof *r);
    const MNValue *x = n->in[0], *y = n->out[0];
    MNLayout lx, ly;
    bool red[MN_MAX_RANK];
    r->R = folded(c, n, red);
    if (!r->R || !emit_in_lm(x) || !emit_in_lm(y) || x->dtype != MN_DT_Float || y->dtype != MN_DT_Float ||
        !layout_get(x, &lx) || !layout_get(y, &ly) || layout_timed(x) || layout_timed(y))
        return false;
    int rx = x->type.rank;
    r->x = x, r->y = y, r->ny = y->num_lw, r->count = 1;
    for (int d = 0; d < rx; d++)
        if (red[d]) r->count *= x->type.dims[d];
    if (!(r->R & TREE) || (r->R & ~TREE) || (ly.bcast & r->R) != r->R || (lx.bcast & r->R) || !r->count) return false;
    r->wt[LV_MAB] = (r->R >> LV_MAB & 1) ? 1 : 0;
    r->wt[LV_L1B] = (r->R >> LV_L1B & 1) ? m->mab_per_l1b * r->wt[LV_MAB] + !r->wt[LV_MAB] : 0;
    int64_t per_l2b = (r->wt[LV_L1B] ? r->wt[LV_L1B] * m->l1b_per_l2b : m->mab_per_l1b);
    r->wt[LV_L2B] = (r->R >> LV_L2B & 1) ? per_l2b : 0;
    r->ext = r->wt[LV_L2B] ? per_l2b * m->n_l2b : per_l2b;
    int64_t nx = x->num_lw, ext = r->ext;
    int64_t *ya = xmalloc(sizeof(int64_t) * (size_t)(nx + 1)); /* the output LW of input LW xa, -1 */
    uint8_t *valid = xcalloc((size_t)(nx * ext + 1), 1); /* [xa * ext + place]: a real element there */
    for (int64_t i = 0; i < nx; i++) ya[i] = -1;
    int64_t ne = ir_shape_numel(&x->type);
    bool keep = ir_attr_int(n, "keepdims", 1), ok = true;
    /* the output place of x's index: the sum over x's axes of what each adds in y (a place
     * is the sum of its axes' parts), a reduced axis nothing; x's places by an odometer */
    int64_t *ypart[MN_MAX_RANK] = {0}, idx[LAYOUT_MAX_RANK] = {0};
    for (int d = 0, o = 0; d < rx; d++) {
        ok &= lx.shape[d] == x->type.dims[d];
        ypart[d] = xcalloc((size_t)x->type.dims[d] + 1, sizeof(int64_t) * LV_COUNT);
        if (red[d] && !keep) continue;
        for (int64_t k = 0; !red[d] && k < x->type.dims[d]; k++) {
            MNPlace q;
            idx[o] = k;
            layout_place(&ly, idx, &q);
            memcpy(&ypart[d][k * LV_COUNT], q.c, sizeof q.c);
        }
        idx[o++] = 0;
    }
    MNPlaceWalk wx;
    place_walk_start(&wx, &lx);
    for (int64_t e = 0; e < ne && ok; e++, place_walk_next(&wx)) {
        MNPlace px = wx.p, py = {{0}};
        for (int d = 0; d < rx; d++)
            for (int lv = 0; lv < LV_COUNT; lv++) py.c[lv] += ypart[d][wx.idx[d] * LV_COUNT + lv];
        int64_t place = 0;
        for (int lv = LV_MAB; lv <= LV_L2B; lv++) {
            if (r->R >> lv & 1)
                place += px.c[lv] * r->wt[lv];
            else if (px.c[lv] != py.c[lv])
                ok = false; /* a kept level that changes */
        }
        int64_t a = px.c[LV_ADDR];
        if (px.c[LV_PE] != py.c[LV_PE] || px.c[LV_W] != py.c[LV_W] || a < 0 || a >= nx || place >= ext ||
            (ya[a] >= 0 && ya[a] != py.c[LV_ADDR]))
            ok = false;
        if (!ok) break;
        ya[a] = py.c[LV_ADDR];
        valid[a * ext + place] = 1;
    }
    for (int d = 0; d < rx; d++) free(ypart[d]);
    if (ok) { /* each output LW's inputs, and each input LW's places: all, or a prefix */
        r->lim = xmalloc(sizeof(int64_t) * (size_t)(nx + 1));
        r->off = xcalloc((size_t)r->ny + 1, sizeof(int64_t));
        r->cnt = xcalloc((size_t)r->ny + 1, sizeof(int64_t));
        r->list = xmalloc(sizeof(int64_t) * (size_t)(nx + 1));
        for (int64_t a = 0; a < nx && ok; a++) {
            if (ya[a] < 0) continue;
            if (ya[a] >= r->ny) ok = false;
            int64_t k = 0;
            while (k < ext && valid[a * ext + k]) k++;
            for (int64_t j = k; j < ext && ok; j++)
                if (valid[a * ext + j]) ok = false; /* (not a prefix) */
            r->lim[a] = k == ext ? -1 : k;
        }
        for (int64_t a = 0; a < nx && ok; a++)
            if (ya[a] >= 0) r->cnt[ya[a]]++;
        for (int64_t i = 1; i <= r->ny && ok; i++) r->off[i] = r->off[i - 1] + r->cnt[i - 1];
        for (int64_t i = 0; i < r->ny; i++) r->cnt[i] = 0;
        for (int64_t a = 0; a < nx && ok; a++)
            if (ya[a] >= 0) r->list[r->off[ya[a]] + r->cnt[ya[a]]++] = a;
    }
    free(ya), free(valid);
    if (!ok) red_free(r);
    return ok;
}

/* what a memo keeps of a plan: the figures, then lim and list (nx each), off and cnt (ny + 1 each) */
typedef struct {
    bool ok;
    unsigned R;
    int64_t ny, nx, count, ext, wt[LV_COUNT];
} RedHead;

/* plan_walk's result, walked once for alike nodes (an LSTM's steps): by the layouts of x and
 * y and the axes reduced */
static bool plan(const MNCompile *c, const MNNode *n, Red *r) {
    EmMemo *mm = c->check_memo;
    bool red[MN_MAX_RANK];
    if (!mm || !n->nin || !n->nout || !n->in[0] || !n->out[0] || n->in[0]->type.rank > MN_MAX_RANK ||
        !infer_reduce_mask(c->g, (MNNode *)n, red))
        return plan_walk(c, n, r);
    MNBuf k = {0};
    buf_printf(&k, "treereduce|%d|", n->op);
    for (int d = 0; d < n->in[0]->type.rank; d++) buf_printf(&k, "%d", red[d]);
    emit_value_key(&k, n->in[0]);
    emit_value_key(&k, n->out[0]);
    size_t len;
    const char *got = memo_get(mm, k.data, &len);
    if (got) {
        buf_free(&k);
        RedHead h;
        memcpy(&h, got, sizeof h);
        memset(r, 0, sizeof *r);
        if (!h.ok) return false;
        size_t nx = (size_t)h.nx + 1, ny = (size_t)h.ny + 1;
        if (len != sizeof h + sizeof(int64_t) * (2 * nx + 2 * ny)) die("reduction plan memo of %zu bytes", len);
        r->x = n->in[0], r->y = n->out[0], r->ny = h.ny, r->count = h.count, r->R = h.R, r->ext = h.ext;
        memcpy(r->wt, h.wt, sizeof h.wt);
        const int64_t *q = (const int64_t *)(got + sizeof h);
        int64_t **dst[4] = {&r->lim, &r->list, &r->off, &r->cnt};
        size_t cnt[4] = {nx, nx, ny, ny};
        for (int i = 0; i < 4; i++) {
            *dst[i] = xmalloc(sizeof(int64_t) * cnt[i]);
            memcpy(*dst[i], q, sizeof(int64_t) * cnt[i]);
            q += cnt[i];
        }
        return true;
    }
    RedHead h = {.ok = plan_walk(c, n, r)};
    size_t n4 = 0;
    if (h.ok) {
        h.R = r->R, h.ny = r->ny, h.nx = r->x->num_lw, h.count = r->count, h.ext = r->ext;
        memcpy(h.wt, r->wt, sizeof h.wt);
        n4 = 2 * (size_t)(h.nx + 1) + 2 * (size_t)(h.ny + 1);
    }
    char *val = xmalloc(sizeof h + sizeof(int64_t) * n4);
    memcpy(val, &h, sizeof h);
    if (h.ok) {
        int64_t *q = (int64_t *)(val + sizeof h);
        const int64_t *src[4] = {r->lim, r->list, r->off, r->cnt};
        size_t cnt[4] = {(size_t)h.nx + 1, (size_t)h.nx + 1, (size_t)h.ny + 1, (size_t)h.ny + 1};
        for (int i = 0; i < 4; i++) {
            memcpy(q, src[i], sizeof(int64_t) * cnt[i]);
            q += cnt[i];
        }
    }
    memo_put(mm, k.data, val, sizeof h + sizeof(int64_t) * n4);
    free(val);
    buf_free(&k);
    return h.ok;
}

const char *emit_treereduce_why(const MNCompile *c, const MNNode *n, Walk *w) {
    Red r;
    if (!plan(c, n, &r)) return "a reduction over the tree whose elements do not line up";
    int64_t need = (r.ny + 3) / 4 * 4;
    red_free(&r);
    return emit_lm0_room(c, w, need, &w->scr[w->pos]) ? NULL : "no LM0 room for a reduction's partial results";
}

/* GRF0 long words 8-11: the PE's place along the reduced levels (32-bit lanes; GRF1 long
 * words 12-19 scratch) */
static void place_code(Em *e, const Red *r) {
    buf_printf(e->b, "zero $lr16v\n");
    static const char *const id[LV_COUNT] = {[LV_MAB] = "$mabid", [LV_L1B] = "$l1bid", [LV_L2B] = "$l2bid"};
    for (int lv = LV_MAB; lv <= LV_L2B; lv++) /* (the ALU has no integer product: the weight's bits) */
        for (int b = 0; r->wt[lv] && b < 31; b++)
            if (r->wt[lv] >> b & 1)
                buf_printf(e->b,
                           "imm i\"%d\" $ls32v\nnop\nilsl %s $ls32v $ls24v\nnop\niadd $lr16v $ls24v $lr16v\nnop\n", b,
                           id[lv]);
}

void emit_treereduce(Em *e, const MNNode *n, int64_t scr) {
    const MNMachine *m = &e->c->machine;
    Red r;
    if (!plan(e->c, n, &r)) die("node '%s' is no reduction over the tree", n->name);
    const MNValue *x = r.x, *y = r.y;
    bool max = n->op == OP_ReduceMax, min = n->op == OP_ReduceMin, add = !max && !min;
    const char *fold = max ? "fmax" : min ? "fmin" : "fvadd", *op = max ? "fmax" : min ? "fmin" : "ffadd";
    /* the identity: 0, -inf or +inf in both floats of a long word */
    const char *ident = add ? "0" : max ? "-8388608" : "2139095040";
    place_code(e, &r);
    buf_printf(e->b, "imm i\"%s\" $ls40v\nnop\n", ident);
    for (int64_t a0 = 0; a0 < r.ny; a0 += 4) { /* fold: 4 output LW a step, their k-th inputs */
        int64_t most = 0;
        for (int64_t j = a0; j < a0 + 4 && j < r.ny; j++)
            if (r.cnt[j] > most) most = r.cnt[j];
        buf_printf(e->b, "lpassa $ls40v $lr0v\nnop\n");
        for (int64_t k = 0; k < most; k++) {
            int64_t xa[4], lim[4];
            bool mask = false;
            for (int j = 0; j < 4; j++) {
                int64_t o = a0 + j;
                xa[j] = o < r.ny && k < r.cnt[o] ? r.list[r.off[o] + k] : -1;
                lim[j] = xa[j] < 0 ? 0 : r.lim[xa[j]]; /* (no input: no PE takes part) */
                mask |= lim[j] >= 0;
                if (xa[j] < 0) xa[j] = r.list[r.off[a0]]; /* (read, but masked off) */
            }
            if (mask) { /* PEs whose place is below each cycle's count: limit - 1 - place >= 0 */
                for (int j = 0; j < 4; j++)
                    buf_printf(e->b, "imm i\"%lld\" $ls%d\n", (long long)(lim[j] < 0 ? INT32_MAX : lim[j] - 1),
                               48 + 2 * j);
                buf_printf(e->b, "nop\nisub $ls48v $lr16v $nowrite $omr2\nnop\n");
            }
            buf_printf(e->b, "%s $lr0v ", fold);
            emit_lw_list(e, x, xa, 4);
            buf_printf(e->b, " $lr0v%s\nnop\n", mask ? "/$imr2" : "");
        }
        buf_printf(e->b, "lpassa $lr0v $lm%lldv\nnop/2\n", (long long)(2 * (scr + a0))); /* (LM0 read again next) */
    }
    buf_printf(e->b, "nop/2\n");
    /* the tree, a chunk of output long words at a time */
    bool mabs = r.R >> LV_MAB & 1, l1bs = r.R >> LV_L1B & 1, l2bs = r.R >> LV_L2B & 1;
    int64_t per = mabs ? 4 : 64; /* L1BM long words a PE long word takes */
    int64_t J = m->l1b_per_l2b, chunk = m->l1bm_lw / per, lc = m->l2bm_lw / per / (l2bs && !l1bs ? J : 1);
    if (chunk > lc) chunk = lc;
    chunk = chunk / 16 * 16;
    if (chunk < 16) die("a reduction over the tree: no room in the L1BM");
    for (int64_t c0 = 0; c0 < r.ny; c0 += chunk) {
        int64_t c1 = c0 + chunk < r.ny ? c0 + chunk : r.ny, lw = ((c1 - c0) * per + 63) / 64 * 64;
        for (int64_t a = c0; a < c1; a += 4)
            buf_printf(e->b, "%s $lm%lldv $lb%lld\n",
                       mabs ? (max   ? "l1bmrfmax"
                               : min ? "l1bmrfmin"
                                     : "l1bmrffadd")
                            : "l1bmd",
                       (long long)(2 * (scr + a)), (long long)(per * (a - c0)));
        buf_printf(e->b, "nop/2\n");
        if (l1bs) {
            for (int64_t u = 0; u < lw; u += 64)
                buf_printf(e->b, "l2bmr%s $lb%lld $lc%lld\n", op, (long long)u, (long long)u);
            buf_printf(e->b, "nop/3\n");
            if (l2bs) {
                int t1 = e->tag = e->tag % 63 + 1, t2;
                buf_printf(e->b, "mvr%s/n%lldi%02x $lc0 $p0@0\nnop; wait i%02x\n", op, (long long)lw, t1, t1);
                t2 = e->tag = e->tag % 63 + 1;
                buf_printf(e->b, "mvb/n%lldi%02x $p0@0 $lc0\nnop; wait i%02x\n", (long long)lw, t2, t2);
            }
            for (int64_t u = 0; u < lw; u += 64)
                buf_printf(e->b, "l2bmb $lc%lld $lb%lld\n", (long long)u, (long long)u);
            buf_printf(e->b, "nop/3\n");
        } else if (l2bs) { /* the L1Bs kept: side by side in the L2BM (32 LW each a step), folded over the L2Bs */
            int64_t n64 = (J * lw + 63) / 64 * 64;
            for (int64_t u = 0; u < lw; u += 32)
                buf_printf(e->b, "l2bmd $lb%lld $lc%lld\n", (long long)u, (long long)(J * u));
            buf_printf(e->b, "nop/3\n");
            int t1 = e->tag = e->tag % 63 + 1, t2;
            buf_printf(e->b, "mvr%s/n%lldi%02x $lc0 $p0@0\nnop; wait i%02x\n", op, (long long)n64, t1, t1);
            t2 = e->tag = e->tag % 63 + 1;
            buf_printf(e->b, "mvb/n%lldi%02x $p0@0 $lc0\nnop; wait i%02x\n", (long long)n64, t2, t2);
            for (int64_t u = 0; u < lw; u += 32)
                buf_printf(e->b, "l2bmd $lc%lld $lb%lld\n", (long long)(J * u), (long long)u);
            buf_printf(e->b, "nop/3\n");
        }
        for (int64_t a = c0; a < c1; a += 4)
            buf_printf(e->b, "%s $lb%lld $lm%lldv\n", mabs ? "l1bmm" : "l1bmd", (long long)(per * (a - c0)),
                       (long long)(2 * (scr + a)));
        buf_printf(e->b, "nop/2\n");
    }
    if (n->op == OP_ReduceMean) buf_printf(e->b, "imm f\"%.9g\" $ls40v\nnop\n", 1.0 / (double)r.count);
    for (int64_t a = 0; a < r.ny; a += 4) {
        char Y[48];
        /* (through GRF0: a step reads and writes one LM bank only at one address) */
        if (n->op == OP_ReduceMean)
            buf_printf(e->b, "fvmul $lm%lldv $ls40v $lr0v\n", (long long)(2 * (scr + a)));
        else
            buf_printf(e->b, "lpassa $lm%lldv $lr0v\n", (long long)(2 * (scr + a)));
        buf_printf(e->b, "nop\nlpassa $lr0v $%s%sv%s\nnop/2\n", emit_bank_reg(y), emit_at(e, y, a, Y),
                   emit_tail_mask(y->num_lw, a));
    }
    buf_printf(e->b, "nop/2\n");
    red_free(&r);
}

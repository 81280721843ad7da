/* Layout planner: the layout of every value, and MNCoreLayoutSwitch nodes where a
 * consumer's demand differs from what its producer gives.
 *
 * Demands. An elementwise op wants each input placed like the matching elements of its
 * output (a broadcast input is replicated over the levels of the dimensions it lacks);
 * MatMul and Gemm feed the matrix unit, which takes the reduced dimension K of both
 * operands packed over W and the PEs of a MAB, so A wants K last (the canonical layout
 * of A when not transposed) and B wants its K dimension laid out as a canonical last
 * dimension (the transposed canonical layout of a (K, N) B); a convolution's weight has its
 * input channels (the reduced dimension of the im2col product) packed the same way. A
 * product that streams its B wants an A whose rows fit one L2B replicated on every L2B
 * (split_a): each L2B then computes a slice of the columns instead of all of them. Two
 * layouts satisfy the same
 * demand when they place every element on the same PE, MAB, L1B, L2B and word slot;
 * addresses are free (the emitter iterates them).
 *
 * layout_planner=naive gives every value, parameters included, the canonical layout
 * below and switches wherever a demand differs. layout_planner=lpz (the default) lets
 * parameters, constants and graph inputs take the layout their consumer demands (the
 * host writes them in any order, for free), passes a demand up through layout-agnostic producers
 * with a single consumer (the Gene hint: the producer computes in the demanded layout
 * directly), and inserts a switch only where demands truly conflict, costing each from
 * the machine's transfer figures.
 *
 * Canonical layout:
 * The last dimension is packed into long words (W slots, as many as the dtype fits) and
 * spread over the 4 PEs of a MAB: (ceil(n / 4W):1, W_W:1, 4_PE:1). The first dimension
 * leading dimensions of a tensor of rank >= 2 are spread over the MABs, L1Bs and L2Bs:
 * level by level, to the dimension whose addresses it divides the most, by the smallest
 * factor of the machine's count that does so (so 1000 rows take all 1024 MAB slots of
 * mncore2, 3 rows 4 MABs); what is left of every leading dimension becomes LM
 * addresses, row-major. The SIMD machine takes as long as its fullest PE, so the long
 * words per PE are what to minimise; padding only costs DRAM image space. With batch 1,
 * an NCHW tensor would otherwise sit on the 4 PEs of one MAB, replicated. Every level a
 * value does not use is a broadcast level: the value is replicated there. A scalar is
 * one long word replicated on every PE. Beyond the MABs of one L1B a level is used only
 * while the value still takes more than SPREAD_MIN_LW long words per PE: such a value
 * costs at most a few steps per op on one L1B, and data that has to move between PEs
 * (a layout switch, a transpose, a reduction) then moves within the L1B, through its
 * L1BM, rather than across L1Bs and L2Bs. So a (3,4) float tensor gets
 * PadLayout{(3,4)/((1:1, 4_MAB:1), (1:1, 2_W:1, 4_PE:1); B@[L1B,L2B])} (DESIGN.md's
 * MLSDK example keeps the 3 rows as addresses: two long words more per PE).
 *
 * Window ops (pools, convolutions, normalizations, reductions, Softmax) read, for each
 * output element, input elements with the same leading indices (batch, and channel for
 * pools). Their outputs take the input's L1B and L2B placement of those dimensions
 * (canonical otherwise), so that every L1B reads only its own elements: an input too big
 * for one L2B is then no reason for data to cross L2Bs, which the machine can only do
 * through DRAM. A 2-D pool that can run as a stencil (stencil_plan.c) instead takes its
 * bands of rows for its output and demands them of its input.
 *
 * Moves over L2Bs. The tree's instructions do the same on every L2B; only transfers through
 * the PDM differ between L2Bs, and they move whole rows. So a Transpose or view of a value
 * spread over the L2Bs keeps every element where it is (its input's digits permuted or
 * regrouped, layout_reshape), attention's heads stay on the L2Bs their batch is on, and a
 * switch that would move elements between L2Bs and change their MAB, PE or word at once is
 * made of two: the rows across the L2Bs first (l2b_first), then the move within each. */
#include "plan.h"
#include "layout.h"
#include "ops.h"
#include "infer.h"
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

enum { SPREAD_MIN_LW = 16 };

/* fdim[s] for the levels MAB, L1B, L2B: -2 the canonical choice (among the dimensions
 * in allow), -1 unused, else that dimension by factor ff[s] */
/* the smallest factor of a level of count places that takes r indices, or all of them */
static int64_t level_factor(int64_t count, int64_t r) {
    for (int64_t g = 1; g <= count; g++)
        if (count % g == 0 && g >= r) return g;
    return count;
}

static bool canonical(const MNType *t, MNDtype dt, const MNMachine *m, const int *fdim, const int64_t *ff,
                      uint32_t allow, MNLayout *l) {
    memset(l, 0, sizeof *l);
    int bytes = mn_dtype_bytes(dt);
    if (!bytes || t->rank < 0 || t->rank > LAYOUT_MAX_RANK) return false;
    int64_t W = 8 / bytes;
    l->rank = t->rank;
    for (int i = 0; i < t->rank; i++) l->shape[i] = t->dims[i];
    if (t->rank == 0) {
        l->bcast = (uint8_t)(1u << LV_PE | 1u << LV_MAB | 1u << LV_L1B | 1u << LV_L2B);
        return true;
    }
    int last = t->rank - 1;
    int64_t n = t->dims[last] ? t->dims[last] : 1;
    int64_t q = (n + 4 * W - 1) / (4 * W), stride = q;
    l->nsub[last] = 3;
    l->sub[last][0] = (MNSubaxis){q, 1, LV_ADDR};
    l->sub[last][1] = (MNSubaxis){W, 1, LV_W};
    l->sub[last][2] = (MNSubaxis){4, 1, LV_PE};
    /* Leading dimensions over MAB, L1B, L2B: each level goes whole to the dimension that
     * fills most of it (a level shared by two dimensions could not be broadcast for an
     * input lacking one of them); the outermost wins ties. */
    int64_t F[LAYOUT_MAX_RANK];
    int lvdim[LV_COUNT];
    int64_t lvf[LV_COUNT];
    const MNLevel spread[3] = {LV_MAB, LV_L1B, LV_L2B};
    const int64_t count[3] = {m->mab_per_l1b, m->l1b_per_l2b, m->n_l2b};
    for (int i = 0; i < last; i++) F[i] = 1;
    for (int s = 0; s < 3; s++) {
        int64_t lw = q; /* long words per PE so far */
        for (int i = 0; i < last; i++) lw *= ((t->dims[i] ? t->dims[i] : 1) + F[i] - 1) / F[i];
        if (fdim && fdim[s] != -2) {
            lvdim[spread[s]] = fdim[s];
            lvf[spread[s]] = fdim[s] >= 0 ? ff[s] : 1;
            if (fdim[s] >= 0) F[fdim[s]] *= ff[s];
            continue;
        }
        if (s > 0 && lw <= SPREAD_MIN_LW) { /* small enough to stay within one L1B */
            lvdim[spread[s]] = -1;
            lvf[spread[s]] = 1;
            continue;
        }
        int best = -1;
        int64_t bf = 1;
        double gain = 1; /* how many times fewer addresses the dimension then needs */
        for (int i = 0; i < last; i++) {
            if (!(allow >> i & 1)) continue;
            int64_t d = t->dims[i] ? t->dims[i] : 1, r = (d + F[i] - 1) / F[i];
            int64_t f = level_factor(count[s], r); /* takes the rest down as far as it goes */
            double gi = (double)r / (double)((r + f - 1) / f);
            if (gi > gain) {
                best = i;
                bf = f;
                gain = gi;
            }
        }
        lvdim[spread[s]] = best;
        lvf[spread[s]] = bf;
        if (best >= 0) F[best] *= bf;
    }
    uint8_t used = 1u << LV_PE;
    for (int i = last - 1; i >= 0; i--) { /* what is left of each: addresses, row-major */
        int64_t d = t->dims[i] ? t->dims[i] : 1;
        int64_t rest = (d + F[i] - 1) / F[i];
        int k = 0;
        l->sub[i][k++] = (MNSubaxis){rest, (int32_t)stride, LV_ADDR};
        stride *= rest;
        for (int s = 2; s >= 0; s--) /* L2B major, MAB minor */
            if (lvdim[spread[s]] == i) {
                l->sub[i][k++] = (MNSubaxis){lvf[spread[s]], 1, spread[s]};
                used |= (uint8_t)(1u << spread[s]);
            }
        l->nsub[i] = k;
    }
    for (int lv = LV_PE; lv <= LV_L2B; lv++)
        if (!(used & (1u << lv))) l->bcast |= (uint8_t)(1u << lv);
    return true;
}

bool plan_layout_canonical(const MNType *t, MNDtype dt, const MNMachine *m, MNLayout *l) {
    return canonical(t, dt, m, NULL, NULL, ~0u, l);
}

/* How many leading dimensions of a window op's output (a fold over elements of its input
 * 0: pools, convolutions, normalizations, reductions, Softmax) index the same elements of
 * the input: the output element reads only input elements with those indices. */
static int window_leading(MNGraph *g, MNNode *n) {
    const MNValue *x = n->nin ? n->in[0] : NULL;
    if (!x || x->type.rank < 2) return 0;
    int r = x->type.rank;
    int64_t a;
    if (mn_op_has(n->op, MN_REDUCE)) { /* the axes before the first reduced one */
        bool mask[MN_MAX_RANK] = {false};
        if (!infer_reduce_mask(g, n, mask)) return 0;
        for (a = 0; a < r && !mask[a]; a++) {}
        return (int)a;
    }
    switch (n->op) {
    case OP_MaxPool:
    case OP_AveragePool:
    case OP_LpPool:
    case OP_GlobalAveragePool:
    case OP_GlobalMaxPool:
    case OP_InstanceNormalization: return 2;
    case OP_Conv:
    case OP_ConvTranspose:
    case OP_LRN: return 1;
    case OP_MatMul:
    case OP_Gemm: /* the matrix unit gives each MAB the output rows of its rows of A */
        if (n->op == OP_Gemm && ir_attr_int(n, "transA", 0)) return 0;
        return n->nout && n->out[0] && n->out[0]->type.rank == r ? r - 1 : 0;
    case OP_Softmax:
    case OP_LogSoftmax:
    case OP_Hardmax: a = ir_attr_int(n, "axis", g->opset >= 13 ? -1 : 1); break;
    case OP_ArgMax:
    case OP_ArgMin: a = ir_attr_int(n, "axis", 0); break;
    case OP_LayerNormalization: a = ir_attr_int(n, "axis", -1); break;
    default: return 0;
    }
    if (a < 0) a += r;
    return a < 0 || a > r ? 0 : (int)a;
}

/* The canonical layout of t with the MAB, L1B and L2B placement of its first nl
 * dimensions taken from ref, the layout of the input it reads (with the same first nl
 * dimensions), so that each output element sits on the L1B and L2B of what it reads and
 * the op needs no data from other L1Bs or L2Bs. False when ref spreads another
 * dimension over the L1Bs or L2Bs. */
static bool canonical_aligned(const MNType *t, MNDtype dt, const MNMachine *m, const MNLayout *ref, int nl,
                              MNLayout *l) {
    const MNLevel spread[3] = {LV_MAB, LV_L1B, LV_L2B};
    int fdim[3] = {-1, -1, -1};
    int64_t ff[3] = {1, 1, 1};
    if (nl > t->rank - 1) nl = t->rank - 1;
    if (nl <= 0 || ref->rank < nl) return false;
    for (int i = 0; i < nl; i++)
        if (ref->shape[i] != t->dims[i]) return false;
    for (int s = 0; s < 3; s++)
        for (int i = 0; i < ref->rank; i++)
            for (int k = 0; k < ref->nsub[i]; k++)
                if (ref->sub[i][k].level == spread[s]) {
                    if (fdim[s] >= 0 || (s > 0 && i >= nl)) return false;
                    fdim[s] = i;
                    ff[s] = ref->sub[i][k].size;
                }
    uint32_t allow = ~0u;
    bool upper = false;
    for (int s = 1; s < 3; s++)
        if (fdim[s] >= 0) {
            allow &= ~(1u << fdim[s]);
            upper = true;
        }
    if (!upper) return false; /* nothing to align: canonical */
    /* the MAB factor of a dimension on the L1Bs or L2Bs decides their coordinates too */
    if (fdim[0] < 0 || fdim[0] >= nl || (allow >> fdim[0] & 1)) fdim[0] = -2;
    char err[200];
    if (!canonical(t, dt, m, fdim, ff, allow, l) || !layout_valid(l, m, mn_dtype_bytes(dt), err, sizeof err))
        return false;
    int64_t idx[LAYOUT_MAX_RANK] = {0}; /* ref need not order its subaxes canonically: compare */
    for (int i = 0; i < nl; i++) {
        for (int64_t v = 0; v < t->dims[i]; v++) {
            MNPlace pr, pl;
            idx[i] = v;
            layout_place(ref, idx, &pr);
            layout_place(l, idx, &pl);
            if (pr.c[LV_L1B] != pl.c[LV_L1B] || pr.c[LV_L2B] != pl.c[LV_L2B]) return false;
        }
        idx[i] = 0;
    }
    return true;
}

/* ---- demands ---- */

static bool elementwise(const MNNode *n) { return mn_op_has(n->op, MN_EW); }

/* The input of a Cast between widths, read beside its output (emitter/cast.c): every
 * element on its output element's PE and place; the output's slots of a long word, where
 * the input's long word holds fewer (a float output's 2 from 1 double each, a half's 4
 * from 2 floats), come from f consecutive long words, so the packed axis takes f times the
 * addresses and the other axes' address strides grow by f. False where the output's
 * packed axis is not canonical (addresses, then the slots, then the PEs). */
static bool cast_layout(const MNLayout *out, MNDtype in, MNLayout *l) {
    int64_t lanes = 8 / mn_dtype_bytes(in);
    int r = out->rank;
    *l = *out;
    if (r < 1) return true;
    const MNSubaxis *s = out->sub[r - 1];
    int ns = out->nsub[r - 1], w = -1;
    for (int i = 0; i < ns; i++)
        if (s[i].level == LV_W) w = i;
    if (w < 0 || s[w].size <= lanes) return true; /* the slots it uses, the input's long words hold */
    int64_t f = s[w].size / lanes;
    if (s[w].size % lanes || w < 1 || s[w - 1].level != LV_ADDR || s[w - 1].stride != 1) return false;
    int64_t q = s[w - 1].size; /* the packed axis's addresses: every other address stride is a multiple */
    for (int d = 0; d < r; d++)
        for (int i = 0; i < l->nsub[d]; i++) {
            MNSubaxis *t = &l->sub[d][i];
            if (t->level != LV_ADDR || (d == r - 1 && i == w - 1) || t->size <= 1) continue;
            if (t->stride % q || (int64_t)t->stride * f > INT32_MAX) return false;
            t->stride = (int32_t)(t->stride * f);
        }
    l->sub[r - 1][w - 1].size = q * f;
    l->sub[r - 1][w].size = lanes;
    return true;
}

/* (rows, n): the rows as addresses, each row's n packed as a canonical last dimension, on
 * every MAB (a global pool's result on tiles, flattened) */
static void rows_layout(const MNType *t, MNDtype dt, MNLayout *l) {
    int64_t W = 8 / mn_dtype_bytes(dt), q = (t->dims[1] + 4 * W - 1) / (4 * W);
    memset(l, 0, sizeof *l);
    l->rank = 2;
    l->shape[0] = t->dims[0], l->shape[1] = t->dims[1];
    l->nsub[0] = 1, l->sub[0][0] = (MNSubaxis){t->dims[0], (int32_t)q, LV_ADDR};
    l->nsub[1] = 3;
    l->sub[1][0] = (MNSubaxis){q, 1, LV_ADDR};
    l->sub[1][1] = (MNSubaxis){W, 1, LV_W};
    l->sub[1][2] = (MNSubaxis){4, 1, LV_PE};
    l->bcast = (uint8_t)(1u << LV_MAB | 1u << LV_L1B | 1u << LV_L2B);
}

bool plan_layout_rows(const MNLayout *l, int64_t D) {
    int r = l->rank;
    if (r < 1 || D < 8 || l->nsub[r - 1] != 3) return false;
    const MNSubaxis *s = l->sub[r - 1];
    if (s[0].level != LV_ADDR || s[0].size != (D + 7) / 8 || s[0].stride != 1 || s[1].level != LV_W || s[1].size != 2 ||
        s[1].stride != 1 || s[2].level != LV_PE || s[2].size != 4 || s[2].stride != 1)
        return false;
    for (int d = 0; d < r - 1; d++)
        for (int k = 0; k < l->nsub[d]; k++)
            if (l->sub[d][k].level == LV_W || l->sub[d][k].level == LV_PE || l->sub[d][k].level == LV_TIME)
                return false;
    return true;
}

/* A product's output on the rows of its A (their MAB, L1B, L2B and addresses, the
 * addresses scaled from K's long words per row to N's), N packed as A packs K: each MAB
 * computes its own rows of A (emitter/matmul.c). False unless A's K is packed so. */
static bool product_rows(const MNLayout *a, const MNType *y, MNLayout *l) {
    int r = a->rank;
    if (r < 2 || y->rank != r || !plan_layout_rows(a, a->shape[r - 1]) || y->dims[r - 1] % 8) return false;
    int64_t KB = (a->shape[r - 1] + 7) / 8, NB = y->dims[r - 1] / 8;
    *l = *a;
    for (int d = 0; d < r - 1; d++) {
        if (y->dims[d] != a->shape[d]) return false;
        for (int k = 0; k < l->nsub[d]; k++) {
            MNSubaxis *s = &l->sub[d][k];
            if (s->level != LV_ADDR) continue;
            if (s->stride % KB || (int64_t)s->stride / KB * NB > INT32_MAX) return false;
            s->stride = (int32_t)(s->stride / KB * NB);
        }
    }
    l->shape[r - 1] = y->dims[r - 1];
    l->sub[r - 1][0] = (MNSubaxis){NB, 1, LV_ADDR};
    return true;
}

/* the address digits of l's first nd dimensions numbered row-major from stride at (false:
 * past 32 bits) */
static bool renumber_addresses(MNLayout *l, int nd, int64_t at) {
    for (int d = nd - 1; d >= 0; d--)
        for (int k = l->nsub[d] - 1; k >= 0; k--)
            if (l->sub[d][k].level == LV_ADDR) {
                if (at > INT32_MAX) return false;
                l->sub[d][k].stride = (int32_t)at;
                at *= l->sub[d][k].size;
            }
    return true;
}

/* The layout of a reduction's output y over axes red of x laid out as lx, where a reduced
 * axis lies on tree levels: the kept axes where they are, the reduced ones gone (size 1
 * where kept), y alike on the levels they lay on (emitter/treereduce.c folds over them);
 * false where no reduced axis is on the tree, or one is packed or shares a level with a
 * kept axis. */
static bool reduced_layout(const MNLayout *lx, const MNValue *y, const bool *red, bool keep, MNLayout *ly) {
    const unsigned TREE = 1u << LV_MAB | 1u << LV_L1B | 1u << LV_L2B;
    unsigned R = 0, kept = 0;
    for (int d = 0; d < lx->rank; d++)
        for (int k = 0; k < lx->nsub[d]; k++) {
            const MNSubaxis *s = &lx->sub[d][k];
            if (s->size < 2) continue;
            if (red[d] && (s->level == LV_W || s->level == LV_PE || s->level == LV_TIME)) return false;
            if (s->level != LV_ADDR) (red[d] ? &R : &kept)[0] |= 1u << s->level;
        }
    if (!(R & TREE) || (R & kept) || (R & lx->bcast)) return false;
    memset(ly, 0, sizeof *ly);
    ly->rank = y->type.rank;
    ly->bcast = (uint8_t)(lx->bcast | R);
    int o = 0;
    for (int d = 0; d < lx->rank; d++) {
        if (red[d] && !keep) continue;
        if (o >= ly->rank) return false;
        ly->shape[o] = y->type.dims[o];
        if (red[d]) {
            ly->nsub[o] = 1;
            ly->sub[o][0] = (MNSubaxis){1, 1, LV_ADDR};
        } else {
            ly->nsub[o] = lx->nsub[d];
            memcpy(ly->sub[o], lx->sub[d], sizeof lx->sub[d]);
        }
        o++;
    }
    return o == ly->rank && renumber_addresses(ly, ly->rank, 1);
}

/* is l's last dimension packed into long words on the PEs of a MAB (addresses, W and PE
 * only), as products and row folds read it? */
static bool last_packed(const MNLayout *l) {
    for (int k = 0; l->rank > 0 && k < l->nsub[l->rank - 1]; k++) {
        uint8_t lv = l->sub[l->rank - 1][k].level;
        if (lv != LV_ADDR && lv != LV_W && lv != LV_PE) return false;
    }
    return true;
}

/* l with its last dimension packed canonically (its tree levels become addresses: a move of
 * whole rows between L1Bs, emitter/rowmove.c) and the other dimensions where they are, their
 * addresses renumbered row-major after it */
static bool repack_last(const MNLayout *in, MNDtype dt, MNLayout *l) {
    int r = in->rank;
    int64_t W = 8 / mn_dtype_bytes(dt), D = in->shape[r - 1], KB = (D + 4 * W - 1) / (4 * W), at = KB;
    MNLayout o = *in;
    for (int d = 0; d < r - 1; d++)
        for (int k = 0; k < o.nsub[d]; k++)
            if (o.sub[d][k].level == LV_PE || o.sub[d][k].level == LV_W) return false;
    o.nsub[r - 1] = 3;
    o.sub[r - 1][0] = (MNSubaxis){KB, 1, LV_ADDR};
    o.sub[r - 1][1] = (MNSubaxis){W, 1, LV_W};
    o.sub[r - 1][2] = (MNSubaxis){4, 1, LV_PE};
    if (!renumber_addresses(&o, r - 1, at)) return false;
    *l = o;
    return true;
}

static bool same_dims(const MNType *a, const MNType *b) {
    if (a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

/* Input layout for an elementwise op: the output's, with the dimensions the input lacks
 * (or has as 1) made into broadcast levels. */
static void broadcast_layout(const MNLayout *out, const MNType *in, MNLayout *l) {
    memset(l, 0, sizeof *l);
    l->rank = in->rank;
    l->bcast = out->bcast;
    int off = out->rank - in->rank;
    for (int i = 0; i < out->rank; i++) {
        int j = i - off;
        bool keep = j >= 0 && in->dims[j] == out->shape[i];
        if (j >= 0) l->shape[j] = in->dims[j];
        if (keep) {
            l->nsub[j] = out->nsub[i];
            memcpy(l->sub[j], out->sub[i], sizeof out->sub[i]);
            continue;
        }
        for (int k = 0; k < out->nsub[i]; k++)
            if (out->sub[i][k].level != LV_ADDR && out->sub[i][k].level != LV_TIME) /* the same for every time slice */
                l->bcast |= (uint8_t)(1u << out->sub[i][k].level);
        if (j >= 0) {
            l->nsub[j] = 1;
            l->sub[j][0] = (MNSubaxis){in->dims[j] ? in->dims[j] : 1, 1, LV_ADDR};
        }
    }
}

/* The layout a (K, N) operand must have for the matrix unit: its dimension kdim packed
 * like a canonical last dimension, the other dimensions addresses, replicated on every
 * MAB (each MAB loads its own matrix register). */
bool plan_layout_kpacked(const MNType *t, MNDtype dt, int kdim, MNLayout *l) {
    MNType sw = *t;
    int64_t dims[MN_MAX_RANK];
    if (t->rank > LAYOUT_MAX_RANK) return false;
    memcpy(dims, t->dims, sizeof(int64_t) * (size_t)t->rank);
    int last = t->rank - 1;
    int64_t tmp = dims[kdim];
    dims[kdim] = dims[last];
    dims[last] = tmp;
    sw.dims = dims;
    MNMachine one = {0};
    one.mab_per_l1b = one.l1b_per_l2b = one.n_l2b = 1; /* no spreading: replicated */
    MNLayout c;
    if (!plan_layout_canonical(&sw, dt, &one, &c)) return false;
    *l = c; /* swap the axes back */
    l->shape[kdim] = t->dims[kdim];
    l->shape[last] = t->dims[last];
    l->nsub[kdim] = c.nsub[last];
    l->nsub[last] = c.nsub[kdim];
    memcpy(l->sub[kdim], c.sub[last], sizeof c.sub[0]);
    memcpy(l->sub[last], c.sub[kdim], sizeof c.sub[0]);
    return true;
}

/* A batched B (rank 3 or more) beside the rows that use it: each batch K-packed as one
 * table of T long words, its columns consecutive within a K block (block kb of column n
 * at kb N + n: a row of K with K packed, spread over the MABs, becomes consecutive
 * addresses, rowmove.c's broadcast), its batch axes on the MABs, L1Bs and L2Bs the output puts the
 * same batch axes on (and as addresses, T apart, where the output has them as addresses),
 * replicated over the other levels: a MAB holds the tables of its own rows' batches only
 * (attention's heads on their L1Bs each hold their own K), which emitter/matmul.c reads
 * per slot of rows. */
static bool batched_b(const MNLayout *out, const MNType *t, MNDtype dt, int kdim, MNLayout *l) {
    int rb = t->rank, ry = out->rank;
    if (rb < 3 || ry < rb || !plan_layout_kpacked(t, dt, kdim, l)) return false;
    int ndim = kdim == rb - 1 ? rb - 2 : rb - 1;
    if (l->nsub[kdim] < 1 || l->nsub[ndim] != 1 || l->sub[kdim][0].level != LV_ADDR ||
        l->sub[ndim][0].level != LV_ADDR || t->dims[ndim] > INT32_MAX)
        return false;
    /* columns inside a K block, K blocks N apart, N rounded up to 16 past 16 columns: the
     * rows' broadcast lands a row's 16 MAB blocks at 16 consecutive addresses, and a row
     * that ends a block must not overhang the next one */
    int64_t N = t->dims[ndim], NB = N > 16 ? (N + 15) / 16 * 16 : N;
    l->sub[ndim][0].stride = 1;
    l->sub[kdim][0].stride = (int32_t)NB;
    int64_t T = NB;
    for (int d = rb - 2; d < rb; d++)
        for (int k = 0; k < l->nsub[d]; k++)
            if (l->sub[d][k].level == LV_ADDR && d != ndim) T *= l->sub[d][k].size;
    const unsigned TREE = 1u << LV_MAB | 1u << LV_L1B | 1u << LV_L2B;
    unsigned used = 0;
    int64_t stride = T;
    for (int i = rb - 3; i >= 0; i--) { /* innermost batch axis first: its addresses T apart */
        int j = ry - rb + i;
        l->nsub[i] = 0;
        if (t->dims[i] == 1) continue; /* broadcast: every batch of the output reads the one */
        if (out->shape[j] != t->dims[i]) return false;
        for (int k = out->nsub[j] - 1; k >= 0; k--) {
            const MNSubaxis *s = &out->sub[j][k];
            if (s->level == LV_ADDR) {
                if (stride > INT32_MAX) return false;
                l->sub[i][k] = (MNSubaxis){s->size, (int32_t)stride, LV_ADDR};
                stride *= s->size;
            } else if ((1u << s->level) & TREE) {
                l->sub[i][k] = *s;
                used |= 1u << s->level;
            } else
                return false; /* batches on the PEs or cut over time */
        }
        l->nsub[i] = out->nsub[j];
    }
    l->bcast = (uint8_t)((l->bcast & ~TREE) | (TREE & ~used));
    return true;
}

/* is v the output of a Transpose laid out to turn blocks in its MABs (turn_plan.c)? Its
 * packed axis then lies partly on the MABs: readers other than elementwise ones want it
 * canonical */
static bool turned_out(const MNValue *v) {
    return v->producer && v->producer->op == OP_Transpose && ir_attr_int(v->producer, "turned", 0);
}

/* a node that only moves data whole: its output may take any layout */
static bool moves(const MNNode *n) { return n->op == OP_Transpose || mn_op_has(n->op, MN_VIEW); }

/* Is v, input k of n, a batched MatMul's B made by a Transpose (of nothing else) from
 * an input whose last axis is B's K? The Transpose then writes B's layout itself: its
 * rows keep their packed K and only spread (attention's Kᵀ: emitter/rowmove.c). */
static bool transposed_b(const MNNode *n, int k, const MNValue *v) {
    const MNNode *t = v->producer;
    if (n->op != OP_MatMul || k != 1 || v->type.rank < 2 || !t || t->op != OP_Transpose || v->nuses != 1 ||
        v->is_output || !t->in[0])
        return false;
    const MNAttr *perm = ir_attr(t, "perm");
    int r = v->type.rank;
    return perm && perm->type == MN_ATTR_INTS && perm->n == r && perm->ints[r - 2] == t->in[0]->type.rank - 1;
}

/* A batched product with a run-time B (attention's Q Kᵀ and P V) wants the batches of
 * its A (the heads) on the L1Bs and its rows on the MABs, alike on every L2B: each L1B
 * then holds the B tables of its own heads only (batched_b). Where an L1B's heads' tables
 * would take more than half of LM0 (ViT's 197 tokens: 64 x 197 floats a head), the heads
 * spread over the L2Bs too, as few a place as they go. */
/* the L2Bs that the first dimension of l takes, where it is the only one on them (1: none) */
static int64_t first_on_l2b(const MNLayout *l) {
    int64_t e = 1;
    if (!l || (l->bcast & (1u << LV_L2B))) return 1;
    for (int d = 0; d < l->rank; d++)
        for (int k = 0; k < l->nsub[d]; k++)
            if (l->sub[d][k].level == LV_L2B) {
                if (d) return 1;
                e *= l->sub[d][k].size;
            }
    return e;
}

/* Attention's A: the heads (its first dimension) over the L1Bs, its rows over the MABs, alike
 * on every L2B; over the L2Bs too where an L1B's heads' B tables would pass half of LM0, or
 * where from (A's producer's layout, or the product's) has its heads on them already (a
 * batch over the L2Bs: kept there rather than gathered onto every L2B) */
static bool heads_a(const MNNode *n, const MNType *t, MNDtype dt, const MNMachine *m, const MNLayout *from,
                    MNLayout *l) {
    const MNValue *b = n->nin > 1 ? n->in[1] : NULL;
    if (t->rank < 3 || !b || b->konst || b->type.rank != t->rank || t->dims[0] < 2 || m->l1b_per_l2b < 2) return false;
    /* the heads over as many L1Bs as they fill, the rows over as many MABs */
    int fdim[3] = {t->rank - 2, 0, -1};
    int64_t ff[3] = {level_factor(m->mab_per_l1b, t->dims[t->rank - 2]), level_factor(m->l1b_per_l2b, t->dims[0]), 1};
    int64_t K = b->type.dims[b->type.rank - 2], N = b->type.dims[b->type.rank - 1];
    int64_t per_l1b = (t->dims[0] + ff[1] - 1) / ff[1], table = (K + 7) / 8 * N; /* long words a head */
    int64_t kept = first_on_l2b(from);
    if (kept > 1 && t->dims[0] % kept == 0) {
        fdim[2] = 0, ff[2] = kept;
        ff[1] = level_factor(m->l1b_per_l2b, t->dims[0] / kept);
    } else if (per_l1b > 1 && per_l1b * table > m->lm0_lw / 2 && m->n_l2b > 1)
        fdim[2] = 0, ff[2] = level_factor(m->n_l2b, per_l1b);
    char err[200];
    if (!canonical(t, dt, m, fdim, ff, ~0u, l)) return false;
    if (fdim[2] < 0) l->bcast |= (uint8_t)(1u << LV_L2B);
    return layout_valid(l, m, mn_dtype_bytes(dt), err, sizeof err);
}

/* A matrix-unit operand is replicated on every MAB; one that would take more than a
 * quarter of LM0 per PE is not demanded (it keeps its spread canonical layout, which
 * the vector path reads through the tree, or from its index tables as a constant),
 * unless the product streams it (below). */
static bool kpacked_fits(const MNLayout *l, const MNMachine *m) {
    return layout_num_lw(l, m->address_alignment_lw) <= m->lm0_lw / 4;
}

/* the dimension of a product's input k (0: A, 1: B) the matrix unit reduces over */
static int matrix_kdim(const MNNode *n, int k, int rank) {
    bool trans = n->op == OP_Gemm && ir_attr_int(n, k == 0 ? "transA" : "transB", 0);
    return k == 0 ? rank - 2 : (trans ? rank - 1 : rank - 2);
}

bool plan_streamed(const MNNode *n, int k) {
    return (k == 1 && ir_attr_int(n, "b_streamed", 0)) || (k == 0 && ir_attr_int(n, "table_streamed", 0));
}

/* A streamed B's layout: K packed as plan_layout_kpacked packs it, replicated, and the
 * other dimension (the columns) in groups of 16 whose K blocks lie together: column c's
 * block kb at long word (c / 16) 16 Kb + 16 kb + c % 16. Any run of K blocks of a group
 * is then one range of addresses, which the product brings in as one panel. */
static bool layout_kpanels(const MNType *t, MNDtype dt, int kdim, MNLayout *l) {
    enum { G = 16 };
    if (t->rank != 2 || !plan_layout_kpacked(t, dt, kdim, l) || l->nsub[kdim] != 3 || l->sub[kdim][1].level != LV_W ||
        l->sub[kdim][2].level != LV_PE)
        return false;
    int ndim = 1 - kdim;
    int64_t kb = l->sub[kdim][0].size, ng = (t->dims[ndim] + G - 1) / G;
    if (kb * G > INT32_MAX) return false;
    l->sub[kdim][0] = (MNSubaxis){kb, G, LV_ADDR};
    l->nsub[ndim] = 2;
    l->sub[ndim][0] = (MNSubaxis){ng, (int32_t)(kb * G), LV_ADDR};
    l->sub[ndim][1] = (MNSubaxis){G, 1, LV_ADDR};
    return true;
}

/* A product whose B is a float constant too large to replicate on every MAB streams it:
 * B's DRAM image takes the K-packed layout (replicated, so held once per group), and
 * the product brings it into an LM0 scratch panel by panel as it goes (emitter/matmul.c)
 * instead of a Download bringing all of it into LM first. */
static bool streams_b(const MNNode *n, const MNMachine *m) {
    if ((n->op != OP_MatMul && n->op != OP_Gemm) || n->nin < 2 || n->nout != 1 || !n->in[0] || !n->in[1]) return false;
    if (n->op == OP_Gemm && ir_attr_int(n, "transA", 0)) return false;
    const MNValue *a = n->in[0], *b = n->in[1];
    MNLayout want;
    bool host = b->konst || (b->is_input && !b->producer); /* in DRAM, written by the host in any layout */
    if (!host || b->dtype != MN_DT_Float || b->type.rank != 2 || a->type.rank < 2) return false;
    /* an A larger than LM is for Time-Slice to cut along K, and B with it */
    if (!plan_layout_canonical(&a->type, a->dtype, m, &want) ||
        layout_num_lw(&want, m->address_alignment_lw) > machine_lm_cap(m))
        return false;
    return plan_layout_kpacked(&b->type, b->dtype, matrix_kdim(n, 1, 2), &want) && !kpacked_fits(&want, m) &&
           layout_kpanels(&b->type, b->dtype, matrix_kdim(n, 1, 2), &want);
}

/* The canonical layout of t on the MABs and L1Bs of one L2B, replicated on every L2B (false
 * where the machine does not take it): data alike on every L2B */
static bool alike_on_l2bs(const MNType *t, MNDtype dt, const MNMachine *m, MNLayout *l) {
    MNMachine one = *m;
    one.n_l2b = one.l2b_per_group = one.groups = 1;
    char err[200];
    if (!canonical(t, dt, &one, NULL, NULL, ~0u, l)) return false;
    l->bcast |= (uint8_t)(1u << LV_L2B);
    return layout_valid(l, m, mn_dtype_bytes(dt), err, sizeof err);
}

/* A streamed product's A whose rows fit the MABs and L1Bs of one L2B (4 rows a MAB, a quarter of
 * LM0 a PE at most): laid out as on a machine of one L2B and replicated on every L2B, so that each L2B
 * computes only its own slice of the columns (emitter/matmul.c's split; its output then comes
 * out replicated like A). Where the columns do not fall into slices of whole runs of 32 per
 * L2B, no demand: A keeps its producer's layout, rows spread over the L2Bs. */
static bool split_a(const MNNode *n, const MNType *t, MNDtype dt, const MNMachine *m, MNLayout *want) {
    const MNValue *y = n->nout ? n->out[0] : NULL;
    /* (rank 3 at most: a rank-4 A is an image's pixels as rows, on tiles, and the switch of the
     * replicated output back onto the tiles is a gather Code Emit does not make at those sizes) */
    if (m->n_l2b < 2 || !plan_streamed(n, 1) || !y || y->type.rank < 2 || t->rank < 2 || t->rank > 3 ||
        y->type.dims[y->type.rank - 1] % (32 * m->n_l2b))
        return false;
    int64_t rows = 1; /* more than 4 rows a MAB (one product step a block) and the products outweigh the
                       * register writes the split saves: no gain for the gathers it costs */
    for (int d = 0; d < t->rank - 1; d++) rows *= t->dims[d];
    if (rows > 4 * (int64_t)m->mab_per_l1b * m->l1b_per_l2b) return false;
    return alike_on_l2bs(t, dt, m, want) && layout_num_lw(want, m->address_alignment_lw) <= m->lm0_lw / 4;
}

bool plan_layout_demand_of(const MNNode *n, int k, const MNType *t, MNDtype dt, const MNLayout *outl,
                           const MNMachine *m, MNLayout *want) {
    if (t->rank < 0 || !mn_dtype_bytes(dt)) return false;
    if (n->op == OP_Transpose && k == 0 && outl && ir_attr_int(n, "turned", 0)) { /* turn_plan.c */
        const MNAttr *pa = ir_attr(n, "perm");
        int64_t perm[LAYOUT_MAX_RANK];
        if (t->rank < 2 || t->rank > LAYOUT_MAX_RANK || (pa && (pa->type != MN_ATTR_INTS || pa->n != t->rank)))
            return false;
        int64_t inv[LAYOUT_MAX_RANK];
        int q = -1;
        for (int d = 0; d < t->rank; d++) perm[d] = pa ? pa->ints[d] : t->rank - 1 - d;
        for (int d = 0; d < t->rank; d++) inv[perm[d]] = d, q = perm[d] == t->rank - 1 ? d : q;
        MNLayout x;
        return plan_turned_in(outl, q, m, (int)mn_dtype_bytes(dt), &x) && layout_permute(&x, inv, t->rank, want);
    }
    if (n->op == OP_LayerNormalization && k >= 1 && outl && t->rank >= 1) {
        broadcast_layout(outl, t, want); /* scale and bias beside every row (emitter/rows.c) */
        return true;
    }
    if ((n->op == OP_Cast || n->op == OP_CastLike || n->op == OP_MNCoreCast) && k == 0 && outl &&
        mn_dtype_bytes(dt) != mn_dtype_bytes(n->out[0]->dtype))
        return cast_layout(outl, dt, want);
    if (elementwise(n) && outl) {
        if (n->op == OP_Clip && k > 0) return false; /* scalar bounds: immediates */
        broadcast_layout(outl, t, want);
        return true;
    }
    MNTile tl;
    MNLayout tin, tout;
    int64_t th[7];
    MNLayout outs[8];
    if (outl && t->rank == 4 && n->nout <= 8 && (k == 0 || n->op == OP_Concat) && plan_tile_of(outl, m, th) &&
        plan_tile_chan(n, m, th, outs) && layout_identical(outl, &outs[0]))
        return plan_tile_layout_of(th, m, t->dims, want); /* each moved input on the output's tiles */
    if (k <= 2 && plan_tile_node(n, m, &tl, &tin, &tout)) { /* a convolution or pool on tiles (tile_plan.c) */
        if (k > 0 && tl.kind != MN_TILE_CONV && tl.kind != MN_TILE_DW) return false; /* a Resize's scales */
        if (k == 1) plan_tile_weights(&tl, want);
        if (k == 2) plan_tile_bias(&tl, want);
        if (k == 0 && outl && layout_same_placement(outl, &tout)) *want = tin;
        if (k > 0 || (outl && layout_same_placement(outl, &tout))) return true;
        if (tl.kind == MN_TILE_CONV || tl.kind == MN_TILE_DW) return false; /* a pool may be a stencil (below) */
    }
    MNStencil st;
    MNLayout sin, sout;
    if (k == 0 && outl && plan_stencil_node(n, m, &st, &sin, &sout) && layout_same_placement(outl, &sout) &&
        t->rank == 4 && t->dims[2] == st.H && t->dims[3] == st.W) {
        *want = sin; /* a stencil's bands of rows (stencil_plan.c) */
        return true;
    }
    if ((n->op == OP_Conv || n->op == OP_ConvTranspose) && k == 1 && t->rank >= 3)
        return plan_layout_kpacked(t, dt, 1, want) &&
               kpacked_fits(want, m); /* the weight's input channels are the reduced K */
    if ((n->op == OP_MatMul || n->op == OP_Gemm) && k <= 1 && t->rank >= 2) {
        if (k == 0 && n->op == OP_MatMul && heads_a(n, t, dt, m, outl, want)) return true;
        if (k == 0 && !(n->op == OP_Gemm && ir_attr_int(n, "transA", 0)) && split_a(n, t, dt, m, want)) return true;
        if (k == 0 && !(n->op == OP_Gemm && ir_attr_int(n, "transA", 0)))
            return false; /* rows of A stream through; canonical A has K last */
        char err[200];
        if (k == 1 && n->op == OP_MatMul && t->rank >= 3 && outl &&
            batched_b(outl, t, dt, matrix_kdim(n, k, t->rank), want) && layout_valid(want, m, 4, err, sizeof err))
            /* (its A and output are small: a bank for B, the other for them) */
            return layout_num_lw(want, m->address_alignment_lw) <= m->lm0_lw / 8 * 7;
        int kd = matrix_kdim(n, k, t->rank);
        if (!plan_layout_kpacked(t, dt, kd, want) || !kpacked_fits(want, m)) return false;
        const MNValue *b = n->in[k];
        if (k == 1 && t->rank == 2 && b && !b->konst && !(b->is_input && !b->producer) && want->nsub[1 - kd] == 1 &&
            want->sub[1 - kd][0].level == LV_ADDR && want->sub[kd][0].level == LV_ADDR &&
            t->dims[1 - kd] <= INT32_MAX) {
            /* a B made on the machine: its columns inside a K block, the K blocks N apart, as a
             * batched B's (the rows' transposing move writes it so, emitter/rowmove.c); N rounded
             * up to 16 where a Transpose writes it (a row's 16 MAB blocks land on 16 addresses) */
            int64_t N = t->dims[1 - kd];
            want->sub[1 - kd][0].stride = 1;
            want->sub[kd][0].stride = (int32_t)(transposed_b(n, k, b) ? (N + 15) / 16 * 16 : N);
        }
        return true;
    }
    return false;
}

/* What node n wants input k to be, given n's output layout (false: no demand). */
bool plan_layout_demand(const MNNode *n, int k, const MNLayout *outl, const MNMachine *m, MNLayout *want) {
    const MNValue *v = n->in[k];
    MNTile tl;
    if (v && n->op == OP_Gather && plan_streamed(n, 0)) /* an embedding's table and indices (embed_plan.c) */
        return k == 0 ? plan_embed_table_layout(&v->type, want) : plan_embed_index_layout(&v->type, outl, m, want);
    if (v && n->op != OP_Conv && plan_streamed(n, k))
        return layout_kpanels(&v->type, v->dtype, matrix_kdim(n, k, 2), want);
    if (v && n->op == OP_Conv && plan_streamed(n, k) &&
        !(plan_tile(n, m, &tl) && (tl.kind == MN_TILE_CONV || tl.kind == MN_TILE_DW)))
        return false;
    return v && plan_layout_demand_of(n, k, &v->type, v->dtype, outl, m, want);
}

/* Which of the first nin inputs of n, laid out on tiles (and of like's shape and dtype
 * when like is given), has the finest tiles (the most places): the one a node with several
 * follows, the others switched to its grid (emitter/tile_retile.c), so that a decoder's
 * upsampled values come back onto the skip connections' denser grid; its tiling into h;
 * -1: none */
static int finest_tiles(const MNNode *n, int nin, const MNValue *like, const bool *banded, const MNLayout *L,
                        const MNMachine *m, int64_t *h) {
    int best = -1;
    int64_t size = 0, t[7];
    for (int k = 0; k < nin && k < n->nin; k++) {
        const MNValue *v = n->in[k];
        if (!v || !banded[v->id] || !plan_tile_of(&L[v->id], m, t)) continue;
        if (like && (!same_dims(&v->type, &like->type) || v->dtype != like->dtype)) continue;
        if (best < 0 || t[2] * t[5] < size) {
            best = k, size = t[2] * t[5];
            memcpy(h, t, sizeof t);
        }
    }
    return best;
}

/* The finest tiles of a value that y meets at a node after node i (another input of a
 * node that reads y, of y's batch and image size, laid out on tiles already), into h */
static bool sibling_tiles(const MNGraph *g, int i, const MNValue *y, const bool *banded, const MNLayout *L,
                          const MNMachine *m, int64_t *h) {
    bool found = false;
    int64_t t[7];
    for (int j = i + 1; j < g->nnodes; j++) {
        const MNNode *c = g->nodes[j];
        bool reads = false;
        for (int k = 0; k < c->nin; k++) reads |= c->in[k] == y;
        for (int k = 0; reads && k < c->nin; k++) {
            const MNValue *v = c->in[k];
            if (!v || v == y || !banded[v->id] || v->type.rank != 4 || v->type.dims[0] != y->type.dims[0] ||
                v->type.dims[2] != y->type.dims[2] || v->type.dims[3] != y->type.dims[3] ||
                !plan_tile_of(&L[v->id], m, t))
                continue;
            if (!found || t[2] * t[5] < h[2] * h[5]) memcpy(h, t, sizeof t);
            found = true;
        }
    }
    return found;
}

/* Estimated cycles of re-laying num_lw long words per PE between two layouts: through
 * L1BM (combine then distribute), through L2BM when L1B or L2B placement changes. */
double plan_switch_cycles(const MNMachine *m, const MNLayout *from, const MNLayout *to, int64_t num_lw) {
    double lw = (double)num_lw * m->mab_per_l1b * m->pe_per_mab;
    double cyc = 2 * lw / m->bw_l1bm_pe_distribute;
    bool upper = layout_extent(from, LV_L1B) != layout_extent(to, LV_L1B) ||
                 layout_extent(from, LV_L2B) != layout_extent(to, LV_L2B) ||
                 ((from->bcast ^ to->bcast) & (1u << LV_L1B | 1u << LV_L2B));
    if (upper) cyc += 2 * lw * m->l1b_per_l2b / m->bw_l2bm_l1bm_distribute;
    return cyc;
}

void plan_set_layout(MNCompile *c, MNValue *v, const MNLayout *l) {
    MNGraph *g = c->g;
    layout_set(g->arena, v, l);
    v->layout_kind = "MNCore";
    v->padded_shape = ARENA_ARRAY(g->arena, int64_t, l->rank + 1);
    for (int k = 0; k < l->rank; k++) v->padded_shape[k] = layout_padded(l, k);
    v->num_lw = layout_num_lw(l, c->machine.address_alignment_lw);
}

/* A switch that moves elements between L2Bs (or takes each L2B's own part of a value alike on all of
 * them) and changes their MAB, PE or word at once has
 * no single move (rows cross L2Bs keeping those, gathers change those within an L2B): its
 * first step, via, keeps every element's MAB, PE, word and L1B and takes lo's L2B (a row
 * exchange through the PDM), the second is then within each L2B. False when no such via is
 * (a dimension on lo's L2Bs spread over other levels than addresses in li). */
static bool l2b_first(const MNLayout *li, const MNLayout *lo, MNLayout *via) {
    const unsigned L2B = 1u << LV_L2B;
    if (li->rank != lo->rank || (lo->bcast & L2B)) return false;
    MNLayout o = *li;
    bool moved = false;
    for (int d = 0; d < li->rank; d++) {
        bool on = false;
        for (int k = 0; k < lo->nsub[d]; k++) on |= lo->sub[d][k].level == LV_L2B;
        if (on) { /* lo's digits, its L2B ones kept, the others addresses */
            for (int k = 0; k < li->nsub[d]; k++)
                if (li->sub[d][k].size > 1 && li->sub[d][k].level != LV_ADDR) return false;
            o.nsub[d] = lo->nsub[d];
            memcpy(o.sub[d], lo->sub[d], sizeof o.sub[d]);
            moved = true;
        }
        for (int k = 0; k < o.nsub[d]; k++) /* (lo's L2B digits; li's elsewhere as they are) */
            if (on ? o.sub[d][k].level != LV_L2B : o.sub[d][k].level == LV_L2B) o.sub[d][k].level = LV_ADDR;
    }
    if (!moved) return false;
    o.bcast = (uint8_t)((li->bcast & ~L2B) | (lo->bcast & L2B));
    if (!renumber_addresses(&o, o.rank, 1)) return false;
    *via = o;
    return true;
}

/* a MNCoreLayoutSwitch of v into layout l (the k-th of the pass), before the node that reads it */
static MNValue *add_switch(MNCompile *c, MNValue *v, const MNLayout *l, int k, MNNode **at) {
    MNGraph *g = c->g;
    MNNode *sw = ir_node_new(g, "MNCoreLayoutSwitch", 1, 1);
    sw->name = arena_printf(g->arena, "%s_switch_%d", v->name, k);
    sw->domain = "mncore";
    sw->in[0] = v;
    MNValue *o = ir_value_new(g, arena_printf(g->arena, "%s_LayoutSwitch_%d", v->name, k + 1));
    o->type = v->type;
    o->dtype = v->dtype;
    o->producer = sw;
    sw->out[0] = o;
    plan_set_layout(c, o, l);
    *at = sw;
    return o;
}

bool plan_layout(MNCompile *c) {
    MNGraph *g = c->g;
    bool lpz = c->opt->ival[MN_OPT_layout_planner] == MN_LAYOUT_PLANNER_LPZ;
    ir_recount_uses(g);
    int streamed = 0, embeds = 0; /* operands a node reads from DRAM itself (plan_streamed) */
    for (int i = 0; i < g->nnodes; i++) {
        MNNode *n = g->nodes[i];
        bool b = !plan_streamed(n, 1) && streams_b(n, &c->machine),
             t = !b && !plan_streamed(n, 0) && plan_embed_streams(n, &c->machine);
        if (b || t) ir_attr_set_int(g, n, b ? "b_streamed" : "table_streamed", 1);
        streamed += b, embeds += t;
    }
    mn_figure(c, "products_streaming_b", streamed);
    mn_figure(c, "embeddings_from_dram", embeds);
    int tiled = 0, resized = 0;
    int nv = g->nvalues;
    MNLayout *L = xcalloc((size_t)nv + 1, sizeof(MNLayout));
    bool *has = xcalloc((size_t)nv + 1, sizeof(bool));
    /* 1. canonical layouts; with lpz, parameters and graph inputs wait for their
     * consumers' demands (the host writes both, in any layout, for free) */
    for (int i = 0; i < nv; i++) {
        MNValue *v = g->values[i];
        if (!v->nuses && !v->producer) continue;
        if (lpz && (v->konst || (v->is_input && !v->producer)) && !v->is_output) continue;
        has[i] = plan_layout_canonical(&v->type, v->dtype, &c->machine, &L[i]);
    }
    /* 1b. a window op's output on the L1Bs and L2Bs of the input elements it reads; a
     * stencil's in its bands */
    int aligned = 0, stencils = 0, kept_views = 0, turned = 0;
    bool *banded = xcalloc((size_t)nv + 1, sizeof(bool)); /* laid out on tiles */
    MNNode **user = xcalloc((size_t)nv + 1, sizeof(MNNode *)); /* a node reading the value */
    for (int i = 0; i < g->nnodes; i++)
        for (int k = 0; k < g->nodes[i]->nin; k++)
            if (g->nodes[i]->in[k]) user[g->nodes[i]->in[k]->id] = g->nodes[i];
    bool *rows = xcalloc((size_t)nv + 1, sizeof(bool)); /* rows on every MAB (rows_layout) */
    for (int i = 0; i < g->nnodes; i++) {
        MNNode *n = g->nodes[i];
        MNTile tl;
        MNLayout tin, tout;
        int64_t hint[7];
        bool follows = finest_tiles(n, n->op == OP_Concat ? n->nin : 1, NULL, banded, L, &c->machine, hint) >= 0;
        int64_t sib[7];
        if ((n->op == OP_Resize || n->op == OP_Upsample) && follows && n->nout == 1 && n->out[0] &&
            sibling_tiles(g, i, n->out[0], banded, L, &c->machine, sib))
            ir_attr_set_ints(g, n, "tile_out", sib, 7); /* a broadcast of one pixel may land on them */
        MNStencil pst;
        bool lone_pool = (n->op == OP_MaxPool || n->op == OP_AveragePool) && c->machine.n_l2b > 1 &&
                         !plan_stencil(n, &c->machine, &pst); /* (one L2B: a gather holds what a stencil cannot) */
        if (plan_tile_op(n->op) && (n->op == OP_Conv || follows || lone_pool) && n->nout && n->out[0] &&
            has[n->out[0]->id]) {
            /* a convolution on tiles (a pool where its input is on them, or where it cannot be
             * a stencil): the input's tiles where the node can follow them, else its own (the
             * input demanded so, step 3) */
            if (follows) ir_attr_set_ints(g, n, "tile_in", hint, 7);
            bool ok = plan_tile_node(n, &c->machine, &tl, &tin, &tout);
            if (!ok && follows) {
                ir_attr_set_ints(g, n, "tile_in", hint, 0);
                ok = plan_tile_node(n, &c->machine, &tl, &tin, &tout);
            }
            if (ok) {
                L[n->out[0]->id] = tout;
                banded[n->out[0]->id] = true;
                if (tl.kind == MN_TILE_RESIZE || tl.kind == MN_TILE_BCAST) resized++;
                if (tl.kind == MN_TILE_CONV || tl.kind == MN_TILE_DW) { /* its weights stream from DRAM */
                    ir_attr_set_int(g, n, "b_streamed", 1);
                    tiled++;
                }
                continue;
            }
        }
        MNLayout cl[8]; /* channels moved on their input's tiles (a Concat, Split, Slice, Gather) */
        if (follows && n->nout <= 8 && plan_tile_chan(n, &c->machine, hint, cl)) {
            for (int o = 0; o < n->nout; o++) {
                L[n->out[o]->id] = cl[o];
                has[n->out[o]->id] = banded[n->out[o]->id] = true;
            }
            continue;
        }
        /* a global pool's result, replicated on every MAB (each row's channels packed, the
         * rows as addresses), keeps that form through a Flatten and the product after it */
        const unsigned TREE = 1u << LV_MAB | 1u << LV_L1B | 1u << LV_L2B;
        MNValue *x0 = n->nin ? n->in[0] : NULL, *o0 = n->nout ? n->out[0] : NULL;
        bool from_rows = x0 && o0 && has[o0->id] && has[x0->id] && (L[x0->id].bcast & TREE) == TREE &&
                         (banded[x0->id] || rows[x0->id]) && o0->type.rank == 2 && o0->dtype == x0->dtype;
        if (from_rows && (n->op == OP_Flatten || n->op == OP_Reshape || n->op == OP_Squeeze) &&
            ir_shape_numel(&x0->type) == ir_shape_numel(&o0->type) && x0->type.rank == 4 && x0->type.dims[2] == 1 &&
            x0->type.dims[3] == 1 && o0->type.dims[0] == x0->type.dims[0]) {
            rows_layout(&o0->type, o0->dtype, &L[o0->id]);
            rows[o0->id] = true;
            continue;
        }
        if (from_rows && ((n->op == OP_Gemm && !ir_attr_int(n, "transA", 0)) || n->op == OP_MatMul) &&
            (rows[x0->id] || x0->type.rank == 2)) {
            rows_layout(&o0->type, o0->dtype, &L[o0->id]);
            rows[o0->id] = true;
            continue;
        }
        /* a Transpose of an image on tiles (NCHW to NHWC: ConvNeXt's LayerNorm and MLP over the
         * channels), or back onto tiles, keeps every element where it is: a pixel's channels are
         * packed in its long words as a row's elements are, its pixels on the tiles either way
         * (emitter: a copy of the long words) */
        if (n->op == OP_Transpose && x0 && o0 && has[x0->id] && has[o0->id] && x0->dtype == o0->dtype) {
            const MNAttr *pa = ir_attr(n, "perm");
            int r = x0->type.rank;
            MNLayout pl;
            int64_t th[7];
            if ((!pa || (pa->type == MN_ATTR_INTS && pa->n == r)) &&
                layout_permute(&L[x0->id], pa ? pa->ints : NULL, r, &pl)) {
                const MNSubaxis *ch = pl.sub[1]; /* a tile layout's: its channels on the lanes */
                bool tiles = r == 4 && plan_tile_of(&pl, &c->machine, th) && pl.nsub[1] >= 2 &&
                             ch[pl.nsub[1] - 2].level == LV_W && ch[pl.nsub[1] - 1].level == LV_PE;
                if (banded[x0->id] || tiles) {
                    L[o0->id] = pl;
                    banded[o0->id] = tiles;
                    continue;
                }
            }
        }
        MNLayout vk;
        char verr[200];
        /* a Transpose that makes another axis the packed one turns 8 x 8 blocks inside each MAB
         * (turn_plan.c): its output laid out for that, its input demanded so (step 3) */
        if (n->op == OP_Transpose && x0 && o0 && has[o0->id] && x0->dtype == o0->dtype && !banded[x0->id] &&
            o0->dtype == MN_DT_Float && o0->type.rank >= 2 && o0->type.rank <= LAYOUT_MAX_RANK) {
            const MNAttr *pa = ir_attr(n, "perm");
            int r = o0->type.rank;
            int64_t perm[LAYOUT_MAX_RANK];
            MNLayout xin, pl, yl, xl2;
            MNNode *u = user[o0->id];
            bool kt = o0->nuses == 1 && u && u->nin > 1 && u->in[1] == o0 && transposed_b(u, 1, o0);
            for (int d = 0; d < r; d++)
                perm[d] = pa && pa->type == MN_ATTR_INTS && pa->n == r ? pa->ints[d] : r - 1 - d;
            int q = -1; /* the output axis the input packs (its last) */
            for (int d = 0; d < r; d++) q = perm[d] == r - 1 ? d : q;
            bool xin_ok =
                has[x0->id] ? (xin = L[x0->id], true) : plan_layout_canonical(&x0->type, x0->dtype, &c->machine, &xin);
            /* (read by a convolution, through a view or not: the channels it packs stay packed, the
             * convolution's tiles a move of whole addresses away) */
            MNNode *u2 = u && mn_op_has(u->op, MN_VIEW) && u->out[0] && u->out[0]->nuses == 1 ? user[u->out[0]->id] : u;
            bool conv = o0->nuses == 1 && u2 && plan_tile_op(u2->op);
            if (conv && xin_ok && (!pa || (pa->type == MN_ATTR_INTS && pa->n == r)) &&
                layout_permute(&xin, perm, r, &pl) && layout_valid(&pl, &c->machine, 4, verr, sizeof verr)) {
                L[o0->id] = pl;
                kept_views++;
                continue;
            }
            if (!kt && !conv && xin_ok && (!pa || (pa->type == MN_ATTR_INTS && pa->n == r)) &&
                layout_permute(&xin, perm, r, &pl) && !last_packed(&pl) &&
                plan_turned_out(&L[o0->id], q, &c->machine, 4, &yl) && plan_turned_in(&yl, q, &c->machine, 4, &xl2)) {
                L[o0->id] = yl;
                ir_attr_set_int(g, n, "turned", 1);
                turned++;
                continue;
            }
        }
        /* a reduction over axes spread over the tree: its output alike there (reduced_layout) */
        bool red[MN_MAX_RANK];
        MNLayout rl, xl; /* (a graph input not laid out yet takes the canonical layout: no demand on it) */
        char rerr[200];
        bool xl_ok = x0 && (has[x0->id] ? (xl = L[x0->id], true)
                                        : lpz && x0->is_input && !x0->producer && !x0->konst &&
                                              plan_layout_canonical(&x0->type, x0->dtype, &c->machine, &xl));
        if ((n->op == OP_ReduceSum || n->op == OP_ReduceMean || n->op == OP_ReduceMax || n->op == OP_ReduceMin) &&
            xl_ok && o0 && has[o0->id] && !banded[x0->id] && x0->dtype == MN_DT_Float && o0->dtype == MN_DT_Float &&
            x0->type.rank <= MN_MAX_RANK && infer_reduce_mask(g, n, red) &&
            reduced_layout(&xl, o0, red, ir_attr_int(n, "keepdims", 1) != 0, &rl) &&
            layout_valid(&rl, &c->machine, 4, rerr, sizeof rerr)) {
            L[o0->id] = rl;
            continue;
        }
        /* a view off the tiles whose only reader is a Transpose (ViT's patch embedding: the
         * image's pixels become a sequence of tokens) is laid out as that Transpose's
         * canonical output permuted back: the Transpose then keeps every element where it is,
         * and the view moves each pixel's packed channels whole to its token's MAB
         * (emitter/blockmove.c) instead of two moves that each turn the channels around */
        MNNode *t = o0 ? user[o0->id] : NULL;
        if (mn_op_has(n->op, MN_VIEW) && t && t->op == OP_Transpose && x0 && has[x0->id] && banded[x0->id] &&
            has[o0->id] && o0->nuses == 1 && !o0->is_output && t->out[0] && has[t->out[0]->id] &&
            x0->dtype == o0->dtype) {
            const MNAttr *pa = ir_attr(t, "perm");
            int r = o0->type.rank;
            int64_t inv[LAYOUT_MAX_RANK];
            MNLayout tc, back;
            char err[200];
            if (pa && pa->type == MN_ATTR_INTS && pa->n == r) {
                for (int d = 0; d < r; d++) inv[pa->ints[d]] = d;
                if (plan_layout_canonical(&t->out[0]->type, o0->dtype, &c->machine, &tc) &&
                    layout_permute(&tc, inv, r, &back) &&
                    layout_valid(&back, &c->machine, mn_dtype_bytes(o0->dtype), err, sizeof err)) {
                    L[o0->id] = back;
                    continue;
                }
            }
        }
        /* a view that would make another axis the packed one (a convolution's rows back to a
         * sequence) and is too large for a gather keeps every element where it is: the switch a
         * reader wants then turns blocks inside each MAB (step 3) */
        if (mn_op_has(n->op, MN_VIEW) && x0 && o0 && has[x0->id] && has[o0->id] && x0->dtype == MN_DT_Float &&
            o0->dtype == MN_DT_Float && !turned_out(x0) && layout_reshape(&L[x0->id], &o0->type, &vk) &&
            plan_slot_axis(&vk) >= 0 && plan_slot_axis(&L[o0->id]) >= 0 &&
            plan_slot_axis(&vk) != plan_slot_axis(&L[o0->id]) &&
            !plan_gather_fits(g, &c->machine, o0->type.rank, o0->type.dims) &&
            layout_valid(&vk, &c->machine, 4, verr, sizeof verr)) {
            L[o0->id] = vk;
            kept_views++;
            continue;
        }
        /* a Transpose or a view of a value spread over the L2Bs keeps every element where it
         * is (its input's digits permuted or regrouped, the emitter copies long words): a
         * layout of its own would move the data across L2Bs and change its MAB, a move only a
         * trip through the PDM and a gather could make. Attention's head split and merge at
         * batch > 1 (the batch over the L2Bs) stay on their L2Bs so. */
        if ((n->op == OP_Transpose || mn_op_has(n->op, MN_VIEW)) && x0 && o0 && has[x0->id] && has[o0->id] &&
            x0->dtype == o0->dtype && !banded[x0->id] && layout_extent(&L[x0->id], LV_L2B) > 1) {
            const MNAttr *pa = ir_attr(n, "perm");
            int r = x0->type.rank;
            MNLayout kl;
            char err[200];
            bool ok = n->op == OP_Transpose ? (!pa || (pa->type == MN_ATTR_INTS && pa->n == r)) &&
                                                  layout_permute(&L[x0->id], pa ? pa->ints : NULL, r, &kl)
                                            : layout_reshape(&L[x0->id], &o0->type, &kl);
            if (ok && !last_packed(&kl)) ok = repack_last(&kl, o0->dtype, &kl);
            if (ok && layout_valid(&kl, &c->machine, mn_dtype_bytes(o0->dtype), err, sizeof err)) {
                L[o0->id] = kl;
                kept_views++;
                continue;
            }
        }
        /* an elementwise op keeps the tiles of an input of its shape (the finest) */
        int tin_k = elementwise(n) && n->nout == 1 && n->out[0] && has[n->out[0]->id]
                        ? finest_tiles(n, n->nin, n->out[0], banded, L, &c->machine, hint)
                        : -1;
        if (tin_k >= 0) {
            L[n->out[0]->id] = L[n->in[tin_k]->id];
            banded[n->out[0]->id] = true;
            continue;
        }
        /* an elementwise op keeps the layout of an input of its shape that is not canonical
         * (a product's rows, heads on their L1Bs): its operands are then read where they are */
        if (elementwise(n) && n->nout == 1 && o0 && has[o0->id]) {
            bool kept = false;
            int full = 0; /* (a turned input is kept only by an op of one operand of its shape) */
            for (int k = 0; k < n->nin; k++)
                full += n->in[k] && !n->in[k]->konst && same_dims(&n->in[k]->type, &o0->type);
            for (int k = 0; k < n->nin && !kept; k++) {
                MNValue *v = n->in[k];
                if (!v || !has[v->id] || v->konst || !same_dims(&v->type, &o0->type) || v->dtype != o0->dtype ||
                    (turned_out(v) && full > 1))
                    continue;
                if (!layout_same_placement(&L[v->id], &L[o0->id])) L[o0->id] = L[v->id], kept = true;
                break;
            }
            if (kept) continue;
        }
        MNStencil st;
        MNLayout sin, sout;
        if (plan_stencil_node(n, &c->machine, &st, &sin, &sout) && has[n->out[0]->id]) {
            L[n->out[0]->id] = sout; /* its input is demanded in bands too (step 3) */
            stencils++;
            continue;
        }
        if (moves(n) && x0 && o0 && has[x0->id] && has[o0->id] && (L[x0->id].bcast & (1u << LV_L2B)) &&
            layout_extent(&L[o0->id], LV_L2B) > 1) {
            /* data alike on every L2B stays so: moved within each L2B (emitter/rowmove.c)
             * rather than spread over the L2Bs, which would cross groups */
            MNLayout l;
            if (alike_on_l2bs(&o0->type, o0->dtype, &c->machine, &l)) L[o0->id] = l;
        }
        int nl = window_leading(g, n);
        MNValue *x = nl ? n->in[0] : NULL;
        MNLayout ref;
        /* (a turned Transpose's output is read canonical by such nodes: step 3 switches it) */
        if (!x || !(has[x->id] && !turned_out(x) ? (ref = L[x->id], true)
                                                 : plan_layout_canonical(&x->type, x->dtype, &c->machine, &ref)))
            continue;
        MNValue *ro = n->out[0];
        MNLayout heads;
        if (n->op == OP_MatMul && !x->konst &&
            heads_a(n, &x->type, x->dtype, &c->machine, has[x->id] ? &ref : NULL, &heads)) {
            L[x->id] = ref = heads; /* attention's heads on the L1Bs, from A's producer (or the host) on */
            has[x->id] = true;
        }
        MNLayout sa; /* (an A to be replicated on every L2B, split_a: the output rows where that puts them) */
        if ((n->op == OP_MatMul || (n->op == OP_Gemm && !ir_attr_int(n, "transA", 0))) &&
            split_a(n, &x->type, x->dtype, &c->machine, &sa))
            ref = sa;
        if ((n->op == OP_MatMul || (n->op == OP_Gemm && !ir_attr_int(n, "transA", 0))) && ro && has[ro->id] &&
            product_rows(&ref, &ro->type, &L[ro->id])) { /* on A's rows, however few places they take */
            aligned++;
            continue;
        }
        if ((n->op == OP_Softmax || n->op == OP_LogSoftmax || n->op == OP_LayerNormalization) &&
            nl == x->type.rank - 1 && ro && has[ro->id] && same_dims(&ro->type, &x->type) && ro->dtype == x->dtype &&
            plan_layout_rows(&ref, x->type.dims[nl])) {
            L[ro->id] = ref; /* each row folded on its MAB, written where it was read (emitter/rows.c) */
            aligned++;
            continue;
        }
        if (mn_op_has(n->op, MN_REDUCE) && nl == x->type.rank - 1 && ro && has[ro->id] &&
            ro->type.rank == x->type.rank && plan_layout_rows(&ref, x->type.dims[nl])) {
            /* a row's result in every word of its row's MAB, as an elementwise op reading it
             * beside the rows wants it (emitter/rows.c writes it so) */
            broadcast_layout(&ref, &ro->type, &L[ro->id]);
            aligned++;
            continue;
        }
        for (int k = 0; k < n->nout; k++) {
            MNValue *o = n->out[k];
            MNLayout al;
            if (!o || !has[o->id] || !canonical_aligned(&o->type, o->dtype, &c->machine, &ref, nl, &al)) continue;
            if (!layout_same_placement(&al, &L[o->id])) aligned++;
            L[o->id] = al;
        }
    }
    /* 2. Gene hints (lpz): a demand on a value with one consumer whose producer is
     * elementwise is granted at the producer, and handed on to its inputs; one whose
     * producer only moves data (a Transpose, a Reshape) is granted too: the move writes the
     * demanded layout itself, instead of a layout the switch after it moves again
     * (attention's heads, split for a batch spread over the L2Bs, reach the product's
     * layout in one row move) */
    int genes = 0;
    if (lpz)
        for (int i = g->nnodes - 1; i >= 0; i--) {
            MNNode *n = g->nodes[i];
            for (int k = 0; k < n->nin; k++) {
                MNValue *v = n->in[k];
                MNLayout want;
                if (!v || v->nuses != 1 || !v->producer || !(elementwise(v->producer) || moves(v->producer)) ||
                    v->is_output || turned_out(v)) /* (a turned Transpose writes its own layout, turn_plan.c) */
                    continue;
                if (!plan_layout_demand(n, k, n->nout && n->out[0] && has[n->out[0]->id] ? &L[n->out[0]->id] : NULL,
                                        &c->machine, &want))
                    continue;
                if (has[v->id] && layout_same_placement(&L[v->id], &want)) continue;
                if (moves(v->producer) && (want.bcast & (1u << LV_MAB)))
                    continue; /* (a table alike on every MAB, a product's B: its own forms, step 3) */
                char err[200];
                if (!layout_valid(&want, &c->machine, mn_dtype_bytes(v->dtype), err, sizeof err)) continue;
                bool fits = true; /* an elementwise producer's operands must take it too (broadcast over it) */
                for (int j = 0; elementwise(v->producer) && j < v->producer->nin && fits; j++) {
                    const MNValue *a = v->producer->in[j];
                    MNLayout al;
                    if (a && plan_layout_demand(v->producer, j, &want, &c->machine, &al))
                        fits = layout_valid(&al, &c->machine, mn_dtype_bytes(a->dtype), err, sizeof err);
                }
                if (!fits) continue;
                L[v->id] = want;
                has[v->id] = true;
                v->gene = arena_printf(g->arena, "[%s.%d,]", n->op_type, k);
                genes++;
            }
        }
    /* 3. satisfy every demand: adopt it (a parameter without a layout yet), or switch */
    int switches = 0;
    double cost = 0;
    int nn = g->nnodes;
    int nins = 0;
    for (int i = 0; i < nn; i++) nins += g->nodes[i]->nin;
    MNNode **order = ARENA_ARRAY(g->arena, MNNode *, nn + 4 * nins + 1); /* (up to four switches an input) */
    int w = 0;
    for (int i = 0; i < nn; i++) {
        MNNode *n = g->nodes[i];
        const MNLayout *outl = n->nout && n->out[0] && has[n->out[0]->id] ? &L[n->out[0]->id] : NULL;
        for (int k = 0; k < n->nin; k++) {
            MNValue *v = n->in[k];
            MNLayout want;
            if (!v || v->id >= nv) continue;
            if (!plan_layout_demand(n, k, outl, &c->machine, &want) &&
                !(turned_out(v) && !elementwise(n) && !moves(n) && !v->is_output &&
                  plan_layout_canonical(&v->type, v->dtype, &c->machine, &want)))
                continue; /* (a turned Transpose's output: its other readers take it canonical) */
            char err[200];
            if (!layout_valid(&want, &c->machine, mn_dtype_bytes(v->dtype), err, sizeof err)) continue;
            if (!has[v->id]) { /* free: the host lays the parameter out */
                L[v->id] = want;
                has[v->id] = true;
                continue;
            }
            if (layout_same_placement(&L[v->id], &want)) continue;
            MNLayout via, kept;
            const MNLayout *from = &L[v->id];
            bool tb = transposed_b(n, k, v), two;
            if (tb && has[v->producer->in[0]->id] &&
                layout_permute(&L[v->producer->in[0]->id], ir_attr(v->producer, "perm")->ints, v->type.rank, &kept))
                from = &kept; /* (what the Transpose moves: its input's elements) */
            two = l2b_first(from, &want, &via) &&
                  layout_valid(&via, &c->machine, mn_dtype_bytes(v->dtype), err, sizeof err) &&
                  !layout_same_placement(&via, &want) && !layout_same_placement(&via, from);
            if (tb && !two) { /* the Transpose moves its data straight into B's layout */
                L[v->id] = want;
                continue;
            }
            if (tb) L[v->id] = *from; /* its elements kept where they are, switched in two steps */
            if (two) { /* first across the L2Bs, then within them */
                v = add_switch(c, v, &via, switches++, &order[w++]);
                cost +=
                    plan_switch_cycles(&c->machine, from, &via, layout_num_lw(&via, c->machine.address_alignment_lw));
                from = &via;
            }
            /* a switch that makes another axis the packed one, too large for a gather: to the layout
             * whose 8 x 8 blocks turn inside each MAB into one a move of whole addresses makes the
             * wanted (turn_plan.c; each step moves data by bounded pieces) */
            MNLayout tx, ty;
            int qa = plan_slot_axis(from);
            const unsigned MT = 1u << LV_MAB | 1u << LV_L1B; /* (a B alike on every MAB: rowmove.c turns it) */
            if (v->dtype == MN_DT_Float && qa >= 0 && plan_slot_axis(&want) >= 0 && qa != plan_slot_axis(&want) &&
                !(want.bcast & MT) && !plan_gather_fits(g, &c->machine, v->type.rank, v->type.dims) &&
                plan_turned_out(&want, qa, &c->machine, 4, &ty) && plan_turned_in(&ty, qa, &c->machine, 4, &tx)) {
                if (!layout_same_placement(&tx, from)) v = add_switch(c, v, &tx, switches++, &order[w++]);
                v = add_switch(c, v, &ty, switches++, &order[w++]);
                turned++;
                if (layout_same_placement(&ty, &want)) {
                    n->in[k] = v;
                    continue;
                }
                from = &ty;
            }
            n->in[k] = add_switch(c, v, &want, switches++, &order[w++]);
            cost += plan_switch_cycles(&c->machine, from, &want, layout_num_lw(&want, c->machine.address_alignment_lw));
        }
        order[w++] = n;
    }
    g->nnodes = 0;
    for (int i = 0; i < w; i++) g->nodes[g->nnodes++] = order[i];
    /* 4. record */
    int laid = 0;
    int64_t total = 0, maxlw = 0;
    for (int i = 0; i < nv; i++) {
        MNValue *v = g->values[i];
        if (!has[i]) {
            if (!v->nuses && !v->producer) continue;
            if (!plan_layout_canonical(&v->type, v->dtype, &c->machine, &L[i])) {
                if (v->type.rank > LAYOUT_MAX_RANK && mn_dtype_bytes(v->dtype)) {
                    free(L);
                    free(has);
                    free(banded);
                    free(user);
                    free(rows);
                    return diag_error(&c->diag, DIAG_UNSUPPORTED,
                                      "%s: value '%s': rank %d is more than the layouts take (%d)", g->file, v->name,
                                      v->type.rank, LAYOUT_MAX_RANK);
                }
                continue;
            }
        }
        char err[300];
        if (!layout_valid(&L[i], &c->machine, mn_dtype_bytes(v->dtype), err, sizeof err))
            die("layout of '%s' is invalid: %s", v->name, err);
        plan_set_layout(c, v, &L[i]);
        laid++;
        total += v->num_lw;
        if (v->num_lw > maxlw) maxlw = v->num_lw;
    }
    free(L);
    free(has);
    free(banded);
    free(user);
    free(rows);
    ir_recount_uses(g);
    mn_figure(c, "values_laid_out", laid);
    mn_figure(c, "layout_switches", switches);
    mn_figure(c, "layout_switch_cycles", (int64_t)(cost + 0.5));
    mn_figure(c, "gene_hints_granted", genes);
    mn_figure(c, "window_outputs_aligned", aligned);
    mn_figure(c, "stencils", stencils);
    mn_figure(c, "views_kept_in_place", kept_views);
    mn_figure(c, "transposes_turned", turned);
    mn_figure(c, "convolutions_on_tiles", tiled);
    mn_figure(c, "resizes_on_tiles", resized);
    mn_figure(c, "num_lw_total", total);
    mn_figure(c, "num_lw_max", maxlw);
    mn_log(c, 0,
           "layouts (%s): %d values, %d switches costing about %.0f cycles, %d gene hints; %lld long words per PE in "
           "all, largest %lld",
           lpz ? "lpz" : "naive", laid, switches, cost, genes, (long long)total, (long long)maxlw);
    return true;
}

/* The demand of node n on input k as the planner enforces it: false when n has none or
 * when the demanded layout is not valid on machine m (the planner then leaves the input
 * as it is). */
static bool enforced_demand(const MNNode *n, int k, const MNMachine *m, MNLayout *want) {
    MNLayout outl;
    char err[200];
    const MNValue *o = n->nout ? n->out[0] : NULL;
    bool has_out = o && layout_get(o, &outl);
    if (!plan_layout_demand(n, k, has_out ? &outl : NULL, m, want)) return false;
    return layout_valid(want, m, mn_dtype_bytes(n->in[k]->dtype), err, sizeof err);
}

/* Does n read or write a value cut over time? Then n is a split or concat, or a node
 * Time-Slice had to leave whole; such a node cannot run in LM at all (location_sliced
 * counts it), and its demands are only meaningful once it is sliced. */
static bool on_timed(const MNNode *n) {
    for (int k = 0; k < n->nin + n->nout; k++) {
        const MNValue *v = k < n->nin ? n->in[k] : n->out[k - n->nin];
        if (v && layout_timed(v)) return true;
    }
    return false;
}

bool plan_layout_demands_hold(const MNGraph *g, const MNMachine *m, char *err, size_t errlen) {
    for (int i = 0; i < g->nnodes; i++) {
        const MNNode *n = g->nodes[i];
        if (on_timed(n)) continue;
        for (int k = 0; k < n->nin; k++) {
            const MNValue *v = n->in[k];
            MNLayout want, have;
            if (!v || !enforced_demand(n, k, m, &want)) continue;
            if (!layout_get(v, &have)) {
                snprintf(err, errlen, "node '%s': input '%s' has no readable layout", n->name, v->name);
                return false;
            }
            if (!layout_same_placement(&have, &want)) {
                MNBuf b = {0};
                layout_print(&want, &b);
                snprintf(err, errlen, "node '%s' wants input '%s' as %s, it is %s", n->name, v->name, b.data,
                         v->layout);
                buf_free(&b);
                return false;
            }
        }
    }
    return true;
}

int plan_layout_meet(MNCompile *c, MNNode *n, MNNode **sw, double *cost) {
    MNGraph *g = c->g;
    int nsw = 0;
    if (on_timed(n)) return 0;
    for (int k = 0; k < n->nin; k++) {
        MNValue *v = n->in[k];
        MNLayout want, have;
        if (!v || !enforced_demand(n, k, &c->machine, &want)) continue;
        /* the same placement is enough, unless v was laid out for a whole value this
         * slice copy no longer needs (a broadcast operand at the full output's
         * strides) and does not fit LM while the demanded layout does */
        int64_t cap = machine_lm_cap(&c->machine);
        bool shrink = v->num_lw > cap && layout_num_lw(&want, c->machine.address_alignment_lw) <= cap;
        if (layout_get(v, &have) && layout_same_placement(&have, &want) && !shrink) continue;
        if (v->producer && v->producer->op == OP_MNCoreInputSplit) { /* a split writes its pieces in any layout */
            plan_set_layout(c, v, &want);
            continue;
        }
        /* one re-laid copy per value and layout, shared by every slice copy that wants
         * it: found again by a name that carries a hash of the layout */
        MNBuf lb = {0};
        layout_print(&want, &lb);
        uint32_t hsh = 2166136261u;
        for (size_t i = 0; i < lb.len; i++) hsh = (hsh ^ (uint8_t)lb.data[i]) * 16777619u;
        buf_free(&lb);
        const char *nm = arena_printf(g->arena, "%s_L%08x", v->name, hsh);
        MNValue *prev = ir_value_lookup(g, nm);
        if (prev) {
            n->in[k] = prev;
            continue;
        }
        if (v->konst && !v->producer && !v->is_input) { /* a parameter: the host writes it in that layout too */
            MNValue *p = ir_value_new(g, nm);
            MNValue keep = *p;
            *p = *v;
            p->name = keep.name;
            p->id = keep.id;
            p->nuses = 0;
            p->is_output = false;
            plan_set_layout(c, p, &want);
            n->in[k] = p;
            continue;
        }
        MNNode *s = ir_node_new(g, "MNCoreLayoutSwitch", 1, 1);
        s->name = arena_printf(g->arena, "%s_switch_for_%s", v->name, n->name);
        s->domain = "mncore";
        s->in[0] = v;
        MNValue *o = ir_value_new(g, nm);
        o->type = v->type;
        o->dtype = v->dtype;
        o->loc_kind = MN_LOC_KIND_LM;
        o->producer = s;
        s->out[0] = o;
        plan_set_layout(c, o, &want);
        n->in[k] = o;
        if (cost && layout_get(v, &have)) *cost += plan_switch_cycles(&c->machine, &have, &want, o->num_lw);
        sw[nsw++] = s;
    }
    return nsw;
}

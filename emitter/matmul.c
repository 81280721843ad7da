/* MatMul and Gemm on the MAB matrix unit (float32).
 *
 * fmwrite loads an 8 x 8 block of B into each MAB's matrix register (rows R..R+3 from
 * the 4 cycles of a step, each PE giving two floats of a row), and fmmul / fmfma
 * multiply it by 4 rows of A a step (each row's 8 K values are the two floats of each of
 * the MAB's 4 PEs), giving 8 outputs per row on those same PEs. So this path needs the
 * layouts the layout planner demands for the matrix unit (planners/layout_plan.c): A and
 * the output with K and N packed over W and the 4 PEs like a canonical last dimension,
 * the rows on the same MAB, L1B and L2B in A and in the output; B (K, N) with K packed
 * the same way and replicated on every MAB. Then every MAB computes its own rows and no
 * data crosses PEs. It is checked element by element from the layouts; a node that does
 * not meet it takes the vector path (window.c).
 *
 * Row i of the register holds the B column whose output the canonical packing puts on
 * PE i / 2, slot i % 2 (column 8 nb + 4 (i % 2) + i / 2 of block nb), so results land
 * in the output's layout directly. Partial sums over the K blocks accumulate in GRF0, a
 * chunk of rows at a time: an LM accumulator would need two idle steps between an
 * output's write and its next read (LM read-after-write is per bank), GRF's is per word.
 * Where 8 does not divide K, a packed K's padding slots hold whatever their long words
 * held (a layout never promises zeros there), and a product would add them in: A's and
 * B's are zeroed first (pad_k). A Gemm's
 * bias over N (beta 1), packed like the output and on every MAB, is the first K block's
 * addend: its long word of each N block staged in GRF1, whose read port the products'
 * steps leave free (where a caller keeps its own values there, or over L2Bs, it is added
 * to the sums before they are stored, or to the gathered output).
 *
 * A batched B (MatMul of rank 3 or more, attention's K and V) gives one table of addresses
 * per batch: a slot of rows (one address on every MAB) takes the table of its rows'
 * batch, which must lie at the same addresses on each of their MABs (the layout planner
 * puts B's batches on the levels the output's batches are on, replicated over the rest),
 * and the slots of one table run together after its blocks are loaded.
 *
 * A B too large to replicate in LM, a constant or a graph input (the host writes either in
 * any layout), stays in DRAM (the layout planner marks the product
 * b_streamed and lays B out in groups of 16 columns whose K blocks lie together) and is
 * streamed: panel by panel (a group of N blocks and a run of K blocks, one range of B's
 * addresses of at most a quarter of LM0) it comes down the tree into an LM0 scratch of
 * every PE (one DRAM read per group, broadcast to every MAB), and the products of the
 * panel run as above. A group of columns takes all of K in one panel where it fits;
 * otherwise its sums over the panels before are added from the output, where each panel
 * leaves them. So B of any size is read once, and a product's only LM cost is A, the
 * output and the scratch.
 *
 * A streamed product whose A (so its output) is alike on every L2B would compute all of it
 * on every L2B. Where B's columns fall into equal slices one per L2B, alike in their
 * addresses but for an offset (the column groups of its panels, N a multiple of 32 per L2B),
 * each L2B streams only its own slice, from its group's DRAM (one mvp per L2B instead of
 * one mvb2 per group), and computes that slice's columns into an LM0 scratch at the same
 * addresses on every L2B; an all-gather over the L2Bs (allgather.c) then gives every L2B
 * every slice at the output's addresses. The matrix unit's work on each L2B and the DRAM
 * read in each group fall by the number of L2Bs (8 and 4 on mncore2), for a gather of the
 * output; taken where the estimate says it pays (split_plan).
 */
#include "emit_impl.h"
#include "matmul.h"
#include "layout.h"
#include "memo.h"
#include "ops.h"
#include <stdlib.h>
#include <string.h>

void emit_matrix_plan_free(MatPlan *p) { free(p->aA), free(p->aY), free(p->aB), free(p->aC), free(p->sB); }

static bool parse(const MNValue *v, MNLayout *l) { return layout_get(v, l) && layout_extent(l, LV_TIME) <= 1; }

static const unsigned TREE = 1u << LV_MAB | 1u << LV_L1B | 1u << LV_L2B;

/* the placement of element k of a packed dimension: PE k % 4, slot (k / 4) % 2 */
static bool packed(const MNPlace *p, int64_t k) { return p->c[LV_PE] == k % 4 && p->c[LV_W] == (k / 4) % 2; }
static bool same_tree(const MNPlace *a, const MNPlace *b) {
    return a->c[LV_MAB] == b->c[LV_MAB] && a->c[LV_L1B] == b->c[LV_L1B] && a->c[LV_L2B] == b->c[LV_L2B];
}

/* What index k along axis ax adds to an element's place (a place is the sum of each
 * axis's part): a row's places are its first element's plus these, without a layout
 * walk per element of every row. */
static MNPlace *axis_part(const MNLayout *l, int ax, int64_t n) {
    MNPlace *t = xmalloc(sizeof(MNPlace) * (size_t)(n > 0 ? n : 1));
    int64_t idx[LAYOUT_MAX_RANK] = {0};
    for (int64_t k = 0; k < n; k++) {
        idx[ax] = k;
        layout_place(l, idx, &t[k]);
    }
    return t;
}

/* the long word of each block of 8 along the last axis of a row whose first element is
 * at base, packed, on the MAB, L1B and L2B of t0, inside nlw; false if not */
static bool row_blocks(const MNPlace *base, const MNPlace *part, int64_t n, const MNPlace *t0, int64_t nlw,
                       int64_t *blk) {
    for (int64_t k = 0; k < n; k++) {
        MNPlace q;
        for (int lv = 0; lv < LV_COUNT; lv++) q.c[lv] = base->c[lv] + part[k].c[lv];
        if (!packed(&q, k) || !same_tree(&q, t0) || q.c[LV_ADDR] >= nlw) return false;
        if (k % 8 == 0)
            blk[k / 8] = q.c[LV_ADDR];
        else if (blk[k / 8] != q.c[LV_ADDR])
            return false;
    }
    return true;
}

static const char *plan_layouts(MatPlan *p);

typedef struct {
    const char *why; /* a string literal */
    int64_t nslot, nbt, split, sdelta;
} PlanHead;

static void split_plan(const MNCompile *c, MatPlan *p);

static const char *plan_memo(const MNCompile *c, MatPlan *p) {
    EmMemo *mm = c->check_memo;
    if (!mm) {
        const char *why = plan_layouts(p);
        if (!why) split_plan(c, p);
        return why;
    }
    MNBuf k = {0};
    buf_printf(&k, "matmul|%d|%d|%lld|%lld|%lld", p->transb, p->stream, (long long)p->K, (long long)p->N,
               (long long)p->rows);
    emit_value_key(&k, p->a);
    emit_value_key(&k, p->b);
    emit_value_key(&k, p->y);
    if (p->c) emit_value_key(&k, p->c);
    size_t len;
    const char *got = memo_get(mm, k.data, &len);
    size_t nC = p->c ? (size_t)p->nb : 0;
    if (got) {
        PlanHead h;
        memcpy(&h, got, sizeof h);
        size_t nA = (size_t)(h.nslot * p->kb), nY = (size_t)(h.nslot * p->nb), nS = h.nbt > 1 ? (size_t)h.nslot : 0;
        size_t nB = (size_t)(p->kb * p->N * (h.nbt > 1 ? h.nbt : 1));
        if (len != sizeof h + sizeof(int64_t) * (h.why ? 0 : nA + nY + nB + nC + nS))
            die("matrix plan memo of %zu bytes", len);
        buf_free(&k);
        if (h.why) return h.why;
        p->nslot = h.nslot;
        p->nbt = h.nbt;
        p->split = h.split;
        p->sdelta = h.sdelta;
        const int64_t *q = (const int64_t *)(got + sizeof h);
        int64_t **dst[5] = {&p->aA, &p->aY, &p->aB, &p->aC, &p->sB};
        size_t cnt[5] = {nA, nY, nB, nC, nS};
        for (int i = 0; i < 5; i++) {
            if (!cnt[i]) continue;
            *dst[i] = xmalloc(sizeof(int64_t) * cnt[i]);
            memcpy(*dst[i], q, sizeof(int64_t) * cnt[i]);
            q += cnt[i];
        }
        return NULL;
    }
    const char *why = plan_layouts(p);
    if (!why) split_plan(c, p); /* (on the plan's tables: once for alike products too) */
    PlanHead h = {why, p->nslot, p->nbt, p->split, p->sdelta};
    size_t nA = (size_t)(h.nslot * p->kb), nY = (size_t)(h.nslot * p->nb), nS = h.nbt > 1 ? (size_t)h.nslot : 0;
    size_t nB = (size_t)(p->kb * p->N * (h.nbt > 1 ? h.nbt : 1));
    size_t n = sizeof h + sizeof(int64_t) * (h.why ? 0 : nA + nY + nB + nC + nS);
    char *val = xmalloc(n);
    memcpy(val, &h, sizeof h);
    if (!h.why) {
        int64_t *q = (int64_t *)(val + sizeof h);
        const int64_t *src[5] = {p->aA, p->aY, p->aB, p->aC, p->sB};
        size_t cnt[5] = {nA, nY, nB, nC, nS};
        for (int i = 0; i < 5; i++)
            if (cnt[i]) {
                memcpy(q, src[i], sizeof(int64_t) * cnt[i]);
                q += cnt[i];
            }
    }
    memo_put(mm, k.data, val, n);
    free(val);
    buf_free(&k);
    return h.why;
}

/* Whether a streamed product splits its columns over the L2Bs (the design comment's last
 * part): A alike on every L2B, B's slices alike but for an offset, each L2B's output blocks
 * in runs of 4 long words, and the estimate of the cycles saved (per L2B, a block's two
 * register writes and a product step per 4 slots, 4 cycles a step) above the gather's
 * (about 16 cycles per output long word of a PE, on mncore2's links). */
static void split_plan(const MNCompile *c, MatPlan *p) {
    const MNMachine *m = &c->machine;
    int64_t S = m->n_l2b;
    MNLayout la;
    p->split = p->sdelta = 0;
    if (!p->stream || p->nbt > 1 || p->acc || !emit_l2b_gather_fits(m) || p->N % (32 * S) || !parse(p->a, &la) ||
        !(la.bcast & 1u << LV_L2B))
        return;
    int64_t Ns = p->N / S, delta = p->aB[Ns] - p->aB[0];
    double saved = 4.0 * (double)(p->kb * p->nb) * (2 + (double)((p->nslot + 3) / 4)) * (double)(S - 1) / (double)S;
    if (delta <= 0 || delta % 16 || saved < 16.0 * (double)(p->nslot * p->nb)) return;
    for (int64_t kb = 0; kb < p->kb; kb++)
        for (int64_t l = 1; l < S; l++)
            for (int64_t col = 0; col < Ns; col++)
                if (p->aB[kb * p->N + l * Ns + col] != p->aB[kb * p->N + col] + l * delta) return;
    for (int64_t s = 0; s < p->nslot; s++)
        for (int64_t j = 0; j < p->nb; j++)
            if (j % 4 && p->aY[s * p->nb + j] != p->aY[s * p->nb + j - 1] + 1) return;
    p->split = S;
    p->sdelta = delta;
}

/* The plan of L2B 0's slice of a split product: its columns of B, its output blocks in the LM0
 * scratch at ys (slot by slot), no bias; and (dst not NULL) where the gather puts each slice */
static void split_sub(const MatPlan *p, int64_t ys, MatPlan *sp, int64_t **dst) {
    int64_t S = p->split, Ns = p->N / S, nbs = p->nb / S, n = p->nslot * nbs;
    *sp = *p;
    sp->N = Ns, sp->nb = nbs, sp->y = NULL, sp->c = NULL, sp->aC = NULL, sp->sB = NULL;
    sp->aB = xmalloc(sizeof(int64_t) * (size_t)(p->kb * Ns));
    for (int64_t kb = 0; kb < p->kb; kb++) memcpy(&sp->aB[kb * Ns], &p->aB[kb * p->N], sizeof(int64_t) * (size_t)Ns);
    sp->aY = xmalloc(sizeof(int64_t) * (size_t)n);
    for (int64_t i = 0; i < n; i++) sp->aY[i] = ys + i;
    if (!dst) return;
    *dst = xmalloc(sizeof(int64_t) * (size_t)(S * n));
    for (int64_t l = 0; l < S; l++)
        for (int64_t s = 0; s < p->nslot; s++)
            memcpy(&(*dst)[l * n + s * nbs], &p->aY[s * p->nb + l * nbs], sizeof(int64_t) * (size_t)nbs);
}

static const char *plan(const MNCompile *c, const MNNode *n, MatPlan *p) {
    memset(p, 0, sizeof *p);
    if (n->nout != 1 || n->nin < 2) return "not a product";
    if (n->op == OP_Gemm) {
        if (ir_attr_int(n, "transA", 0)) return "a transposed A";
        if (ir_attr_float(n, "alpha", 1.0) != 1.0) return "alpha";
        double beta = ir_attr_float(n, "beta", 1.0);
        if (n->nin > 2 && n->in[2] && beta != 0.0) {
            if (beta != 1.0) return "a scaled bias";
            p->c = n->in[2];
        }
        p->transb = ir_attr_int(n, "transB", 0);
    }
    p->a = n->in[0];
    p->b = n->in[1];
    p->y = n->out[0];
    const MNValue *vs[3] = {p->a, p->b, p->y};
    p->stream = p->b->loc == MN_LOC_DRAM; /* the location planner left it there: streamed */
    for (int i = 0; i < 3; i++)
        if (!(emit_in_lm(vs[i]) || (i == 1 && p->stream)) || vs[i]->dtype != MN_DT_Float) return "not float LM values";
    int ra = p->a->type.rank, ry = p->y->type.rank, rb = p->b->type.rank;
    if (rb < 2 || ra < 2 || ry != ra || rb > ra || (rb > 2 && (p->transb || p->stream)))
        return "a B of rank other than 2 (or a batched one laid out otherwise)";
    for (int i = 0; i < rb - 2; i++) /* a batched B: its batch axes broadcast to the output's */
        if (p->b->type.dims[i] != 1 && p->b->type.dims[i] != p->y->type.dims[ry - rb + i]) return "a B batch";
    p->K = p->a->type.dims[ra - 1];
    p->N = p->y->type.dims[ry - 1];
    if (p->K == 0 || p->N == 0) return "an empty product";
    p->kb = (p->K + 7) / 8; /* a last block of fewer: its padding lanes zeroed first (pad_k) */
    p->nb = (p->N + 7) / 8;
    p->rows = 1;
    for (int d = 0; d < ra - 1; d++) p->rows *= p->a->type.dims[d];
    return plan_memo(c, p);
}

/* the rest of the plan hangs on layouts and shapes only: alike products share it */
static const char *plan_layouts(MatPlan *p) {
    int ra = p->a->type.rank;
    MNLayout la, lb, ly;
    if (!parse(p->a, &la) || !parse(p->b, &lb) || !parse(p->y, &ly)) return "sliced or unparsed layouts";
    int rb = p->b->type.rank;
    int64_t nbt = ir_shape_numel(&p->b->type) / (p->K * p->N), KN = p->kb * p->N;
    if (rb == 2 && (lb.bcast & TREE) != TREE) return "B not on every MAB";
    if ((la.bcast & TREE) != (ly.bcast & TREE)) return "A and the output replicated differently";
    /* B: K packed, one long word per (K block, column) of each batch (a table), each batch
     * on one MAB, L1B and L2B (or replicated over them: tb) */
    p->aB = xmalloc(sizeof(int64_t) * (size_t)(KN * nbt));
    MNPlace *tb = xmalloc(sizeof(MNPlace) * (size_t)nbt);
    MNPlaceWalk wb; /* B in its own row-major order: K ascending within each block either way */
    place_walk_start(&wb, &lb);
    for (int64_t e = 0; e < p->K * p->N * nbt; e++, place_walk_next(&wb)) {
        int64_t k = wb.idx[rb - (p->transb ? 1 : 2)], col = wb.idx[rb - (p->transb ? 2 : 1)], t = e / (p->K * p->N);
        int64_t *s = &p->aB[t * KN + k / 8 * p->N + col];
        if (!packed(&wb.p, k)) return free(tb), "B's K not packed";
        if (e % (p->K * p->N) == 0)
            tb[t] = wb.p;
        else if (!same_tree(&wb.p, &tb[t]))
            return free(tb), "a B batch spread over MABs";
        if (k % 8 == 0)
            *s = wb.p.c[LV_ADDR];
        else if (*s != wb.p.c[LV_ADDR])
            return free(tb), "B's K not packed";
    }
    /* batches with the same addresses share one table */
    int64_t *canon = xmalloc(sizeof(int64_t) * (size_t)nbt);
    for (int64_t t = 0; t < nbt; t++) {
        canon[t] = t;
        for (int64_t u = 0; u < t && canon[t] == t; u++)
            if (canon[u] == u && !memcmp(&p->aB[t * KN], &p->aB[u * KN], sizeof(int64_t) * (size_t)KN)) canon[t] = u;
    }
    p->nbt = nbt;
    /* a bias over N: packed like the output's N, on every MAB, L1B and L2B */
    if (p->c) {
        MNLayout lc;
        const MNValue *cv = p->c;
        int rc = cv->type.rank;
        if (!emit_in_lm(cv) || cv->dtype != MN_DT_Float || rc < 1 || cv->type.dims[rc - 1] != p->N ||
            ir_shape_numel(&cv->type) != p->N || !parse(cv, &lc) || (lc.bcast & TREE) != TREE)
            return free(canon), free(tb), "a bias other than one row on every MAB";
        p->aC = xmalloc(sizeof(int64_t) * (size_t)p->nb);
        int64_t idx[LAYOUT_MAX_RANK] = {0};
        MNPlace t0;
        layout_place(&lc, idx, &t0);
        MNPlace *pc = axis_part(&lc, rc - 1, p->N);
        bool ok = row_blocks(&t0, pc, p->N, &t0, cv->num_lw, p->aC);
        free(pc);
        if (!ok) return free(canon), free(tb), "a bias not packed like the output";
    }
    /* rows: A's and the output's long words per block, on the same MAB, L1B and L2B;
     * one slot per distinct output address (every MAB runs the same addresses) */
    int64_t nY = p->y->num_lw, nA = p->a->num_lw;
    int64_t *slot_of = xmalloc(sizeof(int64_t) * (size_t)(nY + 1));
    for (int64_t i = 0; i < nY; i++) slot_of[i] = -1;
    int64_t *ta = xmalloc(sizeof(int64_t) * (size_t)p->kb), *ty = xmalloc(sizeof(int64_t) * (size_t)p->nb);
    const char *why = NULL;
    int64_t cap = 0;
    MNPlace *pa = axis_part(&la, ra - 1, p->K), *py = axis_part(&ly, ra - 1, p->N);
    int64_t *sB = xmalloc(sizeof(int64_t) * (size_t)(nY + 1));
    for (int64_t r = 0; r < p->rows && !why; r++) {
        int64_t idx[LAYOUT_MAX_RANK], rem = r;
        for (int d = ra - 2; d >= 0; d--) idx[d] = rem % p->a->type.dims[d], rem /= p->a->type.dims[d];
        MNPlace t0, y0;
        idx[ra - 1] = 0;
        layout_place(&la, idx, &t0);
        layout_place(&ly, idx, &y0);
        int64_t bt = 0; /* the row's B batch: B's batch axes aligned right, broadcast where 1 */
        for (int i = 0; i < rb - 2; i++) {
            int64_t dim = p->b->type.dims[i];
            bt = bt * dim + (dim == 1 ? 0 : idx[ra - rb + i]);
        }
        for (int lv = LV_MAB; lv <= LV_L2B && !why; lv++)
            if (!(lb.bcast & (1u << lv)) && tb[bt].c[lv] != t0.c[lv]) why = "a B batch off its rows' MAB";
        bt = canon[bt];
        if (!row_blocks(&t0, pa, p->K, &t0, nA, ta))
            why = "A's K not packed";
        else if (!row_blocks(&y0, py, p->N, &t0, nY, ty))
            why = "the output's N not packed like A's rows";
        if (why) break;
        int64_t s = slot_of[ty[0]];
        if (s < 0) {
            if (p->nslot == cap) {
                cap = cap ? 2 * cap : 64;
                p->aA = xrealloc(p->aA, sizeof(int64_t) * (size_t)(cap * p->kb));
                p->aY = xrealloc(p->aY, sizeof(int64_t) * (size_t)(cap * p->nb));
            }
            s = p->nslot++;
            sB[s] = bt;
            memcpy(&p->aA[s * p->kb], ta, sizeof(int64_t) * (size_t)p->kb);
            memcpy(&p->aY[s * p->nb], ty, sizeof(int64_t) * (size_t)p->nb);
            for (int64_t j = 0; j < p->nb && !why; j++) {
                if (slot_of[ty[j]] >= 0 && slot_of[ty[j]] != s) why = "rows sharing output addresses";
                slot_of[ty[j]] = s;
            }
        } else if (memcmp(&p->aA[s * p->kb], ta, sizeof(int64_t) * (size_t)p->kb) ||
                   memcmp(&p->aY[s * p->nb], ty, sizeof(int64_t) * (size_t)p->nb))
            why = "rows whose A and output addresses differ between MABs";
        else if (sB[s] != bt)
            why = "rows of one address whose B batches lie at different addresses";
    }
    if (!why && nbt > 1) { /* the slots of one B table together, in order of their tables */
        int64_t *ord = xmalloc(sizeof(int64_t) * (size_t)(p->nslot + 1)), n = 0;
        for (int64_t t = 0; t < nbt; t++)
            for (int64_t s = 0; s < p->nslot; s++)
                if (sB[s] == t) ord[n++] = s;
        int64_t *aA = xmalloc(sizeof(int64_t) * (size_t)(p->nslot * p->kb + 1)),
                *aY = xmalloc(sizeof(int64_t) * (size_t)(p->nslot * p->nb + 1));
        p->sB = xmalloc(sizeof(int64_t) * (size_t)(p->nslot + 1));
        for (int64_t i = 0; i < p->nslot; i++) {
            memcpy(&aA[i * p->kb], &p->aA[ord[i] * p->kb], sizeof(int64_t) * (size_t)p->kb);
            memcpy(&aY[i * p->nb], &p->aY[ord[i] * p->nb], sizeof(int64_t) * (size_t)p->nb);
            p->sB[i] = sB[ord[i]];
        }
        free(p->aA), free(p->aY), free(ord);
        p->aA = aA, p->aY = aY;
    }
    if (nbt <= 1) p->nbt = 1;
    free(sB);
    free(canon);
    free(tb);
    free(slot_of);
    free(ta);
    free(ty);
    free(pa);
    free(py);
    return why;
}

/* B's long words that panel q needs, rounded out to the 16 a transfer moves */
static void span(const MatPlan *p, Panel *q) {
    int64_t lo = INT64_MAX, hi = -1;
    for (int64_t kb = q->k0; kb < q->k1; kb++)
        for (int64_t col = 8 * q->j0; col < 8 * q->j1 && col < p->N; col++) {
            int64_t a = p->aB[kb * p->N + col];
            if (a < lo) lo = a;
            if (a > hi) hi = a;
        }
    q->lo = lo / 16 * 16;
    q->hi = (hi + 16) / 16 * 16;
}

/* B's panels, each at most budget long words: the widest groups of N blocks that take
 * all of K, else groups of two (one) blocks with K in runs; their count, 0 when B is laid
 * out so that no panel fits */
static int64_t panels(const MatPlan *p, int64_t budget, Panel **out) {
    int64_t n = 0, cap = 16;
    Panel *q = xmalloc(sizeof(Panel) * (size_t)cap);
    for (int64_t j0 = 0; j0 < p->nb;) {
        int64_t g = 0;
        for (Panel t = {j0, j0 + 1, 0, p->kb, 0, 0}; t.j1 <= p->nb; t.j1++, g++) {
            span(p, &t);
            if (t.hi - t.lo > budget) break;
        }
        int64_t kc = p->kb;
        if (!g) { /* K in runs: halved until every run of the group fits */
            g = p->nb - j0 < 2 ? p->nb - j0 : 2;
            for (bool fit = false; !fit && kc >= 1; kc = fit ? kc : kc / 2) {
                fit = true;
                for (int64_t k0 = 0; k0 < p->kb && fit; k0 += kc) {
                    Panel t = {j0, j0 + g, k0, k0 + kc < p->kb ? k0 + kc : p->kb, 0, 0};
                    span(p, &t);
                    fit = t.hi - t.lo <= budget;
                }
                if (!fit && kc == 1 && g == 2) {
                    g = 1;
                    kc = 2; /* halved to 1 again, for one block */
                }
            }
            if (kc < 1) {
                free(q);
                return 0;
            }
        }
        for (int64_t k0 = 0; k0 < p->kb; k0 += kc) {
            if (n == cap) q = xrealloc(q, sizeof(Panel) * (size_t)(cap *= 2));
            q[n] = (Panel){j0, j0 + g, k0, k0 + kc < p->kb ? k0 + kc : p->kb, 0, 0};
            span(p, &q[n++]);
        }
        j0 += g;
    }
    *out = q;
    return n;
}

static int64_t stream_budget(const MNMachine *m) { return m->lm0_lw / 4 / 16 * 16; }

const char *emit_matrix_why(const MNCompile *c, const MNNode *n, Walk *w) {
    if (n->op != OP_MatMul && n->op != OP_Gemm) return "not a product";
    MatPlan p;
    const char *why = plan(c, n, &p);
    if (!why && p.stream) { /* the scratch a panel needs (and a split's slices), in LM0 while the product runs */
        AppLayoutImage im;
        MNLayout l;
        Panel *q = NULL;
        int64_t S = p.split ? p.split : 1;
        MatPlan sp;
        if (p.split) split_sub(&p, 0, &sp, NULL); /* a split's panels: L2B 0's columns */
        int64_t np = panels(p.split ? &sp : &p, stream_budget(&c->machine), &q), need = 0;
        if (p.split) free(sp.aB), free(sp.aY);
        for (int64_t i = 0; i < np; i++) need = q[i].hi - q[i].lo > need ? q[i].hi - q[i].lo : need;
        if (!emit_image_of(c, p.b, &im, &l) || !im.mab || im.slices != 1)
            why = "a streamed B not held once for every MAB";
        else if (!np || q[np - 1].hi + (S - 1) * p.sdelta > im.n4)
            why = "a streamed B whose panels do not fit a quarter of LM0";
        else if (p.split && emit_lm0_room(c, w, emit_round4(need) + p.nslot * p.nb / S, &w->scr[w->pos]))
            w->msplit[w->pos] = true;
        else if (!emit_lm0_room(c, w, need, &w->scr[w->pos]))
            why = "no LM0 room for a streamed B's panel";
        free(q);
    }
    emit_matrix_plan_free(&p);
    return why;
}

/* 4 long words of value v as word addresses relative to it (of LM0 when v is NULL), the last
 * repeated past n */
static void flat(MNBuf *b, const MNValue *v, const int64_t *lw, int n, int64_t stride) {
    buf_reserve(b, 128); /* a product's every line has one: formatted here, not by buf_printf's five calls */
    char *p = b->data + b->len;
    *p++ = '$';
    for (const char *r = v ? emit_bank_reg(v) : "lm"; *r;) *p++ = *r++;
    if (v) { /* else absolute LM0 words (a scratch) */
        *p++ = '{';
        p = buf_dec(p, (unsigned long long)v->id);
        *p++ = '}';
    }
    for (int c = 0; c < 4; c++)
        *p++ = c ? ',' : '[', p = buf_dec(p, (unsigned long long)(2 * lw[(c < n ? c : n - 1) * stride]));
    *p++ = ']';
    b->len = (size_t)(p - b->data);
    b->data[b->len] = 0;
}

/* " $lr{2 g}v" at o: accumulator slot g's register */
static char *lr(char *o, int64_t g) { return buf_put(buf_int(buf_put(o, " $lr"), 2 * g), "v"); }

/* Register rows R..R+3 of K block kb and N block j into matrix register reg (0 $lx, 1 $ly), no
 * newline: a streamed B's from the LM0 scratch (long word off + B's address), a resident one's
 * relative to B */
static void write_line(Em *e, const MatPlan *p, const int64_t *aB, int64_t kb, int64_t j, int R, int reg, bool scr,
                       int64_t off) {
    int64_t a4[4];
    for (int cy = 0; cy < 4; cy++) { /* register row i: column 8j + 4 (i % 2) + i / 2 */
        int64_t i = R + cy, col = 8 * j + 4 * (i % 2) + i / 2;
        a4[cy] = aB[kb * p->N + (col < p->N ? col : p->N - 1)];
    }
    char *o = buf_put(buf_line(e->b, 128), "fmwrite ");
    if (scr) {
        o = buf_put(o, "$lm");
        for (int cy = 0; cy < 4; cy++) *o++ = cy ? ',' : '[', o = buf_int(o, 2 * (off + a4[cy]));
        *o++ = ']';
        buf_line_end(e->b, o);
    } else {
        buf_line_end(e->b, o);
        flat(e->b, p->b, a4, 4, 1);
    }
    o = buf_put(buf_line(e->b, 16), reg ? " $ly" : " $lx");
    buf_line_end(e->b, buf_dec(o, (unsigned)R));
}

/* The products of K blocks k0..k1-1 of N block j for slots s0..s0+ns-1, the sums in GRF0 (the
 * first block's by fmmul). Each block's two register writes take a step each and
 * each product two (the MAU's 8 x 4 a cycle), so where A's bank is not the one B's writes read
 * (one read port a bank), the blocks alternate $lx and $ly and the next block's writes go into
 * the steps of this block's products: 3 steps a block of one slot group instead of 4. */
/* The bias as the first block's addend (fmfma's C): its long word of each block j staged at GRF1 long word j, whose
 * read port nothing else in the product's steps uses (A's and B's banks are read there); where GRF1 holds fewer, or
 * the caller keeps values of its own there (a convolution on tiles), it is added to the sums after the products, a
 * step and a wait for each block. */
static bool bias_in_product(const Em *e, const MatPlan *p) {
    return p->c && p->grf1_free && p->nb <= e->c->machine.grf1_lw;
}

static void stage_bias(Em *e, const MatPlan *p) {
    for (int64_t j = 0; j < p->nb; j++)
        buf_printf(e->b, "lpassa $%s{%d}%lld $ls%lld\n", emit_bank_reg(p->c), p->c->id, (long long)(2 * p->aC[j]),
                   (long long)(2 * j));
    buf_printf(e->b, "nop\n");
}

static void block_products(Em *e, const MatPlan *p, const int64_t *aB, int64_t j, int64_t k0, int64_t k1, int64_t s0,
                           int64_t ns, bool scr, int64_t off, bool pair, bool bias) {
    if (k0 >= k1) return;
    for (int R = 0; R < 8; R += 4) write_line(e, p, aB, k0, j, R, 0, scr, off), buf_printf(e->b, "\n");
    for (int64_t kb = k0; kb < k1; kb++) {
        int reg = pair ? (int)((kb - k0) % 2) : 0, nw = 0;
        bool next = kb + 1 < k1;
        for (int64_t g = 0; g < ns; g += 4) {
            int k = ns - g < 4 ? (int)(ns - g) : 4;
            bool fma = kb > k0, add = !fma && bias; /* the first block starts from the bias */
            buf_line_end(e->b, buf_put(buf_line(e->b, 16), fma || add ? (reg ? "fmfma $ly " : "fmfma $lx ")
                                                                      : (reg ? "fmmul $ly " : "fmmul $lx ")));
            flat(e->b, p->a, &p->aA[(s0 + g) * p->kb + kb], k, p->kb);
            if (add) /* the bias's long word of block j (staged in GRF1), in every cycle */
                buf_printf(e->b, " $ls%lld", (long long)(2 * j));
            char *o = buf_line(e->b, 64);
            if (fma) o = lr(o, g);
            o = lr(o, g);
            buf_line_end(e->b, o);
            if (pair && next && nw < 2)
                buf_printf(e->b, "; "), write_line(e, p, aB, kb + 1, j, 4 * nw++, !reg, scr, off);
            buf_printf(e->b, "\n");
        }
        for (; next && nw < 2; nw++)
            write_line(e, p, aB, kb + 1, j, 4 * nw, pair ? !reg : 0, scr, off), buf_printf(e->b, "\n");
    }
}

/* The streamed product (the design comment's second part): panel by panel into the
 * LM0 scratch at scr, then the product's steps over the panel's blocks; the first panel of
 * a group of columns stores its sums (and adds the bias), each later one adds them to
 * what the output holds. */
int64_t emit_matrix_panel_need(const MNMachine *m, const MatPlan *p) {
    Panel *q = NULL;
    int64_t np = panels(p, stream_budget(m), &q), need = 0;
    for (int64_t i = 0; i < np; i++) need = q[i].hi - q[i].lo > need ? q[i].hi - q[i].lo : need;
    free(q);
    return np ? need : -1;
}

void emit_matrix_streamed(Em *e, const MatPlan *p, int64_t scr) {
    Panel *q = NULL;
    int64_t np = panels(p, stream_budget(&e->c->machine), &q);
    int64_t G = e->c->machine.grf0_lw / 4 * 4; /* accumulator slots in GRF0 */
    if (G > 256) G = 256;
    /* the outputs' bank read again 3 steps after a store: the scratch is in LM0 */
    bool lm_shared =
        !p->a || !p->y || p->y->loc == p->a->loc || p->y->loc == MN_LOC_LM0 || (p->c && p->y->loc == p->c->loc);
    int64_t delta = p->split ? p->sdelta : 0;
    bool pair = p->a && p->a->loc != MN_LOC_LM0; /* B's panel is in LM0 */
    /* panels of one chunk each are prefetched: the next one's MV runs while the PEs work
     * on this one (its way down the tree waits for them) */
    bool pre = true;
    for (int64_t i = 0; i < np; i++) pre &= q[i].hi - q[i].lo <= emit_stream_chunk(&e->c->machine);
    int tag = pre && np ? emit_stream_issue(e, p->b, q[0].lo, q[0].hi - q[0].lo, 0, delta) : 0;
    if (!p->acc && bias_in_product(e, p)) stage_bias(e, p);
    for (int64_t i = 0; i < np; i++) {
        const Panel *t = &q[i];
        if (pre) {
            emit_stream_land(e, tag, t->hi - t->lo, (int)(i % 2), scr, delta);
            if (i + 1 < np)
                tag = emit_stream_issue(e, p->b, q[i + 1].lo, q[i + 1].hi - q[i + 1].lo, (int)((i + 1) % 2), delta);
        } else
            emit_stream_in(e, p->b, t->lo, t->hi - t->lo, scr, delta);
        bool first = t->k0 == 0 && !p->acc, in_product = first && bias_in_product(e, p);
        for (int64_t s0 = 0; s0 < p->nslot; s0 += G) {
            int64_t ns = p->nslot - s0 < G ? p->nslot - s0 : G;
            for (int64_t j = t->j0; j < t->j1; j++) {
                block_products(e, p, p->aB, j, t->k0, t->k1, s0, ns, true, scr - t->lo, pair, in_product);
                buf_printf(e->b, "nop\n"); /* the last sums are read 2 steps after their write */
                for (int64_t g = 0; g < ns && !in_product; g += 4) {
                    int k = ns - g < 4 ? (int)(ns - g) : 4;
                    if (first && p->c) /* the bias's long word of block j, in every cycle */
                        buf_printf(e->b, "fvadd $lr%lldv $%s{%d}%lld $lr%lldv\n", (long long)(2 * g),
                                   emit_bank_reg(p->c), p->c->id, (long long)(2 * p->aC[j]), (long long)(2 * g));
                    else if (!first) { /* the sums of the panels before */
                        char *o = lr(buf_put(buf_line(e->b, 48), "fvadd"), g);
                        *o++ = ' ';
                        buf_line_end(e->b, o);
                        flat(e->b, p->y, &p->aY[(s0 + g) * p->nb + j], k, p->nb);
                        o = lr(buf_line(e->b, 48), g);
                        *o++ = '\n';
                        buf_line_end(e->b, o);
                    }
                }
                if (!first || (p->c && !in_product)) buf_printf(e->b, "nop\n");
                for (int64_t g = 0; g < ns; g += 4) {
                    int k = ns - g < 4 ? (int)(ns - g) : 4;
                    char *o = lr(buf_put(buf_line(e->b, 48), "lpassa"), g);
                    *o++ = ' ';
                    buf_line_end(e->b, o);
                    flat(e->b, p->y, &p->aY[(s0 + g) * p->nb + j], k, p->nb);
                    o = buf_line(e->b, 4);
                    *o++ = '\n';
                    buf_line_end(e->b, o);
                }
                if (lm_shared) buf_printf(e->b, "nop/2\n");
            }
        }
    }
    buf_printf(e->b, "nop/3\n");
    free(q);
}

/* A split Gemm's bias, added to the gathered output (each L2B's slice would need its own
 * addresses of it): up to 64 pairs of (4 slots, block) a batch, loaded into GRF0, added
 * and stored back */
static void split_bias(Em *e, const MatPlan *p) {
    int64_t np = (p->nslot + 3) / 4 * p->nb, B = e->c->machine.grf0_lw / 4;
    if (B > 64) B = 64;
    for (int64_t i0 = 0; i0 < np; i0 += B) {
        int64_t i1 = np - i0 < B ? np : i0 + B;
        for (int pass = 0; pass < 3; pass++) {
            for (int64_t i = i0; i < i1; i++) {
                int64_t j = i % p->nb, g = 4 * (i / p->nb), r = 2 * 4 * (i - i0);
                int k = p->nslot - g < 4 ? (int)(p->nslot - g) : 4;
                if (pass == 1) {
                    buf_printf(e->b, "fvadd $lr%lldv $%s{%d}%lld $lr%lldv\n", (long long)r, emit_bank_reg(p->c),
                               p->c->id, (long long)(2 * p->aC[j]), (long long)r);
                    continue;
                }
                buf_printf(e->b, "lpassa ");
                if (pass == 0) flat(e->b, p->y, &p->aY[g * p->nb + j], k, p->nb);
                buf_printf(e->b, " $lr%lldv", (long long)r);
                if (pass == 2) buf_printf(e->b, " "), flat(e->b, p->y, &p->aY[g * p->nb + j], k, p->nb);
                buf_printf(e->b, "\n");
            }
            buf_printf(e->b, pass == 2 ? "nop/2\n" : "nop\n");
        }
    }
}

/* K not a multiple of 8: the lanes past K of A's last block in every row and of B's in
 * every column hold anything, and a product would add them in. Both get 0 there (their
 * padding, nobody's elements): a streamed B's come from its DRAM image, which the host
 * writes with zero padding. */
static void pad_k(Em *e, const MatPlan *p) {
    emit_pad_setup(e, (int)(p->K % 8));
    for (int64_t s = 0; s < p->nslot; s++) emit_pad_lw(e, p->a, p->aA[s * p->kb + p->kb - 1], EM_PAD_ZERO);
    for (int64_t t = 0; !p->stream && t < p->nbt; t++)
        for (int64_t col = 0; col < p->N; col++)
            emit_pad_lw(e, p->b, p->aB[(t * p->kb + p->kb - 1) * p->N + col], EM_PAD_ZERO);
    buf_printf(e->b, "nop/2\n");
}

void emit_matrix(Em *e, const MNNode *n, const Walk *w) {
    MatPlan p;
    if (plan(e->c, n, &p)) die("emit_matrix: a node the matrix unit does not take");
    p.grf1_free = true; /* the node's own code: GRF1 holds nothing of anyone's */
    if (p.K % 8) pad_k(e, &p);
    if (p.stream && p.split && w->msplit[w->pos]) { /* L2B 0's columns on each, into the scratch after the panel */
        MatPlan sp;
        int64_t *dst;
        split_sub(&p, 0, &sp, &dst);
        int64_t ys = w->scr[w->pos] + emit_round4(emit_matrix_panel_need(&e->c->machine, &sp));
        for (int64_t i = 0; i < p.nslot * sp.nb; i++) sp.aY[i] += ys;
        emit_matrix_streamed(e, &sp, w->scr[w->pos]);
        emit_l2b_gather(e, ys, p.nslot * sp.nb, p.y, dst);
        if (p.c) split_bias(e, &p);
        free(sp.aB), free(sp.aY), free(dst);
        emit_matrix_plan_free(&p);
        return;
    }
    if (p.stream) {
        p.split = 0;
        emit_matrix_streamed(e, &p, w->scr[w->pos]);
        emit_matrix_plan_free(&p);
        return;
    }
    int64_t G = e->c->machine.grf0_lw / 4 * 4; /* accumulator slots in GRF0 */
    if (G > 256) G = 256;
    bool lm_shared = p.y->loc == p.a->loc || p.y->loc == p.b->loc || (p.c && p.y->loc == p.c->loc);
    for (int64_t s0 = 0, s1 = 0; s0 < p.nslot; s0 = s1) {
        s1 = s0 + 1; /* slots s0..s1-1: at most G, of one B table */
        while (s1 < p.nslot && s1 - s0 < G && (!p.sB || p.sB[s1] == p.sB[s0])) s1++;
        int64_t ns = s1 - s0;
        const int64_t *aB = p.aB + (p.sB ? p.sB[s0] : 0) * p.kb * p.N;
        bool in_product = bias_in_product(e, &p);
        if (in_product && s0 == 0) stage_bias(e, &p);
        for (int64_t j = 0; j < p.nb; j++) {
            block_products(e, &p, aB, j, 0, p.kb, s0, ns, false, 0, p.a->loc != p.b->loc, in_product);
            buf_printf(e->b, "nop\n"); /* the last sums are read 2 steps after their write */
            if (p.c && !in_product) {
                for (int64_t g = 0; g < ns; g += 4) /* the bias's long word of block j, in every cycle */
                    buf_printf(e->b, "fvadd $lr%lldv $%s{%d}%lld $lr%lldv\n", (long long)(2 * g), emit_bank_reg(p.c),
                               p.c->id, (long long)(2 * p.aC[j]), (long long)(2 * g));
                buf_printf(e->b, "nop\n");
            }
            for (int64_t g = 0; g < ns; g += 4) {
                int k = ns - g < 4 ? (int)(ns - g) : 4;
                buf_printf(e->b, "lpassa $lr%lldv ", (long long)(2 * g));
                flat(e->b, p.y, &p.aY[(s0 + g) * p.nb + j], k, p.nb);
                buf_printf(e->b, "\n");
            }
            if (lm_shared) buf_printf(e->b, "nop/2\n"); /* the outputs' bank is read again 3 steps after its write */
        }
    }
    buf_printf(e->b, "nop/3\n");
    emit_matrix_plan_free(&p);
}

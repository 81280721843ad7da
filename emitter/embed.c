/* Code Emit: an embedding, a Gather of rows of a table in DRAM by indices computed at run
 * time, row by row through the DAR (planners/embed_plan.c lays out the table and indices).
 *
 *   entries    every PE turns each index v (negative ones counted from the end) into its
 *              row's DRAM address in units of 16 LW, T / 16 + v Fp / 4 (shifts and adds),
 *              both words of the long word (l2bmdars takes two entries a long word: each row
 *              is then fetched twice, the second copy unread), into an LM0 scratch;
 *   up         MAB 0's scratch into the L1BM, 4 addresses a step (position P = 4 address
 *              + PE at L1BM long word P), and into the top of the L2BM, alike everywhere;
 *   DAR        a window of 512 positions into every group's DAR (l2bmdars, l2bmdarw),
 *              loaded again where a batch's positions lie past it;
 *   fetch      per output L2B and L1B, each run of tokens on consecutive MABs at consecutive
 *              positions is one mvp from its group's DRAM (nd: an entry for a whole row)
 *              into the L2BM: a batch of MABs for every L1B at once, as many as the L2BM
 *              and the L1BM hold;
 *   down       each row from the L2BM into its L1B's L1BM (l2bm@j, 64 LW a step);
 *   distribute each row from the L1BM to its MAB's PEs, 4 addresses a step (l1bmm under
 *              a mask of that MAB), every L1B and L2B at once.
 *
 * Cost: the rows over the DRAM's port (twice each), Fp / 16 steps a row down (64 LW a step) and Fp / 4
 * out (every L1B at once), and about 20 steps per 4 index long words for the entries. The
 * table never enters LM; no index table is made. */
#include "emit_impl.h"
#include "ops.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DAR = 1024, WIN = DAR / 2 }; /* DAR entries; positions a window holds (two entries each) */

typedef struct {
    const MNValue *t, *ix, *y;
    MNLayout lt, li, ly;
    int64_t f, fp, rl, nI16, na, J, M, NL, nm;
    int64_t *pos; /* [((l * na + a) * J + j) * M + m]: the index position of the token there, -1 */
} Embed;

static void embed_free(Embed *em) {
    free(em->pos);
    em->pos = NULL;
}

static bool plan(const MNCompile *c, const MNNode *n, Embed *em) {
    const MNMachine *m = &c->machine;
    memset(em, 0, sizeof *em);
    if (n->op != OP_Gather || !plan_streamed(n, 0)) return false;
    em->t = n->in[0], em->ix = n->in[1], em->y = n->out[0];
    MNLayout want;
    if (!emit_in_lm(em->ix) || !emit_in_lm(em->y) || em->t->loc != MN_LOC_DRAM || !layout_get(em->t, &em->lt) ||
        !layout_get(em->ix, &em->li) || !layout_get(em->y, &em->ly) || em->y->dtype != MN_DT_Float ||
        !plan_embed_table_layout(&em->t->type, &want) || !layout_same_placement(&want, &em->lt) ||
        !plan_embed_index_layout(&em->ix->type, &em->ly, m, &want) || !layout_same_placement(&want, &em->li) ||
        m->pe_per_mab != 4 || m->mab_per_l1b * 4 != 64)
        return false;
    int r = em->ly.rank - 1;
    em->f = em->ly.sub[r][0].size, em->fp = em->lt.sub[0][0].stride, em->rl = 4 * em->fp;
    if (em->lt.sub[1][0].size != em->f || em->fp % 8) return false;
    em->nI16 = (em->ix->num_lw + 15) / 16 * 16;
    em->J = m->l1b_per_l2b, em->M = m->mab_per_l1b, em->NL = m->n_l2b;
    em->na = (em->y->num_lw + em->f - 1) / em->f;
    /* MABs a batch: every L1B's rows fetched twice into the L2BM below the entries, one row
     * each in the L1BM */
    int64_t room = m->l2bm_lw - 4 * em->nI16;
    em->nm = room / (em->J * 2 * em->rl);
    if (em->nm > m->l1bm_lw / em->rl) em->nm = m->l1bm_lw / em->rl;
    if (em->nm > em->M) em->nm = em->M;
    if (em->nm < 1 || 4 * em->nI16 > m->l1bm_lw) return false;
    int64_t cnt = em->NL * em->na * em->J * em->M;
    em->pos = xmalloc(sizeof(int64_t) * (size_t)cnt);
    for (int64_t i = 0; i < cnt; i++) em->pos[i] = -1;
    /* every index element: its position, and the places of its row's first feature */
    int64_t ne = ir_shape_numel(&em->ix->type), idx[LAYOUT_MAX_RANK] = {0};
    int ri = em->ix->type.rank;
    for (int64_t e = 0; e < ne; e++) {
        int64_t q = e;
        for (int d = ri - 1; d >= 0; d--) idx[d] = q % em->ix->type.dims[d], q /= em->ix->type.dims[d];
        idx[ri] = 0;
        MNPlace pi, po;
        layout_place(&em->li, idx, &pi);
        layout_place(&em->ly, idx, &po);
        int64_t P = 4 * pi.c[LV_ADDR] + pi.c[LV_PE], A = po.c[LV_ADDR];
        if (A % em->f || po.c[LV_TIME] || po.c[LV_W] || po.c[LV_PE]) {
            embed_free(em);
            return false;
        }
        /* an output alike on every L2B, or every L1B (a few tokens), takes the row at each of them */
        bool all = em->ly.bcast & (1u << LV_L2B), every = em->ly.bcast & (1u << LV_L1B);
        for (int64_t l = all ? 0 : po.c[LV_L2B]; l < (all ? em->NL : po.c[LV_L2B] + 1); l++)
            for (int64_t j = every ? 0 : po.c[LV_L1B]; j < (every ? em->J : po.c[LV_L1B] + 1); j++)
                em->pos[((l * em->na + A / em->f) * em->J + j) * em->M + po.c[LV_MAB]] = P;
    }
    return true;
}

bool emit_embed_node(const MNNode *n) { return n->op == OP_Gather && plan_streamed(n, 0); }

const char *emit_embed_why(const MNCompile *c, const MNNode *n, Walk *w) {
    Embed em;
    if (!plan(c, n, &em)) return "an embedding whose indices or output are not laid out for the DAR";
    int64_t need = em.nI16;
    embed_free(&em);
    return emit_lm0_room(c, w, need, &w->scr[w->pos]) ? NULL : "no LM0 room for an embedding's DAR entries";
}

/* the entries: for each 4 addresses of the indices, v (v + V where negative) times fp / 4
 * plus the table's address / 16, in both words, into LM0 at scr (GRF1 long words 40-63 hold
 * the constants and 16-19 a shifted index, GRF0 long words 0-7 the work and 8-11 an index
 * whose unwritten cycles are zeroed) */
static void entries(Em *e, const Embed *em, int64_t scr) {
    const MNValue *ix = em->ix;
    int64_t V = em->t->type.dims[0], mul = em->fp / 4, base = (em->t->addr > 0 ? em->t->addr : 0) / 16;
    char X[48];
    buf_printf(e->b, "imm l\"%lld\" $ls80\nimm l\"0\" $ls82\nimm l\"%lld\" $ls84\nimm l\"32\" $ls86\n", (long long)V,
               (long long)base);
    int nb = 0;
    for (int b = 0; b < 40; b++)
        if (mul >> b & 1) buf_printf(e->b, "imm l\"%d\" $ls%d\n", b, 88 + 2 * nb++);
    buf_printf(e->b, "nop\n");
    /* the index long words holding a token: those its producer wrote (a Download writes no other) */
    int64_t cnt = em->NL * em->na * em->J * em->M;
    bool *live = xcalloc((size_t)ix->num_lw + 4, sizeof(bool));
    for (int64_t i = 0; i < cnt; i++)
        if (em->pos[i] >= 0 && em->pos[i] / 4 < ix->num_lw) live[em->pos[i] / 4] = true;
    for (int64_t a = 0; a < em->nI16; a += 4) {
        char bits[5] = "0000";
        for (int c = 0; c < 4; c++) bits[c] = a + c < ix->num_lw && live[a + c] ? '1' : '0';
        if (!strcmp(bits, "0000")) { /* no token: zero entries, never used (the DAR load reads them) */
            buf_printf(e->b, "zero $lm%lldv\nnop/2\n", (long long)(2 * (scr + a)));
            continue;
        }
        char S[64];
        snprintf(S, sizeof S, "$%s%sv", emit_bank_reg(ix), emit_at(e, ix, a, X));
        if (strcmp(bits, "1111")) { /* some cycles hold no token: computed from zeros, not the unwritten words */
            buf_printf(e->b, "lpassa/%s %s $lr16v\nnop\n", bits, S);
            snprintf(S, sizeof S, "$lr16v");
        }
        buf_printf(e->b, "ladd %s $ls80 $lr0v\nladd %s $ls82 $nowrite $omr3\nnop\n", S, S);
        buf_printf(e->b, "lpassa %s $lr0v/$imr3\nnop\nzero $lr8v\n", S);
        for (int k = 0; k < nb; k++) /* (a step reads each GRF at one address: the shifted value in GRF1) */
            buf_printf(e->b, "llsl $lr0v $ls%d $ls32v\nnop\nladd $lr8v $ls32v $lr8v\nnop\n", 88 + 2 * k);
        buf_printf(e->b,
                   "ladd $lr8v $ls84 $lr8v\nnop\nllsl $lr8v $ls86 $ls32v\nnop\nlor $lr8v $ls32v $lm%lldv\nnop/2\n",
                   (long long)(2 * (scr + a)));
    }
    free(live);
    buf_printf(e->b, "nop/2\n");
}

/* the DAR window from position w0 on (a multiple of 64): up to 512 positions' entries */
static void load_dar(Em *e, const Embed *em, int64_t top, int64_t w0) {
    for (int64_t u = 0; u < WIN / 64 && w0 + 64 * u < em->nI16 * 4; u++)
        buf_printf(e->b, "l2bmdars $lc%lld@.0 $dar%lld\n", (long long)(top + w0 + 64 * u), (long long)(128 * u));
    buf_printf(e->b, "l2bmdarw\n");
}

void emit_embed(Em *e, const MNNode *n, int64_t scr) {
    const MNMachine *m = &e->c->machine;
    Embed em;
    if (!plan(e->c, n, &em)) die("node '%s' is no embedding", n->name);
    if (em.t->addr > 0 && em.t->addr % 16) die("an embedding's table at DRAM long word %lld", (long long)em.t->addr);
    int64_t J = em.J, M = em.M, NL = em.NL, L = m->l2b_per_group, rl = em.rl, nm = em.nm;
    int64_t top = m->l2bm_lw - 4 * em.nI16, elb = m->l1bm_lw - 4 * em.nI16, w0 = -1;
    const MNValue *y = em.y;
    char Y[48];
    entries(e, &em, scr);
    for (int64_t a = 0; a < em.nI16; a += 4) /* position P at L1BM long word elb + P */
        buf_printf(e->b, "l1bmm@0 $lm%lldv $lb%lld\n", (long long)(2 * (scr + a)), (long long)(elb + 4 * a));
    buf_printf(e->b, "nop/2\n");
    for (int64_t u = 0; u < 4 * em.nI16; u += 64)
        buf_printf(e->b, "l2bm@0 $lb%lld $lc%lld\n", (long long)(elb + u), (long long)(top + u));
    buf_printf(e->b, "nop/3\n");
    bool used[64] = {false};
    int64_t lastmab = -1;
    for (int64_t a = 0; a < em.na; a++)
        for (int64_t m0 = 0; m0 < M; m0 += nm) {
            int64_t m1 = m0 + nm < M ? m0 + nm : M;
            bool any = false;
            /* fetch: per L2B and L1B, runs of consecutive positions on consecutive MABs */
            for (int64_t l = 0; l < NL; l++)
                for (int64_t j = 0; j < J; j++) {
                    const int64_t *p = &em.pos[((l * em.na + a) * J + j) * M];
                    for (int64_t s = m0, t; s < m1; s = t) {
                        if (p[s] < 0) {
                            t = s + 1;
                            continue;
                        }
                        for (t = s + 1; t < m1 && p[t] == p[t - 1] + 1; t++) continue;
                        if (w0 < 0 || p[s] < w0 || p[t - 1] >= w0 + WIN) {
                            w0 = p[s] / 64 * 64;
                            if (p[t - 1] >= w0 + WIN) die("an embedding's run past the DAR");
                            emit_mv_wait_all(e, used); /* (the DAR is read at issue; kept simple) */
                            load_dar(e, &em, top, w0);
                        }
                        long long g = l / L, tag = emit_mv_tag(e, used);
                        buf_printf(e->b, "mvp/n%lldi%02llxnd%lld $di%lld@%lld $lc%lld@%lld.%lld\n",
                                   (long long)(2 * (t - s) * rl), tag, (long long)(rl / 16),
                                   (long long)(2 * (p[s] - w0)), g, (long long)((j * nm + s - m0) * 2 * rl), g,
                                   (long long)(l % L));
                        any = true;
                    }
                }
            if (!any) continue;
            emit_mv_wait_all(e, used);
            for (int64_t j = 0; j < J; j++) /* down: the batch's rows into every L1BM */
                for (int64_t s = m0; s < m1; s++) {
                    bool has = false;
                    for (int64_t l = 0; l < NL && !has; l++) has = em.pos[((l * em.na + a) * J + j) * M + s] >= 0;
                    for (int64_t i = 0; has && i < rl; i += 64)
                        buf_printf(e->b, "l2bm@%lld $lc%lld $lb%lld\n", (long long)j,
                                   (long long)((j * nm + s - m0) * 2 * rl + i), (long long)((s - m0) * rl + i));
                }
            buf_printf(e->b, "nop/2\n");
            for (int64_t s = m0; s < m1; s++) { /* distribute: each MAB's row, every L1B and L2B at once */
                bool has = false;
                for (int64_t i = 0; i < NL * J && !has; i++)
                    has = em.pos[((i / J * em.na + a) * J + i % J) * M + s] >= 0;
                if (!has) continue;
                if (s != lastmab) emit_mab_masks(e, s, em.f), lastmab = s;
                for (int64_t q = 0; q < em.f; q += 4)
                    buf_printf(e->b, "l1bmm $lb%lld $%s%sv%s\n", (long long)((s - m0) * rl + 4 * q), emit_bank_reg(y),
                               emit_at(e, y, a * em.f + q, Y), q + 4 > em.f ? "/$imr2" : "/$imr1");
            }
            buf_printf(e->b, "nop/2\n");
        }
    embed_free(&em);
}

/* Layout planner, embeddings: a Gather of rows of a large table by indices known only at
 * run time (a token or position embedding) reads the rows it needs from DRAM.
 *
 * A table is the host's (a constant or a graph input), too large to bring into LM whole,
 * so it stays in DRAM and each row is fetched by the DAR (docs/vsm.md 5.6): the PEs turn
 * every index into the DRAM address of its row, the addresses go up the tree into the DAR,
 * and one mvp per L2B and L1B brings the rows into the L2BM, from where they go down to
 * their MABs (emitter/embed.c). What that asks of the layouts:
 *
 *   the table   every row packed as the output's last dimension is packed (F addresses of
 *               the 4 PEs of a MAB, two words a long word), alike on every MAB, L1B and L2B:
 *               its DRAM image (isa/app.h, "mab") then holds row v at 4 Fp v long words,
 *               address-major then PE, the order in which the L1BM hands 4 addresses a step
 *               to a MAB. Fp, F rounded up to 8, makes every row a multiple of 32 LW;
 *   the indices alike on every PE's tree, each at position P = 4 address + PE: the
 *               output's MAB digits count 1 in P, its L1B digits 16 (a MAB's tokens), its
 *               tokens' address digits 16 J, its L2B digits the tokens of an L2B. Combined
 *               by MAB 0 into the L1BM 4 addresses a step, position P lands at L1BM long
 *               word P: the tokens of one L1B, MAB by MAB, are consecutive DAR entries.
 *
 * Where the output's tokens are not laid out so (on PEs or words), there is no demand and
 * the Gather stays with the gather path. */
#include "plan.h"
#include "ops.h"
#include <string.h>

/* does Gather n read its table from DRAM by indices computed at run time? A host value over
 * half an LM bank per PE does, and so does one of more rows than the vector unit's gather
 * tells apart (plan_gather_rows_max: a row each in its constant pool), however small. */
bool plan_embed_streams(const MNNode *n, const MNMachine *m) {
    if (n->op != OP_Gather || n->nin != 2 || n->nout != 1 || !n->in[0] || !n->in[1] || !n->out[0]) return false;
    const MNValue *t = n->in[0], *i = n->in[1];
    int64_t axis = ir_attr_int(n, "axis", 0);
    bool host = t->konst || (t->is_input && !t->producer);
    MNLayout l;
    return host && (axis == 0 || axis == -2) && t->type.rank == 2 && t->dtype == MN_DT_Float && !i->konst &&
           i->dtype == MN_DT_Long && plan_embed_table_layout(&t->type, &l) &&
           (layout_num_lw(&l, m->address_alignment_lw) > m->lm0_lw / 2 || t->type.dims[0] > plan_gather_rows_max(m));
}

int plan_gather_rows_max(const MNMachine *m) {
    return (m->grf1_lw < PLAN_POOL_CAP ? (int)m->grf1_lw : PLAN_POOL_CAP) - PLAN_POOL_FIRST_INDEX;
}

bool plan_embed_table_layout(const MNType *t, MNLayout *l) {
    if (t->rank != 2 || !plan_layout_kpacked(t, MN_DT_Float, 1, l) || l->nsub[0] != 1 || l->nsub[1] != 3 ||
        l->sub[1][0].level != LV_ADDR || l->sub[1][1].level != LV_W || l->sub[1][2].level != LV_PE)
        return false;
    int64_t fp = (l->sub[1][0].size + 7) / 8 * 8;
    if (fp > INT32_MAX) return false;
    l->sub[0][0] = (MNSubaxis){t->dims[0], (int32_t)fp, LV_ADDR};
    return true;
}

/* the output's features: its last dimension packed as F:1, 2_W, 4_PE (F into *f) */
static bool packed_last(const MNLayout *o, int64_t *f) {
    int r = o->rank - 1;
    const MNSubaxis *s = o->sub[r];
    if (r < 0 || o->nsub[r] != 3 || s[0].level != LV_ADDR || s[0].stride != 1 || s[1].level != LV_W || s[1].size != 2 ||
        s[2].level != LV_PE || s[2].size != 4 || s[2].stride != 1)
        return false;
    *f = s[0].size;
    return true;
}

bool plan_embed_index_layout(const MNType *it, const MNLayout *outl, const MNMachine *m, MNLayout *want) {
    int64_t f, J = m->l1b_per_l2b, M = m->mab_per_l1b;
    if (!outl || outl->rank != it->rank + 1 || it->rank > LAYOUT_MAX_RANK || !packed_last(outl, &f) ||
        (outl->bcast & (1u << LV_MAB)))
        return false;
    /* the tokens' address extent (in rows of f addresses), for an L2B's count of positions */
    int64_t rows = 1;
    for (int d = 0; d < it->rank; d++)
        for (int k = 0; k < outl->nsub[d]; k++) {
            const MNSubaxis *s = &outl->sub[d][k];
            if (s->level == LV_ADDR && s->size > 1) {
                if (s->stride % f) return false;
                int64_t top = (s->stride / f) * s->size;
                if (top > rows) rows = top;
            }
        }
    memset(want, 0, sizeof *want);
    want->rank = it->rank;
    want->bcast = (uint8_t)(1u << LV_MAB | 1u << LV_L1B | 1u << LV_L2B);
    for (int d = 0; d < it->rank; d++) {
        want->shape[d] = outl->shape[d];
        int ns = 0;
        for (int k = 0; k < outl->nsub[d]; k++) {
            const MNSubaxis *s = &outl->sub[d][k];
            int64_t q; /* the digit's weight in P */
            switch (s->level) {
            case LV_MAB: q = s->stride; break;
            case LV_L1B: q = s->stride * M; break;
            case LV_ADDR: q = s->size > 1 ? s->stride / f * J * M : 1; break;
            case LV_L2B: q = s->stride * rows * J * M; break;
            default: return false; /* tokens on PEs, words or time */
            }
            if (ns + 2 > LAYOUT_MAX_SUB) return false;
            if (s->size == 1) {
                want->sub[d][ns++] = (MNSubaxis){1, 1, LV_ADDR};
            } else if (q % 4 == 0 && q / 4 <= INT32_MAX) {
                want->sub[d][ns++] = (MNSubaxis){s->size, (int32_t)(q / 4), LV_ADDR};
            } else if (q < 4 && s->size * q <= 4) {
                want->sub[d][ns++] = (MNSubaxis){s->size, (int32_t)q, LV_PE};
            } else if (q == 1 && s->size % 4 == 0) { /* a MAB digit: its high part addresses, its low part PEs */
                want->sub[d][ns++] = (MNSubaxis){s->size / 4, 1, LV_ADDR};
                want->sub[d][ns++] = (MNSubaxis){4, 1, LV_PE};
            } else
                return false;
        }
        want->nsub[d] = (uint8_t)ns;
    }
    char err[200];
    return layout_valid(want, m, 8, err, sizeof err);
}

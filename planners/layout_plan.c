/* Layout planner, naive: one canonical layout per value, from its shape, its dtype and
 * the machine. It is the baseline the cost-aware planner (lpz, not written yet) is to be
 * measured against, and what every later stage can rely on meanwhile.
 *
 * The last dimension is packed into long words (W slots, as many as the dtype fits) and
 * spread over the 4 PEs of a MAB: (ceil(n / 4W):1, W_W:1, 4_PE:1). The first dimension
 * of a tensor of rank >= 2 is spread over MABs, then L1Bs, then L2Bs, by the largest
 * factors of the machine's counts that divide it exactly (so it is never padded); what
 * is left of it and the middle dimensions become LM addresses, row-major. Every level a
 * value does not use is a broadcast level: the value is replicated there. A scalar is
 * one long word replicated on every PE. So DESIGN.md's example (3,4) float tensor gets
 * PadLayout{(3,4)/((3:1), (1:1, 2_W:1, 4_PE:1); B@[MAB,L1B,L2B])}. */
#include "plan.h"
#include "layout.h"
#include <stdio.h>
#include <string.h>

static int64_t gcd(int64_t a, int64_t b) {
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

bool plan_layout_canonical(const MNType *t, MNDtype dt, const MNMachine *m, MNLayout *l) {
    memset(l, 0, sizeof *l);
    int bytes = mn_dtype_bytes(dt);
    if (!bytes || t->rank < 0) return false;
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
    l->sub[last][0] = (MNSubaxis){LV_ADDR, q, 1};
    l->sub[last][1] = (MNSubaxis){LV_W, W, 1};
    l->sub[last][2] = (MNSubaxis){LV_PE, 4, 1};
    for (int i = last - 1; i >= 1; i--) { /* middle dimensions: addresses */
        int64_t d = t->dims[i] ? t->dims[i] : 1;
        l->nsub[i] = 1;
        l->sub[i][0] = (MNSubaxis){LV_ADDR, d, stride};
        stride *= d;
    }
    uint8_t used = 1u << LV_PE;
    if (last >= 1) {
        int64_t d = t->dims[0] ? t->dims[0] : 1;
        int64_t fm = gcd(d, m->mab_per_l1b);
        int64_t f1 = gcd(d / fm, m->l1b_per_l2b);
        int64_t f2 = gcd(d / fm / f1, m->n_l2b);
        int64_t rest = d / fm / f1 / f2;
        int k = 0;
        l->sub[0][k++] = (MNSubaxis){LV_ADDR, rest, stride};
        if (f2 > 1) l->sub[0][k++] = (MNSubaxis){LV_L2B, f2, 1}, used |= 1u << LV_L2B;
        if (f1 > 1) l->sub[0][k++] = (MNSubaxis){LV_L1B, f1, 1}, used |= 1u << LV_L1B;
        if (fm > 1) l->sub[0][k++] = (MNSubaxis){LV_MAB, fm, 1}, used |= 1u << LV_MAB;
        l->nsub[0] = k;
    }
    for (int lv = LV_PE; lv <= LV_L2B; lv++)
        if (!(used & (1u << lv))) l->bcast |= (uint8_t)(1u << lv);
    return true;
}

bool plan_layout(MNCompile *c) {
    MNGraph *g = c->g;
    ir_recount_uses(g);
    int laid = 0;
    int64_t total = 0, maxlw = 0;
    for (int i = 0; i < g->nvalues; i++) {
        MNValue *v = g->values[i];
        if (!v->nuses && !v->producer) continue;
        MNLayout l;
        if (!plan_layout_canonical(&v->type, v->dtype, &c->machine, &l)) continue;
        char err[300];
        if (!layout_valid(&l, &c->machine, mn_dtype_bytes(v->dtype), err, sizeof err)) die("canonical layout of '%s' is invalid: %s", v->name, err);
        MNBuf b = {0};
        layout_print(&l, &b);
        v->layout = arena_strdup(g->arena, b.data);
        buf_free(&b);
        v->layout_kind = "MNCore";
        v->padded_shape = ARENA_ARRAY(g->arena, int64_t, l.rank + 1);
        for (int k = 0; k < l.rank; k++) v->padded_shape[k] = layout_padded(&l, k);
        v->num_lw = layout_num_lw(&l, c->machine.address_alignment_lw);
        laid++;
        total += v->num_lw;
        if (v->num_lw > maxlw) maxlw = v->num_lw;
    }
    mn_figure(c, "values_laid_out", laid);
    mn_figure(c, "layout_switches", 0);
    mn_figure(c, "num_lw_total", total);
    mn_figure(c, "num_lw_max", maxlw);
    mn_log(c, 0, "layouts (naive): %d values, %lld long words per PE in all, largest %lld", laid, (long long)total, (long long)maxlw);
    return true;
}

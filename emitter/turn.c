/* Code Emit: a Transpose that turns 8 x 8 blocks around inside every MAB.
 *
 * A MAB's 4 PEs hold 8 elements at each address (4 PEs x 2 words: its 8 slots). Where a
 * Transpose changes which axis lies on the slots and keeps every element on its MAB, L1B
 * and L2B, 8 addresses of the input (8 values of the output's packed axis) and the 8 slots
 * (8 values of the input's packed axis) form a block whose transpose is 8 addresses of the
 * output. The layout planner lays out such a Transpose so (planners/layout_plan.c,
 * turned_layouts: the output's 8 lowest values of the input's packed axis on 8 addresses of
 * a MAB, the input's 8 lowest values of the output's packed axis so), with layout switches
 * (emitter/quadmove.c) before and after where its neighbours want other layouts.
 *
 * Each block goes through the MAB's matrix register: two fmwrite of 4 input addresses (row
 * i of the register is output slot i: PE i / 2, word i % 2), two fmread of 4 columns
 * (column j is input slot j) into the 8 output addresses. Every MAB turns its blocks at
 * once, so the blocks' addresses must be alike on every MAB; the map is built over every
 * place of the output, padding included, so that no column is left without an address.
 *
 * Cost: 4 steps a block of 64 elements (and 2 more a block where the output is in LM0,
 * which the next block's fmwrite may read). */
#include "emit_impl.h"
#include "ops.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t nlw;
    int64_t (*row)[8]; /* [output address][output slot]: the input address, -1 */
    int8_t *col; /* [output address]: the input slot all its elements come from, -1 */
} TurnMap;

static void turn_free(TurnMap *t) {
    free(t->row);
    free(t->col);
}

/* the turn's map of n (t->row, t->col malloc'd on success) */
static bool turn_map(const MNNode *n, TurnMap *t) {
    memset(t, 0, sizeof *t);
    if ((n->op != OP_Transpose && n->op != OP_MNCoreLayoutSwitch) || n->nin < 1 || n->nout < 1) return false;
    const MNValue *x = n->in[0], *y = n->out[0];
    MNLayout li, lo;
    /* (floats only: the register holds them as numbers, an integer's bits would not come back) */
    if (!x || !y || x->dtype != y->dtype || y->dtype != MN_DT_Float || !emit_in_lm(x) || !emit_in_lm(y) ||
        !layout_get(x, &li) || !layout_get(y, &lo) || layout_timed(x) || layout_timed(y) || li.bcast != lo.bcast)
        return false;
    int r = y->type.rank;
    int64_t perm[LAYOUT_MAX_RANK];
    const MNAttr *pa = n->op == OP_Transpose ? ir_attr(n, "perm") : NULL;
    if (r < 1 || r > LAYOUT_MAX_RANK || x->type.rank != r || (pa && (pa->type != MN_ATTR_INTS || pa->n != r)))
        return false;
    for (int d = 0; d < r; d++) perm[d] = n->op != OP_Transpose ? d : pa ? pa->ints[d] : r - 1 - d;
    int64_t pad[LAYOUT_MAX_RANK], total = 1;
    for (int d = 0; d < r; d++) {
        pad[d] = layout_padded(&lo, d);
        if (layout_padded(&li, (int)perm[d]) != pad[d]) return false; /* a place of one with none in the other */
        total *= pad[d];
    }
    t->nlw = y->num_lw;
    t->row = xmalloc(sizeof *t->row * (size_t)(t->nlw + 1));
    t->col = xmalloc((size_t)t->nlw + 1);
    for (int64_t a = 0; a < t->nlw; a++) {
        t->col[a] = -1;
        for (int s = 0; s < 8; s++) t->row[a][s] = -1;
    }
    /* the places as sums of their dimensions' parts (layout_place_dim), tabled: output
     * dimension d at index j, and the input's dimension perm[d] at the same index */
    int64_t o[LAYOUT_MAX_RANK] = {0}, at[LAYOUT_MAX_RANK + 1] = {0};
    for (int d = 0; d < r; d++) at[d + 1] = at[d] + pad[d];
    MNPlace *to = xmalloc(sizeof(MNPlace) * (size_t)(at[r] + 1)), *ti = xmalloc(sizeof(MNPlace) * (size_t)(at[r] + 1));
    for (int d = 0; d < r; d++)
        for (int64_t j = 0; j < pad[d]; j++) {
            layout_place_dim(&lo, d, j, &to[at[d] + j]);
            layout_place_dim(&li, (int)perm[d], j, &ti[at[d] + j]);
        }
    const unsigned keep[] = {LV_MAB, LV_L1B, LV_L2B, LV_TIME};
    for (int64_t e = 0; e < total; e++) {
        MNPlace pi = {{0}}, po = {{0}};
        for (int d = 0; d < r; d++)
            for (int lv = 0; lv < LV_COUNT; lv++) {
                po.c[lv] += to[at[d] + o[d]].c[lv];
                pi.c[lv] += ti[at[d] + o[d]].c[lv];
            }
        for (int k = 0; k < 4; k++)
            if (pi.c[keep[k]] != po.c[keep[k]]) goto fail;
        int64_t da = po.c[LV_ADDR], sa = pi.c[LV_ADDR];
        int ds = (int)(2 * po.c[LV_PE] + po.c[LV_W]), ss = (int)(2 * pi.c[LV_PE] + pi.c[LV_W]);
        if (da < 0 || da >= t->nlw || ds > 7 || ss > 7 || (t->col[da] >= 0 && t->col[da] != ss) ||
            (t->row[da][ds] >= 0 && t->row[da][ds] != sa))
            goto fail; /* not one block's column, or unlike on two MABs */
        t->col[da] = (int8_t)ss;
        t->row[da][ds] = sa;
        for (int d = r - 1; d >= 0 && ++o[d] == pad[d]; d--) o[d] = 0;
    }
    free(to), free(ti);
    return true;
fail:
    free(to), free(ti);
    turn_free(t);
    return false;
}

/* One block: the input addresses of its 8 rows (output slots) and the output address of
 * each of its 8 columns (input slots); -1: none. */
typedef struct {
    int64_t rows[8], at[8];
} Block;

typedef struct {
    int64_t rows[8], col, addr;
} Entry;

static int by_rows(const void *a, const void *b) {
    const Entry *x = a, *y = b;
    int c = memcmp(x->rows, y->rows, sizeof x->rows);
    return c ? c : x->col != y->col ? (x->col > y->col) - (x->col < y->col) : (x->addr > y->addr) - (x->addr < y->addr);
}

/* The blocks of map t (*out malloc'd), output addresses ordered by their rows: a block is a
 * run of one rows' set, one address a column. A column a block leaves without an address
 * (where a column's elements go to two blocks; the map covers padding, so a Transpose
 * laid out by the planner has none) takes an address a later cycle of the same fmread
 * writes again, else one the next block writes; -1 when neither exists. */
static int64_t turn_blocks(const TurnMap *t, Block **out) {
    Entry *en = xmalloc(sizeof(Entry) * (size_t)(t->nlw + 1));
    int64_t n = 0, nb = 0;
    for (int64_t a = 0; a < t->nlw; a++)
        if (t->col[a] >= 0) {
            memcpy(en[n].rows, t->row[a], sizeof en[n].rows);
            en[n].col = t->col[a], en[n].addr = a, n++;
        }
    qsort(en, (size_t)n, sizeof *en, by_rows);
    Block *b = xmalloc(sizeof(Block) * (size_t)(n + 1));
    for (int64_t k = 0; k < n;) {
        Block *bk = &b[nb++];
        for (int j = 0; j < 8; j++) bk->at[j] = -1;
        int64_t k0 = k;
        while (k < n && !memcmp(en[k].rows, en[k0].rows, sizeof en[k].rows) && bk->at[en[k].col] < 0)
            bk->at[en[k].col] = en[k].addr, k++;
        for (int s = 0; s < 8; s++) bk->rows[s] = en[k0].rows[s];
        for (int s = 0; s < 8; s++) /* an output slot no input fills: any of the block's rows */
            for (int s2 = 0; s2 < 8 && bk->rows[s] < 0; s2++) bk->rows[s] = en[k0].rows[s2];
        for (int C = 0; C < 8; C += 4)
            for (int j = C + 3; j >= C; j--)
                for (int j2 = j + 1; j2 < C + 4 && bk->at[j] < 0; j2++) bk->at[j] = bk->at[j2];
        for (int j = 0; j < 8; j++)
            if (bk->at[j] < 0 && k < n) bk->at[j] = -2 - en[k].addr; /* rewritten by the next block */
    }
    free(en);
    *out = b;
    return nb;
}

/* is a column of the fmread of block b at C left with no address? */
static bool unplaced(const Block *b, int C) {
    bool any = false, none = false;
    for (int j = C; j < C + 4; j++) any |= b->at[j] >= 0, none |= b->at[j] == -1;
    return any && none;
}

bool emit_turn_take(const MNCompile *c, const MNNode *n, Walk *w) {
    TurnMap t;
    if (c->machine.pe_per_mab != 4 || !turn_map(n, &t)) return false;
    Block *b;
    int64_t nb = turn_blocks(&t, &b);
    bool ok = nb > 0;
    for (int64_t k = 0; k < nb && ok; k++) ok = !unplaced(&b[k], 0) && !unplaced(&b[k], 4);
    free(b);
    turn_free(&t);
    if (ok) w->turn[w->pos] = true;
    return ok;
}

void emit_turn(Em *e, const MNNode *n) {
    TurnMap t;
    if (!turn_map(n, &t)) die("node '%s' turns no blocks", n->name);
    const MNValue *x = n->in[0], *y = n->out[0];
    Block *b;
    int64_t nb = turn_blocks(&t, &b);
    bool lm0 = y->loc == MN_LOC_LM0;
    for (int64_t k = 0; k < nb; k++) {
        for (int R = 0; R < 8; R += 4) {
            buf_printf(e->b, "fmwrite ");
            emit_lw_list(e, x, &b[k].rows[R], 4);
            buf_printf(e->b, " $lx%d\n", R);
        }
        for (int C = 0; C < 8; C += 4) {
            int64_t d[4];
            bool any = false;
            for (int j = 0; j < 4; j++) {
                int64_t a = b[k].at[C + j];
                d[j] = a >= 0 ? a : -2 - a;
                any |= a >= 0;
            }
            if (!any) continue;
            if (unplaced(&b[k], C)) die("node '%s': a turned column with no address", n->name);
            buf_printf(e->b, "fmread $lx%d ", C);
            emit_lw_list(e, y, d, 4);
            buf_printf(e->b, "\n");
        }
        if (lm0) buf_printf(e->b, "nop/2\n"); /* the next fmwrite may read what these wrote */
    }
    buf_printf(e->b, "nop/2\n");
    free(b);
    turn_free(&t);
}

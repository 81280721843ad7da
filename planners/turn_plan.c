/* Layout planner: the layouts of a move that changes which axis is packed.
 *
 * A value's packed axis lies on the 8 slots of a MAB (4 PEs x 2 words, its lowest values)
 * and its other axes on addresses and the tree. A Transpose that makes another axis the
 * packed one (a (B, S, D) to (B, D, S), token mixing, a Conv1d over a sequence) moves
 * every element to another slot, and, with the canonical layouts on both sides, to
 * another MAB, L1B or L2B too. It is planned as three steps, each of a kind the emitter
 * moves in bounded pieces:
 *
 *   X  the input, its output-packed axis's 8 lowest values on 8 addresses of a MAB (a
 *      layout switch from the input's layout: every element keeps its PE and word,
 *      emitter/quadmove.c);
 *   Y  the Transpose itself: 8 x 8 blocks of addresses and slots turned inside each MAB
 *      (emitter/turn.c) into the wanted layout with the input-packed axis's 8 lowest values
 *      on 8 addresses of a MAB in place of their tree level, an address digit of the
 *      packed axis taking that level's places instead (so every MAB still holds as many);
 *   a switch to what the output's readers want, where they want another layout (an
 *      elementwise reader keeps Y).
 *
 * A layout switch too large for a gather that changes the packed axis (a view of a
 * convolution's tiles back to a sequence) is split the same way by the layout planner's
 * step 3: to X, a switch that turns (turn.c), to the wanted layout.
 *
 * plan_turned_out gives Y from the wanted layout and the axis packed before, plan_turned_in
 * X (in the same axes) from Y; a Transpose's demand on its input is X in the input's axes
 * (plan_layout_demand). */
#include "plan.h"
#include "layout.h"
#include <string.h>

/* do axis d's last two subaxes lie on the slots (2 words, 4 PEs, one apart)? */
static bool on_slots(const MNLayout *l, int d) {
    int n = l->nsub[d];
    return n >= 2 && l->sub[d][n - 2].level == LV_W && l->sub[d][n - 2].size == 2 && l->sub[d][n - 2].stride == 1 &&
           l->sub[d][n - 1].level == LV_PE && l->sub[d][n - 1].size == 4 && l->sub[d][n - 1].stride == 1;
}

int plan_slot_axis(const MNLayout *l) {
    for (int d = 0; d < l->rank; d++)
        if (on_slots(l, d)) return d;
    return -1;
}

static void put(MNLayout *l, int d, int at, int drop, const MNSubaxis *s, int ns) {
    MNSubaxis tmp[LAYOUT_MAX_SUB * 2];
    int n = 0;
    for (int k = 0; k < at; k++) tmp[n++] = l->sub[d][k];
    for (int k = 0; k < ns; k++)
        if (s[k].size > 1 || ns == 1) tmp[n++] = s[k];
    for (int k = at + drop; k < l->nsub[d]; k++) tmp[n++] = l->sub[d][k];
    memcpy(l->sub[d], tmp, sizeof(MNSubaxis) * (size_t)n);
    l->nsub[d] = (uint8_t)n;
}

bool plan_turned_out(const MNLayout *lo, int q, const MNMachine *m, int elem_bytes, MNLayout *y) {
    int r = lo->rank, z = plan_slot_axis(lo);
    char err[200];
    if (r < 2 || q < 0 || q >= r || z < 0 || q == z || elem_bytes != 4 || m->pe_per_mab != 4) return false;
    int nq = lo->nsub[q], nz = lo->nsub[z];
    if (nq < 1 || nq + 1 > LAYOUT_MAX_SUB || nz + 1 > LAYOUT_MAX_SUB) return false;
    MNSubaxis sq = lo->sub[q][nq - 1];
    if (sq.size % 8 || sq.level == LV_W || sq.level == LV_PE || sq.level == LV_TIME) return false;
    *y = *lo;
    if (sq.level == LV_ADDR) { /* already on addresses: its 8 lowest values apart by its stride */
        MNSubaxis s[2] = {{sq.size / 8, sq.stride * 8, LV_ADDR}, {8, sq.stride, LV_ADDR}};
        put(y, q, nq - 1, 1, s, 2);
    } else if (nz >= 3 && lo->sub[z][nz - 3].level == LV_ADDR && lo->sub[z][nz - 3].size % 8 == 0) {
        /* the packed axis's address digit gives its 8 lowest values to the tree level */
        MNSubaxis sz = lo->sub[z][nz - 3];
        MNSubaxis s[2] = {{sq.size / 8, sq.stride * 8, sq.level}, {8, sz.stride, LV_ADDR}};
        MNSubaxis t[2] = {{sz.size / 8, sz.stride * 8, LV_ADDR}, {8, sq.stride, sq.level}};
        put(y, q, nq - 1, 1, s, 2);
        put(y, z, nz - 3, 1, t, 2);
    } else { /* 8 new addresses above the others (7 in 8 of the level's places left idle) */
        int64_t A = layout_extent(lo, LV_ADDR);
        MNSubaxis s[2] = {{sq.size / 8, sq.stride * 8, sq.level}, {8, (int32_t)A, LV_ADDR}};
        if (A > INT32_MAX / 8) return false;
        put(y, q, nq - 1, 1, s, 2);
    }
    return layout_valid(y, m, elem_bytes, err, sizeof err) &&
           layout_num_lw(y, m->address_alignment_lw) <= m->lm0_lw / 4;
}

bool plan_turned_in(const MNLayout *y, int q, const MNMachine *m, int elem_bytes, MNLayout *x) {
    int r = y->rank, z = plan_slot_axis(y);
    char err[200];
    if (r < 2 || q < 0 || q >= r || z < 0 || q == z) return false;
    int nq = y->nsub[q], nz = y->nsub[z];
    MNSubaxis a = y->sub[q][nq - 1];
    if (a.level != LV_ADDR || a.size != 8 || nq + 1 > LAYOUT_MAX_SUB) return false;
    MNLayout t = *y;
    MNSubaxis slots[2] = {y->sub[z][nz - 2], y->sub[z][nz - 1]};
    put(&t, q, nq - 1, 1, slots, 2);
    put(&t, z, nz - 2, 2, &a, 1);
    *x = t;
    return layout_valid(x, m, elem_bytes, err, sizeof err);
}

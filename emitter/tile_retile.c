/* Code Emit: a tiled value onto another grid of row tiles (an MNCoreLayoutSwitch between
 * two tilings of planners/tile_plan.c with the same column tiles).
 *
 * A stride-2 node whose tiles have one row puts its output on every other place of the
 * row grid (tile_plan.c's follow), and an upscaling node (Resize, DepthToSpace) keeps
 * that grid with tiles twice as tall; a decoder then meets its skip connection, tiled on
 * the denser grid, at a Concat or an Add, and one of the two is switched. Every row stays
 * on its MAB position and moves between row places (L1Bs, L2Bs), as a halo does:
 * - onto a coarser grid (tiles f times as tall at every f g-th place): rows phi t .. of
 *   output tile k are input tile f k + phi's, phi g places further on; for each phi > 0
 *   the whole value moves phi g places (emitter/tile.c's shift through the L1BM, the L2BM
 *   and across L2Bs the PDM);
 * - onto a finer one (tiles half as tall at every g / 2-th place): a place on the old grid
 *   keeps the first half of its tile; one between takes the second half of the tile g / 2
 *   places before it, moved there and stored under a mask of the places off the old grid.
 *
 * Cost: each move takes about 2 steps per 4 long words per PE of what moves, with the
 * tree's latencies per chunk, as a halo exchange of that size. */
#include "emit_impl.h"
#include "num.h"
#include "ops.h"
#include <string.h>

typedef struct {
    int64_t h1[7], h2[7]; /* the tilings, in and out (plan_tile_of's) */
    int64_t N, CB, f; /* f: tile height ratio, coarser (out / in) or finer (in / out) */
    bool coarser;
} Retile;

static bool retile_of(const MNCompile *c, const MNNode *n, Retile *r) {
    MNLayout a, b, l;
    const MNValue *x = n->in[0], *y = n->out[0];
    if (n->op != OP_MNCoreLayoutSwitch || !x || !y || x->dtype != MN_DT_Float || y->dtype != MN_DT_Float ||
        !layout_get(x, &a) || !layout_get(y, &b) || !plan_tile_of(&a, &c->machine, r->h1) ||
        !plan_tile_of(&b, &c->machine, r->h2))
        return false;
    if (!plan_tile_layout_of(r->h1, &c->machine, x->type.dims, &l) || !emit_layout_is(x, &l) ||
        !plan_tile_layout_of(r->h2, &c->machine, y->type.dims, &l) || !emit_layout_is(y, &l))
        return false;
    const int64_t *p = r->h1, *q = r->h2; /* TY gy th TX gx tw rep */
    if (p[3] != q[3] || p[4] != q[4] || p[5] != q[5] || p[6] != q[6] || (p[6] & (1u << LV_L1B)) ||
        p[2] * q[1] != q[2] * p[1])
        return false;
    r->N = x->type.dims[0], r->CB = num_cdiv(x->type.dims[1], 8);
    r->coarser = q[2] > p[2];
    r->f = r->coarser ? q[2] / p[2] : p[2] / q[2];
    int64_t f = r->f;
    if (r->coarser) return q[2] == f * p[2] && (f & (f - 1)) == 0 && f > 1;
    return f == 2 && p[2] == 2 * q[2];
}

bool emit_tile_retile_node(const MNCompile *c, const MNNode *n) {
    Retile r;
    return retile_of(c, n, &r);
}

/* the long words that move through the tree, twice (before and after the move) */
static int64_t scratch_lw(const Retile *r) {
    int64_t th = r->coarser ? r->h1[2] : r->h2[2];
    return 2 * num_cdiv(r->N * th * r->h1[5] * r->CB, 4) * 4;
}

const char *emit_tile_retile_why(const MNCompile *c, const MNNode *n, Walk *w) {
    Retile r;
    if (!retile_of(c, n, &r)) die("node '%s' is no switch between tilings", n->name);
    if (!emit_in_lm(n->in[0]) || !emit_in_lm(n->out[0])) return "not in LM";
    return emit_lm0_room(c, w, scratch_lw(&r), &w->scr[w->pos]) ? NULL : "no LM0 room for the rows that move";
}

void emit_tile_retile(Em *e, const MNNode *n, const Walk *wk) {
    Retile r;
    if (!retile_of(e->c, n, &r)) die("node '%s' is no switch between tilings", n->name);
    const MNValue *x = n->in[0], *y = n->out[0];
    int64_t th1 = r.h1[2], th2 = r.h2[2], row = r.h1[5] * r.CB, half = r.coarser ? th1 : th2;
    int64_t part = r.N * half * row, S1 = wk->scr[wk->pos], S2 = S1 + num_cdiv(part, 4) * 4;
    MNTile t; /* the grid the rows move to, and that of their sources (where they span L2Bs) */
    memset(&t, 0, sizeof t);
    t.TYo = r.h2[0], t.gyo = r.h2[1], t.rep = (uint8_t)r.h1[6];
    t.TY = r.h1[0] * r.h1[1] > r.h2[0] * r.h2[1] ? r.h1[0] : r.h2[0];
    t.gy = t.TY == r.h1[0] ? r.h1[1] : r.h2[1];
    for (int64_t img = 0; img < r.N; img++) /* rows 0 .. half - 1 of every tile stay where they are */
        emit_tile_copy(e, x, img * th1 * row, y, img * th2 * row, half * row, "");
    if (r.coarser) {
        emit_tile_copy(e, x, 0, NULL, S1, part, "");
        for (int64_t phi = 1; phi < r.f; phi++) {
            emit_tile_shift_rows(e, &t, S1, S2, part, phi * r.h1[1]);
            for (int64_t img = 0; img < r.N; img++)
                emit_tile_copy(e, NULL, S2 + img * th1 * row, y, (img * th2 + phi * th1) * row, th1 * row, "");
        }
        return;
    }
    for (int64_t img = 0; img < r.N; img++)
        emit_tile_copy(e, x, (img * th1 + th2) * row, NULL, S1 + img * th2 * row, th2 * row, "");
    emit_tile_shift_rows(e, &t, S1, S2, part, -r.h2[1]);
    t.TY = r.h1[0], t.gy = r.h1[1];
    emit_tile_place(e, &t, true);
    emit_tile_off_grid(e, r.h1[1]);
    for (int64_t img = 0; img < r.N; img++)
        emit_tile_copy(e, NULL, S2 + img * th2 * row, y, img * th2 * row, th2 * row, "/$imr1");
}

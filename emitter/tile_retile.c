/* Code Emit: a tiled value onto another grid of tiles (an MNCoreLayoutSwitch between two
 * tilings of planners/tile_plan.c).
 *
 * A stride-2 node whose tiles have one row (column) puts its output on every other place
 * of the grid (tile_plan.c's follow), and an upscaling node (Resize, DepthToSpace) keeps
 * that grid with tiles twice as large; a decoder then meets its skip connection, tiled on
 * the denser grid, at a Concat or an Add, and one of the two is switched. Rows move
 * between row places (L1Bs, L2Bs) on the same MAB position, as a halo does, then columns
 * between the MABs of an L1B (through its L1BM); along each axis:
 * - onto a coarser grid (tiles f times as large at every f g-th place): lines phi t .. of
 *   output tile k are input tile f k + phi's, phi g places further on; for each phi > 0
 *   the whole value moves phi g places (emitter/tile.c's shifts: rows through the L1BM,
 *   the L2BM and across L2Bs the PDM; columns through the L1BM);
 * - onto a finer one (tiles half as large at every g / 2-th place): a place on the old
 *   grid keeps the first half of its tile; one between takes the second half of the tile
 *   g / 2 places before it, moved there and stored under a mask of the places off the old
 *   grid.
 *
 * Cost: each move takes about 2 steps per 4 long words per PE of what moves, with the
 * tree's latencies per chunk, as a halo exchange of that size. */
#include "emit_impl.h"
#include "num.h"
#include "ops.h"
#include <string.h>

typedef struct {
    int64_t T1, g1, t1, T2, g2, t2, f;
    int dir; /* 0 the same tiles, 1 onto a coarser grid, -1 onto a finer one */
} Axis;

typedef struct {
    int64_t h1[7], h2[7]; /* the tilings, in and out (plan_tile_of's): TY gy th TX gx tw rep */
    int64_t N, CB;
    Axis r, c;
} Retile;

static bool axis_of(const int64_t *p, const int64_t *q, Axis *a) {
    *a = (Axis){p[0], p[1], p[2], q[0], q[1], q[2], 1, 0};
    if (p[0] == q[0] && p[1] == q[1] && p[2] == q[2]) return true;
    if (q[2] > p[2]) {
        a->f = q[2] / p[2], a->dir = 1;
        return q[2] == a->f * p[2] && q[1] == a->f * p[1] && !(a->f & (a->f - 1));
    }
    a->f = 2, a->dir = -1;
    return p[2] == 2 * q[2] && p[1] == 2 * q[1];
}

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
    r->N = x->type.dims[0], r->CB = num_cdiv(x->type.dims[1], 8);
    uint8_t rep = (uint8_t)r->h1[6];
    if (rep != r->h2[6] || !axis_of(r->h1, r->h2, &r->r) || !axis_of(r->h1 + 3, r->h2 + 3, &r->c)) return false;
    if ((r->r.dir && (rep & (1u << LV_L1B))) || (r->c.dir && (rep & (1u << LV_MAB)))) return false;
    return r->r.dir || r->c.dir;
}

bool emit_tile_retile_node(const MNCompile *c, const MNNode *n) {
    Retile r;
    return retile_of(c, n, &r);
}

/* the LM0 scratch: the value between the two steps, and twice the lines that move */
static int64_t span_lw(const Retile *r) {
    int64_t rows = r->r.t1 > r->r.t2 ? r->r.t1 : r->r.t2, cols = r->c.t1 > r->c.t2 ? r->c.t1 : r->c.t2;
    return num_cdiv(r->N * rows * cols * r->CB, 4) * 4;
}

const char *emit_tile_retile_why(const MNCompile *c, const MNNode *n, Walk *w) {
    Retile r;
    if (!retile_of(c, n, &r)) die("node '%s' is no switch between tilings", n->name);
    if (!emit_in_lm(n->in[0]) || !emit_in_lm(n->out[0])) return "not in LM";
    return emit_lm0_room(c, w, 3 * span_lw(&r), &w->scr[w->pos]) ? NULL : "no LM0 room for the lines that move";
}

/* A place in LM: value v's long word off, or LM0 long word off when v is NULL */
typedef struct {
    const MNValue *v;
    int64_t off;
} At;

static void copy(Em *e, At a, int64_t ao, At b, int64_t bo, int64_t n, const char *mask) {
    emit_tile_copy(e, a.v, a.off + ao, b.v, b.off + bo, n, mask);
}

/* rows: N images of rows x cols pixels per tile (CB long words each) from s to d */
static void move_rows(Em *e, const Retile *r, At s, At d, int64_t cols, int64_t S1, int64_t S2) {
    const Axis *a = &r->r;
    int64_t row = cols * r->CB, half = a->dir > 0 ? a->t1 : a->t2, part = r->N * half * row;
    MNTile t; /* the grid the rows move to, and that of their sources (where they span L2Bs) */
    memset(&t, 0, sizeof t);
    t.TYo = a->T2, t.gyo = a->g2, t.rep = (uint8_t)r->h1[6];
    bool wider = a->T1 * a->g1 > a->T2 * a->g2;
    t.TY = wider ? a->T1 : a->T2, t.gy = wider ? a->g1 : a->g2;
    for (int64_t img = 0; img < r->N; img++) /* rows 0 .. half - 1 of every tile stay where they are */
        copy(e, s, img * a->t1 * row, d, img * a->t2 * row, half * row, "");
    At s1 = {NULL, S1}, s2 = {NULL, S2};
    if (a->dir > 0) {
        copy(e, s, 0, s1, 0, part, "");
        for (int64_t phi = 1; phi < a->f; phi++) {
            emit_tile_shift_rows(e, &t, S1, S2, part, phi * a->g1);
            for (int64_t img = 0; img < r->N; img++)
                copy(e, s2, img * a->t1 * row, d, (img * a->t2 + phi * a->t1) * row, a->t1 * row, "");
        }
        return;
    }
    for (int64_t img = 0; img < r->N; img++)
        copy(e, s, (img * a->t1 + a->t2) * row, s1, img * a->t2 * row, a->t2 * row, "");
    emit_tile_shift_rows(e, &t, S1, S2, part, -a->g2);
    t.TY = a->T1, t.gy = a->g1;
    emit_tile_place(e, &t, true);
    emit_tile_off_grid(e, a->g1);
    for (int64_t img = 0; img < r->N; img++)
        copy(e, s2, img * a->t2 * row, d, img * a->t2 * row, a->t2 * row, "/$imr1");
}

/* columns: N images of rows x (t1 -> t2) columns per tile from s to d, row by row */
static void move_cols(Em *e, const Retile *r, At s, At d, int64_t rows, int64_t S1, int64_t S2) {
    const Axis *a = &r->c;
    int64_t CB = r->CB, lines = r->N * rows, half = (a->dir > 0 ? a->t1 : a->t2) * CB, part = lines * half;
    for (int64_t q = 0; q < lines; q++) /* columns 0 .. half - 1 of every row stay */
        copy(e, s, q * a->t1 * CB, d, q * a->t2 * CB, half, "");
    At s1 = {NULL, S1}, s2 = {NULL, S2};
    if (a->dir > 0) {
        copy(e, s, 0, s1, 0, lines * a->t1 * CB, "");
        for (int64_t phi = 1; phi < a->f; phi++) {
            emit_tile_shift_cols(e, S1, S2, part, phi * a->g1);
            for (int64_t q = 0; q < lines; q++) copy(e, s2, q * half, d, (q * a->t2 + phi * a->t1) * CB, half, "");
        }
        return;
    }
    for (int64_t q = 0; q < lines; q++) copy(e, s, q * a->t1 * CB + half, s1, q * half, half, "");
    emit_tile_shift_cols(e, S1, S2, part, -a->g2);
    MNTile t;
    memset(&t, 0, sizeof t);
    t.rep = (uint8_t)r->h1[6];
    emit_tile_place(e, &t, false);
    emit_tile_off_grid(e, a->g1);
    for (int64_t q = 0; q < lines; q++) copy(e, s2, q * half, d, q * a->t2 * CB, half, "/$imr1");
}

void emit_tile_retile(Em *e, const MNNode *n, const Walk *wk) {
    Retile r;
    if (!retile_of(e->c, n, &r)) die("node '%s' is no switch between tilings", n->name);
    int64_t X = span_lw(&r), S1 = wk->scr[wk->pos], S2 = S1 + X, M = S2 + X;
    At x = {n->in[0], 0}, y = {n->out[0], 0}, mid = {r.c.dir ? NULL : n->out[0], r.c.dir ? M : 0};
    if (r.r.dir) move_rows(e, &r, x, r.c.dir ? mid : y, r.c.t1, S1, S2);
    if (r.c.dir) move_cols(e, &r, r.r.dir ? mid : x, y, r.r.t2, S1, S2);
}

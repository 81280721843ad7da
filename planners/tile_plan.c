/* Tiles: 2-D convolutions over images spread across the whole machine, on the matrix
 * unit, without index tables.
 *
 * The matrix unit multiplies an 8 x 8 block of weights by a row of 8 values packed over
 * the 4 PEs of a MAB (two floats each): a pixel's 8 channels. So a tiled value puts
 *
 *   channels (C)   packed like a product's K: blocks of 8 over (2_W, 4_PE), the blocks
 *                  as addresses;
 *   columns (W)    TX tiles over the MABs of an L1B, tw columns each as addresses;
 *   rows (H)       TY tiles over the L1Bs, then the L2Bs (all of the machine's), th rows
 *                  each as addresses;
 *   batch (N)      addresses;
 *
 * so every MAB holds a tile of th x tw pixels with all their channels. The output has
 * tiles of tho x two pixels with th = tho sh and tw = two sw, so a MAB's output tile
 * reads its input tile plus halos (ht rows above, hb below, hl columns left, hr right)
 * from the neighbouring tiles: the MABs beside it through the L1BM, the tiles above and
 * below through the L2BM, and across L2Bs through the PDM (emitter/tile.c). With the
 * halos in an LM0 scratch, output pixel (r, c) of tap (i, j) reads the scratch pixel
 * (r sh + i dh, c sw + j dw) (offset by the halos and pads): one address per pixel and
 * K block, alike on every MAB, so the convolution is a product (emitter/matmul.c's
 * streamed one) whose K blocks are (tap, channel block) and whose weights, too large to
 * replicate, stream from DRAM in panels.
 *
 * Tiles are chosen as small as the machine allows (the fullest MAB's work is its tile);
 * a halo of more than one tile, a scratch beyond half of LM0, or more than 64 row tiles
 * is not taken. Taken: Conv with group 1, constant weights and bias, float; depthwise ones
 * (their taps fold on the vector unit, the weights in LM); and 2-D pools
 * (MaxPool, AveragePool with one count for every window), whose taps fold on the vector
 * unit from the same scratch; where the input is on tiles, global pools, Resizes that
 * upscale by whole factors (their terms from the scratch too) and DepthToSpace (a copy
 * within each MAB). A Conv of one output pixel over tiles that spread (a flattened image's
 * product, fc_lower.c) is computed at tile 0 and sent to every MAB, its output on all. */
#include "plan.h"
#include "num.h"
#include "ops.h"
#include "resize.h"
#include <math.h>
#include <string.h>

bool plan_window_2d(const MNNode *n, const int64_t *kernel, const MNType *x, const MNType *y, MNWindow2 *w) {
    const MNAttr *ks = ir_attr(n, "kernel_shape");
    if (!kernel && (!ks || ks->type != MN_ATTR_INTS || ks->n != 2)) return false;
    for (int i = 0; i < 2; i++)
        w->k[i] = kernel ? kernel[i] : ks->ints[i], w->s[i] = w->d[i] = 1, w->pb[i] = w->pe[i] = 0;
    if (ks && (ks->type != MN_ATTR_INTS || ks->n != 2 || ks->ints[0] != w->k[0] || ks->ints[1] != w->k[1]))
        return false;
    const char *names[3] = {"strides", "dilations", "pads"};
    int64_t *dst[3] = {w->s, w->d, w->pb};
    for (int j = 0; j < 3; j++) {
        const MNAttr *b = ir_attr(n, names[j]);
        if (!b) continue;
        if (b->type != MN_ATTR_INTS || b->n != (j == 2 ? 4 : 2)) return false;
        for (int i = 0; i < 2; i++) dst[j][i] = b->ints[i];
        if (j == 2)
            for (int i = 0; i < 2; i++) w->pe[i] = b->ints[2 + i];
    }
    const char *ap = ir_attr_string(n, "auto_pad", "NOTSET");
    if (!strcmp(ap, "VALID"))
        w->pb[0] = w->pb[1] = w->pe[0] = w->pe[1] = 0;
    else if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER"))
        for (int i = 0; i < 2; i++) {
            int64_t total = (y->dims[2 + i] - 1) * w->s[i] + (w->k[i] - 1) * w->d[i] + 1 - x->dims[2 + i];
            if (total < 0) total = 0;
            w->pb[i] = !strcmp(ap, "SAME_UPPER") ? total / 2 : total - total / 2;
            w->pe[i] = total - w->pb[i];
        }
    else if (strcmp(ap, "NOTSET"))
        return false;
    for (int i = 0; i < 2; i++)
        if (w->k[i] < 1 || w->s[i] < 1 || w->d[i] < 1 || w->pb[i] < 0) return false;
    return true;
}

/* tiles along one side: out outputs (in inputs) in tiles of to outputs, at most max tiles */
static bool side(int64_t out, int64_t in, int64_t s, int64_t h0, int64_t h1, int64_t max, int64_t *tiles, int64_t *to) {
    /* tiles of a power of two first: the nodes after a stride-2 one then follow its tiles */
    for (int pass = 0; pass < 2; pass++)
        for (int64_t k = 1; k <= out; k++) {
            int64_t n = num_pow2_at_least(num_cdiv(out, k), max);
            if ((!pass && (k & (k - 1))) || num_cdiv(out, k) > max || max % n) continue;
            if (n * k * s < in || h0 > k * s || h1 > k * s) continue;
            *tiles = n, *to = k;
            return true;
        }
    return false;
}

/* float: planned so, or (before the dtype planner) a float32 of the model */
static bool is_float(const MNValue *v) {
    return v->dtype == MN_DT_Float || (v->dtype == MN_DT_Unknown && v->type.elem == ONNX_FLOAT32);
}

/* a pool's kind, and whether all its windows have one count (AveragePool: 1 / (kh kw)) */
static bool pool(const MNNode *n, MNTile *t) {
    if (n->op == OP_MaxPool) {
        t->kind = MN_TILE_MAX;
        return n->nout == 1 || !n->out[1] || !n->out[1]->nuses; /* no Indices */
    }
    t->kind = MN_TILE_AVG;
    const MNAttr *p = ir_attr(n, "pads");
    int64_t pe[2] = {0, 0};
    if (p && p->type == MN_ATTR_INTS && p->n == 4) pe[0] = p->ints[2], pe[1] = p->ints[3];
    bool inc = ir_attr_int(n, "count_include_pad", 0) != 0;
    if (strcmp(ir_attr_string(n, "auto_pad", "NOTSET"), "NOTSET")) return false;
    int64_t lo_h = inc ? -t->pt : 0, hi_h = inc ? t->H + pe[0] : t->H, lo_w = inc ? -t->pl : 0,
            hi_w = inc ? t->W + pe[1] : t->W;
    return -t->pt >= lo_h && -t->pl >= lo_w && (t->OH - 1) * t->sh - t->pt + (t->kh - 1) * t->dh < hi_h &&
           (t->OW - 1) * t->sw - t->pl + (t->kw - 1) * t->dw < hi_w;
}

/* an output side that follows the input's tiles (T tiles of t at grid step g): with t a
 * multiple of the stride, the same tiles, t / s each; with the stride a multiple of t,
 * one output per s / t input tiles, on every (s / t)-th of their places */
static bool follow(int64_t out, int64_t s, int64_t T, int64_t g, int64_t t, int64_t max, int64_t *To, int64_t *go,
                   int64_t *to) {
    if (T < 1 || g < 1 || t < 1) return false;
    if (t % s == 0) {
        *To = T, *go = g, *to = t / s;
    } else if (s % t == 0) {
        int64_t f = s / t;
        *to = 1, *go = g * f, *To = num_cdiv(T, f);
    } else
        return false;
    return *To * *to >= out && (*To - 1) * *go < max;
}

/* A pick along one side (a window of one, stride s > 1, no padding: a dilated pool's grid,
 * pool_lower.c) whose tiles of whole strides are too large for LM: tiles of one input line
 * each instead, as many as the side has (a power of two, at most max), and the output on
 * every s-th of them (follow's second form). A 1-D signal seen as rows of s samples (its
 * 22000 x 10 grid) then has one column per MAB instead of all ten on every MAB. */
static bool narrow_pick(int64_t in, int64_t out, int64_t k, int64_t s, int64_t pb, int64_t pe, int64_t max, int64_t *T,
                        int64_t *t, int64_t *To, int64_t *go, int64_t *to) {
    if (k != 1 || s < 2 || pb || pe || in > max) return false;
    int64_t n = num_pow2_at_least(in, max);
    if (n < in || max % n) return false;
    int64_t To_, go_, to_;
    if (!follow(out, s, n, 1, 1, max, &To_, &go_, &to_)) return false;
    *T = n, *t = 1, *To = To_, *go = go_, *to = to_;
    return true;
}

/* A global pool over a tiled input: each MAB folds its tile, the tree folds the tiles
 * (emitter/tile.c); the output is one pixel, on every MAB. */
/* a ReduceMean or ReduceMax over the last two axes of an image, keeping them */
static bool reduce_hw(const MNNode *n) {
    if (n->op != OP_ReduceMean && n->op != OP_ReduceMax) return false;
    const MNAttr *a = ir_attr(n, "axes");
    int64_t ax[2], cnt = 0;
    if (a && a->type == MN_ATTR_INTS && a->n == 2)
        ax[0] = a->ints[0], ax[1] = a->ints[1], cnt = 2;
    else if (!a && n->nin > 1 && n->in[1] && n->in[1]->konst && n->in[1]->konst->numel == 2)
        ax[0] = (int64_t)ir_tensor_get_f(n->in[1]->konst, 0), ax[1] = (int64_t)ir_tensor_get_f(n->in[1]->konst, 1),
        cnt = 2;
    for (int i = 0; i < cnt; i++)
        if (ax[i] < 0) ax[i] += 4;
    return cnt == 2 && ((ax[0] == 2 && ax[1] == 3) || (ax[0] == 3 && ax[1] == 2));
}

static bool global_pool(const MNNode *n, const MNMachine *m, MNTile *t) {
    const MNAttr *hint = ir_attr(n, "tile_in");
    const MNValue *x = n->in[0], *y = n->out[0];
    if (!hint || hint->type != MN_ATTR_INTS || hint->n != 7 || n->nout != 1 || !x || !y) return false;
    if (x->type.rank != 4 || (y->type.rank != 4 && y->type.rank != 2) || !is_float(x) || !is_float(y)) return false;
    t->kind = n->op == OP_GlobalAveragePool || n->op == OP_ReduceMean ? MN_TILE_GAP : MN_TILE_GMAX;
    t->out_rank = y->type.rank; /* 2: a reduction that drops the two axes */
    const int64_t *h = hint->ints;
    t->TY = h[0], t->gy = h[1], t->th = h[2], t->TX = h[3], t->gx = h[4], t->tw = h[5], t->rep = (uint8_t)h[6];
    t->N = x->type.dims[0], t->C = t->OC = x->type.dims[1], t->H = x->type.dims[2], t->W = x->type.dims[3];
    t->OH = t->OW = 1, t->kh = t->H, t->kw = t->W, t->sh = t->sw = t->dh = t->dw = 1;
    t->CB = t->OCB = num_cdiv(t->C, 8);
    if (t->TY * t->th < t->H || t->TX * t->tw < t->W) return false;
    t->TYo = t->TXo = t->gyo = t->gxo = t->tho = t->two = 1;
    t->repo = (uint8_t)(1u << LV_MAB | 1u << LV_L1B | 1u << LV_L2B);
    t->rows_e = t->th, t->cols_e = t->tw, t->ecb = t->CB;
    t->scratch_lw = num_cdiv(t->rows_e * t->cols_e * t->CB, 4) * 4 + num_cdiv(t->CB, 4) * 4;
    return t->scratch_lw <= m->lm0_lw / 2;
}

/* A Resize (or Upsample) on tiles: rows and columns upscaled by whole factors, nearest or
 * linear, the batch and channels kept. Each output tile sits where its input tile does,
 * fh x fw times as large, and output row r of tile k reads input rows k th + a(r) for
 * the same offsets a(r) (and weights) in every tile, so they are read from the tile's
 * scratch with its halos like a pool's taps; a term past the image reads the edge (the
 * scratch repeats it there). Resize splits a linear one into one axis at a time first
 * (resize_split.c), so a pixel has at most 2 terms. */
static bool resize_axis_tiles(const ResizePlan *p, int d, int64_t t, int64_t T, int64_t *lo, int64_t *hi, bool *edge) {
    int64_t f = p->out[d] / p->in[d], n = p->T[d];
    if (p->out[d] != f * p->in[d] || n > 2) return false;
    *lo = 0, *hi = t - 1;
    for (int64_t k = 0; k < T; k++)
        for (int64_t r = 0; r < f * t && k * f * t + r < p->out[d]; r++) {
            int64_t a0[4], a[4];
            double w0[4], w[4];
            if (!resize_axis(p, d, r, false, a0, w0) || !resize_axis(p, d, k * f * t + r, false, a, w)) return false;
            for (int j = 0; j < n; j++) {
                if (a[j] - k * t != a0[j] || fabs(w[j] - w0[j]) > 1e-9) return false;
                if (a0[j] < *lo) *lo = a0[j];
                if (a0[j] > *hi) *hi = a0[j];
                if (a[j] < 0 || a[j] >= p->in[d]) *edge = true;
            }
        }
    return *lo >= -t && *hi < 2 * t;
}

/* the plan of a Resize or Upsample (opset 10's form has no region of interest input) */
bool plan_tile_resize_plan(const MNNode *n, ResizePlan *p) {
    int64_t K;
    return !resize_plan(n, n->op == OP_Upsample || n->nin == 2 ? 10 : 11, p, &K);
}

/* A Resize of an image of one pixel held on every MAB (a global pool's, as DeepLab's ASPP
 * pools) to an image on the tiles tile_out names (the layout planner takes them from a
 * value the output meets): every output pixel is that pixel (its terms' weights sum to
 * 1), so each MAB fills its output tile with it. */
static bool bcast_tile(const MNNode *n, const MNMachine *m, const ResizePlan *p, const int64_t *h, MNTile *t) {
    const MNAttr *o = ir_attr(n, "tile_out");
    const MNValue *x = n->in[0], *y = n->out[0];
    const uint8_t all = (uint8_t)(1u << LV_MAB | 1u << LV_L1B | 1u << LV_L2B);
    if (!o || o->type != MN_ATTR_INTS || o->n != 7 || x->type.dims[2] != 1 || x->type.dims[3] != 1 || h[0] != 1 ||
        h[2] != 1 || h[3] != 1 || h[5] != 1 || (h[6] & all) != all || p->mode == RESIZE_CUBIC ||
        p->ct == RESIZE_CT_TF_CROP /* extrapolated pixels */)
        return false;
    const int64_t *q = o->ints;
    t->kind = MN_TILE_BCAST;
    t->TY = t->TX = t->th = t->tw = t->gy = t->gx = 1, t->rep = (uint8_t)h[6];
    t->N = x->type.dims[0], t->C = t->OC = x->type.dims[1], t->H = t->W = 1;
    t->OH = y->type.dims[2], t->OW = y->type.dims[3];
    t->TYo = q[0], t->gyo = q[1], t->tho = q[2], t->TXo = q[3], t->gxo = q[4], t->two = q[5], t->repo = (uint8_t)q[6];
    t->CB = t->OCB = num_cdiv(t->C, 8), t->kh = t->kw = t->sh = t->sw = t->dh = t->dw = 1;
    t->rows_e = t->cols_e = 1, t->ecb = t->CB;
    (void)m;
    return t->TYo * t->tho >= t->OH && t->TXo * t->two >= t->OW;
}

static bool resize_tile(const MNNode *n, const MNMachine *m, MNTile *t) {
    const MNAttr *hint = ir_attr(n, "tile_in");
    const MNValue *x = n->in[0], *y = n->out[0];
    if (!hint || hint->type != MN_ATTR_INTS || hint->n != 7 || n->nout != 1 || !x || !y) return false;
    if (x->type.rank != 4 || y->type.rank != 4 || !is_float(x) || !is_float(y)) return false;
    ResizePlan p;
    if (!plan_tile_resize_plan(n, &p) || p.exclude) return false;
    if (p.in[0] == p.out[0] && p.in[1] == p.out[1] && bcast_tile(n, m, &p, hint->ints, t)) return true;
    if (p.mode == RESIZE_CUBIC) return false;
    for (int d = 0; d < 2; d++) /* the batch and channels as they are */
        for (int64_t o = 0; o < p.out[d]; o++) {
            int64_t a[4];
            double w[4];
            if (p.in[d] != p.out[d] || p.T[d] != 1 || !resize_axis(&p, d, o, false, a, w) || a[0] != o) return false;
        }
    t->kind = MN_TILE_RESIZE;
    const int64_t *h = hint->ints;
    t->TY = h[0], t->gy = h[1], t->th = h[2], t->TX = h[3], t->gx = h[4], t->tw = h[5], t->rep = (uint8_t)h[6];
    t->N = x->type.dims[0], t->C = t->OC = x->type.dims[1], t->H = x->type.dims[2], t->W = x->type.dims[3];
    t->OH = y->type.dims[2], t->OW = y->type.dims[3];
    if (t->TY * t->th < t->H || t->TX * t->tw < t->W) return false;
    int64_t lo[2], hi[2];
    if (!resize_axis_tiles(&p, 2, t->th, t->TY, &lo[0], &hi[0], &t->edge) ||
        !resize_axis_tiles(&p, 3, t->tw, t->TX, &lo[1], &hi[1], &t->edge))
        return false;
    t->fh = t->OH / t->H, t->fw = t->OW / t->W;
    t->kh = p.T[2], t->kw = p.T[3], t->sh = t->sw = t->dh = t->dw = 1;
    t->ht = -lo[0], t->hb = hi[0] - (t->th - 1), t->hl = -lo[1], t->hr = hi[1] - (t->tw - 1);
    t->CB = t->OCB = num_cdiv(t->C, 8);
    t->TYo = t->TY, t->gyo = t->gy, t->tho = t->th * t->fh, t->TXo = t->TX, t->gxo = t->gx, t->two = t->tw * t->fw;
    t->repo = t->rep;
    t->rows_e = t->ht + t->th + t->hb, t->cols_e = t->hl + t->tw + t->hr;
    int64_t px = t->rows_e * t->cols_e;
    t->ecb = t->CB;
    if (px * t->CB > m->lm0_lw / 4) { /* channel blocks a few at a time */
        t->ecb = m->lm0_lw / 4 / px / 4 * 4;
        if (t->ecb < 4) return false;
    }
    t->scratch_lw = num_cdiv(px * t->ecb, 4) * 4;
    return t->scratch_lw <= m->lm0_lw / 2;
}

/* A DepthToSpace (DCR) on tiles: output pixel (s i + a, s j + b) is input pixel (i, j)'s
 * channels (a s + b) C' .. + C' - 1, whole channel blocks when C' is a multiple of 8, so
 * each output tile sits where its input tile does, s times as large along each side,
 * and every MAB copies its own pixels' blocks (a ConvTranspose's phases, convt_lower.c). */
static bool d2s_tile(const MNNode *n, const MNMachine *m, MNTile *t) {
    const MNAttr *hint = ir_attr(n, "tile_in");
    const MNValue *x = n->in[0], *y = n->out[0];
    if (!hint || hint->type != MN_ATTR_INTS || hint->n != 7 || n->nout != 1 || !x || !y) return false;
    if (x->type.rank != 4 || y->type.rank != 4 || !is_float(x) || !is_float(y)) return false;
    int64_t s = ir_attr_int(n, "blocksize", 0);
    if (s < 1 || strcmp(ir_attr_string(n, "mode", "DCR"), "DCR") || y->type.dims[1] % 8) return false;
    t->kind = MN_TILE_D2S;
    const int64_t *h = hint->ints;
    t->TY = h[0], t->gy = h[1], t->th = h[2], t->TX = h[3], t->gx = h[4], t->tw = h[5], t->rep = (uint8_t)h[6];
    t->N = x->type.dims[0], t->C = x->type.dims[1], t->H = x->type.dims[2], t->W = x->type.dims[3];
    t->OC = y->type.dims[1], t->OH = y->type.dims[2], t->OW = y->type.dims[3];
    if (t->TY * t->th < t->H || t->TX * t->tw < t->W || t->OC * s * s != t->C) return false;
    t->fh = t->fw = s, t->kh = t->kw = t->sh = t->sw = t->dh = t->dw = 1;
    t->CB = num_cdiv(t->C, 8), t->OCB = t->OC / 8;
    t->TYo = t->TY, t->gyo = t->gy, t->tho = t->th * s, t->TXo = t->TX, t->gxo = t->gx, t->two = t->tw * s;
    t->repo = t->rep;
    t->rows_e = t->th, t->cols_e = t->tw, t->ecb = t->CB; /* no scratch: the tile's own pixels */
    (void)m;
    return true;
}

bool plan_tile_op(int op) {
    return op == OP_Conv || op == OP_MaxPool || op == OP_AveragePool || op == OP_GlobalAveragePool ||
           op == OP_GlobalMaxPool || op == OP_ReduceMean || op == OP_ReduceMax || op == OP_Resize ||
           op == OP_Upsample || op == OP_DepthToSpace;
}

bool plan_tile(const MNNode *n, const MNMachine *m, MNTile *t) {
    memset(t, 0, sizeof *t);
    if (n->op == OP_GlobalAveragePool || n->op == OP_GlobalMaxPool || reduce_hw(n)) return global_pool(n, m, t);
    if (n->op == OP_Resize || n->op == OP_Upsample) return resize_tile(n, m, t);
    if (n->op == OP_DepthToSpace) return d2s_tile(n, m, t);
    bool conv = n->op == OP_Conv;
    if (!conv && n->op != OP_MaxPool && n->op != OP_AveragePool) return false;
    if (n->nin < (conv ? 2 : 1) || n->nout < 1 || !n->in[0] || (conv && !n->in[1]) || !n->out[0]) return false;
    if (conv && n->nout != 1) return false;
    const MNValue *x = n->in[0], *w = conv ? n->in[1] : NULL, *y = n->out[0], *b = conv && n->nin > 2 ? n->in[2] : NULL;
    if (w && w->producer && w->producer->op == OP_MNCoreDownload) w = w->producer->in[0]; /* brought into LM */
    if (x->type.rank != 4 || y->type.rank != 4 || !is_float(x) || !is_float(y)) return false;
    int64_t group = conv ? ir_attr_int(n, "group", 1) : 1;
    bool dw = conv && group > 1 && group == x->type.dims[1] && w->type.rank == 4 && w->type.dims[0] == group &&
              w->type.dims[1] == 1; /* depthwise: one input channel per output channel */
    if (conv && (w->type.rank != 4 || (group != 1 && !dw) || !is_float(w) || !w->konst)) return false;
    if (b && b->producer && b->producer->op == OP_MNCoreDownload) b = b->producer->in[0]; /* brought into LM */
    if (b && (!b->konst || !is_float(b) || b->type.rank != 1)) return false;
    if (m->pe_per_mab != 4 || m->mab_per_l1b < 1) return false;
    int64_t kernel[2] = {conv ? w->type.dims[2] : 0, conv ? w->type.dims[3] : 0};
    MNWindow2 w2;
    if (!plan_window_2d(n, conv ? kernel : NULL, &x->type, &y->type, &w2)) return false;
    t->kh = w2.k[0], t->kw = w2.k[1], t->sh = w2.s[0], t->sw = w2.s[1], t->dh = w2.d[0], t->dw = w2.d[1];
    t->pt = w2.pb[0], t->pl = w2.pb[1];
    t->N = x->type.dims[0], t->C = x->type.dims[1], t->H = x->type.dims[2], t->W = x->type.dims[3];
    t->OC = y->type.dims[1], t->OH = y->type.dims[2], t->OW = y->type.dims[3];
    if (t->N < 1 || t->OH < 1 || t->OW < 1) return false;
    if (conv && (w->type.dims[0] != t->OC || w->type.dims[1] != (dw ? 1 : t->C))) return false;
    t->kind = dw ? MN_TILE_DW : t->kind;
    if (!conv && (t->OC != t->C || !pool(n, t))) return false;
    t->CB = num_cdiv(t->C, 8), t->OCB = num_cdiv(t->OC, 8);
    int64_t hb = (t->kh - 1) * t->dh - t->pt - t->sh + 1, hr = (t->kw - 1) * t->dw - t->pl - t->sw + 1;
    t->ht = t->pt, t->hl = t->pl, t->hb = hb > 0 ? hb : 0, t->hr = hr > 0 ? hr : 0;
    int64_t rows_max = (int64_t)m->l1b_per_l2b * m->n_l2b, cols_max = m->mab_per_l1b;
    const MNAttr *hint = ir_attr(n, "tile_in"); /* the input's tiling (layout_plan.c), else a fresh one */
    if (hint && hint->type == MN_ATTR_INTS && hint->n == 7) { /* (an empty one: none) */
        const int64_t *h = hint->ints;
        t->TY = h[0], t->gy = h[1], t->th = h[2], t->TX = h[3], t->gx = h[4], t->tw = h[5], t->rep = (uint8_t)h[6];
        if (!follow(t->OH, t->sh, t->TY, t->gy, t->th, rows_max, &t->TYo, &t->gyo, &t->tho) ||
            !follow(t->OW, t->sw, t->TX, t->gx, t->tw, cols_max, &t->TXo, &t->gxo, &t->two))
            return false;
        if (t->TY * t->th < t->H || t->TX * t->tw < t->W) return false;
    } else {
        /* the smallest tiles whose halos come from the next tile only, as many as the levels
         * hold (a power of two each) and covering every input row and column */
        if (!side(t->OH, t->H, t->sh, t->ht, t->hb, rows_max, &t->TY, &t->tho) ||
            !side(t->OW, t->W, t->sw, t->hl, t->hr, cols_max, &t->TX, &t->two))
            return false;
        t->tw = t->two * t->sw, t->th = t->tho * t->sh, t->gx = t->gy = 1;
        t->TYo = t->TY, t->TXo = t->TX, t->gyo = t->gxo = 1;
        if (t->th * t->tw * t->CB > m->lm0_lw / 2 && /* tiles too large for LM: a pick's narrower */
            !narrow_pick(t->W, t->OW, t->kw, t->sw, t->pl, t->hr, cols_max, &t->TX, &t->tw, &t->TXo, &t->gxo, &t->two))
            narrow_pick(t->H, t->OH, t->kh, t->sh, t->pt, t->hb, rows_max, &t->TY, &t->th, &t->TYo, &t->gyo, &t->tho);
        t->rep = 0;
        if (t->TX == 1) t->rep |= (uint8_t)(1u << LV_MAB);
        if (t->TY <= m->l1b_per_l2b) t->rep |= (uint8_t)(1u << LV_L2B);
        if (t->TY == 1) t->rep |= (uint8_t)(1u << LV_L1B);
    }
    /* replicated where the input is and the output's tiles do not reach */
    t->repo = t->rep;
    const uint8_t tree = (uint8_t)(1u << LV_MAB | 1u << LV_L1B | 1u << LV_L2B);
    if (t->kind == MN_TILE_CONV && t->OH == 1 && t->OW == 1 && (t->rep & tree) != tree) {
        t->bcast_out = true; /* one pixel, tile 0's, then on every MAB (emitter/tile.c) */
        t->TYo = t->TXo = t->gyo = t->gxo = t->tho = t->two = 1;
        t->repo = tree;
    }
    if (t->TXo * t->gxo > 1) t->repo &= (uint8_t) ~(1u << LV_MAB);
    if (t->TYo * t->gyo > 1) t->repo &= (uint8_t) ~(1u << LV_L1B);
    if (t->TYo * t->gyo > m->l1b_per_l2b) t->repo &= (uint8_t) ~(1u << LV_L2B);
    t->rows_e = t->ht + t->tho * t->sh + t->hb, t->cols_e = t->hl + t->two * t->sw + t->hr;
    if ((t->kind == MN_TILE_MAX || t->kind == MN_TILE_AVG) && !t->ht && !t->hb && !t->hl && !t->hr &&
        (t->tho - 1) * t->sh + (t->kh - 1) * t->dh < t->th && (t->two - 1) * t->sw + (t->kw - 1) * t->dw < t->tw) {
        t->direct = true, t->ecb = t->CB, t->scratch_lw = 0;
        return true;
    }
    int64_t px = t->rows_e * t->cols_e;
    t->ecb = t->CB;
    if (t->kind != MN_TILE_CONV && px * t->CB > m->lm0_lw / 4) { /* channel blocks a few at a time */
        t->ecb = m->lm0_lw / 4 / px / 4 * 4; /* whole groups of 4 (the depthwise fold's) */
        if (t->ecb < 4 && t->CB < 4) t->ecb = t->CB; /* a tall tile of few channels (a 1-D signal's rows): */
        if (t->ecb < 4 && t->CB >= 4) return false; /* all of them, within the scratch's bound below */
    }
    if (t->kind == MN_TILE_CONV && px * t->CB > m->lm0_lw / 2) { /* the product over a few channel blocks at */
        t->ecb = m->lm0_lw / 4 / px; /* a time, adding to the output's sums (a large halo: a dilated one) */
        if (t->ecb < 1) { /* and one kernel row at a time: its band of rows, and the tile's own rows */
            int64_t band = (t->tho - 1) * t->sh + 1;
            t->rowpass = true;
            t->ecb = m->lm0_lw / 4 / ((band + t->th) * t->cols_e);
            if (t->ecb > t->CB) t->ecb = t->CB;
            if (t->ecb < 1) return false;
            t->own_lw = num_cdiv(t->th * t->cols_e * t->ecb, 4) * 4;
            px = band * t->cols_e;
        }
    }
    t->scratch_lw = num_cdiv(px * t->ecb, 4) * 4 + t->own_lw;
    return t->scratch_lw <= m->lm0_lw / 2;
}

static void sub(MNLayout *l, int d, int64_t size, int64_t stride, MNLevel lv) {
    if (size <= 1 && lv != LV_ADDR) return;
    l->sub[d][l->nsub[d]++] = (MNSubaxis){size, (int32_t)stride, (uint8_t)lv};
}

/* T tiles at grid step g over the L1Bs, then the L2Bs: tile k at place k g (L1B k g mod J,
 * L2B k g / J) */
static void rows_sub(MNLayout *l, int d, int64_t T, int64_t g, int64_t J) {
    if (T <= 1) return;
    if (g >= J) {
        sub(l, d, T, g / J, LV_L2B);
        return;
    }
    int64_t n1 = T < J / g ? T : J / g;
    sub(l, d, T / n1, 1, LV_L2B);
    sub(l, d, n1, g, LV_L1B);
}

void plan_tile_layout(const MNTile *t, const MNMachine *m, bool out, MNLayout *l) {
    int64_t C = out ? t->OC : t->C, CB = out ? t->OCB : t->CB, rows = out ? t->tho : t->th, cols = out ? t->two : t->tw;
    memset(l, 0, sizeof *l);
    if (out && t->out_rank == 2) { /* (N, C): a pixel's channels per row, on every MAB */
        l->rank = 2;
        l->shape[0] = t->N, l->shape[1] = C;
        sub(l, 0, t->N, CB, LV_ADDR);
        sub(l, 1, CB, 1, LV_ADDR);
        sub(l, 1, 2, 1, LV_W);
        sub(l, 1, 4, 1, LV_PE);
        l->bcast = t->repo;
        return;
    }
    l->rank = 4;
    l->shape[0] = t->N, l->shape[1] = C, l->shape[2] = out ? t->OH : t->H, l->shape[3] = out ? t->OW : t->W;
    sub(l, 0, t->N, rows * cols * CB, LV_ADDR);
    sub(l, 1, CB, 1, LV_ADDR);
    sub(l, 1, 2, 1, LV_W);
    sub(l, 1, 4, 1, LV_PE);
    rows_sub(l, 2, out ? t->TYo : t->TY, out ? t->gyo : t->gy, m->l1b_per_l2b);
    sub(l, 2, rows, cols * CB, LV_ADDR);
    sub(l, 3, out ? t->TXo : t->TX, out ? t->gxo : t->gx, LV_MAB);
    sub(l, 3, cols, CB, LV_ADDR);
    l->bcast = out ? t->repo : t->rep;
}

/* the tiling of a layout plan_tile_layout made (false: not one) */
bool plan_tile_of(const MNLayout *l, const MNMachine *m, int64_t *h) {
    if (l->rank != 4 || l->nsub[2] < 1 || l->nsub[3] < 1) return false;
    int64_t J = m->l1b_per_l2b, TY = 1, gy = 1, TX = 1, gx = 1, n1 = 0, g1 = 1, n2 = 0, g2 = 1;
    for (int k = 0; k < l->nsub[2] - 1; k++) {
        const MNSubaxis *a = &l->sub[2][k];
        if (a->level == LV_L1B)
            n1 = a->size, g1 = a->stride;
        else if (a->level == LV_L2B)
            n2 = a->size, g2 = a->stride;
        else
            return false;
    }
    if (n1)
        TY = n1 * (n2 ? n2 : 1), gy = g1;
    else if (n2)
        TY = n2, gy = g2 * J;
    for (int k = 0; k < l->nsub[3] - 1; k++) {
        const MNSubaxis *a = &l->sub[3][k];
        if (a->level != LV_MAB) return false;
        TX = a->size, gx = a->stride;
    }
    h[0] = TY, h[1] = gy, h[2] = l->sub[2][l->nsub[2] - 1].size, h[3] = TX, h[4] = gx,
    h[5] = l->sub[3][l->nsub[3] - 1].size, h[6] = l->bcast;
    return true;
}

/* The weights (OC, C, kh, kw) as a streamed B: K block j = (tap, channel block), column
 * oc; oc's block j at long word (oc / 16) 16 KB + 16 j + oc % 16 (KB = taps x CB), one
 * copy for every MAB (layout_plan.c's kpanels, with the taps among the K blocks). */
void plan_tile_weights(const MNTile *t, MNLayout *l) {
    int64_t KB = t->kh * t->kw * t->CB;
    memset(l, 0, sizeof *l);
    if (t->kind ==
        MN_TILE_DW) { /* (C, 1, kh, kw): channel c's tap at long word cb taps + tap, packed as the channels */
        l->rank = 4;
        l->shape[0] = t->C, l->shape[1] = 1, l->shape[2] = t->kh, l->shape[3] = t->kw;
        sub(l, 0, t->CB, t->kh * t->kw, LV_ADDR);
        sub(l, 0, 2, 1, LV_W);
        sub(l, 0, 4, 1, LV_PE);
        sub(l, 1, 1, 1, LV_ADDR);
        sub(l, 2, t->kh, t->kw, LV_ADDR);
        sub(l, 3, t->kw, 1, LV_ADDR);
        l->bcast = (uint8_t)(1u << LV_MAB | 1u << LV_L1B | 1u << LV_L2B);
        return;
    }
    l->rank = 4;
    l->shape[0] = t->OC, l->shape[1] = t->C, l->shape[2] = t->kh, l->shape[3] = t->kw;
    sub(l, 0, num_cdiv(t->OC, 16), 16 * KB, LV_ADDR);
    sub(l, 0, 16, 1, LV_ADDR);
    sub(l, 1, t->CB, 16, LV_ADDR);
    sub(l, 1, 2, 1, LV_W);
    sub(l, 1, 4, 1, LV_PE);
    sub(l, 2, t->kh, 16 * t->kw * t->CB, LV_ADDR);
    sub(l, 3, t->kw, 16 * t->CB, LV_ADDR);
    l->bcast = (uint8_t)(1u << LV_MAB | 1u << LV_L1B | 1u << LV_L2B);
}

/* the bias (OC) packed like the output's channels, on every MAB */
void plan_tile_bias(const MNTile *t, MNLayout *l) {
    memset(l, 0, sizeof *l);
    l->rank = 1;
    l->shape[0] = t->OC;
    sub(l, 0, t->OCB, 1, LV_ADDR);
    sub(l, 0, 2, 1, LV_W);
    sub(l, 0, 4, 1, LV_PE);
    l->bcast = (uint8_t)(1u << LV_MAB | 1u << LV_L1B | 1u << LV_L2B);
}

bool plan_tile_node(const MNNode *n, const MNMachine *m, MNTile *t, MNLayout *in, MNLayout *out) {
    if (!plan_tile(n, m, t)) return false;
    plan_tile_layout(t, m, false, in);
    plan_tile_layout(t, m, true, out);
    MNLayout wl, bl;
    plan_tile_weights(t, &wl);
    plan_tile_bias(t, &bl);
    char err[200];
    return layout_valid(in, m, 4, err, sizeof err) && layout_valid(out, m, 4, err, sizeof err) &&
           ((t->kind != MN_TILE_CONV && t->kind != MN_TILE_DW) ||
            (layout_valid(&wl, m, 4, err, sizeof err) && layout_valid(&bl, m, 4, err, sizeof err)));
}

/* The tiled layout of a value of dims (N, C, H, W) on the tiling h (plan_tile_of's) */
bool plan_tile_layout_of(const int64_t *h, const MNMachine *m, const int64_t *dims, MNLayout *l) {
    MNTile t;
    memset(&t, 0, sizeof t);
    t.TY = h[0], t.gy = h[1], t.th = h[2], t.TX = h[3], t.gx = h[4], t.tw = h[5], t.rep = (uint8_t)h[6];
    t.N = dims[0], t.C = dims[1], t.H = dims[2], t.W = dims[3], t.CB = num_cdiv(t.C, 8);
    if (t.TY * t.th < t.H || t.TX * t.tw < t.W) return false;
    plan_tile_layout(&t, m, false, l);
    char err[200];
    return layout_valid(l, m, 4, err, sizeof err);
}

/* the constant integer j of input k (a list), or dflt */
static const MNValue *konst_in(const MNNode *n, int k) {
    const MNValue *v = k < n->nin ? n->in[k] : NULL;
    if (v && !v->konst && v->producer && v->producer->op == OP_MNCoreDownload) v = v->producer->in[0]; /* into LM */
    return v && v->konst ? v : NULL;
}

static int64_t kint(const MNNode *n, int k, int64_t j, int64_t dflt) {
    const MNValue *v = konst_in(n, k);
    return v && j < v->konst->numel ? (int64_t)ir_tensor_get_f(v->konst, j) : dflt;
}

bool plan_tile_chan_source(const MNNode *n, int o, int64_t j, int *k, int64_t *s) {
    int64_t C = n->in[0]->type.dims[1];
    *k = 0;
    switch (n->op) {
    case OP_Concat:
        for (*k = 0; *k < n->nin && j >= n->in[*k]->type.dims[1]; (*k)++) j -= n->in[*k]->type.dims[1];
        *s = j;
        return *k < n->nin;
    case OP_Split:
        for (int i = 0; i < o; i++) j += n->out[i]->type.dims[1];
        *s = j;
        return j < C;
    case OP_Slice: {
        int64_t st = kint(n, 1, 0, 0), step = kint(n, 4, 0, 1);
        if (st < 0) st += C;
        if (st < 0) st = 0;
        *s = st + j * step;
        return step > 0 && *s < C;
    }
    case OP_Gather: {
        int64_t v = kint(n, 1, j, -1 - C);
        *s = v < 0 ? v + C : v;
        return *s >= 0 && *s < C;
    }
    default: return false;
    }
}

/* A node that moves channels of tiled values (Concat, Split, a Slice or a Gather of
 * constant indices along the channels), every pixel where it is: the outputs' layouts on
 * tiling h into outs (room for n->nout). */
bool plan_tile_chan(const MNNode *n, const MNMachine *m, const int64_t *h, MNLayout *outs) {
    if (n->op != OP_Concat && n->op != OP_Split && n->op != OP_Slice && n->op != OP_Gather) return false;
    int64_t ax = ir_attr_int(n, "axis", n->op == OP_Gather ? 0 : 1);
    if (n->op == OP_Slice) { /* starts, ends, axes (one: the channels), steps: constants */
        if (n->nin < 3 || (n->nin > 3 && n->in[3] && kint(n, 3, 0, 9) != 1 && kint(n, 3, 0, 9) != -3)) return false;
        for (int k = 1; k < n->nin; k++)
            if (n->in[k] && (!n->in[k]->konst || n->in[k]->konst->numel != 1)) return false;
        ax = n->nin > 3 && n->in[3] ? 1 : (ir_attr(n, "starts") ? -9 : 0); /* no axes: from axis 0 */
    }
    if (ax != 1 && ax != -3) return false;
    if (n->op == OP_Gather && (!konst_in(n, 1) || n->in[1]->type.rank != 1)) return false;
    int nd = n->op == OP_Concat ? n->nin : 1;
    const MNValue *x = n->in[0];
    for (int k = 0; k < nd; k++) {
        const MNValue *v = n->in[k];
        if (!v || v->type.rank != 4 || !is_float(v) || v->type.dims[0] != x->type.dims[0] ||
            v->type.dims[2] != x->type.dims[2] || v->type.dims[3] != x->type.dims[3])
            return false;
    }
    for (int o = 0; o < n->nout; o++) {
        const MNValue *y = n->out[o];
        if (!y || y->type.rank != 4 || !is_float(y) || y->type.dims[0] != x->type.dims[0] ||
            y->type.dims[2] != x->type.dims[2] || y->type.dims[3] != x->type.dims[3])
            return false;
        for (int64_t j = 0; j < y->type.dims[1]; j++) {
            int k;
            int64_t sc;
            if (!plan_tile_chan_source(n, o, j, &k, &sc)) return false;
        }
        if (!plan_tile_layout_of(h, m, y->type.dims, &outs[o])) return false;
    }
    return true;
}

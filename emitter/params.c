/* Parameter images: the DRAM image of every constant the host writes (model.app's
 * params), compressed with zstd.
 *
 * An image depends only on the constant's data, its MN dtype and its layout, which the
 * planners have decided once Location (sliced) has run; nothing after it (Node
 * Simulation, the schedule, the address plan, the node code) changes them. So the pass
 * param_images, right after Location (sliced), starts making them on a thread of their
 * own when num_threads > 1: on a weight-heavy model they are a fifth of the work, and
 * until Code Emit the passes run on one core and leave the other idle.
 *
 * Code Emit takes an image from there only if the value still holds the very data,
 * dtype and layout it was made from, and makes any other (a value that became a
 * parameter later, the gather tables) itself: model.app is the same bytes whether the
 * thread ran or not. The thread reads nothing but what the pass copied for it and the
 * constant's data (never written after loading), and allocates with malloc, not from
 * the arena the other passes allocate from.
 *
 * Compression: param_compression=fast (the default) is zstd level -1: repeated runs
 * are found, but the literals are stored as they are; small (level 3) also entropy-codes
 * the literals, which makes float weights a few percent smaller at about four times the
 * time (on the 1k MLP: 3% of model.app for 74M instructions, an eighth of the compile). */
#include "params.h"
#include "app.h"
#include "options.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

typedef struct {
    const MNTensor *konst; /* what the image is made from */
    const char *layout; /* NULL: row-major, group 0 */
    MNDtype dtype;
    int64_t numel;
    uint8_t *zstd; /* the image (malloc'd) once made, until Code Emit takes it */
    size_t zstd_len;
    bool alike;
} PImg;

struct EmParams {
    const MNMachine *m;
    int level;
    PImg *img;
    int n;
    int *at; /* value id -> its index in img, -1: none */
    int nids;
    pthread_t tid;
    bool running;
};

static int level_of(const MNCompile *c) {
    return c->opt->ival[MN_OPT_param_compression] == MN_PARAM_COMPRESSION_SMALL ? 3 : -1;
}

bool emit_is_param(const MNValue *v) {
    return v->konst && ((v->loc_kind == MN_LOC_KIND_DRAM && v->nuses > 0) || v->is_output);
}

/* The uncompressed image, kept from one image to the next: a weight-heavy model's images
 * are hundreds of MB, and fresh pages for each cost the kernel's zeroing of every one. */
typedef struct {
    uint64_t *lw;
    size_t cap; /* long words */
} ImgBuf;

static uint64_t *img_room(ImgBuf *b, size_t lw) {
    if (lw > b->cap) {
        free(b->lw);
        b->lw = xmalloc(lw * 8);
        b->cap = lw;
    }
    return b->lw;
}

/* img compressed into *z (malloc'd) */
static bool pack(ZSTD_CCtx *zc, int level, const uint64_t *img, size_t bytes, uint8_t **z, size_t *zn, char *err,
                 size_t errlen) {
    size_t cap = ZSTD_compressBound(bytes);
    uint8_t *o = xmalloc(cap);
    size_t got = ZSTD_compressCCtx(zc, o, cap, img, bytes, level);
    if (ZSTD_isError(got)) {
        free(o);
        snprintf(err, errlen, "zstd: %s", ZSTD_getErrorName(got));
        return false;
    }
    *z = xrealloc(o, got ? got : 1);
    *zn = got;
    return true;
}

/* p's image, every group's part one after another (one part when they are alike) */
static bool make(const MNMachine *m, ZSTD_CCtx *zc, int level, ImgBuf *b, PImg *p, char *err, size_t errlen) {
    const char *d = mn_dtype_name(p->dtype);
    if (!p->layout) {
        uint64_t lw = app_image_lw(d, p->numel);
        uint64_t *img = img_room(b, (size_t)lw + 1);
        return app_encode(p->konst, d, img, err, errlen) &&
               pack(zc, level, img, (size_t)lw * 8, &p->zstd, &p->zstd_len, err, errlen);
    }
    uint64_t lw = app_layout_image_lw(p->layout, m, err, errlen);
    if (!lw) return false;
    p->alike = app_layout_alike(p->layout);
    size_t n = (size_t)lw * (p->alike ? 1 : (size_t)m->groups);
    uint64_t *img = img_room(b, n + 1);
    return (p->alike ? app_encode_layout_alike : app_encode_layout)(p->konst, d, p->layout, m, img, err, errlen) &&
           pack(zc, level, img, n * 8, &p->zstd, &p->zstd_len, err, errlen);
}

static PImg snap(const MNValue *v) {
    return (PImg){.konst = v->konst, .layout = v->layout, .dtype = v->dtype, .numel = ir_shape_numel(&v->type)};
}

static void *run(void *arg) {
    EmParams *ep = arg;
    char err[600]; /* a failure stops here; Code Emit makes that image again and says why */
    ZSTD_CCtx *zc = ZSTD_createCCtx();
    if (!zc) die("out of memory (zstd)");
    ImgBuf b = {0};
    for (int i = 0; i < ep->n; i++)
        if (!make(ep->m, zc, ep->level, &b, &ep->img[i], err, sizeof err)) break;
    free(b.lw);
    ZSTD_freeCCtx(zc);
    return NULL;
}

bool emit_param_images(MNCompile *c) {
    const MNGraph *g = c->g;
    if (mn_threads(c) < 2) return true;
    int n = 0;
    for (int i = 0; i < g->nvalues; i++) n += emit_is_param(g->values[i]);
    if (!n) return true;
    EmParams *ep = xcalloc(1, sizeof *ep);
    ep->m = &c->machine;
    ep->level = level_of(c);
    ep->img = xcalloc((size_t)n, sizeof(PImg));
    ep->nids = g->nvalues;
    ep->at = xmalloc(sizeof(int) * (size_t)g->nvalues);
    for (int i = 0; i < g->nvalues; i++) {
        const MNValue *v = g->values[i];
        ep->at[i] = -1;
        if (emit_is_param(v)) {
            ep->at[i] = ep->n;
            ep->img[ep->n++] = snap(v);
        }
    }
    c->params = ep;
    ep->running = !pthread_create(&ep->tid, NULL, run, ep);
    mn_figure(c, "params_ahead", ep->running ? ep->n : 0);
    return true;
}

static void join(EmParams *ep) {
    if (ep->running) pthread_join(ep->tid, NULL);
    ep->running = false;
}

void emit_params_drop(MNCompile *c) {
    EmParams *ep = c->params;
    if (!ep) return;
    join(ep);
    for (int i = 0; i < ep->n; i++) free(ep->img[i].zstd);
    free(ep->img);
    free(ep->at);
    free(ep);
    c->params = NULL;
}

bool emit_param_image(MNCompile *c, ZSTD_CCtx *zc, const MNValue *v, AppTensor *t, char *err, size_t errlen) {
    EmParams *ep = c->params;
    PImg want = snap(v);
    if (ep && v->id < ep->nids && ep->at[v->id] >= 0) {
        join(ep);
        PImg *p = &ep->img[ep->at[v->id]];
        if (p->zstd && p->konst == want.konst && p->layout == want.layout && p->dtype == want.dtype &&
            p->numel == want.numel) {
            t->zstd = p->zstd;
            t->zstd_len = p->zstd_len;
            t->alike = p->alike;
            p->zstd = NULL;
            return true;
        }
    }
    ImgBuf b = {0};
    bool ok = make(&c->machine, zc, level_of(c), &b, &want, err, errlen);
    free(b.lw);
    if (!ok) return false;
    t->zstd = want.zstd;
    t->zstd_len = want.zstd_len;
    t->alike = want.alike;
    return true;
}

/* Resize and Upsample's terms: which input elements, with which weights, make each output
 * element (resize.c says how they are found). Code Emit's window ops (emitter/window.c)
 * and tiles (tile_plan.c, emitter/tile.c) fold them. */
#ifndef MN_RESIZE_H
#define MN_RESIZE_H
#include "ir.h"

typedef struct {
    int rank, mode, ct, nm;
    bool exclude;
    double a, extrapolation;
    int64_t in[MN_MAX_RANK], out[MN_MAX_RANK], T[MN_MAX_RANK];
    double scale[MN_MAX_RANK], roi0[MN_MAX_RANK], roi1[MN_MAX_RANK];
} ResizePlan;

enum { RESIZE_NEAREST, RESIZE_LINEAR, RESIZE_CUBIC };
/* the coordinate transformation modes (ct) */
enum {
    RESIZE_CT_HALF_PIXEL,
    RESIZE_CT_PYTORCH_HALF_PIXEL,
    RESIZE_CT_ALIGN_CORNERS,
    RESIZE_CT_ASYMMETRIC,
    RESIZE_CT_TF_HALF_PIXEL_NN,
    RESIZE_CT_TF_CROP
};

/* node n's plan into *p (opset: the model's) and the terms of every output element, *K;
 * NULL, or why the node is not handled */
const char *resize_plan(const MNNode *n, int64_t opset, ResizePlan *p, int64_t *K);
/* term k of output element idx: the input element sidx and its weight *w; false when the
 * element lies outside the input (tf_crop_and_resize: the extrapolation value) */
bool resize_term(const ResizePlan *p, const int64_t *idx, int64_t k, int64_t *sidx, double *w);
/* the T[d] terms of output coordinate o along axis d: input coordinates at (past the edge
 * when !clamp; clamped they read the edge) and weights w; false as resize_term */
bool resize_axis(const ResizePlan *p, int d, int64_t o, bool clamp, int64_t *at, double *w);
double resize_extrapolation(const ResizePlan *p);
/* at most how many distinct weights its terms have (they are products over the axes) */
int64_t resize_weights(const ResizePlan *p);
#endif

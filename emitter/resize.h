/* Resize and Upsample's terms for window.c (resize.c says how they are found). */
#ifndef MN_RESIZE_H
#define MN_RESIZE_H
#include "compile.h"

typedef struct ResizePlan ResizePlan;
/* node n's plan (in the compile's arena) and the terms of every output element, *K;
 * NULL, or why the node is not handled */
const char *resize_plan(MNCompile *c, const MNNode *n, ResizePlan **p, int64_t *K);
/* term k of output element idx: the input element sidx and its weight *w; false when the
 * element lies outside the input (tf_crop_and_resize: the extrapolation value) */
bool resize_term(const ResizePlan *p, const int64_t *idx, int64_t k, int64_t *sidx, double *w);
double resize_extrapolation(const ResizePlan *p);
/* at most how many distinct weights its terms have (they are products over the axes) */
int64_t resize_weights(const ResizePlan *p);
#endif

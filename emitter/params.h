/* Parameter images (params.c): made ahead of Code Emit on a thread of their own. */
#ifndef MN_PARAMS_H
#define MN_PARAMS_H
#include "compile.h"
#include "app.h"
#include <zstd.h>

typedef struct EmParams EmParams;
/* a constant the host writes into DRAM: model.app has its image */
bool emit_is_param(const MNValue *v);
/* the pass param_images: every parameter's image started on a thread (num_threads > 1) */
bool emit_param_images(MNCompile *c);
/* v's image into t->zstd (malloc'd), t->zstd_len and t->alike: the one made ahead when
 * it was made from what v holds now, else made here with zc */
bool emit_param_image(MNCompile *c, ZSTD_CCtx *zc, const MNValue *v, AppTensor *t, char *err, size_t errlen);
/* the thread joined and the images Code Emit did not take freed (also when it never ran) */
void emit_params_drop(MNCompile *c);
#endif

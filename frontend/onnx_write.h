/* The graph back as ONNX (onnx_write.c): l3ir_stripped.onnx and --out-onnx. */
#ifndef MN_ONNX_WRITE_H
#define MN_ONNX_WRITE_H
#include "compile.h"

/* graph g as an ONNX model (strip: large constants without data) */
bool onnx_write_model(MNCompile *c, const MNGraph *g, bool strip, MNBuf *out);
/* the same with its allocations in arena a (another thread's) */
bool onnx_write_model_in(Arena *a, const MNCompile *c, const MNGraph *g, bool strip, MNBuf *out);
#endif

/* Input binding (bind.c): the options' input shapes and frozen values applied to the
 * graph's inputs; false with the error in *d on bad input. */
#ifndef MN_BIND_H
#define MN_BIND_H
#include "ir.h"
#include "options.h"

bool onnx_bind_inputs(MNGraph *g, const MNOptions *o, Arena *a, MNDiag *d);
#endif

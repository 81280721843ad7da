#ifndef MN_ONNX_LOAD_H
#define MN_ONNX_LOAD_H
#include "buf.h"
#include "ir.h"

/* Read an ONNX model file into a new MNGraph carved from arena a. On bad input returns
 * NULL with the reason in *d (one line naming the file, node and value). The graph is
 * in topological order; unsupported ops are all reported together. */
MNGraph *onnx_load_file(Arena *a, const char *path, MNDiag *d);
MNGraph *onnx_load_buffer(Arena *a, const char *path, const uint8_t *buf, size_t len, MNDiag *d);
/* The nodes of a Loop's or Scan's body (an MNAttr's graph) made once more in g, after its
 * last node: the body's inputs are bind[0..nbind), every value it makes is named prefix +
 * its name, a name the body does not define is g's value of that name (the outer scope);
 * outs[k] is the value of its output k. False with *d set. */
bool onnx_body_instantiate(MNGraph *g, const void *body, const char *prefix, MNValue *const *bind, int nbind,
                           MNValue **outs, int nouts, MNDiag *d);
/* A serialized TensorProto (the test data's input_N.pb / output_N.pb). */
MNTensor *onnx_load_tensor_file(Arena *a, const char *path, MNDiag *d);
/* Serialise a tensor as a TensorProto with raw_data (the test-data file format). */
bool onnx_tensor_to_pb(const MNTensor *t, const char *name, MNBuf *out);
#endif

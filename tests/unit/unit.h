/* A minimal unit-test harness: CHECK records a failure and goes on; each test is a
 * function listed in UNIT_TESTS (unit_main.c). The runner ends with "N passed, M failed". */
#ifndef MN_UNIT_H
#define MN_UNIT_H
#include "infer.h"
#include <stdio.h>
#include <string.h>

extern int unit_failures;
#define CHECK(c)                                                                    \
    do {                                                                            \
        if (!(c)) {                                                                 \
            unit_failures++;                                                        \
            fprintf(stderr, "  %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
        }                                                                           \
    } while (0)
#define CHECK_EQ_I(a, b)                                                                                             \
    do {                                                                                                             \
        long long _a = (long long)(a), _b = (long long)(b);                                                          \
        if (_a != _b) {                                                                                              \
            unit_failures++;                                                                                         \
            fprintf(stderr, "  %s:%d: CHECK_EQ failed: %s = %lld, expected %lld\n", __FILE__, __LINE__, #a, _a, _b); \
        }                                                                                                            \
    } while (0)

/* Graph-building helpers for inference tests. */
typedef struct {
    Arena *a;
    MNGraph *g;
    MNDiag d;
    int nfolded;
} TG;
void tg_init(TG *t, int64_t opset);
void tg_done(TG *t);
MNValue *tg_input(TG *t, const char *name, int32_t elem, int rank, const int64_t *dims);
MNValue *tg_const_i64(TG *t, const char *name, int n, const int64_t *vals);
MNValue *tg_const_f32(TG *t, const char *name, int rank, const int64_t *dims, const float *vals);
/* node with inputs (NULL = omitted) and nout fresh outputs named <name>_out<k> */
MNNode *tg_node(TG *t, const char *op, const char *name, int nin, MNValue **in, int nout);
void tg_attr_int(TG *t, MNNode *n, const char *name, int64_t v);
void tg_attr_ints(TG *t, MNNode *n, const char *name, int cnt, const int64_t *v);
void tg_attr_str(TG *t, MNNode *n, const char *name, const char *s);
void tg_attr_float(TG *t, MNNode *n, const char *name, double v);
void tg_output(TG *t, MNValue *v);
bool tg_infer(TG *t); /* runs infer_graph; false on error (message in t->d) */
bool tg_shape_is(const MNValue *v, int rank, const int64_t *dims);
#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define INS(...) ((MNValue *[]){__VA_ARGS__})
#endif

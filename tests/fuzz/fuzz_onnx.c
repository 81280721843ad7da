/* libFuzzer harness: the ONNX loader, then shape inference and folding when every input
 * is static (what `mncc` runs before the planners), within a memory limit so that huge
 * declared sizes must be refused cleanly. */
#include "infer.h"
#include "onnx_load.h"
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Arena *a = arena_new(256u << 20);
    MNDiag d = {0};
    MNGraph *g = onnx_load_buffer(a, "fuzz.onnx", data, size, &d);
    if (g) {
        bool fixed = true;
        for (int i = 0; i < g->ninputs && fixed; i++) {
            const MNType *t = &g->inputs[i]->type;
            fixed = t->rank >= 0;
            for (int k = 0; fixed && k < t->rank; k++) fixed = t->dims[k] >= 0;
        }
        int folded = 0;
        if (fixed) infer_graph(g, &d, 1 << 16, &folded);
    }
    arena_free(a);
    return 0;
}

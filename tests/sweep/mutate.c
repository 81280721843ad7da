/* Mutation smoke test of the loader and static shapes: every prefix of each model (up
 * to a cap) and a fixed number of seeded byte mutations go through onnx_load_buffer and
 * infer_graph in process. Nothing may crash (the sanitizer build makes this strict) and
 * every rejection must carry a message. Deterministic: the PRNG is seeded per file.
 *
 * usage: mutate [-n MUTATIONS] FILE.onnx... */
#include "infer.h"
#include "onnx_load.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state;
static uint64_t rnd(void) { /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int try_one(const char *name, const uint8_t *buf, size_t len, int *accepted) {
    Arena *a = arena_new(256 << 20);
    MNDiag d = {0};
    MNGraph *g = onnx_load_buffer(a, name, buf, len, &d);
    int bad = 0;
    if (g) {
        /* bind whatever is dynamic to 2 so inference gets to run */
        for (int i = 0; i < g->ninputs; i++) {
            MNType *t = &g->inputs[i]->type;
            if (t->rank < 0) ir_type_set(g, t, t->elem, 1, (const int64_t[]){2});
            for (int k = 0; k < t->rank; k++)
                if (t->dims[k] < 0) t->dims[k] = 2;
            if (ir_shape_numel(t) < 0 || ir_shape_numel(t) > (1 << 20)) g = NULL;
        }
        int nf;
        if (g && infer_graph(g, &d, 1 << 16, &nf))
            ++*accepted;
        else if (g && !d.msg[0])
            bad = 1;
    } else if (!d.msg[0])
        bad = 1;
    if (bad) fprintf(stderr, "mutate: %s (len %zu): rejected without a message\n", name, len);
    arena_free(a);
    return bad;
}

int main(int argc, char **argv) {
    int nmut = 300, runs = 0, fails = 0, accepted = 0, first = 1;
    if (argc > 2 && !strcmp(argv[1], "-n")) nmut = atoi(argv[2]), first = 3;
    for (int fi = first; fi < argc; fi++) {
        FILE *f = fopen(argv[fi], "rb");
        if (!f) continue;
        uint8_t *orig = xmalloc(1 << 22);
        size_t len = fread(orig, 1, 1 << 22, f);
        fclose(f);
        uint8_t *buf = xmalloc(len + 1);
        size_t step = len / 400 + 1;
        for (size_t cut = 0; cut < len; cut += step, runs++) {
            memcpy(buf, orig, cut);
            fails += try_one(argv[fi], buf, cut, &accepted);
        }
        rng_state = 0x1234567 + (uint64_t)fi;
        for (int m = 0; m < nmut; m++, runs++) {
            memcpy(buf, orig, len);
            int edits = 1 + (int)(rnd() % 4);
            for (int e = 0; e < edits && len; e++) {
                size_t at = rnd() % len;
                switch (rnd() % 4) {
                case 0: buf[at] ^= (uint8_t)(1u << (rnd() % 8)); break;
                case 1: buf[at] = (uint8_t)rnd(); break;
                case 2: buf[at] = 0xff; break;
                default: buf[at] = 0; break;
                }
            }
            fails += try_one(argv[fi], buf, len, &accepted);
        }
        free(orig);
        free(buf);
    }
    printf("mutate: %d inputs, %d accepted, the rest rejected with a message\n", runs, accepted);
    printf("mutate: %d passed, %d failed\n", runs - fails, fails);
    return fails ? 1 : 0;
}

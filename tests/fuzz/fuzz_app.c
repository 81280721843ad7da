/* libFuzzer harness: the GPFNApp reader (every offset and length checked), the dump that
 * mndump prints, and the decoding of the program it carries. */
#include "app.h"
#include "vsm.h"
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Arena *a = arena_new(64u << 20);
    MNApp app;
    char err[512];
    if (app_read(a, data, size, &app, err, sizeof err)) {
        MNBuf b = {0};
        app_dump(&app, &b, false);
        app_dump(&app, &b, true);
        buf_free(&b);
        VProgram p;
        memset(&p, 0, sizeof p);
        if (app.code && vsm_decode(app.code, app.code_len, &p, err, sizeof err)) vsm_program_free(&p);
    }
    arena_free(a);
    return 0;
}

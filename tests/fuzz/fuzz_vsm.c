/* libFuzzer harness: the VSM assembler (text, absolute and relative forms), the printer
 * and the binary encoding of what it accepts, and the binary decoder on the raw bytes
 * (what it accepts must encode to the same bytes). */
#include "vsm.h"
#include "diag.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = xmalloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    char err[512];
    for (int rel = 0; rel < 2; rel++) {
        VProgram p;
        memset(&p, 0, sizeof p);
        bool ok = rel ? vsm_parse_relative("fuzz.vsm", text, &p, err, sizeof err)
                      : vsm_parse("fuzz.vsm", text, &p, err, sizeof err);
        if (ok) {
            MNBuf b = {0};
            vsm_print(&b, &p);
            buf_free(&b);
            if (!rel) { /* what assembles encodes, and the encoding decodes */
                MNBuf e = {0};
                vsm_encode(&p, &e);
                VProgram back;
                memset(&back, 0, sizeof back);
                if (!vsm_decode((const uint8_t *)e.data, e.len, &back, err, sizeof err)) abort();
                vsm_program_free(&back);
                buf_free(&e);
            }
            vsm_program_free(&p);
        }
    }
    VProgram q;
    memset(&q, 0, sizeof q);
    if (vsm_decode(data, size, &q, err, sizeof err)) { /* GPFNBin has one encoding per program */
        MNBuf e = {0};
        vsm_encode(&q, &e);
        if (e.len != size || memcmp(e.data, data, size)) abort();
        buf_free(&e);
        vsm_program_free(&q);
    }
    free(text);
    return 0;
}

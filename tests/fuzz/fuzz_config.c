/* libFuzzer harness: the JSON parsers of the machine descriptions, the presets and the
 * option files (the same bytes fed to each). */
#include "machine.h"
#include "options.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = xmalloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    MNMachine m;
    char err[2048];
    machine_parse(text, "fuzz.json", &m, err, sizeof err);
    /* presets and option files are read from files: one per process */
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/tmp/mncc-fuzz-config-%ld.json", (long)getpid());
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, size, f);
        fclose(f);
        MNOptions o;
        opt_init(&o);
        opt_load_preset(&o, path, err, sizeof err);
        opt_free(&o);
        opt_init(&o);
        opt_load_json(&o, path, err, sizeof err);
        opt_free(&o);
    }
    free(text);
    return 0;
}

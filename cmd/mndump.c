/* mndump: prints a GPFNApp (model.app). Exit 0 ok, 1 unreadable or corrupt, 2 usage. */
#include "app.h"
#include "diag.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    const char *path = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--help")) {
            printf("usage: mndump APP [--json]\nprints a GPFNApp: producer, options, program, inputs, outputs, "
                   "parameters, relocations\n");
            return 0;
        } else if (argv[i][0] == '-' || path) {
            fprintf(stderr, "usage: mndump APP [--json]\n");
            return 2;
        } else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: mndump APP [--json]\n");
        return 2;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "mndump: error: %s: cannot open\n", path);
        return 1;
    }
    MNBuf b = {0};
    char chunk[65536];
    for (size_t n; (n = fread(chunk, 1, sizeof chunk, f)) > 0;) buf_append(&b, chunk, n);
    fclose(f);
    Arena *a = arena_new(0);
    MNApp app;
    char err[512];
    int rc = 0;
    if (!app_read(a, (const uint8_t *)(b.data ? b.data : ""), b.len, &app, err, sizeof err)) {
        fprintf(stderr, "mndump: error: %s: %s\n", path, err);
        rc = 1;
    } else {
        MNBuf out = {0};
        app_dump(&app, &out, json);
        fwrite(out.data, 1, out.len, stdout);
        buf_free(&out);
    }
    buf_free(&b);
    arena_free(a);
    return rc;
}

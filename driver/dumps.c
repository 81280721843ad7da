/* What a compile writes besides its passes' artifacts: the graph dumps (layout.PASS.txt
 * after a pass; l3ir.txt and l3ir_stripped.onnx of the final graph, built on a thread
 * of their own while Code Emit runs), and compile.stamp for --if-changed. */
#include "driver.h"
#include "onnx_write.h"
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

bool driver_wants_dump(const MNOptions *o, const char *pass) {
    return o->ival[MN_OPT_dump_all] || opt_dump_after_has(o, pass);
}

bool driver_dump_graph(MNCompile *c, const char *file) {
    MNBuf b = {0};
    ir_print_l3ir(&b, c->g);
    bool ok = mn_art_write(c, file, b.data ? b.data : "", b.len);
    buf_free(&b);
    return ok;
}

/* compile.stamp (--if-changed): the driver's key, then every external data file the
 * model read with the hash of its bytes, which the next check hashes again */
bool driver_write_stamp(MNCompile *c) {
    MNBuf b = {0};
    buf_printf(&b, "%s", c->opt->stamp);
    for (int i = 0; c->g && i < c->g->next_files; i++)
        buf_printf(&b, "external %016llx %s\n", (unsigned long long)mn_file_hash(c->g->ext_files[i]),
                   c->g->ext_files[i]);
    bool ok = mn_art_write(c, "compile.stamp", b.data, b.len);
    buf_free(&b);
    return ok;
}

void *driver_build_dumps(void *arg) {
    Dumps *d = arg;
    ir_print_l3ir(&d->l3ir, &d->g);
    onnx_write_model_in(d->arena, d->c, &d->g, true, &d->stripped);
    if (d->zst) {
        size_t cap = ZSTD_compressBound(d->stripped.len);
        MNBuf z = {0};
        buf_reserve(&z, cap);
        size_t got = ZSTD_compress(z.data, cap, d->stripped.data ? d->stripped.data : "", d->stripped.len, 3);
        if (ZSTD_isError(got)) die("zstd: %s", ZSTD_getErrorName(got));
        z.len = got;
        buf_free(&d->stripped);
        d->stripped = z;
    }
    return NULL;
}

void driver_dumps_init(Dumps *d, const MNCompile *c) {
    memset(d, 0, sizeof *d);
    d->c = c;
    d->g = *c->g;
    d->zst = c->opt->ival[MN_OPT_compress_dumps];
    d->arena = arena_new(0);
}

void driver_dumps_free(Dumps *d) {
    buf_free(&d->l3ir);
    buf_free(&d->stripped);
    arena_free(d->arena);
}

/* mn_art_write_owned takes the bytes whatever it returns */
bool driver_write_dumps(MNCompile *c, Dumps *d) {
    bool ok = mn_art_write_owned(c, "l3ir.txt", d->l3ir.data, d->l3ir.len);
    d->l3ir.data = NULL;
    if (ok) {
        ok = mn_art_write_owned(c, d->zst ? "l3ir_stripped.onnx.zst" : "l3ir_stripped.onnx", d->stripped.data,
                                d->stripped.len);
        d->stripped.data = NULL;
    }
    driver_dumps_free(d);
    return ok;
}

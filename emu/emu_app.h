#ifndef MN_EMU_APP_H
#define MN_EMU_APP_H
#include "emu.h"
#include "ir.h"
/* The host's side of a run: input k of the app (named name) as a tensor allocated in a,
 * NULL with the reason in err; output k once it is read back (output NULL: none kept).
 * mnemu reads and writes the test data's input_K.pb / output_K.pb files. */
typedef struct {
    MNTensor *(*input)(void *ctx, Arena *a, int k, const char *name, char *err, size_t errlen);
    bool (*output)(void *ctx, int k, const char *name, const MNTensor *t, char *err, size_t errlen);
    void *ctx;
} EmuHost;
/* Run a GPFNApp: its parameters and the host's inputs placed where the app says, the
 * program run, the outputs handed back to the host; false with the reason in err. */
/* threads: emu_set_threads's n */
bool emu_run_app(const uint8_t *buf, size_t len, bool strict, int threads, MNBuf *trace, const char *machine_override,
                 const EmuHost *host, MNBuf *debug_out, EmuStats *stats, char *err, size_t errlen);
#endif

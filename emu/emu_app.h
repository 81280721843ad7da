#ifndef MN_EMU_APP_H
#define MN_EMU_APP_H
#include "emu.h"
bool emu_run_app(const uint8_t *buf, size_t len, bool strict, MNBuf *trace, const char *machine_override, const char *in_dir, const char *out_dir, MNBuf *debug_out,
                 EmuStats *stats, char *err, size_t errlen);
#endif

#ifndef MN_APP_ASM_H
#define MN_APP_ASM_H
#include "buf.h"
#include <stdbool.h>
#include <stddef.h>
/* GPFNApp bytes from VSM text and an IO.json (see app_asm.c); false + err on bad input. */
bool app_assemble(const char *vsm_path, const char *io_path, const char *machine, MNBuf *out, char *err, size_t errlen);
#endif

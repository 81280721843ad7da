/* VSM text <-> VProgram <-> GPFNBin bytes. */
#ifndef MN_VSM_H
#define MN_VSM_H
#include "buf.h"
#include "isa.h"
#include <stddef.h>

/* Parse VSM text. On error returns false with "NAME:LINE: message" in err. */
bool vsm_parse(const char *name, const char *text, VProgram *p, char *err, size_t errlen);
/* the same, accepting addresses relative to a value ($lm{12}8: the emitter's per-node
 * code, which the linker resolves; see VOperand.sym) */
bool vsm_parse_relative(const char *name, const char *text, VProgram *p, char *err, size_t errlen);
/* the relative parse of len bytes through a cache of lines already parsed (the linker's:
 * per-node code repeats its lines with other value ids) */
typedef struct VLineCache VLineCache;
VLineCache *vsm_line_cache_new(void);
void vsm_line_cache_free(VLineCache *lc);
bool vsm_parse_relative_cached(VLineCache *lc, const char *name, const char *text, size_t len, VProgram *p, char *err, size_t errlen);
/* a line without value ids, linked before: its linked text and code (and the step's
 * repeat), which the linker copies instead of parsing, printing and encoding it again */
bool vsm_line_cache_linked(VLineCache *lc, const char *line, size_t len, const char **text, size_t *tlen, const char **code, size_t *clen, uint32_t *repeat);
/* ... recorded once the line's step (parsed through lc) is linked; lines not kept are ignored */
void vsm_line_cache_set_linked(VLineCache *lc, const char *line, size_t len, const void *text, size_t tlen, const void *code, size_t clen);
void vsm_program_free(VProgram *p);
/* Appends a copy of step s with its expressions (s->e may point anywhere). */
void vsm_push_step(VProgram *p, const VStep *s);
/* Canonical text of one line / a whole program (the disassembler). */
void vsm_print_step(MNBuf *b, const VStep *s);
void vsm_print(MNBuf *b, const VProgram *p);
/* GPFNBin: the binary form of a program. */
#define VSMB_VERSION 2 /* GPFNBin's (docs/vsm.md section 9) */
void vsm_encode(const VProgram *p, MNBuf *out);
/* the same, a step at a time: begin, each step, end with the count of steps */
void vsm_encode_begin(MNBuf *out);
void vsm_encode_step(MNBuf *out, const VStep *s);
void vsm_encode_end(MNBuf *out, uint32_t nsteps);
bool vsm_decode(const uint8_t *buf, size_t len, VProgram *p, char *err, size_t errlen);
/* Memory-mask entry (0..31) as 4 per-cycle nibbles. */
uint16_t vsm_mask_fixed(int entry); /* for the fixed entries 0 and 16..31 */
#endif

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
/* one line (len bytes, no newline), numbered lineno in errors, appended to p (which a
 * failure frees); *quit: the line is "quit", which ends a program */
bool vsm_parse_line(const char *name, int lineno, const char *line, size_t len, bool relative, VProgram *p, bool *quit,
                    char *err, size_t errlen);
/* the relative parse of len bytes through a cache of lines already parsed (the linker's:
 * per-node code repeats its lines with other value ids) */
typedef struct VLineCache VLineCache;
VLineCache *vsm_line_cache_new(void);
void vsm_line_cache_free(VLineCache *lc);
bool vsm_parse_relative_cached(VLineCache *lc, const char *name, const char *text, size_t len, VProgram *p, char *err,
                               size_t errlen);
/* a line without value ids, linked before: its linked text and code (and the step's
 * repeat), which the linker copies instead of parsing, printing and encoding it again */
bool vsm_line_cache_linked(VLineCache *lc, const char *line, size_t len, const char **text, size_t *tlen,
                           const char **code, size_t *clen, uint32_t *repeat);
/* ... recorded once the line's step (parsed through lc) is linked; lines not kept are ignored */
void vsm_line_cache_set_linked(VLineCache *lc, const char *line, size_t len, const void *text, size_t tlen,
                               const void *code, size_t clen);
/* A line with value ids, linked once: its text and code with every value at address 0,
 * and the places of the numbers the values' addresses move (holes, in operand order; a
 * flat operand has four). The linker fills them in for the next line that differs only
 * in its ids, instead of parsing, resolving, printing and encoding it again. */
typedef struct {
    uint16_t expr, operand; /* of the step: the relocation record's */
    uint8_t unit; /* address units per the value's address: LM words 2, DRAM 1 */
    bool flat; /* four 16-bit addresses */
    int64_t addend; /* the relocation record's: the first number, relative */
} VTmplRel;
typedef struct {
    uint32_t toff, tlen, coff, clen; /* the number's place in the text, its varint's in the code */
    uint32_t val; /* the number at address 0 */
    uint8_t rel; /* whose (VTmplRel index) */
} VTmplHole;
typedef struct {
    const char *text;
    const uint8_t *code;
    size_t tlen, clen;
    uint32_t repeat;
    const VTmplRel *rel;
    const VTmplHole *hole;
    int nrel, nholes;
} VLinkTmpl;
/* the template of a line with ids (valid until lc changes), its ids into ids */
bool vsm_line_cache_tmpl(VLineCache *lc, const char *line, size_t len, VLinkTmpl *t, uint32_t *ids, int *nids);
/* ... made from the line's step once it was parsed through lc (lines not kept are ignored) */
void vsm_line_cache_set_tmpl(VLineCache *lc, const char *line, size_t len);
/* the template's text and code appended with add[r] added to relocated operand r's
 * numbers, as resolving the line would give; false (*bad: the operand) when a flat
 * address goes beyond 16 bits */
bool vsm_tmpl_fill(const VLinkTmpl *t, const int64_t *add, MNBuf *text, MNBuf *code, int *bad);
enum { VSM_LINE_IDS = 16 }; /* the most ids a cached line has */
void vsm_program_free(VProgram *p);
/* Appends a copy of step s with its expressions (s->e may point anywhere). */
void vsm_push_step(VProgram *p, const VStep *s);
/* Canonical text of one line / a whole program (the disassembler). */
void vsm_print_step(MNBuf *b, const VStep *s);
/* where a step's relocated numbers (an operand's address, or the four of a flat one, in
 * operand order) lie in its text or code, from the step's first byte */
enum { VHOLES_MAX = 64 };
typedef struct {
    int n;
    uint32_t off[VHOLES_MAX], len[VHOLES_MAX];
} VHoles;
void vsm_print_step_holes(MNBuf *b, const VStep *s, VHoles *h);
void vsm_print(MNBuf *b, const VProgram *p);
/* GPFNBin: the binary form of a program. */
#define VSMB_VERSION 2 /* GPFNBin's (docs/vsm.md section 9) */
void vsm_encode(const VProgram *p, MNBuf *out);
/* the same, a step at a time: begin, each step, end with the count of steps */
void vsm_encode_begin(MNBuf *out);
void vsm_encode_step(MNBuf *out, const VStep *s);
void vsm_encode_step_holes(MNBuf *out, const VStep *s, VHoles *h);
void vsm_encode_end(MNBuf *out, uint32_t nsteps);
uint8_t *vsm_varint(uint8_t *p, uint64_t v); /* v's LEB128 at p (at most 10 bytes), returning the end */
bool vsm_decode(const uint8_t *buf, size_t len, VProgram *p, char *err, size_t errlen);
/* Memory-mask entry (0..31) as 4 per-cycle nibbles. */
uint16_t vsm_mask_fixed(int entry); /* for the fixed entries 0 and 16..31 */
#endif

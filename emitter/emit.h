/* Code Emit: the scheduled graph as VSM, assembled into model.app (emit.c). */
#ifndef MN_EMIT_H
#define MN_EMIT_H
#include "compile.h"
bool emit_program(MNCompile *c);

/* The linker (link.c): header text[0, seg[0]) and node i's segment text[seg[i],
 * seg[i + 1]) joined into out by the strategy of option link. */
typedef struct {
    int pairs;                 /* transfer nodes merged with a compute neighbour */
    int64_t steps_concat;      /* steps of the segments one after another */
    int64_t steps_saved;       /* steps the merged pairs took fewer */
} EmLink;
void emit_link(const MNCompile *c, const char *text, const size_t *seg, MNBuf *out, EmLink *st);
#endif

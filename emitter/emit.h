/* Code Emit: the scheduled graph as VSM, assembled into model.app (emit.c). */
#ifndef MN_EMIT_H
#define MN_EMIT_H
#include "compile.h"
#include "isa.h"
bool emit_program(MNCompile *c);
/* Code Emit as the scheduler's cost model (measure.c; MNCompile.code, which the driver
 * sets): a node's cycles timed from its emitted code, and each node's scratch need */
extern const MNCodeModel emit_code_model;

/* The linker (link.c): header text[0, seg[0]) and node i's segment text[seg[i],
 * seg[i + 1]) joined into out by the strategy of option link. */
typedef struct {
    int pairs; /* transfer nodes merged with a compute neighbour */
    int64_t steps_concat; /* steps of the segments one after another */
    int64_t steps_saved; /* steps the merged pairs took fewer */
    /* while linking (then in EmLinked): every operand that was relative to a value; symbol: the value's index */
    struct AppRelocRec *relocs;
    int nrelocs, caprelocs;
    MNBuf code; /* while linking (then in EmLinked): the steps in GPFNBin */
    int64_t nsteps;
} EmLink;
/* a linked program as the parts it was linked in (concat's; merge's is one part) */
typedef struct {
    MNBufs text; /* model.vsm */
    MNBufs code; /* the steps in GPFNBin, its header first */
    MNBufs rel; /* AppRelocRec records, symbol the value's index */
    int64_t nrelocs;
} EmLinked;
/* link=merge: the whole text at once; st has the figures */
bool emit_link(MNCompile *c, const char *text, const size_t *seg, EmLinked *out,
               EmLink *st); /* false: over the memory limit (the error set) */
/* link=concat: parts linked on threads while the code is emitted (link.c) */
typedef struct EmLinker EmLinker;
EmLinker *emit_linker_start(MNCompile *c);
/* nodes [lo, hi) with their code in text (taken); seg[k - lo]: where node k's begins,
 * seg[hi - lo] the end (malloc'd, taken) */
void emit_linker_add(EmLinker *L, MNBuf *text, size_t *seg, int lo, int hi);
/* every part linked (the caller takes those left), joined after the header into out
 * and st; false: over the memory limit (the error set) */
bool emit_linker_finish(EmLinker *L, const char *header, size_t hlen, EmLinked *out, EmLink *st);
void emit_linker_abort(EmLinker *L);
#endif

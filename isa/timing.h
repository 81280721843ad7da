/* VSM's timing model on its own (timing.c): shared by mnemu, Node Simulation's timed
 * variants and the linker, so that all three count the same cycles. */
#ifndef MN_TIMING_H
#define MN_TIMING_H
#include "isa.h"
#include "machine.h"

/* the cost of every instruction and precision on machine m (the table, raised by its
 * description) */
void vsm_cost_table(const MNMachine *m, int tab[VI_COUNT][8]);
/* the cycles program p takes on m (the count a run reports: its timing does not depend
 * on the data) */
int64_t vsm_program_cycles(const VProgram *p, const MNMachine *m);
/* the same count from len bytes of VSM text (relative: per-node code), parsing each line
 * shape once (timing.c); -1 with "NAME:LINE: message" in err when a line does not parse.
 * Lines of a shape seen before are not checked again: the text is taken as the emitter's,
 * which the linker parses in full. */
int64_t vsm_text_cycles(const char *name, const char *text, size_t len, bool relative, const MNMachine *m, char *err,
                        size_t errlen);
#endif

/* The driver: the pass table that runs the pipeline (passes.c), and what it writes
 * about a compile (report.c, dashboard.c) and checks between passes (verify.c). */
#ifndef MN_DRIVER_H
#define MN_DRIVER_H
#include "compile.h"

/* Runs the whole pipeline; 0 on success, 1 on bad input or failure (message in
 * c->diag). Artifacts go to c->out_dir when it is set. */
int mn_compile(MNCompile *c, const char *model_path, const char *out_dir, const MNOptions *opt);
void mn_compile_free(MNCompile *c);
/* the pass names, in order, for --dump-after validation */
const char *const *mn_pass_names(int *n);

/* report.c */
bool mn_report_write(MNCompile *c);
void *mn_report_json(MNCompile *c); /* report.json's tree (a cJSON *, the caller deletes it) */
/* dashboard.c: dashboard.html in the codegen dir, also for a failed compile */
bool mn_dashboard_write(MNCompile *c);
/* verify.c: the invariants after a pass of the given stage (0 loaded, 1 static
 * shapes, 2 dtypes planned, 3 layouts planned, 4 location kinds decided, 5 transfers
 * placed, 6 scheduled: banks and residency, 7 addresses); false + message
 * on a violation. */
bool ir_verify(const MNGraph *g, const MNMachine *m, int stage, char *err, size_t errlen); /* m: NULL skips the layout demands */
#endif

/* The graph planners: each a pass over the MNGraph (compiler/passes.c runs them). */
#ifndef MN_PLAN_H
#define MN_PLAN_H
#include "compile.h"
#include "layout.h"

bool plan_dtype(MNCompile *c);
bool plan_location_initial(MNCompile *c);
bool plan_layout(MNCompile *c);

bool plan_location(MNCompile *c);
bool plan_time_slice(MNCompile *c);
bool plan_location_sliced(MNCompile *c);

/* the canonical layout of a value of type t in dtype dt on machine m */
bool plan_layout_canonical(const MNType *t, MNDtype dt, const MNMachine *m, MNLayout *l);
#endif

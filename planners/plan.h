/* The graph planners: each a pass over the MNGraph (compiler/passes.c runs them). */
#ifndef MN_PLAN_H
#define MN_PLAN_H
#include "compile.h"

bool plan_dtype(MNCompile *c);
bool plan_location_initial(MNCompile *c);
bool plan_layout(MNCompile *c);
bool plan_location(MNCompile *c);

#endif

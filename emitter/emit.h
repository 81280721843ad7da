/* Code Emit: the scheduled graph as VSM, assembled into model.app (emit.c). */
#ifndef MN_EMIT_H
#define MN_EMIT_H
#include "compile.h"
bool emit_program(MNCompile *c);
#endif

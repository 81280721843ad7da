/* Input binding, before static shapes: --input-shape gives a graph input its shape
 * (checked against what the model declares), --input-value freezes one to a tensor (it
 * becomes an initializer, and the graph folds from it); then every input must have a
 * static shape. */
#include "bind.h"
#include "onnx_load.h"
#include <stdio.h>
#include <string.h>

bool onnx_bind_inputs(MNGraph *g, const MNOptions *o, Arena *a, MNDiag *d) {
    for (int i = 0; i < o->nshapes; i++) {
        const MNInputShape *s = &o->shapes[i];
        MNValue *v = NULL;
        for (int k = 0; k < g->ninputs && !v; k++)
            if (!strcmp(g->inputs[k]->name, s->name)) v = g->inputs[k];
        if (!v) {
            char names[600] = "";
            size_t n = 0;
            for (int k = 0; k < g->ninputs && n < sizeof names - 80; k++)
                n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", k ? ", " : "", g->inputs[k]->name);
            return diag_error(d, DIAG_INVALID, "%s: --input-shape names '%s', which is not a graph input (inputs: %s)",
                              g->file, s->name, n ? names : "none");
        }
        MNType *t = &v->type;
        if (t->rank >= 0 && t->rank != s->rank)
            return diag_error(d, DIAG_INVALID, "%s: %s: --input-shape gives %d dims, the model declares %d", g->file,
                              v->name, s->rank, t->rank);
        for (int k = 0; t->rank >= 0 && k < s->rank; k++)
            if (t->dims[k] >= 0 && t->dims[k] != s->dims[k])
                return diag_error(d, DIAG_INVALID,
                                  "%s: %s: --input-shape sets dim %d to %lld, the model fixes it at %lld", g->file,
                                  v->name, k, (long long)s->dims[k], (long long)t->dims[k]);
        const char **params = t->rank >= 0 ? t->dim_param : NULL;
        ir_type_set(g, t, t->elem, s->rank, s->dims);
        t->dim_param = params;
    }
    /* Inputs frozen to a value become initializers; the rest of the graph folds. */
    for (int i = 0; i < o->nvalues; i++) {
        const MNInputValue *iv = &o->values[i];
        int at = -1;
        for (int k = 0; k < g->ninputs && at < 0; k++)
            if (!strcmp(g->inputs[k]->name, iv->name)) at = k;
        if (at < 0)
            return diag_error(d, DIAG_INVALID, "%s: --input-value names '%s', which is not a graph input", g->file,
                              iv->name);
        MNValue *v = g->inputs[at];
        MNTensor *t = onnx_load_tensor_file(a, iv->path, d);
        if (!t) return false;
        if (t->elem != v->type.elem)
            return diag_error(d, DIAG_INVALID, "%s: %s: --input-value has type %s, the input is %s", g->file, v->name,
                              onnx_type_name(t->elem), onnx_type_name(v->type.elem));
        bool fits = v->type.rank < 0 || v->type.rank == t->rank;
        for (int k = 0; fits && k < v->type.rank; k++) fits = v->type.dims[k] < 0 || v->type.dims[k] == t->dims[k];
        if (!fits)
            return diag_error(d, DIAG_INVALID, "%s: %s: --input-value shape [%s] does not fit the declared shape",
                              g->file, v->name, ir_dims_str(a, t->rank, t->dims));
        ir_type_set(g, &v->type, t->elem, t->rank, t->dims);
        v->konst = t;
        v->is_input = false;
        v->is_initializer = true;
        memmove(g->inputs + at, g->inputs + at + 1, sizeof(MNValue *) * (size_t)(g->ninputs - at - 1));
        g->ninputs--;
    }
    for (int i = 0; i < g->ninputs; i++) {
        MNValue *v = g->inputs[i];
        MNType *t = &v->type;
        if (t->rank < 0)
            return diag_error(d, DIAG_INVALID, "%s: %s: the model gives no shape; pass --input-shape %s=...", g->file,
                              v->name, v->name);
        for (int k = 0; k < t->rank; k++)
            if (t->dims[k] < 0) {
                if (t->dim_param && t->dim_param[k])
                    return diag_error(d, DIAG_INVALID, "%s: %s: dim %d '%s' is dynamic; pass --input-shape %s=...",
                                      g->file, v->name, k, t->dim_param[k], v->name);
                return diag_error(d, DIAG_INVALID, "%s: %s: dim %d is dynamic; pass --input-shape %s=...", g->file,
                                  v->name, k, v->name);
            }
        if (ir_shape_numel(t) == -2)
            return diag_error(d, DIAG_INVALID, "%s: %s: element count of shape [%s] overflows 64 bits", g->file,
                              v->name, ir_dims_str(a, t->rank, t->dims));
    }
    return true;
}

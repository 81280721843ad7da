/* Static shapes of the ops that move data without computing on it: reshapes,
 * Transpose, Concat, Split, Slice, Gather, Pad, Resize, Expand, Tile, DepthToSpace and
 * SpaceToDepth (the rest of inference, and the helpers both use, are infer.c's). */
#include "infer.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- data movement ---- */

bool infer_reshape(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 2, 2)) return false;
    MNType *x = infer_type(n, 0);
    IntList s;
    if (!infer_ints_input(c, n, 1, "shape", &s)) return false;
    if (s.n > MN_MAX_RANK) return infer_unsupported(c, n, NULL, "rank above %d", MN_MAX_RANK);
    bool allowzero = ir_attr_int(n, "allowzero", 0) != 0;
    int64_t dims[MN_MAX_RANK], known = 1, total = ir_shape_numel(x);
    int infer_at = -1;
    for (int i = 0; i < s.n; i++) {
        int64_t v = s.v[i];
        if (v == 0 && !allowzero) {
            if (i >= x->rank)
                return infer_fail(c, n, n->in[1], "shape entry %d is 0 but the input has rank %d", i, x->rank);
            v = x->dims[i];
        }
        if (v == -1) {
            if (infer_at >= 0) return infer_fail(c, n, n->in[1], "more than one -1 in the shape");
            infer_at = i;
            dims[i] = 1;
            continue;
        }
        if (v < 0) return infer_fail(c, n, n->in[1], "shape entry %d is %lld", i, (long long)v);
        dims[i] = v;
        if (v && known > INT64_MAX / v) return infer_fail(c, n, n->in[1], "shape product overflows 64 bits");
        known *= v;
    }
    if (infer_at >= 0) {
        if (known == 0 || total % known)
            return infer_fail(c, n, n->in[1], "cannot infer the -1 dim: %lld elements into blocks of %lld",
                              (long long)total, (long long)known);
        dims[infer_at] = total / known;
    } else if (known != total)
        return infer_fail(c, n, n->in[1], "reshape of %lld elements ([%s]) into [%s] (%lld elements)", (long long)total,
                          ir_dims_str(c->g->arena, x->rank, x->dims), ir_dims_str(c->g->arena, s.n, dims),
                          (long long)known);
    return infer_set_out(c, n, 0, x->elem, s.n, dims);
}

bool infer_flatten(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 1, 1)) return false;
    MNType *x = infer_type(n, 0);
    int64_t axis = ir_attr_int(n, "axis", 1);
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis > x->rank) return infer_fail(c, n, n->in[0], "axis out of range for rank %d", x->rank);
    int64_t dims[2] = {1, 1};
    for (int i = 0; i < x->rank; i++) dims[i >= axis] *= x->dims[i];
    return infer_set_out(c, n, 0, x->elem, 2, dims);
}

static bool axes_list(MNInfer *c, MNNode *n, int since_input, IntList *ax) {
    if (c->opset >= since_input) return infer_ints_input(c, n, 1, "axes", ax);
    if (n->nin > 1) return infer_fail(c, n, NULL, "takes axes as an attribute at opset %lld", (long long)c->opset);
    return infer_ints_attr(c, n, "axes", ax);
}

bool infer_squeeze(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 1, 2)) return false;
    MNType *x = infer_type(n, 0);
    IntList ax;
    if (!axes_list(c, n, 13, &ax)) return false;
    bool drop[MN_MAX_RANK] = {0};
    for (int i = 0; i < ax.n; i++) {
        int a = 0;
        if (!infer_norm_axis(c, n, ax.v[i], x->rank, &a)) return false;
        if (x->dims[a] != 1)
            return infer_fail(c, n, n->in[0], "cannot squeeze axis %d of size %lld", a, (long long)x->dims[a]);
        drop[a] = true;
    }
    int64_t dims[MN_MAX_RANK];
    int r = 0;
    for (int i = 0; i < x->rank; i++)
        if (!(ax.n ? drop[i] : x->dims[i] == 1)) dims[r++] = x->dims[i];
    return infer_set_out(c, n, 0, x->elem, r, dims);
}

bool infer_unsqueeze(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 1, 2)) return false;
    MNType *x = infer_type(n, 0);
    IntList ax;
    if (!axes_list(c, n, 13, &ax)) return false;
    if (!ax.present) return infer_fail(c, n, NULL, "missing axes");
    int r = x->rank + ax.n;
    if (r > MN_MAX_RANK) return infer_unsupported(c, n, NULL, "rank above %d", MN_MAX_RANK);
    bool ins[MN_MAX_RANK] = {0};
    for (int i = 0; i < ax.n; i++) {
        int a = 0;
        if (!infer_norm_axis(c, n, ax.v[i], r, &a)) return false;
        if (ins[a]) return infer_fail(c, n, NULL, "axis %lld repeated", (long long)ax.v[i]);
        ins[a] = true;
    }
    int64_t dims[MN_MAX_RANK];
    for (int i = 0, j = 0; i < r; i++) dims[i] = ins[i] ? 1 : x->dims[j++];
    return infer_set_out(c, n, 0, x->elem, r, dims);
}

bool infer_transpose(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 1, 1)) return false;
    MNType *x = infer_type(n, 0);
    IntList p;
    if (!infer_ints_attr(c, n, "perm", &p)) return false;
    if (p.present && p.n != x->rank) return infer_fail(c, n, NULL, "perm has %d entries for rank %d", p.n, x->rank);
    bool seen[MN_MAX_RANK] = {0};
    int64_t dims[MN_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        int64_t a = p.present ? p.v[i] : x->rank - 1 - i;
        if (a < 0 || a >= x->rank || seen[a])
            return infer_fail(c, n, NULL, "perm is not a permutation of 0..%d", x->rank - 1);
        seen[a] = true;
        dims[i] = x->dims[a];
    }
    return infer_set_out(c, n, 0, x->elem, x->rank, dims);
}

bool infer_concat(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 1, 1 << 20)) return false;
    const MNAttr *aa = ir_attr(n, "axis");
    if (!aa) {
        if (c->opset >= 4) return infer_fail(c, n, NULL, "missing required attribute 'axis'");
    }
    MNType *x = infer_type(n, 0);
    int axis;
    if (!infer_norm_axis(c, n, aa ? aa->i : 1, x->rank, &axis)) return false;
    if (x->rank == 0) return infer_fail(c, n, n->in[0], "cannot concatenate scalars");
    int64_t dims[MN_MAX_RANK];
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    for (int k = 1; k < n->nin; k++) {
        MNType *t = infer_type(n, k);
        if (!t) return infer_fail(c, n, NULL, "empty input %d", k);
        if (!infer_same_elem(c, n, 0, k)) return false;
        if (t->rank != x->rank) return infer_fail(c, n, n->in[k], "rank %d differs from %d", t->rank, x->rank);
        for (int i = 0; i < x->rank; i++)
            if (i != axis && t->dims[i] != x->dims[i])
                return infer_fail(c, n, n->in[k], "dim %d is %lld, expected %lld", i, (long long)t->dims[i],
                                  (long long)x->dims[i]);
        if (!infer_dim_add(dims[axis], t->dims[axis], &dims[axis]))
            return infer_fail(c, n, n->in[k], "concatenated size overflows 64 bits");
    }
    return infer_set_out(c, n, 0, x->elem, x->rank, dims);
}

/* Split sizes along the axis: from the attribute/input, from num_outputs, or equal. */
bool infer_split_sizes(MNInfer *c, MNNode *n, int *axis_out, int64_t *sizes);
bool infer_split_sizes(MNInfer *c, MNNode *n, int *axis_out, int64_t *sizes) {
    MNType *x = infer_type(n, 0);
    int axis;
    if (!infer_norm_axis(c, n, ir_attr_int(n, "axis", 0), x->rank, &axis)) return false;
    if (x->rank == 0) return infer_fail(c, n, n->in[0], "cannot split a scalar");
    int64_t len = x->dims[axis];
    int nout = n->nout;
    if (nout > (int)(MN_MAX_RANK * 2 + 8))
        return infer_unsupported(c, n, NULL, "more than %d outputs", MN_MAX_RANK * 2 + 8);
    IntList sp;
    if (c->opset >= 13 ? !infer_ints_input(c, n, 1, "split", &sp) : !infer_ints_attr(c, n, "split", &sp)) return false;
    if (sp.present && sp.n > 0) {
        if (sp.n != nout) return infer_fail(c, n, NULL, "split has %d entries for %d outputs", sp.n, nout);
        int64_t sum = 0;
        for (int i = 0; i < nout; i++) {
            if (sp.v[i] < 0) return infer_fail(c, n, NULL, "negative split size");
            sizes[i] = sp.v[i];
            if (!infer_dim_add(sum, sp.v[i], &sum)) return infer_fail(c, n, NULL, "split sizes overflow 64 bits");
        }
        if (sum != len)
            return infer_fail(c, n, NULL, "split sizes sum to %lld, axis has %lld", (long long)sum, (long long)len);
    } else {
        const MNAttr *no = ir_attr(n, "num_outputs");
        if (no && no->i != nout)
            return infer_fail(c, n, NULL, "num_outputs %lld but %d outputs", (long long)no->i, nout);
        if (!no && len % nout)
            return infer_fail(c, n, NULL, "axis of %lld does not split evenly into %d", (long long)len, nout);
        int64_t chunk = (len + nout - 1) / nout;
        for (int i = 0; i < nout; i++) {
            int64_t rest = len - chunk * i;
            sizes[i] = rest < 0 ? 0 : rest < chunk ? rest : chunk;
        }
    }
    *axis_out = axis;
    return true;
}

bool infer_split(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 1, 2)) return false;
    int axis;
    int64_t sizes[MN_MAX_RANK * 2 + 8];
    if (!infer_split_sizes(c, n, &axis, sizes)) return false;
    MNType *x = infer_type(n, 0);
    int64_t dims[MN_MAX_RANK];
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    for (int k = 0; k < n->nout; k++) {
        dims[axis] = sizes[k];
        if (!infer_set_out(c, n, k, x->elem, x->rank, dims)) return false;
    }
    return true;
}

/* Normalised Slice parameters: per axis start, step and count. */
bool infer_slice_params(MNInfer *c, MNNode *n, int64_t *start, int64_t *step, int64_t *count);
bool infer_slice_params(MNInfer *c, MNNode *n, int64_t *start, int64_t *step, int64_t *count) {
    MNType *x = infer_type(n, 0);
    IntList st, en, ax, sp;
    if (c->opset >= 10) {
        if (!infer_need_inputs(c, n, 3, 5) || !infer_ints_input(c, n, 1, "starts", &st) ||
            !infer_ints_input(c, n, 2, "ends", &en) || !infer_ints_input(c, n, 3, "axes", &ax) ||
            !infer_ints_input(c, n, 4, "steps", &sp))
            return false;
    } else {
        if (!infer_need_inputs(c, n, 1, 1) || !infer_ints_attr(c, n, "starts", &st) ||
            !infer_ints_attr(c, n, "ends", &en) || !infer_ints_attr(c, n, "axes", &ax))
            return false;
        if (!st.present || !en.present) return infer_fail(c, n, NULL, "missing required attribute 'starts' or 'ends'");
        sp.n = 0;
        sp.present = false;
    }
    if (st.n != en.n || (ax.present && ax.n != st.n) || (sp.present && sp.n != st.n))
        return infer_fail(c, n, NULL, "starts, ends, axes and steps differ in length");
    for (int i = 0; i < x->rank; i++) {
        start[i] = 0;
        step[i] = 1;
        count[i] = x->dims[i];
    }
    bool seen[MN_MAX_RANK] = {0};
    for (int i = 0; i < st.n; i++) {
        int a = 0;
        if (!infer_norm_axis(c, n, ax.present ? ax.v[i] : i, x->rank, &a)) return false;
        if (seen[a]) return infer_fail(c, n, NULL, "axis %d repeated", a);
        seen[a] = true;
        int64_t d = x->dims[a], s = st.v[i], e = en.v[i], k = sp.present ? sp.v[i] : 1;
        if (k == 0) return infer_fail(c, n, NULL, "step 0 on axis %d", a);
        /* steps beyond the axis length behave like the axis length; clamping keeps the
         * count arithmetic below from overflowing */
        if (k > d + 1) k = d + 1;
        if (k < -(d + 1)) k = -(d + 1);
        if (s < 0) s += d;
        if (e < 0 && e > INT64_MIN / 2) e += d;
        if (k > 0) {
            s = s < 0 ? 0 : s > d ? d : s;
            e = e < 0 ? 0 : e > d ? d : e;
            count[a] = e > s ? (e - s + k - 1) / k : 0;
        } else {
            s = s < 0 ? -1 : s > d - 1 ? d - 1 : s;
            e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
            count[a] = s > e ? (s - e + (-k) - 1) / (-k) : 0;
        }
        start[a] = s;
        step[a] = k;
    }
    return true;
}

bool infer_slice(MNInfer *c, MNNode *n) {
    int64_t start[MN_MAX_RANK], step[MN_MAX_RANK], count[MN_MAX_RANK];
    if (!infer_in(n, 0)) return infer_need_inputs(c, n, 1, 5);
    if (!infer_slice_params(c, n, start, step, count)) return false;
    return infer_set_out(c, n, 0, infer_type(n, 0)->elem, infer_type(n, 0)->rank, count);
}

bool infer_gather(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 2, 2)) return false;
    MNType *x = infer_type(n, 0), *idx = infer_type(n, 1);
    if (idx->elem != ONNX_INT32 && idx->elem != ONNX_INT64)
        return infer_fail(c, n, n->in[1], "indices must be int32 or int64");
    int axis;
    if (x->rank < 1) return infer_fail(c, n, n->in[0], "cannot gather from a scalar");
    if (!infer_norm_axis(c, n, ir_attr_int(n, "axis", 0), x->rank, &axis)) return false;
    int r = x->rank - 1 + idx->rank;
    if (r > MN_MAX_RANK) return infer_unsupported(c, n, NULL, "rank above %d", MN_MAX_RANK);
    if (n->in[1]->konst) {
        const MNTensor *t = n->in[1]->konst;
        for (int64_t i = 0; i < t->numel; i++) {
            int64_t v = ir_tensor_get_i(t, i);
            if (v < -x->dims[axis] || v >= x->dims[axis])
                return infer_fail(c, n, n->in[1], "index %lld out of range for axis of size %lld", (long long)v,
                                  (long long)x->dims[axis]);
        }
    }
    int64_t dims[MN_MAX_RANK];
    int j = 0;
    for (int i = 0; i < axis; i++) dims[j++] = x->dims[i];
    for (int i = 0; i < idx->rank; i++) dims[j++] = idx->dims[i];
    for (int i = axis + 1; i < x->rank; i++) dims[j++] = x->dims[i];
    return infer_set_out(c, n, 0, x->elem, r, dims);
}

bool infer_gather_elements(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 2, 2)) return false;
    MNType *x = infer_type(n, 0), *idx = infer_type(n, 1);
    int axis;
    if (idx->rank != x->rank)
        return infer_fail(c, n, n->in[1], "indices rank %d differs from data rank %d", idx->rank, x->rank);
    if (!infer_norm_axis(c, n, ir_attr_int(n, "axis", 0), x->rank, &axis)) return false;
    return infer_set_out(c, n, 0, x->elem, idx->rank, idx->dims);
}

/* Pads as begin[rank], end[rank] with the opset's conventions (attribute before 11,
 * input with optional axes from 18). */
bool infer_pad_amounts(MNInfer *c, MNNode *n, int64_t *pb, int64_t *pe);
bool infer_pad_amounts(MNInfer *c, MNNode *n, int64_t *pb, int64_t *pe) {
    MNType *x = infer_type(n, 0);
    IntList p, ax;
    ax.n = 0;
    ax.present = false;
    if (c->opset >= 11) {
        if (!infer_ints_input(c, n, 1, "pads", &p)) return false;
        if (!p.present) return infer_fail(c, n, NULL, "missing input 'pads'");
        if (c->opset >= 18 && !infer_ints_input(c, n, 3, "axes", &ax)) return false;
    } else if (!infer_ints_attr(c, n, "pads", &p))
        return false;
    else if (!p.present)
        return infer_fail(c, n, NULL, "missing required attribute 'pads'");
    int na = ax.present ? ax.n : x->rank;
    if (p.n != 2 * na) return infer_fail(c, n, NULL, "pads has %d entries, expected %d", p.n, 2 * na);
    for (int i = 0; i < x->rank; i++) pb[i] = pe[i] = 0;
    for (int i = 0; i < na; i++) {
        int a = i;
        if (ax.present && !infer_norm_axis(c, n, ax.v[i], x->rank, &a)) return false;
        pb[a] = p.v[i];
        pe[a] = p.v[i + na];
        if (pb[a] > PAD_LIMIT || pe[a] > PAD_LIMIT || pb[a] < -PAD_LIMIT || pe[a] < -PAD_LIMIT)
            return infer_fail(c, n, NULL, "pads out of range");
    }
    const char *mode = ir_attr_string(n, "mode", "constant");
    if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge") && strcmp(mode, "wrap"))
        return infer_fail(c, n, NULL, "unknown mode '%s'", mode);
    if (!strcmp(mode, "wrap") && c->opset < 19) return infer_fail(c, n, NULL, "mode 'wrap' needs opset 19");
    return true;
}

bool infer_pad(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 1, 4)) return false;
    MNType *x = infer_type(n, 0);
    int64_t pb[MN_MAX_RANK], pe[MN_MAX_RANK], dims[MN_MAX_RANK];
    if (!infer_pad_amounts(c, n, pb, pe)) return false;
    for (int i = 0; i < x->rank; i++) {
        dims[i] = x->dims[i] + pb[i] + pe[i];
        if (dims[i] < 0) return infer_fail(c, n, NULL, "padding makes axis %d negative", i);
    }
    return infer_set_out(c, n, 0, x->elem, x->rank, dims);
}

bool infer_resize(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 1, 4)) return false;
    MNType *x = infer_type(n, 0);
    int scales_at = n->op == OP_Upsample || c->opset < 11 ? 1 : 2, sizes_at = 3;
    const char *mode = ir_attr_string(n, "mode", "nearest");
    if (strcmp(mode, "nearest") && strcmp(mode, "linear") && strcmp(mode, "cubic") && strcmp(mode, "bilinear"))
        return infer_fail(c, n, NULL, "unknown mode '%s'", mode);
    IntList ax;
    if (!infer_ints_attr(c, n, "axes", &ax)) return false;
    int na = ax.present ? ax.n : x->rank;
    int axis_of[MN_MAX_RANK];
    for (int i = 0; i < na; i++)
        if (!infer_norm_axis(c, n, ax.present ? ax.v[i] : i, x->rank, &axis_of[i])) return false;
    int64_t dims[MN_MAX_RANK];
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    MNValue *sz = infer_in(n, sizes_at), *sc = infer_in(n, scales_at);
    if (sc && sc->type.rank == 1 && sc->type.dims[0] == 0) sc = NULL; /* empty scales: use sizes */
    if (sz && sc) return infer_fail(c, n, NULL, "only one of scales and sizes may be given");
    if (sz) {
        IntList s;
        if (!infer_ints_input(c, n, sizes_at, "sizes", &s)) return false;
        if (s.n != na) return infer_fail(c, n, sz, "sizes has %d entries, expected %d", s.n, na);
        const char *pol = ir_attr_string(n, "keep_aspect_ratio_policy", "stretch");
        double scale = strcmp(pol, "not_larger") ? 0 : 1e300;
        for (int i = 0; i < na && strcmp(pol, "stretch"); i++) {
            double r = (double)s.v[i] / (double)x->dims[axis_of[i]];
            scale = !strcmp(pol, "not_larger") ? fmin(scale, r) : fmax(scale, r);
        }
        for (int i = 0; i < na; i++) {
            double o = strcmp(pol, "stretch") ? floor((double)x->dims[axis_of[i]] * scale + 0.5) : (double)s.v[i];
            if (!(o >= 0 && o < 9e18)) return infer_fail(c, n, sz, "sizes out of range");
            dims[axis_of[i]] = (int64_t)o;
        }
    } else if (sc) {
        const MNTensor *t = infer_const_input(c, n, scales_at, "scales");
        if (!t) return false;
        if (t->numel != na)
            return infer_fail(c, n, sc, "scales has %lld entries, expected %d", (long long)t->numel, na);
        for (int i = 0; i < na; i++) {
            double s = ir_tensor_get_f(t, i);
            if (!(s > 0)) return infer_fail(c, n, sc, "scale %g is not positive", s);
            double o = floor((double)x->dims[axis_of[i]] * s);
            if (!(o < 9e18)) return infer_fail(c, n, sc, "scale %g gives an output size out of range", s);
            dims[axis_of[i]] = (int64_t)o;
        }
    } else if (n->op == OP_Upsample) {
        return infer_fail(c, n, NULL, "missing input 'scales'");
    } else
        return infer_fail(c, n, NULL, "one of scales and sizes is required");
    return infer_set_out(c, n, 0, x->elem, x->rank, dims);
}

bool infer_expand(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 2, 2)) return false;
    IntList s;
    if (!infer_ints_input(c, n, 1, "shape", &s)) return false;
    if (s.n > MN_MAX_RANK) return infer_unsupported(c, n, NULL, "rank above %d", MN_MAX_RANK);
    for (int i = 0; i < s.n; i++)
        if (s.v[i] < 0) return infer_fail(c, n, n->in[1], "shape entry %d is %lld", i, (long long)s.v[i]);
    MNType st = {ONNX_INT64, s.n, s.v, NULL};
    const MNType *ts[2] = {infer_type(n, 0), &st};
    int r;
    int64_t dims[MN_MAX_RANK];
    if (!infer_broadcast(c, n, 2, ts, &r, dims)) return false;
    return infer_set_out(c, n, 0, infer_type(n, 0)->elem, r, dims);
}

bool infer_tile(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 2, 2)) return false;
    MNType *x = infer_type(n, 0);
    IntList r;
    if (!infer_ints_input(c, n, 1, "repeats", &r)) return false;
    if (r.n != x->rank) return infer_fail(c, n, n->in[1], "repeats has %d entries for rank %d", r.n, x->rank);
    int64_t dims[MN_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        if (r.v[i] < 0) return infer_fail(c, n, n->in[1], "negative repeat");
        if (r.v[i] && x->dims[i] > INT64_MAX / r.v[i])
            return infer_fail(c, n, n->in[1], "tiled size overflows 64 bits");
        dims[i] = x->dims[i] * r.v[i];
    }
    return infer_set_out(c, n, 0, x->elem, x->rank, dims);
}

bool infer_depth_to_space(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 1, 1) || !infer_need_rank(c, n, 0, 4, 4)) return false;
    MNType *x = infer_type(n, 0);
    int64_t b = ir_attr_int(n, "blocksize", 0);
    if (b < 1 || b > ATTR_LIMIT) return infer_fail(c, n, NULL, "missing or bad required attribute 'blocksize'");
    const char *mode = ir_attr_string(n, "mode", "DCR");
    if (strcmp(mode, "DCR") && strcmp(mode, "CRD")) return infer_fail(c, n, NULL, "unknown mode '%s'", mode);
    if (x->dims[1] % (b * b))
        return infer_fail(c, n, n->in[0], "channels %lld not divisible by blocksize^2", (long long)x->dims[1]);
    int64_t dims[4] = {x->dims[0], x->dims[1] / (b * b), 0, 0};
    if (!infer_dim_mul(x->dims[2], b, &dims[2]) || !infer_dim_mul(x->dims[3], b, &dims[3]))
        return infer_fail(c, n, NULL, "output size overflows 64 bits");
    return infer_set_out(c, n, 0, x->elem, 4, dims);
}

bool infer_space_to_depth(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 1, 1) || !infer_need_rank(c, n, 0, 4, 4)) return false;
    MNType *x = infer_type(n, 0);
    int64_t b = ir_attr_int(n, "blocksize", 0);
    if (b < 1 || b > ATTR_LIMIT) return infer_fail(c, n, NULL, "missing or bad required attribute 'blocksize'");
    if (x->dims[2] % b || x->dims[3] % b) return infer_fail(c, n, n->in[0], "spatial dims not divisible by blocksize");
    int64_t dims[4] = {0, 0, x->dims[2] / b, x->dims[3] / b};
    dims[0] = x->dims[0];
    if (!infer_dim_mul(x->dims[1], b * b, &dims[1])) return infer_fail(c, n, NULL, "output size overflows 64 bits");
    return infer_set_out(c, n, 0, x->elem, 4, dims);
}

const char *infer_einsum_parse(const char *eq, int nin, MNEinsum *e) {
    memset(e, 0, sizeof *e);
    if (nin < 1 || nin > 2) return "Einsum of other than one or two operands";
    int k = 0, count[128] = {0};
    bool arrow = false;
    for (const char *p = eq; *p; p++) {
        char ch = *p;
        if (ch == ' ') continue;
        if (ch == '.') return "an ellipsis";
        if (ch == ',') {
            if (arrow || ++k >= nin) return "more operands in the equation than inputs";
            continue;
        }
        if (ch == '-' && p[1] == '>') {
            if (arrow) return "two arrows";
            arrow = true, p++;
            continue;
        }
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))) return "a subscript that is not a letter";
        if (arrow) {
            for (int i = 0; i < e->rout; i++)
                if (e->out[i] == ch) return "an output subscript twice";
            if (e->rout == MN_MAX_RANK) return "an output of too high a rank";
            e->out[e->rout++] = ch;
        } else {
            for (int i = 0; i < e->rank[k]; i++)
                if (e->in[k][i] == ch) return "a subscript twice in one operand (a diagonal)";
            if (e->rank[k] == MN_MAX_RANK) return "an operand of too high a rank";
            e->in[k][e->rank[k]++] = ch;
            count[(int)ch]++;
        }
    }
    if (k != nin - 1) return "fewer operands in the equation than inputs";
    e->nin = nin;
    if (!arrow) /* the subscripts that appear once, in alphabetic order */
        for (int ch = 'A'; ch <= 'z'; ch++)
            if (count[ch] == 1) e->out[e->rout++] = (char)ch;
    for (int i = 0; i < e->rout; i++)
        if (!count[(int)e->out[i]]) return "an output subscript no operand has";
    return NULL;
}

bool infer_einsum(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 1, 2)) return false;
    MNEinsum e;
    const char *why = infer_einsum_parse(ir_attr_string(n, "equation", ""), n->nin, &e);
    if (why) return infer_unsupported(c, n, NULL, "equation '%s': %s", ir_attr_string(n, "equation", ""), why);
    int64_t size[128];
    for (int i = 0; i < 128; i++) size[i] = -1;
    for (int k = 0; k < e.nin; k++) {
        const MNType *t = infer_type(n, k);
        if (!t) return infer_fail(c, n, NULL, "input %d is absent (the equation names %d)", k, e.nin);
        if (t->rank != e.rank[k])
            return infer_fail(c, n, n->in[k], "rank %d, the equation gives it %d subscripts", t->rank, e.rank[k]);
        if (k && t->elem != infer_type(n, 0)->elem) return infer_fail(c, n, n->in[k], "another type than input 0's");
        for (int d = 0; d < t->rank; d++) {
            int ch = e.in[k][d];
            if (size[ch] >= 0 && size[ch] != t->dims[d])
                return infer_fail(c, n, n->in[k], "subscript '%c' of size %lld and %lld", ch, (long long)size[ch],
                                  (long long)t->dims[d]);
            size[ch] = t->dims[d];
        }
    }
    int64_t dims[MN_MAX_RANK];
    for (int i = 0; i < e.rout; i++) dims[i] = size[(int)e.out[i]];
    return infer_set_out(c, n, 0, infer_type(n, 0)->elem, e.rout, dims);
}

/* NegativeLogLikelihoodLoss (input, target, weight) and SoftmaxCrossEntropyLoss (scores,
 * labels, weights; a second output, the log-probabilities): input (N, C, d...), target
 * (N, d...) of integers below C, weight (C); the loss (N, d...) with reduction none, else a
 * scalar */
bool infer_loss(MNInfer *c, MNNode *n) {
    if (!infer_need_inputs(c, n, 2, 3) || !infer_need_rank(c, n, 0, 2, MN_MAX_RANK)) return false;
    const MNType *x = infer_type(n, 0), *t = infer_type(n, 1), *w = infer_type(n, 2);
    if (!onnx_type_is_float(x->elem)) return infer_fail(c, n, n->in[0], "expects a floating-point tensor");
    if (t->elem != ONNX_INT32 && t->elem != ONNX_INT64)
        return infer_fail(c, n, n->in[1], "targets that are not integers");
    bool bad = t->rank != x->rank - 1 || t->dims[0] != x->dims[0];
    for (int d = 1; !bad && d < t->rank; d++) bad = t->dims[d] != x->dims[d + 1];
    if (bad) return infer_fail(c, n, n->in[1], "a shape other than the input's without its class axis");
    if (w && (w->rank != 1 || w->dims[0] != x->dims[1] || w->elem != x->elem))
        return infer_fail(c, n, n->in[2], "expects one weight a class");
    const char *red = ir_attr_string(n, "reduction", "mean");
    if (strcmp(red, "none") && strcmp(red, "sum") && strcmp(red, "mean"))
        return infer_fail(c, n, NULL, "reduction '%s' is none of none, sum, mean", red);
    if (!infer_set_out(c, n, 0, x->elem, strcmp(red, "none") ? 0 : t->rank, t->dims)) return false;
    return n->op != OP_SoftmaxCrossEntropyLoss || infer_set_out(c, n, 1, x->elem, x->rank, x->dims);
}

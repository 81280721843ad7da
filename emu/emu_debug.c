/* mnemu's debug commands, as the public emulator has them: `d set` writes and `d get`
 * prints long words of any memory at any place of the tree (PE memories, GRFs, L1BM,
 * L2BM, DRAM, PDM), in the public emulator's output format, with definedness under
 * --strict. */
#include "emu_impl.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- debug commands: d set / d get ---- */

typedef struct {
    int kind; /* K_LM0.., K_T, K_OMR, K_L1BM, K_L2BM, K_DRAM, K_PDM */
    uint32_t addr;
    int sc[5]; /* n c b m p; -1 = all */
    int nsc; /* how many scope letters were given */
} DbgLoc;

static bool parse_loc(Emu *e, const char *s, DbgLoc *L, char *canon, size_t cl) {
    memset(L, 0, sizeof *L);
    for (int i = 0; i < 5; i++) L->sc[i] = -1;
    if (*s++ != '$') return emu_fail(e, "debug location starts with $");
    const char *start = s;
    if (!strncmp(s, "omr", 3)) {
        L->kind = K_OMR;
        s += 3;
    } else {
        if (!strncmp(s, "ll", 2))
            s += 2;
        else if (*s == 'l')
            s++;
        switch (*s++) {
        case 'm': L->kind = K_LM0; break;
        case 'n': L->kind = K_LM1; break;
        case 'r': L->kind = K_GRF0; break;
        case 's': L->kind = K_GRF1; break;
        case 't': L->kind = K_T; break;
        case 'b': L->kind = K_L1BM; break;
        case 'c': L->kind = K_L2BM; break;
        case 'd': L->kind = K_DRAM; break;
        case 'p': L->kind = K_PDM; break;
        default: return emu_fail(e, "unknown debug location '$%s'", start);
        }
    }
    char *end;
    if (L->kind != K_T) {
        unsigned long av = strtoul(s, &end, 10);
        if (end == s || av > (1ul << 31)) return emu_fail(e, "debug location '$%s' needs an address below 2^31", start);
        L->addr = (uint32_t)av;
        s = end;
    }
    const char *scope = s;
    const char *letters = "ncbmp";
    int li = 0;
    while (*s) {
        const char *f = strchr(letters + li, *s);
        if (!f) return emu_fail(e, "bad scope '%s' in debug location", scope);
        li = (int)(f - letters);
        s++;
        long v = strtol(s, &end, 10);
        if (end == s || v < 0 || v > (1l << 20)) return emu_fail(e, "bad scope '%s' in debug location", scope);
        L->sc[li] = (int)v;
        L->nsc = li + 1;
        s = end;
        li++;
    }
    static const char *pre[K_COUNT] = {
        [K_LM0] = "lm",  [K_LM1] = "ln",  [K_GRF0] = "lr", [K_GRF1] = "ls", [K_T] = "lt",
        [K_OMR] = "omr", [K_L1BM] = "lb", [K_L2BM] = "lc", [K_DRAM] = "d",  [K_PDM] = "p"};
    if (L->kind == K_T)
        snprintf(canon, cl, "$%s%s", pre[L->kind], scope);
    else
        snprintf(canon, cl, "$%s%u%s", pre[L->kind], L->addr, scope);
    /* check scope ranges */
    int lim[5] = {e->ng, e->m.l2b_per_group, e->l1b_per_l2b, e->m.mab_per_l1b, 4};
    for (int i = 0; i < 5; i++)
        if (L->sc[i] >= lim[i])
            return emu_fail(e, "scope %c%d is outside the machine (%d)", letters[i], L->sc[i], lim[i]);
    return true;
}

static const char *region_name(int kind) {
    switch (kind) {
    case K_LM0: return "LM0";
    case K_LM1: return "LM1";
    case K_GRF0: return "GREG0";
    case K_GRF1: return "GREG1";
    case K_T: return "TREG";
    case K_OMR: return "OMR";
    case K_L1BM: return "L1BM";
    case K_L2BM: return "L2BM";
    case K_PDM: return "PDM";
    default: return "DRAM";
    }
}

/* Visit every PE (or upper-memory instance) the scope selects, in n c b m p order. */
typedef bool (*LocFn)(Emu *e, void *ctx, int pe_or_inst, const char *scope_name);

static bool each_place(Emu *e, const DbgLoc *L, LocFn fn, void *ctx) {
    int depth = L->kind == K_DRAM || L->kind == K_PDM ? 1 : L->kind == K_L2BM ? 2 : L->kind == K_L1BM ? 3 : 5;
    int lim[5] = {e->ng, e->m.l2b_per_group, e->l1b_per_l2b, e->m.mab_per_l1b, 4};
    int idx[5] = {0};
    char name[64];
    for (;;) {
        bool skip = false;
        for (int i = 0; i < depth; i++) {
            if (L->sc[i] >= 0 && idx[i] != L->sc[i]) skip = true;
        }
        if (!skip) {
            int lin = 0;
            for (int i = 0; i < depth; i++) lin = lin * lim[i] + idx[i];
            int n = 0;
            for (int i = 0; i < depth; i++)
                n += snprintf(name + n, sizeof name - (size_t)n, "%c%d", "ncbmp"[i], idx[i]);
            if (!fn(e, ctx, lin, name)) return false;
        }
        int i = depth - 1;
        while (i >= 0 && ++idx[i] == lim[i]) idx[i--] = 0;
        if (i < 0) break;
    }
    return true;
}

typedef struct {
    const DbgLoc *L;
    int count;
    char type; /* 0, d, f, h */
    const char *echo;
    MNBuf *out;
    const char *payload;
} DbgCtx;

static uint64_t *upper_lw(Emu *e, int kind, int inst, uint32_t a, bool *ok) {
    *ok = true;
    if (kind == K_L1BM)
        return a < e->m.l1bm_lw ? &e->l1bm[(size_t)inst * (size_t)e->m.l1bm_lw + a] : (*ok = false, NULL);
    if (kind == K_L2BM)
        return a < e->m.l2bm_lw ? &e->l2bm[(size_t)inst * (size_t)e->m.l2bm_lw + a] : (*ok = false, NULL);
    if (kind == K_PDM) return a < e->m.pdm_lw ? &e->pdm[(size_t)inst * (size_t)e->m.pdm_lw + a] : (*ok = false, NULL);
    return a < e->m.dram_lw ? &e->dram[(size_t)inst * (size_t)e->m.dram_lw + a] : (*ok = false, NULL);
}

/* The long word at debug index i of a location in PE pe. */
static bool dbg_lw(Emu *e, const DbgLoc *L, int place, int i, uint64_t **hi_lo, uint32_t **w0, uint32_t *addr_shown) {
    size_t np = (size_t)e->npe;
    *hi_lo = NULL;
    *w0 = NULL;
    if (L->kind == K_L1BM || L->kind == K_L2BM || L->kind == K_DRAM || L->kind == K_PDM) {
        bool ok;
        *hi_lo = upper_lw(e, L->kind, place, L->addr + (uint32_t)i, &ok);
        *addr_shown = L->addr + (uint32_t)i;
        return ok ? true : emu_fail(e, "debug address %u is outside %s", L->addr + (uint32_t)i, region_name(L->kind));
    }
    if (L->kind == K_T) {
        if (i >= 8) return emu_fail(e, "T holds 8 long words");
        *w0 = e->t + (size_t)((i % 4) * 4 + 2 * (i / 4)) * np + (size_t)place;
        *addr_shown = (uint32_t)i;
        return true;
    }
    uint32_t words = 0;
    uint32_t *mem = emu_pe_mem(e, L->kind, &words);
    uint32_t a = L->addr + 2 * (uint32_t)i;
    if (a + 1 >= words + 1 || a % 2)
        return emu_fail(e, "debug address %u is outside %s or not long-word aligned", a, region_name(L->kind));
    *w0 = mem + (size_t)a * np + (size_t)place;
    *addr_shown = a;
    return true;
}

static void fmt_g(char *b, size_t n, double v) { snprintf(b, n, "%g", v); }

static bool dbg_get_one(Emu *e, void *vctx, int place, const char *scope) {
    DbgCtx *d = vctx;
    const DbgLoc *L = d->L;
    size_t np = (size_t)e->npe;
    if (L->kind == K_OMR) {
        for (int k = 0; k < d->count; k++) {
            uint32_t en = L->addr + (uint32_t)k;
            if (en > 31) return emu_fail(e, "mask entries are 0..31");
            uint16_t v = en == 0 || en >= 16 ? vsm_mask_fixed((int)en) : e->omr[(size_t)en * np + (size_t)place];
            for (int c = 0; c < 4; c++)
                buf_printf(d->out, "DEBUG-OMR(%s,%u):Mask{%d} #%s\n", scope, en, (v >> (4 * (3 - c))) & 0xf, d->echo);
        }
        return true;
    }
    for (int i = 0; i < d->count; i++) {
        uint64_t *u;
        uint32_t *w, shown;
        if (!dbg_lw(e, L, place, i, &u, &w, &shown)) return false;
        uint64_t v = u ? *u : ((uint64_t)w[0] << 32 | w[np]);
        char val[256], g[4][40];
        switch (d->type) {
        case 'd':
            fmt_g(g[0], sizeof g[0], in_d(v));
            snprintf(val, sizeof val, "(%s) (0x%016" PRIx64 ")", g[0], v);
            break;
        case 'f':
            fmt_g(g[0], sizeof g[0], in_f((uint32_t)(v >> 32)));
            fmt_g(g[1], sizeof g[1], in_f((uint32_t)v));
            snprintf(val, sizeof val, "(%s, %s) (0x%08x, 0x%08x)", g[0], g[1], (uint32_t)(v >> 32), (uint32_t)v);
            break;
        case 'h': {
            uint16_t h[4];
            for (int k = 0; k < 4; k++) {
                h[k] = (uint16_t)(v >> (48 - 16 * k));
                fmt_g(g[k], sizeof g[k], mnh_to_f(h[k]));
            }
            snprintf(val, sizeof val, "(%s, %s, %s, %s) (0x%04x, 0x%04x, 0x%04x, 0x%04x)", g[0], g[1], g[2], g[3], h[0],
                     h[1], h[2], h[3]);
            break;
        }
        default:
            fmt_g(g[0], sizeof g[0], in_d(v));
            snprintf(val, sizeof val, "(f:%s, i:{{0x%X,0x%X},{0x%X,0x%X}}, v:0x%" PRIX64 ")", g[0],
                     (unsigned)(v >> 48) & 0xffff, (unsigned)(v >> 32) & 0xffff, (unsigned)(v >> 16) & 0xffff,
                     (unsigned)v & 0xffff, v);
        }
        buf_printf(d->out, "DEBUG-%s(%s,%u):%s #%s\n", region_name(L->kind), scope, shown, val, d->echo);
    }
    return true;
}

static bool parse_payload(Emu *e, const char *s, int count, uint64_t *vals) {
    for (int i = 0; i < count; i++) {
        if (*s == 'l' || *s == 'L') s++;
        uint64_t v = 0;
        for (int k = 0; k < 16; k++, s++) {
            int c = *s;
            int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
            if (d < 0) return emu_fail(e, "d set payload: long word %d needs 16 hex digits", i);
            v = v << 4 | (uint64_t)d;
        }
        vals[i] = v;
    }
    if (*s) return emu_fail(e, "d set payload: more data than %d long words", count);
    return true;
}

static bool dbg_set_one(Emu *e, void *vctx, int place, const char *scope) {
    DbgCtx *d = vctx;
    const DbgLoc *L = d->L;
    size_t np = (size_t)e->npe;
    (void)scope;
    const uint64_t *vals = (const uint64_t *)d->payload;
    if (L->kind == K_OMR) {
        if (L->addr < 1 || L->addr > 15) return emu_fail(e, "only mask entries 1..15 can be set");
        e->omr[(size_t)L->addr * np + (size_t)place] = (uint16_t)vals[0];
        if (e->strict) e->omr_def[(size_t)L->addr * np + (size_t)place] = 0xffff;
        return true;
    }
    for (int i = 0; i < d->count; i++) {
        uint64_t *u;
        uint32_t *w, shown;
        if (!dbg_lw(e, L, place, i, &u, &w, &shown)) return false;
        if (u)
            *u = vals[i];
        else {
            w[0] = (uint32_t)(vals[i] >> 32);
            w[np] = (uint32_t)vals[i];
        }
        if (e->strict) {
            if (u) {
                uint8_t *db = L->kind == K_L1BM   ? e->l1bm_def
                              : L->kind == K_L2BM ? e->l2bm_def
                              : L->kind == K_PDM  ? e->pdm_def
                                                  : e->dram_def;
                const uint64_t *b = L->kind == K_L1BM   ? e->l1bm
                                    : L->kind == K_L2BM ? e->l2bm
                                    : L->kind == K_PDM  ? e->pdm
                                                        : e->dram;
                db[u - b] = 1;
            } else {
                uint8_t *base = L->kind == K_T ? e->t_def : emu_mem_def(e, L->kind);
                uint32_t *dbase = L->kind == K_T ? e->t : emu_pe_mem(e, L->kind, &(uint32_t){0});
                size_t at = (size_t)(w - dbase);
                base[at] = base[at + np] = 1;
            }
        }
    }
    return true;
}

bool emu_run_debug(Emu *e, const VStep *s, MNBuf *out) {
    char cmd[16], loc[128], canon[160];
    int count = 0, n = 0;
    if (sscanf(s->text, "d %15s %127s %d%n", cmd, loc, &count, &n) < 3 || count < 1 || count > (1 << 20))
        return emu_fail(e, "debug command: d set LOC N PAYLOAD or d get[d|f|h] LOC N");
    DbgLoc L;
    if (!parse_loc(e, loc, &L, canon, sizeof canon)) return false;
    DbgCtx d = {&L, count, 0, NULL, out, NULL};
    if (!strcmp(cmd, "set")) {
        const char *p = s->text + n;
        while (*p == ' ') p++;
        uint64_t *vals = xmalloc(sizeof(uint64_t) * (size_t)count);
        bool ok = parse_payload(e, p, count, vals);
        d.payload = (const char *)vals;
        ok = ok && each_place(e, &L, dbg_set_one, &d);
        free(vals);
        return ok;
    }
    if (strncmp(cmd, "get", 3) || (cmd[3] && (cmd[4] || !strchr("dfh", cmd[3]))))
        return emu_fail(e, "unknown debug command 'd %s' (set, get, getd, getf, geth)", cmd);
    d.type = cmd[3];
    char echo[200];
    snprintf(echo, sizeof echo, "d %s %s %d", cmd, canon, count);
    d.echo = echo;
    return each_place(e, &L, dbg_get_one, &d);
}

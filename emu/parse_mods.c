/* parse_mods.c - an instruction's opcode and modifiers: the tables of names (ops, types, comparisons,
 * rounding modes, state spaces, flags, per-op modes, modifiers without effect) and emu_decode_mods, which
 * splits the opcode token on dots, takes the longest prefix naming an EMU_OPS entry as the opcode and
 * reads the remaining parts as types, comparisons, rounding modes, spaces, vector widths, flags and
 * per-op modes (parse.c calls it for every instruction; parse_check.c then checks the form). */
#include "emu/emu.h"
#include "emu/exec.h"
#include "emu/parse_int.h"

#include <stdio.h>
#include <string.h>

/* ---- tables ---- */
static const char *const op_names[] = {
#define X(e, n, s) n,
    EMU_OPS(X)
#undef X
};
static const char *const type_names[] = { /* (sizes and kinds: emu_type_size, emu_type_kind in emu.h) */
#define X(e, n, b, k) n,
    EMU_TYPES(X)
#undef X
};
static const char *const cmp_names[] = {"",
#define X(e, n) n,
    EMU_CMPS(X)
#undef X
};
static const char *const rnd_names[] = {"",
#define X(e, n) n,
    EMU_RNDS(X)
#undef X
};
static const char *const space_names[] = {
#define X(e, n) n,
    EMU_SPACES(X)
#undef X
};
static const char *const flag_names[] = {
#define X(e, n) n,
    EMU_FLAGS(X)
#undef X
};
static const char *const mode_names[] = {"",
#define X(e, n) n,
    EMU_MODES(X)
#undef X
};

/* Modifiers with no effect in the emulator: cache policy, memory order, scope, layout. */
static const char *const ignored_mods[] = {
    "ca", "cg", "cs", "lu", "cv", "wb", "wt", "relaxed", "acquire", "release", "acq_rel", "sc",
    "weak", "volatile", "mmio", "cta", "gpu", "sys", "cluster", "row", "col", "m8n8",
    "b16x2", "shared::cta", "shared::cluster", "global", "level", "ptr", "noftz",
};

const char *emu_op_name(unsigned op) { return op < EMU_OP_COUNT ? op_names[op] : "?"; }
const char *emu_mode_name(unsigned mode) { return mode < ARRAY_LEN(mode_names) ? mode_names[mode] : "?"; }
const char *emu_type_name(unsigned ty) { return ty < EMU_T_COUNT ? type_names[ty] : "?"; }

/* Whether name is the len bytes at s (strncmp stops at the first difference: no strlen of every name tried).  The
 * first bytes compared inline first: most names tried differ there (an opcode's parts are looked up in table after
 * table, each name in turn), and a call per name was a twentieth of loading a large kernel. */
static inline bool name_is(const char *name, const char *s, size_t len) {
    if (!len) return !name[0];
    return name[0] == s[0] && !strncmp(name, s, len) && !name[len];
}

int emu_find_name(const char *const *names, size_t n, const char *s, size_t len) {
    for (size_t i = 0; i < n; i++)
        if (name_is(names[i], s, len)) return (int)i;
    return -1;
}
#define FIND(tab, s, len) emu_find_name((tab), ARRAY_LEN(tab), (s), (len))

unsigned emu_type_find(const char *s, size_t len) {
    for (unsigned k = 1; k < EMU_T_COUNT; k++)
        if (name_is(type_names[k], s, len)) return k;
    return 0;
}
int emu_space_find(const char *s, size_t len) { return FIND(space_names, s, len); }
const char *emu_space_name(unsigned space) { return space < ARRAY_LEN(space_names) ? space_names[space] : "?"; }

/* ---- instruction decoding ---- */
bool emu_decode_mods(Parser *ps, EmuIns *in, const char *s, uint32_t len, uint32_t line) {
    /* split the opcode on dots, keeping "::" parts whole */
    const char *part[EMU_MAX_PARTS];
    uint32_t plen[EMU_MAX_PARTS], np = 0;
    for (uint32_t i = 0; i <= len;) {
        uint32_t j = i;
        while (j < len && s[j] != '.') j++;
        if (np == EMU_MAX_PARTS) return perr(ps, line, "opcode '%.*s' has too many parts", (int)len, s);
        part[np] = s + i;
        plen[np++] = j - i;
        i = j + 1;
    }
    /* longest prefix naming an op */
    int op = -1;
    uint32_t used = 0;
    for (uint32_t k = np; k > 0 && op < 0; k--) {
        uint32_t l = (uint32_t)(part[k - 1] + plen[k - 1] - s);
        int f = emu_find_name(op_names, ARRAY_LEN(op_names), s, l);
        if (f >= 0) { op = f; used = k; }
    }
    if (op < 0 && len >= 9 && memcmp(s, "multimem.", 9) == 0) /* the whole family: there is no multicast memory here */
        return perr(ps, line, "'%.*s': multimem (loads, stores and reductions on a multicast object's copies on several GPUs) is not "
                    "supported by the emulator, which has one device and no multicast objects", (int)len, s);
    static const char *const texture_ops[] = {"tex", "tld4", "txq", "suld", "sust", "sured", "suq"};
    for (size_t k = 0; op < 0 && k < ARRAY_LEN(texture_ops); k++) /* by the opcode's first word */
        if (strlen(texture_ops[k]) == plen[0] && !memcmp(s, texture_ops[k], plen[0]))
            return perr(ps, line, "'%.*s': " EMU_NO_TEXTURES, (int)len, s);
    if (op < 0) return perr(ps, line, "unsupported instruction '%.*s'", (int)len, s);
    in->op = (uint8_t)op;
    in->vec = op == EMU_OP_CP_RED_BULK_TENSOR ? 0 : 1; /* there: the dimensions */
    unsigned ntypes = 0, wm_layouts = 0;
    bool popc = false;
    for (uint32_t k = used; k < np; k++) {
        const char *p = part[k];
        uint32_t l = plen[k];
        int f;
        bool found = false;
        for (unsigned t = 1; t < EMU_T_COUNT && !found; t++)
            if (name_is(type_names[t], p, l)) {
                if (ntypes == 0) in->ty = (uint8_t)t;
                else if (ntypes == 1) in->ty2 = (uint8_t)t;
                else if (ntypes == 2 && (op == EMU_OP_MMA || op == EMU_OP_WGMMA || (EMU_IS_VIDEO(op) && !EMU_IS_VSET(op)) ||
                                         op == EMU_OP_WMMA_MMA || op == EMU_OP_CVT_PACK))
                    in->ty3 = (uint8_t)t;
                else if (ntypes == 3 && (op == EMU_OP_MMA || op == EMU_OP_WMMA_MMA)) in->ty4 = (uint8_t)t;
                ntypes++;
                found = true;
            }
        if (found) continue;
        if ((op == EMU_OP_SETP || op == EMU_OP_SET || EMU_IS_VSET(op)) && (f = FIND(cmp_names, p, l)) > 0) {
            in->cmp = (uint8_t)f;
            continue;
        }
        if ((op == EMU_OP_SETP || op == EMU_OP_SET || op == EMU_OP_LOP3) && (f = FIND(mode_names, p, l)) >= EMU_MODE_AAND &&
            f <= (op == EMU_OP_LOP3 ? EMU_MODE_AOR : EMU_MODE_AXOR)) { /* lop3.BoolOp: .and .or only */
            in->boolop = (uint8_t)f;
            continue;
        }
        if (op == EMU_OP_CP_RED_BULK_TENSOR && l == 2 && p[1] == 'd' && p[0] >= '1' && p[0] <= '5') { /* its mode is the reduction */
            in->vec = (uint8_t)(p[0] - '0');
            continue;
        }
        if ((f = FIND(mode_names, p, l)) > 0) {
            bool ok = false;
            if (EMU_IS_VIDEO(op)) { /* the secondary operation with c: SIMD .add (the lanes summed into c); scalar .add .min .max */
                bool minmax = !EMU_IS_VIDEO_SIMD(op) && (f == EMU_MODE_AMIN || f == EMU_MODE_AMAX);
                ok = op != EMU_OP_VMAD && (f == EMU_MODE_AADD || minmax);
                if (ok && in->mode) return perr(ps, line, "two secondary operations in '%.*s'", (int)len, s);
            }
            switch (op) {
            case EMU_OP_RED_ASYNC: case EMU_OP_CP_RED_BULK: case EMU_OP_CP_RED_BULK_TENSOR:
                ok = f >= EMU_MODE_AADD && f <= EMU_MODE_AXOR && f != EMU_MODE_AEXCH && f != EMU_MODE_ACAS;
                if (ok && in->mode) return perr(ps, line, "two reductions in '%.*s'", (int)len, s);
                break;
            case EMU_OP_SHFL: ok = f >= EMU_MODE_UP && f <= EMU_MODE_IDX; break;
            case EMU_OP_VOTE: ok = (f >= EMU_MODE_ALL && f <= EMU_MODE_BALLOT); break;
            case EMU_OP_MATCH: ok = f == EMU_MODE_ALL || f == EMU_MODE_ANY; break;
            case EMU_OP_REDUX: ok = f == EMU_MODE_AADD || f == EMU_MODE_AMIN || f == EMU_MODE_AMAX || f == EMU_MODE_AAND ||
                                    f == EMU_MODE_AOR || f == EMU_MODE_AXOR; break;
            case EMU_OP_ATOM: case EMU_OP_RED: ok = f >= EMU_MODE_AADD && f <= EMU_MODE_AXOR; break;
            case EMU_OP_TESTP: ok = f >= EMU_MODE_FINITE && f <= EMU_MODE_SUBNORMAL; break;
            case EMU_OP_LDMATRIX: ok = f >= EMU_MODE_X1 && f <= EMU_MODE_X4; break;
            case EMU_OP_MMA: ok = (f >= EMU_MODE_M16N8K16 && f <= EMU_MODE_M8N8K4) || (f >= EMU_MODE_M8N8K16 && f <= EMU_MODE_M16N8K256); break;
            case EMU_OP_STMATRIX: ok = f >= EMU_MODE_X1 && f <= EMU_MODE_X4; break;
            case EMU_OP_WMMA_LOAD: ok = f >= EMU_MODE_WM_A && f <= EMU_MODE_WM_C; break;
            case EMU_OP_WMMA_STORE: ok = f == EMU_MODE_WM_D; break;
            case EMU_OP_MBARRIER:
                ok = f >= EMU_MODE_MB_INIT && f <= EMU_MODE_MB_PENDING;
                if (ok && f == EMU_MODE_MB_EXPECT_TX && in->mode == EMU_MODE_MB_ARRIVE) f = EMU_MODE_MB_ARRIVE_EXPECT_TX;
                else if (ok && f == EMU_MODE_MB_EXPECT_TX && in->mode == EMU_MODE_MB_ARRIVE_DROP) f = EMU_MODE_MB_ARRIVE_DROP_EXPECT_TX;
                else if (ok && in->mode) return perr(ps, line, "two mbarrier operations in '%.*s'", (int)len, s);
                break;
            case EMU_OP_SETMAXNREG: ok = f == EMU_MODE_AINC || f == EMU_MODE_ADEC; break;
            case EMU_OP_CP_BULK_TENSOR: ok = f >= EMU_MODE_D1 && f <= EMU_MODE_D5; break;
            case EMU_OP_BAR: case EMU_OP_BARRIER: ok = f == EMU_MODE_BPOPC || f == EMU_MODE_AAND || f == EMU_MODE_AOR; break;
            case EMU_OP_PRMT: ok = f >= EMU_MODE_F4E && f <= EMU_MODE_RC16; break;
            case EMU_OP_CLUSTER_BAR:
                ok = f == EMU_MODE_MB_ARRIVE || f == EMU_MODE_CL_WAIT;
                if (ok && in->mode) return perr(ps, line, "'%.*s': arrive or wait, not both", (int)len, s);
                break;
            case EMU_OP_TENSORMAP_REPLACE:
                ok = f >= EMU_MODE_TM_ADDR && f <= EMU_MODE_TM_FILL;
                if (ok && in->mode) return perr(ps, line, "two tensor-map fields in '%.*s'", (int)len, s);
                break;
            }
            if (op == EMU_OP_VOTE && l == 3 && memcmp(p, "uni", 3) == 0) { f = EMU_MODE_VUNI; ok = true; }
            if (ok) { in->mode = (uint8_t)f; continue; }
        }
        if ((f = FIND(rnd_names, p, l)) > 0) { in->rnd = (uint8_t)f; continue; }
        f = FIND(space_names, p, l);
        if (l == 11 && memcmp(p, "shared::cta", 11) == 0) {
            f = EMU_SP_SHARED;
            if (op == EMU_OP_ISSPACEP) in->xflags |= EMU_XF_CTA;
        }
        if ((l == 12 && memcmp(p, "param::entry", 12) == 0) || (l == 11 && memcmp(p, "param::func", 11) == 0)) f = EMU_SP_PARAM;
        if (l == 11 && memcmp(p, "param::func", 11) == 0 && (op == EMU_OP_CVTA || op == EMU_OP_ISSPACEP))
            /* a kernel's parameters only (ptxas: "Illegal modifier '::func'"; it loaded) */
            return perr(ps, line, "'%.*s': cvta and isspacep take .param or .param::entry (a kernel's parameters), not .param::func",
                        (int)len, s);
        bool hopper = op >= EMU_OP_MBARRIER;
        /* shared::cluster addresses are shared addresses (EMU_DSMEM_TAG picks the CTA): ld, st, atom and red
         * on distributed shared memory too */
        if (l == 15 && memcmp(p, "shared::cluster", 15) == 0) f = EMU_SP_SHARED;
        if (f >= 0) {
            /* cp.async.ca.shared.global, cp.async.bulk.shared::cluster.global: destination space first */
            if (in->space && (op == EMU_OP_CP_BULK || op == EMU_OP_CP_BULK_TENSOR || op == EMU_OP_TENSORMAP_CP ||
                              op == EMU_OP_CP_RED_BULK || op == EMU_OP_CP_RED_BULK_TENSOR))
                in->space2 = (uint8_t)f;
            else if (!in->space || op != EMU_OP_CP_ASYNC) in->space = (uint8_t)f;
            continue;
        }
        if (op == EMU_OP_MMA || op == EMU_OP_WMMA_MMA || op == EMU_OP_WGMMA) { /* .b1: .and.popc or .xor.popc (nvcc: mma after the types, wmma.mma first) */
            bool bitop = l == 3 && (memcmp(p, "and", 3) == 0 || memcmp(p, "xor", 3) == 0);
            if (bitop || (l == 4 && memcmp(p, "popc", 4) == 0)) {
                bool have = in->xflags & (EMU_XF_MMA_AND | EMU_XF_MMA_XOR);
                if (bitop ? have : !have || popc)
                    return perr(ps, line, "'%.*s': one bit operation, then .popc (.and.popc or .xor.popc)", (int)len, s);
                if (bitop) in->xflags |= p[0] == 'a' ? EMU_XF_MMA_AND : EMU_XF_MMA_XOR;
                else popc = true;
                continue;
            }
        }
        if (op == EMU_OP_WMMA_LOAD || op == EMU_OP_WMMA_STORE || op == EMU_OP_WMMA_MMA) {
            /* the layouts (load, store: one; mma: A's then B's) and the shape, an index into emu_wmma_shapes */
            bool row = l == 3 && memcmp(p, "row", 3) == 0, col = l == 3 && memcmp(p, "col", 3) == 0;
            if (row || col) {
                if (wm_layouts == (op == EMU_OP_WMMA_MMA ? 2u : 1u)) return perr(ps, line, "too many layouts in '%.*s'", (int)len, s);
                if (col) in->xflags |= wm_layouts ? EMU_XF_WM_COL_B : EMU_XF_WM_COL;
                wm_layouts++;
                continue;
            }
            int sh = emu_wmma_shape(p, l);
            if (sh > 0) {
                in->space2 = (uint8_t)sh;
                continue;
            }
        }
        if (op == EMU_OP_MMA && ((l == 2 && memcmp(p, "sp", 2) == 0) || (l == 20 && memcmp(p, "sp::ordered_metadata", 20) == 0))) {
            if (in->xflags & EMU_XF_MMA_SP) return perr(ps, line, "'%.*s': .sp twice", (int)len, s);
            in->xflags |= (uint8_t)(EMU_XF_MMA_SP | (l == 20 ? EMU_XF_MMA_ORDERED : 0));
            continue;
        }
        if (op == EMU_OP_MMA) { /* A's then B's layout: EMU_XF_WM_COL / EMU_XF_WM_COL_B for .col */
            bool row = l == 3 && memcmp(p, "row", 3) == 0, col = l == 3 && memcmp(p, "col", 3) == 0;
            if (row || col) {
                if (wm_layouts == 2) return perr(ps, line, "too many layouts in '%.*s'", (int)len, s);
                if (col) in->xflags |= wm_layouts ? EMU_XF_WM_COL_B : EMU_XF_WM_COL;
                wm_layouts++;
                continue;
            }
        }
        if (op == EMU_OP_WGMMA) {
            unsigned wm, wn, wk;
            char tail;
            char buf[24];
            if (l < sizeof buf) {
                memcpy(buf, p, l);
                buf[l] = 0;
                if (sscanf(buf, "m%un%uk%u%c", &wm, &wn, &wk, &tail) == 3) {
                    if (wm != 64 || wn < 8 || wn > 256 || wn % 8 || (wk != 8 && wk != 16 && wk != 32 && wk != 64 && wk != 256))
                        return perr(ps, line, "unsupported wgmma shape '%.*s' (m64nNk8/16/32/64/256, N a multiple of 8 in 8..256)", (int)l, p);
                    in->space2 = (uint8_t)(wn / 8);
                    in->vec = (uint8_t)(wk == 256 ? 0 : wk); /* 0: .b1's k256 */
                    continue;
                }
            }
            if (l == 2 && memcmp(p, "sp", 2) == 0) {
                in->xflags |= EMU_XF_MMA_SP;
                continue;
            }
        }
        if ((op == EMU_OP_CP_BULK || op == EMU_OP_CP_BULK_TENSOR) && l == 18 && memcmp(p, "multicast::cluster", 18) == 0) {
            in->xflags |= EMU_XF_MULTICAST;
            continue;
        }
        if (hopper && l == 4 && memcmp(p, "tile", 4) == 0) continue;
        if ((op == EMU_OP_TENSORMAP_REPLACE || op == EMU_OP_TENSORMAP_CP) && l == 5 && memcmp(p, "b1024", 5) == 0) continue;
        if (op == EMU_OP_GRIDDEP && ((l == 4 && memcmp(p, "wait", 4) == 0) || (l == 17 && memcmp(p, "launch_dependents", 17) == 0))) {
            in->mode = 1; /* which one does not matter: neither has an effect here */
            continue;
        }
        if (op == EMU_OP_CP_BULK_PREFETCH && ((l == 6 && memcmp(p, "tensor", 6) == 0) || (l == 2 && memcmp(p, "L2", 2) == 0) ||
                                              (l == 2 && p[1] == 'd' && p[0] >= '1' && p[0] <= '5'))) continue;
        /* .im2col (loads, prefetches) and .im2col_no_offs (stores, reductions): which goes where, parse_check.c */
        if ((op == EMU_OP_CP_BULK_TENSOR || op == EMU_OP_CP_RED_BULK_TENSOR || op == EMU_OP_CP_BULK_PREFETCH) &&
            ((l == 6 && memcmp(p, "im2col", 6) == 0) || (l == 14 && memcmp(p, "im2col_no_offs", 14) == 0))) {
            in->xflags |= EMU_XF_IM2COL;
            continue;
        }
        if (l == 2 && p[0] == 'v' && (p[1] == '2' || p[1] == '4' || p[1] == '8')) {
            if (op == EMU_OP_WGMMA) continue; /* D's register count, which ptxas takes and ignores: parse_types.c */
            /* the ops that take vector forms (any other would read its {..} operands as one register) */
            if (op != EMU_OP_LD && op != EMU_OP_LDU && op != EMU_OP_ST && op != EMU_OP_ATOM && op != EMU_OP_RED &&
                op != EMU_OP_ST_ASYNC && op != EMU_OP_RED_ASYNC)
                return perr(ps, line, "vector form '.%.*s' of '%.*s' is not supported by the emulator", (int)l, p, (int)len, s);
            in->vec = (uint8_t)(p[1] - '0');
            continue;
        }
        if (op == EMU_OP_FENCE && l == 5 && memcmp(p, "async", 5) == 0) { in->xflags |= EMU_XF_PROXY_ASYNC; continue; }
        if (op == EMU_OP_FMA && l == 3 && memcmp(p, "oob", 3) == 0) { in->xflags |= EMU_XF_OOB; continue; }
        if (op == EMU_OP_LD || op == EMU_OP_ST || op == EMU_OP_ATOM || op == EMU_OP_RED) { /* memory order, for racecheck */
            bool acq = (l == 7 && memcmp(p, "acquire", 7) == 0) || (l == 7 && memcmp(p, "acq_rel", 7) == 0);
            bool rel = (l == 7 && memcmp(p, "release", 7) == 0) || (l == 7 && memcmp(p, "acq_rel", 7) == 0);
            bool strong = acq || rel || (l == 7 && memcmp(p, "relaxed", 7) == 0) || (l == 8 && memcmp(p, "volatile", 8) == 0) ||
                          (l == 4 && memcmp(p, "mmio", 4) == 0);
            if (acq) in->xflags |= EMU_XF_ACQUIRE;
            if (rel) in->xflags |= EMU_XF_RELEASE;
            if (strong) in->xflags |= EMU_XF_STRONG;
            if (strong) continue;
        }
        if (l == 5 && memcmp(p, "noftz", 5) == 0) { /* xflags bits mean something else on other opcodes */
            if (op == EMU_OP_ATOM || op == EMU_OP_RED) { in->xflags |= EMU_XF_NOFTZ; continue; }
            if (op == EMU_OP_RED_ASYNC || op == EMU_OP_CP_RED_BULK || op == EMU_OP_CP_RED_BULK_TENSOR) continue;
            /* add.noftz.f16 loaded and ran as add.f16 (ptxas: "Illegal modifier '.noftz'") */
            return perr(ps, line, "'%.*s': .noftz is for atom, red and the bulk reductions on .f16 and .bf16", (int)len, s);
        }
        if ((f = FIND(flag_names, p, l)) >= 0) { in->flags |= 1u << f; continue; }
        if (FIND(ignored_mods, p, l) >= 0 || memchr(p, ':', l)) continue;
        if (op == EMU_OP_TRAP || op == EMU_OP_MEMBAR || op == EMU_OP_FENCE || op == EMU_OP_PREFETCH || op == EMU_OP_DISCARD ||
            op == EMU_OP_APPLYPRIORITY)
            continue;
        if (op == EMU_OP_CREATEPOLICY && ((l == 10 && memcmp(p, "fractional", 10) == 0) || (l == 5 && memcmp(p, "range", 5) == 0) ||
                                          (l == 3 && memcmp(p, "cvt", 3) == 0) || (l == 2 && memcmp(p, "L2", 2) == 0)))
            continue;
        if (op == EMU_OP_MBARRIER && l == 6 && memcmp(p, "expect", 6) == 0) continue; /* never alone */
        if (op == EMU_OP_PREFETCHU && l == 2 && memcmp(p, "L1", 2) == 0) { in->mode = 1; continue; } /* required: checked */
        if (op == EMU_OP_PMEVENT && l == 4 && memcmp(p, "mask", 4) == 0) { in->xflags |= EMU_XF_PM_MASK; continue; }
        if (op == EMU_OP_VMAD && l == 2 && memcmp(p, "po", 2) == 0) { in->vsel.po = true; continue; }
        if (op == EMU_OP_VMAD && ((l == 4 && memcmp(p, "shr7", 4) == 0) || (l == 5 && memcmp(p, "shr15", 5) == 0))) {
            if (in->vsel.scale) return perr(ps, line, "two scales (.shr7, .shr15) in '%.*s'", (int)len, s);
            in->vsel.scale = l == 4 ? 7 : 15;
            continue;
        }
        static const char *const sm100_types[] = {"f32x2", "e2m1x2", "e2m3x2", "e3m2x2", "ue8m0x2"};
        if (FIND(sm100_types, p, l) >= 0) /* LLVM writes add/mul/fma.f32x2 for float2 arithmetic on sm_100 */
            return perr(ps, line, "'%.*s': .%.*s is a type of sm_100's instructions (packed f32 arithmetic, FP4/FP6/UE8M0 "
                        "conversions), which the emulator does not support (not supported yet: docs/emulator.md)", (int)len, s,
                        (int)l, p);
        return perr(ps, line, "unsupported modifier '.%.*s' in '%.*s'", (int)l, p, (int)len, s);
    }
    if (op == EMU_OP_FENCE && in->space == EMU_SP_GLOBAL) in->xflags &= (uint8_t)~EMU_XF_PROXY_ASYNC; /* fence.proxy.async.global */
    /* fence.sc, fence.acq_rel (the default), .acquire, .release, membar.cta/gl/sys: they order memory (racecheck's
     * fence patterns); not the proxy fences or fence.mbarrier_init */
    if ((op == EMU_OP_FENCE || op == EMU_OP_MEMBAR) && !emu_has_mod(s, len, "proxy") && !emu_has_mod(s, len, "mbarrier_init"))
        in->xflags |= EMU_XF_ORDER;
    if (op == EMU_OP_MMA && wm_layouts != 2) return perr(ps, line, "'%.*s' needs A's and B's layouts (.row.col)", (int)len, s);
    if ((in->xflags & (EMU_XF_MMA_AND | EMU_XF_MMA_XOR)) && (op == EMU_OP_MMA || op == EMU_OP_WMMA_MMA || op == EMU_OP_WGMMA) && !popc)
        return perr(ps, line, "'%.*s': the bit operation needs .popc (.and.popc or .xor.popc)", (int)len, s);
    if ((op == EMU_OP_WMMA_LOAD || op == EMU_OP_WMMA_STORE || op == EMU_OP_WMMA_MMA) &&
        (wm_layouts != (op == EMU_OP_WMMA_MMA ? 2u : 1u) || !in->space2))
        return perr(ps, line, "'%.*s' needs %s and a shape (.m16n16k16, .m32n8k16, .m8n32k16, .m16n16k8, .m8n8k4, .m8n8k32, .m8n8k128)", (int)len, s,
                    op == EMU_OP_WMMA_MMA ? "A's and B's layouts (.row/.col)" : "a layout (.row/.col)");
    return emu_check_mods(ps, in, ntypes, line, s, len);
}

/* ---- video operand selectors ----
 * The forms (PTX ISA, "Scalar Video Instructions" and "SIMD Video Instructions"; ptxas takes no others):
 *   scalar: a and b .b0 .b1 .b2 .b3 .h0 .h1 (the whole word without one); d the same, a merge into c (not vmad);
 *   vop2: a and b .hxy, x and y halves 0-3 of {b, a}, lane 1's first; d a mask .h0 .h1 .h10;
 *   vop4: a and b .bxyzw, bytes 0-7 of {b, a}, lane 3's first; d a mask of lanes 0-3 in descending order (.b0 .. .b3210).
 * c takes none, and only vmad's a, b and c may be negated (`-a`). */
static int video_sel_code(unsigned op, unsigned i, const char *s, uint32_t len) {
    if (len < 2 || (s[0] != 'b' && s[0] != 'h')) return -1;
    for (uint32_t k = 1; k < len; k++)
        if (s[k] < '0' || s[k] > '7') return -1;
    if (!EMU_IS_VIDEO_SIMD(op)) {
        if (len != 2 || (op == EMU_OP_VMAD && i == 0)) return -1;
        unsigned k = (unsigned)(s[1] - '0');
        return s[0] == 'b' ? (k <= 3 ? EMU_VSEL_B0 + (int)k : -1) : (k <= 1 ? EMU_VSEL_H0 + (int)k : -1);
    }
    unsigned lanes = EMU_VIDEO_LANES(op), bits = lanes == 2 ? 2 : 3, code = 0;
    if (s[0] != (lanes == 2 ? 'h' : 'b')) return -1;
    if (i == 0) { /* the mask: distinct lanes, highest first */
        if (len - 1 > lanes) return -1;
        for (uint32_t k = 1; k < len; k++) {
            unsigned lane = (unsigned)(s[k] - '0');
            if (lane >= lanes || (k > 1 && lane >= (unsigned)(s[k - 1] - '0'))) return -1;
            code |= 1u << lane;
        }
        return (int)code;
    }
    if (len - 1 != lanes) return -1;
    for (uint32_t k = 1; k < len; k++) { /* lane lanes-k's source */
        unsigned src = (unsigned)(s[k] - '0');
        if (src >= 2 * lanes) return -1;
        code |= src << (bits * (lanes - k));
    }
    return (int)code;
}

bool emu_video_operand(Parser *ps, EmuIns *in, unsigned i, const char *sel, uint32_t sellen, bool neg, uint32_t line) {
    const char *name = emu_op_name(in->op);
    if (!EMU_IS_VIDEO(in->op) && sel)
        return perr(ps, line, "'%s' takes no operand selector ('.%.*s' on operand %u): only video instructions do", name, (int)sellen,
                    sel, i + 1);
    if (neg) {
        if (in->op != EMU_OP_VMAD || i == 0)
            return perr(ps, line, "'-' on operand %u of '%s': negated registers are vmad's sources a, b and c only", i + 1, name);
        in->vsel.neg ^= i == 3 ? EMU_VNEG_C : EMU_VNEG_PRODUCT; /* -a xor -b negates the product */
    }
    if (!sel) return true;
    int code = i < 3 ? video_sel_code(in->op, i, sel, sellen) : -1;
    if (code < 0) {
        const char *forms = !EMU_IS_VIDEO_SIMD(in->op) ? (in->op == EMU_OP_VMAD && i == 0 ? "none" : ".b0 .b1 .b2 .b3 .h0 .h1")
                            : EMU_VIDEO_LANES(in->op) == 2 ? (i == 0 ? "the mask .h0 .h1 .h10" : ".hxy, x and y halves 0-3 of {b, a}")
                            : (i == 0 ? "a mask .b0 .. .b3210, lanes in descending order" : ".bxyzw, x y z w bytes 0-7 of {b, a}");
        return perr(ps, line, "'%s': no selector '.%.*s' on operand %u (%s: %s)", name, (int)sellen, sel, i + 1,
                    i == 0 ? "d" : i == 1 ? "a" : i == 2 ? "b" : "c", i == 3 ? "none" : forms);
    }
    if (i == 0) in->vsel.dsel = (uint8_t)code;
    else if (i == 1) in->vsel.asel = (uint16_t)code;
    else in->vsel.bsel = (uint16_t)code;
    return true;
}

/* Operand type for an immediate at position i. */
unsigned emu_imm_type(const EmuIns *in, unsigned i) {
    switch (in->op) {
    case EMU_OP_CVT: return i == 0 ? in->ty : in->ty2;
    case EMU_OP_CVT_PACK: return i == 0 ? EMU_T_U32 : i == 3 ? EMU_T_B32 : EMU_T_S32;
    case EMU_OP_SET: return i == 0 ? in->ty : in->ty2;
    case EMU_OP_SHL: case EMU_OP_SHR: return i == 2 ? EMU_T_U32 : in->ty;
    case EMU_OP_BFE: return i >= 2 ? EMU_T_U32 : in->ty;
    case EMU_OP_BFI: return i >= 3 ? EMU_T_U32 : in->ty;
    case EMU_OP_SHFL: return i == 1 ? EMU_T_B32 : EMU_T_U32; /* the value shuffled, .b32 */
    case EMU_OP_VOTE: case EMU_OP_BAR_WARP: case EMU_OP_BAR: case EMU_OP_BARRIER: case EMU_OP_MATCH:
    case EMU_OP_CP_ASYNC: case EMU_OP_CP_ASYNC_WAIT: case EMU_OP_WMMA_LOAD: case EMU_OP_WMMA_STORE:
        return EMU_T_U32;
    case EMU_OP_SELP: return i == 3 ? EMU_T_PRED : in->ty;
    case EMU_OP_SETP: return i == 3 ? EMU_T_PRED : in->ty; /* c, the predicate combined */
    case EMU_OP_REDUX: return i == 2 ? EMU_T_U32 : in->ty; /* the member mask (redux.sync.min.f32) */
    case EMU_OP_SLCT: return i == 3 ? in->ty2 : in->ty;
    case EMU_OP_MMA: return i >= 4 ? EMU_T_U32 : in->ty; /* mma.sp's metadata and selector */
    case EMU_OP_WGMMA: case EMU_OP_SETMAXNREG: case EMU_OP_CP_BULK: case EMU_OP_CP_BULK_WAIT: case EMU_OP_WGMMA_WAIT:
    case EMU_OP_TENSORMAP_CP: case EMU_OP_CP_RED_BULK: case EMU_OP_DISCARD: case EMU_OP_APPLYPRIORITY:
    case EMU_OP_ELECT:
        return EMU_T_U32;
    case EMU_OP_CREATEPOLICY: /* the fraction; .range's [a], primary and total sizes are 32-bit integers */
        return i == 0 ? EMU_T_B64 : in->ok[1] == EMU_OK_ADDR && i < 4 ? EMU_T_B32 : EMU_T_F32;
    case EMU_OP_MBARRIER: return in->mode == EMU_MODE_MB_TEST_WAIT || in->mode == EMU_MODE_MB_TRY_WAIT ? EMU_T_B64 : EMU_T_U32;
    default: return in->ty ? in->ty : EMU_T_B64;
    }
}

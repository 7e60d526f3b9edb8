/* parse_check_sm90.c - the load-time checks of sm_90's asynchronous, cluster and warpgroup instructions
 * (wgmma, mbarrier, the bulk and tensor copies, red.async, setmaxnreg, elect, stmatrix, ...): their operand
 * shapes, the modifiers the PTX ISA's syntax allows as ptxas of CUDA 13 takes them, and the .target they need.
 * emu_check_ins (parse_check.c) calls emu_check_hopper for the opcodes from stmatrix on (the sm_90 ones). */
#include "emu/exec.h"
#include "emu/parse_int.h"
#include "support/target.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* wgmma.mma_async's modifiers are its own: .sp, .sync, .aligned, the shape, the types, .satfinite, b1's .and.popc, and the
 * layout words ptxas also takes (.row, .col, .v2/.v4: parse_types.c; the layouts are the trans immediates).  Anything else decoded as
 * a modifier elsewhere (.acq_rel, .volatile, cache operators, .wide, .trans, .aligned twice...) is ptxas's "Illegal
 * modifier"; they loaded and ran as if absent.  Roundings, .ftz, .sat and .xor have their own messages. */
static bool wgmma_mods_ok(Parser *ps, const char *s, uint32_t len, uint32_t line) {
    static const char *const own[] = {"sp", "sync", "aligned", "satfinite", "and", "xor", "popc", "row", "col", "v2", "v4", "v8", "f16", "bf16",
                                      "tf32", "e4m3", "e5m2", "s8", "u8", "b1", "f32", "s32", "ftz", "sat", "rn", "rz",
                                      "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna", "rs", NULL};
    unsigned aligned = 0;
    Mod m[EMU_MAX_MODS];
    unsigned nm = split_mods(s, len, m, EMU_MAX_MODS);
    for (unsigned k = 0; k < nm; k++) { /* the words after "wgmma" */
        const char *w = m[k].p;
        uint32_t n = m[k].n;
        if (n == 9 && !memcmp(w, "mma_async", 9)) continue;
        unsigned mm, nn, kk;
        int used = 0;
        char b[24];
        if (n < sizeof b) {
            memcpy(b, w, n);
            b[n] = 0;
            if (sscanf(b, "m%un%uk%u%n", &mm, &nn, &kk, &used) == 3 && used == (int)n) continue; /* the shape: checked by the form */
        }
        bool known = false;
        for (const char *const *m = own; *m && !known; m++) known = strlen(*m) == n && !memcmp(*m, w, n);
        aligned += n == 7 && !memcmp(w, "aligned", 7);
        if (!known || aligned > 1)
            return perr(ps, line, "'%.*s': wgmma.mma_async takes no .%.*s%s (its modifiers: .sp, .sync.aligned, the shape, the "
                        "types, .satfinite, .and.popc)", (int)len, s, (int)n, w, known ? " twice" : "");
    }
    return true;
}

/* cp.reduce.async.bulk's operation and element type (ptxas of CUDA 13, tried op by type, to each destination):
 *   into .global: .add .u32 .s32 .u64 .f32 .f64, .add.noftz .f16 .bf16; .min .max .u32 .s32 .u64 .s64 .f16 .bf16;
 *   into .shared::cluster: .add .u32 .s32 .u64; .min .max .u32 .s32;
 *   both: .inc .dec .u32; .and .or .xor .b32, and .b64 into .global.
 * .noftz is for .add of .f16 and .bf16 and needed there ("Modifier '.noftz' required", "Illegal modifier '.noftz'");
 * min.f32, add.s64, and.u32, a float into shared memory or .min.noftz.bf16 loaded and ran. */
static bool bulk_reduce_ok(Parser *ps, const EmuIns *in, bool to_shared, uint32_t line, const char *s, uint32_t len) {
    unsigned t = in->ty;
    bool half = t == EMU_T_F16 || t == EMU_T_BF16, noftz = emu_has_mod(s, len, "noftz"), ok;
    switch (in->mode) {
    case EMU_MODE_AADD:
        ok = t == EMU_T_U32 || t == EMU_T_S32 || t == EMU_T_U64 || (!to_shared && (t == EMU_T_F32 || t == EMU_T_F64 || half));
        break;
    case EMU_MODE_AMIN: case EMU_MODE_AMAX:
        ok = t == EMU_T_U32 || t == EMU_T_S32 || (!to_shared && (t == EMU_T_U64 || t == EMU_T_S64 || half));
        break;
    case EMU_MODE_AINC: case EMU_MODE_ADEC: ok = t == EMU_T_U32; break;
    default: ok = t == EMU_T_B32 || (!to_shared && t == EMU_T_B64); break; /* .and .or .xor */
    }
    if (!ok)
        return perr(ps, line, "'%.*s': no .%s reduction of .%s elements into %s", (int)len, s, emu_mode_name(in->mode), emu_type_name(t),
                    to_shared ? ".shared::cluster" : ".global");
    bool want_noftz = in->mode == EMU_MODE_AADD && half;
    if (noftz != want_noftz)
        return perr(ps, line, want_noftz ? "'%.*s': an .add of .%s needs .noftz" : "'%.*s': .noftz is for .add of .f16 and .bf16 only%s",
                    (int)len, s, want_noftz ? emu_type_name(t) : "");
    return true;
}

/* red.async's operation and type (ptxas of CUDA 13, tried op by type): .add .u32 .s32 .u64 .s64; .min .max .u32 .s32;
 * .inc .dec .u32; .and .or .xor .b32 only ("Incorrect type '.u64' for operation '.min'", "... '.u32' for operation
 * '.and'"): 64-bit min/max and the bitwise ones of .u32 or of 64 bits loaded and ran. */
static bool red_async_type_ok(unsigned mode, unsigned ty) {
    switch (mode) {
    case EMU_MODE_AADD: return ty == EMU_T_U32 || ty == EMU_T_S32 || ty == EMU_T_U64 || ty == EMU_T_S64;
    case EMU_MODE_AMIN: case EMU_MODE_AMAX: return ty == EMU_T_U32 || ty == EMU_T_S32;
    case EMU_MODE_AINC: case EMU_MODE_ADEC: return ty == EMU_T_U32;
    case EMU_MODE_AAND: case EMU_MODE_AOR: case EMU_MODE_AXOR: return ty == EMU_T_B32;
    }
    return false;
}

/* mbarrier's semantics, scopes, .noComplete and .shared::cluster as the PTX ISA's syntax has them and ptxas of CUDA 13
 * takes them (tried form by form; the emulator ignored them all):
 *   a scope (.cta, .cluster) comes with a semantics and a semantics with a scope ("requires order", "requires scope");
 *   the semantics: .release or .relaxed on arrive and arrive_drop (with or without expect_tx), .acquire or .relaxed on
 *   test_wait and try_wait, .relaxed on expect_tx and complete_tx, none on init and inval;
 *   .noComplete on arrive and arrive_drop only, without .expect_tx, with no semantics or .release.cta;
 *   .shared::cluster (an mbarrier that may be another CTA's) on arrive, arrive_drop, expect_tx and complete_tx only, an
 *   arrival then returning no state: its destination is the sink `_` ("Sink '_' is expected"). */
static bool check_mbarrier_mods(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    unsigned mode = in->mode;
    bool arrive = mode == EMU_MODE_MB_ARRIVE || mode == EMU_MODE_MB_ARRIVE_DROP || mode == EMU_MODE_MB_ARRIVE_EXPECT_TX ||
                  mode == EMU_MODE_MB_ARRIVE_DROP_EXPECT_TX;
    bool wait = mode == EMU_MODE_MB_TEST_WAIT || mode == EMU_MODE_MB_TRY_WAIT, tx = mode == EMU_MODE_MB_EXPECT_TX || mode == EMU_MODE_MB_COMPLETE_TX;
    bool rel = emu_has_mod(s, len, "release"), rlx = emu_has_mod(s, len, "relaxed"), acq = emu_has_mod(s, len, "acquire");
    bool cta = emu_has_mod(s, len, "cta"), cluster = emu_has_mod(s, len, "cluster"), nocomp = in->flags & EMU_F(NOCOMPLETE);
    /* its words: no others (.row, .aligned, .clamp: ptxas's "Illegal modifier"; each loaded and ran as if absent) */
    static const char *const words[] = {"init", "inval", "arrive", "arrive_drop", "expect_tx", "complete_tx", "test_wait",
                                        "try_wait", "pending_count", "parity", "noComplete", "shared", "shared::cta",
                                        "shared::cluster", "release", "acquire", "relaxed", "cta", "cluster", "b64"};
    Mod m[12];
    unsigned n = split_mods(s, len, m, 12), nw;
    for (unsigned i = 0; i < n; i++)
        if (mod_find(&m[i], 1, words, ARRAY_LEN(words), &nw) < 0)
            return perr(ps, line, "'%.*s': mbarrier takes no .%.*s (its words: the operation, .parity, .noComplete, a semantics "
                        "and scope, .shared[::cta|::cluster], .b64)", (int)len, s, (int)m[i].n, m[i].p);
    const char *why = NULL;
    if ((rel || rlx || acq) && !(arrive && !acq) && !(wait && !rel) && !(tx && rlx))
        why = arrive ? "takes .release or .relaxed" : wait ? "takes .acquire or .relaxed" : tx ? "takes .relaxed" : "takes no semantics";
    else if ((cta || cluster) != (rel || rlx || acq))
        why = cta || cluster ? "takes a scope (.cta, .cluster) only after a semantics (.release, .relaxed, .acquire)"
                             : "takes a semantics only with a scope (.cta or .cluster)";
    else if (nocomp && !(mode == EMU_MODE_MB_ARRIVE || mode == EMU_MODE_MB_ARRIVE_DROP))
        why = "takes .noComplete only on arrive and arrive_drop without .expect_tx";
    else if (nocomp && (rlx || cluster))
        why = "takes .noComplete with no semantics or .release.cta only";
    else if (emu_has_mod(s, len, "shared::cluster") && !arrive && !tx)
        why = "takes .shared::cluster only on arrive, arrive_drop, expect_tx and complete_tx (init, inval, test_wait and try_wait: "
              ".shared::cta, an mbarrier of this CTA)";
    else if (emu_has_mod(s, len, "shared::cluster") && nocomp)
        why = "takes no .noComplete with .shared::cluster";
    else if (emu_has_mod(s, len, "shared::cluster") && arrive && in->o[0] != EMU_SLOT_SINK)
        why = "returns no state from .shared::cluster (an mbarrier that may be another CTA's): its destination is the sink '_'";
    return !why || perr(ps, line, "'%.*s': mbarrier %s", (int)len, s, why);
}

/* The opcode text is one of the NULL-terminated forms. */
static bool text_is_one_of(const char *s, uint32_t len, const char *const *forms) {
    for (; *forms; forms++)
        if (strlen(*forms) == len && !memcmp(s, *forms, len)) return true;
    return false;
}

/* Modifiers of ld/st/atom and of the arithmetic that sm_90's asynchronous and cluster instructions never take
 * (ptxas: "Illegal modifier", each checked; they loaded and ran as if absent): .acq_rel, .volatile, .sc, .weak,
 * .mmio, cache operators and .L1:: priorities, .nc, .wide/.lo/.hi, .approx/.full, .uni; .trans but on stmatrix;
 * .noftz but on the bulk reductions; and a memory order or scope on the copies, stmatrix, mapa and getctarank
 * (but .cta on cp.async.bulk, which ptxas takes; mbarrier's and red.async's semantics and scopes: mbarrier_form and their own checks). */
static bool sm90_stray_mods_ok(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    static const char *const never[] = {"acq_rel", "volatile", "sc", "weak", "mmio", "ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc",
                                        "wide", "lo", "hi", "approx", "full", "uni", "L1::evict_normal", "L1::evict_unchanged",
                                        "L1::evict_first", "L1::evict_last", "L1::no_allocate", NULL},
                      *const orders[] = {"relaxed", "acquire", "release", "cta", "cluster", "gpu", "sys", NULL};
    bool copy = false;
    switch (in->op) {
    case EMU_OP_CP_BULK: case EMU_OP_CP_RED_BULK: case EMU_OP_CP_BULK_TENSOR: case EMU_OP_CP_RED_BULK_TENSOR:
    case EMU_OP_CP_BULK_PREFETCH: case EMU_OP_STMATRIX: case EMU_OP_MAPA: case EMU_OP_GETCTARANK: copy = true; break;
    case EMU_OP_MBARRIER: case EMU_OP_RED_ASYNC: case EMU_OP_ELECT: case EMU_OP_SETMAXNREG: break;
    default: return true;
    }
    const char *bad = NULL;
    for (const char *const *m = never; !bad && *m; m++) /* red.async's .weak: its own message (it is .relaxed.cluster) */
        if (emu_has_mod(s, len, *m) && !(in->op == EMU_OP_RED_ASYNC && !strcmp(*m, "weak"))) bad = *m;
    for (const char *const *m = orders; copy && !bad && *m; m++) /* ptxas takes cp.async.bulk...cta */
        if (emu_has_mod(s, len, *m) && !(in->op == EMU_OP_CP_BULK && !strcmp(*m, "cta"))) bad = *m;
    if (!bad && in->op != EMU_OP_STMATRIX && emu_has_mod(s, len, "trans")) bad = "trans";
    if (!bad && in->op != EMU_OP_CP_RED_BULK && in->op != EMU_OP_CP_RED_BULK_TENSOR && emu_has_mod(s, len, "noftz")) bad = "noftz";
    return !bad || perr(ps, line, "'%.*s' takes no .%s (a modifier of other instructions)", (int)len, s, bad);
}

/* setmaxnreg.inc or .dec, then .sync, .aligned and the type (.u32 .s32) in any order, .sync maybe twice, as ptxas
 * reads them (setmaxnreg.inc.sync.sync.aligned.u32, setmaxnreg.inc.u32.sync.aligned: it was refused). */
static bool setmaxnreg_form(const char *s, uint32_t len) {
    Mod m[8];
    unsigned n = split_mods(s, len, m, 8), nsync = 0, naligned = 0, ntype = 0;
    if (n < 4 || n > 7 || (!mod_is(&m[0], "inc") && !mod_is(&m[0], "dec"))) return false;
    for (unsigned i = 1; i < n; i++) {
        if (mod_is(&m[i], "sync")) nsync++;
        else if (mod_is(&m[i], "aligned")) naligned++;
        else if (mod_is(&m[i], "u32") || mod_is(&m[i], "s32")) ntype++;
        else return false;
    }
    return nsync >= 1 && naligned == 1 && ntype == 1;
}

/* The modifiers the PTX ISA's syntax requires or allows on sm_90's collective instructions, as ptxas of CUDA 13 has
 * them (".sync modifier required", ".aligned modifier required", "Illegal modifier", "Shape modifier required",
 * "State space incorrect ... expected '::cluster'", "Predicate output expected"; the emulator ignored them all). */
static bool check_sm90_mods(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    if (!sm90_stray_mods_ok(ps, in, line, s, len)) return false;
    /* ptxas takes the wgmma group instructions without .aligned, and setmaxnreg of .s32 */
    static const char *const wg_fence[] = {"wgmma.fence.sync.aligned", "wgmma.fence.sync", NULL},
                      *const wg_commit[] = {"wgmma.commit_group.sync.aligned", "wgmma.commit_group.sync", NULL},
                      *const wg_wait[] = {"wgmma.wait_group.sync.aligned", "wgmma.wait_group.sync", NULL},
                      *const setmax[] = {"setmaxnreg.inc.sync.aligned.u32", "setmaxnreg.dec.sync.aligned.u32",
                                         "setmaxnreg.inc.sync.aligned.s32", "setmaxnreg.dec.sync.aligned.s32", NULL},
                      *const elect[] = {"elect.sync", NULL}, *const gdc[] = {"griddepcontrol.wait", "griddepcontrol.launch_dependents", NULL};
    const char *const *forms = NULL, *why = NULL;
    switch (in->op) {
    case EMU_OP_WGMMA_FENCE: forms = wg_fence; break;
    case EMU_OP_WGMMA_COMMIT: forms = wg_commit; break;
    case EMU_OP_WGMMA_WAIT: forms = wg_wait; break;
    case EMU_OP_SETMAXNREG: if (!setmaxnreg_form(s, len)) forms = setmax; break;
    case EMU_OP_ELECT:
        forms = elect;
        if (in->o[5] == EMU_SLOT_SINK) why = "needs a predicate destination: elect.sync d|p, membermask (d may be _)";
        break;
    case EMU_OP_GRIDDEP: forms = gdc; break;
    case EMU_OP_WGMMA: {
        /* ptxas: "Illegal modifier '.cta'" (a scope, a memory order), "No state space qualifier expected" (each
         * loaded and ran as if absent; .ftz and a rounding modifier were refused before); it takes .row, so no
         * list of the allowed ones */
        static const char *const illegal[] = {"cta", "cluster", "gpu", "sys", "relaxed", "acquire", "release",
                                              "shared", "shared::cta", "global", NULL};
        if (!emu_has_mod(s, len, "sync")) why = "needs .sync (wgmma.mma_async.sync.aligned.shape...)";
        for (const char *const *m = illegal; !why && *m; m++)
            if (emu_has_mod(s, len, *m))
                return perr(ps, line, "'%.*s': wgmma.mma_async takes no .%s (no scope, memory order or state space)",
                            (int)len, s, *m);
        if (!why && !wgmma_mods_ok(ps, s, len, line)) return false;
        break;
    }
    case EMU_OP_STMATRIX:
        if (!emu_has_mod(s, len, "sync") || !emu_has_mod(s, len, "aligned") || !emu_has_mod(s, len, "m8n8"))
            why = "needs .sync.aligned.m8n8 (stmatrix.sync.aligned.m8n8.x1|.x2|.x4[.trans].shared[::cta].b16)";
        else if (emu_has_mod(s, len, "shared::cluster")) why = "stores into .shared::cta (this CTA's shared memory)";
        break;
    case EMU_OP_MAPA: case EMU_OP_GETCTARANK:
        if (emu_has_mod(s, len, "shared::cta")) why = "takes .shared::cluster or a generic address, not .shared::cta";
        break;
    case EMU_OP_TENSORMAP_CP:
        if (!emu_has_mod(s, len, "tensormap::generic") || !emu_has_mod(s, len, "sync") || !emu_has_mod(s, len, "aligned"))
            why = "needs .tensormap::generic and .sync.aligned (tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope"
                  ".sync.aligned)";
        break;
    case EMU_OP_TENSORMAP_REPLACE:
        if (emu_has_mod(s, len, "shared::cluster")) why = "replaces a tensor map in .shared::cta or .global memory";
        break;
    default: return true;
    }
    if (!why && forms && !text_is_one_of(s, len, forms))
        return perr(ps, line, "'%.*s' is written %s%s%s", (int)len, s, forms[0], forms[1] ? " or " : "", forms[1] ? forms[1] : "");
    return !why || perr(ps, line, "'%.*s' %s", (int)len, s, why);
}

/* The operand shapes of the sm_90 instructions, and the .target they need. */
bool emu_check_hopper(Parser *ps, EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    const Target *tg = ps->m->target;
    bool basic_mbar = in->op == EMU_OP_MBARRIER && in->mode != EMU_MODE_MB_TRY_WAIT && in->mode != EMU_MODE_MB_EXPECT_TX &&
                      in->mode != EMU_MODE_MB_COMPLETE_TX && in->mode != EMU_MODE_MB_ARRIVE_EXPECT_TX &&
                      in->mode != EMU_MODE_MB_ARRIVE_DROP_EXPECT_TX;
    if (tg && (in->op == EMU_OP_WGMMA || in->op == EMU_OP_WGMMA_FENCE || in->op == EMU_OP_WGMMA_COMMIT ||
               in->op == EMU_OP_WGMMA_WAIT || in->op == EMU_OP_SETMAXNREG) && (tg->mma < WGMMA || ps->target_generic)) {
        if (ps->target_generic) /* as ptxas: "Instruction 'wgmma.fence' not supported on .target 'sm_90'" */
            return perr(ps, line, "'%.*s' needs .target sm_90a (the module's .target is sm_%d, without sm_90a's "
                        "architecture-specific instructions)", (int)len, s, tg->sm);
        return perr(ps, line, "'%.*s' needs .target sm_90a (the module is for %s)", (int)len, s, tg->name);
    }
    if (tg && !basic_mbar && tg->sm < 90)
        return perr(ps, line, "'%.*s' needs .target sm_90 or later (the module is for %s)", (int)len, s, tg->name);
    if (!check_sm90_mods(ps, in, line, s, len)) return false;
    uint64_t v;
    switch (in->op) {
    case EMU_OP_STMATRIX: {
        unsigned nmat = in->mode == EMU_MODE_X4 ? 4 : in->mode == EMU_MODE_X2 ? 2 : in->mode == EMU_MODE_X1 ? 1 : 0;
        if (!nmat || in->ty != EMU_T_B16 || (in->space != EMU_SP_SHARED && in->space != EMU_SP_GENERIC))
            return perr(ps, line, "unsupported stmatrix form '%.*s' (m8n8 .x1/.x2/.x4 [.trans] .shared .b16)", (int)len, s);
        if (in->ok[0] != EMU_OK_ADDR) return perr(ps, line, "'%.*s' needs an address operand [..] first", (int)len, s);
        if (in->ok[1] == EMU_OK_REG && const_value(ps, in->o[1], &v)) /* ptxas: "Arguments mismatch" */
            return perr(ps, line, "'%.*s': the source of stmatrix .x1 is a register {r}, not an immediate", (int)len, s);
        if (!(in->ok[1] == EMU_OK_VEC && in->on[1] == nmat) && !(in->ok[1] == EMU_OK_REG && nmat == 1))
            return perr(ps, line, "'%.*s' needs %u source register%s {..}", (int)len, s, nmat, nmat == 1 ? "" : "s");
        return true;
    }
    case EMU_OP_SETMAXNREG:
        if (!const_value(ps, in->o[0], &v) || v < 24 || v > 256 || v % 8)
            return perr(ps, line, "'%.*s' needs an immediate register count, a multiple of 8 in 24..256", (int)len, s);
        return true;
    case EMU_OP_MBARRIER: {
        unsigned ai = (in->mode == EMU_MODE_MB_INIT || in->mode == EMU_MODE_MB_EXPECT_TX || in->mode == EMU_MODE_MB_COMPLETE_TX ||
                       in->mode == EMU_MODE_MB_INVAL) ? 0 : 1;
        if (in->mode == EMU_MODE_MB_PENDING) return in->ok[1] == EMU_OK_REG || perr(ps, line, "'%.*s' takes a state register", (int)len, s);
        if (in->ok[ai] != EMU_OK_ADDR) return perr(ps, line, "'%.*s' needs the mbarrier's address [..] as operand %u", (int)len, s, ai + 1);
        if (in->space != EMU_SP_SHARED && in->space != EMU_SP_GENERIC)
            return perr(ps, line, "'%.*s': an mbarrier lives in shared memory (.shared::cta, .shared::cluster or generic)", (int)len, s);
        if (in->ty != EMU_T_B64) return perr(ps, line, "'%.*s' needs .b64", (int)len, s);
        if ((in->mode == EMU_MODE_MB_TEST_WAIT || in->mode == EMU_MODE_MB_TRY_WAIT) && in->nops == 4 && !(in->flags & EMU_F(PARITY)) &&
            in->mode == EMU_MODE_MB_TEST_WAIT)
            return perr(ps, line, "'%.*s': test_wait takes no time limit", (int)len, s);
        /* ptxas: "unexpected value '2', expected to be 0 or 1", "value '0' expected to be a non-zero positive" */
        if ((in->mode == EMU_MODE_MB_TEST_WAIT || in->mode == EMU_MODE_MB_TRY_WAIT) && (in->flags & EMU_F(PARITY)) &&
            const_value(ps, in->o[2], &v) && v > 1)
            return perr(ps, line, "'%.*s': the phase parity is 0 or 1, not %" PRIu64, (int)len, s, v);
        if ((in->mode == EMU_MODE_MB_ARRIVE || in->mode == EMU_MODE_MB_ARRIVE_DROP) && in->nops == 3 && const_value(ps, in->o[2], &v) &&
            v == 0) /* (an init count of 0 ptxas takes: it stops the launch) */
            return perr(ps, line, "'%.*s': the arrival count is positive, not 0", (int)len, s);
        return check_mbarrier_mods(ps, in, line, s, len);
    }
    case EMU_OP_CP_BULK: case EMU_OP_CP_RED_BULK: {
        bool red = in->op == EMU_OP_CP_RED_BULK;
        /* into shared memory (of the cluster: this CTA's) with an mbarrier; from shared memory into global memory */
        bool load = in->space == EMU_SP_SHARED && (red ? in->space2 == EMU_SP_SHARED
                                                       : in->space2 == EMU_SP_GLOBAL || in->space2 == EMU_SP_SHARED);
        bool store = in->space == EMU_SP_GLOBAL && in->space2 == EMU_SP_SHARED;
        if (!load && !store)
            return perr(ps, line, red ? "unsupported cp.reduce.async.bulk form '%.*s' (.global.shared::cta.bulk_group or "
                                        ".shared::cluster.shared::cta.mbarrier::complete_tx::bytes)"
                                      : "unsupported cp.async.bulk form '%.*s' (.shared::cluster.global.mbarrier::complete_tx::bytes, "
                                        ".shared::cluster.shared::cta.mbarrier::complete_tx::bytes or .global.shared::cta.bulk_group)",
                        (int)len, s);
        /* as ptxas: "State space incorrect" (a shared source is .shared::cta, a shared destination .shared::cluster),
         * ".completion_mechanism modifier required" */
        bool sh_src = in->space2 == EMU_SP_SHARED, cl = emu_has_mod(s, len, "shared::cluster");
        if ((store && cl) || (load && sh_src && (!cl || !emu_has_mod(s, len, "shared::cta"))))
            return perr(ps, line, "'%.*s': the state spaces are .shared::cluster.global, .shared::cta.global, "
                        ".shared::cluster.shared::cta or .global.shared::cta (a shared source is .shared::cta, a shared "
                        "destination of one .shared::cluster)", (int)len, s);
        if (load && !emu_has_mod(s, len, "mbarrier::complete_tx::bytes"))
            return perr(ps, line, "'%.*s' needs .mbarrier::complete_tx::bytes (the mbarrier the bytes complete on)", (int)len, s);
        if (red && !bulk_reduce_ok(ps, in, load, line, s, len)) return false;
        bool mc = in->xflags & EMU_XF_MULTICAST;
        if (mc && (red || !load || in->space2 != EMU_SP_GLOBAL))
            return perr(ps, line, "'%.*s': .multicast::cluster is for copies from global memory into shared memory", (int)len, s);
        if (in->ok[0] != EMU_OK_ADDR || in->ok[1] != EMU_OK_ADDR ||
            (load && (in->nops != 4u + mc || in->ok[3] != EMU_OK_ADDR || (mc && in->ok[4] != EMU_OK_REG))) || (!load && in->nops != 3))
            return perr(ps, line, "'%.*s' needs [dst], [src], size%s", (int)len, s, load ? mc ? ", [mbar], ctaMask" : ", [mbar]" : "");
        if (store && !(in->flags & EMU_F(BULK_GROUP))) return perr(ps, line, "'%.*s' needs .bulk_group", (int)len, s);
        if (const_value(ps, in->o[2], &v) && (v == 0 || v % 16))
            return perr(ps, line, "'%.*s': size %" PRIu64 " is not a positive multiple of 16", (int)len, s, v);
        return true;
    }
    case EMU_OP_ST_ASYNC: case EMU_OP_RED_ASYNC: {
        bool red = in->op == EMU_OP_RED_ASYNC;
        unsigned sz = emu_type_size(in->ty);
        if ((in->space != EMU_SP_SHARED && in->space != EMU_SP_GENERIC) || (sz != 4 && sz != 8) ||
            (red && (in->vec != 1 || !in->mode)) || (!red && in->vec != 1 && in->vec != 2 && !(in->vec == 4 && sz == 4)))
            return perr(ps, line, "unsupported %s form '%.*s'", red ? "red.async" : "st.async", (int)len, s);
        bool vec_ok = in->vec == 1 ? in->ok[1] == EMU_OK_REG : in->ok[1] == EMU_OK_VEC && in->on[1] == in->vec;
        if (in->ok[0] != EMU_OK_ADDR || !vec_ok || in->ok[2] != EMU_OK_ADDR)
            return perr(ps, line, "'%.*s' needs [addr], value%s, [mbar]", (int)len, s, in->vec > 1 ? "s {..}" : "");
        if (!emu_has_mod(s, len, "mbarrier::complete_tx::bytes")) /* ptxas: "requires modifier '.completion_mechanism'" */
            return perr(ps, line, "'%.*s' needs .mbarrier::complete_tx::bytes (the mbarrier the bytes complete on)", (int)len, s);
        /* ptxas: "Illegal modifier '.relaxed' for instruction 'st.async'", "order modifier required for instruction 'red.async'",
         * "Modifier '.gpu' requires '.global' space" (sm_100's form), "Modifier '.weak' cannot be combined with modifier
         * '.cluster'"; st.async.weak and st.async.cluster it takes */
        static const char *const orders[] = {"relaxed", "weak", "acquire", "release", "acq_rel", "sc", "volatile", "mmio", "cta", "gpu", "sys"};
        for (unsigned k = 0; k < sizeof orders / sizeof *orders; k++)
            if (emu_has_mod(s, len, orders[k]) && (red ? k > 0 : k != 1 || emu_has_mod(s, len, "cluster")))
                return perr(ps, line, red ? "'%.*s': red.async is .relaxed.cluster (no other memory order or scope)"
                                          : "'%.*s': st.async is .weak or .cluster (no other memory order or scope)", (int)len, s);
        if (red && (!emu_has_mod(s, len, "relaxed") || !emu_has_mod(s, len, "cluster") || emu_has_mod(s, len, "shared::cta")))
            return perr(ps, line, "'%.*s': red.async needs .relaxed.cluster and reduces into .shared::cluster", (int)len, s);
        if (red && !red_async_type_ok(in->mode, in->ty))
            return perr(ps, line, "'%.*s': no .%s of .%s (red.async: .add .u32 .s32 .u64 .s64, .min .max .u32 .s32, "
                        ".inc .dec .u32, .and .or .xor .b32)", (int)len, s, emu_mode_name(in->mode), emu_type_name(in->ty));
        return true;
    }
    case EMU_OP_CP_BULK_TENSOR: case EMU_OP_CP_RED_BULK_TENSOR: {
        unsigned dims = in->op == EMU_OP_CP_RED_BULK_TENSOR ? in->vec : in->mode - EMU_MODE_D1 + 1;
        if (in->op == EMU_OP_CP_RED_BULK_TENSOR && !(in->space == EMU_SP_GLOBAL && in->space2 == EMU_SP_SHARED))
            return perr(ps, line, "unsupported cp.reduce.async.bulk.tensor form '%.*s' (.global.shared::cta.tile.bulk_group)", (int)len, s);
        bool load = in->space == EMU_SP_SHARED && in->space2 == EMU_SP_GLOBAL;
        bool store = in->space == EMU_SP_GLOBAL && in->space2 == EMU_SP_SHARED;
        if (!load && !store)
            return perr(ps, line, "unsupported cp.async.bulk.tensor form '%.*s' (.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
                        "or .global.shared::cta.tile.bulk_group)", (int)len, s);
        if (store && emu_has_mod(s, len, "shared::cluster")) /* ptxas: "State space incorrect" */
            return perr(ps, line, "'%.*s': a tensor store's source is .shared::cta", (int)len, s);
        if (load && !emu_has_mod(s, len, "mbarrier::complete_tx::bytes")) /* ".completion_mechanism modifier required" */
            return perr(ps, line, "'%.*s' needs .mbarrier::complete_tx::bytes (the mbarrier the bytes complete on)", (int)len, s);
        unsigned ci = load ? 2 : 1;
        bool mc = in->xflags & EMU_XF_MULTICAST;
        if (mc && !load) return perr(ps, line, "'%.*s': .multicast::cluster is for loads into shared memory", (int)len, s);
        /* im2col: loads .im2col with the offsets after [mbar], stores and reductions .im2col_no_offs; .3d to .5d; not with
         * .tile (ptxas: "Illegal modifier", "Modifier '.2d' cannot be combined with modifier '.im2col'", "Multiple
         * .load_mode modifiers specified") */
        bool im2col = in->xflags & EMU_XF_IM2COL;
        if (im2col && !emu_has_mod(s, len, load ? "im2col" : "im2col_no_offs"))
            return perr(ps, line, "'%.*s': a tensor %s takes .%s", (int)len, s, load ? "load" : "store or reduction",
                        load ? "im2col (with its offsets)" : "im2col_no_offs");
        if (im2col && emu_has_mod(s, len, "tile")) return perr(ps, line, "'%.*s': .tile or .im2col, not both", (int)len, s);
        if (im2col && (dims < 3 || dims > 5)) return perr(ps, line, "'%.*s': im2col copies are .3d, .4d or .5d", (int)len, s);
        unsigned xo = im2col && load; /* the offsets operand */
        bool shape = in->ok[ci - 1] == EMU_OK_ADDR && in->ok[ci] == EMU_OK_VEC && in->on[ci] == dims &&
                     (load ? in->ok[0] == EMU_OK_ADDR && in->nops == 4u + xo + mc && in->ok[3] == EMU_OK_ADDR &&
                                 (!xo || (in->ok[4] == EMU_OK_VEC && in->on[4] == dims - 2)) && (!mc || in->ok[4 + xo] == EMU_OK_REG)
                           : in->ok[2] == EMU_OK_ADDR && in->nops == 3);
        if (!shape)
            return perr(ps, line, "'%.*s' needs %s with %u coordinate%s%s", (int)len, s,
                        load ? xo ? mc ? "[dst], [tensorMap, {c..}], [mbar], {offsets..}, ctaMask" : "[dst], [tensorMap, {c..}], [mbar], {offsets..}"
                                  : mc ? "[dst], [tensorMap, {c..}], [mbar], ctaMask" : "[dst], [tensorMap, {c..}], [mbar]"
                             : "[tensorMap, {c..}], [src]", dims, dims == 1 ? "" : "s",
                        xo ? dims == 3 ? " and 1 im2col offset" : dims == 4 ? " and 2 im2col offsets" : " and 3 im2col offsets" : "");
        if (store && !(in->flags & EMU_F(BULK_GROUP))) return perr(ps, line, "'%.*s' needs .bulk_group", (int)len, s);
        return true;
    }
    case EMU_OP_WGMMA: {
        EmuWgmmaForm fm;
        const char *why;
        if (!emu_wgmma_form(in, &fm, &why)) return perr(ps, line, "unsupported wgmma form '%.*s': %s", (int)len, s, why);
        if (!(in->ok[0] == EMU_OK_VEC && in->on[0] == fm.nd) && !(in->ok[0] == EMU_OK_REG && fm.nd == 1))
            return perr(ps, line, "'%.*s' needs %u D registers {..}", (int)len, s, fm.nd);
        bool areg = in->ok[1] == EMU_OK_VEC;
        if (areg && in->on[1] != 4) return perr(ps, line, "'%.*s': A from registers needs 4 registers {..}", (int)len, s);
        /* d, a, b-desc, scale-d, imm-scale-a, imm-scale-b [, imm-trans-a], imm-trans-b; integer: d, a, b, scale-d;
         * .sp: sp-meta (a register) and sp-sel (an immediate) after b-desc */
        bool notrans = in->ty2 == EMU_T_TF32 || in->ty2 == EMU_T_E4M3 || in->ty2 == EMU_T_E5M2; /* K-major only */
        unsigned sp = fm.sparse ? 2 : 0, want = (fm.integer ? 4 : notrans ? 6 : areg ? 7 : 8) + sp;
        if (in->nops != want)
            return perr(ps, line, "'%.*s' takes %u operands here (d, a, b-desc%s, scale-d%s), found %u", (int)len, s, want,
                        sp ? ", sp-meta, sp-sel" : "", want - sp == 4 ? "" : want - sp == 6 ? ", imm-scale-a, imm-scale-b"
                                                    : want - sp == 7 ? ", imm-scale-a, imm-scale-b, imm-trans-b"
                                                                     : ", imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b",
                        in->nops);
        if (sp) {
            bool ereg = (in->ok[3] == EMU_OK_REG || (in->ok[3] == EMU_OK_VEC && in->on[3] == 1)) &&
                        emu_const_at(ps, in->ok[3] == EMU_OK_VEC ? ps->vec[in->o[3]] : in->o[3]) < 0;
            if (!ereg) return perr(ps, line, "'%.*s': sp-meta (operand 4) is a register", (int)len, s);
            unsigned selmax = 4 / fm.mthreads - 1; /* ptxas: a lane pair's 0 or 1, all four lanes' 0 */
            if (in->ok[4] != EMU_OK_REG || !const_value(ps, in->o[4], &v) || v > selmax)
                return perr(ps, line, "'%.*s': sp-sel (operand 5) must be an immediate %s", (int)len, s, selmax ? "0 or 1" : "0");
        }
        for (unsigned k = 4 + sp; k < in->nops; k++)
            if (!const_value(ps, in->o[k], &v) || (k < 6 + sp ? (v != 1 && v != (uint64_t)-1 && v != 0xFFFFFFFFull) : v > 1))
                return perr(ps, line, "'%.*s': operand %u must be an immediate %s", (int)len, s, k + 1, k < 6 + sp ? "1 or -1" : "0 or 1");
        return true;
    }
    case EMU_OP_WGMMA_WAIT: case EMU_OP_CP_BULK_WAIT:
        if (!const_value(ps, in->o[0], &v) || v > 7) return perr(ps, line, "'%.*s' needs an immediate group count 0..7", (int)len, s);
        if (in->op == EMU_OP_CP_BULK_WAIT && !(len == strlen("cp.async.bulk.wait_group") && !memcmp(s, "cp.async.bulk.wait_group", len)) &&
            !(len == strlen("cp.async.bulk.wait_group.read") && !memcmp(s, "cp.async.bulk.wait_group.read", len)))
            return perr(ps, line, "'%.*s' takes no modifier but .read", (int)len, s);
        return true;
    case EMU_OP_TENSORMAP_REPLACE: {
        bool wide = in->mode == EMU_MODE_TM_ADDR || in->mode == EMU_MODE_TM_GSTRIDE;
        bool dim = in->mode == EMU_MODE_TM_BOX || in->mode == EMU_MODE_TM_GDIM || in->mode == EMU_MODE_TM_GSTRIDE ||
                   in->mode == EMU_MODE_TM_ESTRIDE;
        if (in->ok[0] != EMU_OK_ADDR) return perr(ps, line, "'%.*s' needs the tensor map's address [..] first", (int)len, s);
        if (in->space != EMU_SP_SHARED && in->space != EMU_SP_GLOBAL && in->space != EMU_SP_GENERIC)
            return perr(ps, line, "'%.*s': a tensor map is replaced in .shared::cta or .global memory", (int)len, s);
        if (in->ty != (wide ? EMU_T_B64 : EMU_T_B32)) return perr(ps, line, "'%.*s' needs .b1024.%s", (int)len, s, wide ? "b64" : "b32");
        if (dim && (!const_value(ps, in->o[1], &v) || v >= (in->mode == EMU_MODE_TM_GSTRIDE ? 4u : 5u)))
            return perr(ps, line, "'%.*s': the dimension (ord) must be an immediate 0..%u", (int)len, s,
                        in->mode == EMU_MODE_TM_GSTRIDE ? 3 : 4);
        if ((in->mode == EMU_MODE_TM_ELEMTYPE || in->mode == EMU_MODE_TM_INTERLEAVE || in->mode == EMU_MODE_TM_SWIZZLE ||
             in->mode == EMU_MODE_TM_FILL) && !const_value(ps, in->o[1], &v)) /* ptxas: "Integer constant expression expected" */
            return perr(ps, line, "'%.*s': the new value of this field is an immediate", (int)len, s);
        if (in->mode == EMU_MODE_TM_ELEMTYPE && const_value(ps, in->o[1], &v) && v > 12) /* as ptxas for sm_90a */
            return perr(ps, line, "'%.*s': element type %" PRIu64 " is not one of 0..12 (the packed 4- and 6-bit types are sm_100's)",
                        (int)len, s, v);
        return true;
    }
    case EMU_OP_CP_BULK_PREFETCH: {
        /* cp.async.bulk.prefetch.L2.global [a], size and cp.async.bulk.prefetch.tensor.Nd.L2.global[.tile] [tmap, {c..}],
         * each [.L2::cache_hint] with its policy last (taken off by the parser); as ptxas: ".level modifier required",
         * "State space modifier required", "Argument vector size mismatch", "Arguments mismatch" */
        if (in->ok[0] != EMU_OK_ADDR) return perr(ps, line, "'%.*s' needs an address operand [..] first", (int)len, s);
        if (!emu_has_mod(s, len, "L2") || !emu_has_mod(s, len, "global"))
            return perr(ps, line, "'%.*s' needs .L2.global (the level and the state space)", (int)len, s);
        if (emu_has_mod(s, len, "tensor")) {
            unsigned dims = 0;
            for (unsigned k = 1; k <= 5; k++) dims = emu_has_mod(s, len, (const char[]){(char)('0' + k), 'd', 0}) ? k : dims;
            bool im2col = in->xflags & EMU_XF_IM2COL; /* .im2col: the offsets follow (ptxas: "Arguments mismatch") */
            if (im2col && !emu_has_mod(s, len, "im2col")) return perr(ps, line, "'%.*s': a tensor prefetch takes .im2col", (int)len, s);
            if (im2col && emu_has_mod(s, len, "tile")) return perr(ps, line, "'%.*s': .tile or .im2col, not both", (int)len, s);
            if (im2col && (dims < 3 || dims > 5)) return perr(ps, line, "'%.*s': im2col prefetches are .3d, .4d or .5d", (int)len, s);
            if (im2col && (in->nops != 3 || in->ok[2] != EMU_OK_VEC || in->on[2] != dims - 2))
                return perr(ps, line, "'%.*s' needs [tensorMap, {c..}], {offsets..} with %u im2col offset%s", (int)len, s, dims - 2,
                            dims == 3 ? "" : "s");
            if (!dims || in->nops != 2u + im2col || in->ok[1] != EMU_OK_VEC || in->on[1] != dims)
                return perr(ps, line, "'%.*s' needs .1d-.5d and [tensorMap, {c..}] with as many coordinates", (int)len, s);
        } else if (in->nops != 2 || in->ok[1] != EMU_OK_REG) {
            return perr(ps, line, "'%.*s' needs [addr], size (and a cache policy only with .L2::cache_hint)", (int)len, s);
        }
        return true;
    }
    case EMU_OP_CP_BULK_COMMIT: /* ptxas: "Illegal modifier '.sync' for instruction 'cp.async.bulk.commit_group'" */
        if (len != strlen("cp.async.bulk.commit_group") || memcmp(s, "cp.async.bulk.commit_group", len))
            return perr(ps, line, "'%.*s' takes no modifiers", (int)len, s);
        return true;
    case EMU_OP_MAPA: case EMU_OP_GETCTARANK:
        /* the ISA's .u32/.u64; ptxas takes .s32/.s64 too */
        if (in->ty != EMU_T_U32 && in->ty != EMU_T_U64 && in->ty != EMU_T_S32 && in->ty != EMU_T_S64)
            return perr(ps, line, "'%.*s' needs .u32 or .u64", (int)len, s);
        if (in->space != EMU_SP_SHARED && in->space != EMU_SP_GENERIC)
            return perr(ps, line, "'%.*s': only shared-memory addresses (.shared::cluster or generic)", (int)len, s);
        return true;
    case EMU_OP_TENSORMAP_CP:
        if (in->space != EMU_SP_GLOBAL || in->space2 != EMU_SP_SHARED)
            return perr(ps, line, "unsupported tensormap.cp_fenceproxy form '%.*s' (.global.shared::cta)", (int)len, s);
        if (in->ok[0] != EMU_OK_ADDR || in->ok[1] != EMU_OK_ADDR) return perr(ps, line, "'%.*s' needs [dst], [src], 128", (int)len, s);
        if (!const_value(ps, in->o[2], &v) || v != 128) return perr(ps, line, "'%.*s': the size must be the immediate 128", (int)len, s);
        return true;
    }
    return true;
}

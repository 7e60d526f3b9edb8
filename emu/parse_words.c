/* parse_words.c - the words of an opcode that ptxas refuses and the decoder would pass over.
 *
 * The decoder (parse_mods.c) reads an opcode's words by kind, whatever the opcode: a state space, a memory order,
 * a scope, a cache operator, a layout and most flags set a field or are ignored ("no effect in the emulator"), so
 * `div.rn.global.f32`, `setp.eq.gpu.u32`, `mul.lo.ca.u32`, `shr.wide.u32` or `ld.relaxed.relaxed.gpu.u32` loaded
 * and ran as if the word were absent, where ptxas refuses them ("No state space qualifier expected", "Illegal
 * modifier", "Unknown modifier", "Duplicate .relaxed modifier", "Multiple scope modifiers specified"; each found
 * by scripts/ptx_diff.py and checked against ptxas of CUDA 13).  Three checks, after the decoder:
 *
 *   1. A word written twice is refused, on any opcode, except where ptxas takes it twice: a type (cvt.f32.f32,
 *      mma's four), the flags it reads as on or off (.sat .sync .uni .approx .shiftamt .cc .NaN: add.sat.sat.s32,
 *      shfl.sync.sync), wmma's and mma's .row/.col pair, and createpolicy's second .L2::evict_first.
 *   2. One of a kind: at most one type (cvt, set, slct, dp4a/dp2a: two; cvt.pack, wgmma, the video instructions:
 *      three; mma, wmma.mma: four: ld.global.u32.u32, mul.lo.s32.u32), one state space (the copies: two;
 *      ld.shared.param), one rounding (div.rn.rp), one comparison (setp.lt.eq), one of .lo .hi .wide, one cache
 *      operator; ld's cache, eviction and order words where a memory instruction takes none (atom.ca,
 *      cp.async.L2::evict_first, ldmatrix.weak, bar.release); redux.sync's operation by type; and the words ptxas
 *      requires (mma's and wmma's .aligned, shfl's, vote's and atom's operation, cp.async's two spaces).
 *   3. The opcodes that touch no memory and name no layout (PLAIN_OPS: arithmetic, logic, cvt, mov, setp, the warp
 *      instructions, branches) take no state space, memory order, scope, cache operator, eviction priority or
 *      layout word, and of the flag words (EMU_FLAGS) only their own (the table); .ftz, .sat, .NaN, .xorsign,
 *      .relu and .nc are checked by check_flag_ops (parse_check.c) with messages of their own, and the video
 *      instructions' flags by check_video_mods; nor the fp8 and tf32 types but on cvt (add.e4m3, bfe.e5m2); shfl
 *      and vote take .b32 (vote.all/.any/.uni: .pred). */
#include "emu/parse_int.h"

#include <string.h>

/* Flags another check owns (parse_check.c): not checked here. */
#define OTHER_FLAGS (EMU_F(FTZ) | EMU_F(SAT) | EMU_F(NANP) | EMU_F(XORSIGN) | EMU_F(RELU) | EMU_F(NC))
#define ALL_FLAGS 0xFFFFFFFFu

/* PLAIN_OPS(X): X(op, the flag words it takes) */
#define PLAIN_OPS(X)                                                                                                  \
    X(MOV, 0) X(CVT, EMU_F(SATFINITE)) X(CVT_PACK, 0)                                                                 \
    X(ADD, EMU_F(CC)) X(SUB, EMU_F(CC)) X(ADDC, EMU_F(CC)) X(SUBC, EMU_F(CC))                                        \
    X(MUL, EMU_F(WIDE) | EMU_F(LO) | EMU_F(HI)) X(MAD, EMU_F(WIDE) | EMU_F(LO) | EMU_F(HI) | EMU_F(CC))             \
    X(MADC, EMU_F(LO) | EMU_F(HI) | EMU_F(CC)) X(MUL24, EMU_F(LO) | EMU_F(HI)) X(MAD24, EMU_F(LO) | EMU_F(HI))        \
    X(SAD, 0) X(FNS, 0) X(BMSK, EMU_F(CLAMP) | EMU_F(WRAP)) X(SZEXT, EMU_F(CLAMP) | EMU_F(WRAP)) X(LOP3, 0)            \
    X(VADD, ALL_FLAGS) X(VSUB, ALL_FLAGS) X(VABSDIFF, ALL_FLAGS) X(VMIN, ALL_FLAGS) X(VMAX, ALL_FLAGS)               \
    X(VSHL, ALL_FLAGS) X(VSHR, ALL_FLAGS) X(VMAD, ALL_FLAGS) X(VSET, ALL_FLAGS) X(VABSDIFF2, ALL_FLAGS)              \
    X(VABSDIFF4, ALL_FLAGS) X(VADD2, ALL_FLAGS) X(VADD4, ALL_FLAGS) X(VSUB2, ALL_FLAGS) X(VSUB4, ALL_FLAGS)          \
    X(VAVRG2, ALL_FLAGS) X(VAVRG4, ALL_FLAGS) X(VMIN2, ALL_FLAGS) X(VMIN4, ALL_FLAGS) X(VMAX2, ALL_FLAGS)            \
    X(VMAX4, ALL_FLAGS) X(VSET2, ALL_FLAGS) X(VSET4, ALL_FLAGS)                                                      \
    X(DP4A, 0) X(DP2A, EMU_F(LO) | EMU_F(HI)) X(DIV, EMU_F(APPROX) | EMU_F(FULL)) X(REM, 0) X(ABS, 0) X(NEG, 0)     \
    X(MIN, EMU_F(ABSF)) X(MAX, EMU_F(ABSF)) X(FMA, 0) X(RCP, EMU_F(APPROX)) X(SQRT, EMU_F(APPROX))                  \
    X(RSQRT, EMU_F(APPROX)) X(EX2, EMU_F(APPROX)) X(LG2, EMU_F(APPROX)) X(SIN, EMU_F(APPROX)) X(COS, EMU_F(APPROX)) \
    X(TANH, EMU_F(APPROX)) X(COPYSIGN, 0) X(TESTP, 0) X(AND, 0) X(OR, 0) X(XOR, 0) X(NOT, 0) X(CNOT, 0)            \
    X(SHL, 0) X(SHR, 0) X(SHF, EMU_F(CLAMP) | EMU_F(WRAP) | EMU_F(L) | EMU_F(R)) X(SETP, 0) X(SET, 0) X(SELP, 0)   \
    X(SLCT, 0) X(POPC, 0) X(CLZ, 0) X(BREV, 0) X(BFIND, EMU_F(SHIFTAMT)) X(BFE, 0) X(BFI, 0) X(PRMT, 0)           \
    X(BRA, EMU_F(UNI)) X(BRX, EMU_F(UNI)) X(CALL, EMU_F(UNI)) X(RET, EMU_F(UNI)) X(EXIT, 0) X(TRAP, 0)             \
    X(SHFL, EMU_F(SYNC)) X(VOTE, EMU_F(SYNC)) X(MATCH, EMU_F(SYNC)) X(REDUX, EMU_F(SYNC) | EMU_F(ABSF))           \
    X(ACTIVEMASK, 0) X(NANOSLEEP, 0) X(MOVMATRIX, EMU_F(SYNC) | EMU_F(ALIGNED) | EMU_F(TRANS))                     \
    X(ELECT, EMU_F(SYNC)) X(SETMAXNREG, EMU_F(SYNC) | EMU_F(ALIGNED))                                               \
    X(CP_ASYNC_COMMIT, 0) X(CP_ASYNC_WAIT, 0) X(CP_ASYNC_WAIT_ALL, 0) X(ALLOCA, 0) X(STACKSAVE, 0) X(STACKRESTORE, 0)

/* MEM_OPS(X): X(op, the flag words it takes, the layout words it takes): the memory instructions whose state
 * spaces, memory orders, scopes and cache words check_cache_mods and check_mem_order check, and the matrix loads and
 * stores, with the flags and layouts of their own (ld.row.global, st.param.full, atom.and.cc, cvta.uni,
 * ldmatrix.wide, mma.trans loaded as if the word were absent). */
enum { LAY_NONE, LAY_ROWCOL, LAY_M8N8 };
#define MEM_OPS(X)                                                                                                     \
    X(LD, EMU_F(NC) | EMU_F(CACHE_HINT), LAY_NONE) X(LDU, 0, LAY_NONE) X(ST, EMU_F(CACHE_HINT), LAY_NONE)           \
    X(ATOM, EMU_F(CACHE_HINT), LAY_NONE) X(RED, EMU_F(CACHE_HINT), LAY_NONE) X(CVTA, EMU_F(TO), LAY_NONE)           \
    X(ISSPACEP, 0, LAY_NONE) X(WMMA_LOAD, EMU_F(SYNC) | EMU_F(ALIGNED), LAY_ROWCOL)                                   \
    X(WMMA_STORE, EMU_F(SYNC) | EMU_F(ALIGNED), LAY_ROWCOL) X(WMMA_MMA, EMU_F(SYNC) | EMU_F(ALIGNED) | EMU_F(SATFINITE), LAY_ROWCOL) \
    X(MMA, EMU_F(SYNC) | EMU_F(ALIGNED) | EMU_F(SATFINITE), LAY_ROWCOL)                                              \
    X(LDMATRIX, EMU_F(SYNC) | EMU_F(ALIGNED) | EMU_F(TRANS), LAY_M8N8)

static bool mem_op(unsigned op, uint32_t *flags, unsigned *layout) {
    switch (op) {
#define X(o, f, l) case EMU_OP_##o: *flags = (f), *layout = (l); return true;
        MEM_OPS(X)
#undef X
    default: return false;
    }
}

static const char *flag_name(uint32_t bad) {
    static const char *const names[] = {
#define X(e, n) n,
        EMU_FLAGS(X)
#undef X
    };
    unsigned f = 0;
    while (!(bad >> f & 1)) f++;
    return names[f];
}

/* Whether op is one of PLAIN_OPS; *flags: the flag words it takes. */
static bool plain_op(unsigned op, uint32_t *flags) {
    switch (op) {
#define X(o, f) case EMU_OP_##o: *flags = (f); return true;
        PLAIN_OPS(X)
#undef X
    default: return false;
    }
}

static bool word_in(const char *w, uint32_t n, const char *const *list) {
    for (; *list; list++)
        if (strlen(*list) == n && !memcmp(*list, w, n)) return true;
    return false;
}

/* What a word a plain opcode does not take is, for the message; NULL: not one of these. */
static const char *foreign_kind(const char *w, uint32_t n, unsigned op) {
    static const char *const spaces[] = {"global", "shared", "local", "const", "param", "shared::cta", "shared::cluster", "tex", NULL},
                      *const orders[] = {"relaxed", "acquire", "release", "acq_rel", "sc", "weak", "volatile", "mmio", "cta",
                                         "cluster", "gpu", "sys", NULL},
                      *const cache[] = {"ca", "cg", "cs", "lu", "cv", "wb", "wt", "unified", NULL},
                      *const layout[] = {"row", "col", "m8n8", "level", "ptr", "b16x2", NULL};
    if (word_in(w, n, spaces)) return "state space";
    if (word_in(w, n, orders)) return "memory order or scope";
    if (word_in(w, n, cache) || (n > 4 && (!memcmp(w, "L1::", 4) || !memcmp(w, "L2::", 4)))) return "cache operator or eviction priority";
    if (word_in(w, n, layout) && !(op == EMU_OP_MOVMATRIX && n == 4 && !memcmp(w, "m8n8", 4))) return "layout";
    return NULL;
}

/* A word ptxas takes twice (check 1). */
static bool twice_ok(const EmuIns *in, const char *w, uint32_t n) {
    static const char *const flags[] = {"sat", "sync", "uni", "approx", "shiftamt", "cc", "NaN", NULL};
    if (emu_type_find(w, n) || word_in(w, n, flags)) return true;
    if ((in->op == EMU_OP_MMA || in->op == EMU_OP_WMMA_MMA) && (n == 3 && (!memcmp(w, "row", 3) || !memcmp(w, "col", 3))))
        return true; /* .row.row, .col.col: A's and B's layouts */
    return in->op == EMU_OP_CREATEPOLICY && n == 15 && !memcmp(w, "L2::evict_first", 15); /* primary and secondary */
}

/* How many instruction types op names (most: one). */
static unsigned max_types(unsigned op) {
    switch (op) {
    case EMU_OP_CVT: case EMU_OP_SET: case EMU_OP_SLCT: case EMU_OP_DP4A: case EMU_OP_DP2A: return 2;
    case EMU_OP_CVT_PACK: case EMU_OP_WGMMA: return 3;
    case EMU_OP_MMA: case EMU_OP_WMMA_MMA: return 4;
    default: return EMU_IS_VIDEO(op) ? 3 : 1;
    }
}

/* How many state spaces op names: a copy's destination and source, else one. */
static unsigned max_spaces(unsigned op) {
    switch (op) {
    case EMU_OP_CP_ASYNC: case EMU_OP_CP_BULK: case EMU_OP_CP_BULK_TENSOR: case EMU_OP_CP_RED_BULK: case EMU_OP_CP_RED_BULK_TENSOR:
    case EMU_OP_TENSORMAP_CP: return 2;
    default: return 1;
    }
}

static bool check_words(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    /* the words after the opcode's own ("cvt.pack", "bar.warp.sync" and "brx.idx" are two or three) */
    const char *name = emu_op_name(in->op);
    uint32_t skip = 1;
    for (const char *c = name; *c; c++) skip += *c == '.';
    Mod m[EMU_MAX_MODS];
    unsigned nm = split_mods(s, len, m, EMU_MAX_MODS);
    const char *w[EMU_MAX_MODS];
    uint32_t wn[EMU_MAX_MODS], nw = 0;
    for (unsigned k = skip - 1; k < nm; k++) /* modifier k is the opcode's part k + 1 */
        w[nw] = m[k].p, wn[nw++] = m[k].n;
    unsigned ntypes = 0;
    for (uint32_t a = 0; a < nw; a++) ntypes += emu_type_find(w[a], wn[a]) != 0;
    /* 1. twice */
    for (uint32_t a = 0; a < nw; a++)
        for (uint32_t b = a + 1; b < nw; b++)
            if (wn[a] == wn[b] && !memcmp(w[a], w[b], wn[a]) && !twice_ok(in, w[a], wn[a]))
                return perr(ps, line, "'%.*s': .%.*s written twice (ptxas refuses a repeated modifier)", (int)len, s, (int)wn[a], w[a]);
    /* 2. one of a kind: the types, state spaces, roundings and comparisons an opcode names (ptxas: "Unexpected
     * instruction types", "Unexpected number of state spaces", "Multiple rounding modifiers specified",
     * "Multiple comparisons set") */
    static const char *const spaces[] = {"global", "shared", "local", "const", "param", "shared::cta", "shared::cluster", NULL},
                      *const rnds[] = {
#define X(e, n) n,
                          EMU_RNDS(X)
#undef X
                          NULL},
                      *const cmps[] = {
#define X(e, n) n,
                          EMU_CMPS(X)
#undef X
                          NULL};
    unsigned nsp = 0, nrnd = 0, ncmp = 0;
    bool cmp_op = in->op == EMU_OP_SETP || in->op == EMU_OP_SET || EMU_IS_VSET(in->op);
    for (uint32_t a = 0; a < nw; a++) {
        nsp += word_in(w[a], wn[a], spaces);
        nrnd += word_in(w[a], wn[a], rnds);
        ncmp += cmp_op && word_in(w[a], wn[a], cmps);
    }
    if (ntypes > max_types(in->op))
        return perr(ps, line, "'%.*s': %s takes %s", (int)len, s, name, max_types(in->op) == 1 ? "one type" : "fewer types");
    if (nsp > max_spaces(in->op))
        return perr(ps, line, "'%.*s': %s takes %s", (int)len, s, name, max_spaces(in->op) == 1 ? "one state space" : "two state spaces");
    if (nrnd > 1) return perr(ps, line, "'%.*s': %s takes one rounding modifier", (int)len, s, name);
    bool tc = in->op == EMU_OP_MMA || in->op == EMU_OP_WMMA_LOAD || in->op == EMU_OP_WMMA_STORE || in->op == EMU_OP_WMMA_MMA;
    unsigned halves = !!(in->flags & EMU_F(LO)) + !!(in->flags & EMU_F(HI)) + !!(in->flags & EMU_F(WIDE));
    if (halves > 1) return perr(ps, line, "'%.*s': %s takes one of .lo, .hi and .wide", (int)len, s, name); /* madc.hi.lo */
    /* the words of ld and st that these memory instructions take none of (ptxas: "Illegal modifier", "Illegal
     * modifier '.level::eviction_priority'", "Multiple cache operation modifiers specified"): atom and red no cache
     * operator or eviction priority (.L2::cache_hint they take); cp.async one cache operator (.ca .cg), no eviction
     * priority, memory order or scope; the matrix loads and stores, bar and bar.warp.sync none of them (barrier:
     * .cta) */
    static const char *const orders[] = {"relaxed", "acquire", "release", "acq_rel", "sc", "weak", "volatile", "mmio", "cta",
                                         "cluster", "gpu", "sys", NULL},
                      *const cache_ops[] = {"ca", "cg", "cs", "lu", "cv", "wb", "wt", NULL};
    bool no_order = in->op == EMU_OP_CP_ASYNC || in->op == EMU_OP_LDMATRIX || in->op == EMU_OP_STMATRIX || tc ||
                    in->op == EMU_OP_BAR || in->op == EMU_OP_BAR_WARP || in->op == EMU_OP_BARRIER;
    bool no_cache = in->op == EMU_OP_ATOM || in->op == EMU_OP_RED || in->op == EMU_OP_LDMATRIX || in->op == EMU_OP_STMATRIX || tc ||
                    in->op == EMU_OP_BAR || in->op == EMU_OP_BAR_WARP || in->op == EMU_OP_BARRIER;
    bool no_evict = no_cache || in->op == EMU_OP_CP_ASYNC;
    unsigned ncache = 0;
    for (uint32_t a = 0; a < nw; a++) {
        bool order = word_in(w[a], wn[a], orders) && !(in->op == EMU_OP_BARRIER && wn[a] == 3 && !memcmp(w[a], "cta", 3));
        bool cache = word_in(w[a], wn[a], cache_ops);
        bool evict = wn[a] > 4 && (!memcmp(w[a], "L1::", 4) || !memcmp(w[a], "L2::", 4)) &&
                     !(wn[a] == 14 && !memcmp(w[a], "L2::cache_hint", 14)) && !(in->op == EMU_OP_CP_ASYNC && w[a][4] >= '0' && w[a][4] <= '9');
        ncache += cache;
        if ((order && no_order) || (cache && no_cache) || (evict && no_evict))
            return perr(ps, line, "'%.*s': %s takes no %s (.%.*s)", (int)len, s, name,
                        order ? "memory order or scope" : cache ? "cache operator" : "eviction priority", (int)wn[a], w[a]);
    }
    if (ncache > 1) return perr(ps, line, "'%.*s': %s takes one cache operator", (int)len, s, name);
    if (in->op == EMU_OP_ATOM || in->op == EMU_OP_RED) { /* one memory order, one scope (atom.acq_rel.gpu...weak loaded) */
        static const char *const sems[] = {"relaxed", "acquire", "release", "acq_rel", "sc", "weak", "volatile", "mmio", NULL},
                          *const scopes[] = {"cta", "cluster", "gpu", "sys", NULL};
        unsigned nsem = 0, nscope = 0;
        for (uint32_t a = 0; a < nw; a++) nsem += word_in(w[a], wn[a], sems), nscope += word_in(w[a], wn[a], scopes);
        if (nsem > 1 || nscope > 1) return perr(ps, line, "'%.*s': %s takes one memory order and one scope", (int)len, s, name);
        /* the orders: atom .relaxed .acquire .release .acq_rel, red .relaxed .release (ptxas: "Illegal modifier '.sc'",
         * '.volatile', '.weak', red's '.acquire' and '.acq_rel'; they loaded) */
        static const char *const never[] = {"sc", "weak", "volatile", NULL}, *const red_never[] = {"acquire", "acq_rel", NULL};
        for (uint32_t a = 0; a < nw; a++)
            if (word_in(w[a], wn[a], never) || (in->op == EMU_OP_RED && word_in(w[a], wn[a], red_never)))
                return perr(ps, line, "'%.*s': %s takes no .%.*s (its memory orders: .relaxed%s .release%s)", (int)len, s, name, (int)wn[a], w[a],
                            in->op == EMU_OP_ATOM ? " .acquire" : "", in->op == EMU_OP_ATOM ? " .acq_rel" : "");
    }
    /* one operation ("Multiple instruction post-operation flags set": redux.or.sync.add ran the last one); a rounding
     * on mma only of .f64 ("Illegal rounding modifier": mma...rz.f32.f16.f16.f32 ran unrounded) */
    static const char *const operations[] = {"add", "min", "max", "inc", "dec", "exch", "cas", "and", "or", "xor", "up", "down",
                                             "bfly", "idx", "all", "any", "uni", "ballot", NULL};
    if (in->op == EMU_OP_ATOM || in->op == EMU_OP_RED || in->op == EMU_OP_REDUX || in->op == EMU_OP_SHFL || in->op == EMU_OP_VOTE ||
        in->op == EMU_OP_MATCH) {
        unsigned nop = 0;
        for (uint32_t a = 0; a < nw; a++) nop += word_in(w[a], wn[a], operations);
        if (nop > 1) return perr(ps, line, "'%.*s': %s takes one operation", (int)len, s, name);
    }
    if ((in->op == EMU_OP_MMA || in->op == EMU_OP_WMMA_MMA) && nrnd && in->ty != EMU_T_F64)
        return perr(ps, line, "'%.*s': %s takes a rounding only on .f64", (int)len, s, name);
    if ((in->op == EMU_OP_BAR_WARP && ntypes) || (in->op == EMU_OP_CP_ASYNC && in->flags))
        return perr(ps, line, "'%.*s': %s takes no %s", (int)len, s, name, ntypes ? "type" : "flag (.sync, .aligned, .wrap...)");
    /* redux.sync's operation by type: .add .min .max of .u32 .s32, .and .or .xor of .b32 ("Incorrect type '.u32' for
     * operation '.xor'") */
    if (in->op == EMU_OP_REDUX && in->ty != EMU_T_F32 &&
        ((in->mode == EMU_MODE_AAND || in->mode == EMU_MODE_AOR || in->mode == EMU_MODE_AXOR) ? in->ty != EMU_T_B32
                                                                                         : in->ty != EMU_T_U32 && in->ty != EMU_T_S32))
        return perr(ps, line, "'%.*s': redux.sync .%s takes %s, not .%s", (int)len, s, emu_mode_name(in->mode),
                    in->mode == EMU_MODE_AAND || in->mode == EMU_MODE_AOR || in->mode == EMU_MODE_AXOR ? ".b32" : ".u32 or .s32",
                    emu_type_name(in->ty));
    if (ncmp > 1) return perr(ps, line, "'%.*s': %s takes one comparison", (int)len, s, name);
    /* required words the decoder let go: mma's and wmma's .aligned (ptxas: ".aligned modifier required"), shfl's,
     * vote's and atom's operation, cp.async's two spaces */
    if (tc && (in->flags & (EMU_F(SYNC) | EMU_F(ALIGNED))) != (EMU_F(SYNC) | EMU_F(ALIGNED)))
        return perr(ps, line, "'%.*s': %s needs .sync.aligned", (int)len, s, name);
    if ((in->op == EMU_OP_SHFL || in->op == EMU_OP_VOTE || in->op == EMU_OP_ATOM || in->op == EMU_OP_RED) && !in->mode)
        return perr(ps, line, "'%.*s': %s needs its operation (%s)", (int)len, s, name,
                    in->op == EMU_OP_SHFL ? ".up .down .bfly .idx" : in->op == EMU_OP_VOTE ? ".all .any .uni .ballot" : ".add .min .max ...");
    if (in->op == EMU_OP_CP_ASYNC && nsp != 2) return perr(ps, line, "'%.*s': cp.async copies .shared.global", (int)len, s);
    if (in->op == EMU_OP_CP_ASYNC && !ncache) /* ptxas: "'.ca or .cg' modifier required" (it loaded) */
        return perr(ps, line, "'%.*s': cp.async needs its cache operator, .ca or .cg (cp.async.ca.shared.global)", (int)len, s);
    if ((in->op == EMU_OP_BAR || in->op == EMU_OP_BARRIER) && !(in->flags & (EMU_F(SYNC) | EMU_F(ARRIVE) | EMU_F(REDOP))))
        /* ptxas: "Barrier modifier required" (bar 0; loaded as bar.sync 0) */
        return perr(ps, line, "'%.*s': %s needs .sync, .arrive or .red (bar.sync 0)", (int)len, s, name);
    if (in->op == EMU_OP_CP_ASYNC) { /* into .shared or .shared::cta from .global, in that order (ptxas: "State space incorrect",
                                      * "Illegal modifier '::cluster'"); cp.async.ca.global.shared and .local.global loaded */
        unsigned k = 0;
        for (uint32_t a = 0; a < nw; a++) {
            if (!word_in(w[a], wn[a], spaces)) continue;
            bool sh = (wn[a] == 6 && !memcmp(w[a], "shared", 6)) || (wn[a] == 11 && !memcmp(w[a], "shared::cta", 11));
            bool gl = wn[a] == 6 && !memcmp(w[a], "global", 6);
            if (k++ == 0 ? !sh : !gl)
                return perr(ps, line, "'%.*s': cp.async copies from .global into .shared or .shared::cta (cp.async.ca.shared.global), not .%.*s",
                            (int)len, s, (int)wn[a], w[a]);
        }
    }
    if (in->op == EMU_OP_REDUX && !(in->flags & EMU_F(SYNC))) /* redux.add.s32: ".sync modifier required" (it loaded) */
        return perr(ps, line, "'%.*s': redux needs .sync (redux.sync.add.s32)", (int)len, s);
    if (in->op == EMU_OP_CVTA && in->ty != EMU_T_U32 && in->ty != EMU_T_U64)
        return perr(ps, line, "'%.*s': cvta takes .u32 or .u64, not .%s", (int)len, s, emu_type_name(in->ty));
    uint32_t mflags;
    unsigned lay;
    if (mem_op(in->op, &mflags, &lay)) {
        uint32_t bad = in->flags & ~mflags & ~OTHER_FLAGS;
        if (bad) return perr(ps, line, "'%.*s': %s takes no .%s", (int)len, s, name, flag_name(bad));
        static const char *const layouts[] = {"row", "col", "m8n8", "level", "ptr", "b16x2", NULL};
        for (uint32_t a = 0; a < nw; a++)
            if (word_in(w[a], wn[a], layouts) &&
                !(lay == LAY_ROWCOL && wn[a] == 3 && (!memcmp(w[a], "row", 3) || !memcmp(w[a], "col", 3))) &&
                !(lay == LAY_M8N8 && wn[a] == 4 && !memcmp(w[a], "m8n8", 4)))
                return perr(ps, line, "'%.*s': %s takes no layout (.%.*s)", (int)len, s, name, (int)wn[a], w[a]);
    }

    /* 3. a plain opcode's foreign words, types and flags */
    uint32_t own;
    if (!plain_op(in->op, &own)) return true;
    /* the fp8 and tf32 types are cvt's and the tensor-core instructions' (ptxas: "Unexpected instruction types") */
    const unsigned tys[4] = {in->ty, in->ty2, ntypes > 2 ? in->ty3 : 0, 0};
    for (unsigned k = 0; k < ntypes && k < 3 && in->op != EMU_OP_CVT; k++)
        if (tys[k] == EMU_T_TF32 || tys[k] == EMU_T_E4M3 || tys[k] == EMU_T_E5M2 || tys[k] == EMU_T_E4M3X2 || tys[k] == EMU_T_E5M2X2)
            return perr(ps, line, "'%.*s': %s takes no .%s (the fp8 and tf32 types are cvt's and the tensor-core instructions')",
                        (int)len, s, name, emu_type_name(tys[k]));
    if ((in->op == EMU_OP_SHFL && in->ty != EMU_T_B32) || (in->op == EMU_OP_VOTE && in->ty && in->ty != EMU_T_B32 && in->ty != EMU_T_PRED) ||
        (in->op == EMU_OP_FNS && in->ty != EMU_T_B32))
        return perr(ps, line, "'%.*s': %s takes .b32 here, not .%s", (int)len, s, name, emu_type_name(in->ty));
    if (in->op == EMU_OP_MATCH && in->ty && in->ty != EMU_T_B32 && in->ty != EMU_T_B64) /* match.any.sync.b16 loaded */
        return perr(ps, line, "'%.*s': match takes .b32 or .b64, not .%s", (int)len, s, emu_type_name(in->ty));
    /* 8-bit types are ld's, st's and cvt's (prmt.s8, shf.l.wrap.u8); .pred is mov's, the logic's and vote's */
    for (unsigned k = 0; k < ntypes && k < 2 && in->op != EMU_OP_CVT && in->op != EMU_OP_CVT_PACK && !EMU_IS_VIDEO(in->op); k++) {
        unsigned t = k ? in->ty2 : in->ty;
        bool pred_ok = in->op == EMU_OP_MOV || in->op == EMU_OP_AND || in->op == EMU_OP_OR || in->op == EMU_OP_XOR ||
                       in->op == EMU_OP_NOT || in->op == EMU_OP_VOTE;
        if (emu_type_size(t) == 1 && t != EMU_T_PRED && t != EMU_T_E4M3 && t != EMU_T_E5M2)
            return perr(ps, line, "'%.*s': %s takes no 8-bit type (.%s: ld, st and cvt move bytes)", (int)len, s, name, emu_type_name(t));
        if (t == EMU_T_PRED && !pred_ok) return perr(ps, line, "'%.*s': %s takes no .pred", (int)len, s, name);
    }
    for (uint32_t a = 0; a < nw; a++) {
        const char *kind = foreign_kind(w[a], wn[a], in->op);
        if (kind) return perr(ps, line, "'%.*s': %s takes no %s (.%.*s)", (int)len, s, name, kind, (int)wn[a], w[a]);
    }
    if ((in->flags & EMU_F(CC)) && emu_type_kind(in->ty) == EMU_K_F) /* add.cc is integer addition's carry */
        return perr(ps, line, "'%.*s': %s takes no .cc on .%s", (int)len, s, name, emu_type_name(in->ty));
    uint32_t bad = in->flags & ~own & ~OTHER_FLAGS;
    if (bad) return perr(ps, line, "'%.*s': %s takes no .%s", (int)len, s, name, flag_name(bad));
    return true;
}

/* After the other checks (their messages come first) and the operands: the words, and a register list {..} where the
 * form names no vector width (st.global.b32 [a], {r1, r2, r3, r4} stored r1; ptxas: "Argument vector size mismatch"). */
/* Word k (0: the opcode) of the opcode text s, or an empty one. */
static const char *word_at(const char *s, uint32_t len, unsigned k, uint32_t *wlen) {
    uint32_t i = 0;
    for (unsigned n = 0; n < k; n++) {
        while (i < len && s[i] != '.') i++;
        if (i == len) { *wlen = 0; return s + len; }
        i++;
    }
    uint32_t b = i;
    while (i < len && s[i] != '.') i++;
    *wlen = i - b;
    return s + b;
}

static bool word_is(const char *w, uint32_t wlen, const char *name) { return wlen == strlen(name) && !memcmp(w, name, wlen); }

/* The words that are part of the opcode's name for ptxas, so right after it: mul's, mad's, mul24's, mad24's and madc's
 * .lo .hi .wide ('mad.lo'), div's .full, wmma.load's and wmma.store's matrix, mbarrier's operation and the .parity of test_wait and try_wait
 * (mul.s32.wide, div.f32.full, mbarrier.parity.try_wait, mbarrier.shared.arrive: "Unknown modifier" or "Unexpected
 * instruction types"; they loaded).  Other modifiers ptxas reads in any order. */
static bool check_word_order(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    uint32_t l1, l2;
    const char *w1 = word_at(s, len, 1, &l1), *w2 = word_at(s, len, 2, &l2);
    switch (in->op) {
    case EMU_OP_MUL: case EMU_OP_MAD: case EMU_OP_MUL24: case EMU_OP_MAD24: case EMU_OP_MADC:
        if ((in->flags & (EMU_F(LO) | EMU_F(HI) | EMU_F(WIDE))) && !word_is(w1, l1, "lo") && !word_is(w1, l1, "hi") &&
            !word_is(w1, l1, "wide"))
            return perr(ps, line, "'%.*s': .lo, .hi or .wide comes right after %s (%s.wide.s32, %s.lo.u32)", (int)len, s,
                        emu_op_name(in->op), emu_op_name(in->op), emu_op_name(in->op));
        return true;
    case EMU_OP_WMMA_LOAD: case EMU_OP_WMMA_STORE: /* wmma.load.a, wmma.store.d (wmma.load.sync.c: "Unknown modifier") */
        if (!word_is(w2, l2, in->op == EMU_OP_WMMA_STORE ? "d" : "a") && !(in->op == EMU_OP_WMMA_LOAD && (word_is(w2, l2, "b") ||
                                                                                                      word_is(w2, l2, "c"))))
            return perr(ps, line, "'%.*s': the matrix (.a .b .c; .d) comes right after %s", (int)len, s, emu_op_name(in->op));
        return true;
    case EMU_OP_DIV:
        if ((in->flags & EMU_F(FULL)) && !word_is(w1, l1, "full"))
            return perr(ps, line, "'%.*s': .full comes right after div (div.full.f32)", (int)len, s);
        return true;
    case EMU_OP_MBARRIER: {
        static const char *const ops[] = {"init", "inval", "arrive", "arrive_drop", "expect_tx", "complete_tx",
                                          "test_wait", "try_wait", "pending_count"};
        bool named = false;
        for (size_t k = 0; k < ARRAY_LEN(ops); k++) named |= word_is(w1, l1, ops[k]);
        if (!named) return perr(ps, line, "'%.*s': mbarrier's operation comes right after it (mbarrier.try_wait.parity...)", (int)len, s);
        bool parity = false;
        for (unsigned k = 2;; k++) {
            uint32_t l;
            const char *w = word_at(s, len, k, &l);
            if (!l) break;
            parity |= word_is(w, l, "parity");
        }
        if (parity && !word_is(w2, l2, "parity"))
            return perr(ps, line, "'%.*s': .parity comes right after test_wait or try_wait (mbarrier.try_wait.parity...)", (int)len, s);
        return true;
    }
    default: return true;
    }
}

bool emu_check_words(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    if (!check_words(ps, in, line, s, len)) return false;
    if (!check_word_order(ps, in, line, s, len)) return false;
    if ((in->op == EMU_OP_LD || in->op == EMU_OP_LDU || in->op == EMU_OP_ST) && in->vec == 1)
        for (unsigned k = 0; k < in->nops; k++)
            if (in->ok[k] == EMU_OK_VEC && in->on[k] > 1)
                return perr(ps, line, "'%.*s': a list of %u registers needs .v%u", (int)len, s, in->on[k], in->on[k]);
    return true;
}

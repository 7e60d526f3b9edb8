/* parse_gate.c - the PTX ISA version and .target each feature needs, as ptxas checks them.
 *
 * A module says which PTX ISA it is written in (.version) and for which GPU (.target); ptxas refuses an
 * instruction, a modifier or a special register that is newer than either ("Feature 'mbarrier.try_wait'
 * requires PTX ISA .version 7.8 or later", "... requires .target sm_90 or higher"), and a .target that is
 * newer than the .version ("PTX .version 6.5 does not support .target sm_80").  The emulator refuses the same
 * PTX at load, at the line, naming the feature and what it needs.
 *
 *   1. parse.c reads the header: emu_gate_header() refuses each .target name whose SM (or variant) ptxas does not
 *      know (TARGET_PTX lists every one), records the .version (major * 10 + minor) and the first sm_NN[a|f] name
 *      of .target, and checks the pair against TARGET_PTX.
 *   2. Every instruction, once decoded and checked, goes through emu_gate_ins() (once per distinct opcode text:
 *      the texts that passed are remembered): each row of GATES whose
 *      pattern matches the opcode text is checked against the module's version and SM.
 *   3. Every special register read (%clusterid, ...) goes through emu_gate_sreg() against the '%' rows.
 *
 * A pattern is space-separated words: the first names the opcode (dotted words it begins with, `a|b` for
 * alternatives, `*` for any), each further word a modifier that must be present (`.a|.b`: one of them) or,
 * with `!`, absent; modifiers are the opcode's dot-separated parts after the opcode words, compared whole
 * (`.bf16` is not `.bf16x2`); `>.a` and `<.a` name the next-to-last and the last modifier only: cvt's destination
 * and source types, where ptxas's limits depend on the direction (cvt.f32.bf16 needs 7.1, cvt.bf16.f32 7.0; bf16
 * from or to anything but .f32 needs sm_90).  Each row was checked against ptxas of CUDA 13 on both sides of its limits
 * (tests/test_emu_refuse.c, `gates`, shows each to ptxas when it is installed).  Where ptxas is more lenient
 * than the ISA's text (nanosleep at 6.2, not 6.3) the row is ptxas's: the emulator never refuses what ptxas
 * takes.  A module whose .target names no sm_NN (or an SM below every row) is checked for the version only. */
#include "emu/exec.h"
#include "emu/parse_int.h"

#include <stdio.h>
#include <string.h>

/* X(pattern, ptx, sm, flags): ptx = major * 10 + minor (0: any), sm = the lowest SM (0: any).
 * Flags: GATE_ARCH: needs the architecture-specific target (sm_90a, not sm_90);
 *        GATE_PTX_BELOW_90: the version applies to targets below sm_90 only (cvt to f8 pairs: sm_89 needs 8.1,
 *        sm_90 7.8, as a second row gives);
 *        GATE_3OPS: the row is for the form with a third operand (mbarrier.arrive's count). */
enum { GATE_ARCH = 1, GATE_PTX_BELOW_90 = 2, GATE_3OPS = 4 };
#define GATES(X)                                                                                   \
    /* warp-synchronous primitives (Volta) */                                                      \
    X("shfl .sync", 60, 0, 0)                                                                      \
    X("vote .sync", 60, 0, 0)                                                                      \
    X("bar.warp.sync", 60, 0, 0)                                                                   \
    X("barrier !.cluster", 60, 0, 0)                                                               \
    X("barrier .cta", 78, 0, 0)                                                                    \
    X("fns", 60, 0, 0)                                                                             \
    X("match", 60, 70, 0)                                                                          \
    X("activemask", 62, 0, 0)                                                                      \
    X("nanosleep", 62, 70, 0)                                                                      \
    X("redux.sync", 70, 80, 0)                                                                     \
    X("redux.sync .f32", 86, 100, GATE_ARCH)                                                       \
    X("elect.sync", 80, 90, 0)                                                                     \
    /* memory consistency model: semantics and scopes */                                           \
    X("ld|st|atom|red .relaxed|.acquire|.release", 60, 70, 0)                                      \
    X("ld|st .mmio", 82, 70, 0)                                                                    \
    X("ld|st .v8", 88, 100, 0) /* 256-bit loads and stores */                                      \
    X("ld|st .v4 .b64|.u64|.s64|.f64", 88, 100, 0)                                                 \
    X("fence !.proxy !.mbarrier_init", 60, 70, 0)                                                  \
    X("fence|membar .proxy .alias", 75, 70, 0)                                                     \
    X("fence .proxy .async", 80, 90, 0)                                                            \
    X("fence .proxy .tensormap::generic", 83, 90, 0)                                               \
    X("fence .mbarrier_init", 80, 90, 0)                                                           \
    X("* .cluster", 78, 90, 0)                                                                     \
    X("* .shared::cluster", 78, 90, 0)                                                             \
    X("ld|st|isspacep|mbarrier|atom|red|cvta .shared::cta", 78, 0, 0)                              \
    X("cvta|isspacep .param", 77, 0, 0) /* ptxas: "cvta/isspacep with .param state space" */        \
    X("* .param::entry", 83, 0, 0)                                                                 \
    /* cache eviction priorities and prefetch sizes */                                             \
    X("* .L1::evict_normal|.L1::evict_unchanged|.L1::evict_first|.L1::evict_last|.L1::no_allocate", 74, 70, 0) \
    X("* .L2::64B|.L2::128B", 74, 75, 0)                                                           \
    X("* .L2::256B|.L2::cache_hint|.L2::evict_last|.L2::evict_normal", 74, 80, 0) \
    X("createpolicy|discard|applypriority", 74, 80, 0)                                             \
    /* atomics */                                                                                  \
    X("atom|red .add .f64", 50, 60, 0)                                                             \
    X("atom|red .add .f16x2", 62, 60, 0)                                                           \
    X("atom|red .add .f16", 63, 70, 0)                                                             \
    X("atom|red .bf16|.bf16x2", 78, 90, 0)                                                         \
    X("atom .cas .b16", 63, 70, 0)                                                                 \
    X("atom|red .v2|.v4|.v8", 81, 90, 0)                                                           \
    X("atom .b128", 83, 90, 0)                                                                     \
    X("ld|ldu|st|mov .b128", 83, 70, 0)                                                            \
    X("ld|st|atom .b128 .sys", 84, 0, 0) /* ptxas: "Feature '.b128 with .sys'" */                  \
    /* integer */                                                                                  \
    X("lop3", 43, 50, 0)                                                                           \
    X("lop3 .and|.or", 82, 70, 0)                                                                  \
    X("dp4a|dp2a", 50, 61, 0)                                                                      \
    X("bmsk|szext", 76, 70, 0)                                                                     \
    X("cvt.pack .u16|.s16|.u8|.s8", 65, 72, 0)                                                     \
    X("cvt.pack .u4|.s4|.u2|.s2", 65, 75, 0)                                                       \
    X("add|sub|min|max .u16x2|.s16x2", 80, 90, 0)                                                  \
    X("min|max .relu", 80, 90, 0)                                                                  \
    X("alloca|stacksave|stackrestore", 73, 52, 0)                                                  \
    /* half precision and bf16 */                                                                  \
    X("add|sub|mul|fma .f16|.f16x2", 42, 53, 0)                                                    \
    X("abs|neg .f16|.f16x2", 65, 53, 0)                                                            \
    X("min|max .f16|.f16x2|.bf16|.bf16x2", 70, 80, 0)                                              \
    X("min|max .NaN", 70, 80, 0)                                                                   \
    X("min|max .xorsign", 72, 86, 0)                                                               \
    X("fma|abs|neg .bf16|.bf16x2", 70, 80, 0)                                                      \
    X("add|sub|mul .bf16|.bf16x2", 78, 90, 0)                                                      \
    X("setp|set .bf16|.bf16x2", 78, 90, 0)                                                         \
    X("fma .relu", 70, 80, 0)                                                                      \
    X("fma .oob", 81, 90, 0)                                                                       \
    X("tanh", 70, 75, 0)                                                                           \
    X("ex2 .f16|.f16x2", 70, 75, 0)                                                                \
    X("ex2|tanh .bf16|.bf16x2", 78, 90, 0)                                                         \
    X("cvt .bf16|.bf16x2|.tf32|.relu", 70, 80, 0)                                                  \
    X("cvt >.f32 <.bf16", 71, 80, 0)                                                               \
    X("cvt <.bf16 !>.f32", 78, 90, 0)                                                              \
    X("cvt <.bf16 .ftz", 78, 90, 0)                                                                \
    X("cvt >.bf16 !<.f32", 78, 90, 0)                                                              \
    X("cvt .f16x2", 70, 80, 0)                                                                     \
    X("cvt .satfinite !.e4m3x2 !.e5m2x2", 81, 0, 0)                                               \
    X("cvt .rn|.rz .tf32", 78, 90, 0)                                                              \
    X("cvt .rn|.rz .satfinite .tf32", 86, 100, 0)                                                  \
    X("cvt .e4m3x2|.e5m2x2", 78, 89, 0)                                                            \
    X("cvt .e4m3x2|.e5m2x2", 81, 89, GATE_PTX_BELOW_90)                                            \
    /* tensor cores */                                                                             \
    X("wmma", 60, 70, 0)                                                                           \
    X("wmma .aligned", 63, 70, 0)                                                                  \
    X("wmma .s8|.u8", 63, 72, 0)                                                                   \
    X("wmma .s4|.u4|.b1", 63, 75, 0)                                                               \
    X("wmma .bf16|.tf32|.f64", 70, 80, 0)                                                          \
    X("mma .m8n8k4 .f16", 64, 70, 0)                                                               \
    X("mma .m16n8k8 .f16", 65, 75, 0)                                                              \
    X("mma .m8n8k16|.m8n8k32", 65, 75, 0)                                                          \
    X("mma .m8n8k128", 70, 75, 0)                                                                  \
    X("mma .m16n8k16|.m16n8k32|.m16n8k64|.m16n8k128|.m16n8k256", 70, 80, 0)                        \
    X("mma .bf16|.tf32", 70, 80, 0)                                                                \
    X("mma .m8n8k4 .f64", 70, 80, 0)                                                               \
    X("mma .b1 .and", 71, 80, 0)                                                                   \
    X("mma .f64 .m16n8k4|.m16n8k8|.m16n8k16", 78, 90, 0)                                           \
    X("mma .e4m3|.e5m2", 84, 89, 0)                                                                \
    X("mma .sp", 71, 80, 0)                                                                        \
    X("mma .sp::ordered_metadata", 85, 80, 0)                                                      \
    X("mma .e4m3|.e5m2 .m16n8k16", 87, 89, 0)                                                      \
    X("ldmatrix", 65, 75, 0)                                                                       \
    X("movmatrix", 78, 75, 0)                                                                      \
    X("stmatrix", 78, 90, 0)                                                                       \
    X("wgmma", 80, 90, GATE_ARCH)                                                                  \
    X("wgmma .sp", 82, 90, GATE_ARCH)                                                              \
    X("wgmma .s8 .u8", 84, 90, GATE_ARCH) /* mixed integer types */                                \
    X("setmaxnreg", 80, 90, GATE_ARCH)                                                             \
    /* asynchronous copies and barriers (Ampere, Hopper) */                                        \
    X("cp.async !.bulk", 70, 80, 0)                                                                \
    X("cp.async .bulk", 80, 90, 0)                                                                 \
    X("cp.reduce.async.bulk", 80, 90, 0)                                                           \
    X("mbarrier", 70, 80, 0)                                                                       \
    X("mbarrier .test_wait .parity", 71, 80, 0)                                                    \
    X("mbarrier .try_wait", 78, 90, 0)                                                             \
    X("mbarrier .relaxed|.acquire|.release", 80, 80, 0)                                            \
    X("mbarrier .relaxed .arrive|.arrive_drop|.test_wait|.try_wait", 86, 90, 0)                    \
    X("mbarrier .arrive|.arrive_drop !.noComplete !.expect_tx", 78, 90, GATE_3OPS)                 \
    X("mbarrier .expect_tx|.complete_tx", 80, 90, 0)                                               \
    X("st.async|red.async", 81, 90, 0)                                                             \
    X("mapa|getctarank", 78, 90, 0)                                                                \
    X("griddepcontrol", 78, 90, 0)                                                                 \
    X("prefetch .tensormap", 80, 90, 0)                                                            \
    X("tensormap.cp_fenceproxy", 83, 90, 0)                                                        \
    X("tensormap.replace", 83, 90, GATE_ARCH)                                                      \
    X("tensormap.replace .swizzle_atomicity", 86, 100, GATE_ARCH)                                  \
    /* special registers */                                                                        \
    X("%clusterid|%nclusterid|%cluster_ctaid|%cluster_nctaid|%cluster_ctarank|%cluster_nctarank|%is_explicit_cluster", 78, 90, 0) \
    X("%aggr_smem_size", 81, 90, 0)                                                                \
    X("%current_graph_exec", 80, 0, 0)                                                             \
    X("%reserved_smem_offset_begin|%reserved_smem_offset_end|%reserved_smem_offset_cap|%reserved_smem_offset_0|%reserved_smem_offset_1", 76, 80, 0)

typedef struct Gate {
    const char *pattern;
    uint8_t ptx, sm, flags;
} Gate;

static const Gate GATE_TABLE[] = {
#define X(p, v, s, f) {p, v, s, f},
    GATES(X)
#undef X
};

/* Every SM ptxas (CUDA 13) knows, each with the first .version that supports it as a .target (ptxas: "PTX .version
 * 6.5 does not support .target sm_80") and its variants: TV_A for sm_NNa, TV_F for sm_NNf.  An `a` needs what its
 * SM needs, sm_90a aside (8.0); an `f` at least 8.8.  A name whose SM is not here ptxas refuses ("Unsupported .target
 * 'sm_99'").  sm_70 from 5.1, as ptxas takes it (the ISA's documents say 6.0). */
enum { TV_A = 1, TV_F = 2 };
static const struct { uint8_t sm, ptx, variants; } TARGET_PTX[] = {
    {10, 10, 0},  {11, 10, 0},  {12, 12, 0},  {13, 12, 0},  {20, 20, 0},  {21, 20, 0},  {30, 30, 0},  {32, 40, 0},
    {35, 31, 0},  {37, 41, 0},  {50, 40, 0},  {52, 41, 0},  {53, 42, 0},  {60, 50, 0},  {61, 50, 0},  {62, 50, 0},
    {70, 51, 0},  {72, 61, 0},  {75, 63, 0},  {80, 70, 0},  {82, 62, 0},  {86, 71, 0},  {87, 74, 0},  {88, 73, 0},
    {89, 78, 0},  {90, 78, TV_A}, {100, 86, TV_A | TV_F}, {101, 86, TV_A | TV_F}, {103, 88, TV_A | TV_F},
    {110, 90, TV_A | TV_F}, {120, 87, TV_A | TV_F}, {121, 88, TV_A | TV_F},
};

/* The alternative of the word w (n chars: "a|b|c") that s (len) is: equal to it, or with prefix, its dotted words
 * followed by the end of s or a dot.  Returns the alternative's length + 1, 0 when none is. */
static size_t alt_find(const char *w, size_t n, const char *s, size_t len, bool prefix) {
    for (size_t i = 0; i <= n;) {
        size_t j = i;
        while (j < n && w[j] != '|') j++;
        size_t k = j - i;
        if (k <= len && memcmp(w + i, s, k) == 0 && (k == len || (prefix && s[k] == '.'))) return k + 1;
        i = j + 1;
    }
    return 0;
}

static bool alt_has(const char *w, size_t n, const char *s, size_t len) { return alt_find(w, n, s, len, false) != 0; }

/* Whether the opcode text s (len) is the dotted words of one alternative of w (`*`: any opcode); *rest gets where
 * what follows begins (the modifiers, from their first dot). */
static bool opcode_match(const char *w, size_t n, const char *s, size_t len, size_t *rest) {
    if (n == 1 && w[0] == '*') {
        const char *d = memchr(s, '.', len);
        *rest = d ? (size_t)(d - s) : len;
        return true;
    }
    size_t k = alt_find(w, n, s, len, true);
    *rest = k ? k - 1 : 0;
    return k != 0;
}

/* Whether one modifier word (".a|.b", "!.a", ">.a", "<.a", "!<.a") holds for the modifiers mods (".x.y.z", n chars).
 * `>` compares the next-to-last modifier only (cvt's destination type), `<` the last (its source type). */
static bool mod_match(const char *w, size_t n, const char *mods, size_t mlen) {
    bool neg = n && w[0] == '!';
    if (neg) w++, n--;
    int which = n && (w[0] == '>' || w[0] == '<') ? w[0] : 0;
    if (which) w++, n--;
    size_t starts[64], k = 0; /* where each ".part" of mods begins, and the end */
    for (size_t i = 0; i < mlen && k < 63; k++) {
        starts[k] = i;
        for (i++; i < mlen && mods[i] != '.';) i++;
    }
    starts[k] = mlen;
    bool found = false;
    if (which) {
        size_t at = which == '<' ? 1 : 2; /* from the end */
        found = k >= at && alt_has(w, n, mods + starts[k - at], starts[k - at + 1] - starts[k - at]);
    } else {
        for (size_t i = 0; i < k && !found; i++) found = alt_has(w, n, mods + starts[i], starts[i + 1] - starts[i]);
    }
    return found != neg;
}

static bool pattern_match(const char *p, const char *s, size_t len) {
    size_t n = strcspn(p, " "), rest;
    if (!opcode_match(p, n, s, len, &rest)) return false;
    for (p += n; *p == ' ';) {
        p++;
        n = strcspn(p, " ");
        if (!mod_match(p, n, s + rest, len - rest)) return false;
        p += n;
    }
    return true;
}

/* The feature's name for messages: the pattern without its '!' words, '|' shown as " or ", '>' as "to " and '<' as
 * "from ". */
static void gate_name(const Gate *g, char *buf, size_t cap) {
    size_t o = 0;
    const char *p = g->pattern;
    if (p[0] == '*') p += 2; /* any opcode: the modifier names the feature */
    for (; *p && o + 5 < cap;) {
        size_t n = strcspn(p, " ");
        if (*p != '!') {
            if (o) buf[o++] = ' ';
            size_t i = 0;
            if ((*p == '>' || *p == '<') && o + 10 < cap) { /* cvt's destination or source type */
                const char *dir = *p == '>' ? "to " : "from ";
                memcpy(buf + o, dir, strlen(dir)), o += strlen(dir), i = 1;
            }
            for (; i < n && o + 5 < cap; i++) {
                if (p[i] == '|') memcpy(buf + o, " or ", 4), o += 4;
                else buf[o++] = p[i];
            }
        }
        p += n;
        while (*p == ' ') p++;
    }
    if ((g->flags & GATE_3OPS) && o + 11 < cap) memcpy(buf + o, " with count", 11), o += 11;
    buf[o] = 0;
}

static bool gate_check(Parser *ps, const Gate *g, uint32_t line, const char *what, uint32_t wlen) {
    char name[160];
    bool ptx_applies = !(g->flags & GATE_PTX_BELOW_90) || (ps->target_sm && ps->target_sm < 90);
    if (ptx_applies && ps->ptx_version && ps->ptx_version < g->ptx) {
        gate_name(g, name, sizeof name);
        return perr(ps, line, "'%.*s': %s needs PTX ISA .version %u.%u or later (the module's .version is %u.%u)%s", (int)wlen, what,
                    name, g->ptx / 10u, g->ptx % 10u, ps->ptx_version / 10u, ps->ptx_version % 10u,
                    g->flags & GATE_PTX_BELOW_90 ? " on a .target below sm_90" : "");
    }
    if (ps->target_sm && g->sm && (ps->target_sm < g->sm || ((g->flags & GATE_ARCH) && !ps->target_arch))) {
        gate_name(g, name, sizeof name);
        return perr(ps, line, "'%.*s': %s needs .target sm_%u%s or later (the module's .target is sm_%u%s)", (int)wlen, what, name,
                    g->sm, g->flags & GATE_ARCH ? "a" : "", ps->target_sm, ps->target_arch ? "a" : "");
    }
    return true;
}

/* Opcode texts that passed every row, by (text, a third operand): a module repeats its instructions (add.u32 and
 * ld.param.u32 100000s of times), and the table's ~130 patterns per instruction were most of a large module's load. */
static uint32_t gate_hash(const char *s, uint32_t len, bool three) { return hash_fnv1a(s, len, three); }

static struct GatePassed *gate_passed_slot(const Parser *ps, const char *s, uint32_t len, bool three) {
    uint32_t mask = ps->capgate_passed - 1;
    for (uint32_t h = gate_hash(s, len, three) & mask;; h = (h + 1) & mask) {
        struct GatePassed *e = &ps->gate_passed[h];
        if (!e->s || (e->len == len && e->three == three && memcmp(e->s, s, len) == 0)) return e;
    }
}

static void gate_passed_add(Parser *ps, const char *s, uint32_t len, bool three) {
    if (2 * (ps->ngate_passed + 1) > ps->capgate_passed) { /* at most half full */
        uint32_t oc = ps->capgate_passed, nc = oc ? 2 * oc : 64;
        struct GatePassed *old = ps->gate_passed;
        ps->gate_passed = calloc(nc, sizeof *ps->gate_passed);
        if (!ps->gate_passed) out_of_memory();
        ps->capgate_passed = nc;
        for (uint32_t i = 0; i < oc; i++)
            if (old[i].s) *gate_passed_slot(ps, old[i].s, old[i].len, old[i].three) = old[i];
        free(old);
    }
    *gate_passed_slot(ps, s, len, three) = (struct GatePassed){s, len, three};
    ps->ngate_passed++;
}

bool emu_gate_ins(Parser *ps, uint32_t line, const char *s, uint32_t len, unsigned nops) {
    bool three = nops >= 3; /* the only operand fact a row depends on (GATE_3OPS) */
    if (ps->capgate_passed && gate_passed_slot(ps, s, len, three)->s) return true;
    for (size_t i = 0; i < sizeof GATE_TABLE / sizeof *GATE_TABLE; i++) {
        const Gate *g = &GATE_TABLE[i];
        if (g->pattern[0] != '%' && (!(g->flags & GATE_3OPS) || nops >= 3) && pattern_match(g->pattern, s, len) &&
            !gate_check(ps, g, line, s, len))
            return false;
    }
    gate_passed_add(ps, s, len, three); /* the text lives in the module's source for the whole parse */
    return true;
}

bool emu_gate_sreg(Parser *ps, uint32_t line, const char *s, uint32_t len) {
    const char *d = memchr(s, '.', len); /* %clusterid.x */
    size_t n = d ? (size_t)(d - s) : len;
    for (size_t i = 0; i < sizeof GATE_TABLE / sizeof *GATE_TABLE; i++) {
        const Gate *g = &GATE_TABLE[i];
        if (g->pattern[0] == '%' && alt_has(g->pattern, strlen(g->pattern), s, n) && !gate_check(ps, g, line, s, len)) return false;
    }
    return true;
}

/* An architecture name as ptxas reads it: sm_ or compute_, the decimal SM (taken modulo 2^32, as ptxas does:
 * sm_4294967376 is sm_80 to it), then anything, whose last character, when it is `a` or `f`, names that variant
 * (sm_90a; sm_80x is sm_80, sm_80xa sm_80a).  Refused, as ptxas refuses them ("Unsupported .target 'sm_99'"): no
 * digits, an SM ptxas does not know, a variant that SM does not have.  Other names (texmode_*, debug) pass. */
static bool target_known(Parser *ps, uint32_t line, const char *name, uint32_t len) {
    size_t pre = len >= 3 && !memcmp(name, "sm_", 3) ? 3 : len >= 8 && !memcmp(name, "compute_", 8) ? 8 : 0;
    if (!pre) return true;
    uint64_t n = 0;
    size_t i = pre;
    for (; i < len && name[i] >= '0' && name[i] <= '9'; i++) n = n > UINT64_MAX / 10 - 9 ? UINT64_MAX : n * 10 + (uint64_t)(name[i] - '0');
    uint32_t sm = (uint32_t)n;
    char variant = i < len && (name[len - 1] == 'a' || name[len - 1] == 'f') ? name[len - 1] : 0;
    int row = -1;
    for (size_t k = 0; i > pre && k < sizeof TARGET_PTX / sizeof *TARGET_PTX; k++)
        if (TARGET_PTX[k].sm == sm) row = (int)k;
    if (row < 0)
        return perr(ps, line, "unsupported .target '%.*s' (ptxas refuses it: %s)", (int)len, name,
                    i == pre ? "no SM number after the prefix" : "no GPU has that SM");
    if (variant && !(TARGET_PTX[row].variants & (variant == 'a' ? TV_A : TV_F)))
        return perr(ps, line, "unsupported .target '%.*s' (ptxas refuses it: sm_%u has no '%c' variant)", (int)len, name, (unsigned)sm,
                    variant);
    return true;
}

bool emu_gate_header(Parser *ps, uint32_t line, const char *name, uint32_t len) {
    unsigned sm = 0;
    int used = 0;
    char buf[24];
    if (!target_known(ps, line, name, len)) return false; /* every name, as ptxas checks every one */
    if (ps->target_sm || len >= sizeof buf) return true; /* the first sm_NN name decides */
    memcpy(buf, name, len);
    buf[len] = 0;
    if (!ps->m->target_sm && sscanf(buf, "compute_%u", &sm) == 1 && sm && sm <= 255) { /* a newer one's refused on emu:sm_NN */
        ps->m->target_sm = (uint8_t)sm;
        snprintf(ps->m->target_name, sizeof ps->m->target_name, "%s", buf);
        return true;
    }
    if (sscanf(buf, "sm_%u%n", &sm, &used) != 1 || !sm || sm > 255) return true;
    const char *suffix = buf + used;
    if (*suffix && strcmp(suffix, "a") && strcmp(suffix, "f")) return true; /* sm_80x: sm_80 to ptxas, not gated here */
    ps->target_sm = (uint8_t)sm;
    ps->target_arch = *suffix == 'a';
    ps->m->target_sm = (uint8_t)sm;
    snprintf(ps->m->target_name, sizeof ps->m->target_name, "%s", buf);
    unsigned need = 0;
    for (size_t i = 0; i < sizeof TARGET_PTX / sizeof *TARGET_PTX; i++)
        if (TARGET_PTX[i].sm == sm) need = TARGET_PTX[i].ptx;
    if (sm == 90 && ps->target_arch) need = 80;
    if (*suffix == 'f' && need < 88) need = 88;
    if (need && ps->ptx_version && ps->ptx_version < need)
        return perr(ps, line, "PTX .version %u.%u does not support .target %s: it needs .version %u.%u or later", ps->ptx_version / 10u,
                    ps->ptx_version % 10u, buf, need / 10u, need % 10u);
    return true;
}

/* exec.c - grid scheduler and the interpreter loop.
 *
 * Algorithm:
 *   1. emu_launch() packs the kernel parameters into one buffer, then starts
 *      host workers (the caller is worker 0) that take block indices from an
 *      atomic counter until all blocks ran or one faulted.
 *   2. run_block() gives every thread its register file (a copy of the
 *      function's slot template, with special registers filled in) and runs
 *      the block in rounds: each warp's lanes run one after another until
 *      each blocks (bar.sync, a warp collective) or exits; warp collectives
 *      fire as soon as every live lane of the member mask waits at one;
 *      when every live thread waits at a barrier it is released (named
 *      barriers with a thread count release at that count).  A round with
 *      no progress is a deadlock and is reported.
 *   3. run_thread() is the interpreter: guard test, then a switch on the
 *      pre-selected fast form (common 32/64-bit integer, f32 and global
 *      memory forms), control flow, and the family executors for the rest.
 * Exited threads count as arrived at bar.sync (as on the hardware) and are
 * dropped from warp member masks. */
#include "emu/exec.h"
#include "support/target.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* ---- fast forms ---- */
#define EMU_FASTS(X) \
    X(MOV32) X(MOV64) X(ADD32) X(ADD64) X(SUB32) X(SUB64) X(MULLO32) X(MULLO64) X(MADLO32) X(MADLO64) \
    X(MULWIDE_S32) X(MULWIDE_U32) X(SHL32) X(SHL64) X(SHRU32) X(SHRS32) X(SHRU64) X(SHRS64) \
    X(AND32) X(OR32) X(XOR32) X(AND64) X(OR64) X(XOR64) X(SETP_S32) X(SETP_U32) X(SETP_S64) X(SETP_U64) \
    X(SELP) X(FADD) X(FSUB) X(FMUL) X(FFMA) X(LDG32) X(LDG64) X(LDG128) X(STG32) X(STG64) X(STG128) \
    X(LDS32) X(STS32) X(LDP32) X(LDP64) X(CVTA_ID) X(MIN_S32) X(MAX_S32)
enum {
    FAST_NONE,
#define X(e) FAST_##e,
    EMU_FASTS(X)
#undef X
};

uint8_t emu_fast_select(const EmuIns *in) {
    unsigned sz = emu_type_size(in->ty), kind = emu_type_kind(in->ty);
    bool isint = kind == EMU_K_B || kind == EMU_K_U || kind == EMU_K_S;
    bool plainf = in->ty == EMU_T_F32 && (in->rnd == EMU_RND_NONE || in->rnd == EMU_RND_RN) &&
                  !(in->flags & (EMU_F(FTZ) | EMU_F(SAT)));
    bool regs = true;
    for (unsigned i = 0; i < in->nops; i++) regs = regs && in->ok[i] == EMU_OK_REG;
    switch (in->op) {
    case EMU_OP_MOV:
        if (!regs || in->nops != 2) return FAST_NONE;
        return sz == 8 ? FAST_MOV64 : sz == 4 ? FAST_MOV32 : FAST_NONE;
    case EMU_OP_ADD: case EMU_OP_SUB:
        if (isint && !(in->flags & (EMU_F(SAT) | EMU_F(CC))) && (sz == 4 || sz == 8))
            return in->op == EMU_OP_ADD ? (sz == 4 ? FAST_ADD32 : FAST_ADD64) : (sz == 4 ? FAST_SUB32 : FAST_SUB64);
        if (plainf) return in->op == EMU_OP_ADD ? FAST_FADD : FAST_FSUB;
        return FAST_NONE;
    case EMU_OP_MUL:
        if (isint && (in->flags & EMU_F(LO)) && (sz == 4 || sz == 8)) return sz == 4 ? FAST_MULLO32 : FAST_MULLO64;
        if (isint && (in->flags & EMU_F(WIDE)) && sz == 4) return kind == EMU_K_S ? FAST_MULWIDE_S32 : FAST_MULWIDE_U32;
        if (plainf) return FAST_FMUL;
        return FAST_NONE;
    case EMU_OP_MAD:
        if (isint && (in->flags & EMU_F(LO)) && !(in->flags & (EMU_F(SAT) | EMU_F(CC))) && (sz == 4 || sz == 8))
            return sz == 4 ? FAST_MADLO32 : FAST_MADLO64;
        if (plainf && in->rnd == EMU_RND_RN) return FAST_FFMA;
        return FAST_NONE;
    case EMU_OP_FMA: return plainf ? FAST_FFMA : FAST_NONE;
    case EMU_OP_SHL: return isint ? (sz == 4 ? FAST_SHL32 : sz == 8 ? FAST_SHL64 : FAST_NONE) : FAST_NONE;
    case EMU_OP_SHR:
        if (!isint) return FAST_NONE;
        if (sz == 4) return kind == EMU_K_S ? FAST_SHRS32 : FAST_SHRU32;
        if (sz == 8) return kind == EMU_K_S ? FAST_SHRS64 : FAST_SHRU64;
        return FAST_NONE;
    case EMU_OP_AND: case EMU_OP_OR: case EMU_OP_XOR:
        if (in->ty == EMU_T_PRED || sz < 4 || !isint) return FAST_NONE;
        if (in->op == EMU_OP_AND) return sz == 4 ? FAST_AND32 : FAST_AND64;
        if (in->op == EMU_OP_OR) return sz == 4 ? FAST_OR32 : FAST_OR64;
        return sz == 4 ? FAST_XOR32 : FAST_XOR64;
    case EMU_OP_SETP:
        if (!isint || in->boolop != EMU_MODE_AAND || in->o[3] != EMU_SLOT_TRUE || in->o[4] != EMU_SLOT_SINK) return FAST_NONE;
        if (in->on[1] || in->on[2]) return FAST_NONE;
        if (sz == 4) return kind == EMU_K_S ? FAST_SETP_S32 : FAST_SETP_U32;
        if (sz == 8) return kind == EMU_K_S ? FAST_SETP_S64 : FAST_SETP_U64;
        return FAST_NONE;
    case EMU_OP_SELP: return in->on[3] ? FAST_NONE : FAST_SELP;
    case EMU_OP_MIN: case EMU_OP_MAX:
        if (in->ty == EMU_T_S32 && !in->flags) return in->op == EMU_OP_MIN ? FAST_MIN_S32 : FAST_MAX_S32;
        return FAST_NONE;
    case EMU_OP_LD: case EMU_OP_LDU:
        if (in->space == EMU_SP_GLOBAL) {
            if (in->vec == 1 && sz == 4) return FAST_LDG32;
            if (in->vec == 1 && sz == 8) return FAST_LDG64;
            if (in->vec == 4 && sz == 4) return FAST_LDG128;
        }
        if (in->space == EMU_SP_SHARED && in->vec == 1 && sz == 4) return FAST_LDS32;
        if (in->space == EMU_SP_PARAM && in->vec == 1 && (sz == 4 || sz == 8) && in->o[1] >= EMU_SLOT_SREG)
            return FAST_NONE; /* param addresses go through the checked path */
        return FAST_NONE;
    case EMU_OP_ST:
        if (in->space == EMU_SP_GLOBAL) {
            if (in->vec == 1 && sz == 4) return FAST_STG32;
            if (in->vec == 1 && sz == 8) return FAST_STG64;
            if (in->vec == 4 && sz == 4) return FAST_STG128;
        }
        if (in->space == EMU_SP_SHARED && in->vec == 1 && sz == 4) return FAST_STS32;
        return FAST_NONE;
    case EMU_OP_CVTA:
        return in->space == EMU_SP_GLOBAL ? FAST_CVTA_ID : FAST_NONE;
    }
    return FAST_NONE;
}

/* ---- faults ---- */
bool emu_fault(EmuBlock *b, const EmuThread *t, const EmuIns *in, const char *what, const char *fmt, ...) {
    EmuLaunch *L = b->L;
    b->faulted = true;
    atomic_store(&L->stop, true);
    Str s = {0};
    str_printf(&s, "%s\n", what);
    if (in) {
        char line[256];
            emu_module_line(L->m, in->line, line, sizeof line);
        str_printf(&s, "    at kernel '%s', PTX line %u: %s\n", L->f->name, in->line, line);
    } else {
        str_printf(&s, "    in kernel '%s'\n", L->f->name);
    }
    if (t) str_printf(&s, "    by thread (%u,%u,%u) in block (%u,%u,%u)\n", t->tid[0], t->tid[1], t->tid[2],
                      b->ctaid[0], b->ctaid[1], b->ctaid[2]);
    else str_printf(&s, "    in block (%u,%u,%u)\n", b->ctaid[0], b->ctaid[1], b->ctaid[2]);
    if (fmt && *fmt) {
        str_puts(&s, "    ");
        va_list ap;
        va_start(ap, fmt);
        str_vprintf(&s, fmt, ap);
        va_end(ap);
        str_putc(&s, '\n');
    }
    pthread_mutex_lock(&L->lock);
    if (!L->err) L->err = str_take(&s);
    pthread_mutex_unlock(&L->lock);
    str_free(&s);
    return false;
}

/* ---- generic dispatch ---- */
static bool exec_generic(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    switch (in->op) {
    case EMU_OP_CVT: return emu_exec_cvt(b, t, in);
    case EMU_OP_LD: case EMU_OP_LDU: case EMU_OP_ST: case EMU_OP_ATOM: case EMU_OP_RED: case EMU_OP_CVTA:
    case EMU_OP_CP_ASYNC:
        return emu_exec_mem(b, t, in);
    case EMU_OP_CP_ASYNC_COMMIT: case EMU_OP_CP_ASYNC_WAIT: case EMU_OP_CP_ASYNC_WAIT_ALL: case EMU_OP_MEMBAR:
    case EMU_OP_FENCE: case EMU_OP_PREFETCH: case EMU_OP_NANOSLEEP:
        return true;
    case EMU_OP_ACTIVEMASK: {
        /* lanes run one after another: a lane that exited during this
         * round was still active, on the GPU, when this lane got here */
        uint32_t base = t->linear & ~31u, n = b->nthreads - base < 32 ? b->nthreads - base : 32;
        uint32_t all = n == 32 ? 0xFFFFFFFFu : (1u << n) - 1;
        EMU_R(t, in, 0) = all & ~b->exited[t->linear / 32];
        return true;
    }
    case EMU_OP_RCP: case EMU_OP_SQRT: case EMU_OP_RSQRT: case EMU_OP_EX2: case EMU_OP_LG2: case EMU_OP_SIN:
    case EMU_OP_COS: case EMU_OP_TANH: case EMU_OP_COPYSIGN: case EMU_OP_TESTP: case EMU_OP_FMA:
        return emu_exec_float(b, t, in);
    case EMU_OP_ADD: case EMU_OP_SUB: case EMU_OP_MUL: case EMU_OP_MAD: case EMU_OP_DIV: case EMU_OP_ABS:
    case EMU_OP_NEG: case EMU_OP_MIN: case EMU_OP_MAX: case EMU_OP_SETP:
        if (emu_type_kind(in->ty) == EMU_K_F) return emu_exec_float(b, t, in);
        return emu_exec_int(b, t, in);
    case EMU_OP_SET:
        if (emu_type_kind(in->ty2) == EMU_K_F) return emu_exec_float(b, t, in);
        return emu_exec_int(b, t, in);
    case EMU_OP_CALL:
        return emu_fault(b, t, in, "unsupported instruction: call", "calls to .func are not supported by the emulator yet");
    case EMU_OP_TRAP:
        return emu_fault(b, t, in, "trap", "the kernel executed trap");
    default:
        return emu_exec_int(b, t, in);
    }
}

static inline bool cmp_s(unsigned c, int64_t a, int64_t b) {
    switch (c) {
    case EMU_CMP_EQ: return a == b;
    case EMU_CMP_NE: return a != b;
    case EMU_CMP_LT: case EMU_CMP_LO: return a < b;
    case EMU_CMP_LE: case EMU_CMP_LS: return a <= b;
    case EMU_CMP_GT: case EMU_CMP_HI: return a > b;
    case EMU_CMP_GE: case EMU_CMP_HS: return a >= b;
    }
    return false;
}
static inline bool cmp_u(unsigned c, uint64_t a, uint64_t b) {
    switch (c) {
    case EMU_CMP_EQ: return a == b;
    case EMU_CMP_NE: return a != b;
    case EMU_CMP_LT: case EMU_CMP_LO: return a < b;
    case EMU_CMP_LE: case EMU_CMP_LS: return a <= b;
    case EMU_CMP_GT: case EMU_CMP_HI: return a > b;
    case EMU_CMP_GE: case EMU_CMP_HS: return a >= b;
    }
    return false;
}

static inline uint64_t canon32(float f) { return f != f ? 0x7FFFFFFFu : emu_bits32(f); }

/* Runs t until it blocks, exits or faults.  Returns false on a fault. */
static bool run_thread(EmuBlock *b, EmuThread *t) {
    const EmuFunc *f = b->L->f;
    const EmuIns *code = f->code;
    uint64_t *r = t->r;
    uint32_t pc = t->pc;
    uint64_t n = 0;
    const uint64_t maxi = b->L->opt->max_instructions;
    bool ok = true;
    for (;;) {
        const EmuIns *in = &code[pc];
        n++;
        if (!((uint32_t)r[in->guard] ^ in->gneg)) { pc++; continue; }
        switch (in->fast) {
        case FAST_MOV32: r[in->o[0]] = (uint32_t)r[in->o[1]]; pc++; continue;
        case FAST_MOV64: r[in->o[0]] = r[in->o[1]]; pc++; continue;
        case FAST_ADD32: r[in->o[0]] = (uint32_t)(r[in->o[1]] + r[in->o[2]]); pc++; continue;
        case FAST_ADD64: r[in->o[0]] = r[in->o[1]] + r[in->o[2]]; pc++; continue;
        case FAST_SUB32: r[in->o[0]] = (uint32_t)(r[in->o[1]] - r[in->o[2]]); pc++; continue;
        case FAST_SUB64: r[in->o[0]] = r[in->o[1]] - r[in->o[2]]; pc++; continue;
        case FAST_MULLO32: r[in->o[0]] = (uint32_t)((uint32_t)r[in->o[1]] * (uint32_t)r[in->o[2]]); pc++; continue;
        case FAST_MULLO64: r[in->o[0]] = r[in->o[1]] * r[in->o[2]]; pc++; continue;
        case FAST_MADLO32:
            r[in->o[0]] = (uint32_t)((uint32_t)r[in->o[1]] * (uint32_t)r[in->o[2]] + (uint32_t)r[in->o[3]]);
            pc++;
            continue;
        case FAST_MADLO64: r[in->o[0]] = r[in->o[1]] * r[in->o[2]] + r[in->o[3]]; pc++; continue;
        case FAST_MULWIDE_S32:
            r[in->o[0]] = (uint64_t)((int64_t)(int32_t)r[in->o[1]] * (int64_t)(int32_t)r[in->o[2]]);
            pc++;
            continue;
        case FAST_MULWIDE_U32: r[in->o[0]] = (uint64_t)(uint32_t)r[in->o[1]] * (uint32_t)r[in->o[2]]; pc++; continue;
        case FAST_SHL32: {
            uint32_t s = (uint32_t)r[in->o[2]];
            r[in->o[0]] = s > 31 ? 0 : (uint32_t)((uint32_t)r[in->o[1]] << s);
            pc++;
            continue;
        }
        case FAST_SHL64: {
            uint32_t s = (uint32_t)r[in->o[2]];
            r[in->o[0]] = s > 63 ? 0 : r[in->o[1]] << s;
            pc++;
            continue;
        }
        case FAST_SHRU32: {
            uint32_t s = (uint32_t)r[in->o[2]];
            r[in->o[0]] = s > 31 ? 0 : (uint32_t)r[in->o[1]] >> s;
            pc++;
            continue;
        }
        case FAST_SHRS32: {
            uint32_t s = (uint32_t)r[in->o[2]];
            r[in->o[0]] = (uint32_t)((int32_t)r[in->o[1]] >> (s > 31 ? 31 : s));
            pc++;
            continue;
        }
        case FAST_SHRU64: {
            uint32_t s = (uint32_t)r[in->o[2]];
            r[in->o[0]] = s > 63 ? 0 : r[in->o[1]] >> s;
            pc++;
            continue;
        }
        case FAST_SHRS64: {
            uint32_t s = (uint32_t)r[in->o[2]];
            r[in->o[0]] = (uint64_t)((int64_t)r[in->o[1]] >> (s > 63 ? 63 : s));
            pc++;
            continue;
        }
        case FAST_AND32: r[in->o[0]] = (uint32_t)(r[in->o[1]] & r[in->o[2]]); pc++; continue;
        case FAST_OR32: r[in->o[0]] = (uint32_t)(r[in->o[1]] | r[in->o[2]]); pc++; continue;
        case FAST_XOR32: r[in->o[0]] = (uint32_t)(r[in->o[1]] ^ r[in->o[2]]); pc++; continue;
        case FAST_AND64: r[in->o[0]] = r[in->o[1]] & r[in->o[2]]; pc++; continue;
        case FAST_OR64: r[in->o[0]] = r[in->o[1]] | r[in->o[2]]; pc++; continue;
        case FAST_XOR64: r[in->o[0]] = r[in->o[1]] ^ r[in->o[2]]; pc++; continue;
        case FAST_SETP_S32: r[in->o[0]] = cmp_s(in->cmp, (int32_t)r[in->o[1]], (int32_t)r[in->o[2]]); pc++; continue;
        case FAST_SETP_U32: r[in->o[0]] = cmp_u(in->cmp, (uint32_t)r[in->o[1]], (uint32_t)r[in->o[2]]); pc++; continue;
        case FAST_SETP_S64: r[in->o[0]] = cmp_s(in->cmp, (int64_t)r[in->o[1]], (int64_t)r[in->o[2]]); pc++; continue;
        case FAST_SETP_U64: r[in->o[0]] = cmp_u(in->cmp, r[in->o[1]], r[in->o[2]]); pc++; continue;
        case FAST_SELP: r[in->o[0]] = (r[in->o[3]] & 1) ? r[in->o[1]] : r[in->o[2]]; pc++; continue;
        case FAST_MIN_S32: {
            int32_t x = (int32_t)r[in->o[1]], y = (int32_t)r[in->o[2]];
            r[in->o[0]] = (uint32_t)(x < y ? x : y);
            pc++;
            continue;
        }
        case FAST_MAX_S32: {
            int32_t x = (int32_t)r[in->o[1]], y = (int32_t)r[in->o[2]];
            r[in->o[0]] = (uint32_t)(x > y ? x : y);
            pc++;
            continue;
        }
        case FAST_FADD: r[in->o[0]] = canon32(emu_f32(r[in->o[1]]) + emu_f32(r[in->o[2]])); pc++; continue;
        case FAST_FSUB: r[in->o[0]] = canon32(emu_f32(r[in->o[1]]) - emu_f32(r[in->o[2]])); pc++; continue;
        case FAST_FMUL: r[in->o[0]] = canon32(emu_f32(r[in->o[1]]) * emu_f32(r[in->o[2]])); pc++; continue;
        case FAST_FFMA:
            r[in->o[0]] = canon32(fmaf(emu_f32(r[in->o[1]]), emu_f32(r[in->o[2]]), emu_f32(r[in->o[3]])));
            pc++;
            continue;
        case FAST_LDG32: {
            const uint8_t *p = emu_global(b, t, in, r[in->o[1]] + (uint64_t)in->off[0], 4, false);
            if (!p) { ok = false; goto out; }
            uint32_t v;
            memcpy(&v, p, 4);
            r[in->o[0]] = v;
            pc++;
            continue;
        }
        case FAST_LDG64: {
            const uint8_t *p = emu_global(b, t, in, r[in->o[1]] + (uint64_t)in->off[0], 8, false);
            if (!p) { ok = false; goto out; }
            memcpy(&r[in->o[0]], p, 8);
            pc++;
            continue;
        }
        case FAST_LDG128: {
            const uint8_t *p = emu_global(b, t, in, r[in->o[1]] + (uint64_t)in->off[0], 16, false);
            if (!p) { ok = false; goto out; }
            uint32_t v[4];
            memcpy(v, p, 16);
            const uint32_t *d = &f->vec[in->o[0]];
            r[d[0]] = v[0]; r[d[1]] = v[1]; r[d[2]] = v[2]; r[d[3]] = v[3];
            pc++;
            continue;
        }
        case FAST_STG32: {
            uint8_t *p = emu_global(b, t, in, r[in->o[0]] + (uint64_t)in->off[0], 4, true);
            if (!p) { ok = false; goto out; }
            uint32_t v = (uint32_t)r[in->o[1]];
            memcpy(p, &v, 4);
            pc++;
            continue;
        }
        case FAST_STG64: {
            uint8_t *p = emu_global(b, t, in, r[in->o[0]] + (uint64_t)in->off[0], 8, true);
            if (!p) { ok = false; goto out; }
            memcpy(p, &r[in->o[1]], 8);
            pc++;
            continue;
        }
        case FAST_STG128: {
            uint8_t *p = emu_global(b, t, in, r[in->o[0]] + (uint64_t)in->off[0], 16, true);
            if (!p) { ok = false; goto out; }
            const uint32_t *s = &f->vec[in->o[1]];
            uint32_t v[4] = {(uint32_t)r[s[0]], (uint32_t)r[s[1]], (uint32_t)r[s[2]], (uint32_t)r[s[3]]};
            memcpy(p, v, 16);
            pc++;
            continue;
        }
        case FAST_LDS32: {
            uint64_t a = (r[in->o[1]] + (uint64_t)in->off[0]) & 0xFFFFFFFFu;
            const uint8_t *p;
            if (!b->shadow && a + 4 <= b->shared_size && !(a & 3)) p = b->shared + a;
            else if (!(p = emu_access(b, t, in, EMU_SP_SHARED, a, 4, 4, false))) { ok = false; goto out; }
            uint32_t v;
            memcpy(&v, p, 4);
            r[in->o[0]] = v;
            pc++;
            continue;
        }
        case FAST_STS32: {
            uint64_t a = (r[in->o[0]] + (uint64_t)in->off[0]) & 0xFFFFFFFFu;
            uint8_t *p;
            if (!b->shadow && a + 4 <= b->shared_size && !(a & 3)) p = b->shared + a;
            else if (!(p = emu_access(b, t, in, EMU_SP_SHARED, a, 4, 4, true))) { ok = false; goto out; }
            uint32_t v = (uint32_t)r[in->o[1]];
            memcpy(p, &v, 4);
            pc++;
            continue;
        }
        case FAST_CVTA_ID: r[in->o[0]] = r[in->o[1]]; pc++; continue;
        default: break;
        }
        /* control flow and blocking instructions */
        switch (in->op) {
        case EMU_OP_BRA:
            if (in->target <= pc && maxi && t->icount + n > maxi) {
                t->pc = pc;
                ok = emu_fault(b, t, in, "watchdog: instruction limit reached",
                               "the thread executed more than %" PRIu64 " instructions (EmuOptions.max_instructions)", maxi);
                goto out;
            }
            pc = in->target;
            continue;
        case EMU_OP_RET: case EMU_OP_EXIT:
            t->state = EMU_TS_DONE;
            goto out;
        case EMU_OP_BAR: case EMU_OP_BARRIER:
            if (in->flags & (EMU_F(ARRIVE) | EMU_F(REDOP))) {
                ok = emu_fault(b, t, in, "unsupported instruction", "bar.arrive and bar.red are not supported by the emulator");
                goto out;
            }
            t->state = EMU_TS_BAR;
            t->bar_id = in->nops >= 1 ? (uint8_t)r[in->o[0]] : 0;
            t->bar_count = in->nops >= 2 ? (uint32_t)r[in->o[1]] : 0;
            goto out;
        case EMU_OP_SHFL: case EMU_OP_VOTE: case EMU_OP_BAR_WARP: case EMU_OP_LDMATRIX: case EMU_OP_MMA:
            t->state = EMU_TS_WARP;
            goto out;
        default:
            t->pc = pc;
            if (!exec_generic(b, t, in)) { ok = false; goto out; }
            pc++;
            continue;
        }
    }
out:
    t->pc = pc;
    t->icount += n;
    b->icount += n;
    return ok;
}

/* ---- block scheduling ---- */
static void init_threads(EmuBlock *b) {
    EmuLaunch *L = b->L;
    const EmuFunc *f = L->f;
    uint32_t nwarps = (b->nthreads + 31) / 32;
    for (uint32_t i = 0; i < b->nthreads; i++) {
        EmuThread *t = &b->t[i];
        memset(t, 0, sizeof *t);
        t->r = b->regs + (size_t)i * f->nslots;
        memcpy(t->r, f->slot_init, f->nslots * sizeof(uint64_t));
        t->linear = i;
        t->lane = (uint16_t)(i & 31);
        t->tid[0] = i % L->block[0];
        t->tid[1] = (i / L->block[0]) % L->block[1];
        t->tid[2] = i / (L->block[0] * L->block[1]);
        t->local = b->local + (size_t)i * b->local_size;
        uint64_t *s = t->r + EMU_SLOT_SREG;
        for (int k = 0; k < 3; k++) {
            s[EMU_SREG_TID_X + k] = t->tid[k];
            s[EMU_SREG_NTID_X + k] = L->block[k];
            s[EMU_SREG_CTAID_X + k] = b->ctaid[k];
            s[EMU_SREG_NCTAID_X + k] = L->grid[k];
        }
        uint32_t lane = t->lane;
        s[EMU_SREG_LANEID] = lane;
        s[EMU_SREG_WARPID] = i / 32;
        s[EMU_SREG_NWARPID] = nwarps;
        s[EMU_SREG_NSMID] = 1;
        s[EMU_SREG_LANEMASK_EQ] = 1u << lane;
        s[EMU_SREG_LANEMASK_LT] = (1u << lane) - 1;
        s[EMU_SREG_LANEMASK_LE] = (uint32_t)((2ull << lane) - 1);
        s[EMU_SREG_LANEMASK_GT] = (uint32_t)(~((2ull << lane) - 1));
        s[EMU_SREG_LANEMASK_GE] = (uint32_t)(~((1u << lane) - 1));
        s[EMU_SREG_DYN_SMEM] = L->dyn_smem;
        s[EMU_SREG_TOTAL_SMEM] = L->shared_size;
        s[EMU_SREG_WARPSZ] = 32;
    }
}

/* Fires one complete warp-collective group of warp w, if any. */
static bool fire_warp(EmuBlock *b, uint32_t w, bool *fired) {
    *fired = false;
    const EmuFunc *f = b->L->f;
    uint32_t base = w * 32, n = b->nthreads - base < 32 ? b->nthreads - base : 32;
    for (uint32_t lead = 0; lead < n; lead++) {
        EmuThread *tl = &b->t[base + lead];
        if (tl->state != EMU_TS_WARP) continue;
        const EmuIns *il = &f->code[tl->pc];
        uint32_t mask = emu_warp_mask(tl, il);
        if (!(mask & (1u << lead)))
            return emu_fault(b, tl, il, "invalid warp-synchronous instruction",
                             "the executing lane %u is not in the member mask 0x%08x", lead, mask);
        EmuThread *group[32];
        unsigned ng = 0;
        bool ready = true;
        for (uint32_t i = 0; i < n && ready; i++) {
            if (!(mask & (1u << i))) continue;
            EmuThread *ti = &b->t[base + i];
            if (ti->state == EMU_TS_DONE) continue;
            if (ti->state != EMU_TS_WARP) { ready = false; break; }
            const EmuIns *ii = &f->code[ti->pc];
            if (ii->op != il->op) {
                char line[256];
            emu_module_line(b->L->m, ii->line, line, sizeof line);
                return emu_fault(b, tl, il, "divergent warp-synchronous instructions",
                                 "lane %u of the member mask waits at PTX line %u: %s", i, ii->line, line);
            }
            group[ng++] = ti;
        }
        if (!ready) continue;
        if (!emu_exec_warp(b, group, ng)) return false;
        *fired = true;
        return true;
    }
    return true;
}

static bool run_block(EmuBlock *b) {
    EmuLaunch *L = b->L;
    const EmuFunc *f = L->f;
    init_threads(b);
    memset(b->shared, 0, b->shared_size);
    if (b->shadow) memset(b->shadow, 0, (size_t)b->shared_size * sizeof *b->shadow);
    b->epoch = 1;
    uint32_t nwarps = (b->nthreads + 31) / 32;
    for (;;) {
        bool progress = false;
        for (uint32_t w = 0; w < nwarps; w++) {
            uint32_t end = (w + 1) * 32 < b->nthreads ? (w + 1) * 32 : b->nthreads;
            b->exited[w] = 0;
            for (uint32_t i = w * 32; i < end; i++)
                if (b->t[i].state == EMU_TS_DONE) b->exited[w] |= 1u << (i - w * 32);
            for (;;) {
                for (uint32_t i = w * 32; i < end; i++) {
                    EmuThread *t = &b->t[i];
                    if (t->state != EMU_TS_RUN) continue;
                    progress = true;
                    if (!run_thread(b, t)) return false;
                }
                bool fired;
                if (!fire_warp(b, w, &fired)) return false;
                if (!fired) break;
                progress = true;
            }
            if (atomic_load_explicit(&L->stop, memory_order_relaxed)) return false;
        }
        /* barriers */
        uint32_t live = 0, waiting[16] = {0}, need[16] = {0};
        for (uint32_t i = 0; i < b->nthreads; i++) {
            EmuThread *t = &b->t[i];
            if (t->state == EMU_TS_DONE) continue;
            live++;
            if (t->state == EMU_TS_BAR) {
                waiting[t->bar_id & 15]++;
                if (t->bar_count) need[t->bar_id & 15] = t->bar_count;
            }
        }
        if (live == 0) return true;
        for (unsigned id = 0; id < 16; id++) {
            if (!waiting[id]) continue;
            uint32_t req = need[id] ? need[id] : live;
            if (waiting[id] < req) continue;
            for (uint32_t i = 0; i < b->nthreads; i++) {
                EmuThread *t = &b->t[i];
                if (t->state == EMU_TS_BAR && (t->bar_id & 15) == id) { t->state = EMU_TS_RUN; t->pc++; }
            }
            b->epoch++;
            progress = true;
        }
        if (!progress) {
            const EmuThread *tb = NULL, *tw = NULL;
            for (uint32_t i = 0; i < b->nthreads; i++) {
                if (!tb && b->t[i].state == EMU_TS_BAR) tb = &b->t[i];
                if (!tw && b->t[i].state == EMU_TS_WARP) tw = &b->t[i];
            }
            const EmuThread *t0 = tb ? tb : tw;
            const EmuThread *t1 = tb && tw ? tw : NULL;
            if (!t1) {
                return emu_fault(b, t0, &f->code[t0->pc], "deadlock",
                                 "%u live threads, none can proceed (barrier thread count %u never reached?)", live,
                                 t0->bar_count);
            }
            char line[256];
            emu_module_line(L->m, f->code[t1->pc].line, line, sizeof line);
            return emu_fault(b, t0, &f->code[t0->pc], "deadlock: barrier and warp-synchronous instruction wait on each other",
                             "while thread (%u,%u,%u) waits at PTX line %u: %s", t1->tid[0], t1->tid[1], t1->tid[2],
                             f->code[t1->pc].line, line);
        }
    }
}

static void *worker(void *arg) {
    EmuLaunch *L = arg;
    EmuBlock b;
    memset(&b, 0, sizeof b);
    b.L = L;
    b.nthreads = L->block[0] * L->block[1] * L->block[2];
    b.t = calloc(b.nthreads, sizeof *b.t);
    b.exited = calloc((b.nthreads + 31) / 32, sizeof *b.exited);
    b.regs = calloc((size_t)b.nthreads * L->f->nslots, sizeof(uint64_t));
    b.shared_size = L->shared_size;
    b.shared = calloc(b.shared_size ? b.shared_size : 1, 1);
    b.local_size = (L->f->local_size + 15) & ~15u;
    b.local = calloc((size_t)b.nthreads * b.local_size + 1, 1);
    if (L->opt->racecheck) b.shadow = calloc((size_t)b.shared_size + 1, sizeof *b.shadow);
    if (!b.t || !b.exited || !b.regs || !b.shared || !b.local || (L->opt->racecheck && !b.shadow)) {
        emu_fault(&b, NULL, NULL, "out of host memory", "for the block's registers, shared or local memory");
    } else {
        for (;;) {
            if (atomic_load(&L->stop)) break;
            uint64_t idx = atomic_fetch_add(&L->next_block, 1);
            if (idx >= L->nblocks) break;
            b.ctaid[0] = (uint32_t)(idx % L->grid[0]);
            b.ctaid[1] = (uint32_t)((idx / L->grid[0]) % L->grid[1]);
            b.ctaid[2] = (uint32_t)(idx / ((uint64_t)L->grid[0] * L->grid[1]));
            if (!run_block(&b)) break;
        }
    }
    atomic_fetch_add(&L->instructions, b.icount);
    free(b.t);
    free(b.exited);
    free(b.regs);
    free(b.shared);
    free(b.local);
    free(b.shadow);
    return NULL;
}

static bool launch_error(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool launch_error(char **err, const char *fmt, ...) {
    Str s = {0};
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(&s, fmt, ap);
    va_end(ap);
    *err = str_take(&s);
    return false;
}

bool emu_launch(EmuModule *m, EmuFunc *f, const unsigned grid[3], const unsigned block[3], unsigned dyn_smem,
                void **params, const EmuOptions *opt, EmuLaunchStats *stats, char **err) {
    *err = NULL;
    if (stats) stats->instructions = 0;
    if (!f->is_entry) return launch_error(err, "'%s' is a .func, not a kernel entry", f->name);
    for (int k = 0; k < 3; k++)
        if (grid[k] == 0 || block[k] == 0)
            return launch_error(err, "launch of '%s': grid (%u,%u,%u) and block (%u,%u,%u) must be non-zero", f->name,
                                grid[0], grid[1], grid[2], block[0], block[1], block[2]);
    uint64_t nthreads = (uint64_t)block[0] * block[1] * block[2];
    if (nthreads > 1024 || block[2] > 64)
        return launch_error(err, "launch of '%s': block (%u,%u,%u) exceeds 1024 threads or z > 64", f->name, block[0],
                            block[1], block[2]);
    if (f->reqntid[0] && (f->reqntid[0] != block[0] || f->reqntid[1] != block[1] || f->reqntid[2] != block[2]))
        return launch_error(err, "launch of '%s': block (%u,%u,%u) differs from .reqntid %u, %u, %u", f->name, block[0],
                            block[1], block[2], f->reqntid[0], f->reqntid[1], f->reqntid[2]);
    if (f->maxntid[0] && nthreads > (uint64_t)f->maxntid[0] * f->maxntid[1] * f->maxntid[2])
        return launch_error(err, "launch of '%s': %" PRIu64 " threads exceed .maxntid %u, %u, %u", f->name, nthreads,
                            f->maxntid[0], f->maxntid[1], f->maxntid[2]);
    uint64_t shared = dyn_smem ? (uint64_t)m->shared_dyn_offset + dyn_smem : m->shared_static;
    if (shared > (uint64_t)target_max_smem_dynamic())
        return launch_error(err, "launch of '%s': %" PRIu64 " bytes of shared memory exceed %d", f->name, shared, target_max_smem_dynamic());
    if (f->nparams && !params) return launch_error(err, "launch of '%s': %u parameters expected, params is NULL", f->name, f->nparams);
    EmuLaunch L;
    memset(&L, 0, sizeof L);
    L.m = m;
    L.f = f;
    memcpy(L.grid, grid, sizeof L.grid);
    memcpy(L.block, block, sizeof L.block);
    L.dyn_smem = dyn_smem;
    L.opt = opt;
    L.mem = m->mem;
    L.shared_size = (uint32_t)shared;
    L.nblocks = (uint64_t)grid[0] * grid[1] * grid[2];
    L.param_size = f->param_size;
    L.params = calloc(f->param_size + 8, 1);
    if (!L.params) return launch_error(err, "out of host memory");
    for (uint32_t i = 0; i < f->nparams; i++) {
        if (!params[i]) {
            free(L.params);
            return launch_error(err, "launch of '%s': params[%u] (%s) is NULL", f->name, i, f->params[i].name);
        }
        memcpy(L.params + f->params[i].offset, params[i], f->params[i].size);
    }
    pthread_mutex_init(&L.lock, NULL);
    unsigned nw = opt->host_threads;
    if (!nw) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        nw = c > 0 ? (unsigned)c : 1;
    }
    if (nw > L.nblocks) nw = (unsigned)L.nblocks;
    if (nw > 256) nw = 256;
    pthread_t th[256];
    unsigned started = 0;
    for (unsigned i = 1; i < nw; i++) {
        if (pthread_create(&th[started], NULL, worker, &L) != 0) break;
        started++;
    }
    worker(&L);
    for (unsigned i = 0; i < started; i++) pthread_join(th[i], NULL);
    pthread_mutex_destroy(&L.lock);
    free(L.params);
    if (stats) stats->instructions = atomic_load(&L.instructions);
    if (L.err) {
        *err = L.err;
        return false;
    }
    return true;
}

/* exec_int.c - integer, bit and predicate instructions, mov, setp/set/selp
 * on integer types: the complete generic semantics for every width (the
 * fast forms in exec.c duplicate the common 32/64-bit cases).
 *
 * Values are read truncated to the instruction width (zero- or
 * sign-extended by type) and written zero-extended.  Predicate sources may
 * be negated (`!%p`, EmuIns.on[i] set on a register operand). */
#include "emu/exec.h"

#include <limits.h>
#include <math.h>
#include <time.h>

static inline uint64_t src(const EmuThread *t, const EmuIns *in, unsigned i) {
    uint64_t v = EMU_R(t, in, i);
    return in->ok[i] == EMU_OK_REG && in->on[i] ? !(v & 1) : v;
}

/* The unsigned comparisons (lo ls hi hs) compare unsigned whatever the type says. */
static inline bool cmp_int(unsigned c, bool is_signed, uint64_t a, uint64_t b, unsigned sz) {
    bool unsigned_op = c == EMU_CMP_LO || c == EMU_CMP_LS || c == EMU_CMP_HI || c == EMU_CMP_HS;
    if (is_signed && !unsigned_op) return emu_cmp_s(c, emu_sext(a, sz), emu_sext(b, sz));
    return emu_cmp_u(c, emu_zext(a, sz), emu_zext(b, sz));
}

/* Combine a comparison with the bool source c (setp/set .and/.or/.xor). */
bool emu_boolop(unsigned op, bool a, bool c) {
    switch (op) {
    case EMU_MODE_AOR: return a || c;
    case EMU_MODE_AXOR: return a != c;
    default: return a && c;
    }
}

/* mov.b128: a register is two slots, the low 64 bits first (parse.c checked the operands); {..} packs or unpacks
 * 2 or 4 narrower registers, the lowest first. */
static bool exec_mov128(EmuThread *t, const EmuIns *in, const EmuFunc *f) {
    uint64_t v[2] = {0, 0};
    if (in->ok[1] == EMU_OK_VEC) {
        unsigned n = in->on[1], es = 16 / n;
        for (unsigned k = 0; k < n; k++) v[k * es / 8] |= emu_zext(t->r[f->vec[in->o[1] + k]], es) << (k * es % 8 * 8);
    } else {
        v[0] = t->r[in->o[1]];
        v[1] = t->r[in->o[1] + 1];
    }
    if (in->ok[0] == EMU_OK_VEC) {
        unsigned n = in->on[0], es = 16 / n;
        for (unsigned k = 0; k < n; k++) t->r[f->vec[in->o[0] + k]] = emu_zext(v[k * es / 8] >> (k * es % 8 * 8), es);
    } else {
        t->r[in->o[0]] = v[0];
        t->r[in->o[0] + 1] = v[1];
    }
    return true;
}

/* %clock, %clock_hi and %clock64 read when a mov reads them: the host's monotonic clock in nanoseconds (a 1 GHz
 * counter), so a loop that waits for some cycles to pass ends (it read 0, and spun forever); %globaltimer
 * (and its halves) the host's real-time clock in nanoseconds, so a wait on it ends too (it stood at the
 * launch's start). */
static void refresh_clock(EmuThread *t, const EmuIns *in) {
    uint32_t s = in->o[1];
    if (in->ok[1] != EMU_OK_REG || !emu_sreg_is_clock(s)) return;
    struct timespec ts;
    bool global = s - EMU_SLOT_SREG >= EMU_SREG_GLOBALTIMER && s - EMU_SLOT_SREG <= EMU_SREG_GLOBALTIMER_HI;
    clock_gettime(global ? CLOCK_REALTIME : CLOCK_MONOTONIC, &ts);
    uint64_t ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    uint64_t *r = &t->r[EMU_SLOT_SREG];
    if (global) r[EMU_SREG_GLOBALTIMER] = ns, r[EMU_SREG_GLOBALTIMER_LO] = (uint32_t)ns, r[EMU_SREG_GLOBALTIMER_HI] = ns >> 32;
    else r[EMU_SREG_CLOCK64] = ns, r[EMU_SREG_CLOCK] = (uint32_t)ns, r[EMU_SREG_CLOCK_HI] = ns >> 32;
}

static bool exec_mov(EmuThread *t, const EmuIns *in, const EmuFunc *f) {
    unsigned sz = emu_type_size(in->ty);
    refresh_clock(t, in);
    if (in->ty == EMU_T_PRED) { EMU_R(t, in, 0) = src(t, in, 1) & 1; return true; }
    if (in->ty == EMU_T_B128) return exec_mov128(t, in, f);
    if (in->ok[0] == EMU_OK_VEC) { /* unpack */
        unsigned n = in->on[0], es = sz / n;
        uint64_t v = EMU_R(t, in, 1);
        for (unsigned k = 0; k < n; k++) t->r[f->vec[in->o[0] + k]] = emu_zext(v >> (k * es * 8), es);
        return true;
    }
    if (in->ok[1] == EMU_OK_VEC) { /* pack */
        unsigned n = in->on[1], es = sz / n;
        uint64_t v = 0;
        for (unsigned k = 0; k < n; k++) v |= emu_zext(t->r[f->vec[in->o[1] + k]], es) << (k * es * 8);
        EMU_R(t, in, 0) = v;
        return true;
    }
    EMU_R(t, in, 0) = emu_zext(EMU_R(t, in, 1), sz);
    return true;
}

static uint64_t bfe(uint64_t a, unsigned pos, unsigned len, unsigned width, bool is_signed) {
    unsigned msb = width - 1;
    if (!is_signed) {
        if (len == 0 || pos > msb) return 0;
        uint64_t v = a >> pos;
        if (len < 64) v &= (1ull << len) - 1;
        return emu_zext(v, width / 8);
    }
    unsigned sb = pos + len - 1 > msb ? msb : pos + len - 1;
    uint64_t sbit = len == 0 ? 0 : (a >> sb) & 1;
    uint64_t d = 0;
    for (unsigned i = 0; i < width; i++) {
        uint64_t bit = (i < len && pos + i <= msb) ? (a >> (pos + i)) & 1 : sbit;
        d |= bit << i;
    }
    return d;
}

/* Extended-precision arithmetic: add.cc, addc[.cc], sub.cc, subc[.cc],
 * mad{.lo,.hi}.cc, madc{.lo,.hi}[.cc] on 32/64-bit values (a, c zero-extended).
 * Subtraction is a + ~c + 1 as the hardware does it, so CC.CF after sub.cc is a carry, 1 when there
 * was NO borrow, and subc computes a + ~c + CF = a - c - (1 - CF).  A pure sub chain comes out the
 * same under either reading; nvcc's code reads the flag across them (128-bit division: sub.cc,
 * subc.cc, then addc.u32 r, 0, 0 is 1 when the difference is not negative). */
static bool exec_carry(EmuThread *t, const EmuIns *in, uint64_t *d, uint64_t a, uint64_t c, unsigned sz, bool cc) {
    unsigned __int128 mask = sz == 8 ? (unsigned __int128)UINT64_MAX : 0xFFFFFFFFu, r;
    unsigned __int128 cin = (in->op == EMU_OP_ADDC || in->op == EMU_OP_SUBC || in->op == EMU_OP_MADC) ? t->carry : 0;
    bool sub = in->op == EMU_OP_SUB || in->op == EMU_OP_SUBC;
    if (in->op == EMU_OP_SUB) cin = 1;
    if (in->op == EMU_OP_MAD || in->op == EMU_OP_MADC) {
        uint64_t e = emu_zext(src(t, in, 3), sz);
        unsigned __int128 p = (unsigned __int128)a * c;
        if (emu_type_kind(in->ty) == EMU_K_S) p = (unsigned __int128)((__int128)emu_sext(a, sz) * emu_sext(c, sz));
        unsigned __int128 part = (in->flags & EMU_F(HI)) ? (p >> (sz * 8)) & mask : p & mask;
        r = part + e + cin;
    } else if (sub) {
        r = (unsigned __int128)a + (~(unsigned __int128)c & mask) + cin; /* bit sz*8: the carry, no borrow */
    } else {
        r = (unsigned __int128)a + c + cin;
    }
    *d = (uint64_t)(r & mask);
    if (cc) t->carry = (r >> (sz * 8)) != 0;
    return true;
}

bool emu_exec_int(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    const EmuFunc *f = t->fn;
    unsigned sz = emu_type_size(in->ty), bits = sz * 8;
    bool sg = emu_type_kind(in->ty) == EMU_K_S;
    bool pred = in->ty == EMU_T_PRED;
    if (in->op == EMU_OP_MOV) return exec_mov(t, in, f); /* its operands may be vectors {..} */
    uint64_t a = in->nops > 1 && in->ok[1] == EMU_OK_REG ? src(t, in, 1) : 0;
    uint64_t c = in->nops > 2 && in->ok[2] == EMU_OK_REG ? src(t, in, 2) : 0;
    uint64_t *d = &EMU_R(t, in, 0);
    uint64_t ua = emu_zext(a, sz), uc = emu_zext(c, sz);
    int64_t sa = emu_sext(a, sz), sc = emu_sext(c, sz);
    bool cc = in->flags & EMU_F(CC);
    if (in->ty == EMU_T_U16X2 || in->ty == EMU_T_S16X2) { /* add min max, per 16-bit lane (the loader refuses the rest) */
        bool s16 = in->ty == EMU_T_S16X2;
        uint32_t r = 0;
        for (unsigned h = 0; h < 2; h++) {
            int64_t x = s16 ? (int16_t)(a >> 16 * h) : (int64_t)(uint16_t)(a >> 16 * h);
            int64_t y = s16 ? (int16_t)(c >> 16 * h) : (int64_t)(uint16_t)(c >> 16 * h);
            int64_t v;
            switch (in->op) {
            case EMU_OP_ADD: v = x + y; break;
            case EMU_OP_MIN: v = x < y ? x : y; break;
            case EMU_OP_MAX: v = x > y ? x : y; break;
            default:
                return emu_fault(b, t, in, "unsupported instruction", "%s on .%s (add, min and max take it)", emu_op_name(in->op),
                                 emu_type_name(in->ty));
            }
            if ((in->flags & EMU_F(RELU)) && v < 0) v = 0;
            r |= (uint32_t)(uint16_t)v << 16 * h;
        }
        *d = r;
        return true;
    }
    if (cc || in->op == EMU_OP_ADDC || in->op == EMU_OP_SUBC || in->op == EMU_OP_MADC) {
        if (sz != 4 && sz != 8)
            return emu_fault(b, t, in, "invalid instruction", "carry-chain arithmetic on .%s (it takes 32- and 64-bit integers)",
                             emu_type_name(in->ty));
        return exec_carry(t, in, d, ua, uc, sz, cc);
    }
    switch (in->op) {
    case EMU_OP_ADD: case EMU_OP_SUB: {
        if ((in->flags & EMU_F(SAT)) && in->ty == EMU_T_S32) {
            int64_t v = in->op == EMU_OP_ADD ? sa + sc : sa - sc;
            if (v > INT32_MAX) v = INT32_MAX;
            if (v < INT32_MIN) v = INT32_MIN;
            *d = (uint32_t)v;
            return true;
        }
        *d = emu_zext(in->op == EMU_OP_ADD ? a + c : a - c, sz);
        return true;
    }
    case EMU_OP_MUL: case EMU_OP_MAD: {
        uint64_t e = in->op == EMU_OP_MAD ? src(t, in, 3) : 0;
        if (in->flags & EMU_F(WIDE)) {
            unsigned dsz = sz * 2;
            if (sz == 8) return emu_fault(b, t, in, "invalid instruction", ".wide on a 64-bit type");
            uint64_t p = sg ? (uint64_t)(sa * sc) : ua * uc; /* sz <= 4: the product fits */
            *d = emu_zext(p + e, dsz);
            return true;
        }
        if (in->flags & EMU_F(HI)) {
            uint64_t hi;
            if (sz == 8) {
                if (sg) hi = (uint64_t)(((__int128)sa * sc) >> 64);
                else hi = (uint64_t)(((unsigned __int128)ua * uc) >> 64);
            } else {
                hi = sg ? (uint64_t)((sa * sc) >> bits) : (ua * uc) >> bits;
            }
            if (in->op == EMU_OP_MAD && (in->flags & EMU_F(SAT)) && in->ty == EMU_T_S32) {
                int64_t v = (int64_t)(int32_t)hi + emu_sext(e, 4);
                *d = (uint32_t)(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v);
                return true;
            }
            *d = emu_zext(hi + e, sz);
            return true;
        }
        *d = emu_zext(a * c + e, sz);
        return true;
    }
    case EMU_OP_MUL24: case EMU_OP_MAD24: {
        int64_t x = sg ? emu_sext(a, 3) : (int64_t)(a & 0xFFFFFF), y = sg ? emu_sext(c, 3) : (int64_t)(c & 0xFFFFFF);
        int64_t p = x * y;
        uint64_t v = (in->flags & EMU_F(HI)) ? (uint64_t)(p >> 16) : (uint64_t)p;
        if (in->op == EMU_OP_MAD24 && (in->flags & EMU_F(SAT))) { /* mad24.hi.sat.s32: product[47:16] + c, saturated */
            int64_t s = (p >> 16) + emu_sext(src(t, in, 3), 4);
            *d = (uint32_t)(s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : s);
            return true;
        }
        if (in->op == EMU_OP_MAD24) v += src(t, in, 3);
        *d = emu_zext(v, 4);
        return true;
    }
    case EMU_OP_FNS: {
        uint32_t mask = (uint32_t)a, base = (uint32_t)c;
        int32_t off = (int32_t)src(t, in, 3);
        if (base > 31) return emu_fault(b, t, in, "invalid instruction", "fns with base %u (the ISA leaves base > 31 undefined)", base);
        uint32_t r = 0xFFFFFFFFu;
        if (off == 0) {
            if (mask >> base & 1) r = base;
        } else {
            int64_t count = (off > 0 ? (int64_t)off : -(int64_t)off) - 1;
            for (int pos = (int)base; pos >= 0 && pos < 32; pos += off > 0 ? 1 : -1)
                if (mask >> pos & 1) {
                    if (count == 0) { r = (uint32_t)pos; break; }
                    count--;
                }
        }
        *d = r;
        return true;
    }
    case EMU_OP_BMSK: case EMU_OP_SZEXT: {
        bool clamp = in->flags & EMU_F(CLAMP);
        uint32_t x = (uint32_t)a, n = (uint32_t)c;
        n = clamp ? (n > 32 ? 32 : n) : n & 31;
        if (in->op == EMU_OP_SZEXT) {
            if (n == 0) *d = 0;
            else if (n == 32) *d = x;
            else *d = sg ? (uint32_t)((int32_t)(x << (32 - n)) >> (32 - n)) : x & ((1u << n) - 1);
            return true;
        }
        uint32_t pos = clamp ? (x > 32 ? 32 : x) : x & 31;
        *d = pos >= 32 ? 0 : pos + n >= 32 ? ~0u << pos : ((1u << n) - 1) << pos;
        return true;
    }
    case EMU_OP_LOP3: {
        uint32_t x = (uint32_t)a, y = (uint32_t)c, z = (uint32_t)src(t, in, 3), lut = (uint32_t)src(t, in, 4), r = 0;
        for (unsigned i = 0; i < 8; i++)
            if (lut >> i & 1) r |= (i & 4 ? x : ~x) & (i & 2 ? y : ~y) & (i & 1 ? z : ~z);
        if (in->boolop) t->r[in->o[6]] = emu_boolop(in->boolop, r != 0, src(t, in, 5) != 0); /* lop3.and/.or d|p, ..., q */
        *d = r;
        return true;
    }
    case EMU_OP_DP4A: case EMU_OP_DP2A: {
        bool as = in->ty == EMU_T_S32, bs = in->ty2 == EMU_T_S32, four = in->op == EMU_OP_DP4A;
        unsigned b0 = four ? 0 : (in->flags & EMU_F(HI)) ? 2 : 0;
        int64_t acc = 0;
        for (unsigned i = 0; i < (four ? 4u : 2u); i++) {
            uint32_t ra = four ? (uint32_t)(a >> (8 * i)) & 0xFF : (uint32_t)(a >> (16 * i)) & 0xFFFF;
            uint32_t rb = (uint32_t)(c >> (8 * (b0 + i))) & 0xFF;
            int64_t x = as ? (four ? (int64_t)(int8_t)ra : (int64_t)(int16_t)ra) : (int64_t)ra;
            int64_t y = bs ? (int64_t)(int8_t)rb : (int64_t)rb;
            acc += x * y;
        }
        *d = (uint32_t)((uint64_t)acc + src(t, in, 3));
        return true;
    }
    case EMU_OP_SAD: {
        uint64_t diff = sg ? (sa > sc ? (uint64_t)sa - (uint64_t)sc : (uint64_t)sc - (uint64_t)sa) /* |a - b| mod 2^64 */
                            : (ua > uc ? ua - uc : uc - ua);
        *d = emu_zext(diff + src(t, in, 3), sz);
        return true;
    }
    case EMU_OP_DIV: case EMU_OP_REM: {
        bool div = in->op == EMU_OP_DIV;
        if (sg) {
            int64_t minv = sz == 8 ? INT64_MIN : -(1ll << (bits - 1));
            int64_t v;
            if (sc == 0) v = div ? -1 : sa;
            else if (sa == minv && sc == -1) v = div ? minv : 0;
            else v = div ? sa / sc : sa % sc;
            *d = emu_zext((uint64_t)v, sz);
        } else {
            *d = uc == 0 ? (div ? emu_zext(~0ull, sz) : ua) : emu_zext(div ? ua / uc : ua % uc, sz);
        }
        return true;
    }
    case EMU_OP_ABS: *d = emu_zext((uint64_t)(sa < 0 ? -(uint64_t)sa : (uint64_t)sa), sz); return true;
    case EMU_OP_NEG: *d = emu_zext(-(uint64_t)sa, sz); return true;
    case EMU_OP_MIN: case EMU_OP_MAX: {
        bool mn = in->op == EMU_OP_MIN;
        uint64_t v = sg ? (uint64_t)(mn ? (sa < sc ? sa : sc) : (sa > sc ? sa : sc)) : (mn ? (ua < uc ? ua : uc) : (ua > uc ? ua : uc));
        if ((in->flags & EMU_F(RELU)) && sg && emu_sext(v, sz) < 0) v = 0;
        *d = emu_zext(v, sz);
        return true;
    }
    case EMU_OP_AND: *d = pred ? (a & c & 1) : emu_zext(a & c, sz); return true;
    case EMU_OP_OR: *d = pred ? ((a | c) & 1) : emu_zext(a | c, sz); return true;
    case EMU_OP_XOR: *d = pred ? ((a ^ c) & 1) : emu_zext(a ^ c, sz); return true;
    case EMU_OP_NOT: *d = pred ? !(a & 1) : emu_zext(~a, sz); return true;
    case EMU_OP_CNOT: *d = pred ? !(a & 1) : (ua == 0); return true;
    case EMU_OP_SHL: {
        uint32_t s = (uint32_t)c;
        *d = s >= bits ? 0 : emu_zext(a << s, sz);
        return true;
    }
    case EMU_OP_SHR: {
        uint32_t s = (uint32_t)c;
        if (sg) *d = emu_zext((uint64_t)(sa >> (s >= bits ? bits - 1 : s)), sz);
        else *d = s >= bits ? 0 : ua >> s;
        return true;
    }
    case EMU_OP_SHF: {
        uint64_t val = ((uint64_t)(uint32_t)c << 32) | (uint32_t)a;
        uint32_t n = (uint32_t)src(t, in, 3);
        n = (in->flags & EMU_F(WRAP)) ? n & 31 : (n > 32 ? 32 : n);
        *d = (in->flags & EMU_F(L)) ? (uint32_t)((val << n) >> 32) : (uint32_t)(val >> n);
        return true;
    }
    case EMU_OP_SETP: {
        bool r = cmp_int(in->cmp, sg, a, c, sz);
        bool bc = src(t, in, 3) & 1;
        *d = emu_boolop(in->boolop, r, bc);
        t->r[in->o[4]] = emu_boolop(in->boolop, !r, bc);
        return true;
    }
    case EMU_OP_SET: {
        unsigned ssz = emu_type_size(in->ty2);
        bool r = cmp_int(in->cmp, emu_type_kind(in->ty2) == EMU_K_S, a, c, ssz);
        if (in->nops > 3) r = emu_boolop(in->boolop, r, src(t, in, 3) & 1);
        *d = in->ty == EMU_T_F32 ? (r ? 0x3F800000u : 0) : (r ? emu_zext(~0ull, sz) : 0);
        return true;
    }
    case EMU_OP_SELP: *d = (src(t, in, 3) & 1) ? a : c; return true;
    case EMU_OP_SLCT: {
        /* f32 c: c >= 0 selects a, ordered (a NaN selects b); .ftz reads a subnormal c as a zero of its sign,
         * which is >= 0 */
        uint64_t s = src(t, in, 3);
        float cf = emu_f32(s);
        if ((in->flags & EMU_F(FTZ)) && fpclassify(cf) == FP_SUBNORMAL) cf = 0.0f;
        bool ge = in->ty2 == EMU_T_F32 ? cf >= 0.0f : (int32_t)s >= 0;
        *d = ge ? a : c;
        return true;
    }
    case EMU_OP_POPC: *d = (uint64_t)__builtin_popcountll(ua); return true;
    case EMU_OP_CLZ: *d = ua ? (uint64_t)(__builtin_clzll(ua) - (64 - (int)bits)) : bits; return true;
    case EMU_OP_BREV: {
        uint64_t v = 0;
        for (unsigned i = 0; i < bits; i++) v |= ((ua >> i) & 1) << (bits - 1 - i);
        *d = v;
        return true;
    }
    case EMU_OP_BFIND: {
        uint64_t v = sg && sa < 0 ? emu_zext(~ua, sz) : ua;
        if (!v) { *d = 0xFFFFFFFFu; return true; }
        uint32_t pos = 63 - (uint32_t)__builtin_clzll(v);
        *d = (in->flags & EMU_F(SHIFTAMT)) ? bits - 1 - pos : pos;
        return true;
    }
    case EMU_OP_BFE:
        *d = bfe(ua, (uint32_t)c & 0xFF, (uint32_t)src(t, in, 3) & 0xFF, bits, sg);
        return true;
    case EMU_OP_BFI: {
        /* bfi d, a, b, c, e: insert e bits of a into b at c */
        uint64_t base = emu_zext(c, sz);
        uint32_t pos = (uint32_t)src(t, in, 3) & 0xFF, len = (uint32_t)src(t, in, 4) & 0xFF;
        if (len == 0 || pos >= bits) { *d = base; return true; }
        uint64_t mask = (len >= 64 ? ~0ull : (1ull << len) - 1) << pos;
        *d = emu_zext((base & ~mask) | ((ua << pos) & mask), sz);
        return true;
    }
    case EMU_OP_PRMT: {
        uint64_t tmp = ((uint64_t)(uint32_t)c << 32) | (uint32_t)a;
        uint32_t sel = (uint32_t)src(t, in, 3), v = 0;
        if (in->mode) { /* the modes: c[1:0] picks one of four byte patterns (PTX ISA, prmt) */
            unsigned s = sel & 3;
            for (unsigned i = 0; i < 4; i++) {
                unsigned k;
                switch (in->mode) {
                case EMU_MODE_F4E: k = (s + i) & 7; break;
                case EMU_MODE_B4E: k = (s - i) & 7; break;
                case EMU_MODE_RC8: k = s; break;
                case EMU_MODE_ECL: k = i > s ? i : s; break;
                case EMU_MODE_ECR: k = i < s ? i : s; break;
                default: k = (s & 1) * 2 + (i & 1); break; /* rc16 */
                }
                v |= (uint32_t)((tmp >> (8 * k)) & 0xFF) << (8 * i);
            }
            *d = v;
            return true;
        }
        for (unsigned i = 0; i < 4; i++) {
            unsigned s = (sel >> (4 * i)) & 0xF;
            uint32_t byte = (uint32_t)(tmp >> ((s & 7) * 8)) & 0xFF;
            if (s & 8) byte = (byte & 0x80) ? 0xFF : 0;
            v |= byte << (8 * i);
        }
        *d = v;
        return true;
    }
    default:
        return emu_fault(b, t, in, "unsupported instruction",
                         "'%s' with type .%s is not supported by the emulator", emu_op_name(in->op), emu_type_name(in->ty));
    }
}

/* exec_loop.h - the interpreter loop, included twice by exec.c: as run_thread_plain (EMU_WGCHECK 0) and as
 * run_thread_wgcheck (EMU_WGCHECK 1), each out of line and cache-line aligned (the loop's speed depends on its
 * code layout, which then does not move with the code around it).  Each copy has its own handler table (GCC
 * inlines no function that keeps label addresses in a static table). */
/* Runs t until it blocks, exits or faults.  Returns false on a fault.  wgcheck: t has wgmma results in
 * flight, so every instruction's registers are checked against them. */
static __attribute__((noinline, aligned(64))) EMU_NO_CROSSJUMP bool EMU_RUN_THREAD(EmuBlock *b, EmuThread *t) {
    const bool wgcheck = EMU_WGCHECK;
    const EmuFunc *f = t->fn;
    const EmuIns *code = f->code;
    uint64_t *r = t->r;
    uint64_t n = 0, check = EMU_CHECK_EVERY;
    bool ok = true;
    /* accumulators of in-flight wgmmas may not be touched: every instruction is checked while there are any
     * (the set only changes at warpgroup collectives, which end this run) */
    /* threaded dispatch: every handler ends in its own indirect jump to the next instruction's handler (DISPATCH_IN),
     * which the host predicts per handler rather than through one shared jump (no-crossjumping keeps GCC from
     * merging them back into one).  The table is indexed by EmuIns.disp (emu_fast_dispatch): 1 + the fast form
     * for an unguarded instruction (nearly all: it reads no predicate), 0 for one with a guard, whose handler tests
     * it and then takes the fast form's (an instruction whose disp was never set is so still right).  The
     * instruction pointer alone steps (the index, PC(), is worked out where it is needed: backward branches,
     * faults, leaving the run). */
    static const void *const handler[] = {
        [0] = &&guarded,
        [1 + FAST_NONE] = &&slow,
#define X(e) [1 + FAST_##e] = &&L_##e,
        EMU_FASTS(X)
#undef X
    };
    const EmuIns *in = &code[t->pc];
#define PC() ((uint32_t)(in - code))
#define DISPATCH_IN()                                                                \
    do {                                                                             \
        n++;                                                                         \
        if (wgcheck && in->op != EMU_OP_WGMMA && emu_wgmma_may_touch(b, t, PC())) {  \
            t->pc = PC();                                                            \
            if (!(ok = emu_wgmma_check_access(b, t, in))) goto out;                  \
        }                                                                            \
        goto *handler[in->disp];                                                     \
    } while (0)
#define NEXT() do { in++; DISPATCH_IN(); } while (0)
    DISPATCH_IN();
guarded: /* an instruction with a guard: its fast form (or the switch below) when the guard holds */
    if (__builtin_expect(!((uint32_t)r[in->guard] ^ in->gneg), 0)) NEXT();
    goto *handler[1 + in->fast];
        L_MOV32: r[in->o[0]] = (uint32_t)r[in->o[1]]; NEXT();
        L_MOV64: r[in->o[0]] = r[in->o[1]]; NEXT();
        L_MOV16: r[in->o[0]] = (uint16_t)r[in->o[1]]; NEXT();
        L_ADD32: r[in->o[0]] = (uint32_t)(r[in->o[1]] + r[in->o[2]]); NEXT();
        L_ADD64: r[in->o[0]] = r[in->o[1]] + r[in->o[2]]; NEXT();
        L_SUB32: r[in->o[0]] = (uint32_t)(r[in->o[1]] - r[in->o[2]]); NEXT();
        L_SUB64: r[in->o[0]] = r[in->o[1]] - r[in->o[2]]; NEXT();
        L_MULLO32: r[in->o[0]] = (uint32_t)((uint32_t)r[in->o[1]] * (uint32_t)r[in->o[2]]); NEXT();
        L_MULLO64: r[in->o[0]] = r[in->o[1]] * r[in->o[2]]; NEXT();
        L_MADLO32: 
            r[in->o[0]] = (uint32_t)((uint32_t)r[in->o[1]] * (uint32_t)r[in->o[2]] + (uint32_t)r[in->o[3]]);
            NEXT();
        L_MADLO64: r[in->o[0]] = r[in->o[1]] * r[in->o[2]] + r[in->o[3]]; NEXT();
        L_MULWIDE_S32: 
            r[in->o[0]] = (uint64_t)((int64_t)(int32_t)r[in->o[1]] * (int64_t)(int32_t)r[in->o[2]]);
            NEXT();
        L_MULWIDE_U32: r[in->o[0]] = (uint64_t)(uint32_t)r[in->o[1]] * (uint32_t)r[in->o[2]]; NEXT();
        L_SHL32: {
            uint32_t s = (uint32_t)r[in->o[2]];
            r[in->o[0]] = s > 31 ? 0 : (uint32_t)((uint32_t)r[in->o[1]] << s);
            NEXT();
        }
        L_SHL64: {
            uint32_t s = (uint32_t)r[in->o[2]];
            r[in->o[0]] = s > 63 ? 0 : r[in->o[1]] << s;
            NEXT();
        }
        L_SHRU32: {
            uint32_t s = (uint32_t)r[in->o[2]];
            r[in->o[0]] = s > 31 ? 0 : (uint32_t)r[in->o[1]] >> s;
            NEXT();
        }
        L_SHRS32: {
            uint32_t s = (uint32_t)r[in->o[2]];
            r[in->o[0]] = (uint32_t)((int32_t)r[in->o[1]] >> (s > 31 ? 31 : s));
            NEXT();
        }
        L_SHRU64: {
            uint32_t s = (uint32_t)r[in->o[2]];
            r[in->o[0]] = s > 63 ? 0 : r[in->o[1]] >> s;
            NEXT();
        }
        L_SHRS64: {
            uint32_t s = (uint32_t)r[in->o[2]];
            r[in->o[0]] = (uint64_t)((int64_t)r[in->o[1]] >> (s > 63 ? 63 : s));
            NEXT();
        }
        L_AND32: r[in->o[0]] = (uint32_t)(r[in->o[1]] & r[in->o[2]]); NEXT();
        L_OR32: r[in->o[0]] = (uint32_t)(r[in->o[1]] | r[in->o[2]]); NEXT();
        L_XOR32: r[in->o[0]] = (uint32_t)(r[in->o[1]] ^ r[in->o[2]]); NEXT();
        L_AND64: r[in->o[0]] = r[in->o[1]] & r[in->o[2]]; NEXT();
        L_OR64: r[in->o[0]] = r[in->o[1]] | r[in->o[2]]; NEXT();
        L_XOR64: r[in->o[0]] = r[in->o[1]] ^ r[in->o[2]]; NEXT();
        L_PAND: r[in->o[0]] = r[in->o[1]] & r[in->o[2]] & 1; NEXT();
        L_POR: r[in->o[0]] = (r[in->o[1]] | r[in->o[2]]) & 1; NEXT();
        L_PXOR: r[in->o[0]] = (r[in->o[1]] ^ r[in->o[2]]) & 1; NEXT();
        L_SETP_S32: r[in->o[0]] = emu_cmp_s(in->cmp, (int32_t)r[in->o[1]], (int32_t)r[in->o[2]]); NEXT();
        L_SETP_U32: r[in->o[0]] = emu_cmp_u(in->cmp, (uint32_t)r[in->o[1]], (uint32_t)r[in->o[2]]); NEXT();
        L_SETP_S64: r[in->o[0]] = emu_cmp_s(in->cmp, (int64_t)r[in->o[1]], (int64_t)r[in->o[2]]); NEXT();
        L_SETP_U64: r[in->o[0]] = emu_cmp_u(in->cmp, r[in->o[1]], r[in->o[2]]); NEXT();
        L_FSETP: r[in->o[0]] = emu_cmp_f(in->cmp, emu_f32(r[in->o[1]]), emu_f32(r[in->o[2]])); NEXT();
        L_FNEG: r[in->o[0]] = (uint32_t)r[in->o[1]] ^ 0x80000000u; NEXT();
        L_FABS: r[in->o[0]] = (uint32_t)r[in->o[1]] & 0x7FFFFFFFu; NEXT();
        L_CVT_SX32: r[in->o[0]] = (uint64_t)(int64_t)(int32_t)r[in->o[1]]; NEXT();
        L_CVT_ZX32: r[in->o[0]] = (uint32_t)r[in->o[1]]; NEXT();
        L_MIN_S64: r[in->o[0]] = (int64_t)r[in->o[1]] < (int64_t)r[in->o[2]] ? r[in->o[1]] : r[in->o[2]]; NEXT();
        L_MAX_S64: r[in->o[0]] = (int64_t)r[in->o[1]] > (int64_t)r[in->o[2]] ? r[in->o[1]] : r[in->o[2]]; NEXT();
        L_MIN_U64: r[in->o[0]] = r[in->o[1]] < r[in->o[2]] ? r[in->o[1]] : r[in->o[2]]; NEXT();
        L_MAX_U64: r[in->o[0]] = r[in->o[1]] > r[in->o[2]] ? r[in->o[1]] : r[in->o[2]]; NEXT();
        L_SELP: r[in->o[0]] = (r[in->o[3]] & 1) ? r[in->o[1]] : r[in->o[2]]; NEXT();
        L_MIN_S32: {
            int32_t x = (int32_t)r[in->o[1]], y = (int32_t)r[in->o[2]];
            r[in->o[0]] = (uint32_t)(x < y ? x : y);
            NEXT();
        }
        L_MAX_S32: {
            int32_t x = (int32_t)r[in->o[1]], y = (int32_t)r[in->o[2]];
            r[in->o[0]] = (uint32_t)(x > y ? x : y);
            NEXT();
        }
        L_FADD: r[in->o[0]] = canon32(emu_f32(r[in->o[1]]) + emu_f32(r[in->o[2]])); NEXT();
        L_FSUB: r[in->o[0]] = canon32(emu_f32(r[in->o[1]]) - emu_f32(r[in->o[2]])); NEXT();
        L_FMUL: r[in->o[0]] = canon32(emu_f32(r[in->o[1]]) * emu_f32(r[in->o[2]])); NEXT();
        L_FFMA: 
            r[in->o[0]] = canon32(fmaf(emu_f32(r[in->o[1]]), emu_f32(r[in->o[2]]), emu_f32(r[in->o[3]])));
            NEXT();
        L_DADD: r[in->o[0]] = canon64(emu_f64(r[in->o[1]]) + emu_f64(r[in->o[2]])); NEXT();
        L_DSUB: r[in->o[0]] = canon64(emu_f64(r[in->o[1]]) - emu_f64(r[in->o[2]])); NEXT();
        L_DMUL: r[in->o[0]] = canon64(emu_f64(r[in->o[1]]) * emu_f64(r[in->o[2]])); NEXT();
        L_DFMA: 
            r[in->o[0]] = canon64(fma(emu_f64(r[in->o[1]]), emu_f64(r[in->o[2]]), emu_f64(r[in->o[3]])));
            NEXT();
        L_LDG32: {
            const uint8_t *p = emu_global(b, t, in, r[in->o[1]] + (uint64_t)in->off[0], 4, false);
            if (!p) { ok = false; goto out; }
            uint32_t v;
            memcpy(&v, p, 4);
            r[in->o[0]] = v;
            NEXT();
        }
        L_LDG64: {
            const uint8_t *p = emu_global(b, t, in, r[in->o[1]] + (uint64_t)in->off[0], 8, false);
            if (!p) { ok = false; goto out; }
            memcpy(&r[in->o[0]], p, 8);
            NEXT();
        }
        L_LDG128: {
            const uint8_t *p = emu_global(b, t, in, r[in->o[1]] + (uint64_t)in->off[0], 16, false);
            if (!p) { ok = false; goto out; }
            uint32_t v[4];
            memcpy(v, p, 16);
            const uint32_t *d = &f->vec[in->o[0]];
            r[d[0]] = v[0]; r[d[1]] = v[1]; r[d[2]] = v[2]; r[d[3]] = v[3];
            NEXT();
        }
        L_LDG_V2: { /* ld.global.v2 of 32-bit elements (a vector access: never a tail access) */
            const uint8_t *p = emu_global(b, t, in, r[in->o[1]] + (uint64_t)in->off[0], 8, false);
            if (!p) { ok = false; goto out; }
            uint32_t v[2];
            memcpy(v, p, 8);
            const uint32_t *d = &f->vec[in->o[0]];
            r[d[0]] = v[0]; r[d[1]] = v[1];
            NEXT();
        }
        L_STG_V2: {
            uint8_t *p = emu_global(b, t, in, r[in->o[0]] + (uint64_t)in->off[0], 8, true);
            if (!p) { ok = false; goto out; }
            const uint32_t *s = &f->vec[in->o[1]];
            uint32_t v[2] = {(uint32_t)r[s[0]], (uint32_t)r[s[1]]};
            memcpy(p, v, 8);
            NEXT();
        }
        L_STG32: {
            uint8_t *p = emu_global(b, t, in, r[in->o[0]] + (uint64_t)in->off[0], 4, true);
            if (!p) { ok = false; goto out; }
            uint32_t v = (uint32_t)r[in->o[1]];
            memcpy(p, &v, 4);
            if (p == b->tail.buf) memcpy(b->tail.host, p, b->tail.valid);
            NEXT();
        }
        L_STG64: {
            uint8_t *p = emu_global(b, t, in, r[in->o[0]] + (uint64_t)in->off[0], 8, true);
            if (!p) { ok = false; goto out; }
            memcpy(p, &r[in->o[1]], 8);
            if (p == b->tail.buf) memcpy(b->tail.host, p, b->tail.valid);
            NEXT();
        }
        L_STG128: {
            uint8_t *p = emu_global(b, t, in, r[in->o[0]] + (uint64_t)in->off[0], 16, true);
            if (!p) { ok = false; goto out; }
            const uint32_t *s = &f->vec[in->o[1]];
            uint32_t v[4] = {(uint32_t)r[s[0]], (uint32_t)r[s[1]], (uint32_t)r[s[2]], (uint32_t)r[s[3]]};
            memcpy(p, v, 16);
            NEXT();
        }
        L_LDS32: {
            uint64_t a = (r[in->o[1]] + (uint64_t)in->off[0]) & 0xFFFFFFFFu;
            const uint8_t *p;
            if (!b->shadow && a + 4 <= b->shared_size && !(a & 3)) p = emu_cta_smem(b, t) + a;
            else if (!(p = lds32_checked(b, t, in, a))) { ok = false; goto out; }
            uint32_t v;
            memcpy(&v, p, 4);
            r[in->o[0]] = v;
            NEXT();
        }
        L_STS32: {
            uint64_t a = (r[in->o[0]] + (uint64_t)in->off[0]) & 0xFFFFFFFFu;
            uint8_t *p;
            if (!b->shadow && !b->wg_reading && !b->nbulkrd && a + 4 <= b->shared_size && !(a & 3)) p = emu_cta_smem(b, t) + a;
            else if (!(p = sts32_checked(b, t, in, a, (uint32_t)r[in->o[1]]))) { ok = false; goto out; }
            uint32_t v = (uint32_t)r[in->o[1]];
            memcpy(p, &v, 4);
            NEXT();
        }
        /* kernel parameters; anything else takes the checked path.  One handler per size: a copy of a constant size
         * is one load (a size chosen at run time was a call-sized copy, ld.param 40 host instructions to mov's 18) */
        L_LDP32: {
            uint64_t a = (r[in->o[1]] + (uint64_t)in->off[0]) & 0xFFFFFFFFu;
            const EmuLaunch *L = b->L;
            if (a + 4 > L->param_size) goto slow;
            uint32_t v;
            memcpy(&v, L->params + a, 4);
            r[in->o[0]] = v;
            NEXT();
        }
        L_LDP64: {
            uint64_t a = (r[in->o[1]] + (uint64_t)in->off[0]) & 0xFFFFFFFFu;
            const EmuLaunch *L = b->L;
            if (a + 8 > L->param_size) goto slow;
            uint64_t v;
            memcpy(&v, L->params + a, 8);
            r[in->o[0]] = v;
            NEXT();
        }
        L_CVTA_ID: r[in->o[0]] = r[in->o[1]]; NEXT();
        L_LDS16: {
            uint64_t a = (r[in->o[1]] + (uint64_t)in->off[0]) & 0xFFFFFFFFu;
            if (b->shadow || a + 2 > b->shared_size || (a & 1)) goto slow;
            uint16_t v;
            memcpy(&v, emu_cta_smem(b, t) + a, 2);
            r[in->o[0]] = v;
            NEXT();
        }
        L_STS16: {
            uint64_t a = (r[in->o[0]] + (uint64_t)in->off[0]) & 0xFFFFFFFFu;
            if (b->shadow || b->wg_reading || b->nbulkrd || a + 2 > b->shared_size || (a & 1)) goto slow;
            uint16_t v = (uint16_t)r[in->o[1]];
            memcpy(emu_cta_smem(b, t) + a, &v, 2);
            NEXT();
        }
        L_LDS_V2H: { /* ld.shared.v2 of two 16-bit elements, each zero-extended into its register */
            uint64_t a = (r[in->o[1]] + (uint64_t)in->off[0]) & 0xFFFFFFFFu;
            if (b->shadow || a + 4 > b->shared_size || (a & 3)) goto slow;
            uint16_t v[2];
            memcpy(v, emu_cta_smem(b, t) + a, 4);
            const uint32_t *d = &f->vec[in->o[0]];
            r[d[0]] = v[0]; r[d[1]] = v[1];
            NEXT();
        }
        L_LDS128: {
            uint64_t a = (r[in->o[1]] + (uint64_t)in->off[0]) & 0xFFFFFFFFu;
            if (b->shadow || a + 16 > b->shared_size || (a & 15)) goto slow;
            uint32_t v[4];
            memcpy(v, emu_cta_smem(b, t) + a, 16);
            const uint32_t *d = &f->vec[in->o[0]];
            r[d[0]] = v[0]; r[d[1]] = v[1]; r[d[2]] = v[2]; r[d[3]] = v[3];
            NEXT();
        }
        L_STS128: {
            uint64_t a = (r[in->o[0]] + (uint64_t)in->off[0]) & 0xFFFFFFFFu;
            if (b->shadow || b->wg_reading || b->nbulkrd || a + 16 > b->shared_size || (a & 15)) goto slow;
            const uint32_t *s = &f->vec[in->o[1]];
            uint32_t v[4] = {(uint32_t)r[s[0]], (uint32_t)r[s[1]], (uint32_t)r[s[2]], (uint32_t)r[s[3]]};
            memcpy(emu_cta_smem(b, t) + a, v, 16);
            NEXT();
        }
        L_CPA16: {
            /* cp.async of 16 bytes from global to the CTA's own shared memory, the whole source (src-size 16 or more)
             * or none (0: zeros), both ends aligned, the source in the allocation of the instruction's hint or of the
             * inline cache (emu_global's: nothing pending, writable); anything else (another copy size or a partial
             * source, racecheck, a wgmma or bulk copy reading shared memory, out of bounds, misaligned, a cache miss)
             * the checked path */
            uint64_t da = (r[in->o[0]] + (uint64_t)in->off[0]) & 0xFFFFFFFFu;
            uint32_t ss = in->nops < 4 ? 16 : (uint32_t)r[in->o[3]];
            if (b->shadow || b->cpa || b->wg_reading || b->nbulkrd || (uint32_t)r[in->o[2]] != 16 || da + 16 > b->shared_size ||
                (da & 15) || (ss && ss < 16))
                goto slow;
            uint8_t *d = emu_cta_smem(b, t) + da;
            if (!ss) {
                memset(d, 0, 16);
                NEXT();
            }
            uint64_t sa = r[in->o[1]] + (uint64_t)in->off[1];
            if (sa & 15) goto slow;
            const EmuGlobalHint *h = &b->gh[in->ghint]; /* emu_global's first look, then the cache's */
            const uint8_t *g = sa - h->lo < h->lim ? h->host + (sa - h->lo) : emu_global_cached(b, in, sa, 16);
            if (!g) goto slow;
            memcpy(d, g, 16);
            NEXT();
        }
        L_CPA_GROUP: /* cp.async.commit_group, wait_group, wait_all: racecheck's (exec_generic), nothing otherwise */
            if (b->cpa) goto slow;
            NEXT();
        L_FDIV: r[in->o[0]] = canon32(emu_f32(r[in->o[1]]) / emu_f32(r[in->o[2]])); NEXT();
        L_FMIN: { /* a NaN gives the other operand; -0 is below +0 */
            float x = emu_f32(r[in->o[1]]), y = emu_f32(r[in->o[2]]);
            float v = x != x ? y : y != y ? x : x == y && x == 0 ? (signbit(x) ? x : y) : x < y ? x : y;
            r[in->o[0]] = canon32(v);
            NEXT();
        }
        L_FMAX: {
            float x = emu_f32(r[in->o[1]]), y = emu_f32(r[in->o[2]]);
            float v = x != x ? y : y != y ? x : x == y && x == 0 ? (signbit(x) ? y : x) : x > y ? x : y;
            r[in->o[0]] = canon32(v);
            NEXT();
        }
        L_FMIN_NAN: L_FMAX_NAN: { /* min/max.NaN.f32: a NaN operand gives the canonical NaN; -0 is below +0 */
            float x = emu_f32(r[in->o[1]]), y = emu_f32(r[in->o[2]]);
            bool mx = in->fast == FAST_FMAX_NAN;
            float v = x == y && x == 0 ? ((signbit(x) != 0) == mx ? y : x) : (x < y) == mx ? y : x;
            r[in->o[0]] = x != x || y != y ? 0x7FFFFFFFu : emu_bits32(v);
            NEXT();
        }
        L_EX2: { /* ex2.approx[.ftz].f32: .ftz flushes a subnormal operand and result to a zero of its sign */
            if (b->L->opt->approx == EMU_APPROX_BOUND) goto slow; /* moved by its error bound: exec_float.c */
            bool ftz = in->flags & EMU_F(FTZ);
            float x = emu_f32(r[in->o[1]]);
            float v = (float)exp2((double)(ftz ? flush32(x) : x));
            r[in->o[0]] = canon32(ftz ? flush32(v) : v);
            NEXT();
        }
        L_CVT_H2: {
            int fmt = in->ty == EMU_T_F16X2 ? EMU_FMT_F16 : EMU_FMT_BF16;
            r[in->o[0]] = half_rn(emu_f32(r[in->o[1]]), fmt) << 16 | half_rn(emu_f32(r[in->o[2]]), fmt);
            NEXT();
        }
        L_CVT_F32_H: r[in->o[0]] = emu_cvt_f32_half(in, r[in->o[1]]); NEXT();
        L_CVT_H_F32: r[in->o[0]] = emu_cvt_half_f32(in, r[in->o[1]]); NEXT();
        L_CVT_I32_F32: r[in->o[0]] = emu_cvt_i32_f32(in, r[in->o[1]]); NEXT();
        L_CVT_F32_I: r[in->o[0]] = emu_cvt_f32_int(in, r[in->o[1]]); NEXT();
        L_CVT_F32_F32I: r[in->o[0]] = emu_cvt_f32_f32i(in, r[in->o[1]]); NEXT();
        L_CVT_II: r[in->o[0]] = emu_cvt_int_int(in, r[in->o[1]]); NEXT();
        L_UNPACK_H2: {
            const uint32_t *v = &f->vec[in->o[0]];
            uint64_t x = r[in->o[1]];
            r[v[0]] = x & 0xFFFF, r[v[1]] = x >> 16 & 0xFFFF;
            NEXT();
        }
        L_PACK_H2: {
            const uint32_t *v = &f->vec[in->o[1]];
            r[in->o[0]] = (r[v[0]] & 0xFFFF) | (r[v[1]] & 0xFFFF) << 16;
            NEXT();
        }
        L_MIN_U32: {
            uint32_t x = (uint32_t)r[in->o[1]], y = (uint32_t)r[in->o[2]];
            r[in->o[0]] = x < y ? x : y;
            NEXT();
        }
        L_MAX_U32: {
            uint32_t x = (uint32_t)r[in->o[1]], y = (uint32_t)r[in->o[2]];
            r[in->o[0]] = x > y ? x : y;
            NEXT();
        }
        L_AND16: r[in->o[0]] = (uint16_t)(r[in->o[1]] & r[in->o[2]]); NEXT();
        L_OR16: r[in->o[0]] = (uint16_t)(r[in->o[1]] | r[in->o[2]]); NEXT();
        L_XOR16: r[in->o[0]] = (uint16_t)(r[in->o[1]] ^ r[in->o[2]]); NEXT();
        L_BFE_U32: { /* bits [pos, pos + len) of a, those past bit 31 zero */
            uint32_t x = (uint32_t)r[in->o[1]], pos = (uint32_t)r[in->o[2]] & 0xFF, len = (uint32_t)r[in->o[3]] & 0xFF;
            r[in->o[0]] = pos > 31 || !len ? 0 : (x >> pos) & (len > 31 ? 0xFFFFFFFFu : (1u << len) - 1);
            NEXT();
        }
        L_LDG16: {
            const uint8_t *p = emu_global(b, t, in, r[in->o[1]] + (uint64_t)in->off[0], 2, false);
            if (!p) { ok = false; goto out; }
            uint16_t v;
            memcpy(&v, p, 2);
            r[in->o[0]] = v;
            NEXT();
        }
        L_STG16: {
            uint8_t *p = emu_global(b, t, in, r[in->o[0]] + (uint64_t)in->off[0], 2, true);
            if (!p) { ok = false; goto out; }
            uint16_t v = (uint16_t)r[in->o[1]];
            memcpy(p, &v, 2);
            if (p == b->tail.buf) memcpy(b->tail.host, p, b->tail.valid);
            NEXT();
        }
        L_HARITH: r[in->o[0]] = emu_half_arith(in, r[in->o[1]], r[in->o[2]], in->nops > 3 ? r[in->o[3]] : 0); NEXT();
        /* control flow and blocking instructions */
slow:
        switch (in->op) {
        case EMU_OP_BRA:
        L_BRA: {
            const EmuIns *to = &code[in->target];
            if (to <= in && n >= check) { /* a loop: look at the clock now and then */
                t->pc = PC();
                if (!(ok = emu_check_budget(b, t, in, n))) goto out;
                check = n + EMU_CHECK_EVERY;
            }
            if (to <= in && n >= EMU_QUANTUM && b->nthreads > 1) {
                /* a loop that has run a while lets the other threads run (from this branch, when they have): one
                 * may be spinning on memory that another thread of the block is to write (cooperative groups'
                 * multi-warp barriers, flags).  The watchdog and the clock are looked at first: the runs are now
                 * shorter than EMU_CHECK_EVERY. */
                t->pc = PC();
                ok = emu_check_budget(b, t, in, n);
                goto out;
            }
            in = to;
            DISPATCH_IN();
        }
        case EMU_OP_BRX: { /* target: the .branchtargets table's bra over it; its entries follow */
            uint64_t k = (uint32_t)r[in->o[0]], ntargets = code[in->target].target - in->target - 1;
            if (k >= ntargets) {
                t->pc = PC();
                ok = emu_fault(b, t, in, "invalid branch", "brx.idx index %" PRIu64 " past the %" PRIu64 " targets of its table", k,
                               ntargets);
                goto out;
            }
            /* the entry's bra is taken here: a jump back (a loop through the table) looks at the clock and lets
             * the other threads run as a bra back does (the entry itself may lie before its target) */
            uint32_t dest = code[in->target + 1 + (uint32_t)k].target, pc = PC();
            if (dest <= pc && n >= check) {
                t->pc = PC();
                if (!(ok = emu_check_budget(b, t, in, n))) goto out;
                check = n + EMU_CHECK_EVERY;
            }
            if (dest <= pc && n >= EMU_QUANTUM && b->nthreads > 1) {
                t->pc = PC();
                ok = emu_check_budget(b, t, in, n);
                goto out;
            }
            in = &code[dest];
            DISPATCH_IN();
        }
        case EMU_OP_CALL:
            t->pc = PC();
            /* a call runs code again as a backward branch does: recursion without a loop (f calling itself
             * twice) has no backward branch, so the clock is looked at here too */
            if (n >= check) {
                if (!(ok = emu_check_budget(b, t, in, n))) goto out;
                check = n + EMU_CHECK_EVERY;
            }
            if (!(ok = emu_call(b, t, in))) goto out;
            f = t->fn;
            code = f->code;
            r = t->r;
            in = &code[t->pc];
            DISPATCH_IN();
        case EMU_OP_RET:
            if (t->depth) {
                t->pc = PC();
                if (!(ok = emu_ret(b, t))) goto out;
                f = t->fn;
                code = f->code;
                r = t->r;
                in = &code[t->pc];
                DISPATCH_IN();
            }
            t->state = EMU_TS_DONE;
            b->cta[t->cta].live--;
            if (b->vc) emu_race_release(b, t, emu_race_exited(b, t->cta));
            goto out;
        case EMU_OP_EXIT:
            t->state = EMU_TS_DONE;
            b->cta[t->cta].live--;
            if (b->vc) emu_race_release(b, t, emu_race_exited(b, t->cta));
            goto out;
        case EMU_OP_BAR: case EMU_OP_BARRIER: {
            /* bar.red's operands are d, a [, b], c; the others' a [, b] */
            unsigned b0 = in->flags & EMU_F(REDOP) ? 1 : 0, bn = in->nops - 2 * b0;
            uint64_t id = bn >= 1 ? (uint32_t)r[in->o[b0]] : 0, cnt = bn >= 2 ? (uint32_t)r[in->o[b0 + 1]] : 0;
            if (id > EMU_MAX_BAR_ID || (bn >= 2 && (cnt == 0 || cnt % 32 || cnt > EMU_MAX_BLOCK_THREADS))) {
                t->pc = PC();
                if (id > EMU_MAX_BAR_ID) ok = emu_fault(b, t, in, "invalid barrier", "barrier number %" PRIu64 " (of 0..15)", id);
                else ok = emu_fault(b, t, in, "invalid barrier", "thread count %" PRIu64 " is not a multiple of 32 in 32..1024", cnt);
                goto out;
            }
            if (in->flags & EMU_F(ARRIVE)) { /* counts towards the barrier's completion and goes on */
                /* racecheck: a bar.arrive releases at its arrival; a waiter when the instance it completes takes
                 * it (release_waiters), so one left for the next instance of an over-subscribed barrier releases there */
                if (b->vc) emu_race_release(b, t, emu_race_bar(b, t->cta, (unsigned)id));
                EmuCta *c = &b->cta[t->cta];
                if (c->bar_arrived[id] && c->bar_arrive_count[id] != cnt) {
                    t->pc = PC();
                    ok = emu_fault(b, t, in, "deadlock: barrier thread counts disagree",
                                   "bar.arrive at barrier %" PRIu64 " for %" PRIu64 " threads while %u arrivals pending there were for %u",
                                   id, cnt, c->bar_arrived[id], c->bar_arrive_count[id]);
                    goto out;
                }
                c->bar_arrived[id]++;
                c->bar_arrive_count[id] = (uint32_t)cnt;
                NEXT();
            }
            t->state = EMU_TS_BAR;
            t->bar_id = (uint8_t)id;
            t->bar_count = (uint32_t)cnt;
            goto out;
        }
        case EMU_OP_CLUSTER_BAR:
            if (in->mode == EMU_MODE_MB_ARRIVE) { /* counted when every live thread has arrived (release_cluster) */
                if (t->cl_arrived) {
                    t->pc = PC();
                    ok = emu_fault(b, t, in, "invalid cluster barrier", "barrier.cluster.arrive twice without a barrier.cluster.wait between");
                    goto out;
                }
                EmuCta *lead = &b->cta[emu_cl_base(b, t)];
                if (b->vc) emu_race_release(b, t, emu_race_cl(b, emu_cl_base(b, t)));
                t->cl_arrived = true;
                t->cl_phase = lead->cl_phase;
                lead->cl_arrived++;
                NEXT();
            }
            if (!t->cl_arrived) {
                t->pc = PC();
                ok = emu_fault(b, t, in, "invalid cluster barrier", "barrier.cluster.wait without a barrier.cluster.arrive before it");
                goto out;
            }
            t->cl_arrived = false;
            if (t->cl_phase != b->cta[emu_cl_base(b, t)].cl_phase) { /* its phase has completed */
                if (b->vc) emu_race_acquire(b, t, emu_race_cl(b, emu_cl_base(b, t)) + b->nvw);
                NEXT();
            }
            t->state = EMU_TS_CLUSTER;
            goto out;
        case EMU_OP_SHFL: case EMU_OP_VOTE: case EMU_OP_BAR_WARP: case EMU_OP_LDMATRIX: case EMU_OP_MOVMATRIX: case EMU_OP_MMA:
        case EMU_OP_MATCH: case EMU_OP_REDUX: case EMU_OP_ACTIVEMASK: case EMU_OP_STMATRIX: case EMU_OP_ELECT:
        case EMU_OP_WMMA_LOAD: case EMU_OP_WMMA_STORE: case EMU_OP_WMMA_MMA:
        case EMU_OP_WGMMA: case EMU_OP_WGMMA_FENCE: case EMU_OP_WGMMA_COMMIT: case EMU_OP_WGMMA_WAIT: case EMU_OP_SETMAXNREG:
            t->state = EMU_TS_WARP;
            goto out;
        case EMU_OP_MBARRIER:
            t->pc = PC();
            switch (emu_exec_mbarrier(b, t, in)) {
            case EMU_MBAR_EXEC_DONE: NEXT();
            case EMU_MBAR_EXEC_BLOCK: t->state = EMU_TS_MBAR; b->mbar_waits = true; goto out;
            case EMU_MBAR_EXEC_YIELD: in++; t->state = EMU_TS_YIELD; b->mbar_waits = true; goto out;
            default: ok = false; goto out;
            }
        default:
            t->pc = PC();
            if (!exec_generic(b, t, in)) { ok = false; goto out; }
            NEXT();
        }
#undef NEXT
#undef DISPATCH_IN
out:
    t->pc = PC();
#undef PC
    t->icount += n;
    b->icount += n;
    return ok;
}

#undef EMU_RUN_THREAD
#undef EMU_WGCHECK

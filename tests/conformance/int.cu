// int.cu - integer arithmetic, bit operations and 64-bit integers.
// Each thread i computes NI results from a[i], b[i] into out[i*NI + k];
// tests/test_conformance.c computes the same on the host (exact).
#define NI 62

extern "C" __global__ void int_ops(const unsigned *a, const unsigned *b, unsigned *out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        unsigned x = a[i], y = b[i];
        int sx = (int)x, sy = (int)y;
        unsigned *o = out + (long long)i * NI;
        o[0] = x + y;
        o[1] = x - y;
        o[2] = x * y;
        o[3] = __umulhi(x, y);
        o[4] = (unsigned)__mulhi(sx, sy);
        o[5] = y ? x / y : 0u;
        o[6] = y ? x % y : 0u;
        o[7] = (sy != 0 && !(sx == (int)0x80000000 && sy == -1)) ? (unsigned)(sx / sy) : 0u;
        o[8] = (sy != 0 && !(sx == (int)0x80000000 && sy == -1)) ? (unsigned)(sx % sy) : 0u;
        o[9] = x << (y & 31);
        o[10] = x >> (y & 31);
        o[11] = (unsigned)(sx >> (y & 31));
        o[12] = x & y;
        o[13] = x | y;
        o[14] = x ^ ~y;
        o[15] = __popc(x);
        o[16] = __clz(x);
        o[17] = __brev(x);
        o[18] = __ffs(sx);
        o[19] = __byte_perm(x, y, y & 0x7777);
        o[20] = __funnelshift_l(x, y, y);
        o[21] = __funnelshift_r(x, y, y);
        o[22] = __funnelshift_lc(x, y, y);
        o[23] = __funnelshift_rc(x, y, y);
        o[24] = min(sx, sy);
        o[25] = max(x, y);
        o[26] = abs(sx);
        o[27] = __sad(sx, sy, x);
        o[28] = __usad(x, y, 7u);
        o[29] = __hadd(sx, sy);
        o[30] = __rhadd(sx, sy);
        o[31] = __uhadd(x, y);
        o[32] = (unsigned)(short)x * (unsigned)(short)y;
        o[33] = (unsigned char)x + (unsigned char)y;
        o[34] = __mul24(sx, sy);
        o[35] = __umul24(x, y);
        o[36] = x > y ? 1u : 0u;
        o[37] = sx < sy ? 1u : 0u;
        o[38] = (x & 1) ? x * 3 + 1 : x / 2;
        o[39] = (unsigned)(signed char)x;
        o[40] = (unsigned)__dp4a((int)x, (int)y, (int)x);   // dp4a.s32.s32
        o[41] = __dp4a(x, y, 7u);                           // dp4a.u32.u32
        o[42] = (unsigned)__dp2a_lo((int)x, (int)y, 5);     // dp2a.lo.s32.s32
        o[43] = __dp2a_hi(x, y, y);                         // dp2a.hi.u32.u32
        // SIMD within a word (on sm_90: add/min/max.{u,s}16x2, vabsdiff2/4, lop3 among the bit tricks)
        o[44] = __vadd2(x, y);
        o[45] = __vsub4(x, y);
        o[46] = __vmaxs2(x, y);
        o[47] = __vminu2(x, y);
        o[48] = __vabsdiffu4(x, y);
        o[49] = __vabsdiffs4(x, y);
        o[50] = __vsadu4(x, y);
        o[51] = __vsads2(x, y);
        o[52] = __vcmpeq4(x, y | 0x00FF00FFu);
        o[53] = __vavgu4(x, y);
        o[54] = __vhaddu2(x, y);
        o[55] = __vcmpgts2(x, y);
        unsigned l0, l1, l2;
        asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(l0) : "r"(x), "r"(y), "r"(x * 7u));
        asm("lop3.b32 %0, %1, %2, %3, 0xE8;" : "=r"(l1) : "r"(x), "r"(y), "r"(x * 7u));
        asm("lop3.b32 %0, %1, %2, %3, 0x1E;" : "=r"(l2) : "r"(x), "r"(y), "r"(x * 7u));
        o[56] = l0;
        o[57] = l1;
        o[58] = l2;
        o[59] = __vabsdiffu2(x, y) + __vmaxu2(x, y);
        o[60] = __fns(x, y & 31, (int)(y >> 27) - 16);   // fns.b32, offsets -16..15
        o[61] = __fns(x | 1u, 0, 0) + __fns(x, 31, -(int)(y & 7) - 1);
    }
}

#define NL 20
extern "C" __global__ void int64_ops(const unsigned long long *a, const unsigned long long *b, unsigned long long *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long x = a[i], y = b[i];
    long long sx = (long long)x, sy = (long long)y;
    unsigned long long *o = out + (long long)i * NL;
    o[0] = x + y;
    o[1] = x - y;
    o[2] = x * y;
    o[3] = __umul64hi(x, y);
    o[4] = (unsigned long long)__mul64hi(sx, sy);
    o[5] = y ? x / y : 0ull;
    o[6] = y ? x % y : 0ull;
    o[7] = (sy != 0 && !(sx == (long long)0x8000000000000000ull && sy == -1)) ? (unsigned long long)(sx / sy) : 0ull;
    o[8] = (sy != 0 && !(sx == (long long)0x8000000000000000ull && sy == -1)) ? (unsigned long long)(sx % sy) : 0ull;
    o[9] = x << (y & 63);
    o[10] = x >> (y & 63);
    o[11] = (unsigned long long)(sx >> (y & 63));
    o[12] = __popcll(x);
    o[13] = __clzll(sx);
    o[14] = __brevll(x);
    o[15] = __ffsll(sx);
    o[16] = (unsigned long long)(unsigned)x * (unsigned)y;
    o[17] = (unsigned long long)((long long)(int)x * (int)y);
    o[18] = min(sx, sy);
    o[19] = max(x, y);
}

// 128-bit division and remainder (nvcc inlines them: carry chains that read CC.CF after sub.cc/subc.cc
// with addc, the hardware's carry being 1 when nothing was borrowed).  a and b: (lo, hi) pairs.
extern "C" __global__ void int128_ops(const unsigned long long *a, const unsigned long long *b, unsigned long long *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned __int128 x = ((unsigned __int128)a[2 * i + 1] << 64) | a[2 * i], y = ((unsigned __int128)b[2 * i + 1] << 64) | b[2 * i];
    __int128 sx = (__int128)x, sy = (__int128)y;
    unsigned __int128 r[4];
    r[0] = y ? x / y : 0;
    r[1] = y ? x % y : 0;
    bool sdiv = sy != 0 && !(sy == -1 && x == ((unsigned __int128)1 << 127));
    r[2] = sdiv ? (unsigned __int128)(sx / sy) : 0;
    r[3] = sdiv ? (unsigned __int128)(sx % sy) : 0;
    for (int k = 0; k < 4; k++) {
        out[8 * i + 2 * k] = (unsigned long long)r[k];
        out[8 * i + 2 * k + 1] = (unsigned long long)(r[k] >> 64);
    }
}

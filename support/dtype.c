/* dtype.c - lookups over the dtype table (support/dtype.h), for the IR and
 * the public API alike. */
#include "support/dtype.h"
#include "support/support.h"

#include <math.h>
#include <string.h>

static const struct {
    const char *name;
    int bits;
    unsigned flags;
    int public_id;
} info[DT_COUNT] = {
#define X(e, n, b, f, p) {n, b, f, p},
    DTYPES(X)
#undef X
};

/* Every public enumerator names exactly one row. */
enum {
#define X(e, n, b, f, p) PUBLIC_ROWS_##e = (p) != NOT_PUBLIC,
    DTYPES(X)
#undef X
};
_Static_assert(0
#define X(e, n, b, f, p) + PUBLIC_ROWS_##e
              DTYPES(X)
#undef X
                  == TILE_DTYPE_COUNT,
              "each tile_dtype enumerator needs one row in DTYPES");

static const struct {
    DType t;
    DTypeFloat f;
} float_formats[] = {
#define X(e, mant, emin, max, sat) {DT_##e, {mant, emin, max, sat}},
    DTYPE_FLOATS(X)
#undef X
};

/* Every float row of DTYPES has a format row. */
enum {
#define X(e, n, b, f, p) FLOAT_ROWS_##e = ((f) & DTF_FLOAT) != 0,
    DTYPES(X)
#undef X
};
_Static_assert(0
#define X(e, n, b, f, p) + FLOAT_ROWS_##e
              DTYPES(X)
#undef X
                  == ARRAY_LEN(float_formats),
              "each float row of DTYPES needs one row in DTYPE_FLOATS");

const char *dtype_name(DType t) { return (unsigned)t < DT_COUNT ? info[t].name : "?"; }
int dtype_bits(DType t) { return info[t].bits; }
bool dtype_is_int(DType t) { return info[t].flags & DTF_INT; }
bool dtype_is_signed(DType t) { return info[t].flags & DTF_SIGNED; }
bool dtype_is_float(DType t) { return info[t].flags & DTF_FLOAT; }
bool dtype_is_storage(DType t) { return info[t].flags & DTF_STORAGE; }

int dtype_bytes(DType t) {
    if (t == DT_PTR) return 8;
    int b = dtype_bits(t) / 8;
    return b < 1 ? 1 : b;
}

DType dtype_from_name(const char *s, size_t n) {
    for (int i = 1; i < DT_COUNT; i++)
        if (strlen(info[i].name) == n && !memcmp(info[i].name, s, n)) return (DType)i;
    return DT_VOID;
}

bool dtype_to_public(DType t, tile_dtype *out) {
    if ((unsigned)t >= DT_COUNT || info[t].public_id == NOT_PUBLIC) return false;
    *out = (tile_dtype)info[t].public_id;
    return true;
}

bool dtype_from_public(tile_dtype t, DType *out) {
    for (int i = 0; i < DT_COUNT; i++)
        if (info[i].public_id != NOT_PUBLIC && info[i].public_id == (int)t) {
            *out = (DType)i;
            return true;
        }
    return false;
}

/* ---- the public API ---- */
const char *tile_dtype_name(tile_dtype t) {
    DType d;
    return dtype_from_public(t, &d) ? info[d].name : NULL;
}

size_t tile_dtype_size(tile_dtype t) {
    DType d;
    return dtype_from_public(t, &d) ? (size_t)dtype_bytes(d) : 0;
}

int64_t dtype_float_to_int(double f, DType t) {
    int w = info[t].bits;
    if (isnan(f)) return 0;
    if (!dtype_is_signed(t)) {
        if (!(f > 0)) return 0;
        if (f >= ldexp(1.0, w)) return w == 64 ? -1 : (int64_t)((1ull << w) - 1); /* u64's maximum as its bits */
        return (int64_t)(uint64_t)f;
    }
    double lim = ldexp(1.0, w - 1);
    if (f >= lim) return w == 64 ? INT64_MAX : (int64_t)(1ull << (w - 1)) - 1;
    if (f <= -lim) return w == 64 ? INT64_MIN : -(int64_t)(1ull << (w - 1));
    return (int64_t)f;
}

int64_t dtype_wrap_int(int64_t v, DType t) {
    int w = info[t].bits;
    if (w >= 64 || w <= 0) return v;
    uint64_t mask = (UINT64_C(1) << w) - 1, u = (uint64_t)v & mask;
    if (dtype_is_signed(t) && ((u >> (w - 1)) & 1)) u |= ~mask;
    return (int64_t)u;
}

bool dtype_float_format(DType t, DTypeFloat *out) {
    for (size_t i = 0; i < ARRAY_LEN(float_formats); i++)
        if (float_formats[i].t == t) {
            *out = float_formats[i].f;
            return true;
        }
    return false;
}

double dtype_round_float(double x, DType t) {
    DTypeFloat ff;
    if (!dtype_float_format(t, &ff)) return x;
    if (!isfinite(x) || x == 0) return ff.sat && isinf(x) ? copysign(ff.max, x) : x;
    int e;
    frexp(x, &e); /* x = m * 2^e, 0.5 <= |m| < 1: its normal exponent is e - 1 */
    int q = (e - 1 < ff.emin ? ff.emin : e - 1) - ff.mant; /* the exponent of x's last kept bit */
    double r = ldexp(nearbyint(ldexp(x, -q)), q); /* exact scalings by powers of two; nearbyint ties to even */
    if (fabs(r) > ff.max) return ff.sat ? copysign(ff.max, x) : copysign((double)INFINITY, x);
    return r;
}

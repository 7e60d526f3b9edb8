/* dtype.h - the one table of element types, behind the Tile IR's DType and
 * the public tile_dtype (include/tile/tile.h).
 *
 * Each row: X(ENUM, "name", bits, flags, PUBLIC), PUBLIC being the public
 * enumerator (TILE_F16, ...) or NOT_PUBLIC for types that exist only in the
 * IR (i1, void, pointers).  The IR enum DType, every name table, the public
 * tile_dtype_name / tile_dtype_from_name / tile_dtype_size and the mapping
 * between the two enums derive from it.  Adding a dtype: one row here (and,
 * if kernels may take it from C, one enumerator in tile.h), then the
 * lowering of what is genuinely new about it (docs/architecture.md). */
#ifndef TILE_SUPPORT_DTYPE_H
#define TILE_SUPPORT_DTYPE_H

#include "include/tile/tile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { DTF_INT = 1, DTF_SIGNED = 2, DTF_FLOAT = 4, DTF_STORAGE = 8, DTF_PTR = 16 };
#define NOT_PUBLIC (-1)
/* X(ENUM, name, bits, flags, public) */
#define DTYPES(X)                                                     \
    X(VOID, "void", 0, 0, NOT_PUBLIC)                                 \
    X(I1, "i1", 1, DTF_INT, NOT_PUBLIC)                               \
    X(I8, "i8", 8, DTF_INT | DTF_SIGNED, TILE_I8)                     \
    X(I16, "i16", 16, DTF_INT | DTF_SIGNED, TILE_I16)                 \
    X(I32, "i32", 32, DTF_INT | DTF_SIGNED, TILE_I32)                 \
    X(I64, "i64", 64, DTF_INT | DTF_SIGNED, TILE_I64)                 \
    X(U8, "u8", 8, DTF_INT, TILE_U8)                                  \
    X(U16, "u16", 16, DTF_INT, TILE_U16)                              \
    X(U32, "u32", 32, DTF_INT, TILE_U32)                              \
    X(U64, "u64", 64, DTF_INT, TILE_U64)                              \
    X(F16, "f16", 16, DTF_FLOAT, TILE_F16)                            \
    X(BF16, "bf16", 16, DTF_FLOAT, TILE_BF16)                         \
    X(F32, "f32", 32, DTF_FLOAT, TILE_F32)                            \
    X(F64, "f64", 64, DTF_FLOAT, TILE_F64)                            \
    X(F8E4M3, "f8e4m3", 8, DTF_FLOAT | DTF_STORAGE, TILE_F8E4M3)      \
    X(F8E5M2, "f8e5m2", 8, DTF_FLOAT | DTF_STORAGE, TILE_F8E5M2)      \
    X(PTR, "ptr", 64, DTF_PTR, NOT_PUBLIC)

typedef enum DType {
#define X(e, n, b, f, p) DT_##e,
    DTYPES(X)
#undef X
        DT_COUNT
} DType;

/* The float types' formats, one row each (every DTF_FLOAT row of DTYPES has one):
 * X(ENUM, mantissa bits stored, exponent of the smallest normal (1 - bias), largest finite value, saturating).
 * Saturating: a value past the largest finite one becomes it, not an infinity, as the language's casts to
 * the f8 types do.  The compiler's constant folding and typing of constants round through this table. */
#define DTYPE_FLOATS(X)                       \
    X(F16, 10, -14, 65504.0, false)           \
    X(BF16, 7, -126, 0x1.FEp127, false)       \
    X(F32, 23, -126, 0x1.FFFFFEp127, false)   \
    X(F64, 52, -1022, 0x1.FFFFFFFFFFFFFp1023, false) \
    X(F8E4M3, 3, -6, 448.0, true)             \
    X(F8E5M2, 2, -14, 57344.0, true)

typedef struct DTypeFloat {
    int mant;   /* fraction bits stored (the significand has one more) */
    int emin;   /* exponent of the smallest normal value; below it values are subnormal */
    double max; /* largest finite value */
    bool sat;   /* past max: max (saturating), not an infinity */
} DTypeFloat;

const char *dtype_name(DType t); /* "?" when out of range */
int dtype_bits(DType t);
bool dtype_is_int(DType t);      /* i1 and all integer types */
bool dtype_is_signed(DType t);
bool dtype_is_float(DType t);    /* includes f8 storage types */
bool dtype_is_storage(DType t);  /* f8e4m3, f8e5m2: load/store/cast only */
int dtype_bytes(DType t);        /* in memory: i1 and f8 take 1, pointers 8 */
DType dtype_from_name(const char *s, size_t n); /* DT_VOID if unknown */
/* A float cast to the integer type t (not i1) as the language defines it, at run time and folded alike:
 * toward zero, saturated at t's range, NaN 0.  The result is t's value as an int64 (u64 above 2^63: its bits). */
int64_t dtype_float_to_int(double f, DType t);
/* v as a value of the integer type t: its low dtype_bits(t) bits, sign-extended when t is signed and
 * zero-extended otherwise (i1: 0 or 1), the two's complement wrap the target computes; v itself for 64 bits. */
int64_t dtype_wrap_int(int64_t v, DType t);
/* The float type t's format (false for a type that is not a float). */
bool dtype_float_format(DType t, DTypeFloat *out);
/* x rounded to nearest even in the float type t: subnormals below emin, past max an infinity or, for a
 * saturating type, max; NaN, infinities and zeros as they are.  x itself for a type that is not a float. */
double dtype_round_float(double x, DType t);
/* The public type of an IR type (false for i1, void, ptr) and back (false for an unknown value). */
bool dtype_to_public(DType t, tile_dtype *out);
bool dtype_from_public(tile_dtype t, DType *out);

#endif

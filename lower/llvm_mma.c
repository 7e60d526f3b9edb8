/* llvm_mma.c - `dot` on tensor cores: mma.sync on operands already in their
 * fragment layouts (DOT_A / DOT_B, see tir.h and layout.c).
 *
 * For every output tile (im, in) of 16x8 and every K step kk, the thread's
 * A registers (im, kk) are packed into four 32-bit registers, its B
 * registers (in, kk) into two, and one mma.sync updates the four
 * accumulator registers of the tile in place:
 *   f16/bf16 -> f32: mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}...
 *   f16      -> f16: mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 (out_dtype=f16)
 *   tf32     -> f32: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
 *   s8       -> s32: mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
 *   e4m3/e5m2 (each, sm_89) -> f32: mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32
 * Register numbering follows layout.c: A (im*nk + kk)*4*vpr + j,
 * B (in*nk + kk)*2*vpr + j, C ((im*rn + in)*2 + h)*2 + e. */
#include "llvm_ctx.h"
#include "smem.h"
#include "../support/target.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int at_least_1(int v) { return v < 1 ? 1 : v; }

/* Pack `vpr` elements into one i32. */
static LLVMValueRef pack32(LL *l, LLVMValueRef *e, int vpr, DType dt) {
    if (vpr == 1) return LLVMBuildBitCast(l->b, e[0], l->t_i32, "");
    LLVMTypeRef et = ll_type(l, dt);
    LLVMValueRef v = LLVMGetUndef(LLVMVectorType(et, (unsigned)vpr));
    for (int k = 0; k < vpr; k++) v = LLVMBuildInsertElement(l->b, v, e[k], ll_i32(l, k), "");
    return LLVMBuildBitCast(l->b, v, l->t_i32, "");
}

/* One mma.sync of a 16x8 tile: a (4 registers), b (2) and the accumulator (4 elements,
 * updated in place).  An f16 accumulator (f16 inputs, out_dtype=f16) travels as two f16x2
 * registers, elements 2j and 2j+1 in register j, low half first.  A and B have one type but
 * for f8, where e4m3 and e5m2 mix. */
static void issue_mma(LL *l, DType dt, DType bdt, DType acc_dt, const LLVMValueRef *a, const LLVMValueRef *b, LLVMValueRef *acc) {
    static const char *const shape[] = {
        [DT_F16] = "m16n8k16.row.col.f32.f16.f16.f32",
        [DT_BF16] = "m16n8k16.row.col.f32.bf16.bf16.f32",
        [DT_F32] = "m16n8k8.row.col.f32.tf32.tf32.f32",
        [DT_I8] = "m16n8k32.row.col.s32.s8.s8.s32",
    };
    char f8shape[48];
    snprintf(f8shape, sizeof f8shape, "m16n8k32.row.col.f32.%s.%s.f32", dt == DT_F8E5M2 ? "e5m2" : "e4m3",
             bdt == DT_F8E5M2 ? "e5m2" : "e4m3");
    const char *form = dtype_is_storage(dt) ? f8shape : shape[dt]; /* shape[] stops before the f8 types */
    LLVMValueRef args[10];
    for (int k = 0; k < 4; k++) args[k] = a[k];
    for (int k = 0; k < 2; k++) args[4 + k] = b[k];
    if (acc_dt == DT_F16) {
        LLVMTypeRef fields[2] = {l->t_i32, l->t_i32};
        for (int k = 0; k < 2; k++) args[6 + k] = pack32(l, &acc[2 * k], 2, DT_F16);
        LLVMValueRef call = ll_asm(l, LLVMStructTypeInContext(l->ctx, fields, 2, 0),
                                   "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {$0,$1}, {$2,$3,$4,$5}, {$6,$7}, {$8,$9};",
                                   "=r,=r,r,r,r,r,r,r,0,1", args, 8, false);
        LLVMTypeRef h2 = LLVMVectorType(ll_type(l, DT_F16), 2);
        for (int k = 0; k < 2; k++) {
            LLVMValueRef v = LLVMBuildBitCast(l->b, LLVMBuildExtractValue(l->b, call, (unsigned)k, ""), h2, "");
            for (int e = 0; e < 2; e++) acc[2 * k + e] = LLVMBuildExtractElement(l->b, v, ll_i32(l, e), "");
        }
        return;
    }
    bool integer = dt == DT_I8;
    char text[160];
    snprintf(text, sizeof text, "mma.sync.aligned.%s {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};", form);
    LLVMTypeRef ct = integer ? l->t_i32 : l->t_f32;
    LLVMTypeRef fields[4] = {ct, ct, ct, ct};
    for (int k = 0; k < 4; k++) args[6 + k] = acc[k];
    LLVMValueRef call = ll_asm(l, LLVMStructTypeInContext(l->ctx, fields, 4, 0), text,
                               integer ? "=r,=r,=r,=r,r,r,r,r,r,r,0,1,2,3" : "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3", args, 10, false);
    for (int k = 0; k < 4; k++) acc[k] = LLVMBuildExtractValue(l->b, call, (unsigned)k, "");
}

bool ll_emit_dot_mma(LL *l, Inst *i) {
    Func *f = l->f;
    const Type *at = tir_vtype(f, i->ops[0]), *bt = tir_vtype(f, i->ops[1]), *rt = tir_vtype(f, i->res[0]);
    const Layout *la = at->layout, *mma = rt->layout;
    if (!la || la->kind != LAYOUT_DOT_A || !bt->layout || bt->layout->kind != LAYOUT_DOT_B || mma->kind != LAYOUT_MMA) {
        ll_error(l, i->loc, "internal error: dot on tensor cores without fragment layouts");
        return false;
    }
    int kw = la->kw, vpr = la->vpr, wm = mma->wpc[0], wn = mma->wpc[1];
    int M = rt->shape[0], N = rt->shape[1], K = at->shape[1];
    int rm = at_least_1(M / (16 * wm)), rn = at_least_1(N / (8 * wn)), nk = at_least_1(K / kw);
    int na, nb, nc;
    LLVMValueRef *A = ll_get(l, i->ops[0], &na), *B = ll_get(l, i->ops[1], &nb), *C = ll_get(l, i->ops[2], &nc);
    if (na != rm * nk * 4 * vpr || nb != rn * nk * 2 * vpr || nc != rm * rn * 4) {
        ll_error(l, i->loc, "internal error: mma fragment register counts %d/%d/%d do not match the tile", na, nb, nc);
        return false;
    }
    LLVMValueRef *res = ll_new(l, i->res[0], nc);
    for (int r = 0; r < nc; r++) res[r] = C[r];
    /* pack every A and B fragment once */
    LLVMValueRef *pa = calloc((size_t)(rm * nk * 4), sizeof *pa), *pb = calloc((size_t)(rn * nk * 2), sizeof *pb);
    if (!pa || !pb) out_of_memory();
    for (int g = 0; g < rm * nk * 4; g++) pa[g] = pack32(l, &A[g * vpr], vpr, at->dt);
    for (int g = 0; g < rn * nk * 2; g++) pb[g] = pack32(l, &B[g * vpr], vpr, bt->dt);
    for (int kk = 0; kk < nk; kk++)
        for (int im = 0; im < rm; im++)
            for (int in = 0; in < rn; in++) {
                issue_mma(l, at->dt, bt->dt, rt->dt, &pa[(im * nk + kk) * 4], &pb[(in * nk + kk) * 2], &res[(im * rn + in) * 4]);
            }
    free(pa);
    free(pb);
    return true;
}

/* ---- operands staged through shared memory, read with ldmatrix ----
 *
 * Both tiles are written to scratch with 16-byte chunks of each row XOR-
 * swizzled by the row's phase, so the eight row addresses of one ldmatrix
 * phase hit eight different bank groups:
 *   phase = (row / per_phase) % max_phase,  chunk' = chunk ^ phase,
 *   per_phase = max(1, 128 / row_bytes),    max_phase = min(8, row_bytes / 16).
 * A is kept [M][K] (a pipelined stage may be [K][M]: M-contiguous, read
 * with ldmatrix.trans, or 32-bit loads for tf32); B is kept [K][N] and read
 * with ldmatrix.trans (f16, bf16), or kept [N][K] and read with plain
 * ldmatrix (i8, whose fragments pair bytes along K).  tf32 fragments are
 * read with 32-bit loads.  Per K
 * step the thread loads only that step's fragments, so few registers hold
 * operands at once. */

typedef struct Tile {
    int rows, cols, eb; /* physical [rows][cols] of eb-byte elements */
    int off;            /* scratch byte offset */
    LLVMValueRef base;  /* plus this dynamic byte offset (a pipelining stage), or NULL */
    bool panel;         /* rows wider than 128 bytes kept as 128-byte column panels (sm_90a) */
} Tile;

static bool wgmma_target(LL *l) {
    const Target *t = target_find(l->m->arch);
    return t && t->mma == WGMMA;
}

/* On sm_90a a tile whose rows are wider than 128 bytes is kept as [cols*eb/128][rows][128 B]:
 * each panel is then exactly the hardware's 128-byte swizzle layout, which wgmma's matrix
 * descriptors can address (the one-row XOR pattern below is not, for such rows). */
static Tile tile_make(LL *l, int rows, int cols, int eb, int off, LLVMValueRef base) {
    int rb = cols * eb;
    Tile t = {rows, cols, eb, off, base, wgmma_target(l) && rb > 128 && rb % 128 == 0};
    return t;
}

/* Shared pointer / 32-bit shared address of a byte offset inside a tile. */
static LLVMValueRef tile_dyn(LL *l, const Tile *t, LLVMValueRef off) {
    return t->base ? LLVMBuildAdd(l->b, t->base, off, "") : off;
}

static LLVMValueRef swz_offset(LL *l, const Tile *t, LLVMValueRef row, LLVMValueRef col) {
    int row_bytes = t->cols * t->eb, chunk_elems = 16 / t->eb, chunks = row_bytes / 16;
    if (t->panel) { /* panel col/(128/eb), then a 128-byte row swizzled as below */
        int pe = 128 / t->eb;
        LLVMValueRef p = LLVMBuildUDiv(l->b, col, ll_i32(l, pe), "");
        col = LLVMBuildURem(l->b, col, ll_i32(l, pe), "");
        LLVMValueRef base = LLVMBuildAdd(l->b, LLVMBuildMul(l->b, p, ll_i32(l, t->rows * 128), ""),
                                         LLVMBuildMul(l->b, row, ll_i32(l, 128), ""), "");
        LLVMValueRef chunk = LLVMBuildXor(l->b, LLVMBuildUDiv(l->b, col, ll_i32(l, chunk_elems), ""),
                                          LLVMBuildURem(l->b, row, ll_i32(l, 8), ""), "");
        LLVMValueRef within = LLVMBuildURem(l->b, col, ll_i32(l, chunk_elems), "");
        LLVMValueRef off = LLVMBuildAdd(l->b, base, LLVMBuildMul(l->b, chunk, ll_i32(l, 16), ""), "");
        return LLVMBuildAdd(l->b, off, LLVMBuildMul(l->b, within, ll_i32(l, t->eb), ""), "");
    }
    LLVMValueRef base = LLVMBuildMul(l->b, row, ll_i32(l, row_bytes), "");
    if (chunks < 2) return LLVMBuildAdd(l->b, base, LLVMBuildMul(l->b, col, ll_i32(l, t->eb), ""), "");
    int per_phase = 128 / row_bytes < 1 ? 1 : 128 / row_bytes, max_phase = chunks < 8 ? chunks : 8;
    LLVMValueRef phase = LLVMBuildURem(l->b, LLVMBuildUDiv(l->b, row, ll_i32(l, per_phase), ""), ll_i32(l, max_phase), "");
    LLVMValueRef chunk = LLVMBuildUDiv(l->b, col, ll_i32(l, chunk_elems), "");
    LLVMValueRef within = LLVMBuildURem(l->b, col, ll_i32(l, chunk_elems), "");
    chunk = LLVMBuildXor(l->b, chunk, phase, "");
    LLVMValueRef off = LLVMBuildAdd(l->b, base, LLVMBuildMul(l->b, chunk, ll_i32(l, 16), ""), "");
    return LLVMBuildAdd(l->b, off, LLVMBuildMul(l->b, within, ll_i32(l, t->eb), ""), "");
}

/* swz_offset on numbers: the byte offset of (row, col) in tile t, for rows and columns a thread holds */
static int64_t swz_offset_host(const Tile *t, int64_t row, int64_t col) {
    int row_bytes = t->cols * t->eb, chunk_elems = 16 / t->eb, chunks = row_bytes / 16;
    if (t->panel) {
        int pe = 128 / t->eb;
        int64_t p = col / pe;
        col %= pe;
        return p * t->rows * 128 + row * 128 + ((col / chunk_elems) ^ (row % 8)) * 16 + col % chunk_elems * t->eb;
    }
    if (chunks < 2) return row * row_bytes + col * t->eb;
    int per_phase = 128 / row_bytes < 1 ? 1 : 128 / row_bytes, max_phase = chunks < 8 ? chunks : 8;
    int64_t phase = row / per_phase % max_phase;
    return row * row_bytes + ((col / chunk_elems) ^ phase) * 16 + col % chunk_elems * t->eb;
}

/* A tile's element addresses for LLAddrs (llvm_ctx.h): register (i0, i1) at swz_offset(i0, i1), or (i1, i0)
 * transposed, with col0 taken from i1 first (stage_cols' slice). */
typedef struct TileAddrs {
    LLAddrs a;
    const Tile *t;
    bool transposed;
    int col0;
} TileAddrs;

static bool tile_host_offset(const void *ctx, const int64_t *c, int64_t *off) {
    const TileAddrs *A = ctx;
    bool row = A->a.ty->rank == 1; /* a rank-1 tensor: row 0 of the tile */
    int64_t i0 = row ? 0 : c[0], i1 = (row ? c[0] : c[1]) - A->col0;
    if (i0 < 0 || i1 < 0 || i0 > INT32_MAX || i1 > INT32_MAX) return false; /* the IR divides them unsigned */
    *off = A->transposed ? swz_offset_host(A->t, i1, i0) : swz_offset_host(A->t, i0, i1);
    return true;
}

static void tile_addrs_init(TileAddrs *A, const Tile *t, const Type *ty, const LayoutRegs *lr, bool transposed, int col0) {
    A->t = t, A->transposed = transposed, A->col0 = col0;
    ll_addrs_init(&A->a, ty, lr, tile_host_offset, A);
}

/* Shared pointer to register r's element in the tile. */
static LLVMValueRef tile_addrs_ptr(LL *l, TileAddrs *A, int r) {
    LLVMValueRef p = ll_addrs_find(l, &A->a, r);
    if (p) return p;
    const Tile *t = A->t;
    bool row = A->a.ty->rank == 1;
    LLVMValueRef i0 = row ? ll_i32(l, 0) : ll_coord(l, A->a.ty, r, 0), i1 = ll_coord(l, A->a.ty, r, row ? 0 : 1);
    if (A->col0) i1 = LLVMBuildSub(l->b, i1, ll_i32(l, A->col0), "");
    p = ll_smem_ptr(l, t->off, tile_dyn(l, t, A->transposed ? swz_offset(l, t, i1, i0) : swz_offset(l, t, i0, i1)));
    ll_addrs_add(&A->a, p);
    return p;
}

static void tile_addrs_free(TileAddrs *A) { ll_addrs_free(&A->a); }

static LLVMValueRef smem_addr32(LL *l, int off, LLVMValueRef dyn) {
    return LLVMBuildPtrToInt(l->b, ll_smem_ptr(l, off, dyn), l->t_i32, "");
}

/* Registers consecutive along dim `d` of a blocked layout whose fastest dim it is, that one 16-byte-or-
 * smaller access can take. */
static int run_along(const LayoutRegs *lr, const Type *t, int r, int d, int max) {
    const Layout *lay = t->layout;
    if (lay->kind != LAYOUT_BLOCKED || lay->order[0] != d) return 1;
    ThreadTerm tt = layout_thread_term(lay, d);
    int v = 1;
    while (v * 2 <= max && r + v * 2 <= lr->n) {
        int w = v * 2;
        bool ok = lr->stat[r][d] % w == 0 && (tt.lane_count <= 1 || tt.lane_mul % w == 0) && (tt.warp_count <= 1 || tt.warp_mul % w == 0);
        for (int j = 1; ok && j < w; j++) {
            ok = lr->stat[r + j][d] == lr->stat[r][d] + j && lr->raw[r + j][d] == lr->raw[r][d] + j;
            for (int e = 0; ok && e < t->rank; e++) ok = e == d || lr->stat[r + j][e] == lr->stat[r][e];
        }
        if (!ok) break;
        v = w;
    }
    return v;
}

/* Write tensor `v` (rank 2) into tile `t`; transposed: element (i, j) goes to row j, col i.  With
 * width > 0 only its columns [col0, col0 + width), to columns from 0 (registers decide their chunk by
 * their static column: layout_cols_in_chunks). */
static void stage_cols(LL *l, ValueId v, const Tile *t, bool transposed, int col0, int width) {
    const Type *ty = tir_vtype(l->f, v);
    const LayoutRegs *lr = ll_regs_of(l, ty);
    LLVMValueRef *vals = ll_get(l, v, NULL);
    LLVMTypeRef et = ll_type(l, ty->dt);
    TileAddrs addrs;
    tile_addrs_init(&addrs, t, ty, lr, transposed, width > 0 ? col0 : 0);
    for (int r = 0; r < lr->n;) {
        bool replica = false;
        for (int d = 0; d < 2; d++) replica |= lr->raw[r][d] >= ty->shape[d];
        if (width > 0 && lr->stat[r][1] / width != col0 / width) replica = true; /* another slice's */
        int run = transposed ? 1 : run_along(lr, ty, r, 1, 16 / t->eb);
        if (replica) {
            r++;
            continue;
        }
        LLVMValueRef ptr = tile_addrs_ptr(l, &addrs, r);
        LLVMValueRef val = vals[r];
        if (run > 1) {
            val = LLVMGetPoison(LLVMVectorType(et, (unsigned)run));
            for (int j = 0; j < run; j++) val = LLVMBuildInsertElement(l->b, val, vals[r + j], ll_i32(l, j), "");
        }
        LLVMValueRef own = ll_owner(l, ty, r);
        bool always = LLVMIsConstant(own) && LLVMConstIntGetZExtValue(own);
        LLVMBasicBlockRef then = NULL, join = NULL;
        if (!always) {
            then = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "stage");
            join = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "stage.join");
            LLVMBuildCondBr(l->b, own, then, join);
            LLVMPositionBuilderAtEnd(l->b, then);
        }
        LLVMValueRef st = LLVMBuildStore(l->b, val, ptr);
        LLVMSetAlignment(st, (unsigned)(t->eb * run));
        if (!always) {
            LLVMBuildBr(l->b, join);
            LLVMPositionBuilderAtEnd(l->b, join);
        }
        r += run;
    }
    tile_addrs_free(&addrs);
}


static void stage(LL *l, ValueId v, const Tile *t, bool transposed) { stage_cols(l, v, t, transposed, 0, 0); }

/* The inverse of stage(): tensor `res` (rank 2, a register layout; or rank 1, row 0 of the tile) read
 * from tile t, whose rows run along dim 1 of the tensor (dim 0 when transposed); elements consecutive
 * along the tile's rows in one vector load each; replicated registers read the element they copy. */
static void unstage(LL *l, ValueId res, const Tile *t, bool transposed) {
    const Type *ty = tir_vtype(l->f, res);
    const LayoutRegs *lr = ll_regs_of(l, ty);
    int n = lr->n, cd = transposed || ty->rank == 1 ? 0 : 1;
    LLVMValueRef *out = ll_new(l, res, n);
    LLVMTypeRef et = ll_type(l, ty->dt);
    TileAddrs addrs;
    tile_addrs_init(&addrs, t, ty, lr, transposed, 0);
    for (int r = 0; r < n;) {
        int run = run_along(lr, ty, r, cd, 16 / t->eb);
        LLVMValueRef p = tile_addrs_ptr(l, &addrs, r);
        if (run > 1) {
            LLVMValueRef v = LLVMBuildLoad2(l->b, LLVMVectorType(et, (unsigned)run), p, "");
            LLVMSetAlignment(v, (unsigned)(t->eb * run));
            for (int j = 0; j < run; j++) out[r + j] = LLVMBuildExtractElement(l->b, v, ll_i32(l, j), "");
        } else {
            LLVMValueRef v = LLVMBuildLoad2(l->b, et, p, "");
            LLVMSetAlignment(v, (unsigned)t->eb);
            out[r] = v;
        }
        r += run;
    }
    tile_addrs_free(&addrs);
}

/* stage() for a 16-bit tile in an mma accumulator layout on sm_90a: stmatrix.x4 writes four 8x8
 * matrices a warp at once, whose fragments are the accumulator's own (register j of lane l: row l/4,
 * columns 2(l%4), +1 of matrix j).  For each 16-row slab im and pair of 8-column groups in, in + 1 of
 * a warp: matrices (rows 0-7, in), (8-15, in), (0-7, in + 1), (8-15, in + 1); lane l gives the
 * address of row l%8 of matrix l/8, whose 16 bytes the swizzle keeps together.  False (nothing
 * emitted) where the layout does not have that shape: stage() then writes element runs. */
static bool stage_stmatrix(LL *l, ValueId v, const Tile *t) {
    const Type *ty = tir_vtype(l->f, v);
    const Layout *m = ty->layout;
    if (!wgmma_target(l) || !m || m->kind != LAYOUT_MMA || ty->rank != 2 || dtype_bits(ty->dt) != 16 || t->eb != 2) return false;
    int wm = m->wpc[0], wn = m->wpc[1], M = ty->shape[0], N = ty->shape[1];
    if (M % (16 * wm) || N % (16 * wn) || t->rows != M || t->cols != N || t->cols * t->eb < 16) return false;
    int rm = M / (16 * wm), rn = N / (8 * wn);
    LLVMValueRef *vals = ll_get(l, v, NULL);
    LLVMValueRef lane = l->lane;
    LLVMValueRef g = LLVMBuildLShr(l->b, lane, ll_i32(l, 2), ""), t2 = LLVMBuildShl(l->b, LLVMBuildAnd(l->b, lane, ll_i32(l, 3), ""), ll_i32(l, 1), "");
    LLVMValueRef mat = LLVMBuildLShr(l->b, lane, ll_i32(l, 3), "");
    LLVMValueRef drow = LLVMBuildAdd(l->b, LLVMBuildAnd(l->b, lane, ll_i32(l, 7), ""),
                                     LLVMBuildShl(l->b, LLVMBuildAnd(l->b, mat, ll_i32(l, 1), ""), ll_i32(l, 3), ""), "");
    LLVMValueRef dcol = LLVMBuildMul(l->b, LLVMBuildLShr(l->b, mat, ll_i32(l, 1), ""), ll_i32(l, 8 * wn), "");
    for (int im = 0; im < rm; im++)
        for (int in = 0; in < rn; in += 2) {
            int r0 = (im * rn + in) * 4; /* (h, e) = (0, 0) of group in; group in + 1 starts at r0 + 4 */
            LLVMValueRef row = LLVMBuildAdd(l->b, LLVMBuildSub(l->b, ll_coord(l, ty, r0, 0), g, ""), drow, "");
            LLVMValueRef col = LLVMBuildAdd(l->b, LLVMBuildSub(l->b, ll_coord(l, ty, r0, 1), t2, ""), dcol, "");
            LLVMValueRef args[5];
            args[0] = smem_addr32(l, t->off, tile_dyn(l, t, swz_offset(l, t, row, col)));
            for (int j = 0; j < 4; j++) args[1 + j] = pack32(l, &vals[r0 + (j >> 1) * 4 + (j & 1) * 2], 2, ty->dt);
            ll_asm(l, l->t_void, "stmatrix.sync.aligned.m8n8.x4.shared.b16 [$0], {$1, $2, $3, $4};", "r,r,r,r,r,~{memory}", args, 5, true);
        }
    return true;
}

/* ldmatrix.x{n}[.trans]: lane supplies the row address (row, col) of its matrix. */
static void ldmatrix(LL *l, int n, bool trans, LLVMValueRef addr, LLVMValueRef *out) {
    char text[160], cons[64];
    snprintf(text, sizeof text, "ldmatrix.sync.aligned.m8n8.x%d%s.shared.b16 {%s}, [$%d];", n, trans ? ".trans" : "",
             n == 1 ? "$0" : n == 2 ? "$0,$1" : "$0,$1,$2,$3", n);
    snprintf(cons, sizeof cons, "%s,r", n == 1 ? "=r" : n == 2 ? "=r,=r" : "=r,=r,=r,=r");
    LLVMTypeRef fields[4] = {l->t_i32, l->t_i32, l->t_i32, l->t_i32};
    LLVMTypeRef ret = n == 1 ? l->t_i32 : LLVMStructTypeInContext(l->ctx, fields, (unsigned)n, 0);
    LLVMValueRef call = ll_asm(l, ret, text, cons, &addr, 1, true);
    for (int k = 0; k < n; k++) out[k] = n == 1 ? call : LLVMBuildExtractValue(l->b, call, (unsigned)k, "");
}

/* ---- wgmma (sm_90a) ----
 * With warps [nw, 1] (assign_layout), warpgroup g = warp/4 owns rows 64g + 16*nw*im .. +63 of
 * every M repetition im, and its mma.sync accumulator registers are, register for register,
 * wgmma's m64nN D fragment (emu/exec_wgmma.c states it from the ISA).  So each (im, N chunk of
 * at most 256) issues one wgmma.mma_async per K step:
 *   1. operands from shared memory through 64-bit matrix descriptors: start address >> 4,
 *      leading / stride byte offsets >> 4, swizzle mode.  A tile stored K-major (A [M][K], B
 *      kept [N][K]) has rows of R = 32, 64 or 128 bytes (swizzle W = R; the XOR pattern of
 *      swz_offset is the hardware's) or 128-byte panels (tile_make); SBO = 8 rows = 8W bytes, a
 *      K step advances the start by its bytes.  B kept [K][N] and A kept [K][M] (a pipelined
 *      stage of a transposed A) are MN-major (f16/bf16 only, imm-trans-b / imm-trans-a = 1):
 *      SBO = 8 K rows, LBO = one panel; such an A has 128-byte rows or panels (a warpgroup's
 *      64 rows of M are one panel's width);
 *   2. A already in registers (a chained dot's P, or a stage kept [K][M] of tf32 or f8 loaded
 *      into them: wg_a_regs) is passed as mma's A fragment; left in flight past the iteration,
 *      its loop runs two bodies a trip (ll_dot_a_regs_in_flight);
 *   3. wgmma.fence before, commit_group after, wait_group 0 tying every accumulator register,
 *      so no read of D can move above the wait (or, pending groups allowed in a pipelined loop,
 *      wait_group 1 with the accumulators left in flight).  fence.proxy.async first: the tiles were
 *      written by st.shared / cp.async (the generic proxy) and wgmma reads through the async
 *      proxy. */
/* ".dtype.atype.btype" of a wgmma on a and b, NULL when there is none. */
static const char *wg_types(DType a, DType b) {
    if (a == DT_F16 && b == a) return "f32.f16.f16";
    if (a == DT_BF16 && b == a) return "f32.bf16.bf16";
    if (a == DT_F32 && b == a) return "f32.tf32.tf32";
    if (a == DT_I8 && b == a) return "s32.s8.s8";
    static const char *const f8[2][2] = {{"f32.e4m3.e4m3", "f32.e4m3.e5m2"}, {"f32.e5m2.e4m3", "f32.e5m2.e5m2"}};
    if ((a == DT_F8E4M3 || a == DT_F8E5M2) && (b == DT_F8E4M3 || b == DT_F8E5M2)) return f8[a == DT_F8E5M2][b == DT_F8E5M2];
    return NULL;
}

/* Swizzle width of a tile: its row bytes, 128 for panels; 0 when wgmma cannot address it. */
static int wg_width(const Tile *t) {
    if (t->panel) return 128;
    int rb = t->cols * t->eb;
    return rb == 32 || rb == 64 || rb == 128 ? rb : 0;
}

/* N per wgmma: all of N up to 256, else equal chunks of 256 or 128. */
static int wg_chunk(int N, DType dt) {
    int c = N <= 256 ? N : N % 256 == 0 ? 256 : N % 128 == 0 ? 128 : 0;
    if (dtype_bits(dt) == 8 && c > 32 && c % 16) return 0; /* s8, e4m3, e5m2: n = 8, 16, 24, 32, then multiples of 16 */
    return c;
}

/* a_frag: A is a chained dot's 16-bit fragments; a_regs: A is read from its stage into registers
 * (wg_a_regs), so its shared tile's width and major-ness do not matter */
static bool wgmma_fits(LL *l, Inst *i, const Tile *ta, const Tile *tb, bool a_mk, bool b_nk, bool a_frag, bool a_regs) {
    const Type *at = tir_vtype(l->f, i->ops[0]), *rt = tir_vtype(l->f, i->res[0]);
    const Layout *mma = rt->layout;
    int wm = mma->wpc[0], M = rt->shape[0], N = rt->shape[1];
    DType dt = at->dt;
    if (!wgmma_target(l) || !layout_is_warpgroup_mma(mma) || M % (16 * wm) || N % 8 || !wg_types(dt, tir_vtype(l->f, i->ops[1])->dt))
        return false;
    if ((dt == DT_I8 && rt->dt != DT_I32) || (dt != DT_I8 && rt->dt != DT_F32)) return false;
    if (!wg_chunk(N, dt)) return false;
    if (a_frag ? (dt != DT_F16 && dt != DT_BF16) : !a_regs && !wg_width(ta)) return false;
    if (!a_frag && !a_regs && !a_mk && ((dt != DT_F16 && dt != DT_BF16) || wg_width(ta) != 128)) return false; /* MN-major A */
    if (!wg_width(tb)) return false;
    if (!b_nk && dt != DT_F16 && dt != DT_BF16) return false; /* only 16-bit B may be MN-major */
    if (!b_nk && wg_chunk(N, dt) < N && wg_chunk(N, dt) * tb->eb % 128) return false;
    return true;
}

/* Descriptor of tile t at byte offset `off` (a dynamic i32, multiple of 16) from its start. */
static LLVMValueRef wg_desc(LL *l, const Tile *t, bool mn_major, LLVMValueRef off) {
    int W = wg_width(t);
    uint64_t lbo = mn_major ? (uint64_t)(t->panel ? t->rows * 128 : 8 * W) : 16;
    uint64_t sbo = (uint64_t)(8 * W);
    uint64_t swz = W == 128 ? 1 : W == 64 ? 2 : 3;
    uint64_t hi = ((lbo >> 4) & 0x3FFF) << 16 | ((sbo >> 4) & 0x3FFF) << 32 | swz << 62;
    LLVMValueRef addr = smem_addr32(l, t->off, tile_dyn(l, t, off));
    LLVMValueRef lo = LLVMBuildLShr(l->b, LLVMBuildAnd(l->b, addr, ll_i32(l, 0x3FFFF), ""), ll_i32(l, 4), "");
    lo = LLVMBuildZExt(l->b, lo, l->t_i64, "");
    return LLVMBuildOr(l->b, lo, LLVMConstInt(l->t_i64, hi, 0), "");
}

/* Byte offset, inside tile t, of row r and the column byte cb of a K-major operand (rows M or N). */
static int wg_kmajor_off(const Tile *t, int r, int cb) {
    if (t->panel) return cb / 128 * t->rows * 128 + r * 128 + cb % 128;
    return r * t->cols * t->eb + cb;
}

/* Byte offset, inside tile t, of K row k and column mn of an MN-major operand (B [K][N], A [K][M]). */
static int wg_mnmajor_off(const Tile *t, int k, int mn) {
    if (t->panel) return mn * t->eb / 128 * t->rows * 128 + k * 128;
    return k * t->cols * t->eb + mn * t->eb;
}

static LLVMValueRef desc_plus(LL *l, LLVMValueRef d, int bytes) {
    return bytes ? LLVMBuildAdd(l->b, d, LLVMConstInt(l->t_i64, (uint64_t)(bytes >> 4), 0), "") : d;
}

static void wait_tied(LL *l, LLVMValueRef *v, int nc, bool integer, int pending);

/* A's wgmma registers read from a stage kept [K][M] (a transposed tf32 or 8-bit A, which wgmma
 * reads from shared memory K-major only): register (im * nk + kk) * 4 + j of warp w (its 16 rows
 * of the warpgroup's 64, as the mma.sync A fragment) holds row 16w + lane/4 + 8(j&1) + 16 wm im and
 * the E = 4 / eb columns from kw kk + E (lane%4) + 4E (j>>1), each element one shared load (the
 * tile is M-contiguous) packed low first.  Loaded before the first wgmma, so nothing writes an A
 * register between them. */
static LLVMValueRef *wg_a_regs(LL *l, const Tile *ta, int wm, int rm, int nk, int kw) {
    int E = 4 / ta->eb;
    LLVMValueRef *pa = malloc(sizeof *pa * (size_t)(rm * nk * 4));
    if (!pa) out_of_memory();
    LLVMValueRef g = LLVMBuildLShr(l->b, l->lane, ll_i32(l, 2), ""), t4 = LLVMBuildAnd(l->b, l->lane, ll_i32(l, 3), "");
    LLVMValueRef row_m = LLVMBuildMul(l->b, LLVMBuildURem(l->b, l->warp, ll_i32(l, wm), ""), ll_i32(l, 16), "");
    LLVMTypeRef et = ta->eb == 4 ? l->t_i32 : l->t_i8;
    /* the swizzle repeats every 8 rows (K here) and kw is a multiple of 8, so K step kk's addresses are
     * step 0's plus kw kk rows: 4 E swizzled offsets computed a slab, not 4 E nk */
    int kstride = kw * (ta->panel ? 128 : ta->cols * ta->eb);
    LLVMValueRef *base = malloc(sizeof *base * (size_t)(4 * E));
    if (!base) out_of_memory();
    for (int im = 0; im < rm; im++) {
        for (int j = 0; j < 4; j++) {
            LLVMValueRef row = LLVMBuildAdd(l->b, LLVMBuildAdd(l->b, row_m, g, ""), ll_i32(l, im * 16 * wm + 8 * (j & 1)), "");
            for (int e = 0; e < E; e++) {
                LLVMValueRef col = LLVMBuildAdd(l->b, LLVMBuildMul(l->b, t4, ll_i32(l, E), ""), ll_i32(l, 4 * E * (j >> 1) + e), "");
                base[j * E + e] = swz_offset(l, ta, col, row);
            }
        }
        for (int kk = 0; kk < nk; kk++)
            for (int j = 0; j < 4; j++) {
                LLVMValueRef reg = NULL;
                for (int e = 0; e < E; e++) {
                    LLVMValueRef off = LLVMBuildAdd(l->b, base[j * E + e], ll_i32(l, kk * kstride), "");
                    LLVMValueRef v = LLVMBuildLoad2(l->b, et, ll_smem_ptr(l, ta->off, tile_dyn(l, ta, off)), "");
                    LLVMSetAlignment(v, (unsigned)ta->eb);
                    if (E > 1) {
                        v = LLVMBuildShl(l->b, LLVMBuildZExt(l->b, v, l->t_i32, ""), ll_i32(l, 8 * e), "");
                        v = reg ? LLVMBuildOr(l->b, reg, v, "") : v;
                    }
                    reg = v;
                }
                pa[(im * nk + kk) * 4 + j] = reg;
            }
    }
    free(base);
    return pa;
}

/* Dot i is a wgmma whose A is in registers (a chained dot's fragments, or a stage kept [K][M] of tf32
 * or f8 loaded into them: wg_a_regs) and whose group stays in flight past the end of its loop's
 * iteration (pending > 0 and no wgmma_wait of its result after it in the body: software_pipeline's
 * acc = dot(a, b, acc) left one group pending).  The PTX ISA lets no instruction write a register an
 * in-flight wgmma reads, A included, before the wait that retires it; the next iteration's copy of
 * the same instructions would write the same registers while this wgmma may still read them, so
 * emit_loop emits two bodies a trip: the wgmma of each reads the registers of its own body, and
 * the other body's wait_group 1 retires it before its body comes round again. */
bool ll_dot_a_regs_in_flight(LL *l, const Inst *i) {
    if (i->op != OP_DOT || i->a.ival <= 0 || !wgmma_target(l)) return false;
    const Type *at = tir_vtype(l->f, i->ops[0]), *rt = tir_vtype(l->f, i->res[0]);
    if (!at->layout || !layout_is_warpgroup_mma(rt->layout)) return false;
    bool a_frag = at->layout->kind == LAYOUT_DOT_A;
    bool a_regs = at->layout->kind == LAYOUT_SHARED && at->layout->order[0] == 0 && at->dt != DT_F16 && at->dt != DT_BF16;
    if (!a_frag && !a_regs) return false;
    for (const Inst *n = i->next; n; n = n->next)
        if (n->op == OP_WGMMA_WAIT && n->ops[0] == i->res[0]) return false;
    return true;
}

/* 8-bit B kept [K][N] in tile s (a stage, N contiguous) copied into tile d kept [N][K] (the K-major form
 * wgmma and the s8/f8 fragments read): the computing threads take blocks of 16 K rows x 4 N columns
 * (block b: columns 4 (b % (N/4)), rows 16 (b / (N/4)); a warp's threads side by side along N), each
 * loads its block's 16 four-byte runs (one a K row), transposes them as four 4x4-byte squares (8 prmt
 * a square) and stores each column's 16 K bytes with one 16-byte store. */
static void restage_b(LL *l, const Tile *s, const Tile *d, int K, int N) {
    int nt = l->f->num_warps * 32, per_k = N / 4, nb = K / 16 * per_k;
    LLVMTypeRef v4 = LLVMVectorType(l->t_i32, 4);
    for (int j = 0; j * nt < nb; j++) {
        LLVMValueRef b = LLVMBuildAdd(l->b, l->tid, ll_i32(l, j * nt), "");
        LLVMBasicBlockRef join = NULL;
        if ((j + 1) * nt > nb) { /* the last round: some threads have no block */
            LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "restage");
            join = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "restage.join");
            LLVMBuildCondBr(l->b, LLVMBuildICmp(l->b, LLVMIntULT, b, ll_i32(l, nb), ""), body, join);
            LLVMPositionBuilderAtEnd(l->b, body);
        }
        LLVMValueRef n0 = LLVMBuildMul(l->b, LLVMBuildURem(l->b, b, ll_i32(l, per_k), ""), ll_i32(l, 4), "");
        LLVMValueRef k0 = LLVMBuildMul(l->b, LLVMBuildUDiv(l->b, b, ll_i32(l, per_k), ""), ll_i32(l, 16), "");
        LLVMValueRef w[16], col[4][4];
        for (int r = 0; r < 16; r++) {
            LLVMValueRef off = swz_offset(l, s, LLVMBuildAdd(l->b, k0, ll_i32(l, r), ""), n0);
            w[r] = LLVMBuildLoad2(l->b, l->t_i32, ll_smem_ptr(l, s->off, tile_dyn(l, s, off)), "");
            LLVMSetAlignment(w[r], 4);
        }
        /* rows a, b, c, d (byte i: column i) -> columns: [a0 b0 a1 b1], [a2 b2 a3 b3], likewise c, d, then
         * [a0 b0 c0 d0] ... [a3 b3 c3 d3] */
        static const char *const sel[4] = {"0x5140", "0x7362", "0x5410", "0x7632"};
        for (int q = 0; q < 4; q++) {
            LLVMValueRef h[4];
            for (int p = 0; p < 4; p++) {
                char text[48];
                snprintf(text, sizeof text, "prmt.b32 $0, $1, $2, %s;", sel[p & 1]);
                LLVMValueRef args[2] = {w[4 * q + (p >> 1) * 2], w[4 * q + (p >> 1) * 2 + 1]};
                h[p] = ll_asm(l, l->t_i32, text, "=r,r,r", args, 2, false);
            }
            for (int c = 0; c < 4; c++) {
                char text[48];
                snprintf(text, sizeof text, "prmt.b32 $0, $1, $2, %s;", sel[2 + (c & 1)]);
                LLVMValueRef args[2] = {h[c >> 1 ? 1 : 0], h[c >> 1 ? 3 : 2]};
                col[c][q] = ll_asm(l, l->t_i32, text, "=r,r,r", args, 2, false);
            }
        }
        for (int c = 0; c < 4; c++) {
            LLVMValueRef v = LLVMGetUndef(v4);
            for (int q = 0; q < 4; q++) v = LLVMBuildInsertElement(l->b, v, col[c][q], ll_i32(l, q), "");
            LLVMValueRef off = swz_offset(l, d, LLVMBuildAdd(l->b, n0, ll_i32(l, c), ""), k0);
            LLVMSetAlignment(LLVMBuildStore(l->b, v, ll_smem_ptr(l, d->off, tile_dyn(l, d, off))), 16);
        }
        if (join) {
            LLVMBuildBr(l->b, join);
            LLVMPositionBuilderAtEnd(l->b, join);
        }
    }
}

/* pa: A's registers (rm * nk * 4, packed), or NULL for A read through a descriptor. */
static void emit_wgmma(LL *l, Inst *i, const Tile *ta, const Tile *tb, bool a_mk, bool b_nk, LLVMValueRef *pa, LLVMValueRef *res) {
    const Type *at = tir_vtype(l->f, i->ops[0]), *rt = tir_vtype(l->f, i->res[0]);
    int wm = rt->layout->wpc[0], M = rt->shape[0], N = rt->shape[1], K = at->shape[1];
    DType dt = at->dt;
    int eb = dtype_bits(dt) / 8, kw = 32 / eb, rm = M / (16 * wm), rn = N / 8, nk = K / kw;
    int nch = wg_chunk(N, dt), per = nch / 2; /* accumulator registers per wgmma: 64 x nch over 128 threads */
    bool integer = dt == DT_I8, f16 = dt == DT_F16 || dt == DT_BF16;
    ll_asm(l, l->t_void, "wgmma.fence.sync.aligned;", "~{memory}", NULL, 0, true);
    /* descriptors at K step 0: A at this warpgroup's first row, B at its start */
    /* this warpgroup's index along M: 0 with one warpgroup, else warp/4 broadcast from lane 0 so
     * ptxas sees a warp-uniform value and keeps the descriptors in uniform registers */
    LLVMValueRef wg = ll_i32(l, 0);
    if (wm > 4) { /* computed once, in the entry block */
        LLInsertPoint ip = ll_enter_entry(l);
        LLVMValueRef args[4] = {ll_i32(l, -1), LLVMBuildUDiv(l->b, l->warp, ll_i32(l, 4), ""), ll_i32(l, 0), ll_i32(l, 31)};
        wg = ll_intr(l, "llvm.nvvm.shfl.sync.idx.i32", NULL, 0, args, 4);
        ll_leave_entry(l, ip);
    }
    LLVMValueRef da = NULL, db = wg_desc(l, tb, !b_nk, ll_i32(l, 0));
    if (!pa) { /* a warpgroup's 64 rows: 64 K-major rows, or (MN-major) 128 bytes along M, one panel */
        int rs = ta->panel ? 128 : ta->cols * ta->eb, step = a_mk ? 64 * rs : wg_mnmajor_off(ta, 0, 64);
        da = wg_desc(l, ta, !a_mk, LLVMBuildMul(l->b, wg, ll_i32(l, step), ""));
    }
    int nargs = per + 6 + per;
    LLVMValueRef *args = malloc(sizeof *args * (size_t)nargs);
    LLVMTypeRef *fields = malloc(sizeof *fields * (size_t)per);
    size_t cap = (size_t)per * 8 + 256;
    char *text = malloc(cap), *cons = malloc(cap);
    if (!args || !fields || !text || !cons) out_of_memory();
    LLVMTypeRef ct = integer ? l->t_i32 : l->t_f32;
    for (int r = 0; r < per; r++) fields[r] = ct;
    LLVMTypeRef sty = LLVMStructTypeInContext(l->ctx, fields, (unsigned)per, 0);
    LLVMValueRef one = ll_i32(l, 1);
    for (int kk = 0; kk < nk; kk++)
        for (int im = 0; im < rm; im++)
            for (int c0 = 0; c0 < N; c0 += nch) {
                /* operands: $0..per-1 D, then A (descriptor or 4 registers), B, scale-d, then D tied */
                int n = 0, na;
                if (pa) {
                    for (int j = 0; j < 4; j++) args[n++] = pa[(im * nk + kk) * 4 + j];
                    na = 4;
                } else {
                    args[n++] = desc_plus(l, da, a_mk ? wg_kmajor_off(ta, im * 16 * wm, kk * 32) : wg_mnmajor_off(ta, kk * kw, im * 16 * wm));
                    na = 1;
                }
                int boff = b_nk ? wg_kmajor_off(tb, c0, kk * 32) : wg_mnmajor_off(tb, kk * kw, c0);
                args[n++] = desc_plus(l, db, boff);
                int r0 = (im * rn + c0 / 8) * 4;
                /* an accumulator that starts from zeros (a constant: +0.0, not -0.0) is not read:
                 * scale-d 0, so no register is zeroed for it (LLVM would materialize the zeros
                 * after the fence, and ptxas then injects a warpgroup.arrive: info C7519) */
                bool zero = true;
                for (int r = 0; r < per && zero; r++) zero = LLVMIsConstant(res[r0 + r]) && LLVMIsNull(res[r0 + r]);
                args[n++] = zero ? ll_i32(l, 0) : one;
                for (int r = 0; r < per; r++) args[n++] = zero ? LLVMGetUndef(ct) : res[r0 + r];
                int p = snprintf(text, cap, "{\n.reg .pred p;\nsetp.ne.b32 p, $%d, 0;\nwgmma.mma_async.sync.aligned.m64n%dk%d.%s {",
                                 per + na + 1, nch, kw, wg_types(dt, tir_vtype(l->f, i->ops[1])->dt));
                for (int r = 0; r < per; r++) p += snprintf(text + p, cap - (size_t)p, "%s$%d", r ? "," : "", r);
                if (pa) p += snprintf(text + p, cap - (size_t)p, "}, {$%d,$%d,$%d,$%d}, $%d, p", per, per + 1, per + 2, per + 3, per + 4);
                else p += snprintf(text + p, cap - (size_t)p, "}, $%d, $%d, p", per, per + 1);
                if (f16 && pa) p += snprintf(text + p, cap - (size_t)p, ", 1, 1, %d", b_nk ? 0 : 1);
                else if (f16) p += snprintf(text + p, cap - (size_t)p, ", 1, 1, %d, %d", a_mk ? 0 : 1, b_nk ? 0 : 1);
                else if (!integer) p += snprintf(text + p, cap - (size_t)p, ", 1, 1");
                snprintf(text + p, cap - (size_t)p, ";\n}");
                int q = 0;
                for (int r = 0; r < per; r++) q += snprintf(cons + q, cap - (size_t)q, "%s", integer ? "=r," : "=f,");
                for (int j = 0; j < na; j++) q += snprintf(cons + q, cap - (size_t)q, "%s,", pa ? "r" : "l");
                q += snprintf(cons + q, cap - (size_t)q, "l,r");
                for (int r = 0; r < per; r++) q += snprintf(cons + q, cap - (size_t)q, ",%d", r);
                LLVMValueRef call = ll_asm(l, sty, text, cons, args, n, true);
                for (int r = 0; r < per; r++) res[r0 + r] = LLVMBuildExtractValue(l->b, call, (unsigned)r, "");
            }
    ll_asm(l, l->t_void, "wgmma.commit_group.sync.aligned;", "~{memory}", NULL, 0, true);
    /* a wgmma_wait of this result later in the block waits instead (pingpong passes the turn in
     * between; overlap issues the next dot before it) */
    bool waited = false;
    for (const Inst *nx = i->next; nx && !waited; nx = nx->next)
        waited = nx->op == OP_WGMMA_WAIT && nx->ops[0] == i->res[0];
    if (i->a.ival > 0) { /* pending groups allowed (a pipelined loop): the accumulators stay in flight */
        char w[64];
        snprintf(w, sizeof w, "wgmma.wait_group.sync.aligned %d;", (int)i->a.ival);
        if (!waited) ll_asm(l, l->t_void, w, "~{memory}", NULL, 0, true);
    } else {
        wait_tied(l, res, rm * rn * 4, integer, 0);
    }
    free(args);
    free(fields);
    free(text);
    free(cons);
}

/* wgmma.wait_group `pending` with the n accumulator registers v tied through it: reads of them
 * cannot move above it. */
static void wait_tied(LL *l, LLVMValueRef *v, int nc, bool integer, int pending) {
    LLVMTypeRef ct = integer ? l->t_i32 : l->t_f32;
    LLVMTypeRef *wf = malloc(sizeof *wf * (size_t)nc);
    char *wc = malloc((size_t)nc * 8 + 16);
    if (!wf || !wc) out_of_memory();
    int q = 0;
    for (int r = 0; r < nc; r++) {
        wf[r] = ct;
        q += sprintf(wc + q, "%s%s", r ? "," : "", integer ? "=r" : "=f");
    }
    for (int r = 0; r < nc; r++) q += sprintf(wc + q, ",%d", r);
    char text[48];
    snprintf(text, sizeof text, "wgmma.wait_group.sync.aligned %d;", pending);
    LLVMValueRef w = ll_asm(l, LLVMStructTypeInContext(l->ctx, wf, (unsigned)nc, 0), text, wc, v, nc, true);
    for (int r = 0; r < nc; r++) v[r] = LLVMBuildExtractValue(l->b, w, (unsigned)r, "");
    free(wf);
    free(wc);
}

/* wgmma reads shared memory through the async proxy: writes made through the generic one
 * (st.shared, cp.async) are fenced by the writing thread before the barrier that publishes
 * them (pipelined stages: after cp.async.wait_group; local_store and dot staging: after the
 * stores). */
static void proxy_fence(LL *l) {
    if (wgmma_target(l)) ll_asm(l, l->t_void, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0, true);
}

/* The fragment addresses of one mma.sync dot: each ldmatrix (or 32-bit load) address is computed in every
 * thread on the host, as LOAD_FRAGS builds it, and one that is a constant number of bytes from an earlier
 * one of the same tile in every thread is that address plus the constant (LLAddrs, llvm_ctx.h): the
 * 16-row blocks of A, the K steps of B, whose swizzle phase repeats, share one address computation. */
typedef enum FragKind {
    FRAG_A_F32,   /* 32-bit load of A: row r0 + g + 8(j & 1), col k0 + t4 + 4(j >> 1) */
    FRAG_A_TRANS, /* ldmatrix.x4.trans of A kept [K][M]: row k0 + lane%8 + 8 q2, col r0 + 8 q1 */
    FRAG_A_X4,    /* ldmatrix.x4 of A: row r0 + lane%8 + 8 q1, col k0 + q2 * chunk */
    FRAG_B_F32,   /* 32-bit load of B: k row k0 + t4 + 4j, col c0 + g */
    FRAG_B_NK,    /* ldmatrix.x2 of B kept [N][K]: row c0 + lane%8, col k0 + q1 * chunk */
    FRAG_B_X4T,   /* ldmatrix.x4.trans of B: row k0 + lane%16, col c0 + 8 wn q2 */
    FRAG_B_X2T,   /* ldmatrix.x2.trans of B: row k0 + lane%16, col c0 */
} FragKind;

typedef struct FragGeo {
    int wm, wn, M, N, chunk;
    bool a_mk, b_nk;
} FragGeo;

/* Byte offset in tile t of the fragment address thread (lane, warp) gives for block idx (im or in), K step
 * offset k0 and register j. */
static int64_t frag_offset_host(const FragGeo *G, const Tile *t, FragKind kind, int idx, int k0, int j, int lane, int warp) {
    int64_t g = lane >> 2, t4 = lane & 3, l7 = lane & 7, l15 = lane & 15, q1 = (lane >> 3) & 1, q2 = lane >> 4;
    int64_t row_m = (int64_t)(warp % G->wm) * 16, col_n = (int64_t)(warp / G->wm) * 8;
    if (16 * G->wm > G->M) row_m %= G->M;
    if (8 * G->wn > G->N) col_n %= G->N;
    int64_t r0 = row_m + (int64_t)idx * 16 * G->wm, c0 = col_n + (int64_t)idx * 8 * G->wn;
    switch (kind) {
    case FRAG_A_F32: {
        int64_t row = r0 + g + 8 * (j & 1), col = t4 + k0 + 4 * (j >> 1);
        return G->a_mk ? swz_offset_host(t, row, col) : swz_offset_host(t, col, row);
    }
    case FRAG_A_TRANS: return swz_offset_host(t, l7 + q2 * 8 + k0, r0 + q1 * 8);
    case FRAG_A_X4: return swz_offset_host(t, r0 + l7 + q1 * 8, q2 * G->chunk + k0);
    case FRAG_B_F32: {
        int64_t krow = t4 + k0 + 4 * j, col = c0 + g;
        return G->b_nk ? swz_offset_host(t, col, krow) : swz_offset_host(t, krow, col);
    }
    case FRAG_B_NK: return swz_offset_host(t, c0 + l7, q1 * G->chunk + k0);
    case FRAG_B_X4T: return swz_offset_host(t, l15 + k0, c0 + q2 * 8 * G->wn);
    case FRAG_B_X2T: return swz_offset_host(t, l15 + k0, c0);
    }
    unreachable("fragment kind");
}

/* The shared pointer of a fragment address that is a constant from an earlier one, or NULL: then the caller
 * builds it and hands it to ll_addrs_add(A, ptr). */
static LLVMValueRef frag_find(LL *l, LLAddrs *A, const FragGeo *G, const Tile *t, FragKind kind, int idx, int k0, int j) {
    for (int k = 0; k < A->nth; k++) A->cur[k] = frag_offset_host(G, t, kind, idx, k0, j, k % 32, k / 32);
    return ll_addrs_match(l, A);
}

bool ll_emit_dot_mma_smem(LL *l, Inst *i) {
    Func *f = l->f;
    const Type *at = tir_vtype(f, i->ops[0]), *rt = tir_vtype(f, i->res[0]);
    const Layout *mma = rt->layout;
    int M = rt->shape[0], N = rt->shape[1], K = at->shape[1];
    int wm = mma->wpc[0], wn = mma->wpc[1];
    DType dt = at->dt;
    int eb = dtype_bits(dt) / 8;
    int kw = dt == DT_F32 ? 8 : eb == 1 ? 32 : 16; /* s8, e4m3, e5m2: k32 */
    int rm = at_least_1(M / (16 * wm)), rn = at_least_1(N / (8 * wn)), nk = at_least_1(K / kw);
    const Type *bt = tir_vtype(f, i->ops[1]);
    bool a_shared = at->layout->kind == LAYOUT_SHARED, b_shared = bt->layout->kind == LAYOUT_SHARED;
    bool a_frag = at->layout->kind == LAYOUT_DOT_A; /* A already in fragment registers (a chained dot) */
    LLVMValueRef *A = a_frag ? ll_get(l, i->ops[0], NULL) : NULL;
    int av = a_frag ? at->layout->vpr : 0; /* elements per A fragment register */
    int a_bytes = a_shared || a_frag ? 0 : smem_dot_a_bytes(M * K * eb, wgmma_target(l)); /* as smem_scratch_bytes lays them out */
    bool b_restage = smem_dot_b_restaged(bt, wgmma_target(l)); /* a stage kept [K][N] of 8-bit elements */
    int need = a_bytes + (b_shared && !b_restage ? 0 : N * K * eb);
    if (need && (!l->smem || i->a.smem_offset < 0 || i->a.smem_bytes < need)) {
        ll_error(l, i->loc, "internal error: tensor-core dot without its shared-memory staging buffer");
        return false;
    }
    /* B is kept [N][K] for s8 and f8 (fragments pair bytes along K), else [K][N]; a pipelined
     * tile says which in its shared layout (order[0] is its contiguous dim) */
    bool b_piped = b_shared && !b_restage; /* read where it is */
    bool b_nk = b_piped ? bt->layout->order[0] == 0 : dtype_bits(dt) == 8;
    bool a_mk = !a_shared || at->layout->order[0] == 1; /* A kept [M][K]; else a stage kept [K][M] */
    Tile ta = tile_make(l, a_mk ? M : K, a_mk ? K : M, eb, a_shared ? 0 : i->a.smem_offset, a_shared ? ll_get(l, i->ops[0], NULL)[0] : NULL);
    Tile tb = tile_make(l, b_nk ? N : K, b_nk ? K : N, eb, b_piped ? 0 : i->a.smem_offset + a_bytes, b_piped ? ll_get(l, i->ops[1], NULL)[0] : NULL);
    /* a stage kept [K][M] of a type wgmma reads K-major only (tf32, 8-bit): read into A's registers */
    bool a_regs = a_shared && !a_mk && dt != DT_F16 && dt != DT_BF16 && layout_is_warpgroup_mma(mma);
    bool wg = wgmma_fits(l, i, &ta, &tb, a_mk, b_nk, a_frag, a_regs);
    if (!a_mk && eb == 1 && !wg) {
        ll_error(l, i->loc, "internal error: an 8-bit A operand kept M-contiguous in shared memory for mma.sync");
        return false;
    }
    const Target *tg = target_find(l->m->arch);
    if (!wg && dtype_is_storage(dt) && !(target_has_f8(tg) && tg->mma == MMA_SYNC)) {
        /* assign_layout's native_f8 keeps f8 operands only for a wgmma or sm_89's mma.sync */
        ll_error(l, i->loc, "internal error: f8 dot without a wgmma or mma.sync form");
        return false;
    }
    if (!a_shared && !a_frag) stage(l, i->ops[0], &ta, false);
    if (!b_shared) stage(l, i->ops[1], &tb, b_nk);
    if (b_restage) {
        Tile ts = tile_make(l, K, N, eb, 0, ll_get(l, i->ops[1], NULL)[0]);
        restage_b(l, &ts, &tb, K, N);
    }
    if ((!a_shared && !a_frag) || !b_piped) {
        if (wg) proxy_fence(l);
        ll_barrier(l);
    }

    int nc;
    LLVMValueRef *C = ll_get(l, i->ops[2], &nc);
    if (nc != rm * rn * 4) {
        ll_error(l, i->loc, "internal error: accumulator has %d registers, expected %d", nc, rm * rn * 4);
        return false;
    }
    LLVMValueRef *res = ll_new(l, i->res[0], nc);
    for (int r = 0; r < nc; r++) res[r] = C[r];
    if (wg) {
        /* A in registers: every fragment packed (or loaded) before the first wgmma, so no
         * instruction writes an A register between the wgmmas (ptxas would wait for each one) */
        LLVMValueRef *pa = NULL;
        if (a_frag) {
            pa = malloc(sizeof *pa * (size_t)(rm * nk * 4));
            if (!pa) out_of_memory();
            for (int g = 0; g < rm * nk * 4; g++) pa[g] = pack32(l, &A[g * 2], 2, dt);
        } else if (a_regs) {
            pa = wg_a_regs(l, &ta, wm, rm, nk, kw);
        }
        emit_wgmma(l, i, &ta, &tb, a_mk, b_nk, pa, res);
        free(pa);
        return true;
    }
    LLVMValueRef lane = l->lane;
    LLVMValueRef warp_m = LLVMBuildURem(l->b, l->warp, ll_i32(l, wm), "");
    LLVMValueRef warp_n = LLVMBuildUDiv(l->b, l->warp, ll_i32(l, wm), "");
    LLVMValueRef g = LLVMBuildLShr(l->b, lane, ll_i32(l, 2), ""), t4 = LLVMBuildAnd(l->b, lane, ll_i32(l, 3), "");
    LLVMValueRef l7 = LLVMBuildAnd(l->b, lane, ll_i32(l, 7), "");
    LLVMValueRef l15 = LLVMBuildAnd(l->b, lane, ll_i32(l, 15), "");
    LLVMValueRef q1 = LLVMBuildAnd(l->b, LLVMBuildLShr(l->b, lane, ll_i32(l, 3), ""), ll_i32(l, 1), "");
    LLVMValueRef q2 = LLVMBuildLShr(l->b, lane, ll_i32(l, 4), "");
    LLVMValueRef row_m = LLVMBuildMul(l->b, warp_m, ll_i32(l, 16), ""); /* warp's first row in each rep */
    LLVMValueRef col_n = LLVMBuildMul(l->b, warp_n, ll_i32(l, 8), "");
    /* more warps than the tile has 16-row (8-column) blocks: the layout wraps, the extra warps
     * compute copies of the rows (columns) modulo the tile's, and read them there */
    if (16 * wm > M) row_m = LLVMBuildURem(l->b, row_m, ll_i32(l, M), "");
    if (8 * wn > N) col_n = LLVMBuildURem(l->b, col_n, ll_i32(l, N), "");
    int chunk = 16 / eb;
    FragGeo geo = {wm, wn, M, N, chunk, a_mk, b_nk};
    LLAddrs fa_addrs, fb_addrs;
    ll_addrs_init_threads(&fa_addrs, 32 * f->num_warps);
    ll_addrs_init_threads(&fb_addrs, 32 * f->num_warps);
    /* p: the shared pointer of fragment (kind, idx, k0, j) of tile T, a constant from an earlier one or built
     * from the thread's coordinates by the statements OFF, which set `off` */
#define FRAG_PTR(p, AD, T, kind, idx, k0, j, OFF)                                                                 \
    do {                                                                                                          \
        (p) = frag_find(l, &(AD), &geo, &(T), kind, idx, k0, j);                                                  \
        if (!(p)) {                                                                                               \
            LLVMValueRef off;                                                                                     \
            OFF;                                                                                                  \
            (p) = ll_smem_ptr(l, (T).off, tile_dyn(l, &(T), off));                                                \
            ll_addrs_add(&(AD), p);                                                                               \
        }                                                                                                         \
    } while (0)
#define ADDR32(p) LLVMBuildPtrToInt(l->b, p, l->t_i32, "")
    /* Fragments of K step kk into fa (A: 4 registers per im) and fb (B: 2 per in). */
#define LOAD_FRAGS(kk, fa, fb)                                                                                   \
    do {                                                                                                          \
        int k0 = (kk) * kw;                                                                                       \
        LLVMValueRef p;                                                                                           \
        for (int im = 0; im < rm; im++) {                                                                         \
            if (a_frag) {                                                                                         \
                for (int j = 0; j < 4; j++) (fa)[im * 4 + j] = pack32(l, &A[((im * nk + (kk)) * 4 + j) * av], av, dt); \
                continue;                                                                                         \
            }                                                                                                     \
            LLVMValueRef r0 = LLVMBuildAdd(l->b, row_m, ll_i32(l, im * 16 * wm), "");                               \
            if (dt == DT_F32) {                                                                                   \
                for (int j = 0; j < 4; j++) {                                                                     \
                    FRAG_PTR(p, fa_addrs, ta, FRAG_A_F32, im, k0, j, {                                            \
                        LLVMValueRef row = LLVMBuildAdd(l->b, LLVMBuildAdd(l->b, r0, g, ""), ll_i32(l, 8 * (j & 1)), ""); \
                        LLVMValueRef col = LLVMBuildAdd(l->b, t4, ll_i32(l, k0 + 4 * (j >> 1)), "");                \
                        off = a_mk ? swz_offset(l, &ta, row, col) : swz_offset(l, &ta, col, row);                 \
                    });                                                                                           \
                    LLVMValueRef v = LLVMBuildLoad2(l->b, l->t_i32, p, "");                                       \
                    LLVMSetAlignment(v, 4);                                                                       \
                    (fa)[im * 4 + j] = v;                                                                         \
                }                                                                                                 \
            } else if (!a_mk) { /* [K][M], transposed: matrices (m +0/+8) x (k rows +0/+8) */                   \
                FRAG_PTR(p, fa_addrs, ta, FRAG_A_TRANS, im, k0, 0, {                                              \
                    LLVMValueRef krow = LLVMBuildAdd(l->b, LLVMBuildAdd(l->b, l7, LLVMBuildMul(l->b, q2, ll_i32(l, 8), ""), ""), ll_i32(l, k0), ""); \
                    LLVMValueRef col = LLVMBuildAdd(l->b, r0, LLVMBuildMul(l->b, q1, ll_i32(l, 8), ""), "");    \
                    off = swz_offset(l, &ta, krow, col);                                                          \
                });                                                                                               \
                ldmatrix(l, 4, true, ADDR32(p), &(fa)[im * 4]);                                                   \
            } else { /* x4: matrices (rows +0/+8) x (chunks +0/+1) */                                             \
                FRAG_PTR(p, fa_addrs, ta, FRAG_A_X4, im, k0, 0, {                                                 \
                    LLVMValueRef row = LLVMBuildAdd(l->b, LLVMBuildAdd(l->b, r0, l7, ""), LLVMBuildMul(l->b, q1, ll_i32(l, 8), ""), ""); \
                    LLVMValueRef col = LLVMBuildAdd(l->b, LLVMBuildMul(l->b, q2, ll_i32(l, chunk), ""), ll_i32(l, k0), ""); \
                    off = swz_offset(l, &ta, row, col);                                                           \
                });                                                                                               \
                ldmatrix(l, 4, false, ADDR32(p), &(fa)[im * 4]);                                                  \
            }                                                                                                     \
        }                                                                                                         \
        for (int in = 0; in < rn; in++) {                                                                         \
            LLVMValueRef c0 = LLVMBuildAdd(l->b, col_n, ll_i32(l, in * 8 * wn), "");                               \
            if (dt == DT_F32) {                                                                                   \
                for (int j = 0; j < 2; j++) {                                                                     \
                    FRAG_PTR(p, fb_addrs, tb, FRAG_B_F32, in, k0, j, {                                            \
                        LLVMValueRef krow = LLVMBuildAdd(l->b, t4, ll_i32(l, k0 + 4 * j), "");                      \
                        LLVMValueRef col = LLVMBuildAdd(l->b, c0, g, "");                                         \
                        off = b_nk ? swz_offset(l, &tb, col, krow) : swz_offset(l, &tb, krow, col);               \
                    });                                                                                           \
                    LLVMValueRef v = LLVMBuildLoad2(l->b, l->t_i32, p, "");                                       \
                    LLVMSetAlignment(v, 4);                                                                       \
                    (fb)[in * 2 + j] = v;                                                                         \
                }                                                                                                 \
            } else if (b_nk) { /* [N][K]: matrices k chunks +0/+1 of rows n = c0 + lane%8 */                     \
                FRAG_PTR(p, fb_addrs, tb, FRAG_B_NK, in, k0, 0, {                                                 \
                    LLVMValueRef row = LLVMBuildAdd(l->b, c0, l7, "");                                            \
                    LLVMValueRef col = LLVMBuildAdd(l->b, LLVMBuildMul(l->b, q1, ll_i32(l, chunk), ""), ll_i32(l, k0), ""); \
                    off = swz_offset(l, &tb, row, col);                                                           \
                });                                                                                               \
                ldmatrix(l, 2, false, ADDR32(p), &(fb)[in * 2]);                                                  \
            } else if (in + 1 < rn) { /* [K][N], transposed, two column blocks: x4 */                             \
                FRAG_PTR(p, fb_addrs, tb, FRAG_B_X4T, in, k0, 0, {                                                \
                    LLVMValueRef krow = LLVMBuildAdd(l->b, l15, ll_i32(l, k0), "");                               \
                    LLVMValueRef col = LLVMBuildAdd(l->b, c0, LLVMBuildMul(l->b, q2, ll_i32(l, 8 * wn), ""), ""); \
                    off = swz_offset(l, &tb, krow, col);                                                          \
                });                                                                                               \
                ldmatrix(l, 4, true, ADDR32(p), &(fb)[in * 2]);                                                   \
                in++;                                                                                             \
            } else { /* [K][N], transposed: matrices k rows +0/+8 */                                              \
                FRAG_PTR(p, fb_addrs, tb, FRAG_B_X2T, in, k0, 0, {                                                \
                    LLVMValueRef krow = LLVMBuildAdd(l->b, l15, ll_i32(l, k0), "");                               \
                    off = swz_offset(l, &tb, krow, c0);                                                           \
                });                                                                                               \
                ldmatrix(l, 2, true, ADDR32(p), &(fb)[in * 2]);                                                   \
            }                                                                                                     \
        }                                                                                                         \
    } while (0)

    /* K step kk+1's fragments are loaded before step kk's mma instructions, so the
     * ldmatrix latency hides behind the math. */
    LLVMValueRef *fa[2], *fb[2];
    for (int s = 0; s < 2; s++) {
        fa[s] = calloc((size_t)rm * 4, sizeof *fa[s]);
        fb[s] = calloc((size_t)rn * 2, sizeof *fb[s]);
        if (!fa[s] || !fb[s]) out_of_memory();
    }
    LOAD_FRAGS(0, fa[0], fb[0]);
    for (int kk = 0; kk < nk; kk++) {
        int cur = kk & 1;
        if (kk + 1 < nk) LOAD_FRAGS(kk + 1, fa[cur ^ 1], fb[cur ^ 1]);
        for (int im = 0; im < rm; im++)
            for (int in = 0; in < rn; in++) {
                issue_mma(l, dt, bt->dt, rt->dt, &fa[cur][im * 4], &fb[cur][in * 2], &res[(im * rn + in) * 4]);
            }
    }
#undef LOAD_FRAGS
#undef FRAG_PTR
#undef ADDR32
    ll_addrs_free(&fa_addrs);
    ll_addrs_free(&fb_addrs);
    for (int s = 0; s < 2; s++) {
        free(fa[s]);
        free(fb[s]);
    }
    return true;
}

/* ---- software pipelining: buffers, views, cp.async ----
 * A buffer or a view is one register: its byte offset in scratch.  async_copy
 * takes the pointer tensor `vec` elements at a time; each group becomes one
 * cp.async of 4, 8 or 16 bytes to the element's swizzled place in the stage,
 * with src-size 0 (a zero fill) where the mask is off.  Replicated registers
 * copy once, from the thread that owns them.  A rank-1 tile fills a one-row
 * stage. */
static bool emit_async_copy(LL *l, Inst *i) {
    Func *f = l->f;
    const Type *bt = tir_vtype(f, i->ops[0]), *pt = tir_vtype(f, i->ops[2]);
    int eb = dtype_bits(bt->dt) / 8;
    int contig = bt->layout->order[0] - 1; /* tile dim kept contiguous */
    int rows = contig == 1 ? bt->shape[1] : bt->shape[2], cols = contig == 1 ? bt->shape[2] : bt->shape[1];
    int stage_bytes = bt->shape[1] * bt->shape[2] * eb;
    LLVMValueRef base = LLVMBuildAdd(l->b, ll_get(l, i->ops[0], NULL)[0],
                                     LLVMBuildMul(l->b, ll_as_i32(l, ll_get(l, i->ops[1], NULL)[0]), ll_i32(l, stage_bytes), ""), "");
    Tile t = tile_make(l, rows, cols, eb, 0, base);
    int n;
    LLVMValueRef *ptr = ll_get(l, i->ops[2], &n);
    LLVMValueRef *mask = i->nops > 3 ? ll_get(l, i->ops[3], NULL) : NULL;
    const LayoutRegs *lr = ll_regs_of(l, pt);
    int vec = i->a.vec ? i->a.vec : 1, bytes = vec * eb;
    if (n % vec || (bytes != 4 && bytes != 8 && bytes != 16)) {
        ll_error(l, i->loc, "internal error: async copy of %d bytes", bytes);
        return false;
    }
    char text[96];
    snprintf(text, sizeof text, "cp.async.%s.shared.global [$0], [$1], %d, $2;", bytes == 16 ? "cg" : "ca", bytes);
    /* Each destination computed on its own, not off a shared one (TileAddrs): its thread part is
     * loop-invariant and LLVM hoists it out of the pipelined loop, leaving one add of the stage base per copy
     * either way.  Shared, the kernel needs fewer registers, and ptxas then squeezed paged_attention_f16
     * (HEAD_DIM 64, BM = BN = 64, sm_80) from 165 registers into 128 with a 24-byte spill. */
    for (int r = 0; r < n; r += vec) {
        bool replica = false;
        for (int d = 0; d < pt->rank; d++) replica |= lr->raw[r][d] >= pt->shape[d];
        if (replica) continue;
        /* a rank-1 tile fills row 0 */
        LLVMValueRef i0 = pt->rank == 1 ? ll_i32(l, 0) : ll_coord(l, pt, r, 0), i1 = ll_coord(l, pt, r, pt->rank == 1 ? 0 : 1);
        LLVMValueRef off = contig == 1 ? swz_offset(l, &t, i0, i1) : swz_offset(l, &t, i1, i0);
        LLVMValueRef dst = smem_addr32(l, 0, tile_dyn(l, &t, off));
        LLVMValueRef size = mask ? LLVMBuildSelect(l->b, mask[r], ll_i32(l, bytes), ll_i32(l, 0), "") : ll_i32(l, bytes);
        LLVMValueRef own = ll_owner(l, pt, r);
        bool always = LLVMIsConstant(own) && LLVMConstIntGetZExtValue(own);
        LLVMBasicBlockRef then = NULL, join = NULL;
        if (!always) {
            then = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "cp");
            join = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "cp.join");
            LLVMBuildCondBr(l->b, own, then, join);
            LLVMPositionBuilderAtEnd(l->b, then);
        }
        LLVMValueRef args[3] = {dst, ptr[r], size};
        ll_asm(l, l->t_void, text, "r,l,r", args, 3, true);
        if (!always) {
            LLVMBuildBr(l->b, join);
            LLVMPositionBuilderAtEnd(l->b, join);
        }
    }
    return true;
}

bool ll_emit_async(LL *l, Inst *i) {
    Func *f = l->f;
    switch (i->op) {
    case OP_LOCAL_ALLOC:
        if (!l->smem || i->a.smem_offset < 0) {
            ll_error(l, i->loc, "internal error: pipelining buffer without shared memory");
            return false;
        }
        ll_new(l, i->res[0], 1)[0] = ll_i32(l, i->a.smem_offset);
        return true;
    case OP_LOCAL_VIEW: {
        const Type *bt = tir_vtype(f, i->ops[0]);
        int stage_bytes = (int)(tir_type_numel(bt) / bt->shape[0]) * (dtype_bits(bt->dt) / 8);
        LLVMValueRef s = LLVMBuildMul(l->b, ll_as_i32(l, ll_get(l, i->ops[1], NULL)[0]), ll_i32(l, stage_bytes), "");
        ll_new(l, i->res[0], 1)[0] = LLVMBuildAdd(l->b, ll_get(l, i->ops[0], NULL)[0], s, "");
        return true;
    }
    case OP_ASYNC_COPY: return emit_async_copy(l, i);
    case OP_WGMMA_WAIT: { /* every register of the accumulator, tied through the wait */
        int n;
        LLVMValueRef *src = ll_get(l, i->ops[0], &n), *dst = ll_new(l, i->res[0], n);
        for (int r = 0; r < n; r++) dst[r] = src[r];
        DType dt = tir_vtype(f, i->ops[0])->dt;
        if (wgmma_target(l) && (dt == DT_F32 || dt == DT_I32)) wait_tied(l, dst, n, dt == DT_I32, (int)i->a.ival);
        return true;
    }
    case OP_LOCAL_STORE: { /* the stage as emit_async_copy lays it out, written from registers */
        const Type *bt = tir_vtype(f, i->ops[0]);
        int eb = dtype_bits(bt->dt) / 8, contig = bt->layout->order[0] - 1;
        int rows = contig == 1 ? bt->shape[1] : bt->shape[2], cols = contig == 1 ? bt->shape[2] : bt->shape[1];
        LLVMValueRef base = LLVMBuildAdd(l->b, ll_get(l, i->ops[0], NULL)[0],
                                         LLVMBuildMul(l->b, ll_as_i32(l, ll_get(l, i->ops[1], NULL)[0]), ll_i32(l, rows * cols * eb), ""), "");
        Tile t = tile_make(l, rows, cols, eb, 0, base);
        int vcols = tir_vtype(f, i->ops[2])->shape[1];
        if (vcols != bt->shape[2]) stage_cols(l, i->ops[2], &t, false, (int)i->a.ival, bt->shape[2]); /* a column slice */
        else if (contig != 1 || !stage_stmatrix(l, i->ops[2], &t)) stage(l, i->ops[2], &t, contig != 1);
        proxy_fence(l);
        return true;
    }
    case OP_LOCAL_LOAD: { /* a stage as emit_async_copy lays it out (the view's contiguous dim), read into registers */
        const Type *vt = tir_vtype(f, i->ops[0]);
        int eb = dtype_bits(vt->dt) / 8, contig = vt->layout->order[0];
        int rows = contig == 1 ? vt->shape[0] : vt->shape[1], cols = contig == 1 ? vt->shape[1] : vt->shape[0];
        Tile t = tile_make(l, rows, cols, eb, 0, ll_get(l, i->ops[0], NULL)[0]);
        unstage(l, i->res[0], &t, contig != 1);
        return true;
    }
    case OP_ASYNC_COMMIT: ll_asm(l, l->t_void, "cp.async.commit_group;", "", NULL, 0, true); return true;
    case OP_ASYNC_WAIT: {
        char text[48];
        snprintf(text, sizeof text, "cp.async.wait_group %d;", (int)i->a.ival);
        ll_asm(l, l->t_void, text, "~{memory}", NULL, 0, true);
        proxy_fence(l);
        return true;
    }
    default: return false;
    }
}

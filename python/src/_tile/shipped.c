/* shipped.c - the shipped kernels on arrays: gemm (tile_gemm), attention
 * (tile_attention_fwd), decode_paged (tile_attention_decode_paged) and moe
 * (tile_moe_forward).
 *
 * The Python layer (tile/__init__.py) allocates outputs; here every array
 * is resolved through arrays.c (so NumPy memory is used in place), its shape
 * and strides become the C call's sizes and leading dimensions, and the C
 * entry point does the rest (variant, tuning, launch) and its own checks.
 * NumPy has no bf16: dtype="bf16" reads u16 arrays as bf16. */
#include "pytile.h"

#include <string.h>

static bool want_ndim(const TPyArray *a, int nd, const char *name, const char *shape) {
    if (a->ndim == nd) return true;
    PyErr_Format(PyExc_ValueError, "argument '%s': expected %d dimensions %s, got %d", name, nd, shape, a->ndim);
    return false;
}

/* The first three strides of a 4-D array for the attention calls, which read three strides of 0 as "contiguous": a
 * view broadcast over all three keeps its meaning when a dimension of size 1 (whose stride is never used) gets 1,
 * and is refused when there is none (it read other elements than the view's). */
static bool strides3(const TPyArray *a, const char *name, int64_t out[3]) {
    for (int i = 0; i < 3; i++) {
        out[i] = a->strides[i];
        if (out[i] >= 0) continue;
        if (a->shape[i] == 1) { /* a reversed dimension of one: its stride is never used */
            out[i] = 1;
            continue;
        }
        PyErr_Format(PyExc_ValueError,
                     "argument '%s': dimension %d has a negative stride (%lld elements: a reversed view), which the library "
                     "cannot describe; pass a copy (np.ascontiguousarray)", name, i, (long long)out[i]);
        return false;
    }
    if (out[0] || out[1] || out[2] || !a->shape[0] || !a->shape[1] || !a->shape[2]) return true;
    for (int i = 0; i < 3; i++)
        if (a->shape[i] == 1) {
            out[i] = 1;
            return true;
        }
    PyErr_Format(PyExc_ValueError,
                 "argument '%s': broadcast over its first three dimensions (strides 0, 0, 0), which the library reads as "
                 "contiguous; pass a copy (np.ascontiguousarray)", name);
    return false;
}

/* A leading dimension below the contiguous rows' length: reversed (a[::-1]), broadcast (stride 0) or
 * overlapping rows, which tile_gemm cannot describe: ValueError naming the argument. */
static bool ld_fits(const TPyArray *a, const char *name, int64_t ld, int64_t row) {
    if (ld >= row) return true;
    PyErr_Format(PyExc_ValueError,
                 "argument '%s': its rows are %lld elements apart, less than the %lld of a row (strides %lld, %lld elements: a "
                 "reversed, broadcast or overlapping view); pass a copy (np.ascontiguousarray)",
                 name, (long long)ld, (long long)row, (long long)a->strides[0], (long long)a->strides[1]);
    return false;
}

/* Row-major with leading dimension, or its transpose; false with ValueError when neither. */
static bool matrix_layout(const TPyArray *a, const char *name, bool allow_trans, int64_t *ld, int *trans) {
    *trans = 0;
    if (a->shape[0] == 0 || a->shape[1] == 0) { /* empty: no element to lay out (NumPy gives such arrays any strides) */
        *ld = a->shape[1] > 0 ? a->shape[1] : 1;
        return true;
    }
    if (a->strides[1] == 1 || a->shape[1] == 1) {
        *ld = a->shape[0] == 1 ? (a->shape[1] > 0 ? a->shape[1] : 1) : a->strides[0];
        return ld_fits(a, name, *ld, a->shape[1]);
    }
    if (allow_trans && (a->strides[0] == 1 || a->shape[0] == 1)) {
        *trans = 1;
        *ld = a->strides[1];
        return ld_fits(a, name, *ld, a->shape[0]);
    }
    PyErr_Format(PyExc_ValueError,
                 allow_trans ? "argument '%s': one of its dimensions must be contiguous (strides %lld, %lld elements)"
                             : "argument '%s': its rows must be contiguous, row-major (strides %lld, %lld elements)", name,
                 (long long)a->strides[0], (long long)a->strides[1]);
    return false;
}

typedef struct GemmCall {
    tile_context *ctx;
    const tile_gemm_args *g;
} GemmCall;

static tile_status gemm_call(void *p) {
    GemmCall *c = p;
    return tile_gemm(c->ctx, c->g);
}

/* gemm(device, a, b, out, bias=None, activation=0, alpha=1.0, beta=0.0, stream=None, dtype=None, out_dtype=None) */
PyObject *tpy_gemm(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"device", "a", "b", "out", "bias", "activation", "alpha", "beta", "stream", "dtype", "out_dtype",
                         "a_scale", "b_scale", NULL};
    PyObject *devobj, *ao, *bo, *oo, *biaso = Py_None, *streamo = Py_None, *sao = Py_None, *sbo = Py_None;
    int act = 0;
    float alpha = 1.0f, beta = 0.0f;
    const char *dtype = NULL, *out_dtype = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OOO|OiffOzzOO:gemm", kw, TPy_DeviceType, &devobj, &ao, &bo, &oo, &biaso,
                                     &act, &alpha, &beta, &streamo, &dtype, &out_dtype, &sao, &sbo))
        return NULL;
    TPyDevice *dev = (TPyDevice *)devobj;
    tile_stream stream;
    if (!tpy_stream(dev, streamo, &stream)) return NULL;
    TPyScope sc = {.dev = dev, .stream = streamo};
    TPyArray a, b, o, bias;
    tile_gemm_args g = {.size = sizeof g, .alpha = alpha, .beta = beta, .activation = (tile_activation)act, .stream = stream};
    if (!tpy_array(&sc, ao, "a", &a) || !tpy_array(&sc, bo, "b", &b) || !tpy_array(&sc, oo, "out", &o) || !tpy_writable(&o, "out", "gemm"))
        goto fail;
    if (!want_ndim(&a, 2, "a", "[M, K]") || !want_ndim(&b, 2, "b", "[K, N]") || !want_ndim(&o, 2, "out", "[M, N]")) goto fail;
    int in = tpy_elem_dtype(&a, dtype, "a");
    if (in < 0) goto fail;
    int bt = tpy_elem_dtype(&b, dtype, "b");
    if (bt < 0) goto fail;
    if (bt != in) {
        PyErr_Format(PyExc_TypeError, "argument 'b': %s, but a is %s", tile_dtype_name(bt), tile_dtype_name(in));
        goto fail;
    }
    int outt = tpy_elem_dtype(&o, out_dtype ? out_dtype : (dtype && o.itemsize == 2 && o.kind != 'f') ? dtype : NULL, "out");
    if (outt < 0) goto fail;
    g.m = a.shape[0], g.k = a.shape[1], g.n = b.shape[1];
    if (b.shape[0] != g.k) {
        PyErr_Format(PyExc_ValueError, "argument 'b': %lld rows, but a has %lld columns", (long long)b.shape[0], (long long)g.k);
        goto fail;
    }
    if (o.shape[0] != g.m || o.shape[1] != g.n) {
        PyErr_Format(PyExc_ValueError, "argument 'out': shape (%lld, %lld), expected (%lld, %lld)", (long long)o.shape[0],
                     (long long)o.shape[1], (long long)g.m, (long long)g.n);
        goto fail;
    }
    int trans_c;
    if (!matrix_layout(&a, "a", true, &g.lda, &g.trans_a) || !matrix_layout(&b, "b", true, &g.ldb, &g.trans_b) ||
        !matrix_layout(&o, "out", false, &g.ldc, &trans_c))
        goto fail;
    g.a = a.ptr, g.b = b.ptr, g.c = o.ptr;
    g.in_dtype = (tile_dtype)in, g.out_dtype = (tile_dtype)outt;
    if (biaso != Py_None) {
        if (!tpy_array(&sc, biaso, "bias", &bias) || !want_ndim(&bias, 1, "bias", "[N]")) goto fail;
        int btt = tpy_elem_dtype(&bias, (out_dtype || (dtype && bias.kind != 'f')) ? tile_dtype_name((tile_dtype)outt) : NULL, "bias");
        if (btt < 0) goto fail;
        if (btt != outt || bias.shape[0] != g.n || bias.strides[0] != 1) {
            PyErr_Format(PyExc_ValueError, "argument 'bias': expected %lld contiguous elements of %s", (long long)g.n,
                         tile_dtype_name((tile_dtype)outt));
            goto fail;
        }
        g.bias = bias.ptr;
    }
    if ((sao == Py_None) != (sbo == Py_None)) {
        PyErr_SetString(PyExc_ValueError, "a_scale and b_scale: give both or neither");
        goto fail;
    }
    if (sao != Py_None) { /* f8 dequantization: one f32 each, m and n of them, or 2-D block scales */
        TPyArray sa, sb;
        if (!tpy_array(&sc, sao, "a_scale", &sa) || !tpy_array(&sc, sbo, "b_scale", &sb)) goto fail;
        if (tpy_elem_dtype(&sa, NULL, "a_scale") != TILE_F32 || tpy_elem_dtype(&sb, NULL, "b_scale") != TILE_F32) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a_scale and b_scale: float32 arrays");
            goto fail;
        }
        if (sa.ndim == 2 || sb.ndim == 2) { /* TILE_SCALE_BLOCK: a_scale [M, cdiv(K, 128)], b_scale [cdiv(K, 128), cdiv(N, 128)] */
            int64_t kb = (g.k + 127) / 128, nb = (g.n + 127) / 128;
            if (sa.ndim != 2 || sb.ndim != 2 || sa.shape[0] != g.m || sa.shape[1] != kb || sb.shape[0] != kb || sb.shape[1] != nb) {
                PyErr_Format(PyExc_ValueError,
                             "block scales: a_scale [%lld, %lld] (rows of a, 128-wide K blocks) and b_scale [%lld, %lld] "
                             "(128 x 128 blocks of b), both 2-D float32",
                             (long long)g.m, (long long)kb, (long long)kb, (long long)nb);
                goto fail;
            }
            /* a_scale row-major; b_scale laid out as b is: row-major, or with b a transposed view the
             * transposed view of a row-major [cdiv(N, 128), cdiv(K, 128)] (w.T with w_scale.T) */
            bool a_ok = sa.shape[1] == 1 || sa.strides[1] == 1, a_rows = sa.shape[0] == 1 || sa.strides[0] == sa.shape[1];
            bool b_ok = g.trans_b ? (sb.shape[0] == 1 || sb.strides[0] == 1) && (sb.shape[1] == 1 || sb.strides[1] == kb)
                                  : (sb.shape[1] == 1 || sb.strides[1] == 1) && (sb.shape[0] == 1 || sb.strides[0] == nb);
            if (!a_ok || !a_rows || !b_ok) {
                PyErr_Format(PyExc_ValueError, "block scales: a_scale must be C-contiguous and b_scale %s", g.trans_b
                             ? "the transposed view of a C-contiguous [cdiv(N, 128), cdiv(K, 128)] array, as b is a transposed view"
                             : "C-contiguous, as b is");
                goto fail;
            }
            g.scale_mode = TILE_SCALE_BLOCK;
        } else {
            if (sa.ndim != 1 || sb.ndim != 1 || (sa.shape[0] > 1 && sa.strides[0] != 1) || (sb.shape[0] > 1 && sb.strides[0] != 1)) {
                PyErr_SetString(PyExc_ValueError, "a_scale and b_scale: contiguous 1-D float32 arrays (2-D: block scales)");
                goto fail;
            }
            bool tensor = sa.shape[0] == 1 && sb.shape[0] == 1;
            if (!tensor && (sa.shape[0] != g.m || sb.shape[0] != g.n)) {
                PyErr_Format(PyExc_ValueError,
                             "a_scale and b_scale: 1 value each, or %lld and %lld (rows of a, columns of b); got %lld and %lld",
                             (long long)g.m, (long long)g.n, (long long)sa.shape[0], (long long)sb.shape[0]);
                goto fail;
            }
            g.scale_mode = tensor ? TILE_SCALE_TENSOR : TILE_SCALE_CHANNEL;
        }
        g.a_scale = sa.ptr, g.b_scale = sb.ptr;
    }
    GemmCall gc = {dev->ctx, &g};
    bool ok = !g.m || !g.n || tpy_call(dev, gemm_call, &gc, "gemm");
    tpy_scope_end(&sc, stream);
    if (!ok) return NULL;
    Py_RETURN_NONE;
fail:
    tpy_scope_end(&sc, stream);
    return NULL;
}

/* f8: f8e4m3 accepted too (attention's q, k, v) */
static bool attn_tensor_f8(TPyScope *sc, PyObject *obj, const char *name, const char *dtype, bool f8, TPyArray *a, int *dt) {
    if (!tpy_array(sc, obj, name, a) || !want_ndim(a, 4, name, "[batch, seq, heads, head_dim]")) return false;
    if ((*dt = tpy_elem_dtype(a, dtype, name)) < 0) return false;
    if (*dt != TILE_F16 && *dt != TILE_BF16 && !(f8 && *dt == TILE_F8E4M3)) {
        PyErr_Format(PyExc_TypeError, "argument '%s': attention takes %s, got %s", name, f8 ? "f16, bf16 or f8e4m3" : "f16 or bf16",
                     tile_dtype_name((tile_dtype)*dt));
        return false;
    }
    for (int d = 0; d < 3; d++)
        if (a->shape[d] == 0) return true; /* empty: nothing is laid out (the call says what it makes of it) */
    if (a->strides[3] != 1 && a->shape[3] != 1) {
        PyErr_Format(PyExc_ValueError, "argument '%s': head_dim must be contiguous (stride %lld elements)", name,
                     (long long)a->strides[3]);
        return false;
    }
    return true;
}

static bool attn_tensor(TPyScope *sc, PyObject *obj, const char *name, const char *dtype, TPyArray *a, int *dt) {
    return attn_tensor_f8(sc, obj, name, dtype, false, a, dt);
}

/* attention(device, q, k, v, out, causal=False, softmax_scale=0.0, stream=None, dtype=None, q_scale=0.0, k_scale=0.0,
 *           v_scale=0.0, out_dtype=None): dtype "f8e4m3" reads q, k, v (uint8 arrays) as e4m3 codes with their
 *           scales; out is then f16 or bf16 (out_dtype, else out's own type) */
PyObject *tpy_attention(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"device", "q", "k", "v", "out", "causal", "softmax_scale", "stream", "dtype", "q_scale", "k_scale", "v_scale",
                         "out_dtype", NULL};
    PyObject *devobj, *qo, *ko, *vo, *oo, *streamo = Py_None;
    int causal = 0;
    float scale = 0.0f, q_scale = 0.0f, k_scale = 0.0f, v_scale = 0.0f;
    const char *dtype = NULL, *out_dtype = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OOOO|pfOzfffz:attention", kw, TPy_DeviceType, &devobj, &qo, &ko, &vo, &oo,
                                     &causal, &scale, &streamo, &dtype, &q_scale, &k_scale, &v_scale, &out_dtype))
        return NULL;
    TPyDevice *dev = (TPyDevice *)devobj;
    tile_stream stream;
    if (!tpy_stream(dev, streamo, &stream)) return NULL;
    TPyScope sc = {.dev = dev, .stream = streamo};
    TPyArray q, k, v, o;
    int dq, dk, dv, dout;
    if (!attn_tensor_f8(&sc, qo, "q", dtype, true, &q, &dq) || !attn_tensor_f8(&sc, ko, "k", dtype, true, &k, &dk) ||
        !attn_tensor_f8(&sc, vo, "v", dtype, true, &v, &dv))
        goto fail;
    bool f8 = dq == TILE_F8E4M3;
    if (!attn_tensor(&sc, oo, "out", out_dtype ? out_dtype : f8 ? NULL : dtype, &o, &dout) || !tpy_writable(&o, "out", "attention"))
        goto fail;
    if (dk != dq || dv != dq || (!f8 && dout != dq)) {
        PyErr_SetString(PyExc_TypeError, f8 ? "q, k and v must have one element type" : "q, k, v and out must have one element type");
        goto fail;
    }
    if (!f8 && ((q_scale != 0 && q_scale != 1) || (k_scale != 0 && k_scale != 1) || (v_scale != 0 && v_scale != 1))) {
        PyErr_SetString(PyExc_ValueError, "q_scale, k_scale and v_scale: for f8e4m3 inputs (dtype='f8e4m3') only (None or 1 with f16/bf16)");
        goto fail;
    }
    if (k.shape[0] != q.shape[0] || v.shape[0] != q.shape[0] || k.shape[3] != q.shape[3] || v.shape[3] != q.shape[3] ||
        v.shape[1] != k.shape[1] || v.shape[2] != k.shape[2]) {
        PyErr_SetString(PyExc_ValueError, "k and v must be [batch, seq_k, heads_kv, head_dim] with q's batch and head_dim");
        goto fail;
    }
    if (memcmp(o.shape, q.shape, sizeof(int64_t) * 4)) {
        PyErr_SetString(PyExc_ValueError, "argument 'out': must have q's shape");
        goto fail;
    }
    tile_attention_args at = {.size = sizeof at, .dtype = (tile_dtype)dq, .batch = q.shape[0], .heads_q = q.shape[2],
                              .heads_kv = k.shape[2], .head_dim = q.shape[3], .seq_q = q.shape[1], .seq_k = k.shape[1],
                              .q = q.ptr, .k = k.ptr, .v = v.ptr, .o = o.ptr, .softmax_scale = scale, .causal = causal,
                              .window_left = -1, .window_right = -1, .stream = stream, .q_scale = q_scale, .k_scale = k_scale,
                              .v_scale = v_scale, .o_dtype = f8 ? (tile_dtype)dout : TILE_F32};
    if (!strides3(&q, "q", at.q_stride) || !strides3(&k, "k", at.k_stride) || !strides3(&v, "v", at.v_stride) ||
        !strides3(&o, "out", at.o_stride))
        goto fail;
    tile_status st;
    Py_BEGIN_ALLOW_THREADS
    st = tile_attention_fwd(dev->ctx, &at);
    Py_END_ALLOW_THREADS
    tpy_scope_end(&sc, stream);
    if (st != TILE_OK) return tpy_raise(dev, st, "attention");
    Py_RETURN_NONE;
fail:
    tpy_scope_end(&sc, stream);
    return NULL;
}

/* A contiguous-rows matrix: its leading dimension (rows may be padded); false with ValueError otherwise. */
static bool rows_ld(const TPyArray *a, const char *name, int64_t *ld) {
    if (a->ndim == 2 && (a->shape[0] == 0 || a->shape[1] == 0)) { /* no elements: NumPy gives such arrays strides (0, 0) */
        *ld = a->shape[1];
        return true;
    }
    if (a->ndim != 2 || (a->strides[1] != 1 && a->shape[1] > 1)) {
        PyErr_Format(PyExc_ValueError, "argument '%s': expected a 2-D array with contiguous rows", name);
        return false;
    }
    *ld = a->shape[0] > 1 ? a->strides[0] : a->shape[1];
    /* a broadcast view's 0 would reach the C API as its "0: contiguous" and read other rows; a negative one is refused there */
    return ld_fits(a, name, *ld, a->shape[1]);
}

static bool want_type(const TPyArray *a, int dt, const char *name) {
    if (tpy_dtype_compatible(dt, a)) return true;
    PyErr_Format(PyExc_TypeError, "argument '%s': expected %s, got an array of '%s'", name, tile_dtype_name((tile_dtype)dt),
                 a->typestr);
    return false;
}

static bool contiguous(const TPyArray *a, const char *name) {
    int64_t s = 1;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] == 0) return true; /* no elements (NumPy gives them zero strides): nothing to lay out */
    for (int i = a->ndim - 1; i >= 0; i--) {
        if (a->shape[i] != 1 && a->strides[i] != s) {
            PyErr_Format(PyExc_ValueError, "argument '%s': must be contiguous", name);
            return false;
        }
        s *= a->shape[i];
    }
    return true;
}

/* decode_paged(device, q, k_cache, v_cache, block_tables, context_lens, out, max_context_len, softmax_scale=0,
 *              kv_dtype=None, k_scale=0, v_scale=0, num_splits=0, stream=None, dtype=None) */
PyObject *tpy_decode_paged(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"device", "q", "k_cache", "v_cache", "block_tables", "context_lens", "out", "max_context_len",
                         "softmax_scale", "kv_dtype", "k_scale", "v_scale", "num_splits", "stream", "dtype", NULL};
    PyObject *devobj, *qo, *ko, *vo, *bto, *clo, *oo, *streamo = Py_None;
    long long max_ctx;
    float scale = 0, k_scale = 0, v_scale = 0;
    int splits = 0;
    const char *kv_dtype = NULL, *dtype = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OOOOOOL|fzffiOz:decode_paged", kw, TPy_DeviceType, &devobj, &qo, &ko, &vo,
                                     &bto, &clo, &oo, &max_ctx, &scale, &kv_dtype, &k_scale, &v_scale, &splits, &streamo, &dtype))
        return NULL;
    TPyDevice *dev = (TPyDevice *)devobj;
    tile_stream stream;
    if (!tpy_stream(dev, streamo, &stream)) return NULL;
    TPyScope sc = {.dev = dev, .stream = streamo};
    TPyArray q, k, v, bt, cl, o;
    int dq, dout;
    if (!attn_tensor(&sc, qo, "q", dtype, &q, &dq) || !attn_tensor(&sc, oo, "out", dtype, &o, &dout) ||
        !tpy_writable(&o, "out", "decode_paged"))
        goto fail;
    if (!tpy_array(&sc, ko, "k_cache", &k) || !want_ndim(&k, 4, "k_cache", "[num_blocks, block_size, heads_kv, head_dim]") ||
        !tpy_array(&sc, vo, "v_cache", &v) || !want_ndim(&v, 4, "v_cache", "[num_blocks, block_size, heads_kv, head_dim]") ||
        !tpy_array(&sc, bto, "block_tables", &bt) || !tpy_array(&sc, clo, "context_lens", &cl))
        goto fail;
    int kvt = tpy_elem_dtype(&k, kv_dtype ? kv_dtype : dtype, "k_cache");
    if (kvt < 0 || tpy_elem_dtype(&v, kv_dtype ? kv_dtype : dtype, "v_cache") != kvt) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "k_cache and v_cache must have one element type");
        goto fail;
    }
    int64_t bts;
    if (dout != dq || !want_type(&bt, TILE_I32, "block_tables") || !rows_ld(&bt, "block_tables", &bts) ||
        !want_type(&cl, TILE_I32, "context_lens") || !want_ndim(&cl, 1, "context_lens", "[num_seqs]") ||
        !contiguous(&cl, "context_lens")) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "q and out must have one element type");
        goto fail;
    }
    if (memcmp(o.shape, q.shape, sizeof(int64_t) * 4) || k.shape[3] != q.shape[3] || memcmp(v.shape, k.shape, sizeof(int64_t) * 4) ||
        bt.shape[0] != q.shape[0] || cl.shape[0] != q.shape[0]) {
        PyErr_SetString(PyExc_ValueError, "shapes: q and out [num_seqs, num_tokens, heads_q, head_dim], k_cache and v_cache "
                                          "[num_blocks, block_size, heads_kv, head_dim], block_tables [num_seqs, n], "
                                          "context_lens [num_seqs]");
        goto fail;
    }
    tile_paged_attention_args pa = {.size = sizeof pa, .dtype = (tile_dtype)dq, .kv_dtype = (tile_dtype)kvt,
                                    .k_scale = k_scale, .v_scale = v_scale, .num_seqs = q.shape[0], .heads_q = q.shape[2],
                                    .heads_kv = k.shape[2], .head_dim = q.shape[3], .num_tokens = q.shape[1],
                                    .block_size = k.shape[1], .num_blocks = k.shape[0], .q = q.ptr, .o = o.ptr,
                                    .k_cache = k.ptr, .v_cache = v.ptr, .block_tables = bt.ptr, .block_table_stride = bts,
                                    .context_lens = cl.ptr, .max_context_len = max_ctx, .num_splits = splits,
                                    .softmax_scale = scale, .stream = stream};
    if (!strides3(&q, "q", pa.q_stride) || !strides3(&o, "out", pa.o_stride) || !strides3(&k, "k_cache", pa.k_stride) ||
        !strides3(&v, "v_cache", pa.v_stride))
        goto fail;
    if (k.strides[3] != 1 || v.strides[3] != 1) {
        PyErr_SetString(PyExc_ValueError, "k_cache and v_cache: head_dim must be contiguous");
        goto fail;
    }
    tile_status st;
    Py_BEGIN_ALLOW_THREADS
    st = tile_attention_decode_paged(dev->ctx, &pa);
    Py_END_ALLOW_THREADS
    tpy_scope_end(&sc, stream);
    if (st != TILE_OK) return tpy_raise(dev, st, "decode_paged");
    Py_RETURN_NONE;
fail:
    tpy_scope_end(&sc, stream);
    return NULL;
}

/* moe(device, x, w1, w2, out, topk, router_logits=None, topk_ids=None, topk_weights=None, scoring=0, renormalize=False,
 *     n_group=0, topk_group=0, group_top2=False, score_bias=None, routed_scale=0, accumulate=False, stream=None, dtype=None) */
PyObject *tpy_moe(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"device", "x", "w1", "w2", "out", "topk", "router_logits", "topk_ids", "topk_weights", "scoring",
                         "renormalize", "n_group", "topk_group", "group_top2", "score_bias", "routed_scale", "accumulate",
                         "stream", "dtype", NULL};
    PyObject *devobj, *xo, *w1o, *w2o, *oo, *lo = Py_None, *ido = Py_None, *wo = Py_None, *biaso = Py_None, *streamo = Py_None;
    long long topk;
    int scoring = 0, renorm = 0, n_group = 0, topk_group = 0, top2 = 0, accumulate = 0;
    float routed_scale = 0;
    const char *dtype = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OOOOL|OOOipiipOfpOz:moe", kw, TPy_DeviceType, &devobj, &xo, &w1o, &w2o,
                                     &oo, &topk, &lo, &ido, &wo, &scoring, &renorm, &n_group, &topk_group, &top2, &biaso,
                                     &routed_scale, &accumulate, &streamo, &dtype))
        return NULL;
    TPyDevice *dev = (TPyDevice *)devobj;
    tile_stream stream;
    if (!tpy_stream(dev, streamo, &stream)) return NULL;
    TPyScope sc = {.dev = dev, .stream = streamo};
    TPyArray x, w1, w2, o, l, ids, w, bias;
    tile_moe_args m = {.size = sizeof m, .topk = topk, .scoring = (tile_moe_scoring)scoring, .renormalize = renorm,
                       .n_group = n_group, .topk_group = topk_group, .group_top2 = top2, .routed_scale = routed_scale,
                       .accumulate = accumulate, .stream = stream};
    if (!tpy_array(&sc, xo, "x", &x) || !tpy_array(&sc, w1o, "w1", &w1) || !tpy_array(&sc, w2o, "w2", &w2) ||
        !tpy_array(&sc, oo, "out", &o) || !tpy_writable(&o, "out", "moe"))
        goto fail;
    int dt = tpy_elem_dtype(&x, dtype, "x");
    if (dt < 0) goto fail;
    if (dt != TILE_F16 && dt != TILE_BF16) {
        PyErr_Format(PyExc_TypeError, "argument 'x': moe takes f16 or bf16, got %s", tile_dtype_name((tile_dtype)dt));
        goto fail;
    }
    m.dtype = (tile_dtype)dt;
    if (!rows_ld(&x, "x", &m.ldx) || !want_type(&w1, dt, "w1") || !want_ndim(&w1, 3, "w1", "[experts, 2 * inter, hidden]") ||
        !contiguous(&w1, "w1") || !want_type(&w2, dt, "w2") || !want_ndim(&w2, 3, "w2", "[experts, hidden, inter]") ||
        !contiguous(&w2, "w2") || !want_type(&o, TILE_F32, "out") || !rows_ld(&o, "out", &m.ldo))
        goto fail;
    m.tokens = x.shape[0], m.hidden = x.shape[1], m.experts = w1.shape[0], m.inter = w1.shape[1] / 2;
    if (w1.shape[2] != m.hidden || w1.shape[1] != 2 * m.inter || w2.shape[0] != m.experts || w2.shape[1] != m.hidden ||
        w2.shape[2] != m.inter || o.shape[0] != m.tokens || o.shape[1] != m.hidden) {
        PyErr_SetString(PyExc_ValueError, "shapes: x [tokens, hidden], w1 [experts, 2 * inter, hidden], "
                                          "w2 [experts, hidden, inter], out [tokens, hidden]");
        goto fail;
    }
    m.x = x.ptr, m.w1 = w1.ptr, m.w2 = w2.ptr, m.out = o.ptr;
    if (lo != Py_None) {
        if (!tpy_array(&sc, lo, "router_logits", &l) || !rows_ld(&l, "router_logits", &m.ldl)) goto fail;
        if (l.dtype != TILE_F32 && l.dtype != TILE_F16 && !(dtype && !strcmp(dtype, "bf16") && l.itemsize == 2)) {
            PyErr_Format(PyExc_TypeError, "argument 'router_logits': f32, f16 or bf16, got '%s'", l.typestr);
            goto fail;
        }
        if (l.shape[0] != m.tokens || l.shape[1] != m.experts) {
            PyErr_SetString(PyExc_ValueError, "argument 'router_logits': expected [tokens, experts]");
            goto fail;
        }
        m.router_logits = l.ptr;
        m.logits_dtype = l.dtype == TILE_F32 || l.dtype == TILE_F16 ? (tile_dtype)l.dtype : TILE_BF16;
    }
    if (ido != Py_None) {
        if (!tpy_array(&sc, ido, "topk_ids", &ids) || !want_type(&ids, TILE_I32, "topk_ids") || !contiguous(&ids, "topk_ids") ||
            (lo != Py_None && !tpy_writable(&ids, "topk_ids", "moe (with router_logits)")))
            goto fail;
        m.topk_ids = ids.ptr;
    }
    if (wo != Py_None) {
        if (!tpy_array(&sc, wo, "topk_weights", &w) || !want_type(&w, TILE_F32, "topk_weights") ||
            !contiguous(&w, "topk_weights") || (lo != Py_None && !tpy_writable(&w, "topk_weights", "moe (with router_logits)")))
            goto fail;
        m.topk_weights = w.ptr;
    }
    if ((ido != Py_None && (ids.ndim != 2 || ids.shape[0] != m.tokens || ids.shape[1] != topk)) ||
        (wo != Py_None && (w.ndim != 2 || w.shape[0] != m.tokens || w.shape[1] != topk))) {
        PyErr_SetString(PyExc_ValueError, "topk_ids and topk_weights: expected [tokens, topk]");
        goto fail;
    }
    if (biaso != Py_None) {
        if (!tpy_array(&sc, biaso, "score_bias", &bias) || !want_type(&bias, TILE_F32, "score_bias") ||
            !want_ndim(&bias, 1, "score_bias", "[experts]") || !contiguous(&bias, "score_bias"))
            goto fail;
        m.score_bias = bias.ptr;
    }
    tile_status st;
    Py_BEGIN_ALLOW_THREADS
    st = tile_moe_forward(dev->ctx, &m);
    Py_END_ALLOW_THREADS
    tpy_scope_end(&sc, stream);
    if (st != TILE_OK) return tpy_raise(dev, st, "moe");
    Py_RETURN_NONE;
fail:
    tpy_scope_end(&sc, stream);
    return NULL;
}

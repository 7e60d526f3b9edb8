/* shipped.c - the shipped kernels on arrays: gemm (tile_gemm) and attention
 * (tile_attention_fwd).
 *
 * The Python layer (tile/__init__.py) allocates outputs; here every array
 * is resolved through arrays.c (so NumPy memory is used in place), its shape
 * and strides become the C call's sizes and leading dimensions, and the C
 * entry point does the rest (variant, tuning, launch) and its own checks.
 * NumPy has no bf16: dtype="bf16" reads u16 arrays as bf16. */
#include "pytile.h"

#include <string.h>

static int elem_dtype(const TPyArray *a, const char *dtype_override, const char *name) {
    if (dtype_override) {
        tile_dtype dt;
        if (tile_dtype_from_name(dtype_override, &dt) != TILE_OK) {
            PyErr_Format(PyExc_ValueError, "dtype: unknown type '%s'", dtype_override);
            return -1;
        }
        if (!tpy_dtype_compatible((int)dt, a)) {
            PyErr_Format(PyExc_TypeError, "argument '%s': an array of '%s' cannot hold %s", name, a->typestr, dtype_override);
            return -1;
        }
        return (int)dt;
    }
    if (a->dtype < 0) PyErr_Format(PyExc_TypeError, "argument '%s': unsupported element type '%s'", name, a->typestr);
    return a->dtype;
}

static bool want_ndim(const TPyArray *a, int nd, const char *name, const char *shape) {
    if (a->ndim == nd) return true;
    PyErr_Format(PyExc_ValueError, "argument '%s': expected %d dimensions %s, got %d", name, nd, shape, a->ndim);
    return false;
}

/* Row-major with leading dimension, or its transpose; false with ValueError when neither. */
static bool matrix_layout(const TPyArray *a, const char *name, bool allow_trans, int64_t *ld, int *trans) {
    *trans = 0;
    if (a->strides[1] == 1 || a->shape[1] == 1) {
        *ld = a->shape[0] == 1 ? (a->shape[1] > 0 ? a->shape[1] : 1) : a->strides[0];
        return true;
    }
    if (allow_trans && (a->strides[0] == 1 || a->shape[0] == 1)) {
        *trans = 1;
        *ld = a->strides[1];
        return true;
    }
    PyErr_Format(PyExc_ValueError, "argument '%s': one of its dimensions must be contiguous (strides %lld, %lld elements)", name,
                 (long long)a->strides[0], (long long)a->strides[1]);
    return false;
}

/* gemm(device, a, b, out, bias=None, activation=0, alpha=1.0, beta=0.0, stream=None, dtype=None, out_dtype=None) */
PyObject *tpy_gemm(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"device", "a", "b", "out", "bias", "activation", "alpha", "beta", "stream", "dtype", "out_dtype", NULL};
    PyObject *devobj, *ao, *bo, *oo, *biaso = Py_None, *streamo = Py_None;
    int act = 0;
    float alpha = 1.0f, beta = 0.0f;
    const char *dtype = NULL, *out_dtype = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OOO|OiffOzz:gemm", kw, TPy_DeviceType, &devobj, &ao, &bo, &oo, &biaso,
                                     &act, &alpha, &beta, &streamo, &dtype, &out_dtype))
        return NULL;
    TPyDevice *dev = (TPyDevice *)devobj;
    tile_stream stream;
    if (!tpy_stream(dev, streamo, &stream)) return NULL;
    TPyScope sc = {.dev = dev};
    TPyArray a, b, o, bias;
    tile_gemm_args g = {.size = sizeof g, .alpha = alpha, .beta = beta, .activation = (tile_activation)act, .stream = stream};
    if (!tpy_array(&sc, ao, "a", &a) || !tpy_array(&sc, bo, "b", &b) || !tpy_array(&sc, oo, "out", &o)) goto fail;
    if (!want_ndim(&a, 2, "a", "[M, K]") || !want_ndim(&b, 2, "b", "[K, N]") || !want_ndim(&o, 2, "out", "[M, N]")) goto fail;
    int in = elem_dtype(&a, dtype, "a");
    if (in < 0) goto fail;
    int bt = elem_dtype(&b, dtype, "b");
    if (bt < 0) goto fail;
    if (bt != in) {
        PyErr_Format(PyExc_TypeError, "argument 'b': %s, but a is %s", tile_dtype_name(bt), tile_dtype_name(in));
        goto fail;
    }
    int outt = elem_dtype(&o, out_dtype ? out_dtype : (dtype && o.itemsize == 2 && o.kind != 'f') ? dtype : NULL, "out");
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
        int btt = elem_dtype(&bias, (out_dtype || (dtype && bias.kind != 'f')) ? tile_dtype_name((tile_dtype)outt) : NULL, "bias");
        if (btt < 0) goto fail;
        if (btt != outt || bias.shape[0] != g.n || bias.strides[0] != 1) {
            PyErr_Format(PyExc_ValueError, "argument 'bias': expected %lld contiguous elements of %s", (long long)g.n,
                         tile_dtype_name((tile_dtype)outt));
            goto fail;
        }
        g.bias = bias.ptr;
    }
    tile_status st;
    Py_BEGIN_ALLOW_THREADS
    st = g.m && g.n ? tile_gemm(dev->ctx, &g) : TILE_OK;
    Py_END_ALLOW_THREADS
    tpy_scope_end(&sc, stream);
    if (st != TILE_OK) return tpy_raise(dev, st, "gemm");
    Py_RETURN_NONE;
fail:
    tpy_scope_end(&sc, stream);
    return NULL;
}

static bool attn_tensor(TPyScope *sc, PyObject *obj, const char *name, const char *dtype, TPyArray *a, int *dt) {
    if (!tpy_array(sc, obj, name, a) || !want_ndim(a, 4, name, "[batch, seq, heads, head_dim]")) return false;
    if ((*dt = elem_dtype(a, dtype, name)) < 0) return false;
    if (*dt != TILE_F16 && *dt != TILE_BF16) {
        PyErr_Format(PyExc_TypeError, "argument '%s': attention takes f16 or bf16, got %s", name, tile_dtype_name((tile_dtype)*dt));
        return false;
    }
    if (a->strides[3] != 1 && a->shape[3] != 1) {
        PyErr_Format(PyExc_ValueError, "argument '%s': head_dim must be contiguous (stride %lld elements)", name,
                     (long long)a->strides[3]);
        return false;
    }
    return true;
}

/* attention(device, q, k, v, out, causal=False, softmax_scale=0.0, stream=None, dtype=None) */
PyObject *tpy_attention(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"device", "q", "k", "v", "out", "causal", "softmax_scale", "stream", "dtype", NULL};
    PyObject *devobj, *qo, *ko, *vo, *oo, *streamo = Py_None;
    int causal = 0;
    float scale = 0.0f;
    const char *dtype = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OOOO|pfOz:attention", kw, TPy_DeviceType, &devobj, &qo, &ko, &vo, &oo,
                                     &causal, &scale, &streamo, &dtype))
        return NULL;
    TPyDevice *dev = (TPyDevice *)devobj;
    tile_stream stream;
    if (!tpy_stream(dev, streamo, &stream)) return NULL;
    TPyScope sc = {.dev = dev};
    TPyArray q, k, v, o;
    int dq, dk, dv, dout;
    if (!attn_tensor(&sc, qo, "q", dtype, &q, &dq) || !attn_tensor(&sc, ko, "k", dtype, &k, &dk) ||
        !attn_tensor(&sc, vo, "v", dtype, &v, &dv) || !attn_tensor(&sc, oo, "out", dtype, &o, &dout))
        goto fail;
    if (dk != dq || dv != dq || dout != dq) {
        PyErr_SetString(PyExc_TypeError, "q, k, v and out must have one element type");
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
                              .window_left = -1, .window_right = -1, .stream = stream};
    for (int i = 0; i < 3; i++) {
        at.q_stride[i] = q.strides[i], at.k_stride[i] = k.strides[i];
        at.v_stride[i] = v.strides[i], at.o_stride[i] = o.strides[i];
    }
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

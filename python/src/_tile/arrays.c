/* arrays.c - array arguments: from a Python object to a device pointer the
 * kernel can use, zero-copy.
 *
 * 1. The protocols, in order: __array_struct__ or __array_interface__
 *    (NumPy: host memory; the capsule is ten times faster to get),
 *    __cuda_array_interface__ (torch, cupy: device memory), __dlpack__ with
 *    __dlpack_device__ (kDLCPU host memory, kDLCUDA device memory; the
 *    capsule is taken as "used_dltensor" and its deleter called when the
 *    call ends).  Each gives the data pointer, type, shape and strides.
 * 2. Device memory goes to the kernel as it is: the runtime accepts memory
 *    of the context's CUDA context that someone else allocated (checked
 *    against the driver's allocation range, docs/runtime.md).  On the
 *    emulator it is refused.
 * 3. Host memory becomes device memory with tile_register_memory, which maps
 *    the bytes in place (the kernel reads and writes the NumPy array
 *    itself).  The registration covers the array's *owning* array (walking
 *    .base to the array with no base), so views, slices and the array itself
 *    share one registration, and it is cached on the Device: a sorted table
 *    of disjoint ranges looked up by binary search.  A weak reference to the
 *    owning array, whose callback is a Pin, unregisters it when that array
 *    dies.  Memory that no array owns (np.frombuffer over a bytearray, DLPack
 *    CPU tensors) is registered for the call only and unregistered at its end.
 * 4. On a cuda device, a call that used host memory synchronizes its stream
 *    before returning, so the memory is never freed under a running kernel. */
#include "pytile.h"
#include "dlpack.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* NumPy's C-level array interface, the capsule __array_struct__ returns (a
 * public ABI of the array interface protocol, version 3): the same facts as
 * __array_interface__ without building a dict, about ten times faster. */
typedef struct {
    int two; /* 2 */
    int nd;
    char typekind;
    int itemsize;
    int flags;
    Py_intptr_t *shape;
    Py_intptr_t *strides; /* bytes; NULL: C-contiguous */
    void *data;
    PyObject *descr;
} ArrayStruct;
enum { ARRAY_STRUCT_NOTSWAPPED = 0x200, ARRAY_STRUCT_WRITEABLE = 0x400 };

/* ---- Pin: the weakref callback that ends a cached registration ---- */
typedef struct TPyPin {
    PyObject_HEAD
    TPyDevice *dev; /* borrowed: the Device clears it (tpy_device_drop_regs) before it goes */
    uintptr_t lo;
} TPyPin;
PyTypeObject *TPy_PinType;

static int reg_find(TPyDevice *d, uintptr_t p) { /* index of the last entry with lo <= p, or -1 */
    int a = 0, b = d->nregs - 1, r = -1;
    while (a <= b) {
        int m = (a + b) / 2;
        if (d->regs[m].lo <= p) r = m, a = m + 1;
        else b = m - 1;
    }
    return r;
}

static void reg_remove(TPyDevice *d, int i) {
    HostReg r = d->regs[i];
    memmove(&d->regs[i], &d->regs[i + 1], (size_t)(d->nregs - i - 1) * sizeof *d->regs);
    d->nregs--;
    ((TPyPin *)r.pin)->dev = NULL;
    Py_XDECREF(r.weakref);
    Py_XDECREF(r.pin);
}

static PyObject *pin_call(PyObject *self, PyObject *args, PyObject *kwargs) {
    TPyPin *pin = (TPyPin *)self;
    TPyDevice *d = pin->dev;
    if (d) {
        int i = reg_find(d, pin->lo);
        if (i >= 0 && d->regs[i].lo == pin->lo) {
            tile_devptr dev = d->regs[i].dev;
            tile_context *ctx = d->ctx;
            bool sync = !d->is_emulator;
            reg_remove(d, i); /* out of the cache first: no other thread finds it while it goes */
            /* without the GIL: the device may be busy with another thread's launch until it ends */
            Py_BEGIN_ALLOW_THREADS
            if (sync) tile_synchronize(ctx);
            tile_unregister_memory(ctx, dev);
            Py_END_ALLOW_THREADS
        }
    }
    Py_RETURN_NONE;
}

/* Cached registrations are made one at a time (their GIL-free stretch included), so a thread that misses the
 * cache and waits here finds the array another thread was registering in the cache once it gets in.  Taken
 * without the GIL, which a thread holding it may be waiting for. */
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;

static void reg_lock(void) {
    if (pthread_mutex_trylock(&reg_mu) == 0) return;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&reg_mu);
    Py_END_ALLOW_THREADS
}

/* tile_register_memory without the GIL (the emulator's device is busy for the whole of another thread's launch). */
static tile_status register_host(tile_context *ctx, uintptr_t lo, uintptr_t hi, tile_devptr *dev) {
    tile_status st;
    Py_BEGIN_ALLOW_THREADS
    st = tile_register_memory(ctx, (void *)lo, hi - lo, dev);
    Py_END_ALLOW_THREADS
    return st;
}

static void pin_dealloc(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

static PyType_Slot pin_slots[] = {
    {Py_tp_new, tpy_no_new},
    {Py_tp_call, pin_call},
    {Py_tp_dealloc, pin_dealloc},
    {Py_tp_doc, "unregisters a cached host array when it dies"},
    {0, NULL},
};
static PyType_Spec pin_spec = {"tile._tile.Pin", sizeof(TPyPin), 0, Py_TPFLAGS_DEFAULT, pin_slots};

int tpy_pin_type_init(PyObject *module) {
    TPy_PinType = (PyTypeObject *)PyType_FromSpec(&pin_spec);
    return TPy_PinType ? 0 : -1;
}

void tpy_device_drop_regs(TPyDevice *d) {
    while (d->nregs) reg_remove(d, d->nregs - 1); /* tile_context_destroy unregisters the ranges */
    free(d->regs);
    d->regs = NULL;
    d->capregs = 0;
}

/* Register [lo, hi) of the owning array root and cache it; false (no exception) when it cannot be cached. */
static bool reg_add(TPyDevice *d, PyObject *root, uintptr_t lo, uintptr_t hi, tile_devptr *out) {
    TPyPin *pin = PyObject_New(TPyPin, TPy_PinType);
    if (!pin) {
        PyErr_Clear();
        return false;
    }
    pin->dev = NULL;
    pin->lo = lo;
    PyObject *wr = PyWeakref_NewRef(root, (PyObject *)pin);
    if (!wr) { /* not weakly referenceable: not cached */
        PyErr_Clear();
        Py_DECREF(pin);
        return false;
    }
    tile_devptr dev;
    tile_status st = register_host(d->ctx, lo, hi, &dev);
    if (st == TILE_OK && d->nregs == d->capregs) {
        int cap = d->capregs ? 2 * d->capregs : 16;
        HostReg *n = realloc(d->regs, (size_t)cap * sizeof *n);
        if (n) d->regs = n, d->capregs = cap;
        else st = TILE_ERROR_OUT_OF_MEMORY, tile_unregister_memory(d->ctx, dev);
    }
    if (st != TILE_OK) {
        Py_DECREF(wr);
        Py_DECREF(pin);
        return false;
    }
    pin->dev = d;
    int i = reg_find(d, lo) + 1;
    memmove(&d->regs[i + 1], &d->regs[i], (size_t)(d->nregs - i) * sizeof *d->regs);
    d->regs[i] = (HostReg){.lo = lo, .hi = hi, .dev = dev, .weakref = wr, .pin = (PyObject *)pin};
    d->nregs++;
    *out = dev;
    return true;
}

/* ---- the protocols ---- */

static int dtype_of(char kind, size_t size) {
    switch (kind) {
    case 'f': return size == 2 ? TILE_F16 : size == 4 ? TILE_F32 : size == 8 ? TILE_F64 : -1;
    case 'i': return size == 1 ? TILE_I8 : size == 2 ? TILE_I16 : size == 4 ? TILE_I32 : size == 8 ? TILE_I64 : -1;
    case 'u': return size == 1 ? TILE_U8 : size == 2 ? TILE_U16 : size == 4 ? TILE_U32 : size == 8 ? TILE_U64 : -1;
    default: return -1;
    }
}

bool tpy_dtype_compatible(int dt, const TPyArray *a) {
    if (a->dtype == dt && dt >= 0) return true;
    if (dt == TILE_BF16) return a->itemsize == 2 && (a->dtype == TILE_U16 || a->dtype == TILE_I16 || a->kind == 'V');
    if (dt == TILE_F8E4M3 || dt == TILE_F8E5M2)
        return a->itemsize == 1 && (a->dtype == TILE_U8 || a->dtype == TILE_I8 || a->kind == 'V');
    return false;
}

int tpy_elem_dtype(const TPyArray *a, const char *dtype_override, const char *name) {
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

static bool bad(const char *name, const char *what) {
    PyErr_Format(PyExc_TypeError, "argument '%s': %s", name, what);
    return false;
}

/* An int of a tuple or dict entry, as Py_ssize_t / pointer. */
static bool get_i64(PyObject *o, int64_t *v) {
    long long x = PyLong_AsLongLong(o);
    if (x == -1 && PyErr_Occurred()) return false;
    *v = x;
    return true;
}

/* Fill shape, strides (in elements), typestr/dtype from an array interface dict (NumPy's or CUDA's). */
static bool parse_interface(PyObject *dict, const char *name, TPyArray *a, uintptr_t *data) {
    if (!PyDict_Check(dict)) return bad(name, "its array interface is not a dict");
    PyObject *ts = PyDict_GetItemString(dict, "typestr");
    PyObject *shape = PyDict_GetItemString(dict, "shape");
    PyObject *dat = PyDict_GetItemString(dict, "data");
    PyObject *strides = PyDict_GetItemString(dict, "strides");
    PyObject *mask = PyDict_GetItemString(dict, "mask");
    if (!ts || !PyUnicode_Check(ts) || !shape || !PyTuple_Check(shape) || !dat || !PyTuple_Check(dat) || PyTuple_Size(dat) < 1)
        return bad(name, "its array interface lacks typestr, shape or data");
    if (mask && mask != Py_None) return bad(name, "masked arrays are not supported");
    PyObject *tsb = PyUnicode_AsUTF8String(ts);
    if (!tsb) return false;
    const char *t = PyBytes_AsString(tsb);
    snprintf(a->typestr, sizeof a->typestr, "%s", t);
    Py_DECREF(tsb);
    if (strlen(a->typestr) < 3 || a->typestr[0] == '>') {
        PyErr_Format(PyExc_TypeError, "argument '%s': unsupported element type '%s'", name, a->typestr);
        return false;
    }
    a->kind = a->typestr[1];
    a->itemsize = (size_t)strtoul(a->typestr + 2, NULL, 10);
    a->dtype = dtype_of(a->kind, a->itemsize);
    if (!a->itemsize) {
        PyErr_Format(PyExc_TypeError, "argument '%s': unsupported element type '%s'", name, a->typestr);
        return false;
    }
    Py_ssize_t nd = PyTuple_Size(shape);
    if (nd > TPY_MAXDIM) {
        PyErr_Format(PyExc_ValueError, "argument '%s': %d dimensions, at most %d", name, (int)nd, TPY_MAXDIM);
        return false;
    }
    a->ndim = (int)nd;
    for (int i = 0; i < a->ndim; i++) {
        if (!get_i64(PyTuple_GetItem(shape, i), &a->shape[i])) {
            PyErr_Clear();
            return bad(name, "its array interface's shape holds something other than integers");
        }
        if (a->shape[i] < 0) { /* it read as "no element": a null pointer the kernel then wrote through */
            PyErr_Format(PyExc_ValueError, "argument '%s': dimension %d of its shape is negative (%lld)", name, i, (long long)a->shape[i]);
            return false;
        }
    }
    if (strides && strides != Py_None) {
        if (!PyTuple_Check(strides) || PyTuple_Size(strides) != nd) return bad(name, "strides do not match the shape");
        for (int i = 0; i < a->ndim; i++) {
            int64_t s;
            if (!get_i64(PyTuple_GetItem(strides, i), &s)) return false;
            if (s % (int64_t)a->itemsize) {
                PyErr_Format(PyExc_ValueError, "argument '%s': stride %lld bytes is not a multiple of the element size %zu",
                             name, (long long)s, a->itemsize);
                return false;
            }
            a->strides[i] = s / (int64_t)a->itemsize;
        }
    } else {
        int64_t s = 1;
        for (int i = a->ndim - 1; i >= 0; i--) a->strides[i] = s, s *= a->shape[i];
    }
    void *p = PyLong_AsVoidPtr(PyTuple_GetItem(dat, 0));
    if (!p && PyErr_Occurred()) return false;
    *data = (uintptr_t)p;
    PyObject *ro = PyTuple_Size(dat) > 1 ? PyTuple_GetItem(dat, 1) : NULL; /* (address, read-only flag) */
    a->readonly = ro && PyObject_IsTrue(ro) > 0;
    PyErr_Clear();
    return true;
}

/* The same from an __array_struct__ capsule. */
static bool parse_struct(PyObject *cap, const char *name, TPyArray *a, uintptr_t *data) {
    ArrayStruct *t = PyCapsule_CheckExact(cap) ? PyCapsule_GetPointer(cap, PyCapsule_GetName(cap)) : NULL;
    if (!t || t->two != 2) {
        PyErr_Clear();
        return bad(name, "its __array_struct__ is not an array interface");
    }
    a->kind = t->typekind;
    a->itemsize = t->itemsize > 0 ? (size_t)t->itemsize : 0;
    bool raw = t->typekind == 'V'; /* void and structured elements: bytes, which have no byte order */
    snprintf(a->typestr, sizeof a->typestr, "%c%c%d", raw ? '|' : (t->flags & ARRAY_STRUCT_NOTSWAPPED) ? '<' : '>', t->typekind,
             t->itemsize);
    if ((!raw && !(t->flags & ARRAY_STRUCT_NOTSWAPPED)) || !a->itemsize) {
        PyErr_Format(PyExc_TypeError, "argument '%s': unsupported element type '%s'", name, a->typestr);
        return false;
    }
    a->dtype = dtype_of(a->kind, a->itemsize);
    if (t->nd > TPY_MAXDIM || t->nd < 0) {
        PyErr_Format(PyExc_ValueError, "argument '%s': %d dimensions, at most %d", name, t->nd, TPY_MAXDIM);
        return false;
    }
    a->ndim = t->nd;
    int64_t st = 1;
    for (int i = a->ndim - 1; i >= 0; i--) {
        a->shape[i] = t->shape[i];
        if (t->strides) {
            if (t->strides[i] % (Py_intptr_t)a->itemsize) {
                PyErr_Format(PyExc_ValueError, "argument '%s': stride %lld bytes is not a multiple of the element size %zu",
                             name, (long long)t->strides[i], a->itemsize);
                return false;
            }
            a->strides[i] = t->strides[i] / (Py_intptr_t)a->itemsize;
        } else a->strides[i] = st;
        st *= a->shape[i];
    }
    *data = (uintptr_t)t->data;
    /* NumPy gives structured arrays' flags as 0: their writability is then __array_interface__'s (host_interface) */
    a->readonly = t->flags ? !(t->flags & ARRAY_STRUCT_WRITEABLE) : -1;
    return true;
}

/* The array facts of a host array: __array_struct__, else __array_interface__.
 * 1: found, 0: obj has neither (no exception), -1: error. */
static int host_interface(PyObject *obj, const char *name, TPyArray *a, uintptr_t *data) {
    static PyObject *s_as, *s_ai;
    if (!s_as && (!(s_as = PyUnicode_InternFromString("__array_struct__")) ||
                  !(s_ai = PyUnicode_InternFromString("__array_interface__"))))
        return -1;
    PyObject *as = PyObject_GetAttr(obj, s_as);
    if (as) {
        bool ok = parse_struct(as, name, a, data);
        Py_DECREF(as);
        if (ok && a->readonly < 0) { /* flags not given: the interface's (address, read-only) says */
            PyObject *ai = PyObject_GetAttr(obj, s_ai), *dat = ai && PyDict_Check(ai) ? PyDict_GetItemString(ai, "data") : NULL;
            a->readonly = dat && PyTuple_Check(dat) && PyTuple_Size(dat) > 1 && PyObject_IsTrue(PyTuple_GetItem(dat, 1)) > 0;
            Py_XDECREF(ai);
            PyErr_Clear();
        }
        return ok ? 1 : -1;
    }
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
    PyErr_Clear();
    PyObject *ai = PyObject_GetAttr(obj, s_ai);
    if (ai) {
        bool ok = parse_interface(ai, name, a, data);
        Py_DECREF(ai);
        return ok ? 1 : -1;
    }
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
    PyErr_Clear();
    return 0;
}

/* [lo, hi) of the bytes the array spans; false when it has no element. */
static bool extent(const TPyArray *a, uintptr_t data, uintptr_t *lo, uintptr_t *hi) {
    int64_t mn = 0, mx = 0;
    for (int i = 0; i < a->ndim; i++) {
        if (a->shape[i] <= 0) return false;
        int64_t e = (a->shape[i] - 1) * a->strides[i] * (int64_t)a->itemsize;
        if (e < 0) mn += e;
        else mx += e;
    }
    *lo = data + (uintptr_t)mn;
    *hi = data + (uintptr_t)mx + a->itemsize;
    return true;
}

static bool temp_register(TPyScope *sc, const char *name, uintptr_t lo, uintptr_t hi, tile_devptr *dev) {
    for (int i = 0; i < sc->ntemps; i++)
        if (sc->temp_lo[i] <= lo && hi <= sc->temp_hi[i]) {
            *dev = sc->temps[i] + (lo - sc->temp_lo[i]);
            return true;
        }
    if (sc->ntemps == (int)(sizeof sc->temps / sizeof sc->temps[0])) {
        PyErr_Format(PyExc_ValueError, "argument '%s': too many host arrays without an owning array in one call", name);
        return false;
    }
    tile_status st = register_host(sc->dev->ctx, lo, hi, dev);
    if (st != TILE_OK) {
        PyErr_Format(PyExc_ValueError, "argument '%s': cannot use this host memory: %s", name, tile_last_error(sc->dev->ctx));
        return false;
    }
    sc->temp_lo[sc->ntemps] = lo, sc->temp_hi[sc->ntemps] = hi;
    sc->temps[sc->ntemps++] = *dev;
    return true;
}

/* The owning array of obj: follow .base through arrays to one with no base.
 * New reference, or NULL (no exception) when the memory's owner is no array;
 * then *outer (when not NULL) is the last array of the chain, the one over the
 * foreign buffer (np.frombuffer's; a new reference, or NULL). */
static PyObject *owning_array(PyObject *obj, PyObject **outer) {
    static PyObject *s_base;
    if (outer) *outer = NULL;
    if (!s_base && !(s_base = PyUnicode_InternFromString("base"))) return NULL;
    Py_INCREF(obj);
    for (int depth = 0; depth < 64; depth++) {
        PyObject *b = PyObject_GetAttr(obj, s_base);
        if (!b) {
            PyErr_Clear();
            break;
        }
        if (b == Py_None) {
            Py_DECREF(b);
            return obj;
        }
        if (!PyObject_HasAttrString(b, "__array_struct__") && !PyObject_HasAttrString(b, "__array_interface__")) {
            Py_DECREF(b);
            if (outer) *outer = obj, obj = NULL;
            break;
        }
        Py_DECREF(obj);
        obj = b;
    }
    Py_XDECREF(obj);
    return NULL;
}

/* Host memory for the kernel.  cacheable: a NumPy array, whose owning array is registered once and cached;
 * otherwise the memory is registered for the call, over [wlo, whi) when that holds the array (the storage a
 * DLPack tensor's views share: see torch_storage), so that other views of it in the call are inside one
 * registration instead of overlapping it. */
static bool host_memory(TPyScope *sc, PyObject *obj, const char *name, TPyArray *a, uintptr_t data, bool cacheable,
                        uintptr_t wlo, uintptr_t whi) {
    TPyDevice *d = sc->dev;
    uintptr_t lo, hi;
    a->host = 1;
    if (!d->is_emulator) sc->used_host = 1;
    if (!extent(a, data, &lo, &hi)) { /* no element: nothing to map */
        a->ptr = 0;
        return true;
    }
    int i = reg_find(d, lo);
    if (i >= 0 && hi <= d->regs[i].hi) {
        a->ptr = d->regs[i].dev + (data - d->regs[i].lo);
        return true;
    }
    tile_devptr dev;
    if (cacheable) {
        PyObject *outer, *root = owning_array(obj, &outer);
        if (outer) { /* memory no array owns: the call's registration covers the whole array over it, so that other
                      * views of it in the call (f[:50], f[30:]) are inside it, not overlapping it */
            TPyArray oa = {0};
            uintptr_t odata, olo, ohi;
            if (host_interface(outer, name, &oa, &odata) == 1 && extent(&oa, odata, &olo, &ohi) && olo <= lo && hi <= ohi)
                lo = olo, hi = ohi;
            Py_DECREF(outer);
            PyErr_Clear();
        }
        if (root) {
            TPyArray ra = {0};
            uintptr_t rdata, rlo, rhi;
            bool ok = host_interface(root, name, &ra, &rdata) == 1 && extent(&ra, rdata, &rlo, &rhi) && rlo <= lo && hi <= rhi;
            if (ok) {
                reg_lock();
                i = reg_find(d, lo); /* another thread's registration, made while this one waited */
                if (i >= 0 && hi <= d->regs[i].hi) rlo = d->regs[i].lo, dev = d->regs[i].dev;
                else ok = reg_add(d, root, rlo, rhi, &dev);
                pthread_mutex_unlock(&reg_mu);
            }
            Py_DECREF(root);
            PyErr_Clear();
            if (ok) {
                a->ptr = dev + (data - rlo);
                return true;
            }
        }
    }
    if (wlo <= lo && hi <= whi && wlo < whi) lo = wlo, hi = whi;
    if (!temp_register(sc, name, lo, hi, &dev)) return false;
    a->ptr = dev + (data - lo);
    return true;
}

/* A PyTorch tensor's storage, [lo, hi): the bytes all views of it share (t[:-1] and t[1:] overlap inside
 * it).  DLPack gives a tensor's own bytes only; torch's untyped_storage() (data_ptr(), nbytes()) gives the
 * rest.  False, with no exception, for anything else. */
static bool torch_storage(PyObject *obj, uintptr_t *lo, uintptr_t *hi) {
    PyObject *s = PyObject_HasAttrString(obj, "untyped_storage") ? PyObject_CallMethod(obj, "untyped_storage", NULL) : NULL;
    PyObject *p = s ? PyObject_CallMethod(s, "data_ptr", NULL) : NULL;
    PyObject *n = p ? PyObject_CallMethod(s, "nbytes", NULL) : NULL;
    unsigned long long base = p && PyLong_Check(p) ? PyLong_AsUnsignedLongLong(p) : 0;
    unsigned long long size = n && PyLong_Check(n) ? PyLong_AsUnsignedLongLong(n) : 0;
    bool ok = !PyErr_Occurred() && base && size && size <= UINTPTR_MAX - base;
    PyErr_Clear();
    Py_XDECREF(n);
    Py_XDECREF(p);
    Py_XDECREF(s);
    if (ok) *lo = (uintptr_t)base, *hi = (uintptr_t)(base + size);
    return ok;
}

static bool from_dlpack(TPyScope *sc, PyObject *obj, const char *name, TPyArray *a) {
    PyObject *devt = PyObject_CallMethod(obj, "__dlpack_device__", NULL);
    if (!devt) return false;
    long type = -1, id = 0;
    if (PyTuple_Check(devt) && PyTuple_Size(devt) >= 1) type = PyLong_AsLong(PyTuple_GetItem(devt, 0));
    if (!PyErr_Occurred() && PyTuple_Check(devt) && PyTuple_Size(devt) >= 2) id = PyLong_AsLong(PyTuple_GetItem(devt, 1));
    Py_DECREF(devt);
    if (PyErr_Occurred()) return false;
    bool device_mem = type == kDLCUDA || type == kDLCUDAManaged;
    if (!device_mem && type != kDLCPU && type != kDLCUDAHost) {
        PyErr_Format(PyExc_TypeError, "argument '%s': DLPack device type %ld is neither CPU nor CUDA", name, type);
        return false;
    }
    if (device_mem && sc->dev->is_emulator)
        return bad(name, "CUDA device memory cannot be used on the emulator (use a host array, e.g. NumPy)");
    /* a tensor of another GPU: its address means nothing in this device's context (the device's name is
     * "cuda:N", its ordinal, as tile_context_get_properties says) */
    if (device_mem && !strncmp(sc->dev->name, "cuda:", 5) && id != strtol(sc->dev->name + 5, NULL, 10)) {
        PyErr_Format(PyExc_ValueError, "argument '%s': a DLPack tensor on cuda:%ld, the launch is on %s", name, id, sc->dev->name);
        return false;
    }
    if (sc->ncapsules == (int)(sizeof sc->capsules / sizeof sc->capsules[0])) return bad(name, "too many DLPack arguments");
    PyObject *cap;
    if (device_mem) {
        /* DLPack's stream protocol: the consumer's stream, so that the producer makes it wait for the tensor's
         * pending work (PyTorch: an event on its current stream); the call's CUstream handle, or 1, DLPack's
         * number for the legacy default stream (tile's default stream is the NULL stream) */
        int given = sc->stream && sc->stream != Py_None ? PyObject_IsTrue(sc->stream) : 0;
        if (given < 0) return false;
        PyObject *one = given ? NULL : PyLong_FromLong(1);
        PyObject *meth = given || one ? PyObject_GetAttrString(obj, "__dlpack__") : NULL;
        PyObject *noargs = meth ? PyTuple_New(0) : NULL;
        PyObject *kw = noargs ? Py_BuildValue("{sO}", "stream", given ? sc->stream : one) : NULL;
        cap = kw ? PyObject_Call(meth, noargs, kw) : NULL;
        Py_XDECREF(kw);
        Py_XDECREF(noargs);
        Py_XDECREF(meth);
        Py_XDECREF(one);
    } else {
        cap = PyObject_CallMethod(obj, "__dlpack__", NULL);
    }
    if (!cap) return false;
    DLManagedTensor *m = PyCapsule_IsValid(cap, "dltensor") ? PyCapsule_GetPointer(cap, "dltensor") : NULL;
    if (!m) {
        Py_DECREF(cap);
        PyErr_Clear();
        return bad(name, "its __dlpack__() returned no 'dltensor' capsule (not a capsule, or one already used)");
    }
    PyCapsule_SetName(cap, "used_dltensor");
    sc->capsules[sc->ncapsules++] = cap; /* its deleter runs at the end of the call */
    DLTensor *t = &m->dl_tensor;
    if (t->dtype.lanes != 1) return bad(name, "vector element types are not supported");
    a->itemsize = (t->dtype.bits + 7u) / 8u;
    a->kind = t->dtype.code == kDLFloat ? 'f' : t->dtype.code == kDLInt ? 'i' : t->dtype.code == kDLUInt ? 'u' : t->dtype.code == kDLBool ? 'b' : 'V';
    a->dtype = t->dtype.code == kDLBfloat && t->dtype.bits == 16 ? TILE_BF16 : dtype_of(a->kind, a->itemsize);
    /* the type's name for messages: int32, uint8, float16, bfloat16, bool, or DLPack's code:bits */
    static const char *const codes[] = {[kDLInt] = "int", [kDLUInt] = "uint", [kDLFloat] = "float", [kDLBfloat] = "bfloat"};
    if (t->dtype.code == kDLBool) snprintf(a->typestr, sizeof a->typestr, "bool");
    else if (t->dtype.code < sizeof codes / sizeof *codes && codes[t->dtype.code])
        snprintf(a->typestr, sizeof a->typestr, "%s%d", codes[t->dtype.code], t->dtype.bits);
    else snprintf(a->typestr, sizeof a->typestr, "dl%d:%d", t->dtype.code, t->dtype.bits);
    if (t->ndim > TPY_MAXDIM || t->ndim < 0) {
        PyErr_Format(PyExc_ValueError, "argument '%s': %d dimensions, at most %d", name, (int)t->ndim, TPY_MAXDIM);
        return false;
    }
    a->ndim = t->ndim;
    int64_t s = 1;
    for (int i = a->ndim - 1; i >= 0; i--) {
        if (t->shape[i] < 0) {
            PyErr_Format(PyExc_ValueError, "argument '%s': dimension %d of its shape is negative (%lld)", name, i, (long long)t->shape[i]);
            return false;
        }
        a->shape[i] = t->shape[i];
        a->strides[i] = t->strides ? t->strides[i] : s;
        s *= t->shape[i];
    }
    uintptr_t data = (uintptr_t)t->data + (uintptr_t)t->byte_offset;
    if (device_mem) {
        a->ptr = (tile_devptr)data;
        return true;
    }
    uintptr_t wlo = 0, whi = 0;
    torch_storage(obj, &wlo, &whi);
    return host_memory(sc, obj, name, a, data, false, wlo, whi);
}

bool tpy_writable(const TPyArray *a, const char *name, const char *what) {
    if (a->readonly <= 0) return true;
    PyErr_Format(PyExc_ValueError, "argument '%s': the array is read-only, and %s writes it (pass a writable array: a copy of it, "
                                   "or one whose writeable flag is set)", name, what);
    return false;
}

PyObject *tpy_no_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    (void)args, (void)kwargs;
    PyObject *name = PyObject_GetAttrString((PyObject *)type, "__name__");
    PyErr_Format(PyExc_TypeError, "tile.%S objects are made by tile (tile.compile, tile.load_ptx, kernel[grid]), not by calling the type",
                 name ? name : Py_None);
    Py_XDECREF(name);
    return NULL;
}

/* A NumPy scalar (np.int64(5), np.float32(1.5)): a value, though it also shows the array protocols.  On the
 * launch path for every array argument of a 64-bit PTX parameter, so numpy.generic is looked up once (NumPy,
 * once imported, stays loaded) and kept. */
bool tpy_numpy_scalar(PyObject *o) {
    static PyObject *generic, *ndarray; /* under the GIL */
    if (!generic) {
        PyObject *name = PyUnicode_FromString("numpy");
        if (!name) return PyErr_Clear(), false;
        PyObject *np = PyImport_GetModule(name); /* only if NumPy is loaded: else o cannot be one of its scalars */
        Py_DECREF(name);
        if (!np) return PyErr_Clear(), false;
        generic = PyObject_GetAttrString(np, "generic");
        ndarray = PyObject_GetAttrString(np, "ndarray");
        Py_DECREF(np);
        if (!generic || !ndarray) {
            Py_CLEAR(generic);
            Py_CLEAR(ndarray);
            return PyErr_Clear(), false;
        }
    }
    if ((PyObject *)Py_TYPE(o) == ndarray) return false; /* the common case of a launch's array arguments, at no cost */
    int r = PyObject_IsInstance(o, generic);
    if (r < 0) PyErr_Clear();
    return r > 0;
}

/* __cuda_array_interface__ version 3's "stream": the producer's stream, after whose work on the array the consumer's
 * must come (1: the legacy default stream, 2: the per-thread one, which the driver takes as the handle
 * CU_STREAM_PER_THREAD; 0 is disallowed).  Nothing to do when it is the call's own stream (tile's default stream
 * is the legacy one); else an event recorded there, which the call's stream waits for (no host wait). */
static bool cai_stream_wait(TPyScope *sc, const char *name, PyObject *ps) {
    if (!PyLong_Check(ps)) {
        PyErr_Format(PyExc_TypeError, "argument '%s': its __cuda_array_interface__ 'stream' is neither None nor an int, got %R", name,
                     (PyObject *)Py_TYPE(ps));
        return false;
    }
    unsigned long long p = PyLong_AsUnsignedLongLong(ps);
    if (PyErr_Occurred() || p == 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "argument '%s': its __cuda_array_interface__ 'stream' is %R, not a stream (1 is the legacy "
                                       "default stream, 2 the per-thread one, others a CUstream handle; 0 is disallowed)", name, ps);
        return false;
    }
    PyObject *callo = sc->stream && sc->stream != Py_None ? sc->stream : NULL;
    unsigned long long c = callo ? PyLong_AsUnsignedLongLong(callo) : 0; /* an int: tpy_stream took it */
    if (PyErr_Occurred()) return false;
    if (p == (c ? c : 1)) return true;
    tile_stream from = NULL, to = NULL;
    if (p != 1 && !tpy_stream(sc->dev, ps, &from)) return false;
    if (callo && !tpy_stream(sc->dev, callo, &to)) return false;
    tile_context *ctx = sc->dev->ctx;
    tile_event ev;
    tile_status st = tile_event_create(ctx, &ev);
    if (st == TILE_OK) {
        st = tile_event_record(ctx, ev, from);
        if (st == TILE_OK) st = tile_stream_wait_event(ctx, to, ev);
        tile_status st2 = tile_event_destroy(ctx, ev); /* the wait holds what it waits for */
        if (st == TILE_OK) st = st2;
    }
    if (st != TILE_OK) {
        char what[160];
        snprintf(what, sizeof what, "argument '%s': waiting for its __cuda_array_interface__ stream", name);
        tpy_raise(sc->dev, st, what);
        return false;
    }
    return true;
}

bool tpy_array(TPyScope *sc, PyObject *obj, const char *name, TPyArray *a) {
    static PyObject *s_cai, *s_dl;
    if (!s_cai && (!(s_cai = PyUnicode_InternFromString("__cuda_array_interface__")) ||
                  !(s_dl = PyUnicode_InternFromString("__dlpack__")))) return false;
    memset(a, 0, sizeof *a);
    uintptr_t data;
    int found = host_interface(obj, name, a, &data);
    if (found) return found > 0 && host_memory(sc, obj, name, a, data, true, 0, 0);
    PyObject *cai = PyObject_GetAttr(obj, s_cai);
    if (cai) {
        bool ok = parse_interface(cai, name, a, &data);
        PyObject *ps = ok && PyDict_Check(cai) ? PyDict_GetItemString(cai, "stream") : NULL;
        Py_XINCREF(ps);
        Py_DECREF(cai);
        if (ok && sc->dev->is_emulator) ok = bad(name, "CUDA device memory cannot be used on the emulator (use a host array, e.g. NumPy)");
        if (ok && ps && ps != Py_None) ok = cai_stream_wait(sc, name, ps);
        Py_XDECREF(ps);
        if (!ok) return false;
        a->ptr = (tile_devptr)data;
        return true;
    }
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return false;
    PyErr_Clear();
    if (PyObject_HasAttr(obj, s_dl)) return from_dlpack(sc, obj, name, a);
    PyErr_Format(PyExc_TypeError,
                 "argument '%s': expected an array (NumPy, DLPack or __cuda_array_interface__), got %R", name,
                 (PyObject *)Py_TYPE(obj));
    return false;
}

void tpy_scope_end(TPyScope *sc, tile_stream stream) {
    if (!sc->dev) return;
    if (sc->used_host || sc->ntemps || sc->ncapsules) {
        /* the call's work must be done with the memory before it is given back; on emu it already is */
        if (!sc->dev->is_emulator && (sc->used_host || sc->ntemps)) {
            Py_BEGIN_ALLOW_THREADS
            tile_stream_synchronize(sc->dev->ctx, stream);
            Py_END_ALLOW_THREADS
        }
    }
    if (sc->ntemps) {
        tile_context *ctx = sc->dev->ctx;
        Py_BEGIN_ALLOW_THREADS
        for (int i = 0; i < sc->ntemps; i++) tile_unregister_memory(ctx, sc->temps[i]);
        Py_END_ALLOW_THREADS
    }
    sc->ntemps = 0;
    if (!sc->ncapsules) return;
    /* The call's exception (a refused argument) is put aside while the deleters run: a deleter may run Python
     * code (a producer written in Python, through ctypes or cffi), which must not start with an exception set. */
    PyObject *et, *ev, *etb;
    PyErr_Fetch(&et, &ev, &etb);
    for (int i = 0; i < sc->ncapsules; i++) {
        DLManagedTensor *m = PyCapsule_GetPointer(sc->capsules[i], "used_dltensor");
        if (m && m->deleter) m->deleter(m);
        PyErr_Clear(); /* the deleter returns nothing: nothing it could raise belongs to the call */
        Py_DECREF(sc->capsules[i]);
    }
    PyErr_Restore(et, ev, etb);
    sc->ncapsules = 0;
}

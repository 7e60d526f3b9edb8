/* ptx.c - PTX that another compiler wrote (Triton, nvcc, a hand), loaded and launched as it is:
 * load_ptx(device, text) -> PtxModule; module.kernel_names() -> [names] (the runtime's reading of the PTX's
 * .entry headers, tile_module_get_kernel_names); module.kernel(name) -> PtxKernel; kernel[grid](*args,
 * block=None, shared=0, cluster=None, cooperative=False, stream=None).
 *
 * A raw kernel's parameters are what its PTX header declares (tile_kernel_attributes.signature of a
 * raw kernel: "ptr, u32, f32, b8[24]"), so each argument is converted by its PTX type:
 *   ptr, u64, s64, b64   an array (its device pointer, through arrays.c), None (0) or an int (the
 *                        value itself);
 *   u8..u32, s8..s32,    an integer, range-checked (.u and .b types take either sign's range: Triton
 *                        declares its signed scalars .u8/.u16/.u32/.u64, and a negative value is two's
 *                        complement);
 *   b8..b32
 *   f16, f32, f64        a number;
 *   bN[count]            anything bytes() accepts (bytes, bytearray, a NumPy array or structured
 *                        scalar) of exactly the parameter's size: a struct passed by value.
 * The block is the PTX's .maxntid / .reqntid unless block= is given; shared= is dynamic shared
 * memory.  The launch is tile_launch_ex with the GIL released; what arrays.c borrowed is given back
 * after it. */
#include "pytile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PTX_MAXPARAMS 256

typedef struct PtxParam {
    char kind; /* 'p' 64-bit (pointer or integer), 'i' signed, 'u' unsigned, 'b' untyped bits, 'f' float, 'a' byte array */
    unsigned bytes;
    char type[24];
} PtxParam;

typedef struct TPyPtxModule {
    PyObject_HEAD
    TPyDevice *dev;
    tile_module *mod;
} TPyPtxModule;

typedef struct TPyPtxKernel {
    PyObject_HEAD
    TPyPtxModule *mod; /* keeps the module (and so the kernel) loaded */
    tile_kernel *k;
    char *name, *signature;
    unsigned block_threads;
    int nparams;
    PtxParam *params;
} TPyPtxKernel;

typedef struct TPyPtxLauncher {
    PyObject_HEAD
    TPyPtxKernel *k;
    tile_dim3 grid;
} TPyPtxLauncher;

static PyTypeObject *TPy_PtxModuleType, *TPy_PtxKernelType, *TPy_PtxLauncherType;

/* ---- the signature of a raw kernel ---- */

static bool parse_signature(TPyPtxKernel *k) {
    const char *s = k->signature;
    int n = 0;
    for (const char *c = s; *c; c++) n += *c == ',';
    n = *s ? n + 1 : 0;
    if (n > PTX_MAXPARAMS) {
        PyErr_Format(PyExc_ValueError, "kernel '%s': more than %d parameters", k->name, PTX_MAXPARAMS);
        return false;
    }
    k->params = calloc((size_t)(n ? n : 1), sizeof *k->params);
    if (!k->params) {
        PyErr_NoMemory();
        return false;
    }
    for (int i = 0; i < n; i++) {
        while (*s == ' ' || *s == ',') s++;
        size_t len = strcspn(s, ",");
        PtxParam *p = &k->params[i];
        snprintf(p->type, sizeof p->type, "%.*s", (int)len, s);
        s += len;
        unsigned bits = (unsigned)atoi(p->type + 1), count = 0;
        const char *br = strchr(p->type, '[');
        if (br) count = (unsigned)strtoul(br + 1, NULL, 10);
        if (!strcmp(p->type, "ptr")) p->kind = 'p', p->bytes = 8;
        else if (br) p->kind = 'a', p->bytes = (bits >= 8 ? bits / 8 : 1) * count;
        else if (bits == 64 && p->type[0] != 'f') p->kind = 'p', p->bytes = 8;
        else if (strchr("usbf", p->type[0]) && bits >= 8 && bits <= 64) p->kind = p->type[0] == 's' ? 'i' : p->type[0], p->bytes = bits / 8;
        else {
            PyErr_Format(TPy_Error, "kernel '%s': parameter %d has PTX type '%s', which cannot be passed from Python", k->name, i,
                         p->type);
            return false;
        }
    }
    k->nparams = n;
    return true;
}

/* ---- one argument ---- */

/* A scalar into slot (8 bytes, little-endian: the parameter's bytes first). */
static bool ptx_scalar(const TPyPtxKernel *k, int i, const PtxParam *p, PyObject *o, TPyScope *sc, uint64_t *slot) {
    *slot = 0;
    char pname[48];
    snprintf(pname, sizeof pname, "%d (%s)", i, p->type);
    if (p->kind == 'p') {
        if (o == Py_None) return true;
        if (!PyLong_Check(o) && !PyFloat_Check(o) && !tpy_numpy_scalar(o)) { /* an array; else something with __index__ */
            TPyArray a;
            if (tpy_array(sc, o, pname, &a)) {
                *slot = a.ptr;
                return true;
            }
            if (!PyIndex_Check(o) || !PyErr_ExceptionMatches(PyExc_TypeError)) {
                char was[80], now[320];
                snprintf(was, sizeof was, "argument '%s': ", pname);
                snprintf(now, sizeof now, "kernel '%s': argument %s: ", k->name, pname);
                tpy_name_kernel(was, now);
                return false;
            }
            PyErr_Clear();
        }
    }
    if (p->kind == 'f') {
        /* a number: Python's, or anything with __float__ (NumPy scalars and 0-d arrays), but not text */
        PyObject *fo = PyUnicode_Check(o) || PyBytes_Check(o) ? NULL : PyNumber_Float(o);
        if (!fo) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "kernel '%s': argument %s: expected a number, got %R", k->name, pname, (PyObject *)Py_TYPE(o));
            return false;
        }
        double v = PyFloat_AsDouble(fo);
        Py_DECREF(fo);
        if (v == -1.0 && PyErr_Occurred()) return false;
        float f = (float)v;
        uint16_t h = tpy_f64_to_small(v, 10, 5);
        if (p->bytes == 8) memcpy(slot, &v, 8);
        else if (p->bytes == 4) memcpy(slot, &f, 4);
        else memcpy(slot, &h, 2);
        return true;
    }
    PyObject *ix = PyNumber_Index(o);
    if (!ix) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "kernel '%s': argument %s: expected an integer%s, got %R", k->name, pname,
                     p->kind == 'p' ? ", an array or None" : "", (PyObject *)Py_TYPE(o));
        return false;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(ix, &overflow);
    unsigned long long uv = (unsigned long long)v;
    if (overflow > 0) {
        uv = PyLong_AsUnsignedLongLong(ix);
        if (PyErr_Occurred()) PyErr_Clear();
        else overflow = 0, v = 0;
    }
    Py_DECREF(ix);
    if (v == -1 && PyErr_Occurred()) return false;
    unsigned bits = 8 * p->bytes;
    bool neg = !overflow && v < 0;
    bool ok = !overflow;
    if (ok && bits < 64) {
        long long lo = -(1ll << (bits - 1));
        unsigned long long hi = (p->kind == 'i' ? (1ull << (bits - 1)) : (1ull << bits)) - 1;
        ok = neg ? v >= lo : uv <= hi;
    }
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "kernel '%s': argument %s: %R does not fit", k->name, pname, o);
        return false;
    }
    if (bits < 64) uv &= (1ull << bits) - 1;
    *slot = uv;
    return true;
}

/* ---- PtxModule ---- */

static void ptxmod_dealloc(PyObject *self) {
    TPyPtxModule *m = (TPyPtxModule *)self;
    PyTypeObject *tp = Py_TYPE(self);
    if (m->mod) tile_module_unload(m->mod);
    Py_XDECREF((PyObject *)m->dev);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

/* load_ptx(device, text) */
PyObject *tpy_load_ptx(PyObject *self, PyObject *args) {
    PyObject *devobj;
    const char *text;
    if (!PyArg_ParseTuple(args, "O!s:load_ptx", TPy_DeviceType, &devobj, &text)) return NULL;
    TPyDevice *dev = (TPyDevice *)devobj;
    tile_module *mod;
    tile_status st;
    Py_BEGIN_ALLOW_THREADS
    st = tile_module_load_ptx(dev->ctx, text, &mod);
    Py_END_ALLOW_THREADS
    if (st != TILE_OK) return tpy_raise(dev, st, "load_ptx");
    TPyPtxModule *m = PyObject_New(TPyPtxModule, TPy_PtxModuleType);
    if (!m) {
        tile_module_unload(mod);
        return NULL;
    }
    Py_INCREF(devobj);
    m->dev = dev;
    m->mod = mod;
    return (PyObject *)m;
}

static PyObject *ptxmod_kernel(PyObject *self, PyObject *args) {
    TPyPtxModule *m = (TPyPtxModule *)self;
    const char *name;
    if (!PyArg_ParseTuple(args, "s:kernel", &name)) return NULL;
    tile_kernel *tk;
    tile_status st = tile_module_get_kernel(m->mod, name, &tk);
    if (st != TILE_OK) {
        char what[200];
        snprintf(what, sizeof what, "kernel '%.150s'", name);
        return tpy_raise(m->dev, st, what);
    }
    tile_kernel_attributes at;
    if ((st = tile_kernel_get_attributes(tk, &at)) != TILE_OK) return tpy_raise(m->dev, st, "kernel attributes");
    TPyPtxKernel *k = PyObject_New(TPyPtxKernel, TPy_PtxKernelType);
    if (!k) return NULL;
    memset((char *)k + sizeof(PyObject), 0, sizeof *k - sizeof(PyObject));
    Py_INCREF(self);
    k->mod = m;
    k->k = tk;
    k->block_threads = at.block_threads;
    k->name = strdup(name);
    k->signature = strdup(at.signature ? at.signature : "");
    if (!k->name || !k->signature) {
        Py_DECREF(k);
        return PyErr_NoMemory();
    }
    if (at.num_params < 0) {
        Py_DECREF(k);
        return PyErr_Format(TPy_Error, "kernel '%s': its parameters cannot be read from the PTX", name);
    }
    if (!parse_signature(k)) {
        Py_DECREF(k);
        return NULL;
    }
    return (PyObject *)k;
}

/* The entries' names, as the runtime reads them (tile_module_get_kernel_names: outside comments, in order). */
static PyObject *ptxmod_kernel_names(PyObject *self, PyObject *unused) {
    TPyPtxModule *m = (TPyPtxModule *)self;
    const char *const *names;
    int n;
    tile_status st = tile_module_get_kernel_names(m->mod, &names, &n);
    if (st != TILE_OK) return tpy_raise(m->dev, st, "kernel names");
    PyObject *list = PyList_New(n);
    for (int i = 0; list && i < n; i++) {
        PyObject *s = PyUnicode_DecodeUTF8(names[i], (Py_ssize_t)strlen(names[i]), "replace");
        if (!s) Py_CLEAR(list);
        else PyList_SetItem(list, i, s);
    }
    return list;
}

static PyMethodDef ptxmod_methods[] = {
    {"kernel", ptxmod_kernel, METH_VARARGS, "kernel(name) -> PtxKernel: an entry of the PTX"},
    {"kernel_names", ptxmod_kernel_names, METH_NOARGS, "kernel_names() -> the entries' names, in the PTX's order"},
    {NULL},
};
static PyType_Slot ptxmod_slots[] = {
    {Py_tp_new, tpy_no_new},
    {Py_tp_dealloc, ptxmod_dealloc},
    {Py_tp_methods, ptxmod_methods},
    {Py_tp_doc, "PTX loaded on a device (load_ptx); kernel(name) gives an entry."},
    {0, NULL},
};
static PyType_Spec ptxmod_spec = {"tile._tile.PtxModule", sizeof(TPyPtxModule), 0, Py_TPFLAGS_DEFAULT, ptxmod_slots};

/* ---- PtxKernel ---- */

static void ptxkernel_dealloc(PyObject *self) {
    TPyPtxKernel *k = (TPyPtxKernel *)self;
    PyTypeObject *tp = Py_TYPE(self);
    free(k->name), free(k->signature), free(k->params);
    Py_XDECREF((PyObject *)k->mod);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

static PyObject *ptxkernel_subscript(PyObject *self, PyObject *grid) {
    tile_dim3 g;
    char what[320];
    snprintf(what, sizeof what, "kernel '%s': grid", ((TPyPtxKernel *)self)->name);
    if (!tpy_dim3(grid, what, true, &g)) return NULL;
    TPyPtxLauncher *l = PyObject_New(TPyPtxLauncher, TPy_PtxLauncherType);
    if (!l) return NULL;
    Py_INCREF(self);
    l->k = (TPyPtxKernel *)self;
    l->grid = g;
    return (PyObject *)l;
}

static PyObject *ptxkernel_get_name(PyObject *self, void *c) { return PyUnicode_FromString(((TPyPtxKernel *)self)->name); }
static PyObject *ptxkernel_get_signature(PyObject *self, void *c) {
    return PyUnicode_FromString(((TPyPtxKernel *)self)->signature);
}
static PyObject *ptxkernel_get_block_threads(PyObject *self, void *c) {
    return PyLong_FromUnsignedLong(((TPyPtxKernel *)self)->block_threads);
}
static PyObject *ptxkernel_repr(PyObject *self) {
    TPyPtxKernel *k = (TPyPtxKernel *)self;
    return PyUnicode_FromFormat("<tile PTX kernel %s(%s)>", k->name, k->signature);
}

static PyGetSetDef ptxkernel_getset[] = {
    {"name", ptxkernel_get_name, NULL, "the entry's name", NULL},
    {"signature", ptxkernel_get_signature, NULL, "its parameters' PTX types, e.g. 'ptr, u32, f32, b8[24]'", NULL},
    {"block_threads", ptxkernel_get_block_threads, NULL, "threads of the block .maxntid / .reqntid give (0: none)", NULL},
    {NULL},
};
static PyType_Slot ptxkernel_slots[] = {
    {Py_tp_new, tpy_no_new},
    {Py_tp_dealloc, ptxkernel_dealloc},
    {Py_mp_subscript, ptxkernel_subscript},
    {Py_tp_getset, ptxkernel_getset},
    {Py_tp_repr, ptxkernel_repr},
    {Py_tp_doc, "An entry of loaded PTX: kernel[grid](*args, block=None, shared=0, cluster=None, cooperative=False, "
                "stream=None) launches it."},
    {0, NULL},
};
static PyType_Spec ptxkernel_spec = {"tile._tile.PtxKernel", sizeof(TPyPtxKernel), 0, Py_TPFLAGS_DEFAULT, ptxkernel_slots};

/* ---- kernel[grid](...) ---- */

static void ptxlauncher_dealloc(PyObject *self) {
    TPyPtxLauncher *l = (TPyPtxLauncher *)self;
    PyTypeObject *tp = Py_TYPE(self);
    Py_XDECREF((PyObject *)l->k);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

/* One launch of a load_ptx kernel (tpy_call runs it). */
typedef struct PtxLaunch {
    tile_kernel *k;
    tile_dim3 grid;
    void **argv;
    tile_stream stream;
    const tile_launch_options *o;
} PtxLaunch;

static tile_status ptx_launch_call(void *p) {
    PtxLaunch *l = p;
    return tile_launch_ex(l->k, l->grid, l->argv, l->stream, l->o);
}

static PyObject *ptxlauncher_call(PyObject *self, PyObject *args, PyObject *kwargs) {
    TPyPtxLauncher *l = (TPyPtxLauncher *)self;
    TPyPtxKernel *k = l->k;
    TPyDevice *dev = k->mod->dev;
    PyObject *block = NULL, *cluster = NULL, *stream_obj = NULL;
    int shared = 0; /* "i", not "I": -1 was taken as 4294967295 bytes */
    int cooperative = 0;
    static char *kw[] = {"block", "shared", "cluster", "cooperative", "stream", NULL};
    PyObject *empty = PyTuple_New(0);
    if (!empty) return NULL;
    int ok = PyArg_ParseTupleAndKeywords(empty, kwargs, "|OiOpO:launch", kw, &block, &shared, &cluster, &cooperative, &stream_obj);
    Py_DECREF(empty);
    if (!ok) return NULL;
    if (shared < 0) return PyErr_Format(PyExc_ValueError, "kernel '%s': shared must be >= 0 bytes, got %d", k->name, shared);
    Py_ssize_t n = PyTuple_Size(args);
    if (n != k->nparams)
        return PyErr_Format(PyExc_TypeError, "kernel '%s' takes %d arguments (%s), got %d", k->name, k->nparams, k->signature,
                            (int)n);
    tile_launch_options o = {.size = sizeof o, .shared_bytes = (unsigned)shared, .cooperative = cooperative};
    char what[320];
    snprintf(what, sizeof what, "kernel '%s': block", k->name);
    if (block && block != Py_None && !tpy_dim3(block, what, false, &o.block)) return NULL;
    snprintf(what, sizeof what, "kernel '%s': cluster", k->name);
    if (cluster && cluster != Py_None && !tpy_dim3(cluster, what, false, &o.cluster)) return NULL;
    if (!o.block.x && !k->block_threads)
        return PyErr_Format(PyExc_ValueError, "kernel '%s': its PTX has no .maxntid or .reqntid: give block=", k->name);
    TPyScope sc = {.dev = dev};
    tile_stream stream = NULL;
    uint64_t *slots = calloc((size_t)(n ? n : 1), sizeof *slots);
    void **argv = calloc((size_t)(n ? n : 1), sizeof *argv);
    PyObject *keep = PyList_New(0); /* the bytes of by-value arrays, alive through the launch */
    PyObject *result = NULL;
    if (!slots || !argv || !keep) {
        PyErr_NoMemory();
        goto done;
    }
    if (!tpy_stream(dev, stream_obj, &stream)) {
        snprintf(what, sizeof what, "kernel '%s': stream: ", k->name);
        tpy_name_kernel("stream: ", what);
        goto done;
    }
    sc.stream = stream_obj;
    for (Py_ssize_t i = 0; i < n; i++) {
        const PtxParam *p = &k->params[i];
        PyObject *a = PyTuple_GetItem(args, i);
        if (p->kind == 'a') {
            /* a tile.TensorMap made for another device: its encoding for this one */
            PyObject *own = NULL;
            if (!PyBytes_CheckExact(a) && PyObject_HasAttrString(a, "_tile_for_device")) {
                own = PyObject_CallMethod(a, "_tile_for_device", "O", (PyObject *)dev);
                if (!own) goto done;
                a = own;
            }
            PyObject *b = PyUnicode_Check(a) ? NULL : PyObject_Bytes(a);
            Py_XDECREF(own); /* b holds its own copy */
            if (!b) {
                PyErr_Clear();
                a = PyTuple_GetItem(args, i);
                PyErr_Format(PyExc_TypeError,
                             "kernel '%s': argument %d (%s) takes %u bytes: bytes, a bytearray or a NumPy value of that size "
                             "(np.float16(x).tobytes() for a 2-byte f16), got %R",
                             k->name, (int)i, p->type, p->bytes, (PyObject *)Py_TYPE(a));
                goto done;
            }
            int bad = PyList_Append(keep, b);
            Py_DECREF(b);
            if (bad) goto done;
            if ((size_t)PyBytes_Size(b) != p->bytes) {
                PyErr_Format(PyExc_ValueError, "kernel '%s': argument %d (%s) takes %u bytes, got %zd", k->name, (int)i, p->type,
                             p->bytes, PyBytes_Size(b));
                goto done;
            }
            argv[i] = PyBytes_AsString(b);
            continue;
        }
        if (!ptx_scalar(k, (int)i, p, a, &sc, &slots[i])) goto done;
        argv[i] = &slots[i];
    }
    if (l->grid.x && l->grid.y && l->grid.z) {
        char what[200];
        snprintf(what, sizeof what, "launch of '%.150s'", k->name);
        PtxLaunch pl = {k->k, l->grid, argv, stream, &o};
        if (!tpy_call(dev, ptx_launch_call, &pl, what)) goto done;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    tpy_scope_end(&sc, stream);
    Py_XDECREF(keep);
    free(slots), free(argv);
    return result;
}

static PyType_Slot ptxlauncher_slots[] = {
    {Py_tp_new, tpy_no_new},
    {Py_tp_dealloc, ptxlauncher_dealloc},
    {Py_tp_call, ptxlauncher_call},
    {Py_tp_doc, "kernel[grid]: call it with the kernel's arguments (and block=, shared=, cluster=, cooperative=, stream=)"},
    {0, NULL},
};
static PyType_Spec ptxlauncher_spec = {"tile._tile.PtxLauncher", sizeof(TPyPtxLauncher), 0, Py_TPFLAGS_DEFAULT,
                                       ptxlauncher_slots};

int tpy_ptx_types_init(PyObject *module) {
    TPy_PtxModuleType = (PyTypeObject *)PyType_FromSpec(&ptxmod_spec);
    TPy_PtxKernelType = (PyTypeObject *)PyType_FromSpec(&ptxkernel_spec);
    TPy_PtxLauncherType = (PyTypeObject *)PyType_FromSpec(&ptxlauncher_spec);
    if (!TPy_PtxModuleType || !TPy_PtxKernelType || !TPy_PtxLauncherType) return -1;
    Py_INCREF(TPy_PtxModuleType);
    return PyModule_AddObject(module, "PtxModule", (PyObject *)TPy_PtxModuleType);
}

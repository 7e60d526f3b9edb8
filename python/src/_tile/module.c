/* module.c - the extension module tile._tile: its exceptions, the Device
 * type (one tile_context) and the way library failures become exceptions.
 *
 * Every library call that fails raises tile.Error with tile_last_error's
 * message (the calling thread's own, per context); a compile error raises
 * tile.CompileError, whose .diagnostics is the located text
 * ("k.tile:3:5: error: ...").  The Python layer (tile/__init__.py) builds the
 * Triton-style API on these types. */
#include "pytile.h"

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

PyObject *TPy_Error, *TPy_CompileError;
PyTypeObject *TPy_DeviceType;

char *tpy_strdup(PyObject *s) {
    PyObject *b = PyUnicode_AsUTF8String(s);
    if (!b) return NULL;
    if (strlen(PyBytes_AsString(b)) != (size_t)PyBytes_Size(b)) { /* C reads up to the first NUL: the rest was dropped unseen */
        Py_DECREF(b);
        PyErr_SetString(PyExc_ValueError, "embedded null character");
        return NULL;
    }
    char *r = strdup(PyBytes_AsString(b));
    Py_DECREF(b);
    if (!r) PyErr_NoMemory();
    return r;
}

PyObject *tpy_raise(TPyDevice *dev, tile_status st, const char *what) { return tpy_raise_msg(st, what, tile_last_error(dev ? dev->ctx : NULL)); }

PyObject *tpy_raise_msg(tile_status st, const char *what, const char *msg) {
    if (!msg || !*msg) msg = tile_status_string(st);
    if (st == TILE_ERROR_COMPILE) {
        PyObject *exc = PyObject_CallFunction(TPy_CompileError, "s", msg);
        if (exc) {
            PyObject *d = PyUnicode_FromString(msg);
            if (d) PyObject_SetAttrString(exc, "diagnostics", d);
            Py_XDECREF(d);
            PyErr_SetObject(TPy_CompileError, exc);
            Py_DECREF(exc);
        }
        return NULL;
    }
    /* the runtime's messages often name the call already ("launch of 'add': ..."), and may end in a newline */
    size_t n = strlen(msg), w = strlen(what);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' ')) n--;
    char *text = strndup(msg, n); /* PyErr_Format has no %.*s */
    if (!text) return PyErr_NoMemory();
    if (n >= w && !strncmp(text, what, w)) PyErr_Format(TPy_Error, "%s (%s)", text, tile_status_string(st));
    else PyErr_Format(TPy_Error, "%s: %s (%s)", what, text, tile_status_string(st));
    free(text);
    return NULL;
}

/* The exception a shared conversion raised (tpy_array's "argument 'x': ...", tpy_stream's "stream: ...") raised
 * again with the launch's kernel named: its text's opening `was` becomes `now` (a TypeError, ValueError or
 * tile.Error stays one).  Another exception (one a __dlpack__ or a grid function raised) is left as it is. */
void tpy_name_kernel(const char *was, const char *now) {
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    if (!t || (t != PyExc_TypeError && t != PyExc_ValueError && t != TPy_Error)) {
        PyErr_Restore(t, v, tb);
        return;
    }
    PyErr_NormalizeException(&t, &v, &tb);
    PyObject *str = v ? PyObject_Str(v) : NULL, *utf8 = str ? PyUnicode_AsUTF8String(str) : NULL;
    const char *text = utf8 ? PyBytes_AsString(utf8) : NULL;
    size_t n = strlen(was);
    if (text && !strncmp(text, was, n)) {
        PyErr_Format(t, "%s%s", now, text + n);
        Py_XDECREF(t), Py_XDECREF(v), Py_XDECREF(tb);
    } else {
        PyErr_Clear(); /* a failed str(): the original exception stands */
        PyErr_Restore(t, v, tb);
    }
    Py_XDECREF(utf8);
    Py_XDECREF(str);
}

/* ---- calls that may run long: Ctrl-C ----
 *
 * The emulator runs a kernel inside the launch call, so a launch from the main thread (where Python runs its
 * signal handlers) swaps in a SIGINT handler of its own for the length of the call: the handler (async-signal-
 * safe) only notes the signal and posts a semaphore; one watcher thread, started at the first such launch and
 * kept, wakes on the post and asks the context to stop (tile_context_interrupt, repeated every 10 ms until the
 * call ends, since a request reaches only a launch already running).  When the call returns the old handler
 * is back and a noted signal is handed to Python (PyErr_SetInterrupt), whose handler raises KeyboardInterrupt.
 * The call itself runs in the calling thread: no thread is created per launch (one per launch cost ~20-100 us,
 * twenty times the rest of a launch from Python).  Other threads run the call as it is: Python delivers
 * signals to the main thread only. */
typedef struct SigintWatch {
    pthread_mutex_t mu;  /* guards ctx against the watcher */
    tile_context *ctx;   /* the context of the main thread's running call, NULL between calls */
    sem_t posted;        /* posted by the handler */
    volatile sig_atomic_t seen;
    volatile sig_atomic_t call;      /* the main thread's calls, numbered (under mu): which call a signal meant */
    volatile sig_atomic_t signalled; /* the call running when the handler last ran */
    bool started;        /* the watcher thread runs (main thread only, with the GIL) */
    unsigned long main_thread;
} SigintWatch;
static SigintWatch watch = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void on_sigint(int sig) {
    (void)sig;
    watch.seen = 1;
    watch.signalled = watch.call;
    sem_post(&watch.posted); /* async-signal-safe */
}

static void *sigint_watcher(void *unused) {
    (void)unused;
    for (;;) {
        while (sem_wait(&watch.posted) != 0) {}
        for (;;) { /* until the call the signal came in ends: never into a later call (the watcher may wake late) */
            pthread_mutex_lock(&watch.mu);
            tile_context *ctx = watch.signalled == watch.call ? watch.ctx : NULL;
            if (ctx) tile_context_interrupt(ctx);
            pthread_mutex_unlock(&watch.mu);
            if (!ctx) break;
            nanosleep(&(struct timespec){0, 10 * 1000000L}, NULL);
        }
    }
    return NULL;
}

/* A forked child has no watcher thread: the next launch there starts one. */
static void sigint_after_fork(void) {
    if (watch.started) sem_destroy(&watch.posted);
    watch.started = false;
    watch.ctx = NULL;
    pthread_mutex_init(&watch.mu, NULL);
}

/* In the main thread with the GIL: install the handler for this call; false: run without it (another
 * thread, SIGINT ignored or left to the system, or no watcher could start). */
static bool sigint_begin(TPyDevice *dev, struct sigaction *old) {
    if (!dev->is_emulator || PyThread_get_thread_ident() != watch.main_thread) return false;
    if (sigaction(SIGINT, NULL, old) != 0 || old->sa_handler == SIG_IGN || old->sa_handler == SIG_DFL ||
        (old->sa_flags & SA_SIGINFO))
        return false;
    if (!watch.started) {
        pthread_t th;
        if (sem_init(&watch.posted, 0, 0) != 0) return false;
        if (pthread_create(&th, NULL, sigint_watcher, NULL) != 0) {
            sem_destroy(&watch.posted);
            return false;
        }
        pthread_detach(th);
        static bool at_fork;
        if (!at_fork) at_fork = pthread_atfork(NULL, NULL, sigint_after_fork) == 0;
        watch.started = true;
    }
    watch.seen = 0;
    pthread_mutex_lock(&watch.mu);
    watch.call = (sig_atomic_t)(((unsigned)watch.call + 1u) & 0x7fffffffu);
    watch.ctx = dev->ctx;
    pthread_mutex_unlock(&watch.mu);
    struct sigaction sa = {.sa_handler = on_sigint};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    return true;
}

/* After the call: the old handler back, the watcher stopped; true when a SIGINT came during the call. */
static bool sigint_end(const struct sigaction *old) {
    sigaction(SIGINT, old, NULL);
    pthread_mutex_lock(&watch.mu);
    watch.ctx = NULL;
    while (sem_trywait(&watch.posted) == 0) {}
    pthread_mutex_unlock(&watch.mu);
    return watch.seen != 0;
}

bool tpy_call(TPyDevice *dev, tile_status (*fn)(void *), void *arg, const char *what) {
    struct sigaction old;
    bool watched = sigint_begin(dev, &old);
    tile_status st;
    Py_BEGIN_ALLOW_THREADS
    st = fn(arg);
    Py_END_ALLOW_THREADS
    if (watched && sigint_end(&old)) {
        PyErr_SetInterrupt();                     /* Python's SIGINT handler runs now: KeyboardInterrupt */
        if (PyErr_CheckSignals() < 0) return false;
    }
    if (st != TILE_OK) tpy_raise(dev, st, what);
    return st == TILE_OK;
}

/* ---- Device ---- */

static int device_init(PyObject *self, PyObject *args, PyObject *kwargs) {
    TPyDevice *d = (TPyDevice *)self;
    static char *kw[] = {"name", "cache_dir", "emu_threads", NULL};
    const char *name = NULL, *cache_dir = NULL;
    int threads = 0; /* "i", not "I": -1 was taken as 4294967295 threads */
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|zzi:Device", kw, &name, &cache_dir, &threads)) return -1;
    if (threads < 0) {
        PyErr_Format(PyExc_ValueError, "Device: emu_threads must be >= 0 (0: one per core), got %d", threads);
        return -1;
    }
    if (d->ctx) {
        PyErr_SetString(PyExc_RuntimeError, "Device is already initialized");
        return -1;
    }
    tile_context_options o = {.size = sizeof o, .device = name, .cache_dir = cache_dir, .emu_host_threads = (unsigned)threads};
    tile_status st;
    Py_BEGIN_ALLOW_THREADS
    st = tile_context_create_ex(&o, &d->ctx);
    Py_END_ALLOW_THREADS
    if (st != TILE_OK) {
        /* the library's message names the string ("bad device string 'bogus': ...") and the C call, which the
         * Python caller did not make: it is named once, as the Python call ("device: bad device string ...") */
        const char *msg = tile_last_error(NULL), *c_call = "tile_context_create_ex: ";
        if (!strncmp(msg, c_call, strlen(c_call))) msg += strlen(c_call);
        PyErr_Format(TPy_Error, "device: %s", *msg ? msg : tile_status_string(st));
        d->ctx = NULL;
        return -1;
    }
    tile_device_properties p;
    if ((st = tile_context_get_properties_ex(d->ctx, &p, sizeof p)) != TILE_OK) {
        tpy_raise(d, st, "device properties");
        return -1;
    }
    if (cache_dir && !(d->cache_dir = strdup(cache_dir))) {
        PyErr_NoMemory();
        return -1;
    }
    /* an emulator: the string it was opened with ("emu:sm_90a", "emu:racecheck"), so that tile.device(d.name) is d
     * and the repr says which emulator it is (the default, None, or a string too long to keep: "emu"); a GPU: the
     * library's "cuda:N", its ordinal, which DLPack's device check reads ("cuda" opens cuda:0) */
    snprintf(d->name, sizeof d->name, "%s", p.is_emulator && name && *name && strlen(name) < sizeof d->name ? name : p.name);
    snprintf(d->arch, sizeof d->arch, "%s", p.arch);
    d->is_emulator = p.is_emulator;
    d->num_sms = p.multiprocessor_count;
    d->streams = PyDict_New();
    return d->streams ? 0 : -1;
}

static void stream_capsule_free(PyObject *cap) {
    /* the wrapper is released with its context (tile_context_destroy) */
}

static void device_dealloc(PyObject *self) {
    TPyDevice *d = (TPyDevice *)self;
    PyTypeObject *tp = Py_TYPE(self);
    tpy_device_drop_regs(d);
    Py_CLEAR(d->streams);
    if (d->ctx) tile_context_destroy(d->ctx);
    d->ctx = NULL;
    free(d->cache_dir);
    d->cache_dir = NULL;
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

bool tpy_stream(TPyDevice *dev, PyObject *obj, tile_stream *out) {
    *out = NULL;
    if (!obj || obj == Py_None) return true;
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "stream: expected None or an int (a CUstream handle), got %R", (PyObject *)Py_TYPE(obj));
        return false;
    }
    PyObject *cap = PyDict_GetItem(dev->streams, obj);
    if (cap) {
        *out = PyCapsule_GetPointer(cap, "tile_stream");
        return *out != NULL;
    }
    void *native = PyLong_AsVoidPtr(obj);
    if (PyErr_Occurred()) return false;
    if (!native) return true; /* 0: the default stream */
    tile_stream s;
    tile_status st = tile_stream_from_native(dev->ctx, native, &s);
    if (st != TILE_OK) {
        tpy_raise(dev, st, "stream");
        return false;
    }
    cap = PyCapsule_New(s, "tile_stream", stream_capsule_free);
    if (!cap || PyDict_SetItem(dev->streams, obj, cap) < 0) {
        Py_XDECREF(cap);
        return false;
    }
    Py_DECREF(cap);
    *out = s;
    return true;
}

static PyObject *device_synchronize(PyObject *self, PyObject *unused) {
    TPyDevice *d = (TPyDevice *)self;
    tile_status st;
    Py_BEGIN_ALLOW_THREADS
    st = tile_synchronize(d->ctx);
    Py_END_ALLOW_THREADS
    if (st != TILE_OK) return tpy_raise(d, st, "synchronize");
    Py_RETURN_NONE;
}

static PyObject *device_stats(PyObject *self, PyObject *unused) {
    TPyDevice *d = (TPyDevice *)self;
    tile_context_stats s;
    tile_status st = tile_context_get_stats_ex(d->ctx, &s, sizeof s);
    if (st != TILE_OK) return tpy_raise(d, st, "stats");
    return Py_BuildValue("{s:K,s:K,s:K,s:K,s:d,s:d,s:K,s:K,s:K,s:i}", "memory_hits", (unsigned long long)s.memory_hits,
                         "disk_hits", (unsigned long long)s.disk_hits, "compiles", (unsigned long long)s.compiles, "launches",
                         (unsigned long long)s.launches, "compile_seconds", s.compile_seconds, "load_seconds",
                         s.load_seconds, "allocations", (unsigned long long)s.allocations, "frees",
                         (unsigned long long)s.frees, "synchronizations", (unsigned long long)s.synchronizations,
                         "registered_arrays", d->nregs);
}

/* data_ptr(array) -> int: the device address a launch would pass for the array (tables of pointers for
 * `**T` parameters).  A host array is registered as a launch registers it, for as long as its owning
 * array lives; memory no array owns would only be mapped for one call: refused. */
static PyObject *device_data_ptr(PyObject *self, PyObject *obj) {
    TPyDevice *d = (TPyDevice *)self;
    if (tpy_numpy_scalar(obj)) {
        PyErr_Format(PyExc_TypeError, "data_ptr: %R is a NumPy scalar, a value, not an array (np.array([v]) is an array of one element)", obj);
        return NULL;
    }
    TPyScope sc = {.dev = d};
    TPyArray a;
    bool ok = tpy_array(&sc, obj, "array", &a);
    bool temporary = sc.ntemps > 0 || sc.ncapsules > 0;
    tpy_scope_end(&sc, NULL);
    if (!ok) return NULL;
    if (temporary) {
        PyErr_SetString(PyExc_ValueError,
                        "data_ptr: the array's memory is owned by no NumPy array (a DLPack tensor, np.frombuffer over a bytearray): "
                        "it is only mapped for the length of one call; pass it to the kernel directly, or copy it into a NumPy array");
        return NULL;
    }
    return PyLong_FromUnsignedLongLong((unsigned long long)a.ptr);
}

/* n ints of a sequence in the array's order (outermost first), stored innermost first; each lo..max. */
static int reversed_ints(const char *fn, PyObject *obj, const char *what, int n, long long lo, long long max, int64_t *out) {
    Py_ssize_t len = PySequence_Check(obj) ? PySequence_Size(obj) : -1;
    if (len < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: %s must be a sequence of %d ints (the array's order)", fn, what, n);
        return -1;
    }
    if (len != n) {
        PyErr_Format(PyExc_ValueError, "%s: %s has %zd entries, the array %d %s", fn, what, len, n,
                     lo < 0 ? "spatial dimensions" : "dimensions");
        return -1;
    }
    for (int k = 0; k < n; k++) {
        PyObject *it = PySequence_GetItem(obj, k);
        long long v = it ? PyLong_AsLongLong(it) : -1;
        Py_XDECREF(it);
        if (v == -1 && PyErr_Occurred()) return -1;
        if (v < lo || v > max) {
            PyErr_Format(PyExc_ValueError, "%s: %s[%d] is %lld, not %lld to %lld", fn, what, k, v, lo, max);
            return -1;
        }
        out[n - 1 - k] = v;
    }
    return 0;
}

/* What both tensor maps take from the array: the swizzle's name, the element type, dims and byte strides (innermost
 * first) of an array of min_rank..5 dimensions, mapped for as long as it lives, its innermost dimension contiguous. */
static int tensor_map_array(TPyDevice *d, const char *fn, PyObject *arr, PyObject *swz, const char *dtype, int min_rank, TPyArray *a,
                            int *dt, tile_tensor_swizzle *sw, uint64_t dims[5], uint64_t strides[5]) {
    *sw = TILE_SWIZZLE_NONE;
    if (swz != Py_None) {
        const char *names[] = {"none", "32B", "64B", "128B"};
        char *n = PyUnicode_Check(swz) ? tpy_strdup(swz) : NULL;
        int found = -1;
        for (int k = 0; n && k < 4; k++)
            if (!strcmp(n, names[k])) found = k;
        free(n);
        if (found < 0) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s: swizzle must be None, 'none', '32B', '64B' or '128B'", fn);
            return -1;
        }
        *sw = (tile_tensor_swizzle)found;
    }
    TPyScope sc = {.dev = d};
    bool ok = tpy_array(&sc, arr, "array", a);
    bool temporary = sc.ntemps > 0 || sc.ncapsules > 0;
    tpy_scope_end(&sc, NULL);
    if (!ok) return -1;
    if (temporary) {
        PyErr_Format(PyExc_ValueError, "%s: the array's memory is owned by no NumPy array, so it is only mapped for one call: "
                                       "copy it into a NumPy array", fn);
        return -1;
    }
    if ((*dt = tpy_elem_dtype(a, dtype, "array")) < 0) return -1;
    if (a->ndim < min_rank || a->ndim > 5) {
        PyErr_Format(PyExc_ValueError, "%s: the array has %d dimensions, a tensor map %d to 5", fn, a->ndim, min_rank);
        return -1;
    }
    for (int k = 0; k < a->ndim; k++)
        if (a->shape[k] == 0) {
            PyErr_Format(PyExc_ValueError, "%s: the array is empty (dimension %d is 0): a tensor map's dimensions are at least 1", fn, k);
            return -1;
        }
    if (a->shape[a->ndim - 1] > 1 && a->strides[a->ndim - 1] != 1) {
        PyErr_Format(PyExc_ValueError, "%s: the innermost dimension must be contiguous (its stride is %lld elements)", fn,
                     (long long)a->strides[a->ndim - 1]);
        return -1;
    }
    for (int k = 0; k < a->ndim; k++) {
        dims[k] = (uint64_t)a->shape[a->ndim - 1 - k];
        if (k) strides[k - 1] = (uint64_t)a->strides[a->ndim - 1 - k] * a->itemsize;
    }
    return 0;
}

/* tensor_map(array, box, swizzle=None, elem_strides=None, dtype=None) -> bytes: the 128-byte tiled tensor
 * map (tile_tensor_map_encode) of the whole array, for a PTX kernel's `.param .align 64 .b8 tmap[128]`.
 * box and elem_strides in the array's order (outermost first); the innermost dimension contiguous. */
static PyObject *device_tensor_map(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"array", "box", "swizzle", "elem_strides", "dtype", NULL};
    TPyDevice *d = (TPyDevice *)self;
    PyObject *arr, *box, *swz = Py_None, *es = Py_None;
    const char *dtype = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|OOz", kw, &arr, &box, &swz, &es, &dtype)) return NULL;
    TPyArray a;
    int dt;
    tile_tensor_swizzle sw;
    uint64_t dims[5], strides[5] = {0};
    if (tensor_map_array(d, "tensor_map", arr, swz, dtype, 1, &a, &dt, &sw, dims, strides) < 0) return NULL;
    int64_t b64[5], e64[5] = {1, 1, 1, 1, 1};
    if (reversed_ints("tensor_map", box, "box", a.ndim, 1, 256, b64) < 0) return NULL;
    if (es != Py_None && reversed_ints("tensor_map", es, "elem_strides", a.ndim, 1, 8, e64) < 0) return NULL;
    uint32_t b32[5], e32[5];
    for (int k = 0; k < a.ndim; k++) b32[k] = (uint32_t)b64[k], e32[k] = (uint32_t)e64[k];
    _Alignas(64) unsigned char out[128];
    tile_status st = tile_tensor_map_encode(d->ctx, out, (tile_dtype)dt, a.ndim, a.ptr, dims, strides, b32, e32, sw);
    if (st != TILE_OK) return tpy_raise(d, st, "tensor_map");
    return PyBytes_FromStringAndSize((const char *)out, sizeof out);
}

/* tensor_map_im2col(array, lower, upper, channels_per_pixel, pixels_per_column, swizzle=None, elem_strides=None,
 * dtype=None, nan_fill=False) -> bytes: the im2col map (tile_tensor_map_encode_im2col) of an N[D][H]WC array;
 * lower and upper per spatial dimension and elem_strides per dimension, in the array's order (outermost first). */
static PyObject *device_tensor_map_im2col(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"array", "lower", "upper", "channels_per_pixel", "pixels_per_column", "swizzle", "elem_strides", "dtype",
                         "nan_fill", NULL};
    static const char fn[] = "tensor_map_im2col";
    TPyDevice *d = (TPyDevice *)self;
    PyObject *arr, *lower, *upper, *swz = Py_None, *es = Py_None;
    unsigned int cpp, ppc;
    const char *dtype = NULL;
    int nan_fill = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOII|OOzp", kw, &arr, &lower, &upper, &cpp, &ppc, &swz, &es, &dtype, &nan_fill))
        return NULL;
    TPyArray a;
    int dt;
    tile_tensor_swizzle sw;
    uint64_t dims[5], strides[5] = {0};
    if (tensor_map_array(d, fn, arr, swz, dtype, 3, &a, &dt, &sw, dims, strides) < 0) return NULL;
    int64_t lo64[3], up64[3], e64[5] = {1, 1, 1, 1, 1};
    if (reversed_ints(fn, lower, "lower", a.ndim - 2, INT32_MIN, INT32_MAX, lo64) < 0) return NULL;
    if (reversed_ints(fn, upper, "upper", a.ndim - 2, INT32_MIN, INT32_MAX, up64) < 0) return NULL;
    if (es != Py_None && reversed_ints(fn, es, "elem_strides", a.ndim, 1, 8, e64) < 0) return NULL;
    int32_t lo32[3], up32[3];
    uint32_t e32[5];
    for (int k = 0; k < a.ndim - 2; k++) lo32[k] = (int32_t)lo64[k], up32[k] = (int32_t)up64[k];
    for (int k = 0; k < a.ndim; k++) e32[k] = (uint32_t)e64[k];
    _Alignas(64) unsigned char out[128];
    tile_status st =
        tile_tensor_map_encode_im2col(d->ctx, out, (tile_dtype)dt, a.ndim, a.ptr, dims, strides, lo32, up32, cpp, ppc, e32, sw, nan_fill);
    if (st != TILE_OK) return tpy_raise(d, st, fn);
    return PyBytes_FromStringAndSize((const char *)out, sizeof out);
}

/* ---- the tuning database, for launch-time autotuning (tile/__init__.py) ---- */

static PyObject *device_tune_lookup(PyObject *self, PyObject *args) {
    TPyDevice *d = (TPyDevice *)self;
    const char *path, *kernel, *bucket;
    if (!PyArg_ParseTuple(args, "sss:tune_lookup", &path, &kernel, &bucket)) return NULL;
    char key[512], config[1024];
    tile_status st = tile_context_device_key(d->ctx, key, sizeof key);
    if (st != TILE_OK) return tpy_raise(d, st, "tune_lookup");
    Py_BEGIN_ALLOW_THREADS
    st = tile_tune_lookup_file(d->cache_dir, path, kernel, key, bucket, config, sizeof config);
    Py_END_ALLOW_THREADS
    if (st != TILE_OK) Py_RETURN_NONE; /* no usable record (unreadable records were warned about) */
    return PyUnicode_FromString(config);
}

static PyObject *device_tune_record(PyObject *self, PyObject *args) {
    TPyDevice *d = (TPyDevice *)self;
    const char *path, *kernel, *bucket, *config;
    double seconds;
    if (!PyArg_ParseTuple(args, "ssssd:tune_record", &path, &kernel, &bucket, &config, &seconds)) return NULL;
    char key[512], id[33];
    tile_status st = tile_context_device_key(d->ctx, key, sizeof key);
    if (st != TILE_OK) return tpy_raise(d, st, "tune_record");
    if ((st = tile_kernel_id_file(path, kernel, id)) != TILE_OK) return tpy_raise_msg(st, "tune_record", "no kernel id");
    Py_BEGIN_ALLOW_THREADS
    st = tile_tune_record(d->cache_dir, id, key, bucket, config, seconds);
    Py_END_ALLOW_THREADS
    if (st != TILE_OK) return tpy_raise_msg(st, "tune_record", "the tuning database refused the record");
    Py_RETURN_NONE;
}

static PyObject *device_get_name(PyObject *self, void *c) { return PyUnicode_FromString(((TPyDevice *)self)->name); }
static PyObject *device_get_arch(PyObject *self, void *c) { return PyUnicode_FromString(((TPyDevice *)self)->arch); }
static PyObject *device_get_is_emulator(PyObject *self, void *c) { return PyBool_FromLong(((TPyDevice *)self)->is_emulator); }
static PyObject *device_get_num_sms(PyObject *self, void *c) { return PyLong_FromLong(((TPyDevice *)self)->num_sms); }

static PyObject *device_repr(PyObject *self) {
    TPyDevice *d = (TPyDevice *)self;
    return PyUnicode_FromFormat("<tile.Device '%s', arch %s>", d->name, d->arch);
}

static PyMethodDef device_methods[] = {
    {"synchronize", device_synchronize, METH_NOARGS, "Wait for all work on the device."},
    {"stats", device_stats, METH_NOARGS, "The context's counters (tile_context_get_stats_ex) as a dict."},
    {"data_ptr", device_data_ptr, METH_O,
     "data_ptr(array) -> int: the array's device address, as a launch passes it (for tables of pointers)."},
    {"tensor_map", (PyCFunction)(void (*)(void))device_tensor_map, METH_VARARGS | METH_KEYWORDS,
     "tensor_map(array, box, swizzle=None, elem_strides=None, dtype=None) -> bytes: the array's 128-byte TMA tensor map."},
    {"tensor_map_im2col", (PyCFunction)(void (*)(void))device_tensor_map_im2col, METH_VARARGS | METH_KEYWORDS,
     "tensor_map_im2col(array, lower, upper, channels_per_pixel, pixels_per_column, swizzle=None, elem_strides=None, dtype=None, "
     "nan_fill=False) -> bytes: the N[D][H]WC array's 128-byte im2col tensor map."},
    {"_tune_lookup", device_tune_lookup, METH_VARARGS,
     "_tune_lookup(path, kernel, bucket) -> str or None: the tuning database's configuration for this device"},
    {"_tune_record", device_tune_record, METH_VARARGS,
     "_tune_record(path, kernel, bucket, config, seconds): record a configuration in the tuning database"},
    {NULL},
};
static PyGetSetDef device_getset[] = {
    {"name", device_get_name, NULL, "the device string it was opened with, e.g. 'emu:sm_90a' (the default: 'emu' or 'cuda:0')", NULL},
    {"arch", device_get_arch, NULL, "the target kernels are compiled for, e.g. 'sm_80'", NULL},
    {"is_emulator", device_get_is_emulator, NULL, "True on the PTX emulator", NULL},
    {"num_sms", device_get_num_sms, NULL,
     "the multiprocessor count (the GPU's, or the emulator's: 'emu:sms=N', default 132), as num_sms() in kernels: "
     "a persistent kernel's grid", NULL},
    {NULL},
};
static PyType_Slot device_slots[] = {
    {Py_tp_init, device_init},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_dealloc, device_dealloc},
    {Py_tp_methods, device_methods},
    {Py_tp_getset, device_getset},
    {Py_tp_repr, device_repr},
    {Py_tp_doc, "Device(name=None, cache_dir=None, emu_threads=0): a tile context on 'emu', 'cuda' or 'cuda:N' "
                "(None: TILE_DEVICE, else cuda when present, else emu)."},
    {0, NULL},
};
static PyType_Spec device_spec = {"tile._tile.Device", sizeof(TPyDevice), 0, Py_TPFLAGS_DEFAULT, device_slots};

/* ---- module ---- */

/* tune_space(source, is_file, kernel) -> (configs, keys): the kernel's @config lists ("NAME=VALUE" strings)
 * and @tune_key names; CompileError when the source does not parse or has no such kernel. */
static PyObject *mod_tune_space(PyObject *self, PyObject *args) {
    const char *src, *kernel;
    int is_file;
    if (!PyArg_ParseTuple(args, "sps:tune_space", &src, &is_file, &kernel)) return NULL;
    tile_tune_space sp;
    char *err = NULL;
    tile_status st;
    Py_BEGIN_ALLOW_THREADS
    st = is_file ? tile_tune_space_file(src, kernel, &sp, &err) : tile_tune_space_source(NULL, src, kernel, &sp, &err);
    Py_END_ALLOW_THREADS
    if (st != TILE_OK) {
        tpy_raise_msg(st, "tune_space", err);
        free(err);
        return NULL;
    }
    PyObject *configs = PyList_New(0), *keys = PyList_New(0), *r = NULL;
    if (!configs || !keys) goto done;
    for (int i = 0; i < sp.nconfigs; i++) {
        PyObject *c = PyList_New(0);
        if (!c || PyList_Append(configs, c) < 0) {
            Py_XDECREF(c);
            goto done;
        }
        Py_DECREF(c);
        for (char **p = sp.configs[i]; *p; p++) {
            PyObject *v = PyUnicode_FromString(*p);
            if (!v || PyList_Append(c, v) < 0) {
                Py_XDECREF(v);
                goto done;
            }
            Py_DECREF(v);
        }
    }
    for (int i = 0; i < sp.nkeys; i++) {
        PyObject *v = PyUnicode_FromString(sp.keys[i]);
        if (!v || PyList_Append(keys, v) < 0) {
            Py_XDECREF(v);
            goto done;
        }
        Py_DECREF(v);
    }
    r = PyTuple_Pack(2, configs, keys);
done:
    Py_XDECREF(configs);
    Py_XDECREF(keys);
    tile_tune_space_free(&sp);
    return r;
}

static PyObject *mod_version(PyObject *self, PyObject *unused) { return PyUnicode_FromString(tile_version()); }

static PyObject *mod_gemm_source_path(PyObject *self, PyObject *unused) {
    const char *p = tile_gemm_source_path();
    if (!p) return PyErr_Format(TPy_Error, "the shipped kernels' folder is not found");
    return PyUnicode_FromString(p);
}

static PyMethodDef module_methods[] = {
    {"compile", (PyCFunction)(void (*)(void))tpy_compile, METH_VARARGS | METH_KEYWORDS,
     "compile(device, source, is_file, defines, kernel=None, arch=None) -> list of Kernel"},
    {"gemm", (PyCFunction)(void (*)(void))tpy_gemm, METH_VARARGS | METH_KEYWORDS, "tile_gemm on arrays"},
    {"attention", (PyCFunction)(void (*)(void))tpy_attention, METH_VARARGS | METH_KEYWORDS, "tile_attention_fwd on arrays"},
    {"decode_paged", (PyCFunction)(void (*)(void))tpy_decode_paged, METH_VARARGS | METH_KEYWORDS,
     "tile_attention_decode_paged on arrays"},
    {"moe", (PyCFunction)(void (*)(void))tpy_moe, METH_VARARGS | METH_KEYWORDS, "tile_moe_forward on arrays"},
    {"load_ptx", tpy_load_ptx, METH_VARARGS, "load_ptx(device, text) -> PtxModule: PTX loaded as it is"},
    {"version", mod_version, METH_NOARGS, "the library's version"},
    {"tune_space", mod_tune_space, METH_VARARGS, "tune_space(source, is_file, kernel) -> (configs, keys) of @config / @tune_key"},
    {"gemm_source_path", mod_gemm_source_path, METH_NOARGS,
     "the gemm.tile the library compiles (tile_gemm_source_path): shows which data folder it uses"},
    {NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_tile", "tile's C extension (see the tile package)", -1,
                                        module_methods};

PyMODINIT_FUNC PyInit__tile(void) {
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    /* the thread Python runs signal handlers in (threading.main_thread()), for tpy_call's Ctrl-C */
    PyObject *threading = PyImport_ImportModule("threading");
    PyObject *mt = threading ? PyObject_CallMethod(threading, "main_thread", NULL) : NULL;
    PyObject *ident = mt ? PyObject_GetAttrString(mt, "ident") : NULL;
    Py_XDECREF(threading);
    Py_XDECREF(mt);
    if (!ident) goto fail;
    watch.main_thread = PyLong_AsUnsignedLong(ident);
    Py_DECREF(ident);
    if (PyErr_Occurred()) goto fail;
    TPy_Error = PyErr_NewExceptionWithDoc("tile.Error", "A failure reported by the tile library.", NULL, NULL);
    if (!TPy_Error) goto fail;
    TPy_CompileError = PyErr_NewExceptionWithDoc("tile.CompileError",
                                                 "The source has errors: .diagnostics holds the located text.", TPy_Error, NULL);
    if (!TPy_CompileError) goto fail;
    Py_INCREF(TPy_Error);
    Py_INCREF(TPy_CompileError);
    if (PyModule_AddObject(m, "Error", TPy_Error) < 0 || PyModule_AddObject(m, "CompileError", TPy_CompileError) < 0) goto fail;
    TPy_DeviceType = (PyTypeObject *)PyType_FromSpec(&device_spec);
    if (!TPy_DeviceType) goto fail;
    Py_INCREF(TPy_DeviceType);
    if (PyModule_AddObject(m, "Device", (PyObject *)TPy_DeviceType) < 0) goto fail;
    if (tpy_pin_type_init(m) < 0 || tpy_kernel_types_init(m) < 0 || tpy_ptx_types_init(m) < 0) goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}

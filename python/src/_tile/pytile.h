/* pytile.h - the pieces of the extension module tile._tile, one file each:
 *   module.c   the module, its exceptions (tile.Error, tile.CompileError),
 *              Device (a tile_context) and the raising of library errors;
 *   arrays.c   arguments that are arrays: __cuda_array_interface__,
 *              __array_interface__ (NumPy), DLPack; host memory registered
 *              zero-copy with tile_register_memory, cached per owning array;
 *   kernel.c   Kernel (a kernel of a compiled source: signature, variants per
 *              specialization) and its launcher, the hot path;
 *   ptx.c      PtxModule / PtxKernel: PTX another compiler wrote, loaded and
 *              launched as it is (parameters from its header);
 *   shipped.c  gemm, attention, decode_paged, moe over tile_gemm,
 *              tile_attention_fwd, tile_attention_decode_paged, tile_moe_forward.
 * Compiled against the stable ABI (Py_LIMITED_API = 3.9): no Py_buffer, no
 * struct access to Python objects, heap types only. */
#ifndef TILE_PY_H
#define TILE_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stdint.h>
#include <tile/tile.h>

#define TPY_MAXDIM 8

/* tile.Error, tile.CompileError (module.c) */
extern PyObject *TPy_Error, *TPy_CompileError;
extern PyTypeObject *TPy_DeviceType, *TPy_KernelType, *TPy_LauncherType, *TPy_PinType;

/* A registered owning host array (arrays.c): [lo, hi) maps to dev. */
typedef struct HostReg {
    uintptr_t lo, hi;
    tile_devptr dev;
    PyObject *weakref; /* to the owning array; its callback is the pin */
    PyObject *pin;     /* the callback object (Pin), which knows the device */
} HostReg;

typedef struct TPyDevice {
    PyObject_HEAD
    tile_context *ctx;
    char name[128];
    char arch[16];
    int is_emulator;
    int num_sms; /* multiprocessors: the GPU's, or the emulator's ("emu:sms=N", default 132) */
    HostReg *regs; /* sorted by lo, disjoint */
    int nregs, capregs;
    PyObject *streams; /* dict int -> capsule of tile_stream (wrappers of native streams) */
    char *cache_dir;   /* the cache folder given (malloc'd), NULL: the library's default */
} TPyDevice;

/* Raise tile.Error for a failing call on dev: "what: <tile_last_error>" (module.c). */
PyObject *tpy_raise(TPyDevice *dev, tile_status st, const char *what);
/* As tpy_raise, with the failure's message given (another thread's tile_last_error). */
PyObject *tpy_raise_msg(tile_status st, const char *what, const char *msg);
/* The pending TypeError, ValueError or tile.Error whose text begins with `was` raised again beginning with `now`
 * (a launch names its kernel in what tpy_array or tpy_stream refused); any other exception is left as it is. */
void tpy_name_kernel(const char *was, const char *now);
/* fn(arg) with the GIL released; on the emulator, which runs kernels inside the call, Ctrl-C stops it
 * (tile_context_interrupt) and KeyboardInterrupt is raised.  False with an exception set (tpy_raise's
 * for a failure, named by what). */
bool tpy_call(TPyDevice *dev, tile_status (*fn)(void *), void *arg, const char *what);
/* The tile_stream of stream= (None, or an int CUstream handle); false with an exception set. */
bool tpy_stream(TPyDevice *dev, PyObject *obj, tile_stream *out);
/* A UTF-8 copy of a str (malloc'd), NULL with an exception set. */
char *tpy_strdup(PyObject *s);

/* ---- arrays.c ---- */
typedef struct TPyArray {
    tile_devptr ptr;
    int dtype;          /* tile_dtype, or -1 when the producer's type has no tile equivalent */
    char kind;          /* the producer's kind: 'f', 'i', 'u', 'b', 'V' */
    int ndim;
    int64_t shape[TPY_MAXDIM];
    int64_t strides[TPY_MAXDIM]; /* in elements */
    size_t itemsize;
    char typestr[16];   /* the producer's type, for messages */
    int host;           /* host memory (registered) */
    int readonly;       /* the producer says its memory is not to be written (NumPy's writeable flag off); -1 while unknown */
} TPyArray;

/* What one call borrowed and must give back: DLPack tensors, temporary registrations. */
typedef struct TPyScope {
    TPyDevice *dev;
    PyObject *capsules[16];
    int ncapsules;
    tile_devptr temps[16];
    uintptr_t temp_lo[16], temp_hi[16];
    int ntemps;
    int used_host; /* host memory on a cuda device: synchronize before returning */
    PyObject *stream; /* the call's stream= (borrowed; NULL or None: the default stream), given to a CUDA DLPack
                       * producer's __dlpack__(stream=) so that it orders its work before the call's */
} TPyScope;

/* Resolve obj (an array argument named name) into *out.  False with a
 * TypeError/ValueError naming the argument. */
bool tpy_array(TPyScope *scope, PyObject *obj, const char *name, TPyArray *out);
/* False with a ValueError when a (argument name) is read-only: `what` writes it. */
bool tpy_writable(const TPyArray *a, const char *name, const char *what);
/* o is a NumPy scalar (np.int64(5)): a value, never an array, though it has the array protocols. */
bool tpy_numpy_scalar(PyObject *o);
/* tp_new of the types only the extension makes (kernels, launchers, PTX modules): a TypeError (an instance made
 * by calling the type was zero-filled, and tile.Kernel() then crashed the interpreter on its NULL name). */
PyObject *tpy_no_new(PyTypeObject *type, PyObject *args, PyObject *kwargs);
/* Give back what the call borrowed (after synchronizing a cuda stream when host memory was used). */
void tpy_scope_end(TPyScope *scope, tile_stream stream);
/* Drop every cached registration of dev (Device dealloc). */
void tpy_device_drop_regs(TPyDevice *dev);
int tpy_pin_type_init(PyObject *module);
/* Whether a's elements can be read as kernel type dt: the same type, or the
 * storage NumPy has for types it lacks (u16/i16/void16 for bf16, u8/i8/void8 for f8). */
bool tpy_dtype_compatible(int dt, const TPyArray *a);
/* The tile_dtype a's elements are read as: dtype_override's (a name such as "bf16", which a's storage
 * must hold), else a's own; -1 with TypeError/ValueError naming the argument. */
int tpy_elem_dtype(const TPyArray *a, const char *dtype_override, const char *name);

/* ---- kernel.c ---- */
int tpy_kernel_types_init(PyObject *module);
/* v rounded once, to nearest even, into a 16-bit float of `mant` fraction and `ebits` exponent bits
 * (f16: 10, 5; bf16: 7, 8): scalar arguments of f16 and bf16 parameters. */
uint16_t tpy_f64_to_small(double v, int mant, int ebits);
/* An int or a tuple/list of 1 to 3 ints: a grid (zeros allowed: nothing launches), block or cluster;
 * what names it in the TypeError/ValueError. */
bool tpy_dim3(PyObject *g, const char *what, bool allow_zero, tile_dim3 *out);
PyObject *tpy_compile(PyObject *self, PyObject *args, PyObject *kwargs);

/* ---- ptx.c ---- */
int tpy_ptx_types_init(PyObject *module);
PyObject *tpy_load_ptx(PyObject *self, PyObject *args);

/* ---- shipped.c ---- */
PyObject *tpy_gemm(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *tpy_attention(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *tpy_decode_paged(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *tpy_moe(PyObject *self, PyObject *args, PyObject *kwargs);

#endif

/* kernel.c - Kernel: one kernel of a compiled source, and its launcher.
 *
 * compile(device, source, is_file, defines, ...):
 *   1. compiles the source once to Tile IR only (tile_compile_file/source
 *      with tir_only), so a source error raises tile.CompileError at once
 *      and no LLVM time is spent before the first launch;
 *   2. reads each kernel's parameters: names from the Tile IR's header
 *      ("kernel @add(%x: ptr<f32> #div16, %n: i32)"), types from its
 *      signature ("*f32:16, i32"), once, into a table the launches index;
 *   3. reads from the same Tile IR which pointer parameters the kernel
 *      stores through, or may (read_writes: where it cannot tell, it takes
 *      the parameter for written), so that a read-only array there is
 *      refused at launch rather than written.
 * kernel[grid](*args, stream=None), the hot path (Launcher.__call__;
 * arguments may also be given by parameter name; a tuple given by position
 * is its elements, as Triton passes a tuple argument):
 *   1. each argument is converted by its parameter's kind: arrays through
 *      arrays.c (checked: element type, element alignment, writable where
 *      the kernel stores), integers range checked, floats converted to the
 *      parameter's width;
 *   2. the specialization key is computed from the values as Triton's JIT
 *      does: an integer equal to 1 or divisible by 16, whether every
 *      pointer is 16-byte aligned (the C API assumes all or none:
 *      no_align_ptrs), and which pointers are None (compiled NAME=None:
 *      the name is None in the kernel, the argument 0);
 *   3. the key finds the variant (a small array, the last hit tried first);
 *      a new key loads one (tile_module_load_*_ex with specialize and the
 *      defines, through the context's memory and disk caches);
 *   4. the grid (a tuple, an int, or a callable given the meta dict) and
 *      stream= become tile_launch's, which runs with the GIL released;
 *   5. what arrays.c borrowed for the call is given back.
 * kernel.asm(variant) compiles a variant's texts (Tile IR, LLVM IR, PTX) as
 * step 3 would load it, without loading it. */
#include "pytile.h"

#include <limits.h>
#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TPY_MAXPARAMS 64
#define KEY_UNALIGNED (1ull << 63)

typedef struct Param {
    char name[64];
    char kind;  /* 'p' pointer, 'i' signed int, 'u' unsigned int, 'b' i1, 'f' float */
    int dtype;  /* tile_dtype of the pointee or the scalar (-1 for i1) */
    int bits;
    int depth;  /* pointers: 1 for *T, 2 for **T (an array of 64-bit device addresses), ... */
} Param;

typedef struct Variant {
    uint64_t key;
    uint64_t nulls; /* bit i: parameter i, a pointer, was passed as None (compiled "NAME=None") */
    tile_module *mod;
    tile_kernel *k;
    char spec[256]; /* "n=16 no_align_ptrs" for tests and messages */
} Variant;

typedef struct TPyKernel {
    PyObject_HEAD
    TPyDevice *dev;
    char *name, *source, *srcname, *arch;
    int is_file;
    char **defines; /* NULL-terminated */
    int nparams;
    Param params[TPY_MAXPARAMS];
    int num_warps, num_stages;
    char *signature;
    int specialize;
    int debug, no_tma; /* compile options of every variant (tile_compile_options.debug, .no_tma) */
    Variant *variants;
    int nvariants, capvariants, last;
    PyObject *meta;
    uint64_t written; /* bit i: pointer parameter i is stored through (read_writes): a read-only array there is refused */
    uint64_t may_write; /* bit i: it may be (a store the analysis cannot trace to it alone): refused too */
} TPyKernel;

typedef struct TPyLauncher {
    PyObject_HEAD
    TPyKernel *k;
    PyObject *grid_fn; /* callable grid, or NULL */
    tile_dim3 grid;
} TPyLauncher;

PyTypeObject *TPy_KernelType, *TPy_LauncherType;

/* ---- parameters ---- */

/* Names from the Tile IR header of kernel `name`, types from its signature. */
static bool read_params(TPyKernel *k, const char *tir, const char *sig) {
    char head[200];
    snprintf(head, sizeof head, "kernel @%s(", k->name);
    const char *p = tir ? strstr(tir, head) : NULL;
    if (!p) {
        PyErr_Format(TPy_Error, "kernel '%s': its parameters are missing from the Tile IR", k->name);
        return false;
    }
    p += strlen(head);
    k->nparams = 0;
    while (*p && *p != ')') {
        while (*p == ' ' || *p == ',') p++;
        if (*p != '%') break;
        p++;
        if (k->nparams == TPY_MAXPARAMS) {
            PyErr_Format(PyExc_ValueError, "kernel '%s': more than %d parameters", k->name, TPY_MAXPARAMS);
            return false;
        }
        Param *q = &k->params[k->nparams++];
        size_t n = strcspn(p, ":");
        snprintf(q->name, sizeof q->name, "%.*s", (int)n, p);
        int depth = 0;
        while (*p && !(depth == 0 && (*p == ',' || *p == ')'))) {
            if (*p == '<' || *p == '(') depth++;
            if (*p == '>' || *p == ')') depth--;
            p++;
        }
    }
    /* types, in the same order */
    const char *s = sig;
    for (int i = 0; i < k->nparams; i++) {
        while (*s == ' ' || *s == ',') s++;
        Param *q = &k->params[i];
        int depth = 0;
        for (; *s == '*'; s++) depth++; /* "**f16": a table of pointers */
        bool ptr = depth > 0;
        size_t n = strcspn(s, ":=, ");
        char t[32];
        snprintf(t, sizeof t, "%.*s", (int)n, s);
        s += n;
        while (*s && *s != ',') s++;
        tile_dtype dt;
        if (!strcmp(t, "i1")) q->dtype = -1, q->bits = 1, q->kind = 'b';
        else if (tile_dtype_from_name(t, &dt) == TILE_OK) {
            q->dtype = (int)dt;
            q->bits = (int)tile_dtype_size(dt) * 8;
            q->kind = t[0] == 'i' ? 'i' : t[0] == 'u' ? 'u' : 'f';
        } else {
            PyErr_Format(TPy_Error, "kernel '%s': unknown parameter type '%s' in signature '%s'", k->name, t, sig);
            return false;
        }
        if (ptr) q->kind = 'p', q->bits = 64, q->depth = depth;
    }
    return true;
}

/* ---- the pointer parameters a kernel stores through ----
 *
 * read_writes reads the kernel's Tile IR text, one line at a time, as a dataflow over its values: each value
 * holds the set of pointer parameters it may come from, or ANY (it may point anywhere: its origin is not
 * followed).  Where no static answer exists the answer is the conservative one: possibly written.
 *   1. A value made by a pointer-preserving op (ptr_add, splat, broadcast, reshape, bitcast, gather, the hints,
 *      ...) takes its first operand's set; a select takes both of its choices', a stack all of its operands',
 *      each result of an unstack its operand's; any other op makes ANY (a load: an entry of a table of
 *      pointers; an inline_asm; the results of reduce_fn, scan_fn and map_fn, whose fn may return any value it
 *      is given or makes).
 *   2. Control flow merges: a for's carried block argument takes its init and what the body yields for it, the
 *      loop's result the same two; a while's likewise (its condition included); an if's result what each branch
 *      yields.  The induction variable and the block arguments of other regions (a reduce's fn) are ANY.
 *   3. A tensor map line ("tensor_map K = base %v, ...") ties map K to the value (or parameter) v.
 *   4. The sources of a value are joined (the union of their sets; ANY with anything is ANY), repeated until
 *      nothing changes (sets only grow), so a pointer advanced around a loop keeps its parameter.
 *   5. A store, atomic_rmw or atomic_cas through a value, or a tma_store through a map of a value: a set of one
 *      parameter marks it written (*written); a set of several (a pointer that is `a` or `b`) marks each one
 *      possibly written (*may), and ANY every pointer parameter (a table's entry may be any array passed).
 *      Text the walk cannot follow (out of memory, regions nested past 64, no kernel header) marks every
 *      pointer parameter possibly written too. */

typedef struct WSet {
    uint64_t m; /* bit i: may be pointer parameter i (i < 64; later parameters are not checked at launch) */
    bool any;   /* may point anywhere */
} WSet;

/* A value of the Tile IR text: OTHER unless `through`, then the meet of its sources (see Def.src). */
typedef struct Def {
    bool through;
    int nsrc, cap;
    int *src; /* >= 0: value %N; -1 - i: parameter i; INT_MIN: something else */
} Def;

/* A region-owning instruction whose text is open (for, while, if, others). */
typedef struct Open {
    char kind;         /* 'f' for, 'w' while, 'i' if, 0 other */
    int res, nres;     /* results %res .. %res+nres-1 */
    int *ops, nops;    /* its operands (refs) */
    int *args, nargs;  /* the open region's block arguments */
} Open;

typedef struct Writes {
    Def *defs;
    int ndefs;
    int *stores, nstores, capstores; /* the references written through */
    bool oom;
} Writes;

/* "%name" at *pp: the operand's reference (see Def.src), *pp moved past it; INT_MIN for anything else. */
static int tir_ref(const TPyKernel *k, const char **pp) {
    const char *p = *pp;
    if (*p != '%') return INT_MIN;
    p++;
    size_t n = 0;
    while (p[n] == '_' || (p[n] >= '0' && p[n] <= '9') || (p[n] >= 'a' && p[n] <= 'z') || (p[n] >= 'A' && p[n] <= 'Z')) n++;
    *pp = p + n;
    if (!n) return INT_MIN;
    if (p[0] >= '0' && p[0] <= '9') {
        long v = strtol(p, NULL, 10);
        return v >= 0 && v < (1 << 24) && strspn(p, "0123456789") == n ? (int)v : INT_MIN;
    }
    for (int i = 0; i < k->nparams; i++)
        if (strlen(k->params[i].name) == n && !strncmp(k->params[i].name, p, n)) return -1 - i;
    return INT_MIN;
}

/* The def of value v, grown as needed; NULL for a reference that is not a value or when out of memory. */
static Def *w_def(Writes *w, int v) {
    if (v < 0 || w->oom) return NULL;
    if (v >= w->ndefs) {
        int cap = v + 1 > 2 * w->ndefs ? v + 1 : 2 * w->ndefs;
        Def *nd = realloc(w->defs, (size_t)cap * sizeof *nd);
        if (!nd) {
            w->oom = true;
            return NULL;
        }
        memset(nd + w->ndefs, 0, (size_t)(cap - w->ndefs) * sizeof *nd);
        w->defs = nd, w->ndefs = cap;
    }
    return &w->defs[v];
}

/* Value v (through) also takes the parameter of reference r. */
static void w_src(Writes *w, int v, int r) {
    Def *d = w_def(w, v);
    if (!d) return;
    d->through = true;
    if (d->nsrc == d->cap) {
        int cap = d->cap ? 2 * d->cap : 2;
        int *ns = realloc(d->src, (size_t)cap * sizeof *ns);
        if (!ns) {
            w->oom = true;
            return;
        }
        d->src = ns, d->cap = cap;
    }
    d->src[d->nsrc++] = r;
}

/* Operand references at *pp ("%a, %b, ..."), into a growing array; *pp moved past them. */
static int w_refs(const TPyKernel *k, const char **pp, int **out, Writes *w) {
    int n = 0, cap = 0;
    *out = NULL;
    while (**pp == ' ' && (*pp)[1] == '%') {
        (*pp)++;
        int r = tir_ref(k, pp);
        if (n == cap) {
            cap = cap ? 2 * cap : 4;
            int *nr = realloc(*out, (size_t)cap * sizeof *nr);
            if (!nr) {
                w->oom = true;
                break;
            }
            *out = nr;
        }
        (*out)[n++] = r;
        if (**pp == ',') (*pp)++;
        else break;
    }
    return n;
}

/* A write through reference r. */
static void w_store(Writes *w, int r) {
    if (w->oom) return;
    if (w->nstores == w->capstores) {
        int cap = w->capstores ? 2 * w->capstores : 16;
        int *ns = realloc(w->stores, (size_t)cap * sizeof *ns);
        if (!ns) {
            w->oom = true;
            return;
        }
        w->stores = ns, w->capstores = cap;
    }
    w->stores[w->nstores++] = r;
}

static WSet w_join(WSet a, WSet b) { return (WSet){a.m | b.m, a.any || b.any}; }

static WSet w_eval(const Writes *w, const WSet *st, int r) {
    if (r == INT_MIN) return (WSet){0, true};
    if (r < 0) return (WSet){-1 - r < 64 ? 1ull << (-1 - r) : 0, false};
    return r < w->ndefs && w->defs[r].through ? st[r] : (WSet){0, true};
}

/* The analysis above: bit i of the result set when the kernel surely stores through pointer parameter i, of
 * *may when it may (a store through a pointer of several parameters, or of any). */
static uint64_t read_writes(const TPyKernel *k, const char *tir, uint64_t *may) {
    uint64_t ptrs = 0; /* every pointer parameter: what a store through ANY may write */
    for (int i = 0; i < k->nparams && i < 64; i++)
        if (k->params[i].kind == 'p') ptrs |= 1ull << i;
    *may = ptrs; /* until the walk below says otherwise */
    char head[200];
    snprintf(head, sizeof head, "kernel @%s(", k->name);
    const char *p = tir ? strstr(tir, head) : NULL;
    if (!p) return 0;
    Writes w = {0};
    Open open[64];
    int depth = 0, maps[64];
    for (int m = 0; m < 64; m++) maps[m] = INT_MIN;
    uint64_t written = 0;
    for (p = strchr(p, '\n'); p && p[1] && p[1] != '}' && !w.oom; p = strchr(p + 1, '\n')) {
        const char *l = p + 1, *eol = strchr(l, '\n');
        if (!eol) eol = l + strlen(l);
        while (*l == ' ') l++;
        const char *last = eol;
        while (last > l && (last[-1] == ' ' || last[-1] == '\r')) last--;
        bool opens = last > l && last[-1] == '{';
        if (*l == '}') { /* "}" closes the region, "} else {" opens the next one */
            if (depth > 0) {
                Open *o = &open[depth - 1];
                free(o->args), o->args = NULL, o->nargs = 0;
                if (!opens) free(o->ops), depth--;
            }
            continue;
        }
        if (!strncmp(l, "^(", 2) && depth > 0) { /* the open region's block arguments: "^(%3: i32, %4: ptr<f32>):" */
            Open *o = &open[depth - 1];
            for (const char *q = l + 2; *q == '%' && !w.oom;) {
                int a = tir_ref(k, &q), n = o->nargs;
                int *na = realloc(o->args, (size_t)(n + 1) * sizeof *na);
                if (!na) {
                    w.oom = true;
                    break;
                }
                o->args = na, o->args[o->nargs++] = a;
                /* for: arg 0 is the induction variable, arg 1+j carries init op 3+j; while: arg j carries op j */
                int from = o->kind == 'f' ? (n ? 3 + n - 1 : -1) : o->kind == 'w' ? n : -1;
                if (from >= 0 && from < o->nops) w_src(&w, a, o->ops[from]);
                q = strstr(q, ", %"); /* past this argument's type (a tensor type has commas too) */
                if (!q || q > eol) break;
                q += 2;
            }
            continue;
        }
        int m;
        if (sscanf(l, "tensor_map %d = base ", &m) == 1) {
            const char *q = strstr(l, "base ");
            if (q && q < eol && m >= 0 && m < 64) {
                q += 5;
                maps[m] = tir_ref(k, &q);
            }
            continue;
        }
        int def = INT_MIN, nres = 0;
        if (*l == '%') { /* "%N = op operands" or "%N:R = op ..." */
            const char *q = l;
            def = tir_ref(k, &q);
            nres = 1;
            if (*q == ':') nres = (int)strtol(q + 1, (char **)&q, 10);
            if (def < 0 || nres < 1 || strncmp(q, " = ", 3)) def = INT_MIN, nres = 0; /* not followed: its values are OTHER */
            else l = q + 3;
        }
        size_t n = strcspn(l, " \n");
        char op[32];
        snprintf(op, sizeof op, "%.*s", (int)(n < 31 ? n : 31), l);
        const char *q = l + n;
        int *ops;
        int nops = w_refs(k, &q, &ops, &w);
        if (!strcmp(op, "store") || !strcmp(op, "atomic_rmw") || !strcmp(op, "atomic_cas")) {
            if (nops) w_store(&w, ops[0]);
        } else if (!strcmp(op, "tma_store")) {
            const char *a = strstr(q, "map=");
            bool known = a && a < eol && sscanf(a, "map=%d", &m) == 1 && m >= 0 && m < 64;
            w_store(&w, known ? maps[m] : INT_MIN);
        } else if (!strcmp(op, "yield") && depth > 0) {
            Open *o = &open[depth - 1];
            for (int j = 0; j < nops; j++) {
                if (o->kind && j < o->nres) w_src(&w, o->res + j, ops[j]);
                int arg = o->kind == 'f' ? 1 + j : o->kind == 'w' ? j : -1;
                if (arg >= 0 && arg < o->nargs) w_src(&w, o->args[arg], ops[j]);
            }
        } else if (def >= 0) {
            static const char *const through[] = {"ptr_add", "splat", "broadcast", "expand_dims", "convert_layout", "reshape",
                                                  "trans", "bitcast", "gather", "multiple_of", "max_contiguous", "max_constancy"};
            for (size_t j = 0; j < sizeof through / sizeof *through; j++)
                if (!strcmp(op, through[j]) && nops) w_src(&w, def, ops[0]);
            if (!strcmp(op, "select") && nops == 3) w_src(&w, def, ops[1]), w_src(&w, def, ops[2]);
            for (int j = 0; !strcmp(op, "stack") && j < nops; j++) w_src(&w, def, ops[j]);
            for (int j = 0; !strcmp(op, "unstack") && nops && j < nres; j++) w_src(&w, def + j, ops[0]);
        }
        if (opens && depth < (int)(sizeof open / sizeof *open)) {
            Open o = {!strcmp(op, "for") ? 'f' : !strcmp(op, "while") ? 'w' : !strcmp(op, "if") ? 'i' : 0, def, def >= 0 ? nres : 0,
                      ops, nops, NULL, 0};
            /* a loop's result is also its init when the body never runs */
            for (int j = 0; o.kind && o.kind != 'i' && j < o.nres; j++) {
                int from = o.kind == 'f' ? 3 + j : j;
                if (from < nops) w_src(&w, o.res + j, ops[from]);
            }
            open[depth++] = o;
            ops = NULL;
        } else if (opens) {
            w.oom = true; /* nested past what is followed: name nothing */
        }
        free(ops);
    }
    for (; depth > 0; depth--) {
        free(open[depth - 1].ops);
        free(open[depth - 1].args);
    }
    WSet *st = w.oom ? NULL : malloc((size_t)(w.ndefs + 1) * sizeof *st);
    if (st) { /* else (out of memory) every pointer parameter may be written: *may as set above */
        for (int v = 0; v < w.ndefs; v++) st[v] = (WSet){0, false};
        for (bool changed = true; changed;) {
            changed = false;
            for (int v = 0; v < w.ndefs; v++) {
                const Def *d = &w.defs[v];
                if (!d->through) continue;
                WSet s = st[v];
                for (int j = 0; j < d->nsrc; j++) s = w_join(s, w_eval(&w, st, d->src[j]));
                if (s.m != st[v].m || s.any != st[v].any) st[v] = s, changed = true;
            }
        }
        uint64_t maybe = 0;
        for (int j = 0; j < w.nstores; j++) {
            WSet s = w_eval(&w, st, w.stores[j]);
            uint64_t b = s.m & ptrs;
            if (s.any) maybe |= ptrs; /* not traced to parameters: any of them */
            else if (!b) continue;    /* a parameter past the 64 checked */
            else if (!(b & (b - 1))) written |= b;
            else maybe |= b;
        }
        *may = maybe & ~written;
    }
    free(st);
    free(w.stores);
    for (int v = 0; v < w.ndefs; v++) free(w.defs[v].src);
    free(w.defs);
    return written;
}

static char **copy_defines(PyObject *defs) {
    Py_ssize_t n = PyTuple_Size(defs);
    if (n < 0) return NULL;
    char **d = calloc((size_t)n + 1, sizeof *d);
    if (!d) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *s = PyTuple_GetItem(defs, i);
        if (!s || !PyUnicode_Check(s) || !(d[i] = tpy_strdup(s))) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "defines must be strings");
            for (Py_ssize_t j = 0; j < i; j++) free(d[j]);
            free(d);
            return NULL;
        }
    }
    return d;
}

static void kernel_dealloc(PyObject *self) {
    TPyKernel *k = (TPyKernel *)self;
    PyTypeObject *tp = Py_TYPE(self);
    for (int i = 0; i < k->nvariants; i++) tile_module_unload(k->variants[i].mod);
    free(k->variants);
    if (k->defines)
        for (char **d = k->defines; *d; d++) free(*d);
    free(k->defines);
    free(k->name), free(k->source), free(k->srcname), free(k->arch), free(k->signature);
    Py_XDECREF(k->meta);
    Py_XDECREF((PyObject *)k->dev);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

/* compile(device, source, is_file, defines, kernel=None, arch=None, name=None, meta=None, specialize=True, debug=False,
 *         no_tma=False) */
PyObject *tpy_compile(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"device", "source", "is_file", "defines", "kernel", "arch", "name", "meta", "specialize", "debug", "no_tma", NULL};
    PyObject *devobj, *source, *defs, *meta = NULL;
    int is_file, specialize = 1, debug = 0, no_tma = 0;
    const char *kernel = NULL, *arch = NULL, *name = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!UpO!|zzzOppp:compile", kw, TPy_DeviceType, &devobj, &source, &is_file,
                                     &PyTuple_Type, &defs, &kernel, &arch, &name, &meta, &specialize, &debug, &no_tma))
        return NULL;
    TPyDevice *dev = (TPyDevice *)devobj;
    char **defines = copy_defines(defs);
    if (!defines) return NULL;
    char *src = tpy_strdup(source);
    PyObject *list = NULL;
    tile_compiled c = {0};
    if (!src) goto done;
    tile_compile_options o = {.size = sizeof o, .arch = arch ? arch : dev->arch, .kernel = kernel,
                              .defines = (const char *const *)defines, .tir_only = 1, .debug = debug, .no_tma = no_tma,
                              .num_sms = dev->num_sms}; /* num_sms() as the launch's compile gives it: the device's */
    tile_status st;
    Py_BEGIN_ALLOW_THREADS
    st = is_file ? tile_compile_file(src, &o, &c) : tile_compile_source(name ? name : "<source>", src, &o, &c);
    Py_END_ALLOW_THREADS
    if (st != TILE_OK) {
        const char *diag = c.diagnostics && *c.diagnostics ? c.diagnostics : tile_status_string(st);
        PyObject *type = st == TILE_ERROR_COMPILE ? TPy_CompileError : TPy_Error;
        PyObject *exc = PyObject_CallFunction(type, "s", diag);
        if (exc) {
            PyObject *d = PyUnicode_FromString(diag);
            if (d) PyObject_SetAttrString(exc, "diagnostics", d);
            Py_XDECREF(d);
            PyErr_SetObject(type, exc);
            Py_DECREF(exc);
        }
        goto done;
    }
    /* warnings and notes (static_print) on stderr, as the CLI prints them */
    if (c.diagnostics && *c.diagnostics) PySys_FormatStderr("%s", c.diagnostics);
    if (!(list = PyList_New(0))) goto done;
    for (int i = 0; i < c.nkernels; i++) {
        TPyKernel *k = PyObject_New(TPyKernel, TPy_KernelType);
        if (!k) goto fail;
        memset((char *)k + sizeof(PyObject), 0, sizeof *k - sizeof(PyObject));
        Py_INCREF(devobj);
        k->dev = dev;
        k->name = strdup(c.kernels[i].name);
        k->source = strdup(src);
        k->srcname = strdup(name ? name : "<source>");
        k->arch = arch ? strdup(arch) : NULL;
        k->signature = strdup(c.kernels[i].signature);
        k->is_file = is_file;
        k->num_warps = c.kernels[i].num_warps;
        k->num_stages = c.kernels[i].num_stages;
        k->specialize = specialize;
        k->debug = debug;
        k->no_tma = no_tma;
        k->defines = copy_defines(defs);
        k->meta = meta && PyDict_Check(meta) ? PyDict_Copy(meta) : PyDict_New();
        if (k->meta) { /* num_warps and num_stages as compiled, unless given */
            PyObject *w = PyLong_FromLong(k->num_warps), *s = PyLong_FromLong(k->num_stages);
            if (!w || !s || (!PyDict_GetItemString(k->meta, "num_warps") && PyDict_SetItemString(k->meta, "num_warps", w) < 0) ||
                (!PyDict_GetItemString(k->meta, "num_stages") && PyDict_SetItemString(k->meta, "num_stages", s) < 0))
                Py_CLEAR(k->meta);
            Py_XDECREF(w);
            Py_XDECREF(s);
        }
        int bad = PyList_Append(list, (PyObject *)k);
        Py_DECREF(k);
        if (bad || !k->name || !k->source || !k->srcname || !k->signature || !k->defines || !k->meta) goto fail;
        if (!read_params(k, c.tir, c.kernels[i].signature)) goto fail;
        k->written = read_writes(k, c.tir, &k->may_write);
    }
    goto done;
fail:
    if (!PyErr_Occurred()) PyErr_NoMemory();
    Py_CLEAR(list);
done:
    tile_compiled_free(&c);
    for (char **d = defines; *d; d++) free(*d);
    free(defines);
    free(src);
    return list;
}

/* ---- variants ---- */

static Variant *variant_load(TPyKernel *k, uint64_t key, uint64_t nulls) {
    const char *spec[TPY_MAXPARAMS + 1];
    char buf[TPY_MAXPARAMS][80];
    int ns = 0;
    Variant v = {.key = key, .nulls = nulls};
    size_t used = 0;
    for (int i = 0, slot = 0; i < k->nparams; i++) {
        if (k->params[i].kind == 'p' && i < 64 && (nulls >> i & 1)) {
            snprintf(buf[ns], sizeof buf[ns], "%s=None", k->params[i].name);
            used += (size_t)snprintf(v.spec + used, used < sizeof v.spec ? sizeof v.spec - used : 0, "%s%s", used ? " " : "", buf[ns]);
            spec[ns] = buf[ns];
            ns++;
            continue;
        }
        if (k->params[i].kind != 'i' && k->params[i].kind != 'u') continue;
        unsigned bits = slot < 31 ? (unsigned)(key >> (2 * slot)) & 3u : 0;
        slot++;
        if (!bits) continue;
        snprintf(buf[ns], sizeof buf[ns], "%s=%s", k->params[i].name, bits == 1 ? "1" : "16");
        used += (size_t)snprintf(v.spec + used, used < sizeof v.spec ? sizeof v.spec - used : 0, "%s%s", used ? " " : "", buf[ns]);
        spec[ns] = buf[ns];
        ns++;
    }
    spec[ns] = NULL;
    if (key & KEY_UNALIGNED)
        snprintf(v.spec + used, used < sizeof v.spec ? sizeof v.spec - used : 0, "%sno_align_ptrs", used ? " " : "");
    tile_compile_options o = {.size = sizeof o, .arch = k->arch, .kernel = k->name, .defines = (const char *const *)k->defines,
                              .specialize = ns ? spec : NULL, .no_align_ptrs = (key & KEY_UNALIGNED) != 0, .debug = k->debug,
                              .no_tma = k->no_tma};
    tile_status st;
    Py_BEGIN_ALLOW_THREADS
    st = k->is_file ? tile_module_load_file_ex(k->dev->ctx, k->source, &o, &v.mod)
                    : tile_module_load_source_ex(k->dev->ctx, k->srcname, k->source, &o, &v.mod);
    if (st == TILE_OK && (st = tile_module_get_kernel(v.mod, k->name, &v.k)) != TILE_OK) tile_module_unload(v.mod);
    Py_END_ALLOW_THREADS
    if (st != TILE_OK) {
        char what[300];
        snprintf(what, sizeof what, "kernel '%s' (%s)", k->name, v.spec[0] ? v.spec : "generic");
        tpy_raise(k->dev, st, what);
        return NULL;
    }
    /* another thread may have loaded the same variant while this one compiled without the GIL: keep one */
    for (int i = 0; i < k->nvariants; i++)
        if (k->variants[i].key == key && k->variants[i].nulls == nulls) {
            tile_module_unload(v.mod);
            k->last = i;
            return &k->variants[i];
        }
    if (k->nvariants == k->capvariants) {
        int cap = k->capvariants ? 2 * k->capvariants : 4;
        Variant *n = realloc(k->variants, (size_t)cap * sizeof *n);
        if (!n) {
            tile_module_unload(v.mod);
            PyErr_NoMemory();
            return NULL;
        }
        k->variants = n, k->capvariants = cap;
    }
    k->variants[k->nvariants] = v;
    k->last = k->nvariants;
    return &k->variants[k->nvariants++];
}

static inline Variant *variant_find(TPyKernel *k, uint64_t key, uint64_t nulls) {
    if (k->nvariants && k->variants[k->last].key == key && k->variants[k->last].nulls == nulls) return &k->variants[k->last];
    for (int i = 0; i < k->nvariants; i++)
        if (k->variants[i].key == key && k->variants[i].nulls == nulls) {
            k->last = i;
            return &k->variants[i];
        }
    return variant_load(k, key, nulls);
}

/* ---- arguments ---- */

/* v rounded once, to nearest with ties to even, into a 16-bit float with `mant` fraction bits and
 * `ebits` exponent bits (f16: 10, 5; bf16: 7, 8); a NaN stays a (quiet) NaN with v's sign. */
uint16_t tpy_f64_to_small(double v, int mant, int ebits) {
    int bias = (1 << (ebits - 1)) - 1, emin = 1 - bias;
    uint16_t sign = signbit(v) ? (uint16_t)(1u << (mant + ebits)) : 0, inf = (uint16_t)(((1u << ebits) - 1) << mant);
    if (isnan(v)) return (uint16_t)(sign | inf | (1u << (mant - 1)));
    double a = fabs(v);
    if (isinf(a)) return (uint16_t)(sign | inf);
    if (a == 0) return sign;
    int e;
    frexp(a, &e);
    int E = e - 1 < emin ? emin : e - 1;        /* below the normals: the subnormals' fixed exponent */
    double q = nearbyint(ldexp(a, mant - E));     /* exact scaling, one rounding */
    if (q >= ldexp(1, mant + 1)) q = ldexp(1, mant), E++;
    if (E > bias) return (uint16_t)(sign | inf);
    if (q < ldexp(1, mant)) return (uint16_t)(sign | (uint16_t)q); /* subnormal */
    return (uint16_t)(sign | ((unsigned)(E + bias) << mant) | ((uint16_t)q - (1u << mant)));
}

/* One scalar argument into its slot.  A refusal names the argument, the kernel and the parameter's type, as an
 * array's does: "argument 'n': kernel 'add' takes i32, got a float, not an integer". */
static bool scalar_arg(const char *kname, const Param *p, PyObject *o, uint64_t *slot, unsigned *spec) {
    *slot = 0;
    *spec = 0;
    const char *ty = p->kind == 'b' ? "i1" : tile_dtype_name(p->dtype);
    if (o == Py_None) { /* Triton makes a None scalar a constexpr; the compiler binds None to pointers only */
        PyErr_Format(PyExc_TypeError,
                     "argument '%s': kernel '%s' takes %s, got None: only pointer parameters take None (for Triton's None "
                     "scalar declare a const parameter, `const %s = None`, and pass its value to compile())",
                     p->name, kname, ty, p->name);
        return false;
    }
    if (p->kind == 'f') {
        /* a number: Python's, or anything with __float__ (NumPy scalars and 0-d arrays), but not text */
        PyObject *f = PyUnicode_Check(o) || PyBytes_Check(o) ? NULL : PyNumber_Float(o);
        if (!f && PyErr_ExceptionMatches(PyExc_OverflowError)) { /* an int beyond every float (10**400) */
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "argument '%s': kernel '%s' takes %s, got an int too large for any float", p->name,
                         kname, ty);
            return false;
        }
        if (!f) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "argument '%s': kernel '%s' takes %s, got %R, not a number", p->name, kname, ty,
                         (PyObject *)Py_TYPE(o));
            return false;
        }
        double v = PyFloat_AsDouble(f);
        Py_DECREF(f);
        if (v == -1.0 && PyErr_Occurred()) return false;
        if (p->dtype == TILE_F64) memcpy(slot, &v, 8);
        else if (p->dtype == TILE_F32) {
            float f = (float)v;
            memcpy(slot, &f, 4);
        } else if (p->dtype == TILE_F16) {
            uint16_t h = tpy_f64_to_small(v, 10, 5); /* rounded once (through f32 it was rounded twice) */
            memcpy(slot, &h, 2);
        } else if (p->dtype == TILE_BF16) {
            uint16_t h = tpy_f64_to_small(v, 7, 8);
            memcpy(slot, &h, 2);
        } else {
            PyErr_Format(PyExc_TypeError, "argument '%s': kernel '%s' takes %s, and %s scalars cannot be passed", p->name, kname,
                         ty, ty);
            return false;
        }
        return true;
    }
    if (PyFloat_Check(o)) {
        PyErr_Format(PyExc_TypeError, "argument '%s': kernel '%s' takes %s, got a float, not an integer", p->name, kname, ty);
        return false;
    }
    if (p->kind == 'b') { /* a bool, an integer or a NumPy scalar: not any object by its truth ("False" was true) */
        if (!PyBool_Check(o) && !PyIndex_Check(o) && !tpy_numpy_scalar(o)) {
            PyErr_Format(PyExc_TypeError, "argument '%s': kernel '%s' takes i1, got %R, not a bool", p->name, kname,
                         (PyObject *)Py_TYPE(o));
            return false;
        }
        int t = PyObject_IsTrue(o);
        if (t < 0) return false;
        *slot = (uint64_t)t;
        return true;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "argument '%s': kernel '%s' takes %s, got %R, not an integer", p->name, kname, ty,
                         (PyObject *)Py_TYPE(o));
        }
        return false;
    }
    unsigned long long uv = (unsigned long long)v;
    bool ok;
    if (p->kind == 'u') {
        if (overflow > 0) {
            PyObject *ix = PyNumber_Index(o); /* a NumPy uint64 is no PyLong */
            uv = ix ? PyLong_AsUnsignedLongLong(ix) : (unsigned long long)-1;
            Py_XDECREF(ix);
            if (PyErr_Occurred()) {
                PyErr_Clear();
                ok = false;
            } else ok = p->bits == 64;
        } else ok = !overflow && v >= 0 && (p->bits == 64 || uv < (1ull << p->bits));
    } else
        ok = !overflow && (p->bits == 64 || (v >= -(1ll << (p->bits - 1)) && v < (1ll << (p->bits - 1))));
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "argument '%s': kernel '%s' takes %s, got %R, which does not fit", p->name, kname, ty, o);
        return false;
    }
    memcpy(slot, &uv, 8); /* little-endian: the parameter's bytes come first */
    /* =16 only for positive values: a stride of 0 or a negative one (a broadcast or reversed view) cannot go
     * through a tensor map, which the =16 variant may read its tiles with on sm_90a */
    bool positive = p->kind == 'u' ? uv != 0 : v > 0;
    *spec = uv == 1 ? 1u : positive && uv % 16 == 0 ? 2u : 0u;
    return true;
}

/* One grid dimension: an int or anything with __index__ (NumPy integers); 0 not an integer (TypeError set),
 * -1 out of range (2^70 too: it was an OverflowError), 1 with *v. */
static int dim_of(PyObject *e, long lo, long *v) {
    PyObject *i = PyIndex_Check(e) ? PyNumber_Index(e) : NULL;
    if (!i) {
        PyErr_Clear();
        return 0;
    }
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(i, &overflow);
    Py_DECREF(i);
    if (x == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    if (overflow || x < lo || x > 0x7fffffffLL) return -1;
    *v = (long)x;
    return 1;
}

bool tpy_dim3(PyObject *g, const char *what, bool allow_zero, tile_dim3 *out) {
    unsigned d[3] = {1, 1, 1};
    long lo = allow_zero ? 0 : 1, v;
    int r;
    if (PyLong_Check(g) || PyIndex_Check(g)) { /* NumPy integers too (their __index__) */
        if ((r = dim_of(g, lo, &v)) <= 0) goto bad;
        d[0] = (unsigned)v;
    } else if (PyTuple_Check(g) || PyList_Check(g)) {
        Py_ssize_t n = PySequence_Size(g);
        if (n < 1 || n > 3) {
            PyErr_Format(PyExc_ValueError, "%s: expected 1 to 3 dimensions, got %d", what, (int)n);
            return false;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *e = PySequence_GetItem(g, i);
            if (!e) return false;
            r = dim_of(e, lo, &v);
            Py_DECREF(e);
            if (r <= 0) goto bad;
            d[i] = (unsigned)v;
        }
    } else {
        PyErr_Format(PyExc_TypeError, "%s: expected an int or a tuple of 1 to 3 ints, got %R", what, (PyObject *)Py_TYPE(g));
        return false;
    }
    *out = (tile_dim3){d[0], d[1], d[2]};
    return true;
bad:
    if (r == 0) PyErr_Format(PyExc_TypeError, "%s: dimensions must be integers", what);
    else PyErr_Format(PyExc_ValueError, "%s: a dimension is %s or too large", what, allow_zero ? "negative" : "not positive");
    return false;
}

/* ---- Kernel[grid] and the launch ---- */

/* What a grid's refusal begins with: "grid of kernel 'add'". */
static void grid_what(const TPyKernel *k, char *buf, size_t n) { snprintf(buf, n, "grid of kernel '%s'", k->name); }

static PyObject *kernel_subscript(PyObject *self, PyObject *grid) {
    TPyLauncher *l = PyObject_New(TPyLauncher, TPy_LauncherType);
    if (!l) return NULL;
    l->k = (TPyKernel *)self;
    Py_INCREF(self);
    l->grid_fn = NULL;
    if (PyCallable_Check(grid)) {
        Py_INCREF(grid);
        l->grid_fn = grid;
    } else {
        char what[320];
        grid_what(l->k, what, sizeof what);
        if (!tpy_dim3(grid, what, true, &l->grid)) {
            Py_DECREF(l);
            return NULL;
        }
    }
    return (PyObject *)l;
}

static void launcher_dealloc(PyObject *self) {
    TPyLauncher *l = (TPyLauncher *)self;
    PyTypeObject *tp = Py_TYPE(self);
    Py_XDECREF(l->grid_fn);
    Py_XDECREF((PyObject *)l->k);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

/* A launch with its arguments converted (steps 1-4 of the header). */
typedef struct Prepared {
    TPyScope sc;
    tile_stream stream;
    tile_dim3 grid;
    tile_kernel *kernel; /* copied out of the variant table, which another thread may grow while the GIL is released */
    uint64_t slots[TPY_MAXPARAMS];
    void *argv[TPY_MAXPARAMS];
} Prepared;

/* What a count of arguments that is not the kernel's adds when tuples were flattened into it. */
#define FLAT_NOTE(flat) ((flat) ? " after its tuple arguments were flattened into their elements, as Triton passes them" : "")

static bool launch_prepare(TPyLauncher *l, PyObject *args, PyObject *stream_obj, Prepared *pr, bool flat) {
    TPyKernel *k = l->k;
    pr->sc = (TPyScope){.dev = k->dev};
    pr->stream = NULL;
    Py_ssize_t n = PyTuple_Size(args);
    if (n != k->nparams) {
        PyErr_Format(PyExc_TypeError, "kernel '%s' takes %d arguments (%s), got %d%s", k->name, k->nparams, k->signature, (int)n,
                     FLAT_NOTE(flat));
        return false;
    }
    if (!tpy_stream(k->dev, stream_obj, &pr->stream)) {
        char now[320];
        snprintf(now, sizeof now, "stream of kernel '%s': ", k->name);
        tpy_name_kernel("stream: ", now);
        return false;
    }
    pr->sc.stream = stream_obj;
    uint64_t key = 0, nulls = 0;
    for (int i = 0, islot = 0; i < k->nparams; i++) {
        const Param *p = &k->params[i];
        PyObject *o = PyTuple_GetItem(args, i);
        pr->argv[i] = &pr->slots[i];
        if (p->kind == 'p' && o == Py_None && i < 64) { /* Triton's None argument: a variant where the name is None */
            nulls |= 1ull << i;
            pr->slots[i] = 0;
        } else if (p->kind == 'p') {
            TPyArray a;
            char ty[48]; /* the parameter's type, "*f32" (PyErr_Format has no %.*s) */
            snprintf(ty, sizeof ty, "%.*s%s", p->depth, "********", p->dtype < 0 ? "i1" : tile_dtype_name(p->dtype));
            if (tpy_numpy_scalar(o)) { /* it shows the array protocols, but its memory is the immutable scalar's */
                PyErr_Format(PyExc_TypeError, "argument '%s': kernel '%s' takes %s, got the NumPy scalar %R: a scalar is a value, "
                                              "not an array (np.array([v]) is an array of one element)",
                             p->name, k->name, ty, o);
                return false;
            }
            if (!tpy_array(&pr->sc, o, p->name, &a)) {
                char was[80], now[400];
                snprintf(was, sizeof was, "argument '%s': ", p->name);
                snprintf(now, sizeof now, "argument '%s': kernel '%s' takes %s: ", p->name, k->name, ty);
                tpy_name_kernel(was, now);
                return false;
            }
            if (a.readonly > 0 && i < 64 && (k->written >> i & 1)) {
                PyErr_Format(PyExc_ValueError, "argument '%s': the array is read-only, and kernel '%s' stores through '%s' "
                                               "(pass a writable array: a copy of it, or one whose writeable flag is set)",
                             p->name, k->name, p->name);
                return false;
            }
            if (a.readonly > 0 && i < 64 && (k->may_write >> i & 1)) {
                PyErr_Format(PyExc_ValueError, "argument '%s': the array is read-only, and kernel '%s' may store through '%s' "
                                               "(it stores through a pointer that is not known to be another parameter's: one "
                                               "chosen among parameters, loaded from memory, returned by inline assembly or by "
                                               "a reduce, scan or map fn; pass a writable array)",
                             p->name, k->name, p->name);
                return false;
            }
            bool table = p->depth > 1; /* **T: 64-bit addresses (Device.data_ptr) */
            bool bytes = p->dtype < 0; /* *i1: one byte an element (bool, uint8, int8 arrays) */
            bool fits = table   ? (a.kind == 'i' || a.kind == 'u' || a.kind == 'V') && a.itemsize == 8
                        : bytes ? (a.kind == 'b' || a.kind == 'i' || a.kind == 'u') && a.itemsize == 1
                                : tpy_dtype_compatible(p->dtype, &a);
            if (!fits) {
                PyErr_Format(PyExc_TypeError, "argument '%s': kernel '%s' takes %s%s, got an array of '%s'", p->name, k->name, ty,
                             table ? " (an array of 8-byte integers: device addresses from Device.data_ptr)" : bytes ? " (bool, uint8 or int8 elements)" : "", a.typestr);
                return false;
            }
            size_t es = table ? 8 : bytes ? 1 : tile_dtype_size(p->dtype);
            if (es > 1 && a.ptr % es) {
                PyErr_Format(PyExc_ValueError, "argument '%s': kernel '%s' takes %s, got an array whose address is not aligned to "
                                               "its %zu-byte elements", p->name, k->name, ty, es);
                return false;
            }
            if (a.ptr & 15) key |= KEY_UNALIGNED;
            pr->slots[i] = a.ptr;
        } else {
            unsigned spec;
            if (!scalar_arg(k->name, p, o, &pr->slots[i], &spec)) return false;
            if (p->kind == 'i' || p->kind == 'u') {
                if (islot < 31 && k->specialize) key |= (uint64_t)spec << (2 * islot);
                islot++;
            }
        }
    }
    pr->grid = l->grid;
    if (l->grid_fn) {
        PyObject *meta = PyDict_Copy(k->meta);
        if (!meta) return false;
        PyObject *g = PyObject_CallFunctionObjArgs(l->grid_fn, meta, NULL);
        Py_DECREF(meta);
        if (!g) return false;
        char what[320];
        grid_what(k, what, sizeof what);
        bool ok = tpy_dim3(g, what, true, &pr->grid);
        Py_DECREF(g);
        if (!ok) return false;
    }
    Variant *v = variant_find(k, key, nulls);
    pr->kernel = v ? v->k : NULL;
    return v != NULL;
}

/* Arguments by name (k[grid](x=a, n=5)): the positional tuple they make, a
 * new reference; stream= is taken out into *stream.  NULL with TypeError. */
static PyObject *bind_args(TPyKernel *k, PyObject *args, PyObject *kwargs, PyObject **stream, bool flat) {
    *stream = NULL;
    if (!kwargs || !PyDict_Size(kwargs)) {
        Py_INCREF(args);
        return args;
    }
    *stream = PyDict_GetItemString(kwargs, "stream");
    Py_ssize_t npos = PyTuple_Size(args), nkw = PyDict_Size(kwargs) - (*stream ? 1 : 0);
    for (int i = (int)npos; *stream && i < k->nparams; i++) /* stream= is the launch's, never the parameter's */
        if (!strcmp(k->params[i].name, "stream")) {
            PyErr_Format(PyExc_TypeError, "kernel '%s': its parameter 'stream' shares its name with the launch's stream= option, "
                                          "which stream=... sets: pass the argument by position", k->name);
            return NULL;
        }
    if (!nkw) {
        Py_INCREF(args);
        return args;
    }
    if (npos > k->nparams) {
        PyErr_Format(PyExc_TypeError, "kernel '%s' takes %d arguments (%s), got %d%s", k->name, k->nparams, k->signature, (int)npos,
                     FLAT_NOTE(flat));
        return NULL;
    }
    /* a name that is no parameter, named with the parameters' names (a typo of n= must not read as "missing n") */
    PyObject *key, *val;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargs, &pos, &key, &val)) {
        char *kn = tpy_strdup(key); /* the stable ABI (3.9) has no PyUnicode_AsUTF8 */
        if (!kn) return NULL;
        bool known = !strcmp(kn, "stream");
        for (int i = 0; i < k->nparams && !known; i++) known = !strcmp(kn, k->params[i].name);
        PyObject *fixed = !known && k->meta ? PyDict_GetItemString(k->meta, kn) : NULL; /* borrowed */
        if (fixed) /* Triton's launch keyword for a constexpr (BLOCK=1024), num_warps or num_stages: a compile option here */
            PyErr_Format(PyExc_TypeError,
                         "kernel '%s': '%s' is not a launch argument: it is fixed when the kernel is compiled (%s=%R here); "
                         "give it to tile.compile(..., %s=...), where Triton takes a constexpr, num_warps or num_stages "
                         "at the launch",
                         k->name, kn, kn, fixed, kn);
        else if (!known) {
            char names[512] = "";
            size_t len = 0;
            for (int i = 0; i < k->nparams && len < sizeof names; i++)
                len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", k->params[i].name);
            PyErr_Format(PyExc_TypeError, "kernel '%s': unknown keyword argument '%s' (parameters: %s; and stream=)", k->name, kn,
                         names);
        }
        free(kn);
        if (!known) return NULL;
    }
    PyObject *full = PyTuple_New(k->nparams);
    if (!full) return NULL;
    Py_ssize_t used = 0;
    for (int i = 0; i < k->nparams; i++) {
        PyObject *v = strcmp(k->params[i].name, "stream") ? PyDict_GetItemString(kwargs, k->params[i].name) : NULL;
        if (v && PyTuple_Check(v)) {
            PyErr_Format(PyExc_TypeError, "kernel '%s': argument '%s' is a tuple: a parameter takes one array or scalar (a tuple "
                                          "given by position is flattened into that many parameters, as Triton passes it)",
                         k->name, k->params[i].name);
            goto fail;
        }
        if (i < npos) {
            if (v) {
                PyErr_Format(PyExc_TypeError, "kernel '%s': argument '%s' given by position and by name", k->name,
                             k->params[i].name);
                goto fail;
            }
            v = PyTuple_GetItem(args, i);
        } else if (!v) {
            if (!strcmp(k->params[i].name, "stream") && *stream)
                PyErr_Format(PyExc_TypeError, "kernel '%s': its parameter 'stream' shares its name with the launch's stream= option, "
                                              "which stream=... sets: pass the argument by position", k->name);
            else PyErr_Format(PyExc_TypeError, "kernel '%s': missing argument '%s' (%s)", k->name, k->params[i].name, k->signature);
            goto fail;
        } else used++;
        Py_INCREF(v);
        PyTuple_SetItem(full, i, v);
    }
    if (used != nkw) {
        PyErr_Format(PyExc_TypeError, "kernel '%s': unknown keyword argument (parameters: %s; and stream=)", k->name, k->signature);
        goto fail;
    }
    return full;
fail:
    Py_DECREF(full);
    return NULL;
}

static tile_status launch_prepared(void *p) {
    Prepared *pr = p;
    return tile_launch(pr->kernel, pr->grid, pr->argv, pr->stream);
}

/* A host-built tensor descriptor: an object with `base`, `shape`, `strides` and `block_shape` attributes
 * (tile.TensorDescriptor, or Triton's triton.tools.tensor_descriptor.TensorDescriptor), which a kernel's
 * `tensor_desc(...)` parameter takes as its base, shape and strides (docs/language.md). */
static bool is_desc(PyObject *o) {
    if (o == Py_None || PyLong_Check(o) || PyFloat_Check(o) || PyTuple_Check(o)) return false;
    return PyObject_HasAttrString(o, "block_shape") && PyObject_HasAttrString(o, "base") &&
           PyObject_HasAttrString(o, "shape") && PyObject_HasAttrString(o, "strides");
}

/* Append a descriptor's base, then its shape's and its strides' elements, to list; false with an exception set. */
static bool desc_into(PyObject *list, PyObject *o) {
    static const char *const fields[] = {"base", "shape", "strides"};
    Py_ssize_t rank = -1;
    for (int f = 0; f < 3; f++) {
        PyObject *v = PyObject_GetAttrString(o, fields[f]);
        if (!v) return false;
        bool ok;
        if (f == 0) ok = PyList_Append(list, v) == 0;
        else {
            PyObject *seq = PySequence_Tuple(v); /* a tuple, a list, torch.Size, ... */
            ok = seq != NULL;
            Py_ssize_t n = ok ? PyTuple_Size(seq) : 0;
            if (ok && rank >= 0 && n != rank) {
                PyErr_Format(PyExc_ValueError, "tensor descriptor argument: %zd shape sizes but %zd strides", rank, n);
                ok = false;
            }
            rank = n;
            for (Py_ssize_t i = 0; ok && i < n; i++) ok = PyList_Append(list, PyTuple_GetItem(seq, i)) == 0;
            Py_XDECREF(seq);
        }
        Py_DECREF(v);
        if (!ok) return false;
    }
    return true;
}

/* Append o's elements to list, tuples in it flattened in turn (nested ones too), a tensor descriptor as its base,
 * shape and strides when descs; false with an exception set. */
static bool flatten_into(PyObject *list, PyObject *o, int depth, bool descs) {
    if (descs && is_desc(o)) return desc_into(list, o);
    if (!PyTuple_Check(o)) return PyList_Append(list, o) == 0;
    if (depth > 32) {
        PyErr_SetString(PyExc_ValueError, "kernel arguments: tuples nested more than 32 deep");
        return false;
    }
    for (Py_ssize_t i = 0, n = PyTuple_Size(o); i < n; i++)
        if (!flatten_into(list, PyTuple_GetItem(o, i), depth + 1, descs)) return false;
    return true;
}

/* The positional arguments with each tuple among them (a namedtuple too) replaced by its elements, as Triton
 * passes a tuple argument, and each tensor descriptor by its base, shape and strides: a new reference (args itself
 * when it holds neither, *flat false). */
static PyObject *flatten_args(PyObject *args, PyObject *kwargs, const TPyKernel *k, bool *flat) {
    Py_ssize_t n = PyTuple_Size(args);
    /* a descriptor is 3 or more parameters: looked for (attribute lookups, which fail on an array) only when the
     * arguments are fewer than the parameters, so a launch that passes none pays nothing for them */
    bool descs = n + (kwargs ? PyDict_Size(kwargs) : 0) < k->nparams;
    *flat = false;
    for (Py_ssize_t i = 0; i < n && !*flat; i++)
        *flat = PyTuple_Check(PyTuple_GetItem(args, i)) || (descs && is_desc(PyTuple_GetItem(args, i)));
    if (!*flat) {
        Py_INCREF(args);
        return args;
    }
    PyObject *list = PyList_New(0);
    if (!list) return NULL;
    for (Py_ssize_t i = 0; i < n; i++)
        if (!flatten_into(list, PyTuple_GetItem(args, i), 0, descs)) {
            Py_DECREF(list);
            return NULL;
        }
    PyObject *t = PyList_AsTuple(list);
    Py_DECREF(list);
    return t;
}

static PyObject *launcher_call(PyObject *self, PyObject *args, PyObject *kwargs) {
    TPyLauncher *l = (TPyLauncher *)self;
    TPyKernel *k = l->k;
    PyObject *stream_obj;
    bool flat;
    PyObject *pos = flatten_args(args, kwargs, k, &flat);
    if (!pos) return NULL;
    PyObject *full = bind_args(k, pos, kwargs, &stream_obj, flat);
    Py_DECREF(pos);
    if (!full) return NULL;
    Prepared pr;
    bool ok = launch_prepare(l, full, stream_obj, &pr, flat);
    Py_DECREF(full);
    if (!ok) {
        tpy_scope_end(&pr.sc, pr.stream);
        return NULL;
    }
    bool ok2 = true;
    if (pr.grid.x && pr.grid.y && pr.grid.z) { /* an empty grid launches nothing, as in Triton */
        char what[160];
        snprintf(what, sizeof what, "launch of '%s'", k->name);
        ok2 = tpy_call(k->dev, launch_prepared, &pr, what);
    }
    tpy_scope_end(&pr.sc, pr.stream);
    if (!ok2) return NULL;
    Py_RETURN_NONE;
}

/* launcher._time_c(iters, *args): convert the arguments once, then time iters
 * bare tile_launch calls in C; seconds per launch of `clock` (bench/python_launch.py
 * sets it against a Python loop's time to get the Python-side overhead);
 * launcher._time_c_cpu: the same in the process's CPU time. */
static PyObject *time_c(PyObject *self, PyObject *args, clockid_t clock) {
    TPyLauncher *l = (TPyLauncher *)self;
    Py_ssize_t n = PyTuple_Size(args);
    if (n < 1) {
        PyErr_SetString(PyExc_TypeError, "_time_c(iters, *args)");
        return NULL;
    }
    long iters = PyLong_AsLong(PyTuple_GetItem(args, 0));
    if (iters <= 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "iters must be positive");
        return NULL;
    }
    PyObject *slice = PyTuple_GetSlice(args, 1, n);
    if (!slice) return NULL;
    bool flat;
    PyObject *rest = flatten_args(slice, NULL, l->k, &flat);
    Py_DECREF(slice);
    if (!rest) return NULL;
    Prepared pr;
    bool ok = launch_prepare(l, rest, NULL, &pr, flat);
    Py_DECREF(rest);
    if (!ok) {
        tpy_scope_end(&pr.sc, pr.stream);
        return NULL;
    }
    tile_status st = TILE_OK;
    struct timespec t0, t1;
    Py_BEGIN_ALLOW_THREADS
    clock_gettime(clock, &t0);
    for (long i = 0; i < iters && st == TILE_OK; i++) st = tile_launch(pr.kernel, pr.grid, pr.argv, pr.stream);
    clock_gettime(clock, &t1);
    Py_END_ALLOW_THREADS
    tpy_scope_end(&pr.sc, pr.stream);
    if (st != TILE_OK) return tpy_raise(l->k->dev, st, "launch");
    return PyFloat_FromDouble(((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec)) / (double)iters);
}

static PyObject *launcher_time_c(PyObject *self, PyObject *args) { return time_c(self, args, CLOCK_MONOTONIC); }
static PyObject *launcher_time_c_cpu(PyObject *self, PyObject *args) { return time_c(self, args, CLOCK_PROCESS_CPUTIME_ID); }

static PyMethodDef launcher_methods[] = {
    {"_time_c", launcher_time_c, METH_VARARGS, "seconds per bare tile_launch of these arguments (for benchmarks)"},
    {"_time_c_cpu", launcher_time_c_cpu, METH_VARARGS, "CPU seconds of the process per bare tile_launch (for benchmarks)"},
    {NULL},
};

/* ---- Kernel's attributes ---- */

static PyObject *kernel_get_name(PyObject *self, void *c) { return PyUnicode_FromString(((TPyKernel *)self)->name); }
static PyObject *kernel_get_signature(PyObject *self, void *c) { return PyUnicode_FromString(((TPyKernel *)self)->signature); }
static PyObject *kernel_get_num_warps(PyObject *self, void *c) { return PyLong_FromLong(((TPyKernel *)self)->num_warps); }
static PyObject *kernel_get_num_stages(PyObject *self, void *c) { return PyLong_FromLong(((TPyKernel *)self)->num_stages); }
static PyObject *kernel_get_device(PyObject *self, void *c) {
    PyObject *d = (PyObject *)((TPyKernel *)self)->dev;
    Py_INCREF(d);
    return d;
}
static PyObject *kernel_get_meta(PyObject *self, void *c) { return PyDict_Copy(((TPyKernel *)self)->meta); }

static PyObject *kernel_get_params(PyObject *self, void *c) {
    TPyKernel *k = (TPyKernel *)self;
    PyObject *l = PyList_New(k->nparams);
    for (int i = 0; l && i < k->nparams; i++) {
        const Param *p = &k->params[i];
        char t[32];
        snprintf(t, sizeof t, "%.*s%s", p->kind == 'p' ? p->depth : 0, "********", p->dtype < 0 ? "i1" : tile_dtype_name(p->dtype));
        PyObject *e = Py_BuildValue("(ss)", p->name, t);
        if (!e) {
            Py_CLEAR(l);
            break;
        }
        PyList_SetItem(l, i, e);
    }
    return l;
}

/* The specializations compiled so far, e.g. ["n=16", "no_align_ptrs", ""] (generic is ""). */
static PyObject *kernel_get_variants(PyObject *self, void *c) {
    TPyKernel *k = (TPyKernel *)self;
    PyObject *l = PyList_New(k->nvariants);
    for (int i = 0; l && i < k->nvariants; i++) {
        PyObject *s = PyUnicode_FromString(k->variants[i].spec);
        if (!s) {
            Py_CLEAR(l);
            break;
        }
        PyList_SetItem(l, i, s);
    }
    return l;
}

static PyObject *kernel_repr(PyObject *self) {
    TPyKernel *k = (TPyKernel *)self;
    return PyUnicode_FromFormat("<tile kernel %s(%s)>", k->name, k->signature);
}

static PyObject *kernel_set_meta(PyObject *self, PyObject *meta) {
    TPyKernel *k = (TPyKernel *)self;
    if (!PyDict_Check(meta)) {
        PyErr_SetString(PyExc_TypeError, "meta must be a dict");
        return NULL;
    }
    PyObject *m = PyDict_Copy(meta);
    if (!m) return NULL;
    PyObject *old = k->meta;
    k->meta = m;
    Py_XDECREF(old);
    Py_RETURN_NONE;
}

/* kernel.asm(variant="") -> {"tir": ..., "llir": ..., "ptx": ...}: the texts of one variant (Triton's compiled.asm),
 * compiled as a launch compiles it (the device's arch and SM count, the kernel's defines and options) but not
 * loaded.  variant: "" (generic) or what .variants lists, space-separated "NAME=1", "NAME=16", "NAME=None",
 * "no_align_ptrs". */
static PyObject *kernel_asm(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"variant", NULL};
    TPyKernel *k = (TPyKernel *)self;
    PyObject *vobj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|U:asm", kw, &vobj)) return NULL;
    char *variant = vobj ? tpy_strdup(vobj) : strdup("");
    if (!variant) return vobj ? NULL : PyErr_NoMemory();
    const char *spec[TPY_MAXPARAMS + 1];
    int ns = 0, no_align = 0;
    PyObject *res = NULL;
    for (char *save = NULL, *t = strtok_r(variant, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (!strcmp(t, "no_align_ptrs")) {
            no_align = 1;
            continue;
        }
        char *eq = strchr(t, '=');
        const Param *p = NULL;
        for (int i = 0; eq && i < k->nparams; i++)
            if ((size_t)(eq - t) == strlen(k->params[i].name) && !strncmp(k->params[i].name, t, (size_t)(eq - t))) p = &k->params[i];
        bool ok = p && ns < TPY_MAXPARAMS &&
                  (p->kind == 'p' ? !strcmp(eq + 1, "None") : (p->kind == 'i' || p->kind == 'u') && (!strcmp(eq + 1, "1") || !strcmp(eq + 1, "16")));
        if (!ok) {
            PyErr_Format(PyExc_ValueError, "asm: variant '%U': '%s' is none of NAME=1 or NAME=16 (an integer parameter), NAME=None "
                                           "(a pointer parameter) or no_align_ptrs (kernel '%s': %s)",
                         vobj, t, k->name, k->signature);
            goto done;
        }
        spec[ns++] = t;
    }
    spec[ns] = NULL;
    tile_compile_options o = {.size = sizeof o, .arch = k->arch ? k->arch : k->dev->arch, .kernel = k->name,
                              .defines = (const char *const *)k->defines, .specialize = ns ? spec : NULL,
                              .no_align_ptrs = no_align, .want_llvm_ir = 1, .debug = k->debug, .no_tma = k->no_tma, .num_sms = k->dev->num_sms};
    tile_compiled c = {0};
    tile_status st;
    Py_BEGIN_ALLOW_THREADS
    st = k->is_file ? tile_compile_file(k->source, &o, &c) : tile_compile_source(k->srcname, k->source, &o, &c);
    Py_END_ALLOW_THREADS
    if (st != TILE_OK) {
        PyErr_Format(st == TILE_ERROR_COMPILE ? TPy_CompileError : TPy_Error, "asm of kernel '%s' (%s): %s", k->name,
                     ns || no_align ? "that variant" : "generic", c.diagnostics && *c.diagnostics ? c.diagnostics : tile_status_string(st));
    } else
        res = Py_BuildValue("{s:s,s:s,s:s}", "tir", c.tir ? c.tir : "", "llir", c.llvm_ir ? c.llvm_ir : "", "ptx", c.ptx ? c.ptx : "");
    tile_compiled_free(&c);
done:
    free(variant);
    return res;
}

static PyMethodDef kernel_methods[] = {
    {"_set_meta", kernel_set_meta, METH_O, "replace the dict a callable grid is given (the package fills in defaults)"},
    {"asm", (PyCFunction)(void (*)(void))kernel_asm, METH_VARARGS | METH_KEYWORDS,
     "asm(variant='') -> {'tir', 'llir', 'ptx'}: the Tile IR, LLVM IR and PTX of a variant ('' generic, or one of .variants)"},
    {NULL},
};

static PyGetSetDef kernel_getset[] = {
    {"name", kernel_get_name, NULL, "the kernel's name", NULL},
    {"signature", kernel_get_signature, NULL, "run-time parameters, e.g. '*f32:16, i32'", NULL},
    {"params", kernel_get_params, NULL, "[(name, type)] of the run-time parameters", NULL},
    {"num_warps", kernel_get_num_warps, NULL, NULL, NULL},
    {"num_stages", kernel_get_num_stages, NULL, NULL, NULL},
    {"device", kernel_get_device, NULL, NULL, NULL},
    {"meta", kernel_get_meta, NULL, "what a callable grid is given: the constexprs, num_warps, num_stages", NULL},
    {"variants", kernel_get_variants, NULL, "the specializations compiled so far", NULL},
    {NULL},
};
static PyType_Slot kernel_slots[] = {
    {Py_tp_new, tpy_no_new},
    {Py_tp_dealloc, kernel_dealloc},
    {Py_mp_subscript, kernel_subscript},
    {Py_tp_getset, kernel_getset},
    {Py_tp_methods, kernel_methods},
    {Py_tp_repr, kernel_repr},
    {Py_tp_doc, "A compiled kernel: kernel[grid](*args, stream=None) launches it."},
    {0, NULL},
};
static PyType_Spec kernel_spec = {"tile._tile.Kernel", sizeof(TPyKernel), 0, Py_TPFLAGS_DEFAULT, kernel_slots};

static PyType_Slot launcher_slots[] = {
    {Py_tp_new, tpy_no_new},
    {Py_tp_dealloc, launcher_dealloc},
    {Py_tp_call, launcher_call},
    {Py_tp_methods, launcher_methods},
    {Py_tp_doc, "kernel[grid]: call it with the kernel's arguments (and stream=) to launch"},
    {0, NULL},
};
static PyType_Spec launcher_spec = {"tile._tile.Launcher", sizeof(TPyLauncher), 0, Py_TPFLAGS_DEFAULT, launcher_slots};

int tpy_kernel_types_init(PyObject *module) {
    TPy_KernelType = (PyTypeObject *)PyType_FromSpec(&kernel_spec);
    TPy_LauncherType = (PyTypeObject *)PyType_FromSpec(&launcher_spec);
    if (!TPy_KernelType || !TPy_LauncherType) return -1;
    Py_INCREF(TPy_KernelType);
    return PyModule_AddObject(module, "Kernel", (PyObject *)TPy_KernelType);
}

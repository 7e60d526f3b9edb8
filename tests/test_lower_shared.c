/* test_lower_shared.c - lowering of the ops that move data between threads
 * (lower/llvm_shared.c): convert_layout, reshape, reduce, scan and the FMA dot.
 *
 * Each case is a small kernel written as Tile IR text (load a tile, apply the
 * op, store the result), compiled through the pass pipeline and the LLVM
 * lowering, run on the PTX emulator with the race detector on (one block of
 * 32 * num_warps threads), and compared with a C reference.  Inputs are small
 * integers (quarters for floats), so sums are exact and the comparisons are
 * exact too, except f16 running sums.  A last group assembles a few of the
 * kernels with ptxas when it is installed. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>

#include "runtime/device.h"
#include "lower/llvm.h"
#include "lower/passes.h"
#include "tests/sanitized.h"

/* ---- Tile IR text of the test kernels ---- */

/* %off = row-major offsets of an MxN tile (row stride N), layouts left to assign_layout */
static void gen_offsets(Str *s, const char *name, int M, int N, const char *lay) {
    char L[128] = "";
    if (lay) snprintf(L, sizeof L, ", %s", lay);
    str_printf(s, "  %%%s_r = arange {start=0, end=%d} : tensor<%dxi32%s%s%s>\n", name, M, M,
               lay ? ", slice<dim=1, " : "", lay ? lay : "", lay ? ">" : "");
    str_printf(s, "  %%%s_r2 = expand_dims %%%s_r {axis=1} : tensor<%dx1xi32%s>\n", name, name, M, L);
    str_printf(s, "  %%%s_c = arange {start=0, end=%d} : tensor<%dxi32%s%s%s>\n", name, N, N,
               lay ? ", slice<dim=0, " : "", lay ? lay : "", lay ? ">" : "");
    str_printf(s, "  %%%s_c2 = expand_dims %%%s_c {axis=0} : tensor<1x%dxi32%s>\n", name, name, N, L);
    str_printf(s, "  %%%s_rb = broadcast %%%s_r2 : tensor<%dx%dxi32%s>\n", name, name, M, N, L);
    str_printf(s, "  %%%s_cb = broadcast %%%s_c2 : tensor<%dx%dxi32%s>\n", name, name, M, N, L);
    str_printf(s, "  %%%s_st = const {value=%d} : tensor<%dx%dxi32%s>\n", name, N, M, N, L);
    str_printf(s, "  %%%s_o0 = mul %%%s_rb, %%%s_st : tensor<%dx%dxi32%s>\n", name, name, name, M, N, L);
    str_printf(s, "  %%%s = add %%%s_o0, %%%s_cb : tensor<%dx%dxi32%s>\n", name, name, name, M, N, L);
}

/* %name = load of an MxN tile at %ptr */
static void gen_load(Str *s, const char *name, const char *ptr, const char *dt, int M, int N, const char *lay) {
    char L[128] = "";
    if (lay) snprintf(L, sizeof L, ", %s", lay);
    char off[64];
    snprintf(off, sizeof off, "%s_off", name);
    gen_offsets(s, off, M, N, lay);
    str_printf(s, "  %%%s_pb = splat %%%s : tensor<%dx%dxptr<%s>%s>\n", name, ptr, M, N, dt, L);
    str_printf(s, "  %%%s_p = ptr_add %%%s_pb, %%%s : tensor<%dx%dxptr<%s>%s>\n", name, name, off, M, N, dt, L);
    str_printf(s, "  %%%s = load %%%s_p : tensor<%dx%dx%s%s>\n", name, name, M, N, dt, L);
}

static void gen_store(Str *s, const char *val, const char *ptr, const char *dt, int M, int N, const char *lay) {
    char L[128] = "";
    if (lay) snprintf(L, sizeof L, ", %s", lay);
    gen_offsets(s, "so", M, N, lay);
    str_printf(s, "  %%st_pb = splat %%%s : tensor<%dx%dxptr<%s>%s>\n", ptr, M, N, dt, L);
    str_printf(s, "  %%st_p = ptr_add %%st_pb, %%so : tensor<%dx%dxptr<%s>%s>\n", M, N, dt, L);
    str_printf(s, "  store %%st_p, %%%s\n", val);
}

/* argmax/argmin give the i32 index; "argmax_value"/"argmin_value" here name the second result of an argmax/argmin
 * reduce, the element at that index (from the same combine of (value, index) pairs) */
static bool index_kind(const char *kind) { return !strcmp(kind, "argmax") || !strcmp(kind, "argmin"); }
static bool max_kind(const char *kind) { return !strcmp(kind, "max") || !strncmp(kind, "argmax", 6); }

/* "%s = reduce %v ..." of type rty, or for a value kind "%r:2 = reduce ..." (index, value); returns the name of
 * the result to store */
static const char *gen_reduce_line(Str *s, const char *kind, int ax, const char *ity, const char *rty) {
    if (!strstr(kind, "_value")) {
        str_printf(s, "  %%s = reduce %%v {kind=%s, axis=%d} : %s\n", kind, ax, rty);
        return "s";
    }
    str_printf(s, "  %%r:2 = reduce %%v {kind=%.6s, axis=%d} : %s, %s\n", kind, ax, ity, rty);
    return "r#1";
}

static char *gen_reduce(int M, int N, int ax, const char *kind, const char *dt, int warps) {
    Str s = {0};
    const char *rdt = index_kind(kind) ? "i32" : dt;
    int R = ax == 0 ? N : M;
    str_printf(&s, "kernel @k(%%x: ptr<%s> #div16, %%out: ptr<%s> #div16) num_warps=%d num_stages=1 {\n", dt, rdt, warps);
    gen_load(&s, "v", "x", dt, M, N, NULL);
    char ity[64], rty[64];
    snprintf(ity, sizeof ity, "tensor<%dxi32>", R);
    snprintf(rty, sizeof rty, "tensor<%dx%s>", R, rdt);
    const char *res = gen_reduce_line(&s, kind, ax, ity, rty);
    str_printf(&s, "  %%ri = arange {start=0, end=%d} : tensor<%dxi32>\n", R, R);
    str_printf(&s, "  %%po = splat %%out : tensor<%dxptr<%s>>\n", R, rdt);
    str_printf(&s, "  %%q = ptr_add %%po, %%ri : tensor<%dxptr<%s>>\n", R, rdt);
    str_printf(&s, "  store %%q, %%%s\n  return\n}\n", res);
    return str_take(&s);
}

/* 1-d reduce to a scalar, stored by every thread (same value) */
static char *gen_reduce_1d(int N, const char *kind, const char *dt, int warps) {
    Str s = {0};
    const char *rdt = index_kind(kind) ? "i32" : dt;
    str_printf(&s, "kernel @k(%%x: ptr<%s> #div16, %%out: ptr<%s> #div16) num_warps=%d num_stages=1 {\n", dt, rdt, warps);
    str_printf(&s, "  %%i = arange {start=0, end=%d} : tensor<%dxi32>\n", N, N);
    str_printf(&s, "  %%pb = splat %%x : tensor<%dxptr<%s>>\n", N, dt);
    str_printf(&s, "  %%p = ptr_add %%pb, %%i : tensor<%dxptr<%s>>\n", N, dt);
    str_printf(&s, "  %%v = load %%p : tensor<%dx%s>\n", N, dt);
    const char *res = gen_reduce_line(&s, kind, 0, "i32", rdt);
    str_printf(&s, "  store %%out, %%%s\n  return\n}\n", res);
    return str_take(&s);
}

static char *gen_scan(int M, int N, int ax, const char *kind, const char *dt, int warps) {
    Str s = {0};
    str_printf(&s, "kernel @k(%%x: ptr<%s> #div16, %%out: ptr<%s> #div16) num_warps=%d num_stages=1 {\n", dt, dt, warps);
    gen_load(&s, "v", "x", dt, M, N, NULL);
    str_printf(&s, "  %%s = scan %%v {kind=%s, axis=%d} : tensor<%dx%dx%s>\n", kind, ax, M, N, dt);
    gen_store(&s, "s", "out", dt, M, N, NULL);
    str_puts(&s, "  return\n}\n");
    return str_take(&s);
}

/* load in layout `la`, convert to `lb`, store in `lb` (explicit layouts, no assign_layout) */
static char *gen_convert(int M, int N, const char *dt, int warps, const char *la, const char *lb) {
    Str s = {0};
    str_printf(&s, "#A = %s\n#B = %s\n", la, lb);
    str_printf(&s, "kernel @k(%%x: ptr<%s> #div16, %%out: ptr<%s> #div16) num_warps=%d num_stages=1 {\n", dt, dt, warps);
    gen_load(&s, "v", "x", dt, M, N, "#A");
    str_printf(&s, "  %%c = convert_layout %%v : tensor<%dx%dx%s, #B>\n", M, N, dt);
    gen_store(&s, "c", "out", dt, M, N, "#B");
    str_puts(&s, "  return\n}\n");
    return str_take(&s);
}

/* out[M,N] = a[M,K] x b[K,N] (+ 0), accumulator in acc_dt */
static char *gen_dot(int M, int N, int K, const char *dt, const char *acc_dt, int warps) {
    Str s = {0};
    str_printf(&s, "kernel @k(%%a: ptr<%s> #div16, %%b: ptr<%s> #div16, %%out: ptr<%s> #div16) num_warps=%d num_stages=1 {\n",
               dt, dt, acc_dt, warps);
    gen_load(&s, "va", "a", dt, M, K, NULL);
    gen_load(&s, "vb", "b", dt, K, N, NULL);
    str_printf(&s, "  %%z = const {value=0} : tensor<%dx%dx%s>\n", M, N, acc_dt);
    str_printf(&s, "  %%d = dot %%va, %%vb, %%z : tensor<%dx%dx%s>\n", M, N, acc_dt);
    gen_store(&s, "d", "out", acc_dt, M, N, NULL);
    str_puts(&s, "  return\n}\n");
    return str_take(&s);
}

/* 2-d reshape [M,N] -> [N2, M*N/N2] (row-major order kept) */
static char *gen_reshape(int M, int N, int M2, int N2, const char *dt, int warps) {
    Str s = {0};
    str_printf(&s, "kernel @k(%%x: ptr<%s> #div16, %%out: ptr<%s> #div16) num_warps=%d num_stages=1 {\n", dt, dt, warps);
    gen_load(&s, "v", "x", dt, M, N, NULL);
    str_printf(&s, "  %%c = reshape %%v : tensor<%dx%dx%s>\n", M2, N2, dt);
    gen_store(&s, "c", "out", dt, M2, N2, NULL);
    str_puts(&s, "  return\n}\n");
    return str_take(&s);
}

/* ---- compile ---- */

/* Tile IR text -> PTX (NULL on failure, diagnostics in *err). */
static char *compile_tir(const char *text, bool assign, char **err) {
    Arena *a = arena_new();
    Diag d;
    diag_init(&d);
    SrcFile src = {"<case>", text, strlen(text)};
    Module *m = tir_parse(a, &src, &d);
    bool ok = m != NULL;
    if (ok && assign) {
        PipelineOptions po = {.verify = true};
        ok = tir_run_pipeline(m, &po, &d);
    } else if (ok) {
        ok = lower_smem_alloc(m, &d) && lower_barrier(m, &d) && tir_verify(m, &d);
    }
    LlvmOptions o = {.arch = "sm_80", .run_o3 = true};
    LlvmResult r = {0};
    if (ok) ok = llvm_lower_module(m, &o, &r, &d);
    char *ptx = NULL;
    if (ok) ptx = r.ptx;
    else {
        Str e = {0};
        diag_render(&d, &e);
        if (m) tir_print_module(&e, m);
        *err = str_take(&e);
    }
    diag_free(&d);
    arena_free(a);
    return ptx;
}

/* ---- element conversion ---- */
static int dt_size(const char *dt) {
    if (!strcmp(dt, "f16") || !strcmp(dt, "bf16") || !strcmp(dt, "i16")) return 2;
    if (!strcmp(dt, "f64") || !strcmp(dt, "i64")) return 8;
    if (!strcmp(dt, "u8") || !strcmp(dt, "i8")) return 1;
    return 4;
}
static void put(const char *dt, void *buf, int i, double v) {
    char *p = (char *)buf + (size_t)i * dt_size(dt);
    if (!strcmp(dt, "f32")) { float f = (float)v; memcpy(p, &f, 4); }
    else if (!strcmp(dt, "f64")) memcpy(p, &v, 8);
    else if (!strcmp(dt, "f16")) { _Float16 h = (_Float16)v; memcpy(p, &h, 2); }
    else if (!strcmp(dt, "bf16")) { float f = (float)v; uint32_t u; memcpy(&u, &f, 4); uint16_t h = (uint16_t)(u >> 16); memcpy(p, &h, 2); }
    else if (!strcmp(dt, "i32")) { int32_t x = (int32_t)v; memcpy(p, &x, 4); }
    else if (!strcmp(dt, "i64")) { int64_t x = (int64_t)v; memcpy(p, &x, 8); }
    else if (!strcmp(dt, "u8")) { uint8_t x = (uint8_t)(int)v; memcpy(p, &x, 1); }
    else if (!strcmp(dt, "i8")) { int8_t x = (int8_t)v; memcpy(p, &x, 1); }
}
static double get(const char *dt, const void *buf, int i) {
    const char *p = (const char *)buf + (size_t)i * dt_size(dt);
    if (!strcmp(dt, "f32")) { float f; memcpy(&f, p, 4); return f; }
    if (!strcmp(dt, "f64")) { double f; memcpy(&f, p, 8); return f; }
    if (!strcmp(dt, "f16")) { _Float16 h; memcpy(&h, p, 2); return (double)h; }
    if (!strcmp(dt, "bf16")) { uint16_t h; memcpy(&h, p, 2); uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
    if (!strcmp(dt, "i32")) { int32_t x; memcpy(&x, p, 4); return x; }
    if (!strcmp(dt, "i64")) { int64_t x; memcpy(&x, p, 8); return (double)x; }
    if (!strcmp(dt, "u8")) return *(const uint8_t *)p;
    if (!strcmp(dt, "i8")) return *(const int8_t *)p;
    return 0;
}

/* ---- run on the emulator: nbuf buffers as the kernel's arguments, one block ---- */
static bool emu_run(const char *ptx, int warps, int nbuf, void **host, const size_t *bytes, char **err) {
    TileDevice *d = NULL;
    DevOptions o = {.emu_racecheck = true, .emu_host_threads = 1};
    if (dev_open("emu", &o, &d, err) != DEV_OK) return false;
    TileDevModule *mod = NULL;
    TileDevFunction *fn = NULL;
    uint64_t addr[8] = {0};
    void *params[8];
    bool ok = dev_module_load_ptx(d, ptx, &mod) == DEV_OK && dev_module_get_function(mod, "k", &fn) == DEV_OK;
    for (int k = 0; ok && k < nbuf; k++) {
        ok = dev_malloc(d, bytes[k], &addr[k]) == DEV_OK && dev_memcpy_htod(d, addr[k], host[k], bytes[k]) == DEV_OK;
        params[k] = &addr[k];
    }
    if (ok) ok = dev_launch(fn, 1, 1, 1, 32u * (unsigned)warps, 1, 1, 0, NULL, params) == DEV_OK && dev_synchronize(d) == DEV_OK;
    for (int k = 0; ok && k < nbuf; k++) ok = dev_memcpy_dtoh(d, host[k], addr[k], bytes[k]) == DEV_OK;
    if (!ok) *err = strdup(dev_last_error(d) ? dev_last_error(d) : "device error");
    for (int k = 0; k < nbuf; k++)
        if (addr[k]) dev_free(d, addr[k]);
    if (mod) dev_module_unload(mod);
    dev_close(d);
    return ok;
}

/* numeric checks: return NULL on success, else a malloc'd message */
static double input_val(const char *dt, int i, int salt) {
    unsigned h = (unsigned)i * 2654435761u + (unsigned)salt * 40503u;
    h ^= h >> 13;
    int r = (int)(h % 23) - 11; /* small ints: ties and exact sums */
    if (!strcmp(dt, "u8")) return (double)(h % 7);
    if (dt[0] == 'f' || dt[0] == 'b') return r / 4.0;
    return r;
}

static char *fail_msg(const char *cs, const char *what, char *err) {
    Str s = {0};
    str_printf(&s, "%s: %s: %s", cs, what, err ? err : "");
    free(err);
    return str_take(&s);
}

static char *check_reduce(int M, int N, int ax, const char *kind, const char *dt, int warps) {
    char cs[160];
    snprintf(cs, sizeof cs, "reduce %s [%d,%d] axis %d %s warps %d", kind, M, N, ax, dt, warps);
    char *text = gen_reduce(M, N, ax, kind, dt, warps), *err = NULL;
    char *ptx = compile_tir(text, true, &err);
    free(text);
    if (!ptx) return fail_msg(cs, "compile", err);
    bool arg = index_kind(kind);
    const char *rdt = arg ? "i32" : dt;
    int R = ax == 0 ? N : M;
    size_t bytes[2] = {(size_t)M * N * dt_size(dt), (size_t)R * dt_size(rdt)};
    void *x = calloc(1, bytes[0]), *out = calloc(1, bytes[1]);
    for (int i = 0; i < M * N; i++) put(dt, x, i, input_val(dt, i, M + N * 3 + ax));
    void *host[2] = {x, out};
    char *msg = NULL;
    if (!emu_run(ptx, warps, 2, host, bytes, &err)) msg = fail_msg(cs, "emu", err);
    for (int r = 0; !msg && r < R; r++) {
        double acc = 0;
        int best = -1;
        for (int j = 0; j < (ax == 0 ? M : N); j++) {
            int idx = ax == 0 ? j * N + r : r * N + j;
            double v = get(dt, x, idx);
            if (!strcmp(kind, "sum")) acc += v;
            else if (best < 0 || (max_kind(kind) ? v > acc : v < acc)) {
                acc = v;
                best = j;
            }
        }
        double want = arg ? best : acc, got = get(rdt, out, r);
        if (!strcmp(rdt, "u8")) want = (double)((long long)want & 255); /* sums wrap */
        if (want != got) {
            Str s = {0};
            str_printf(&s, "reduce %s [%d,%d] axis %d %s warps %d: out[%d] = %g, want %g", kind, M, N, ax, dt, warps, r, got, want);
            msg = str_take(&s);
        }
    }
    free(ptx);
    free(x);
    free(out);
    return msg;
}

static char *check_reduce_1d(int N, const char *kind, const char *dt, int warps) {
    char cs[160];
    snprintf(cs, sizeof cs, "reduce %s [%d] %s warps %d", kind, N, dt, warps);
    char *text = gen_reduce_1d(N, kind, dt, warps), *err = NULL;
    char *ptx = compile_tir(text, true, &err);
    free(text);
    if (!ptx) return fail_msg(cs, "compile", err);
    bool arg = index_kind(kind);
    const char *rdt = arg ? "i32" : dt;
    size_t bytes[2] = {(size_t)N * dt_size(dt), 8};
    void *x = calloc(1, bytes[0]), *out = calloc(1, bytes[1]);
    for (int i = 0; i < N; i++) put(dt, x, i, input_val(dt, i, N));
    void *host[2] = {x, out};
    char *msg = NULL;
    if (!emu_run(ptx, warps, 2, host, bytes, &err)) msg = fail_msg(cs, "emu", err);
    double acc = 0;
    int best = -1;
    bool max = max_kind(kind);
    for (int j = 0; j < N; j++) {
        double v = get(dt, x, j);
        if (!strcmp(kind, "sum")) acc += v;
        else if (best < 0 || (max ? v > acc : v < acc)) acc = v, best = j;
    }
    double want = arg ? best : acc, got = get(rdt, out, 0);
    if (!msg && want != got) {
        Str s = {0};
        str_printf(&s, "reduce %s [%d] %s warps %d: %g, want %g", kind, N, dt, warps, got, want);
        msg = str_take(&s);
    }
    free(ptx);
    free(x);
    free(out);
    return msg;
}

static char *check_scan(int M, int N, int ax, const char *kind, const char *dt, int warps) {
    char cs[160];
    snprintf(cs, sizeof cs, "scan %s [%d,%d] axis %d %s warps %d", kind, M, N, ax, dt, warps);
    char *text = gen_scan(M, N, ax, kind, dt, warps), *err = NULL;
    char *ptx = compile_tir(text, true, &err);
    free(text);
    if (!ptx) return fail_msg(cs, "compile", err);
    size_t bytes[2] = {(size_t)M * N * dt_size(dt), (size_t)M * N * dt_size(dt)};
    void *x = calloc(1, bytes[0]), *out = calloc(1, bytes[1]);
    for (int i = 0; i < M * N; i++) put(dt, x, i, input_val(dt, i, M * 5 + N + ax));
    void *host[2] = {x, out};
    char *msg = NULL;
    if (!emu_run(ptx, warps, 2, host, bytes, &err)) msg = fail_msg(cs, "emu", err);
    int L = ax == 0 ? M : N, R = ax == 0 ? N : M;
    for (int r = 0; !msg && r < R; r++) {
        double acc = 0;
        for (int j = 0; !msg && j < L; j++) {
            int idx = ax == 0 ? j * N + r : r * N + j;
            double v = get(dt, x, idx);
            if (!strcmp(kind, "sum")) acc += v;
            else if (j == 0 || (!strcmp(kind, "max") ? v > acc : v < acc)) acc = v;
            double got = get(dt, out, idx);
            double tol = !strcmp(kind, "sum") && !strcmp(dt, "f16") ? 0.5 : 0; /* f16 rounds the running sum */
            if (fabs(got - acc) > tol) {
                Str s = {0};
                str_printf(&s, "scan %s [%d,%d] axis %d %s warps %d: out[%d] = %g, want %g", kind, M, N, ax, dt, warps, idx, got, acc);
                msg = str_take(&s);
            }
        }
    }
    free(ptx);
    free(x);
    free(out);
    return msg;
}

/* convert (explicit layouts) or reshape: output must equal input element for element */
static char *check_copy(char *text, bool assign, int numel, const char *dt, int warps, const char *what) {
    char cs[160];
    snprintf(cs, sizeof cs, "%s %s warps %d", what, dt, warps);
    char *err = NULL;
    char *ptx = compile_tir(text, assign, &err);
    free(text);
    if (!ptx) return fail_msg(cs, "compile", err);
    size_t bytes[2] = {(size_t)numel * dt_size(dt), (size_t)numel * dt_size(dt)};
    void *x = calloc(1, bytes[0]), *out = calloc(1, bytes[1]);
    for (int i = 0; i < numel; i++) put(dt, x, i, input_val(dt, i, 1) + (dt[0] == 'f' ? 0 : 0));
    void *host[2] = {x, out};
    char *msg = NULL;
    if (!emu_run(ptx, warps, 2, host, bytes, &err)) msg = fail_msg(cs, "emu", err);
    if (!msg && memcmp(x, out, bytes[0])) {
        int i = 0;
        while (get(dt, x, i) == get(dt, out, i)) i++;
        Str s = {0};
        str_printf(&s, "%s %s warps %d: out[%d] = %g, want %g", what, dt, warps, i, get(dt, out, i), get(dt, x, i));
        msg = str_take(&s);
    }
    free(ptx);
    free(x);
    free(out);
    return msg;
}

static char *check_dot(int M, int N, int K, const char *dt, const char *acc_dt, int warps) {
    char cs[160];
    snprintf(cs, sizeof cs, "dot [%d,%d]x[%d,%d] %s->%s warps %d", M, K, K, N, dt, acc_dt, warps);
    char *text = gen_dot(M, N, K, dt, acc_dt, warps), *err = NULL;
    char *ptx = compile_tir(text, true, &err);
    free(text);
    if (!ptx) return fail_msg(cs, "compile", err);
    if (strstr(ptx, "mma.sync")) {
        free(ptx);
        return fail_msg(cs, "went to tensor cores; this test is for the FMA lowering", NULL);
    }
    size_t bytes[3] = {(size_t)M * K * dt_size(dt), (size_t)K * N * dt_size(dt), (size_t)M * N * dt_size(acc_dt)};
    void *a = calloc(1, bytes[0]), *b = calloc(1, bytes[1]), *out = calloc(1, bytes[2]);
    for (int i = 0; i < M * K; i++) put(dt, a, i, input_val(dt, i, 7));
    for (int i = 0; i < K * N; i++) put(dt, b, i, input_val(dt, i, 11));
    void *host[3] = {a, b, out};
    char *msg = NULL;
    if (!emu_run(ptx, warps, 3, host, bytes, &err)) msg = fail_msg(cs, "emu", err);
    for (int m = 0; !msg && m < M; m++)
        for (int n = 0; !msg && n < N; n++) {
            double acc = 0;
            for (int k = 0; k < K; k++) acc += get(dt, a, m * K + k) * get(dt, b, k * N + n);
            double got = get(acc_dt, out, m * N + n);
            if (got != acc) { /* small exact inputs: sums are exact in f32 */
                Str s = {0};
                str_printf(&s, "dot [%d,%d]x[%d,%d] %s->%s warps %d: out[%d][%d] = %g, want %g", M, K, K, N, dt, acc_dt, warps, m, n,
                           got, acc);
                msg = str_take(&s);
            }
        }
    free(ptx);
    free(a);
    free(b);
    free(out);
    return msg;
}

/* ---- NaN handling: max/min propagate NaN, argmax/argmin pick the first NaN ---- */
static char *check_reduce_nan(const char *kind, int warps) {
    char cs[160];
    snprintf(cs, sizeof cs, "reduce %s with NaN warps %d", kind, warps);
    int M = 4, N = 64;
    char *text = gen_reduce(M, N, 1, kind, "f32", warps), *err = NULL;
    char *ptx = compile_tir(text, true, &err);
    free(text);
    if (!ptx) return fail_msg(cs, "compile", err);
    bool arg = index_kind(kind);
    float x[4 * 64], out[4];
    for (int i = 0; i < M * N; i++) x[i] = (float)input_val("f32", i, 3);
    /* row 0: no NaN; row 1: one NaN at 37; row 2: NaNs at 5 and 60; row 3: NaN at 0 */
    x[1 * N + 37] = NAN;
    x[2 * N + 60] = NAN;
    x[2 * N + 5] = NAN;
    x[3 * N + 0] = NAN;
    size_t bytes[2] = {sizeof x, sizeof out};
    void *host[2] = {x, out};
    char *msg = NULL;
    if (!emu_run(ptx, warps, 2, host, bytes, &err)) msg = fail_msg(cs, "emu", err);
    bool max = max_kind(kind);
    for (int r = 0; !msg && r < M; r++) {
        int best = 0, first_nan = -1;
        for (int j = 0; j < N; j++) {
            if (isnan(x[r * N + j]) && first_nan < 0) first_nan = j;
            if (max ? x[r * N + j] > x[r * N + best] : x[r * N + j] < x[r * N + best]) best = j;
        }
        bool ok;
        if (arg) {
            int32_t got;
            memcpy(&got, &out[r], 4);
            ok = got == (first_nan >= 0 ? first_nan : best);
        } else {
            ok = first_nan >= 0 ? isnan(out[r]) : out[r] == x[r * N + best];
        }
        if (!ok) {
            Str s = {0};
            str_printf(&s, "reduce %s with NaN, warps %d: row %d wrong", kind, warps, r);
            msg = str_take(&s);
        }
    }
    free(ptx);
    return msg;
}

static void expect_ok(char *msg) {
    cr_expect(msg == NULL, "%s", msg ? msg : "");
    free(msg);
}

static const int shapes[][2] = {{4, 64}, {64, 4}, {1, 128}, {128, 1}, {16, 16}, {2, 8}, {32, 256}};
static const int warp_counts[] = {1, 4, 8};

/* Under the sanitizers (tests/sanitized.h) the sweeps below run a fifth to a seventh of their cases: each
 * warp count x shape x axis (x dtype in reduce_dtypes) runs one reduce kind (one scan variant), the kind
 * turning from case to case, so that every warp count still meets every shape, axis, dtype and kind, and
 * every kind every dtype; the odd shapes (128x1, 1x128, 2x8) and the long 1-d scans stay. */
Test(lower_shared, reduce_2d) {
    const char *kinds[] = {"sum", "max", "min", "argmax", "argmin"}, *dts[] = {"f32", "i32"};
    for (int w = 0; w < 3; w++)
        for (int s = 0; s < (int)ARRAY_LEN(shapes); s++)
            for (int ax = 0; ax < 2; ax++)
                for (int k = 0; k < 5; k++)
                    for (int d = 0; d < 2; d++) {
                        if (!turn_case(k, 5, 2 * s + ax + w)) continue;
                        expect_ok(check_reduce(shapes[s][0], shapes[s][1], ax, kinds[k], dts[d], warp_counts[w]));
                    }
}

/* 280 cases per warp count, two thirds of the program's time: one test per warp count, so that Criterion's
 * workers (--jobs 2) run them side by side instead of one after another */
static void reduce_dtypes(int warps) {
    const char *kinds[] = {"sum", "max", "min", "argmax", "argmin", "argmax_value", "argmin_value"};
    const char *dts[] = {"f16", "bf16", "f64", "i64", "u8"};
    const int sh[][2] = {{16, 16}, {4, 64}, {32, 256}, {128, 1}};
    const int wi = warps == warp_counts[0] ? 0 : warps == warp_counts[1] ? 1 : 2;
    for (int s = 0; s < (int)ARRAY_LEN(sh); s++)
        for (int ax = 0; ax < 2; ax++)
            for (int k = 0; k < (int)ARRAY_LEN(kinds); k++)
                for (int d = 0; d < (int)ARRAY_LEN(dts); d++) {
                    if (!turn_case(k, (int)ARRAY_LEN(kinds), 2 * s + ax + d + wi)) continue;
                    expect_ok(check_reduce(sh[s][0], sh[s][1], ax, kinds[k], dts[d], warps));
                }
}

Test(lower_shared, reduce_dtypes_1_warp) { reduce_dtypes(warp_counts[0]); }
Test(lower_shared, reduce_dtypes_4_warps) { reduce_dtypes(warp_counts[1]); }
Test(lower_shared, reduce_dtypes_8_warps) { reduce_dtypes(warp_counts[2]); }

Test(lower_shared, reduce_to_scalar) {
    const int ns[] = {1, 8, 32, 128, 1024};
    const char *kinds[] = {"sum", "max", "min", "argmax", "argmin", "argmax_value", "argmin_value"};
    for (int w = 0; w < 3; w++)
        for (size_t n = 0; n < ARRAY_LEN(ns); n++)
            for (size_t k = 0; k < ARRAY_LEN(kinds); k++) {
                expect_ok(check_reduce_1d(ns[n], kinds[k], "f32", warp_counts[w]));
                expect_ok(check_reduce_1d(ns[n], kinds[k], "i32", warp_counts[w]));
            }
}

Test(lower_shared, reduce_nan) {
    const char *kinds[] = {"max", "min", "argmax", "argmin", "argmax_value", "argmin_value"};
    for (int w = 0; w < 3; w++)
        for (size_t k = 0; k < ARRAY_LEN(kinds); k++) expect_ok(check_reduce_nan(kinds[k], warp_counts[w]));
}

/* x[4][8][16] (row-major): sum along `ax` (rank-3 blocked -> slice), then max along dim 0 of that
 * (a reduce whose operand is itself a slice); out = the remaining vector. */
static char *gen_reduce_rank3(int ax, int warps, int *nout) {
    static const int S[3] = {4, 8, 16}, stride[3] = {128, 16, 1};
    int r[2], n = 0;
    for (int d = 0; d < 3; d++)
        if (d != ax) r[n++] = S[d];
    *nout = r[1];
    Str s = {0};
    str_printf(&s, "kernel @k(%%x: ptr<i32> #div16, %%out: ptr<i32> #div16) num_warps=%d num_stages=1 {\n", warps);
    for (int d = 0; d < 3; d++) { /* %o<d> = coordinate along d times its stride, broadcast to 4x8x16 */
        char sh[3][8];
        for (int e = 0; e < 3; e++) snprintf(sh[e], sizeof sh[e], "%d", e == d ? S[d] : 1);
        str_printf(&s, "  %%i%d = arange {start=0, end=%d} : tensor<%dxi32>\n", d, S[d], S[d]);
        if (d == 0) str_printf(&s, "  %%j%d = expand_dims %%i%d {axis=1} : tensor<%sx1xi32>\n", d, d, sh[0]);
        else str_printf(&s, "  %%j%d = expand_dims %%i%d {axis=0} : tensor<1x%sxi32>\n", d, d, d == 1 ? sh[1] : sh[2]);
        if (d == 2) str_printf(&s, "  %%k%d = expand_dims %%j%d {axis=0} : tensor<1x1x16xi32>\n", d, d);
        else str_printf(&s, "  %%k%d = expand_dims %%j%d {axis=2} : tensor<%sx%sx1xi32>\n", d, d, sh[0], sh[1]);
        str_printf(&s, "  %%b%d = broadcast %%k%d : tensor<4x8x16xi32>\n", d, d);
        str_printf(&s, "  %%s%d = const {value=%d} : tensor<4x8x16xi32>\n", d, stride[d]);
        str_printf(&s, "  %%o%d = mul %%b%d, %%s%d : tensor<4x8x16xi32>\n", d, d, d);
    }
    str_puts(&s, "  %o01 = add %o0, %o1 : tensor<4x8x16xi32>\n"
                 "  %off = add %o01, %o2 : tensor<4x8x16xi32>\n"
                 "  %pb = splat %x : tensor<4x8x16xptr<i32>>\n"
                 "  %p = ptr_add %pb, %off : tensor<4x8x16xptr<i32>>\n"
                 "  %v = load %p : tensor<4x8x16xi32>\n");
    str_printf(&s, "  %%r = reduce %%v {kind=sum, axis=%d} : tensor<%dx%dxi32>\n", ax, r[0], r[1]);
    str_printf(&s, "  %%r2 = reduce %%r {kind=max, axis=0} : tensor<%dxi32>\n", r[1]);
    str_printf(&s, "  %%n = arange {start=0, end=%d} : tensor<%dxi32>\n", r[1], r[1]);
    str_printf(&s, "  %%qb = splat %%out : tensor<%dxptr<i32>>\n", r[1]);
    str_printf(&s, "  %%q = ptr_add %%qb, %%n : tensor<%dxptr<i32>>\n", r[1]);
    str_puts(&s, "  store %q, %r2\n  return\n}\n");
    return str_take(&s);
}

static char *check_reduce_rank3(int ax, int warps) {
    char cs[160];
    snprintf(cs, sizeof cs, "rank-3 reduce axis %d warps %d", ax, warps);
    static const int S[3] = {4, 8, 16};
    int nout;
    char *text = gen_reduce_rank3(ax, warps, &nout), *err = NULL;
    char *ptx = compile_tir(text, true, &err);
    free(text);
    if (!ptx) return fail_msg(cs, "compile", err);
    int32_t x[512], out[16] = {0};
    for (int i = 0; i < 512; i++) x[i] = (int32_t)input_val("i32", i, ax);
    void *host[2] = {x, out};
    size_t bytes[2] = {sizeof x, sizeof out};
    char *msg = NULL;
    if (!emu_run(ptx, warps, 2, host, bytes, &err)) msg = fail_msg(cs, "emu", err);
    int kept[2], n = 0;
    for (int d = 0; d < 3; d++)
        if (d != ax) kept[n++] = d;
    for (int j = 0; !msg && j < nout; j++) {
        int best = INT32_MIN;
        for (int i = 0; i < S[kept[0]]; i++) {
            int sum = 0;
            for (int t = 0; t < S[ax]; t++) {
                int c[3];
                c[ax] = t, c[kept[0]] = i, c[kept[1]] = j;
                sum += x[c[0] * 128 + c[1] * 16 + c[2]];
            }
            if (sum > best) best = sum;
        }
        if (out[j] != best) {
            Str s = {0};
            str_printf(&s, "rank-3 sum along %d then max, warps %d: out[%d] = %d, want %d", ax, warps, j, out[j], best);
            msg = str_take(&s);
        }
    }
    free(ptx);
    return msg;
}

Test(lower_shared, reduce_rank3_then_slice) {
    for (int w = 0; w < 3; w++)
        for (int ax = 0; ax < 3; ax++) expect_ok(check_reduce_rank3(ax, warp_counts[w]));
}

Test(lower_shared, scan) {
    static const char *const var[][2] = {{"sum", "f32"}, {"sum", "i32"}, {"max", "i32"}, {"min", "f32"}, {"sum", "f16"}};
    for (int w = 0; w < 3; w++)
        for (int s = 0; s < (int)ARRAY_LEN(shapes); s++)
            for (int ax = 0; ax < 2; ax++)
                for (int v = 0; v < (int)ARRAY_LEN(var); v++) {
                    if (!turn_case(v, (int)ARRAY_LEN(var), 2 * s + ax + w)) continue;
                    expect_ok(check_scan(shapes[s][0], shapes[s][1], ax, var[v][0], var[v][1], warp_counts[w]));
                }
    /* 1-d cumsum longer than the layout's coverage: several repetitions, each crossing warps */
    expect_ok(check_scan(1, 4096, 1, "sum", "i32", 4));
    expect_ok(check_scan(2048, 1, 0, "sum", "f32", 8));
}

Test(lower_shared, convert_layout) {
    const char *ls[] = {
        "blocked<spt=[1,4], tpw=[4,8], wpc=[4,1], order=[1,0]>",
        "blocked<spt=[2,1], tpw=[16,2], wpc=[1,4], order=[0,1]>",
        "blocked<spt=[1,1], tpw=[1,32], wpc=[1,4], order=[1,0]>",
        "blocked<spt=[4,4], tpw=[8,4], wpc=[2,2], order=[1,0]>",
        "blocked<spt=[1,2], tpw=[32,1], wpc=[4,1], order=[0,1]>",
    };
    const int sh[][2] = {{32, 32}, {8, 8}, {64, 128}, {1, 64}};
    const char *dts[] = {"f32", "f16", "i8", "i64"};
    for (size_t a = 0; a < ARRAY_LEN(ls); a++)
        for (size_t b = 0; b < ARRAY_LEN(ls); b++) {
            if (a == b) continue;
            for (size_t s = 0; s < ARRAY_LEN(sh); s++) {
                const char *dt = dts[(a + b + s) % ARRAY_LEN(dts)];
                int M = sh[s][0], N = sh[s][1];
                if (M * N * dt_size(dt) > 48 * 1024) dt = "f16"; /* the scratch must fit in shared memory */
                char what[64];
                snprintf(what, sizeof what, "convert [%d,%d] L%zu->L%zu", M, N, a, b);
                expect_ok(check_copy(gen_convert(M, N, dt, 4, ls[a], ls[b]), false, M * N, dt, 4, what));
            }
        }
}

Test(lower_shared, reshape) {
    expect_ok(check_copy(gen_reshape(16, 32, 32, 16, "f32", 4), true, 512, "f32", 4, "reshape 16x32->32x16"));
    expect_ok(check_copy(gen_reshape(4, 64, 256, 1, "i32", 4), true, 256, "i32", 4, "reshape 4x64->256x1"));
    expect_ok(check_copy(gen_reshape(64, 2, 2, 64, "f16", 8), true, 128, "f16", 8, "reshape 64x2->2x64"));
    expect_ok(check_copy(gen_reshape(8, 8, 1, 64, "i32", 1), true, 64, "i32", 1, "reshape 8x8->1x64"));
}

/* FMA dots only: f32 without tf32, i32, and tiles smaller than one mma.sync
 * instruction (M < 16) stay off tensor cores; check_dot insists. */
Test(lower_shared, dot) {
    expect_ok(check_dot(16, 16, 16, "f32", "f32", 1));
    expect_ok(check_dot(16, 16, 16, "f32", "f32", 4));
    expect_ok(check_dot(64, 64, 32, "f32", "f32", 4));
    expect_ok(check_dot(64, 64, 32, "f32", "f32", 8));
    expect_ok(check_dot(16, 32, 64, "f32", "f32", 2));
    expect_ok(check_dot(1, 16, 16, "f32", "f32", 1));
    expect_ok(check_dot(8, 16, 16, "f16", "f16", 4)); /* from 16 rows up, f16 into f16 accumulates on tensor cores */
    expect_ok(check_dot(8, 16, 16, "f16", "f32", 4));
    expect_ok(check_dot(8, 32, 16, "bf16", "f32", 8));
    expect_ok(check_dot(32, 16, 8, "i32", "i32", 4));
    expect_ok(check_dot(8, 16, 32, "i8", "i32", 4));
}

/* ---- ptxas accepts what the lowering emits ---- */
static bool have_ptxas(void) { return access("/usr/local/cuda/bin/ptxas", X_OK) == 0; }

static void expect_ptxas(char *text, bool assign) {
    char *err = NULL, *ptx = compile_tir(text, assign, &err);
    free(text);
    cr_assert(ptx, "compile failed: %s", err ? err : "");
    char dir[] = "/tmp/tile_lower_shared_XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[128], cmd[512];
    snprintf(path, sizeof path, "%s/k.ptx", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(ptx, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "/usr/local/cuda/bin/ptxas -arch=sm_80 -o %s/k.cubin %s 2>&1", dir, path);
    int rc = system(cmd);
    cr_expect_eq(rc, 0, "ptxas rejected the PTX; repro: %s", cmd);
    if (rc == 0) {
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        if (system(cmd)) {}
    }
    free(ptx);
}

Test(lower_shared, ptxas_accepts) {
    if (!have_ptxas()) cr_skip("ptxas not found: assembly of the lowered reduce/scan/convert/dot kernels NOT checked");
    expect_ptxas(gen_reduce(32, 256, 0, "argmax", "f16", 8), true);
    expect_ptxas(gen_reduce(4, 64, 1, "sum", "f64", 4), true);
    expect_ptxas(gen_reduce(64, 4, 0, "min", "i64", 4), true);
    expect_ptxas(gen_reduce_1d(1024, "argmin", "bf16", 8), true);
    expect_ptxas(gen_scan(64, 64, 0, "sum", "f16", 4), true);
    expect_ptxas(gen_scan(1, 4096, 1, "max", "i64", 8), true);
    expect_ptxas(gen_convert(64, 128, "f16", 4, "blocked<spt=[1,8], tpw=[4,8], wpc=[4,1], order=[1,0]>",
                             "blocked<spt=[2,1], tpw=[16,2], wpc=[1,4], order=[0,1]>"),
                 false);
    expect_ptxas(gen_dot(64, 64, 32, "f32", "f32", 4), true);
    expect_ptxas(gen_dot(8, 32, 16, "i8", "i32", 4), true);
}

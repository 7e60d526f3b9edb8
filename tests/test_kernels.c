/* test_kernels.c - every shipped kernel compiles for sm_80 and sm_90a, ptxas
 * accepts the PTX, and ptxas -v reports no spills: unspecialized (the
 * ptxas_sm* tests) and at the configurations the C APIs launch
 * (ptxas_attention_launch_configs, ptxas_launched_configs).  Without
 * ptxas the assembly checks are reported as skipped, never as passed. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "include/tile/tile.h"

static bool have_ptxas(void) {
    if (access("/usr/local/cuda/bin/ptxas", X_OK) == 0) return true;
    return system("command -v ptxas >/dev/null 2>&1") == 0;
}

/* Every .tile under kernels/, subfolders included, as paths relative to kernels/. */
static int list_dir(const char *rel, char names[][256], int n, int max) {
    char dir[512];
    snprintf(dir, sizeof dir, TILE_SOURCE_DIR "/kernels%s%s", *rel ? "/" : "", rel);
    DIR *d = opendir(dir);
    if (!d) return n;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        if (e->d_name[0] == '.') continue;
        char sub[256];
        snprintf(sub, sizeof sub, "%s%s%.200s", rel, *rel ? "/" : "", e->d_name);
        size_t l = strlen(e->d_name);
        if (l > 5 && !strcmp(e->d_name + l - 5, ".tile")) snprintf(names[n++], 256, "%s", sub);
        else if (e->d_type == DT_DIR) n = list_dir(sub, names, n, max);
    }
    closedir(d);
    return n;
}

static int list_kernels(char names[][256], int max) { return list_dir("", names, 0, max); }

static void compile_all(const char *arch, bool cubin) {
    char names[64][256];
    int n = list_kernels(names, 64);
    cr_assert_geq(n, 7, "expected at least 7 shipped kernels, found %d", n);
    for (int k = 0; k < n; k++) {
        char path[1024];
        snprintf(path, sizeof path, TILE_SOURCE_DIR "/kernels/%.255s", names[k]);
        /* unspecialized, as `tile compile kernels/...` shows it: the const defaults, nothing
         * known of the sizes and strides (the launched configurations: ptxas_launched_configs) */
        tile_compile_options o = {.arch = arch, .want_cubin = cubin};
        tile_compiled c;
        tile_status st = tile_compile_file(path, &o, &c);
        cr_assert_eq(st, TILE_OK, "%s for %s: %s\n%s", names[k], arch, tile_status_string(st), c.diagnostics);
        cr_assert(c.ptx && strstr(c.ptx, ".entry"), "%s: no entry in the PTX", names[k]);
        cr_assert(strstr(c.ptx, arch), "%s: PTX does not target %s", names[k], arch);
        if (cubin) {
            cr_assert(c.cubin && c.cubin_size > 0, "%s: no cubin", names[k]);
            for (int j = 0; j < c.nkernels; j++)
                cr_expect(c.kernels[j].spill_bytes == 0, "%s/%s spills %d bytes (ptxas -v):\n%s", names[k], c.kernels[j].name,
                          c.kernels[j].spill_bytes, c.ptxas_log);
        }
        tile_compiled_free(&c);
    }
}

Test(kernels, ptx_sm80) { compile_all("sm_80", false); }
Test(kernels, ptx_sm90a) { compile_all("sm_90a", false); }

Test(kernels, ptxas_sm80) {
    if (!have_ptxas()) cr_skip("ptxas not found: assembly of the shipped kernels for sm_80 NOT checked");
    compile_all("sm_80", true);
}

Test(kernels, ptxas_sm90a) {
    if (!have_ptxas()) cr_skip("ptxas not found: assembly of the shipped kernels for sm_90a NOT checked");
    compile_all("sm_90a", true);
}

/* Attention as tile_attention_fwd launches it on sm_80 for contiguous [batch, seq, heads, head_dim]
 * tensors (kernels/attention/attention.c: BLOCK_D the power of two >= head_dim, BM 64, BN 64
 * or 32 above 64, 8 warps above 128, every stride divisible by 16): no spills, causal or not,
 * with a window or not.  sm_80 only: on sm_90a (wgmma) tile_attention_fwd launches another
 * configuration (BM 128 on 8 warps and a producer warpgroup, attention.c), which
 * ptxas_launched_configs assembles (spill_attention); this one is never launched there. */
Test(kernels, ptxas_attention_launch_configs, .timeout = 600) {
    if (!have_ptxas()) cr_skip("ptxas not found: spills of the attention configurations NOT checked");
    static const char *specs[] = {"sqb=16", "sqs=16", "sqh=16", "skb=16", "sks=16", "skh=16", "svb=16", "svs=16",
                                  "svh=16", "sob=16", "sos=16", "soh=16", "slb=16", "slh=16", NULL};
    static const int dims[] = {64, 96, 128, 256};
    const char *archs[] = {"sm_80"};
    for (int a = 0; a < 1; a++)
        for (int d = 0; d < 4; d++)
            for (int mask = 0; mask < 3; mask++) { /* none, causal, causal + window */
                int hd = dims[d], bd = 16;
                while (bd < hd) bd *= 2;
                char defs[8][32];
                snprintf(defs[0], 32, "HEAD_DIM=%d", hd);
                snprintf(defs[1], 32, "BLOCK_D=%d", bd);
                snprintf(defs[2], 32, "BN=%d", bd <= 64 ? 64 : 32);
                snprintf(defs[3], 32, "num_warps=%d", bd > 128 ? 8 : 4);
                snprintf(defs[4], 32, "CAUSAL=%d", mask > 0);
                snprintf(defs[5], 32, "LOCAL=%d", mask > 1);
                const char *dp[] = {"BM=64", defs[0], defs[1], defs[2], defs[3], defs[4], defs[5], NULL};
                tile_compile_options o = {.arch = archs[a], .kernel = "attention_fwd_bf16", .defines = dp,
                                          .specialize = specs, .want_cubin = 1};
                tile_compiled c;
                tile_status st = tile_compile_file(TILE_SOURCE_DIR "/kernels/attention/attention.tile", &o, &c);
                cr_assert_eq(st, TILE_OK, "%s hd %d: %s", archs[a], hd, c.diagnostics);
                cr_expect_eq(c.kernels[0].spill_bytes, 0, "attention %s hd %d causal %d window %d spills %d bytes",
                             archs[a], hd, mask > 0, mask > 1, c.kernels[0].spill_bytes);
                tile_compiled_free(&c);
            }
}

/* The Ampere-class targets between them: the same code as sm_80 with their own .target and .version */
Test(kernels, ptxas_sm86) {
    if (!have_ptxas()) cr_skip("ptxas not found: assembly of the shipped kernels for sm_86 NOT checked");
    compile_all("sm_86", true);
}

Test(kernels, ptxas_sm89) {
    if (!have_ptxas()) cr_skip("ptxas not found: assembly of the shipped kernels for sm_89 NOT checked");
    compile_all("sm_89", true);
}

/* Every target of the table is listed, compiles, and heads its PTX with its own .target line;
 * an unknown one is refused with the list of targets. */
Test(kernels, target_table) {
    int n = 0;
    cr_assert_str_eq(tile_target_default(), "sm_80");
    for (; tile_target_name(n); n++) {
        const char *t = tile_target_name(n);
        tile_compile_options o = {.arch = t};
        tile_compiled c;
        cr_assert_eq(tile_compile_file(TILE_SOURCE_DIR "/kernels/add.tile", &o, &c), TILE_OK, "%s: %s", t, c.diagnostics);
        char want[32];
        snprintf(want, sizeof want, ".target %s\n", t);
        cr_expect(strstr(c.ptx, want), "%s: no '%s' in the PTX", t, want);
        tile_compiled_free(&c);
    }
    cr_expect_geq(n, 4, "sm_80, sm_86, sm_89 and sm_90a at least");
    cr_expect_null(tile_target_name(-1));
    tile_compile_options o = {.arch = "sm_70"};
    tile_compiled c;
    cr_assert_eq(tile_compile_file(TILE_SOURCE_DIR "/kernels/add.tile", &o, &c), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(c.diagnostics, "unknown arch 'sm_70' (expected sm_80, sm_86, sm_89 or sm_90a)"), "%s", c.diagnostics);
    tile_compiled_free(&c);
    static const char *const near[][2] = {{"sm_90", "sm_90a"}, {"compute_86", "sm_86"}, {"SM_89", "sm_89"}};
    for (int i = 0; i < 3; i++) {
        o.arch = near[i][0];
        char want[128];
        snprintf(want, sizeof want, "unknown arch '%s'; did you mean '%s'? (expected", near[i][0], near[i][1]);
        cr_assert_eq(tile_compile_file(TILE_SOURCE_DIR "/kernels/add.tile", &o, &c), TILE_ERROR_INVALID_VALUE);
        cr_expect(strstr(c.diagnostics, want), "%s", c.diagnostics);
        tile_compiled_free(&c);
    }
}

/* "ARG=any" takes one pointer out of the 16-byte alignment assumption: its loads are scalar, the
 * other pointer's stay 16-byte vectors (test_gemm's api_f8_fast_accum launches such a kernel with a
 * pointer 4 bytes past an alignment); other values, and =16 on a pointer, are refused. */
Test(kernels, specialize_any_pointer) {
    const char *specs[] = {"n=16", "x=any", NULL};
    tile_compile_options o = {.specialize = specs};
    tile_compiled c;
    cr_assert_eq(tile_compile_file(TILE_SOURCE_DIR "/kernels/add.tile", &o, &c), TILE_OK, "%s", c.diagnostics);
    cr_expect(strstr(c.ptx, "ld.global.v4.b32"), "y's loads are no longer vectors:\n%s", c.ptx);
    cr_expect(strstr(c.ptx, "ld.global.b32"), "x's loads are still vectors:\n%s", c.ptx);
    cr_expect(strstr(c.kernels[0].signature, "*f32, *f32:16"), "%s", c.kernels[0].signature);
    tile_compiled_free(&c);
    const char *bad[] = {"x=8", NULL};
    o.specialize = bad;
    cr_assert_eq(tile_compile_file(TILE_SOURCE_DIR "/kernels/add.tile", &o, &c), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(c.diagnostics, "expected ARG=1, ARG=16, ARG=any or ARG=None"), "%s", c.diagnostics);
    tile_compiled_free(&c);
    const char *ptr16[] = {"x=16", NULL};
    o.specialize = ptr16;
    cr_assert_eq(tile_compile_file(TILE_SOURCE_DIR "/kernels/add.tile", &o, &c), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(c.diagnostics, "a pointer takes =any"), "%s", c.diagnostics);
    tile_compiled_free(&c);
    /* one argument given two values: no launch could meet both (tile aot --variant "n=16 n=1" built a variant
     * never picked); the same value twice is the same specialization */
    const char *twice[] = {"n=16", "x=any", "n=1", NULL};
    o.specialize = twice;
    cr_assert_eq(tile_compile_file(TILE_SOURCE_DIR "/kernels/add.tile", &o, &c), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(c.diagnostics, "specialization of 'n' given twice, 'n=16' and 'n=1'"), "%s", c.diagnostics);
    tile_compiled_free(&c);
    const char *again[] = {"n=16", "n=16", NULL};
    o.specialize = again;
    cr_assert_eq(tile_compile_file(TILE_SOURCE_DIR "/kernels/add.tile", &o, &c), TILE_OK, "%s", c.diagnostics);
    tile_compiled_free(&c);
}

/* Triton's None argument: "b=None" compiles the kernel with `b` None (`b is not None` false, the add dropped),
 * keeps b in the signature ("*f32=None") and the launch must pass 0 for it; a None the body uses as a value
 * is an error at the use with a note at the parameter; only pointers can be None. */
Test(kernels, specialize_none_pointer) {
    const char *src = "kernel k(x: *f32, b: *f32, out: *f32, n: i32) {\n"
                      "    let o = program_id(0) * 128 + arange(0, 128);\n"
                      "    let v = load(x + o, o < n, 0.0);\n"
                      "    if b is not None {\n"
                      "        v = v + load(b + o, o < n, 0.0);\n"
                      "    }\n"
                      "    store(out + o, v * 2.0, o < n);\n"
                      "}\n"
                      "kernel uses(x: *f32, b: *f32, n: i32) {\n"
                      "    let o = arange(0, 128);\n"
                      "    store(b + o, load(x + o, o < n, 0.0), o < n);\n"
                      "}\n";
    const char *specs[] = {"b=None", NULL};
    tile_compile_options o = {.kernel = "k", .specialize = specs};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("none.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
    cr_expect_str_eq(c.kernels[0].signature, "*f32:16, *f32=None, *f32:16, i32");
    cr_expect(strstr(c.tir, "%b: ptr<f32> #null"), "%s", c.tir);
    cr_expect(!strstr(c.ptx, "k_param_1]"), "b is read:\n%s", c.ptx);
    tile_compiled_free(&c);

    tile_context_options co = {.device = "emu", .no_disk_cache = 1};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&co, &ctx), TILE_OK);
    enum { N = 300 };
    float hx[N], hb[N], out[N];
    for (int i = 0; i < N; i++) hx[i] = (float)(rand() % 1000) / 8.0f, hb[i] = (float)(rand() % 1000) / 16.0f;
    tile_devptr dx, db, dout;
    cr_assert_eq(tile_malloc(ctx, sizeof hx, &dx), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof hb, &db), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof out, &dout), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, dx, hx, sizeof hx), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, db, hb, sizeof hb), TILE_OK);
    for (int variant = 0; variant < 2; variant++) { /* b None, then b given (the generic kernel) */
        tile_compile_options lo = {.size = sizeof lo, .kernel = "k", .specialize = variant ? NULL : specs};
        tile_module *m;
        tile_kernel *k;
        cr_assert_eq(tile_module_load_source_ex(ctx, "none.tile", src, &lo, &m), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK);
        cr_assert_eq(tile_memset(ctx, dout, 0xff, sizeof out), TILE_OK); /* NaN */
        tile_devptr bp = variant ? db : 0;
        int32_t n = N;
        void *args[] = {&dx, &bp, &dout, &n};
        cr_assert_eq(tile_launch(k, (tile_dim3){3, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_memcpy_dtoh(ctx, out, dout, sizeof out), TILE_OK);
        for (int i = 0; i < N; i++)
            cr_assert_eq(out[i], 2 * (hx[i] + (variant ? hb[i] : 0)), "variant %d: out[%d] = %g", variant, i, out[i]);
        if (!variant) { /* the None variant launched with a pointer: refused, nothing run */
            bp = db;
            cr_expect_eq(tile_launch(k, (tile_dim3){3, 1, 1}, args, NULL), TILE_ERROR_INVALID_VALUE);
            cr_expect(strstr(tile_last_error(ctx), "argument 2 'b'") && strstr(tile_last_error(ctx), "None"), "%s", tile_last_error(ctx));
        }
        tile_module_unload(m);
    }
    tile_free(ctx, dx), tile_free(ctx, db), tile_free(ctx, dout);
    tile_context_destroy(ctx);

    /* the body uses the None pointer: an error at the use, a note at the parameter */
    o.kernel = "uses";
    cr_assert_eq(tile_compile_source("none.tile", src, &o, &c), TILE_ERROR_COMPILE);
    cr_expect(strstr(c.diagnostics, "none.tile:11:"), "%s", c.diagnostics);
    cr_expect(strstr(c.diagnostics, "none.tile:9:") && strstr(c.diagnostics, "'b' is None in this compile"), "%s", c.diagnostics);
    tile_compiled_free(&c);
    /* an integer cannot be None, and the name must be a run-time argument */
    const char *int_none[] = {"n=None", NULL}, *no_arg[] = {"q=None", NULL};
    o.kernel = "k", o.specialize = int_none;
    cr_assert_eq(tile_compile_source("none.tile", src, &o, &c), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(c.diagnostics, "'n' cannot be specialized as None"), "%s", c.diagnostics);
    tile_compiled_free(&c);
    o.specialize = no_arg;
    cr_assert_eq(tile_compile_source("none.tile", src, &o, &c), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(c.diagnostics, "'q': no run-time argument"), "%s", c.diagnostics);
    tile_compiled_free(&c);
}

Test(kernels, ptx_uses_vector_access) {
    /* n % 16 == 0 makes the mask uniform over 4 elements: 16-byte accesses */
    const char *specs[] = {"n=16", NULL};
    tile_compile_options o = {.specialize = specs};
    tile_compiled c;
    cr_assert_eq(tile_compile_file(TILE_SOURCE_DIR "/kernels/add.tile", &o, &c), TILE_OK, "%s", c.diagnostics);
    cr_expect(strstr(c.ptx, "ld.global.v4.b32"), "vector add does not load 16 bytes at a time:\n%s", c.ptx);
    cr_expect(strstr(c.ptx, "st.global.v4.b32"), "vector add does not store 16 bytes at a time:\n%s", c.ptx);
    tile_compiled_free(&c);
    /* without it, the mask may change inside a vector: scalar accesses */
    o.specialize = NULL;
    cr_assert_eq(tile_compile_file(TILE_SOURCE_DIR "/kernels/add.tile", &o, &c), TILE_OK, "%s", c.diagnostics);
    cr_expect(!strstr(c.ptx, ".v4."), "unproven vector access:\n%s", c.ptx);
    tile_compiled_free(&c);
}

Test(kernels, launch_metadata) {
    const char *src = "@num_warps(8)\nkernel k(x: *f32, n: i32, const B: i32 = 256) {\n"
                      "  let o = program_id(0) * B + arange(0, B);\n  store(x + o, o as f32, o < n);\n}\n";
    tile_compile_options o = {0};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("k.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
    cr_assert_eq(c.nkernels, 1);
    cr_expect_eq(c.kernels[0].num_warps, 8);
    cr_expect_str_eq(c.kernels[0].signature, "*f32:16, i32");
    cr_expect(strstr(c.ptx, ".reqntid 256"), "no .reqntid 256 in:\n%s", c.ptx);
    tile_compiled_free(&c);
    const char *defs[] = {"num_warps=2", NULL};
    o.defines = defs;
    const char *specs[] = {"n=16", NULL};
    o.specialize = specs;
    cr_assert_eq(tile_compile_source("k.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
    cr_expect_eq(c.kernels[0].num_warps, 2);
    cr_expect_str_eq(c.kernels[0].signature, "*f32:16, i32:16");
    cr_expect(strstr(c.ptx, ".reqntid 64"), "no .reqntid 64 in:\n%s", c.ptx);
    tile_compiled_free(&c);
}

/* An unknown -D name is the caller's error (TILE_ERROR_INVALID_VALUE, so the
 * CLI exits 2), listing the names the kernels being compiled accept. */
Test(kernels, unknown_define) {
    const char *path = TILE_SOURCE_DIR "/kernels/add.tile";
    const char *nope[] = {"BLOCK=256", "NOPE=3", NULL};
    tile_compile_options o = {.defines = nope, .tir_only = 1};
    tile_compiled c;
    cr_assert_eq(tile_compile_file(path, &o, &c), TILE_ERROR_INVALID_VALUE, "%s", c.diagnostics);
    cr_expect_str_eq(c.diagnostics, "error: -D NOPE: no kernel of add.tile has a const parameter NOPE (valid: BLOCK, num_warps, num_stages, warp_specialize, pingpong, overlap)\n");
    tile_compiled_free(&c);
    o.kernel = "add";
    cr_assert_eq(tile_compile_file(path, &o, &c), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(c.diagnostics, "-D NOPE: no kernel of add.tile has a const parameter NOPE (valid: BLOCK, num_warps, num_stages, warp_specialize, pingpong, overlap)"),
              "%s", c.diagnostics);
    tile_compiled_free(&c);
    const char *ok[] = {"BLOCK=256", "num_warps=8", "num_stages=2", NULL};
    o.defines = ok;
    cr_assert_eq(tile_compile_file(path, &o, &c), TILE_OK, "%s", c.diagnostics);
    tile_compiled_free(&c);
}

/* A ptxas that fails without naming a line of the PTX is said to be the tool's problem, not tile's (it was
 * "ptxas rejected the generated PTX (a bug in tile)" for ptxas=/bin/false). */
Test(kernels, failing_ptxas_tool_is_named) {
    tile_compile_options o = {.want_cubin = 1, .ptxas = "/bin/false"};
    tile_compiled c;
    cr_assert_eq(tile_compile_file(TILE_SOURCE_DIR "/kernels/add.tile", &o, &c), TILE_ERROR_PTXAS);
    cr_expect(strstr(c.diagnostics, "/bin/false exited with status 1 without naming a line of the PTX (is it a working ptxas?)") &&
                  !strstr(c.diagnostics, "a bug in tile"),
              "%s", c.diagnostics);
    tile_compiled_free(&c);
}

/* Memory running out in the front end or the Tile IR passes is TILE_ERROR_OUT_OF_MEMORY, not an
 * abort: gemm.tile is compiled (to Tile IR) under address-space limits from too small to enough. */
#include <sys/resource.h>
Test(kernels, out_of_memory_is_a_status, .timeout = 120) {
#if defined(__SANITIZE_ADDRESS__)
    cr_skip("under AddressSanitizer the address space cannot be limited: out-of-memory recovery NOT checked here");
#else
    struct rlimit old;
    cr_assert_eq(getrlimit(RLIMIT_AS, &old), 0);
    tile_compile_options o = {.tir_only = 1};
    tile_compiled c;
    long pages = 0; /* measured before any compile: the heap has not grown for one yet */
    FILE *f = fopen("/proc/self/statm", "r");
    cr_assert(f && fscanf(f, "%ld", &pages) == 1);
    fclose(f);
    rlim_t base = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE);
    int oom = 0, ok = 0;
    for (rlim_t extra = 1 << 20; extra <= (rlim_t)256 << 20; extra *= 2) {
        struct rlimit rl = {base + extra, old.rlim_max};
        cr_assert_eq(setrlimit(RLIMIT_AS, &rl), 0);
        tile_status st = tile_compile_file(TILE_SOURCE_DIR "/kernels/gemm/gemm.tile", &o, &c);
        cr_assert_eq(setrlimit(RLIMIT_AS, &old), 0);
        cr_expect(st == TILE_OK || st == TILE_ERROR_OUT_OF_MEMORY || st == TILE_ERROR_IO, "limit +%llu MiB: %s",
                  (unsigned long long)(extra >> 20), tile_status_string(st));
        oom += st == TILE_ERROR_OUT_OF_MEMORY;
        ok += st == TILE_OK;
        tile_compiled_free(&c);
    }
    cr_expect_gt(oom, 0, "no limit ran out of memory: the test checked nothing");
    cr_expect_gt(ok, 0, "no limit was enough");
#endif
}

/* ==== no spills at any configuration the C APIs launch ====
 * Issue 13: ptxas -v reports no spill bytes for a shipped kernel at a
 * configuration tile_gemm, tile_attention_decode_paged, tile_moe_forward,
 * the norm, rope and sampling calls can choose, on sm_80 and sm_90a (the
 * unspecialized compiles are the ptxas_sm* tests above; attention_fwd has
 * its own test).  The list below follows the launchers' rules
 * (kernels/<family>/<family>.c); docs/benchmarks.md "Registers and spills at
 * the launched configurations" has what was fixed, and no spill is allowed.
 * Every tile shape and kernel a launcher can choose is here; of the
 * specializations (each =1/=16 independent, 2^n combinations), each shape
 * is assembled at the launcher's two ends: everything divisible and aligned
 * (vector loads, the launched common case) and nothing divisible with
 * unaligned pointers (element-by-element loads, the most addresses live),
 * and GEMM also with transposed operands.  The epilogue is the heaviest
 * (beta, bias, GELU).  About 180 assemblies: two workers. */
#include <pthread.h>

typedef struct SpillCase {
    const char *file, *kernel;
    char defs[12][48];
    const char *specs[24];
    bool no_align;
    int only_arch; /* -1: both targets; else the index in spill_archs of the one it is launched for */
    int spill[2], regs[2]; /* per arch, filled by the workers */
    int arrives[2];        /* warpgroup.arrive instructions ptxas injected (its info C7519) */
    tile_status st[2];
    int same_as; /* -1, or an earlier case with the same file, kernel, defines, specializations and targets:
                  * assembled once, its results copied (the tf32 GEMM's first tuned configuration is its scalar one) */
} SpillCase;

typedef struct SpillList {
    SpillCase *c;
    int n, cap;
    int next; /* the workers' cursor over n * 2 jobs */
    pthread_mutex_t lock;
} SpillList;

static const char *const spill_archs[2] = {"sm_80", "sm_90a"};

/* A case: file, kernel, defines as one space-separated string, specializations (NULL-terminated), no_align. */
static SpillCase *spill_add(SpillList *l, const char *file, const char *kernel, const char *defs, const char *const *specs, bool no_align) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->c = realloc(l->c, sizeof *l->c * (size_t)l->cap);
        cr_assert(l->c);
    }
    SpillCase *c = &l->c[l->n++];
    memset(c, 0, sizeof *c);
    c->file = file, c->kernel = kernel, c->no_align = no_align, c->only_arch = -1, c->same_as = -1;
    int nd = 0;
    for (const char *p = defs; *p && nd < 11;) {
        while (*p == ' ') p++;
        size_t len = strcspn(p, " ");
        if (!len) break;
        snprintf(c->defs[nd++], 48, "%.*s", (int)len, p);
        p += len;
    }
    for (int i = 0; specs && specs[i] && i < 23; i++) c->specs[i] = specs[i];
    return c;
}

static void *spill_worker(void *arg) {
    SpillList *l = arg;
    for (;;) {
        pthread_mutex_lock(&l->lock);
        int j = l->next++;
        pthread_mutex_unlock(&l->lock);
        if (j >= 2 * l->n) return NULL;
        SpillCase *c = &l->c[j / 2];
        int a = j % 2;
        if ((c->only_arch >= 0 && c->only_arch != a) || c->same_as >= 0) {
            c->st[a] = TILE_OK, c->spill[a] = c->regs[a] = c->arrives[a] = 0;
            continue;
        }
        const char *defs[13];
        int nd = 0;
        for (; nd < 12 && c->defs[nd][0]; nd++) defs[nd] = c->defs[nd];
        /* on sm_90a tile_gemm, tile_attention_fwd and tile_moe_forward's expert kernels launch a producer
         * warpgroup (gemm.c, attention.c, moe.c) */
        if (a == 1 && nd < 12 &&
            (!strcmp(c->file, "gemm/gemm.tile") || !strcmp(c->file, "moe/experts.tile") || (c->kernel && !strncmp(c->kernel, "attention_fwd", 13))))
            defs[nd++] = "warp_specialize=1";
        /* and tile_gemm's are persistent there but with split-K or block scales */
        bool split = false;
        for (int q = 0; q < nd; q++) split |= !strcmp(defs[q], "SCALE=3") || (!strncmp(defs[q], "SPLIT_K=", 8) && atoi(defs[q] + 8) > 1);
        if (a == 1 && nd < 12 && !strcmp(c->file, "gemm/gemm.tile") && !split) defs[nd++] = "PERSISTENT=1";
        defs[nd] = NULL;
        char path[1024];
        snprintf(path, sizeof path, TILE_SOURCE_DIR "/kernels/%s", c->file);
        tile_compile_options o = {.arch = spill_archs[a], .kernel = c->kernel, .defines = defs, .specialize = c->specs,
                                  .no_align_ptrs = c->no_align, .want_cubin = 1};
        tile_compiled r;
        c->st[a] = tile_compile_file(path, &o, &r);
        c->spill[a] = c->regs[a] = -1;
        c->arrives[a] = 0;
        for (const char *p = r.ptxas_log; p && (p = strstr(p, "(C7519)")); p++) c->arrives[a]++;
        if (c->st[a] == TILE_OK && !r.ptxas_missing)
            for (int k = 0; k < r.nkernels; k++) {
                if (r.kernels[k].spill_bytes > c->spill[a]) c->spill[a] = r.kernels[k].spill_bytes;
                if (r.kernels[k].registers > c->regs[a]) c->regs[a] = r.kernels[k].registers;
            }
        tile_compiled_free(&r);
    }
}

/* tile_gemm (kernels/gemm/gemm.c): the vector configurations (the first @config, and every other @config a
 * tuning database can hold) where m, n, k, lda, ldb are multiples of 16 and the pointers aligned; the scalar
 * configuration (the const defaults) otherwise. */
static void spill_gemm(SpillList *l) {
    static const char *const row16[] = {"sak=1", "sbn=1", "sam=16", "sbk=16", "m=16", "n=16", "k=16", NULL};
    static const char *const trans16[3][8] = {{"sam=1", "sbk=1", "sak=16", "sbn=16", "m=16", "n=16", "k=16", NULL},
                                              {"sak=1", "sbk=1", "sam=16", "sbn=16", "m=16", "n=16", "k=16", NULL},
                                              {"sam=1", "sbn=1", "sak=16", "sbk=16", "m=16", "n=16", "k=16", NULL}};
    static const char *const row_odd[] = {"sak=1", "sbn=1", NULL}, *const trans_odd[] = {"sam=1", "sbk=1", NULL};
    static const struct {
        const char *kernel, *configs[5], *scalar;
    } k[] = {
#define F16_CONFIGS {"BM=128 BN=128 BK=32 num_warps=4 num_stages=3", "BM=64 BN=128 BK=32 num_warps=4 num_stages=3", \
                     "BM=128 BN=64 BK=32 num_warps=4 num_stages=3", "BM=64 BN=64 BK=32 num_warps=4 num_stages=4", \
                     "BM=128 BN=256 BK=32 num_warps=8 num_stages=2"}
        {"gemm_f16_f32", F16_CONFIGS, "BM=128 BN=128 BK=32 num_warps=8 num_stages=3"},
        {"gemm_f16_f16", F16_CONFIGS, "BM=128 BN=128 BK=32 num_warps=8 num_stages=3"},
        {"gemm_bf16_f32", F16_CONFIGS, "BM=128 BN=128 BK=32 num_warps=8 num_stages=3"},
        {"gemm_bf16_bf16", F16_CONFIGS, "BM=128 BN=128 BK=32 num_warps=8 num_stages=3"},
#undef F16_CONFIGS
        {"gemm_tf32_f32", {"BM=128 BN=128 BK=16 num_warps=8 num_stages=3", "BM=64 BN=128 BK=16 num_warps=4 num_stages=3",
                           "BM=128 BN=64 BK=32 num_warps=8 num_stages=2", "BM=64 BN=64 BK=32 num_warps=4 num_stages=2"},
         "BM=128 BN=128 BK=16 num_warps=8 num_stages=3"},
        {"gemm_i8_i32", {"BM=128 BN=128 BK=64 num_warps=4 num_stages=3", "BM=64 BN=128 BK=64 num_warps=4 num_stages=3",
                         "BM=128 BN=64 BK=64 num_warps=4 num_stages=3", "BM=64 BN=64 BK=64 num_warps=4 num_stages=4"},
         "BM=128 BN=128 BK=32 num_warps=8 num_stages=3"},
        {"gemm_e4m3_f32", {"BM=128 BN=128 BK=32 num_warps=4 num_stages=3", "BM=64 BN=64 BK=32 num_warps=4 num_stages=3"},
         "BM=128 BN=128 BK=32 num_warps=8 num_stages=3"},
        {"gemm_e5m2_f32", {"BM=128 BN=128 BK=32 num_warps=4 num_stages=3", "BM=64 BN=64 BK=32 num_warps=4 num_stages=3"},
         "BM=128 BN=128 BK=32 num_warps=8 num_stages=3"},
    };
    /* the heaviest epilogue tile_gemm launches with the configuration: beta and an activation only where the
     * accumulator leaves room (gemm.c epilogue_fits: under 128 registers a thread), a bias everywhere */
    char d[200];
    for (int i = 0; i < (int)(sizeof k / sizeof k[0]); i++) {
        bool same_loop = i == 1 || i == 2; /* f16->f16 and bf16->f32: the main loops of f16->f32 and bf16->bf16 */
        for (int c = 0; c < 5 && k[i].configs[c] && (c == 0 || !same_loop); c++) {
            const char *cf = k[i].configs[c];
            int bm = atoi(strstr(cf, "BM=") + 3), bn = atoi(strstr(cf, "BN=") + 3), w = atoi(strstr(cf, "num_warps=") + 10);
            bool f8 = i >= 6;
            snprintf(d, sizeof d, "%s%s%s", cf, bm * bn / (32 * w) < 128 ? " HAS_BETA=true HAS_BIAS=true ACT=2" : " HAS_BIAS=true",
                     f8 ? " SCALE=2" : "");
            if (bn > 128 && bm * bn / (32 * w) >= 128) { /* with wgmma a bias only below BN 256 (gemm.c epilogue_fits) */
                spill_add(l, "gemm/gemm.tile", k[i].kernel, d, row16, false)->only_arch = 0;
                snprintf(d, sizeof d, "%s%s", cf, f8 ? " SCALE=2" : "");
                spill_add(l, "gemm/gemm.tile", k[i].kernel, d, row16, false)->only_arch = 1;
                continue;
            }
            spill_add(l, "gemm/gemm.tile", k[i].kernel, d, row16, false);
            if (f8 && c == 0) { /* the untuned f8 default on sm_90a: 128-byte K tiles, two-level accumulation */
                snprintf(d, sizeof d, "BM=128 BN=128 BK=128 num_warps=8 num_stages=3 HAS_BIAS=true SCALE=2 FAST_ACCUM=false");
                spill_add(l, "gemm/gemm.tile", k[i].kernel, d, row16, false)->only_arch = 1;
                if (i == 6) /* A transposed: its stages loaded into the wgmma's A registers, B [N][K] pipelined or [K][N] staged */
                    for (int t = 0; t < 3; t += 2) spill_add(l, "gemm/gemm.tile", k[i].kernel, d, trans16[t], false)->only_arch = 1;
            }
            if (c == 0 && i == 4) /* tf32 with A transposed: 32-bit loads from its stages (sm_80); on sm_90a into the wgmma's
                                   * A registers beside a [N][K] B, through registers beside a [K][N] one */
                for (int t = 0; t < 3; t += 2) spill_add(l, "gemm/gemm.tile", k[i].kernel, d, trans16[t], false);
            if (c == 0 && (i == 0 || i == 5))
                for (int t = 0; t < 3; t++) spill_add(l, "gemm/gemm.tile", k[i].kernel, d, trans16[t], false);
            if (c == 0 && i < 4) { /* the untuned 16-bit default on sm_90a for m >= 128, n >= 256, no beta/bias/activation;
                                    * A transposed too (f16->f32 with B [K][N], bf16->bf16 with B [N][K]: the two main loops) */
                snprintf(d, sizeof d, "BM=128 BN=256 BK=64 num_warps=8 num_stages=3");
                spill_add(l, "gemm/gemm.tile", k[i].kernel, d, row16, false)->only_arch = 1;
                spill_add(l, "gemm/gemm.tile", k[i].kernel, d, trans16[1], false)->only_arch = 1;
                if (i == 0 || i == 3) spill_add(l, "gemm/gemm.tile", k[i].kernel, d, trans16[i == 0 ? 2 : 0], false)->only_arch = 1;
            }
        }
        snprintf(d, sizeof d, "%s HAS_BETA=true HAS_BIAS=true ACT=2%s", k[i].scalar, i >= 6 ? " SCALE=2" : "");
        spill_add(l, "gemm/gemm.tile", k[i].kernel, d, row16, false);
        spill_add(l, "gemm/gemm.tile", k[i].kernel, d, row_odd, true);
        spill_add(l, "gemm/gemm.tile", k[i].kernel, d, trans_odd, true);
        if (i == 6) { /* block scales (gemm.c block_*_config): vector on sm_80 and sm_90a, element by element (e5m2: the
                       * same loop, measured within 5 registers of e4m3) */
            static const char *const block_vec[2] = {"BM=128 BN=128 BK=32", "BM=128 BN=128 BK=128"};
            for (int a = 0; a < 2; a++) {
                snprintf(d, sizeof d, "%s num_warps=8 num_stages=3 HAS_BETA=true HAS_BIAS=true ACT=2 SCALE=3", block_vec[a]);
                spill_add(l, "gemm/gemm.tile", k[i].kernel, d, row16, false)->only_arch = a;
                spill_add(l, "gemm/gemm.tile", k[i].kernel, d, trans16[1], false)->only_arch = a;
            }
            snprintf(d, sizeof d, "BM=128 BN=64 BK=32 num_warps=8 num_stages=3 HAS_BETA=true HAS_BIAS=true ACT=2 SCALE=3");
            spill_add(l, "gemm/gemm.tile", k[i].kernel, d, row_odd, true);
            spill_add(l, "gemm/gemm.tile", k[i].kernel, d, trans_odd, true);
        }
    }
    /* C's row stride a multiple of 16 too (scm=16, as tile_gemm specializes ldc): on sm_90a the epilogue then goes
     * through a tensor map; and split-K (a caller's configuration, f32 output and nothing else in the epilogue), whose
     * partial tiles on sm_90a go into C by tensor reductions */
    static const char *const row16c[] = {"sak=1", "sbn=1", "sam=16", "sbk=16", "scm=16", "m=16", "n=16", "k=16", NULL};
    static const char *const splits[] = {"BM=128 BN=128 BK=32 num_warps=4 num_stages=3 SPLIT_K=2",
                                         "BM=64 BN=64 BK=32 num_warps=4 num_stages=4 SPLIT_K=4",
                                         "BM=128 BN=256 BK=32 num_warps=8 num_stages=2 SPLIT_K=2"};
    spill_add(l, "gemm/gemm.tile", "gemm_f16_f32", "BM=128 BN=128 BK=32 num_warps=4 num_stages=3 HAS_BIAS=true", row16c, false);
    spill_add(l, "gemm/gemm.tile", "gemm_bf16_bf16", "BM=128 BN=256 BK=64 num_warps=8 num_stages=3", row16c, false)->only_arch = 1;
    for (int sk = 0; sk < 3; sk++) {
        spill_add(l, "gemm/gemm.tile", "gemm_f16_f32", splits[sk], row16c, false);
        if (sk == 0) spill_add(l, "gemm/gemm.tile", "gemm_bf16_f32", splits[sk], trans16[1], false);
    }
}

/* tile_attention_decode_paged (kernels/attention/attention.c, paged_plan): BLOCK_D 64/128/256 (80 pads to
 * 128), BM 16/64, BN and warps by its rule, with splits; the merge at 64 splits. */
static void spill_paged(SpillList *l) {
    static const char *const all16[] = {"sqs=16", "sqt=16", "sqh=16", "sos=16", "sot=16", "soh=16", "skb=16",
                                        "sks=16", "skh=16", "svb=16", "svs=16", "svh=16", "sbt=16", NULL};
    static const int hds[] = {64, 80, 256};
    static const char *const kernels[] = {"paged_attention_f16", "paged_attention_tree_bf16_kv8"};
    char d[200];
    for (int kk = 0; kk < 2; kk++)
        for (int h = 0; h < 3; h++)
            for (int bm = 16; bm <= 64; bm *= 4) {
                int hd = hds[h], bd = 16;
                while (bd < hd) bd *= 2;
                int bn = bd < 128 ? 64 : bd > 128 && bm >= 64 ? 16 : 32;
                snprintf(d, sizeof d, "HEAD_DIM=%d BLOCK_D=%d BLOCK_SIZE=16 BM=%d BN=%d SPLIT=true%s", hd, bd, bm, bn,
                         bd > 128 ? " num_warps=8" : "");
                spill_add(l, "attention/paged_attention.tile", kernels[kk], d, all16, false);
                if (h == 1 && bm == 64) spill_add(l, "attention/paged_attention.tile", kernels[kk], d, NULL, true);
            }
    spill_add(l, "attention/paged_attention.tile", "paged_attention_merge_bf16", "HEAD_DIM=256 BLOCK_D=256 BLOCK_S=64", NULL, true);
}

/* tile_moe_forward (kernels/moe/moe.c): expert GEMMs at BM 16/32/64 (gate_up BN 64 with vector loads on
 * sm_80, 32 without on both) and on sm_90a at BM 64/128 with K steps of 64 (expert_tiles), the router at BE 64/256/1024 with K 1 and 8, the alignment's scan at every BE class. */
static void spill_moe(SpillList *l) {
    static const char *const gate16[] = {"hidden=16", "inter=16", "sx=16", NULL}, *const down16[] = {"hidden=16", "inter=16", "so=16", NULL};
    static const char *const gate[] = {"moe_gate_up_f16", "moe_gate_up_f16_e4m3_channel", "moe_gate_up_bf16_e4m3_block"};
    static const char *const down[] = {"moe_down_bf16", "moe_down_f16_e4m3_channel", "moe_down_bf16_e4m3_block"};
    char d[200];
    for (int i = 0; i < 3; i++) {
        /* the vector tiles with K steps of 32 on sm_80 only: on sm_90a expert_tiles gives vector loads the
         * wgmma tiles below (K steps of 128 or 64), and these are never launched there; the scalar ones are */
        for (int bm = 16; bm <= 64; bm *= 2) {
            snprintf(d, sizeof d, "BM=%d BN=64 BK=32", bm);
            spill_add(l, "moe/experts.tile", gate[i], d, gate16, false)->only_arch = 0;
            snprintf(d, sizeof d, "BM=%d BN=32 BK=%d", bm, i == 2 && bm == 16 ? 16 : 32); /* moe.c BK_SCALAR_BLOCK */
            spill_add(l, "moe/experts.tile", gate[i], d, NULL, true);
        }
        spill_add(l, "moe/experts.tile", down[i], "BM=64 BN=64 BK=32", down16, false)->only_arch = 0;
        spill_add(l, "moe/experts.tile", down[i], "BM=64 BN=64 BK=32", NULL, true);
        /* wgmma targets with vector loads (moe.c expert_tiles): BM 16 and 32 with K steps of 128, BM 64 and 128 with 64 */
        for (int bm = 16; bm <= 32; bm *= 2) {
            snprintf(d, sizeof d, "BM=%d BN=64 BK=128 num_stages=3", bm);
            spill_add(l, "moe/experts.tile", gate[i], d, gate16, false)->only_arch = 1;
            spill_add(l, "moe/experts.tile", down[i], d, down16, false)->only_arch = 1;
        }
        spill_add(l, "moe/experts.tile", gate[i], "BM=64 BN=64 BK=64 num_warps=4 num_stages=3", gate16, false)->only_arch = 1;
        spill_add(l, "moe/experts.tile", gate[i], "BM=128 BN=64 BK=64 num_warps=8 num_stages=3", gate16, false)->only_arch = 1;
        spill_add(l, "moe/experts.tile", down[i], "BM=64 BN=128 BK=64 num_warps=4 num_stages=3", down16, false)->only_arch = 1;
        spill_add(l, "moe/experts.tile", down[i], i ? "BM=128 BN=128 BK=64 num_warps=8 num_stages=3" : "BM=128 BN=256 BK=64 num_warps=8 num_stages=3",
                  down16, false)->only_arch = 1;
    }
    static const int bes[] = {64, 256, 512, 1024};
    for (int b = 0; b < 4; b++)
        for (int K = 1; K <= 8; K += 7) {
            int be = bes[b], bt = be >= 512 ? 1 : be <= 128 ? 16 : 2048 / be, kp = be >= 512 ? 128 : K == 1 ? 2 : K;
            snprintf(d, sizeof d, "K=%d KP=%d BE=%d BT=%d SCORING=1 RENORM=true GROUPED=true GROUP_TOP2=true HAS_BIAS=true", K, kp, be, bt);
            spill_add(l, "moe/router.tile", be == 1024 && K == 8 ? "moe_router_bf16" : "moe_router_f32", d, NULL, true);
        }
    spill_add(l, "moe/router.tile", "moe_router_f16", "K=1 KP=128 BE=1024 BT=1", NULL, true);
    /* grouped top-1 over 1024 experts spilled 80-128 B on sm_90a at KP 8 (warps over the one token) */
    spill_add(l, "moe/router.tile", "moe_router_bf16", "K=1 KP=128 BE=1024 BT=1 SCORING=1 RENORM=true GROUPED=true HAS_BIAS=true", NULL,
              true);
    static const int scan[][2] = {{1, 64}, {64, 64}, {128, 16}, {128, 64}, {256, 16}, {256, 64}, {512, 64}, {1024, 64},
                                  {8, 128}, {256, 128}, {1024, 128}}; /* BE, BM */
    for (int i = 0; i < (int)(sizeof scan / sizeof scan[0]); i++) {
        int be = scan[i][0], bm = scan[i][1];
        int bc = 1024 / be > 16 ? 16 : 1024 / be > 1 ? 1024 / be : 1, nb = 2048 / be > 64 ? 64 : 2048 / be > 1 ? 2048 / be : 1;
        int pj = 1024 / be > bm ? bm : 1024 / be > 1 ? 1024 / be : 1;
        snprintf(d, sizeof d, "BM=%d BE=%d BC=%d NB=%d PJ=%d", bm, be, bc, nb, pj);
        spill_add(l, "moe/align.tile", "moe_align_scan", d, NULL, true);
    }
    spill_add(l, "moe/align.tile", "moe_align_count", "BN=64 BE=64", NULL, true);
    spill_add(l, "moe/align.tile", "moe_align_scatter", "BN=64", NULL, true);
}

/* The element-wise families (norm, act, rope, sampling): every kernel of the file at once, at the
 * widest tile the launchers choose (BLOCK 1024, rope's BH * BLOCK_D = 1024) with every option on. */
static void spill_elementwise(SpillList *l) {
    spill_add(l, "norm/norm.tile", NULL, "BLOCK=1024 RESIDUAL=true LAYER=true BIAS=true GROUP=128", NULL, true);
    spill_add(l, "norm/norm.tile", NULL, "BLOCK=1024 RESIDUAL=true LAYER=false BIAS=false", NULL, true);
    spill_add(l, "norm/act.tile", NULL, "BLOCK=1024 ACT=2 GROUP=128", NULL, true);
    spill_add(l, "norm/act.tile", NULL, "BLOCK=1024 ACT=1", NULL, true);
    spill_add(l, "sampling/sampling.tile", NULL, "BLOCK=1024 PROBS=true", NULL, true);
    spill_add(l, "sampling/sampling.tile", NULL, "BLOCK=512 num_warps=4 PROBS=true", NULL, true);
    spill_add(l, "rope/rope.tile", NULL,
              "HEAD_DIM=256 ROT=256 BH=4 BLOCK_R=128 BLOCK_T=1 BLOCK_D=256 GPTJ=true Q_OUT=true K_OUT=true HEAD_SCALES=true", NULL, true);
    spill_add(l, "rope/rope.tile", NULL, "HEAD_DIM=80 ROT=32 BH=8 BLOCK_R=16 BLOCK_T=64 BLOCK_D=128 TAIL=true Q_OUT=true K_OUT=true",
              NULL, true);
}

/* Attention forward at the head dims the attention test above leaves out (16, 32, 80) with every option. */
static void spill_attention(SpillList *l) {
    static const int hds[] = {16, 32, 80};
    char d[200];
    for (int h = 0; h < 3; h++) {
        int hd = hds[h], bd = 16;
        while (bd < hd) bd *= 2;
        snprintf(d, sizeof d, "HEAD_DIM=%d BLOCK_D=%d BM=64 BN=%d CAUSAL=true LOCAL=true VARLEN=true WRITE_LSE=true", hd, bd, bd <= 64 ? 64 : 32);
        spill_add(l, "attention/attention.tile", "attention_fwd_f16", d, NULL, true)->only_arch = 0;
        /* sm_90a (wgmma): BM 128 on 8 warps, 3 stages up to BLOCK_D 64 else 2; BN 128 up to BLOCK_D 64, and up
         * to 128 only with every stride a multiple of 16 and aligned pointers (these are neither): else 64 */
        snprintf(d, sizeof d, "HEAD_DIM=%d BLOCK_D=%d BM=128 BN=%d num_warps=8 num_stages=%d CAUSAL=true LOCAL=true VARLEN=true WRITE_LSE=true",
                 hd, bd, bd <= 64 ? 128 : 64, bd <= 64 ? 3 : 2);
        spill_add(l, "attention/attention.tile", "attention_fwd_f16", d, NULL, true)->only_arch = 1;
    }
    /* sm_90a with every stride a multiple of 16 (contiguous tensors): tensor maps, a producer warpgroup and
     * setmaxnreg (168 registers at entry, 232 for the two computing warpgroups) */
    static const char *const strides16[] = {"sqb=16", "sqs=16", "sqh=16", "skb=16", "sks=16", "skh=16", "svb=16", "svs=16",
                                            "svh=16", "sob=16", "sos=16", "soh=16", "slb=16", "slh=16", NULL};
    for (int bd = 64; bd <= 256; bd *= 2) {
        snprintf(d, sizeof d, "HEAD_DIM=%d BLOCK_D=%d BM=128 BN=%d num_warps=8 num_stages=%d CAUSAL=true", bd, bd, bd <= 128 ? 128 : 64,
                 bd <= 64 ? 3 : 2);
        spill_add(l, "attention/attention.tile", "attention_fwd_f16", d, strides16, false)->only_arch = 1;
    }
}

Test(kernels, ptxas_launched_configs, .timeout = 900) {
    if (!have_ptxas()) cr_skip("ptxas not found: spills of the launched configurations NOT checked");
    SpillList l = {.lock = PTHREAD_MUTEX_INITIALIZER};
    spill_gemm(&l);
    spill_paged(&l);
    spill_moe(&l);
    spill_elementwise(&l);
    spill_attention(&l);
    int same = 0;
    for (int i = 0; i < l.n; i++)
        for (int k = 0; k < i && l.c[i].same_as < 0; k++) {
            const SpillCase *a = &l.c[i], *b = &l.c[k];
            bool eq = !strcmp(a->file, b->file) && !a->kernel == !b->kernel && (!a->kernel || !strcmp(a->kernel, b->kernel)) &&
                      a->no_align == b->no_align && a->only_arch == b->only_arch && b->same_as < 0;
            for (int d = 0; eq && d < 12; d++) eq = !strcmp(a->defs[d], b->defs[d]);
            for (int q = 0; eq && q < 24 && (a->specs[q] || b->specs[q]); q++) eq = a->specs[q] && b->specs[q] && !strcmp(a->specs[q], b->specs[q]);
            if (eq) l.c[i].same_as = k, same++;
        }
    pthread_t t[2];
    for (int i = 0; i < 2; i++) cr_assert_eq(pthread_create(&t[i], NULL, spill_worker, &l), 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < l.n; i++)
        if (l.c[i].same_as >= 0) {
            const SpillCase *o = &l.c[l.c[i].same_as];
            memcpy(l.c[i].st, o->st, sizeof o->st), memcpy(l.c[i].spill, o->spill, sizeof o->spill);
            memcpy(l.c[i].regs, o->regs, sizeof o->regs), memcpy(l.c[i].arrives, o->arrives, sizeof o->arrives);
        }
    int bad = 0;
    /* the table (docs/kernels.md "Registers"): registers and spill bytes per target */
    printf("%-34s %-30s %9s %9s  %s\n", "file", "kernel", "sm_80", "sm_90a", "defines, specializations");
    for (int i = 0; i < l.n; i++) {
        SpillCase *c = &l.c[i];
        printf("%-34s %-30s %4d/%-4d %4d/%-4d ", c->file, c->kernel ? c->kernel : "(all)", c->regs[0], c->spill[0], c->regs[1], c->spill[1]);
        for (int d = 0; d < 12 && c->defs[d][0]; d++) printf(" %s", c->defs[d]);
        for (int p = 0; c->specs[p]; p++) printf(" %s", c->specs[p]);
        printf("%s\n", c->no_align ? " no_align_ptrs" : "");
    }
    for (int i = 0; i < l.n; i++) {
        SpillCase *c = &l.c[i];
        for (int a = 0; a < 2; a++) {
            char s[1024] = "";
            size_t n = 0;
            for (int d = 0; d < 12 && c->defs[d][0] && n < sizeof s; d++) n += (size_t)snprintf(s + n, sizeof s - n, " %s", c->defs[d]);
            for (int p = 0; c->specs[p] && n < sizeof s; p++) n += (size_t)snprintf(s + n, sizeof s - n, " %s", c->specs[p]);
            cr_expect_eq(c->st[a], TILE_OK, "%s %s on %s: %s", c->file, c->kernel ? c->kernel : "*", spill_archs[a], tile_status_string(c->st[a]));
            cr_expect(c->spill[a] == 0, "%s %s on %s spills %d bytes (%d registers):%s%s", c->file, c->kernel ? c->kernel : "(all)",
                      spill_archs[a], c->spill[a], c->regs[a], s, c->no_align ? " no_align_ptrs" : "");
            bad += c->spill[a] != 0;
            /* a register the wgmma reads written after its wgmma.fence: ptxas makes it right by injecting a
             * warpgroup.arrive, which waits for the wgmmas in flight */
            cr_expect(c->arrives[a] == 0, "%s %s on %s: ptxas injected %d warpgroup.arrive (C7519):%s", c->file,
                      c->kernel ? c->kernel : "(all)", spill_archs[a], c->arrives[a], s);
        }
    }
    fprintf(stderr, "ptxas_launched_configs: %d configurations x 2 targets (%d listed twice, assembled once), %d spill\n", l.n, same, bad);
    free(l.c);
}

/* ==== a configuration that spills is not launched ====
 * The tunable 128 x 256 x 32 @config of the 16-bit GEMMs: on sm_90a (wgmma) a bias's epilogue at BN 256
 * spilled 72 B, so tile_gemm sets that tuned configuration aside for the vector one when there is a bias,
 * and takes it without.  Both runs on the emulated Hopper, against a float64 reference on random inputs
 * with C poisoned first; the spill test above assembles the wide tile without a bias on sm_90a. */
#include <math.h>

#include "support/hostfloat.h"

static void wide_gemm_case(tile_context *ctx, bool bias, tile_gemm_info *gi) {
    enum { M = 48, N = 80, K = 32 }; /* bucket m=64,n=128,k=32; every size a multiple of 16: the vector path */
    static uint16_t ha[M * K], hb[K * N];
    static float hc[M * N];
    static double va[M * K], vb[K * N], vbias[N];
    srand(bias ? 11 : 12);
    for (int i = 0; i < M * K; i++) ha[i] = f32_to_f16((float)rand() / RAND_MAX - 0.5f), va[i] = f16_to_d(ha[i]);
    for (int i = 0; i < K * N; i++) hb[i] = f32_to_f16((float)rand() / RAND_MAX - 0.5f), vb[i] = f16_to_d(hb[i]);
    float fbias[N]; /* the output's type: f32 */
    for (int i = 0; i < N; i++) fbias[i] = (float)rand() / RAND_MAX - 0.5f, vbias[i] = bias ? fbias[i] : 0;
    tile_devptr a, b, c, db;
    cr_assert_eq(tile_malloc(ctx, sizeof ha, &a), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof hb, &b), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof hc, &c), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof fbias, &db), TILE_OK);
    tile_memcpy_htod(ctx, a, ha, sizeof ha);
    tile_memcpy_htod(ctx, b, hb, sizeof hb);
    tile_memcpy_htod(ctx, db, fbias, sizeof fbias);
    tile_memset(ctx, c, 0xff, sizeof hc); /* NaN */
    tile_gemm_args g = {.m = M, .n = N, .k = K, .a = a, .lda = K, .b = b, .ldb = N, .c = c, .ldc = N, .in_dtype = TILE_F16,
                        .out_dtype = TILE_F32, .alpha = 1, .bias = bias ? db : 0};
    cr_assert_eq(tile_gemm(ctx, &g), TILE_OK, "%s", tile_last_error(ctx));
    tile_gemm_last_info(ctx, gi);
    cr_assert_eq(tile_memcpy_dtoh(ctx, hc, c, sizeof hc), TILE_OK);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double want = vbias[j];
            for (int k = 0; k < K; k++) want += va[i * K + k] * vb[k * N + j];
            cr_assert(fabs(hc[i * N + j] - want) <= 1e-4 + 1e-4 * fabs(want), "bias %d: C[%d][%d] = %g, want %g (%s)", bias, i, j,
                      hc[i * N + j], want, gi->config);
        }
    tile_free(ctx, a), tile_free(ctx, b), tile_free(ctx, c), tile_free(ctx, db);
}

Test(kernels, gemm_wide_tuned_tile_set_aside_with_bias, .timeout = 300) {
    char dir[] = "/tmp/tile-test-wide-XXXXXX";
    cr_assert(mkdtemp(dir));
    tile_context_options o = {.device = "emu:sm_90a", .cache_dir = dir, .emu_host_threads = 2};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK);
    tile_device_properties props;
    cr_assert_eq(tile_context_get_properties(ctx, &props), TILE_OK);
    char id[33], dev[160];
    cr_assert_eq(tile_kernel_id_file(tile_gemm_source_path(), "gemm_f16_f32", id), TILE_OK);
    snprintf(dev, sizeof dev, "%s/%s", props.name, props.arch);
    cr_assert_eq(tile_tune_record(dir, id, dev, "m=64,n=128,k=32", "BM=128 BN=256 BK=32 num_warps=8 num_stages=2", 1e-4), TILE_OK);
    tile_gemm_info gi;
    wide_gemm_case(ctx, false, &gi);
    cr_expect(gi.tuned && strstr(gi.config, "BN=256"), "without a bias the tuned wide tile: %s", gi.config);
    wide_gemm_case(ctx, true, &gi);
    cr_expect(!gi.tuned && strstr(gi.config, "BM=128 BN=128 BK=32 num_warps=4"), "with a bias the vector configuration: %s", gi.config);
    tile_context_destroy(ctx);
    tile_cache_clear(dir, 1);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

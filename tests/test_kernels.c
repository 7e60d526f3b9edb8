/* test_kernels.c - every shipped kernel compiles for sm_80 and sm_90a, ptxas
 * accepts the PTX, and ptxas -v reports no spills.  Without ptxas the
 * assembly checks are reported as skipped, never as passed. */
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
        /* gemm is checked as tile_gemm launches it for row-major operands whose sizes and
         * leading dimensions are multiples of 16 (the specialization it keys on) */
        static const char *gemm_specs[] = {"sak=1", "sbn=1", "m=16", "n=16", "k=16", "sam=16", "sbk=16", "scm=16", NULL};
        /* the expert GEMMs likewise, as tile_moe_forward launches them for sizes that are multiples of 16 */
        static const char *moe_specs[] = {"hidden=16", "inter=16", "sx=16", "so=16", NULL};
        tile_compile_options o = {.arch = arch, .want_cubin = cubin};
        if (!strcmp(names[k], "gemm/gemm.tile")) o.specialize = gemm_specs;
        if (!strcmp(names[k], "moe/experts.tile")) o.specialize = moe_specs;
        tile_compiled c;
        tile_status st = tile_compile_file(path, &o, &c);
        cr_assert_eq(st, TILE_OK, "%s for %s: %s\n%s", names[k], arch, tile_status_string(st), c.diagnostics);
        cr_assert(c.ptx && strstr(c.ptx, ".entry"), "%s: no entry in the PTX", names[k]);
        cr_assert(strstr(c.ptx, arch), "%s: PTX does not target %s", names[k], arch);
        if (cubin) {
            cr_assert(c.cubin && c.cubin_size > 0, "%s: no cubin", names[k]);
            for (int j = 0; j < c.nkernels; j++)
                cr_expect_eq(c.kernels[j].spill_bytes, 0, "%s/%s spills %d bytes (ptxas -v):\n%s", names[k], c.kernels[j].name,
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

/* Attention as tile_attention_fwd launches it for contiguous [batch, seq, heads, head_dim]
 * tensors (kernels/attention/attention.c: BLOCK_D the power of two >= head_dim, BM 64, BN 64
 * or 32 above 64, 8 warps above 128, every stride divisible by 16): no spills for either
 * target, causal or not, with a window or not. */
Test(kernels, attention_launch_configs_no_spills, .timeout = 600) {
    if (!have_ptxas()) cr_skip("ptxas not found: spills of the attention configurations NOT checked");
    static const char *specs[] = {"sqb=16", "sqs=16", "sqh=16", "skb=16", "sks=16", "skh=16", "svb=16", "svs=16",
                                  "svh=16", "sob=16", "sos=16", "soh=16", "slb=16", "slh=16", NULL};
    static const int dims[] = {64, 96, 128, 256};
    const char *archs[] = {"sm_80", "sm_90a"};
    for (int a = 0; a < 2; a++)
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
    cr_expect(strstr(c.ptx, ".maxntid 256"), "no .maxntid 256 in:\n%s", c.ptx);
    tile_compiled_free(&c);
    const char *defs[] = {"num_warps=2", NULL};
    o.defines = defs;
    const char *specs[] = {"n=16", NULL};
    o.specialize = specs;
    cr_assert_eq(tile_compile_source("k.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
    cr_expect_eq(c.kernels[0].num_warps, 2);
    cr_expect_str_eq(c.kernels[0].signature, "*f32:16, i32:16");
    cr_expect(strstr(c.ptx, ".maxntid 64"), "no .maxntid 64 in:\n%s", c.ptx);
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
    cr_expect_str_eq(c.diagnostics, "error: -D NOPE: no kernel of add.tile has a const parameter NOPE (valid: BLOCK, num_warps, num_stages)\n");
    tile_compiled_free(&c);
    o.kernel = "add";
    cr_assert_eq(tile_compile_file(path, &o, &c), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(c.diagnostics, "-D NOPE: no kernel of add.tile has a const parameter NOPE (valid: BLOCK, num_warps, num_stages)"),
              "%s", c.diagnostics);
    tile_compiled_free(&c);
    const char *ok[] = {"BLOCK=256", "num_warps=8", "num_stages=2", NULL};
    o.defines = ok;
    cr_assert_eq(tile_compile_file(path, &o, &c), TILE_OK, "%s", c.diagnostics);
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

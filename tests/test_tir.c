/* test_tir.c - Tile IR text: parser round trips, parser and verifier
 * diagnostics, and the per-pass golden tests under tests/lower/.
 *
 * Golden files (docs/testing.md): tests/lower/<pass>/<name>.tir holds the
 * input IR, then a line that is exactly `// CHECK:`, then the IR the pass
 * must print; or the expected output sits in a sibling <name>.expected.
 * Lines `// ERROR: <message>` in the input instead expect those
 * diagnostics on that line (parse, verify or pass).  Set
 * TILE_GOLDEN_UPDATE=1 to rewrite the expected outputs from the actual ones. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tile/tile.h>

#include "lower/passes.h"

#ifndef TILE_SOURCE_DIR
#define TILE_SOURCE_DIR "."
#endif

/* ---- helpers ---- */

static Module *parse_text(Arena *a, const char *text, Diag *d) {
    SrcFile *src = ARENA_NEW(a, SrcFile);
    src->name = "t.tir";
    src->text = arena_strdup(a, text);
    src->len = strlen(text);
    return tir_parse(a, src, d);
}

static char *print_module(const Module *m) {
    Str s = {0};
    tir_print_module(&s, m);
    return str_take(&s);
}

/* First diagnostic as "file:line:col: error: msg" (no source line). */
static char *first_diag(const Diag *d) {
    if (!d->n) return strdup("(no diagnostic)");
    Str s = {0};
    diag_render_one(&d->msgs[0], &s);
    char *nl = strchr(s.buf, '\n');
    if (nl) *nl = 0;
    return str_take(&s);
}

static char *all_diags(const Diag *d) {
    Str s = {0};
    diag_render(d, &s);
    return str_take(&s);
}

/* Parse, verify, print: the printed text must equal `want` and print stably again. */
static void check_round_trip(const char *in, const char *want) {
    Arena *a = arena_new();
    Diag d;
    diag_init(&d);
    Module *m = parse_text(a, in, &d);
    char *errs = all_diags(&d);
    cr_assert(m, "parse failed:\n%s", errs);
    cr_expect(tir_verify(m, &d), "verify failed:\n%s", (free(errs), errs = all_diags(&d)));
    char *out = print_module(m);
    cr_expect_str_eq(out, want);
    Module *m2 = parse_text(a, out, &d);
    cr_assert(m2, "reparse of printed text failed");
    char *out2 = print_module(m2);
    cr_expect_str_eq(out2, out);
    free(out);
    free(out2);
    free(errs);
    diag_free(&d);
    arena_free(a);
}

/* ---- round trips ---- */

static const char *const canon_add =
    "#L0 = blocked<spt=[4], tpw=[32], wpc=[4], order=[0]>\n"
    "\n"
    "kernel @add(%x: ptr<f32> #div16, %y: ptr<f32> #div16, %out: ptr<f32>, %n: i32 #one) num_warps=4 num_stages=3 {\n"
    "  %0 = program_id {axis=0} : i32\n"
    "  %1 = const {value=1024} : i32\n"
    "  %2 = mul %0, %1 : i32\n"
    "  %3 = arange {start=0, end=1024} : tensor<1024xi32, #L0>\n"
    "  %4 = splat %2 : tensor<1024xi32, #L0>\n"
    "  %5 = add %4, %3 : tensor<1024xi32, #L0>\n"
    "  %6 = splat %n : tensor<1024xi32, #L0>\n"
    "  %7 = cmp %5, %6 {pred=lt} : tensor<1024xi1, #L0>\n"
    "  %8 = splat %x : tensor<1024xptr<f32>, #L0>\n"
    "  %9 = ptr_add %8, %5 : tensor<1024xptr<f32>, #L0>\n"
    "  %10 = load %9, %7 {vec=4} : tensor<1024xf32, #L0>\n"
    "  %11 = splat %y : tensor<1024xptr<f32>, #L0>\n"
    "  %12 = ptr_add %11, %5 : tensor<1024xptr<f32>, #L0>\n"
    "  %13 = const {value=0} : tensor<1024xf32, #L0>\n"
    "  %14 = load %12, %7, %13 {cache=1, vec=4} : tensor<1024xf32, #L0>\n"
    "  %15 = add %10, %14 : tensor<1024xf32, #L0>\n"
    "  %16 = splat %out : tensor<1024xptr<f32>, #L0>\n"
    "  %17 = ptr_add %16, %5 : tensor<1024xptr<f32>, #L0>\n"
    "  store %17, %15, %7 {vec=4}\n"
    "  return\n"
    "}\n";

Test(tir_roundtrip, elementwise_kernel_with_layouts) { check_round_trip(canon_add, canon_add); }

static const char *const canon_loop =
    "kernel @sum(%p: ptr<f32>, %n: i32) num_warps=8 num_stages=1 {\n"
    "  %0 = const {value=0} : i32\n"
    "  %1 = const {value=1} : i32\n"
    "  %2 = const {value=0} : f32\n"
    "  %3:2 = for %0, %n, %1, %2, %0 : f32, i32 {\n"
    "  ^(%5: i32, %6: f32, %7: i32):\n"
    "    %8 = ptr_add %p, %5 : ptr<f32>\n"
    "    %9 = load %8 : f32\n"
    "    %10 = add %6, %9 : f32\n"
    "    %11 = add %7, %1 : i32\n"
    "    for %0, %11, %1 {\n"
    "    ^(%12: i32):\n"
    "      yield\n"
    "    }\n"
    "    yield %10, %11\n"
    "  }\n"
    "  %13 = cmp %4, %0 {pred=gt} : i1\n"
    "  %14 = if %13 : f32 {\n"
    "    %15 = neg %3 : f32\n"
    "    %16 = const {value=1.5} : f32\n"
    "    %17 = fma %15, %16, %3 : f32\n"
    "    yield %17\n"
    "  } else {\n"
    "    yield %3\n"
    "  }\n"
    "  if %13 {\n"
    "    barrier\n"
    "    yield\n"
    "  } else {\n"
    "    yield\n"
    "  }\n"
    "  store %p, %14\n"
    "  return\n"
    "}\n";

Test(tir_roundtrip, loops_and_ifs) { check_round_trip(canon_loop, canon_loop); }

static const char *const canon_matmul =
    "#L0 = blocked<spt=[1,4], tpw=[4,8], wpc=[4,1], order=[1,0]>\n"
    "#L1 = slice<dim=1, blocked<spt=[1,4], tpw=[4,8], wpc=[4,1], order=[1,0]>>\n"
    "#L2 = slice<dim=0, blocked<spt=[1,4], tpw=[4,8], wpc=[4,1], order=[1,0]>>\n"
    "#L3 = mma<wpc=[2,2]>\n"
    "#L4 = dot_a<kw=16, vpr=2, mma<wpc=[2,2]>>\n"
    "#L5 = dot_b<kw=16, vpr=2, mma<wpc=[2,2]>>\n"
    "#L6 = blocked<spt=[4], tpw=[32], wpc=[4], order=[0]>\n"
    "\n"
    "kernel @mm(%a: ptr<f16> #div16, %c: ptr<f32> #div16, %k: i32 #one) num_warps=4 num_stages=2 smem=8192 {\n"
    "  %0 = arange {start=0, end=16} : tensor<16xi32, #L1>\n"
    "  %1 = expand_dims %0 {axis=1} : tensor<16x1xi32, #L0>\n"
    "  %2 = arange {start=0, end=16} : tensor<16xi32, #L2>\n"
    "  %3 = expand_dims %2 {axis=0} : tensor<1x16xi32, #L0>\n"
    "  %4 = broadcast %1 : tensor<16x16xi32, #L0>\n"
    "  %5 = broadcast %3 : tensor<16x16xi32, #L0>\n"
    "  %6 = const {value=16} : tensor<16x16xi32, #L0>\n"
    "  %7 = mul %4, %6 : tensor<16x16xi32, #L0>\n"
    "  %8 = add %7, %5 : tensor<16x16xi32, #L0>\n"
    "  %9 = splat %a : tensor<16x16xptr<f16>, #L0>\n"
    "  %10 = ptr_add %9, %8 : tensor<16x16xptr<f16>, #L0>\n"
    "  %11 = load %10 {vec=4} : tensor<16x16xf16, #L0>\n"
    "  %12 = convert_layout %11 {smem=0:1024} : tensor<16x16xf16, #L4>\n"
    "  %13 = trans %11 {perm=[1,0]} : tensor<16x16xf16, #L0>\n"
    "  %14 = convert_layout %13 {smem=1024:1024} : tensor<16x16xf16, #L5>\n"
    "  %15 = const {value=0} : tensor<16x16xf32, #L0>\n"
    "  %16 = dot %12, %14, %15 {tf32=1} : tensor<16x16xf32, #L0>\n"
    "  %17 = reduce %16 {kind=max, axis=1, smem=2048:256} : tensor<16xf32, #L1>\n"
    "  %18 = reduce %17 {kind=argmax, axis=0} : i32\n"
    "  %19 = scan %0 {kind=sum, axis=0} : tensor<16xi32, #L1>\n"
    "  %20 = reduce %17 {kind=sum, axis=0} : f32\n"
    "  %21 = atomic_rmw %c, %20 {kind=add} : f32\n"
    "  %22 = atomic_cas %c, %20, %21 : f32\n"
    "  %23 = num_programs {axis=1} : i32\n"
    "  %24 = bitcast %22 : i32\n"
    "  %25 = cast %24 : f32\n"
    "  %26 = cmp %18, %23 {pred=ne} : i1\n"
    "  %27 = select %26, %25, %22 : f32\n"
    "  %28 = reshape %16 : tensor<256xf32, #L6>\n"
    "  %29 = exp %28 : tensor<256xf32, #L6>\n"
    "  %30 = const {value=-inf} : f32\n"
    "  %31 = const {value=0.10000000000000001} : f32\n"
    "  %32 = const {value=-9223372036854775808} : i64\n"
    "  %33 = const {value=1} : i1\n"
    "  %34 = atomic_rmw %c, %27, %33 {kind=xchg} : f32\n"
    "  %35 = splat %c : tensor<16x16xptr<f32>, #L0>\n"
    "  %36 = ptr_add %35, %8 : tensor<16x16xptr<f32>, #L0>\n"
    "  barrier\n"
    "  store %36, %16 {vec=4}\n"
    "  return\n"
    "}\n";

Test(tir_roundtrip, matmul_with_every_attribute) { check_round_trip(canon_matmul, canon_matmul); }

/* Tensors, layouts, a permutation and a slice at the rank limit (6), as the compiler prints them. */
static const char *const canon_rank6 =
    "#L0 = blocked<spt=[1,1,1,1,1], tpw=[1,2,2,4,2], wpc=[4,1,1,1,1], order=[4,3,2,1,0]>\n"
    "#L1 = blocked<spt=[1,1,1,1,1,1], tpw=[1,1,2,4,2,2], wpc=[4,1,1,1,1,1], order=[5,4,3,2,1,0]>\n"
    "#L2 = blocked<spt=[1,1,1,1,1,1], tpw=[2,2,4,2,1,1], wpc=[1,1,1,1,1,4], order=[0,1,2,3,4,5]>\n"
    "#L3 = blocked<spt=[2], tpw=[32], wpc=[4], order=[0]>\n"
    "#L4 = blocked<spt=[1], tpw=[32], wpc=[4], order=[0]>\n"
    "#L5 = slice<dim=4, blocked<spt=[1,1,1,1,1,1], tpw=[1,1,2,4,2,2], wpc=[4,1,1,1,1,1], order=[5,4,3,2,1,0]>>\n"
    "\n"
    "kernel @k(%x: ptr<f32> #div16, %o: ptr<f32> #div16) num_warps=4 num_stages=3 smem=1024 {\n"
    "  %0 = arange {start=0, end=256} : tensor<256xi32, #L3>\n"
    "  %1 = splat %x : tensor<256xptr<f32>, #L3>\n"
    "  %2 = ptr_add %1, %0 : tensor<256xptr<f32>, #L3>\n"
    "  %3 = load %2 {vec=2} : tensor<256xf32, #L3>\n"
    "  %4 = convert_layout %3 {smem=0:1024} : tensor<256xf32, #L4>\n"
    "  barrier\n"
    "  %5 = reshape %4 {smem=0:1024} : tensor<2x2x4x2x2x4xf32, #L2>\n"
    "  %6 = trans %5 {perm=[5,4,3,2,1,0]} : tensor<4x2x2x4x2x2xf32, #L1>\n"
    "  %7 = arange {start=0, end=128} : tensor<128xi32, #L4>\n"
    "  barrier\n"
    "  %8 = reshape %7 {smem=0:512} : tensor<4x2x2x4x2xi32, #L0>\n"
    "  %9 = splat %o : tensor<4x2x2x4x2xptr<f32>, #L0>\n"
    "  %10 = ptr_add %9, %8 : tensor<4x2x2x4x2xptr<f32>, #L0>\n"
    "  %11 = reduce %6 {kind=sum, axis=4} : tensor<4x2x2x4x2xf32, #L5>\n"
    "  %12 = reduce %6 {kind=max, axis=4} : tensor<4x2x2x4x2xf32, #L5>\n"
    "  barrier\n"
    "  %13 = convert_layout %11 {smem=0:512} : tensor<4x2x2x4x2xf32, #L0>\n"
    "  barrier\n"
    "  %14 = convert_layout %12 {smem=0:512} : tensor<4x2x2x4x2xf32, #L0>\n"
    "  %15 = add %13, %14 : tensor<4x2x2x4x2xf32, #L0>\n"
    "  store %10, %15\n"
    "  return\n"
    "}\n";

Test(tir_roundtrip, rank6_types_layouts_and_perm) { check_round_trip(canon_rank6, canon_rank6); }

Test(tir_roundtrip, two_kernels_no_layouts) {
    const char *t = "kernel @a() num_warps=1 num_stages=0 {\n"
                    "  return\n"
                    "}\n"
                    "\n"
                    "kernel @b(%v: tensor<2x4xf16>) num_warps=4 num_stages=3 {\n"
                    "  %0 = abs %v : tensor<2x4xf16>\n"
                    "  return\n"
                    "}\n";
    check_round_trip(t, t);
}

/* Atomics, and atomic loads and stores (cache=128), print their ordering and scope when not the default (acq_rel, gpu). */
Test(tir_roundtrip, atomic_sem_scope) {
    const char *t = "kernel @k(%p: ptr<i32>, %q: ptr<f32>) num_warps=4 num_stages=3 {\n"
                    "  %0 = const {value=3} : i32\n"
                    "  %1 = atomic_rmw %p, %0 {kind=and, sem=relaxed, scope=cta} : i32\n"
                    "  %2 = atomic_rmw %p, %0 {kind=xor, sem=release} : i32\n"
                    "  %3 = atomic_rmw %p, %0 {kind=or, sem=acquire, scope=sys} : i32\n"
                    "  %4 = const {value=1} : f32\n"
                    "  %5 = atomic_cas %q, %4, %4 {scope=sys} : f32\n"
                    "  %6 = atomic_rmw %q, %4 {kind=add} : f32\n"
                    "  %7 = load %p {sem=acquire, scope=cta, cache=128} : i32\n"
                    "  store %q, %4 {sem=relaxed, cache=128}\n"
                    "  barrier\n"
                    "  return\n"
                    "}\n";
    check_round_trip(t, t);
}

/* Triton's hints print their values per dim; assume takes an i1. */
Test(tir_roundtrip, hints_and_assume) {
    const char *t = "kernel @k(%p: ptr<f32>, %n: i32) num_warps=4 num_stages=3 {\n"
                    "  %0 = multiple_of %n {values=[16]} : i32\n"
                    "  %1 = arange {start=0, end=64} : tensor<64xi32>\n"
                    "  %2 = max_contiguous %1 {values=[64]} : tensor<64xi32>\n"
                    "  %3 = splat %0 : tensor<64xi32>\n"
                    "  %4 = max_constancy %3 {values=[64]} : tensor<64xi32>\n"
                    "  %5 = multiple_of %p {values=[16]} : ptr<f32>\n"
                    "  %6 = const {value=0} : i32\n"
                    "  %7 = cmp %n, %6 {pred=gt} : i1\n"
                    "  assume %7\n"
                    "  %8 = const {value=1} : i32\n"
                    "  for %6, %n, %8 {stages=4} {\n"
                    "  ^(%9: i32):\n"
                    "    yield\n"
                    "  }\n"
                    "  return\n"
                    "}\n";
    check_round_trip(t, t);
}

/* inline_asm prints its pack and which outputs are its result's (out) when not the defaults. */
Test(tir_roundtrip, inline_asm_pack_out) {
    const char *t = "kernel @k(%a: tensor<8xf16>, %b: tensor<8xi8>) num_warps=4 num_stages=3 {\n"
                    "  %0 = inline_asm %a {pack=2, msg=\"=r,r\\nmov.b32 $0, $1;\"} : tensor<8xf16>\n"
                    "  %1 = inline_asm %b {pack=4, out=4, msg=\"=r,=r,=r,=r,=r,=r,=r,=r,r\\nmov.b32 $4, $8;\"} : tensor<8xi32>\n"
                    "  %2 = inline_asm %a, %a {msg=\"=h,h,0\\nadd.f16 $0, $1, $0;\"} : tensor<8xf16>\n"
                    "  return\n"
                    "}\n";
    check_round_trip(t, t);
}

/* argmax/argmin with two results (the index, then the value at it: max(x, axis, return_indices=true)): printed
 * "%N:2 = reduce", its results %N and %N+1 in the slice layout, the scratch holding both */
Test(tir_roundtrip, reduce_index_and_value) {
    const char *t = "#L0 = blocked<spt=[1,4], tpw=[4,8], wpc=[2,2], order=[1,0]>\n"
                    "#L1 = slice<dim=1, blocked<spt=[1,4], tpw=[4,8], wpc=[2,2], order=[1,0]>>\n"
                    "\n"
                    "kernel @k(%a: tensor<8x64xf16, #L0>) num_warps=4 num_stages=3 {\n"
                    "  %0:2 = reduce %a {kind=argmax, axis=1, smem=0:128} : tensor<8xi32, #L1>, tensor<8xf16, #L1>\n"
                    "  %2 = cast %1 : tensor<8xi32, #L1>\n"
                    "  %3 = add %0, %2 : tensor<8xi32, #L1>\n"
                    "  %4:2 = reduce %3 {kind=argmin, axis=0} : i32, i32\n"
                    "  return\n"
                    "}\n";
    check_round_trip(t, t);
}

/* A float constant -0.0 prints as `value=-0` and parses back as -0.0, not as the integer 0 (which printed
 * `value=0`: sampling.tile's dumps did not round-trip); an integer `-0` stays 0. */
Test(tir_roundtrip, negative_zero_float_constant) {
    const char *t = "kernel @k() num_warps=4 num_stages=3 {\n"
                    "  %0 = const {value=-0} : f32\n"
                    "  %1 = const {value=-0} : tensor<8xf64>\n"
                    "  %2 = const {value=0} : f32\n"
                    "  %3 = const {value=0} : i32\n"
                    "  return\n"
                    "}\n";
    check_round_trip(t, t);
    Arena *a = arena_new();
    Diag d;
    diag_init(&d);
    Module *m = parse_text(a, "kernel @k() num_warps=4 num_stages=3 {\n  %0 = const {value=-0} : f32\n  return\n}\n", &d);
    cr_assert(m);
    const Inst *i = m->funcs[0]->body->first;
    cr_expect(i->a.is_float && i->a.fval == 0 && signbit(i->a.fval), "-0 parsed as %g", i->a.fval);
    diag_free(&d);
    arena_free(a);
}

/* Round-trip one `--dump-after all` dump: each stage's text (after its "// -----// IR after X //----- //"
 * line) parses back and prints the same.  Returns the number of stages checked. */
static int check_dump_round_trips(const char *what, const char *dump) {
    static const char marker[] = "// -----// IR after ";
    int stages = 0;
    const char *p = strstr(dump, marker);
    while (p) {
        const char *body = strchr(p, '\n');
        cr_assert(body, "%s: a marker line without its end", what);
        body++;
        const char *next = strstr(body, marker);
        size_t n = next ? (size_t)(next - body) : strlen(body);
        char stage[64];
        snprintf(stage, sizeof stage, "%.*s", (int)(strcspn(p + sizeof marker - 1, " ")), p + sizeof marker - 1);
        char *text = strndup(body, n);
        Arena *a = arena_new();
        Diag d;
        diag_init(&d);
        Module *m = parse_text(a, text, &d);
        char *errs = all_diags(&d);
        cr_assert(m, "%s after %s: the dump does not parse:\n%s", what, stage, errs);
        char *out = print_module(m);
        if (strcmp(out, text)) { /* name the first line that differs (a whole kernel is thousands of lines) */
            size_t i = 0, line = 1;
            for (; out[i] && out[i] == text[i]; i++) line += out[i] == '\n';
            size_t b = i;
            while (b && text[b - 1] != '\n') b--;
            cr_expect_fail("%s after %s: line %zu prints back as\n%.*s\ninstead of\n%.*s", what, stage, line,
                           (int)strcspn(out + b, "\n"), out + b, (int)strcspn(text + b, "\n"), text + b);
        }
        free(out);
        free(errs);
        free(text);
        diag_free(&d);
        arena_free(a);
        stages++;
        p = next;
    }
    return stages;
}

static int is_dir_entry(const struct dirent *e) { return e->d_name[0] != '.'; }

/* Every stage of `--dump-after all` of one kernel file, for sm_80 and sm_90a, round-trips. */
static void check_kernel_file_dumps(const char *path, const char *name) {
    for (int t = 0; t < 2; t++) {
        const char *arch = t ? "sm_90a" : "sm_80";
        tile_compile_options o = {.size = sizeof o, .arch = arch, .dump_after = "all", .tir_only = 1};
        tile_compiled r = {0};
        tile_status s = tile_compile_file(path, &o, &r);
        cr_assert_eq(s, TILE_OK, "%s (%s): %s", path, arch, r.diagnostics ? r.diagnostics : "");
        char what[1100];
        snprintf(what, sizeof what, "%s (%s)", name, arch);
        cr_expect_geq(check_dump_round_trips(what, r.dump ? r.dump : ""), 17, "%s: fewer stages than the pipeline has", what);
        tile_compiled_free(&r);
    }
}

static bool is_tile_file(const char *name) {
    size_t len = strlen(name);
    return len > 5 && !strcmp(name + len - 5, ".tile");
}

/* docs/architecture.md: the text form of `--emit tir` and `--dump-after PASS` round-trips through
 * tir_parse.  Every shipped kernel file (kernels/ and its folders), every stage of `--dump-after all`. */
Test(tir_roundtrip, shipped_kernel_dumps) {
    const char *root = TILE_SOURCE_DIR "/kernels";
    struct dirent **top;
    int nt = scandir(root, &top, is_dir_entry, alphasort);
    cr_assert(nt > 0);
    int files = 0;
    for (int i = 0; i < nt; i++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", root, top[i]->d_name);
        if (is_tile_file(top[i]->d_name)) {
            check_kernel_file_dumps(dir, top[i]->d_name), files++;
        } else {
            struct dirent **ents;
            int ne = scandir(dir, &ents, is_dir_entry, alphasort); /* -1: no folder (shipped.c) */
            for (int j = 0; j < ne; j++) {
                if (is_tile_file(ents[j]->d_name)) {
                    char path[2048];
                    snprintf(path, sizeof path, "%s/%s", dir, ents[j]->d_name);
                    check_kernel_file_dumps(path, ents[j]->d_name), files++;
                }
                free(ents[j]);
            }
            if (ne >= 0) free(ents);
        }
        free(top[i]);
    }
    free(top);
    cr_expect_geq(files, 20, "only %d kernel files found under %s", files, root);
}

/* print keeps hex=1 (device_print's hex=true) through print and parse; without it the attribute is absent. */
Test(tir_roundtrip, print_hex) {
    const char *t = "kernel @k(%a: tensor<8xi32>) num_warps=4 num_stages=3 {\n"
                    "  print %a {hex=1, msg=\"v\"}\n"
                    "  print %a {msg=\"w\"}\n"
                    "  return\n"
                    "}\n";
    check_round_trip(t, t);
}

/* Hand-written input: names, comments, blank lines, inline layouts, `#k` result refs, any attr order. */
Test(tir_roundtrip, hand_written_input_prints_canonically) {
    const char *in = "// a comment line\n"
                     "#B = blocked<spt=[2], tpw=[32], wpc=[1], order=[0]>   // 1-d\n"
                     "\n"
                     "kernel @k(%n: i32) num_stages=2 {   // num_warps defaults to 4\n"
                     "  %lb = const {value=0} : i32\n"
                     "  %r:2 = for %lb, %n, %n, %lb, %n : i32, i32 {\n"
                     "  ^(%iv: i32, %acc: i32, %other: i32):\n"
                     "\n"
                     "    %s = add %acc, %iv : i32\n"
                     "    yield %s, %other\n"
                     "  }\n"
                     "  %t = add %r#0, %r#1 : i32\n"
                     "  %v = arange {end=64, start=0} : tensor<64xi32, blocked<spt=[2], tpw=[32], wpc=[1], order=[0]>>\n"
                     "  %w = arange {start=0, end=64} : tensor<64xi32, #B>\n"
                     "  %x = reduce %w {axis=0, kind=min} : i32\n"
                     "  return\n"
                     "}\n";
    const char *want = "#L0 = blocked<spt=[2], tpw=[32], wpc=[1], order=[0]>\n"
                       "\n"
                       "kernel @k(%n: i32) num_warps=4 num_stages=2 {\n"
                       "  %0 = const {value=0} : i32\n"
                       "  %1:2 = for %0, %n, %n, %0, %n : i32, i32 {\n"
                       "  ^(%3: i32, %4: i32, %5: i32):\n"
                       "    %6 = add %4, %3 : i32\n"
                       "    yield %6, %5\n"
                       "  }\n"
                       "  %7 = add %1, %2 : i32\n"
                       "  %8 = arange {start=0, end=64} : tensor<64xi32, #L0>\n"
                       "  %9 = arange {start=0, end=64} : tensor<64xi32, #L0>\n"
                       "  %10 = reduce %9 {kind=min, axis=0} : i32\n"
                       "  return\n"
                       "}\n";
    check_round_trip(in, want);
}

/* Real pass output (layouts, slices, smem offsets, barriers) verifies and round-trips. */
Test(tir_roundtrip, pipeline_output) {
    const char *in =
    "kernel @rowsum(%x: ptr<f32> #div16, %out: ptr<f32> #div16, %n: i32) num_warps=4 num_stages=3 {\n"
    "  %rows = arange {start=0, end=16} : tensor<16xi32>\n"
    "  %r2 = expand_dims %rows {axis=1} : tensor<16x1xi32>\n"
    "  %cols = arange {start=0, end=32} : tensor<32xi32>\n"
    "  %c2 = expand_dims %cols {axis=0} : tensor<1x32xi32>\n"
    "  %rb = broadcast %r2 : tensor<16x32xi32>\n"
    "  %cb = broadcast %c2 : tensor<16x32xi32>\n"
    "  %stride = const {value=32} : tensor<16x32xi32>\n"
    "  %off0 = mul %rb, %stride : tensor<16x32xi32>\n"
    "  %off = add %off0, %cb : tensor<16x32xi32>\n"
    "  %base = splat %x : tensor<16x32xptr<f32>>\n"
    "  %zero = const {value=0} : i32\n"
    "  %one = const {value=1} : i32\n"
    "  %acc0 = const {value=0} : tensor<16xf32>\n"
    "  %loop:2 = for %zero, %n, %one, %acc0, %off : tensor<16xf32>, tensor<16x32xi32> {\n"
    "  ^(%i: i32, %acc: tensor<16xf32>, %o: tensor<16x32xi32>):\n"
    "    %p = ptr_add %base, %o : tensor<16x32xptr<f32>>\n"
    "    %v = load %p : tensor<16x32xf32>\n"
    "    %t = trans %v {perm=[1,0]} : tensor<32x16xf32>\n"
    "    %s = reduce %t {kind=max, axis=0} : tensor<16xf32>\n"
    "    %acc1 = add %acc, %s : tensor<16xf32>\n"
    "    %step = const {value=512} : tensor<16x32xi32>\n"
    "    %o1 = add %o, %step : tensor<16x32xi32>\n"
    "    yield %acc1, %o1\n"
    "  }\n"
    "  %a = const {value=0} : tensor<16x16xf32>\n"
    "  %l2 = expand_dims %loop#0 {axis=1} : tensor<16x1xf32>\n"
    "  %lb = broadcast %l2 : tensor<16x16xf32>\n"
    "  %d = dot %lb, %lb, %a : tensor<16x16xf32>\n"
    "  %red = reduce %d {kind=sum, axis=1} : tensor<16xf32>\n"
    "  %ob = splat %out : tensor<16xptr<f32>>\n"
    "  %op = ptr_add %ob, %rows : tensor<16xptr<f32>>\n"
    "  store %op, %red\n"
    "  return\n"
    "}\n";
    Arena *a = arena_new();
    Diag d;
    diag_init(&d);
    Module *m = parse_text(a, in, &d);
    cr_assert(m);
    PipelineOptions o = {.verify = true};
    bool ok = tir_run_pipeline(m, &o, &d);
    char *errs = all_diags(&d);
    cr_assert(ok, "pipeline failed:\n%s", errs);
    free(errs);
    char *out = print_module(m);
    cr_expect(strstr(out, "#L1 = "), "layouts were assigned:\n%s", out);
    check_round_trip(out, out);
    free(out);
    diag_free(&d);
    arena_free(a);
}

/* Values built through the API print and parse back to the same text. */
Test(tir_roundtrip, built_module) {
    Arena *a = arena_new();
    Module *m = tir_module_new(a);
    Func *f = tir_func_new(m, "built");
    const Type *i32 = tir_scalar(m, DT_I32), *f32 = tir_scalar(m, DT_F32);
    FuncArg *p = tir_func_add_arg(f, "p", tir_ptr(m, f32));
    p->spec = SPEC_DIV16;
    Builder b = {.f = f, .block = f->body};
    ValueId c1 = tir_const_float(&b, f32, 1.0);
    ValueId c2 = tir_const_float(&b, f32, 2.5e-300);
    ValueId c3 = tir_const_int(&b, i32, 7);
    ValueId s = tir_emit_v(&b, OP_ADD, (ValueId[]){c1, c2}, 2, f32);
    (void)c3;
    tir_emit(&b, OP_STORE, (ValueId[]){p->value, s}, 2, NULL);
    tir_emit(&b, OP_RETURN, NULL, 0, NULL);
    Diag d;
    diag_init(&d);
    cr_assert(tir_verify(m, &d));
    char *out = print_module(m);
    cr_expect_str_eq(out, "kernel @built(%p: ptr<f32> #div16) num_warps=4 num_stages=3 {\n"
                          "  %0 = const {value=1} : f32\n"
                          "  %1 = const {value=2.5e-300} : f32\n"
                          "  %2 = const {value=7} : i32\n"
                          "  %3 = add %0, %1 : f32\n"
                          "  store %p, %3\n"
                          "  return\n"
                          "}\n");
    Module *m2 = parse_text(a, out, &d);
    cr_assert(m2);
    /* the float constant parsed back as a float */
    Inst *c = m2->funcs[0]->body->first;
    cr_expect(c->a.is_float && c->a.fval == 1.0);
    cr_expect(c->next->next->a.is_float == 0 && c->next->next->a.ival == 7);
    free(out);
    diag_free(&d);
    arena_free(a);
}

/* ---- parser diagnostics ---- */

typedef struct ErrCase {
    const char *in, *want;
} ErrCase;

static const ErrCase parse_errors[] = {
    {"kernel @k(%n: i32) {\n  %0 = multiple_of %n {values=[0]} : i32\n  return\n}\n",
     "t.tir:2:32: error: hint value 0 out of range [1, 1073741824]"},
    {"kernel @k(%p: ptr<i32>) {\n  %0 = atomic_rmw %p, %p {kind=add, sem=seq} : i32\n}\n",
     "t.tir:2:41: error: unknown memory ordering 'seq'"},
    {"kernel @k() num_warps=4 {\n  %0 = frob : i32\n  return\n}\n", "t.tir:2:8: error: unknown op 'frob'"},
    {"kernel @k() {\n  %0 = add %1, %2 : i32\n}\n", "t.tir:2:12: error: use of undefined value %1"},
    {"kernel @k() {\n  %0 = const {value=1} : i33\n}\n", "t.tir:2:26: error: unknown type 'i33'"},
    {"kernel @k() {\n  %0 = const {value=1} : tensor<3xi32\n}\n", "t.tir:2:38: error: expected '>', found 'end of line'"},
    {"kernel @k() {\n  %0 = const {value=1} : tensor<4xi32, #L9>\n}\n", "t.tir:2:40: error: unknown layout #L9"},
    {"kernel @k() {\n  %0 = const {value=1} : tensor<4x4x4x4x4x4x4xi32>\n}\n", "t.tir:2:45: error: tensor rank exceeds 6"},
    {"kernel @k() {\n  %0 = const {value=1} : tensor<0xi32>\n}\n",
     "t.tir:2:33: error: tensor dimension 0 out of range [1, 1073741824]"},
    {"kernel @k() {\n  %0 = const {value=1} : ptr<tensor<4xf32>>\n}\n",
     "t.tir:2:30: error: pointer element type must be a scalar"},
    {"kernel @k() {\n  %0 = const {value=1x} : i32\n}\n", "t.tir:2:21: error: invalid constant '1x'"},
    {"kernel @k() {\n  %0 = const {axis=1} : i32\n}\n", "t.tir:2:15: error: attribute 'axis' is not valid for 'const'"},
    {"kernel @k() {\n  %0 = const {bogus=1} : i32\n}\n", "t.tir:2:15: error: expected attribute name, found 'bogus=1}'"},
    {"kernel @k(%a: f32) {\n  %0 = reduce %a {kind=prod, axis=0} : f32\n}\n",
     "t.tir:2:24: error: unknown reduction kind 'prod'"},
    {"kernel @k(%a: f32) {\n  %0 = cmp %a, %a {pred=lo} : i1\n}\n",
     "t.tir:2:25: error: unknown comparison predicate 'lo'"},
    {"kernel @k(%a: f32) {\n  %0 = add %a : f32\n}\n", "t.tir:2:8: error: 'add' takes 2 operands, found 1"},
    {"kernel @k(%a: f32) {\n  %0:2 = neg %a : f32, f32\n}\n", "t.tir:2:10: error: 'neg' has 1 result, found 2"},
    {"kernel @k(%a: f32) {\n  store %a, %a : f32\n}\n", "t.tir:2:16: error: 'store' has no results to type"},
    {"kernel @k(%a: f32) {\n  %0 = neg %a\n}\n", "t.tir:2:14: error: expected ':' and result types, found 'end of line'"},
    {"kernel @k(%a: f32) {\n  %a = neg %a : f32\n}\n", "t.tir:2:3: error: redefinition of %a"},
    {"kernel @k(%a: f32) {\n  return\n", "t.tir:3:1: error: expected '}', found 'end of file'"},
    {"kernel @k(%a: f32) {\n  return %a, \n}\n", "t.tir:2:14: error: expected value, found 'end of line'"},
    {"kernel @k() {\n  return\n}\nkernel @k() {\n  return\n}\n", "t.tir:4:1: error: redefinition of kernel @k"},
    {"kernel @k(%c: i1) {\n  if %c {\n    %x = const {value=1} : i32\n    yield\n  } else {\n    yield %x\n  }\n}\n",
     "t.tir:6:11: error: use of undefined value %x"},
    {"kernel @k(%n: i32) {\n  %r = for %n, %n, %n, %n : i32 {\n  ^(%i: i32, %a: i32):\n    yield %r\n  }\n}\n",
     "t.tir:4:11: error: use of undefined value %r"},
    {"kernel @k(%n: i32) {\n  %0 = neg %n : i32\n  ^(%i: i32):\n}\n",
     "t.tir:3:3: error: block arguments must open their region"},
    {"#L0 = blocked<spt=[1,2], tpw=[32], wpc=[1], order=[0]>\n",
     "t.tir:1:26: error: blocked layout: 'tpw' has 1 entries, 'spt' has 2"},
    {"#L0 = slice<dim=1, blocked<spt=[1], tpw=[32], wpc=[4], order=[0]>>\n",
     "t.tir:1:7: error: slice dim 1 out of range for a rank-1 parent"},
    {"#L0 = mma<wpc=[2,2]>\n#L0 = dot_a<kw=16, vpr=2, #L0>\n",
     "t.tir:2:1: error: redefinition of layout #L0"},
    {"#L0 = blocked<spt=[256], tpw=[32], wpc=[4], order=[0]>\n", "t.tir:1:20: error: spt 256 out of range [0, 255]"},
    {"kernel @k() num_warps=0 {\n}\n", "t.tir:1:23: error: num_warps 0 out of range [1, 1024]"},
    {"kernel @k() {\n  %0 = const {value=99999999999999999999} : i64\n}\n",
     "t.tir:2:21: error: invalid constant '99999999999999999999'"},
    {"kernel @k() {\n  %0 = const {value=1} : i32 junk\n}\n", "t.tir:2:30: error: expected end of line, found 'junk'"},
    {"func @k() {\n}\n", "t.tir:1:1: error: expected 'kernel', found 'func'"},
    {"kernel @k(%p: ptr<f32>) {\n  %0 = trans %p {perm=[0,1,2,3,4,5,0]} : f32\n}\n",
     "t.tir:2:36: error: perm has more than 6 entries"},
    {"kernel @k() {\n  %0 = const {value=1} : i32\n  return\n} trailing\n",
     "t.tir:4:3: error: expected end of line, found 'trailing'"},
};

Test(tir_parse, errors_are_located) {
    for (size_t k = 0; k < ARRAY_LEN(parse_errors); k++) {
        Arena *a = arena_new();
        Diag d;
        diag_init(&d);
        Module *m = parse_text(a, parse_errors[k].in, &d);
        char *got = first_diag(&d);
        cr_expect(!m, "case %zu parsed", k);
        cr_expect_eq(d.nerrors, 1, "case %zu: %d errors", k, d.nerrors);
        cr_expect_str_eq(got, parse_errors[k].want, "case %zu: got %s", k, got);
        free(got);
        diag_free(&d);
        arena_free(a);
    }
}

Test(tir_parse, renders_source_line_and_caret) {
    Arena *a = arena_new();
    Diag d;
    diag_init(&d);
    cr_assert(!parse_text(a, "kernel @k() {\n  %0 = frob : i32\n}\n", &d));
    char *r = all_diags(&d);
    cr_expect_str_eq(r, "t.tir:2:8: error: unknown op 'frob'\n    %0 = frob : i32\n         ^\n");
    free(r);
    diag_free(&d);
    arena_free(a);
}

/* ---- verifier diagnostics on parsed IR ---- */

static const ErrCase verify_errors[] = {
    {"kernel @k(%p: ptr<i32>) {\n  %0 = load %p {sem=release, cache=128} : i32\n  return\n}\n",
     "t.tir:2:3: error: load: an atomic load is relaxed or acquire"},
    {"kernel @k(%p: ptr<i32>) {\n  %0 = load %p {sem=acquire} : i32\n  return\n}\n",
     "t.tir:2:3: error: load: sem and scope are for atomic accesses (cache=128)"},
    {"kernel @k(%p: ptr<i32>, %v: i32) {\n  store %p, %v {sem=relaxed, cache=129}\n  return\n}\n",
     "t.tir:2:3: error: store: an atomic access takes no cache operator, eviction policy or volatile"},
    {"kernel @k(%a: f32) {\n  %0 = multiple_of %a {values=[16]} : f32\n  return\n}\n",
     "t.tir:2:3: error: multiple_of: hints are about integers and pointers, found f32"},
    {"kernel @k(%a: i32) {\n  assume %a\n  return\n}\n", "t.tir:2:3: error: assume: condition must be i1, found i32"},
    {"kernel @k(%a: i32, %b: f32) {\n  %0 = add %a, %b : i32\n  return\n}\n",
     "t.tir:2:3: error: add: operand 1 has type f32, expected i32"},
    {"kernel @k(%a: tensor<4xi32>) {\n  %0 = neg %a : tensor<8xi32>\n  return\n}\n",
     "t.tir:2:3: error: neg: operand 0 has type tensor<4xi32>, expected tensor<8xi32>"},
    {"kernel @k(%a: i32) {\n  %0 = cmp %a, %a {pred=eq} : i32\n  return\n}\n",
     "t.tir:2:3: error: cmp: result must be i1 shaped like the operands, found i32"},
    {"kernel @k(%a: i32, %b: f32) {\n  %0 = select %a, %b, %b : f32\n  return\n}\n",
     "t.tir:2:3: error: select: condition must be i1 shaped like the result, found i32"},
    {"kernel @k(%a: i32) {\n  %0 = bitcast %a : f16\n  return\n}\n",
     "t.tir:2:3: error: bitcast: bit width changes from 32 to 16"},
    {"kernel @k(%a: tensor<4xi32>) {\n  %0 = cast %a : tensor<2xf32>\n  return\n}\n",
     "t.tir:2:3: error: cast: shape changes from tensor<4xi32> to tensor<2xf32>"},
    {"kernel @k(%p: ptr<f32>, %o: f32) {\n  %0 = ptr_add %p, %o : ptr<f32>\n  return\n}\n",
     "t.tir:2:3: error: ptr_add: offset must be an integer shaped like the pointer, found f32"},
    {"kernel @k() {\n  %0 = const {value=0} : ptr<f32>\n  return\n}\n",
     "t.tir:2:3: error: const: constant of pointer type"},
    {"kernel @k() {\n  %0 = const {value=0} : tensor<6xi32>\n  return\n}\n",
     "t.tir:2:3: error: const: result 0: tensor dimension 6 is not a power of two"},
    {"kernel @k() {\n  %0 = arange {start=0, end=8} : tensor<16xi32>\n  return\n}\n",
     "t.tir:2:3: error: arange: range [0, 8) does not have 16 elements"},
    {"kernel @k(%a: tensor<4xf32>) {\n  %0 = splat %a : tensor<4xf32>\n  return\n}\n",
     "t.tir:2:3: error: splat: operand must be a scalar, found tensor<4xf32>"},
    {"kernel @k(%a: tensor<4x2xf32>) {\n  %0 = broadcast %a : tensor<4x8xf32>\n  return\n}\n",
     "t.tir:2:3: error: broadcast: dim 1: cannot broadcast 2 to 8"},
    {"kernel @k(%a: tensor<4xf32>) {\n  %0 = broadcast %a : tensor<1x4xf32>\n  return\n}\n",
     "t.tir:2:3: error: broadcast: rank changes from 1 to 2"},
    {"kernel @k(%a: tensor<4xf32>) {\n  %0 = expand_dims %a {axis=0} : tensor<4x1xf32>\n  return\n}\n",
     "t.tir:2:3: error: expand_dims: result dim 0 must be 1, found 4"},
    {"kernel @k(%a: tensor<4x4xf32>) {\n  %0 = reshape %a : tensor<8xf32>\n  return\n}\n",
     "t.tir:2:3: error: reshape: element count changes from 16 to 8"},
    {"kernel @k(%a: tensor<4x8xf32>) {\n  %0 = trans %a {perm=[1,1]} : tensor<8x4xf32>\n  return\n}\n",
     "t.tir:2:3: error: trans: perm is not a permutation of 0..1"},
    {"kernel @k(%a: tensor<4x8xf32>) {\n  %0 = trans %a {perm=[1,0]} : tensor<4x8xf32>\n  return\n}\n",
     "t.tir:2:3: error: trans: result dim 0 is 4, expected operand dim 1 (8)"},
    {"kernel @k(%a: tensor<4x8xf32>) {\n  %0 = reduce %a {kind=sum, axis=1} : tensor<8xf32>\n  return\n}\n",
     "t.tir:2:3: error: reduce: result 0 tensor<8xf32> is not tensor<4x8xf32> without dim 1"},
    {"kernel @k(%a: tensor<8xf32>) {\n  %0 = reduce %a {kind=argmax, axis=0} : f32\n  return\n}\n",
     "t.tir:2:3: error: reduce: result 0 element type must be i32, found f32"},
    /* argmax/argmin's second result: the value at the index, of the operand's type and the index's shape */
    {"kernel @k(%a: tensor<8xf32>) {\n  %0:2 = reduce %a {kind=argmax, axis=0} : i32, i32\n  return\n}\n",
     "t.tir:2:3: error: reduce: result 1 element type must be f32, found i32"},
    {"kernel @k(%a: tensor<4x8xf16>) {\n  %0:2 = reduce %a {kind=argmin, axis=1} : tensor<4xi32>, tensor<8xf16>\n  return\n}\n",
     "t.tir:2:3: error: reduce: result 1 tensor<8xf16> is not tensor<4x8xf16> without dim 1"},
    {"kernel @k(%a: tensor<8xf32>) {\n  %0:2 = reduce %a {kind=max, axis=0} : f32, f32\n  return\n}\n",
     "t.tir:2:3: error: reduce: has 2 results: expected 1"},
    {"kernel @k(%a: tensor<8xf32>) {\n  %0:3 = reduce %a {kind=argmax, axis=0} : i32, f32, f32\n  return\n}\n",
     "t.tir:2:3: error: reduce: has 3 results: expected 1 (the index) or 2 (the index and the value)"},
    {"kernel @k(%a: tensor<8xf32>) {\n  %0 = scan %a {kind=xor, axis=0} : tensor<8xf32>\n  return\n}\n",
     "t.tir:2:3: error: scan: invalid kind 8"},
    {"kernel @k(%a: tensor<8xf32>) {\n  %0 = reduce %a {kind=sum, axis=1} : f32\n  return\n}\n",
     "t.tir:2:3: error: reduce: axis 1 out of range for tensor<8xf32>"},
    {"kernel @k(%a: tensor<8xf32>) {\n  %0 = scan %a {kind=argmin, axis=0} : tensor<8xf32>\n  return\n}\n",
     "t.tir:2:3: error: scan: invalid kind 4"},
    {"kernel @k(%a: tensor<16x8xf16>, %b: tensor<16x8xf16>, %c: tensor<16x8xf32>) {\n"
     "  %0 = dot %a, %b, %c : tensor<16x8xf32>\n  return\n}\n",
     "t.tir:2:3: error: dot: shapes 16x8 * 16x8 + 16x8 do not fit [M,K]x[K,N]+[M,N]"},
    {"kernel @k(%p: ptr<f32>) {\n  %0 = load %p : f16\n  return\n}\n",
     "t.tir:2:3: error: load: result has type f16, expected elements of ptr<f32>"},
    {"kernel @k(%p: tensor<4xptr<f32>>, %m: tensor<4xi32>) {\n  %0 = load %p, %m : tensor<4xf32>\n  return\n}\n",
     "t.tir:2:3: error: load: mask (operand 1) must be i1 shaped like tensor<4xptr<f32>>, found tensor<4xi32>"},
    {"kernel @k(%p: tensor<4xptr<f32>>, %m: tensor<4xi1>, %o: f32) {\n  %0 = load %p, %m, %o : tensor<4xf32>\n"
     "  return\n}\n",
     "t.tir:2:3: error: load: operand 2 (other) has type f32, expected tensor<4xf32>"},
    {"kernel @k(%p: ptr<f32>, %v: i32) {\n  store %p, %v\n  return\n}\n",
     "t.tir:2:3: error: store: operand 1 has type i32, expected elements of ptr<f32>"},
    {"kernel @k(%p: f32, %v: f32) {\n  store %p, %v\n  return\n}\n",
     "t.tir:2:3: error: store: operand 0 must be a pointer, found f32"},
    {"kernel @k(%p: ptr<f32>) {\n  %0 = load %p, %p, %p, %p : f32\n  return\n}\n",
     "t.tir:2:3: error: load: has 4 operands, expected 1 to 3"},
    {"kernel @k(%n: i32, %f: f32) {\n  %0 = for %n, %n, %n, %f : f32 {\n  ^(%i: i32, %a: i32):\n    yield %a\n  }\n"
     "  return\n}\n",
     "t.tir:2:3: error: for: iter arg 0 has type i32, init value has type f32"},
    {"kernel @k(%n: i32, %f: f32) {\n  %0 = for %n, %n, %n, %f : f32 {\n  ^(%i: i32, %a: f32):\n    yield %i\n  }\n"
     "  return\n}\n",
     "t.tir:2:3: error: for: yield value 0 has type i32, iter arg 0 has type f32"},
    {"kernel @k(%n: i32, %f: f32) {\n  %0 = for %n, %n, %n, %f : f32 {\n  ^(%i: i32):\n    yield %f\n  }\n"
     "  return\n}\n",
     "t.tir:2:3: error: for: body has 1 arguments, expected 2 (induction variable + 1 iter args)"},
    {"kernel @k(%n: i32, %f: f32) {\n  %0 = for %n, %n, %n, %f : i32 {\n  ^(%i: i32, %a: f32):\n    yield %a\n  }\n"
     "  return\n}\n",
     "t.tir:2:3: error: for: result 0 has type i32, init value has type f32"},
    {"kernel @k(%n: i32, %f: f32) {\n  for %f, %f, %f {\n  ^(%i: f32):\n    yield\n  }\n  return\n}\n",
     "t.tir:2:3: error: for: lower bound must be a scalar integer, found f32"},
    {"kernel @k(%n: i32) {\n  for %n, %n, %n {\n  ^(%i: i32):\n    barrier\n  }\n  return\n}\n",
     "t.tir:2:3: error: for: region does not end with 'yield'"},
    {"kernel @k(%c: i1) {\n  %0 = if %c : i32 {\n    yield %c\n  } else {\n    yield %c\n  }\n  return\n}\n",
     "t.tir:2:3: error: if: yield value 0 has type i1, result 0 has type i32"},
    {"kernel @k(%c: i1) {\n  if %c {\n    yield\n  }\n  return\n}\n", "t.tir:2:3: error: if: has 1 regions, expected 2"},
    {"kernel @k(%c: i32) {\n  if %c {\n    yield\n  } else {\n    yield\n  }\n  return\n}\n",
     "t.tir:2:3: error: if: condition must be a scalar i1, found i32"},
    {"kernel @k(%c: i1) {\n  %0 = neg %c : i1\n}\n", "t.tir:1:1: error: kernel body does not end with 'return'"},
    {"kernel @k(%c: i1) {\n  return\n  %0 = neg %c : i1\n  return\n}\n",
     "t.tir:2:3: error: return: terminator is not the last instruction of its block"},
    {"kernel @k(%c: i1) {\n  yield\n  return\n}\n", "t.tir:2:3: error: yield: terminator is not the last instruction of its block"},
    {"kernel @k(%c: i1) {\n  if %c {\n    return\n  } else {\n    yield\n  }\n  return\n}\n",
     "t.tir:3:5: error: return: inside a region"},
    {"kernel @k() num_warps=3 {\n  return\n}\n", "t.tir:1:1: error: num_warps 3 is not a power of two"},
    {"#L0 = blocked<spt=[1], tpw=[32], wpc=[4], order=[0]>\n"
     "kernel @k(%a: tensor<4xf32, #L0>) {\n  %0 = neg %a : tensor<4xf32>\n  return\n}\n",
     "t.tir:3:3: error: neg: result 0: tensor has no layout (layouts are assigned)"},
    {"#L0 = blocked<spt=[1], tpw=[32], wpc=[4], order=[0]>\n#L1 = blocked<spt=[2], tpw=[32], wpc=[4], order=[0]>\n"
     "kernel @k(%a: tensor<4xf32, #L0>) {\n  %0 = neg %a : tensor<4xf32, #L1>\n  return\n}\n",
     "t.tir:4:3: error: neg: operand 0 has layout different from the result's"},
    {"#L0 = blocked<spt=[1,1], tpw=[4,8], wpc=[4,1], order=[1,0]>\n"
     "kernel @k(%a: tensor<4xf32, #L0>) {\n  return\n}\n",
     "t.tir:2:1: error: argument %a: layout rank 2 does not match tensor rank 1"},
    {"#L0 = blocked<spt=[1,1], tpw=[4,8], wpc=[4,1], order=[1,1]>\n"
     "kernel @k(%a: tensor<4x4xf32, #L0>) {\n  return\n}\n",
     "t.tir:2:1: error: argument %a: blocked layout order is not a permutation"},
    {"kernel @k(%a: tensor<4xf32>, %b: f32) {\n  %0 = atomic_rmw %a, %b {kind=max} : f32\n  return\n}\n",
     "t.tir:2:3: error: atomic_rmw: operand 0 must be a pointer, found tensor<4xf32>"},
    {"kernel @k(%p: ptr<i32>, %b: i32) {\n  %0 = atomic_rmw %p, %b {kind=argmax} : i32\n  return\n}\n",
     "t.tir:2:3: error: atomic_rmw: invalid kind 3"},
    {"kernel @k(%p: ptr<i32>, %b: i32, %c: i64) {\n  %0 = atomic_cas %p, %b, %c : i32\n  return\n}\n",
     "t.tir:2:3: error: atomic_cas: operand 2 has type i64, expected elements of ptr<i32>"},
    {"kernel @k() {\n  %0 = program_id {axis=3} : i32\n  return\n}\n", "t.tir:2:3: error: program_id: axis 3 out of range [0, 2]"},
    {"kernel @k(%a: f16) {\n  %0 = inline_asm %a {pack=2, msg=\"=r,h\\nmov.b32 $0, $1;\"} : f16\n  return\n}\n",
     "t.tir:2:3: error: inline_asm: operand 0 takes 32-bit registers at pack=2; input register 0 is i16"},
    {"kernel @k(%a: i32) {\n  %0 = inline_asm %a {out=1, msg=\"=r,r\\nmov.b32 $0, $1;\"} : i32\n  return\n}\n",
     "t.tir:2:3: error: inline_asm: out=1 and 1 registers pass the 1 outputs"},
    {"kernel @k(%a: i32) {\n  %0 = inline_asm %a {msg=\"=r,r\\nmov.b32 $0, $5;\"} : i32\n  return\n}\n",
     "t.tir:2:3: error: inline_asm: assembly: '$5' at offset 12 names operand 5, but there are 2 ($0 to $1)"},    {"kernel @k(%a: tensor<4xf32>) {\n  %0:9 = reduce_fn %a, %a, %a, %a, %a, %a, %a, %a, %a {axis=0} : f32, f32, f32, f32, f32, f32, f32, f32, f32 {\n  ^(%a0: f32, %a1: f32, %a2: f32, %a3: f32, %a4: f32, %a5: f32, %a6: f32, %a7: f32, %a8: f32, %a9: f32, %a10: f32, %a11: f32, %a12: f32, %a13: f32, %a14: f32, %a15: f32, %a16: f32, %a17: f32):\n    yield %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7, %a8\n  }\n  return\n}\n",
     "t.tir:2:3: error: reduce_fn: has 9 operands, more than 8"},
};

Test(tir_verify, errors_are_located) {
    for (size_t k = 0; k < ARRAY_LEN(verify_errors); k++) {
        Arena *a = arena_new();
        Diag d;
        diag_init(&d);
        Module *m = parse_text(a, verify_errors[k].in, &d);
        char *errs = all_diags(&d);
        cr_assert(m, "case %zu does not parse:\n%s", k, errs);
        free(errs);
        cr_expect(!tir_verify(m, &d), "case %zu verified", k);
        char *got = first_diag(&d);
        cr_expect_str_eq(got, verify_errors[k].want, "case %zu: got %s", k, got);
        free(got);
        diag_free(&d);
        arena_free(a);
    }
}

/* Invariants the parser cannot violate, broken through the API. */
Test(tir_verify, use_before_def_and_scoping) {
    Arena *a = arena_new();
    Module *m = tir_module_new(a);
    Func *f = tir_func_new(m, "k");
    const Type *i32 = tir_scalar(m, DT_I32), *i1 = tir_scalar(m, DT_I1);
    FuncArg *c = tir_func_add_arg(f, "c", i1);
    Builder b = {.f = f, .block = f->body};
    /* %x = neg %y ; %y = const  -> use before definition */
    Inst *neg = tir_emit(&b, OP_NEG, (ValueId[]){0}, 1, i32);
    ValueId y = tir_const_int(&b, i32, 1);
    tir_inst_set_operand(f, neg, 0, y);
    /* a value defined inside an if's region, used after it */
    Inst *ifi = tir_emit(&b, OP_IF, &c->value, 1, NULL);
    Block *then = tir_block_new(f, ifi), *els = tir_block_new(f, ifi);
    tir_inst_add_region(f, ifi, then);
    tir_inst_add_region(f, ifi, els);
    Builder bt = {.f = f, .block = then};
    ValueId inner = tir_const_int(&bt, i32, 2);
    tir_emit(&bt, OP_YIELD, NULL, 0, NULL);
    tir_emit(&(Builder){.f = f, .block = els}, OP_YIELD, NULL, 0, NULL);
    tir_emit(&b, OP_NEG, &inner, 1, i32);
    /* result of the wrong arity: a for with 2 operands */
    tir_emit(&b, OP_FOR, (ValueId[]){y, y}, 2, NULL);
    tir_emit(&b, OP_RETURN, NULL, 0, NULL);
    Diag d;
    diag_init(&d);
    cr_expect(!tir_verify(m, &d));
    char *r = all_diags(&d);
    cr_expect_str_eq(r, "error: @k: neg: operand 0 is used before its definition\n"
                        "error: @k: neg: operand 0 is defined in a region that does not enclose this use\n"
                        "error: @k: for: has 2 operands, expected at least 3\n"
                        "error: @k: for: has 0 regions, expected 1\n");
    free(r);
    diag_free(&d);
    arena_free(a);
}

Test(tir_verify, empty_region_and_bad_value) {
    Arena *a = arena_new();
    Module *m = tir_module_new(a);
    Func *f = tir_func_new(m, "k");
    const Type *i32 = tir_scalar(m, DT_I32);
    Builder b = {.f = f, .block = f->body};
    ValueId z = tir_const_int(&b, i32, 0);
    Inst *fo = tir_emit(&b, OP_FOR, (ValueId[]){z, z, z}, 3, NULL);
    Block *body = tir_block_new(f, fo);
    tir_inst_add_region(f, fo, body);
    tir_block_add_arg(f, body, i32);
    tir_emit(&b, OP_NEG, (ValueId[]){999}, 1, i32);
    tir_emit(&b, OP_RETURN, NULL, 0, NULL);
    Diag d;
    diag_init(&d);
    cr_expect(!tir_verify(m, &d));
    char *r = all_diags(&d);
    cr_expect_str_eq(r, "error: @k: for: region does not end with 'yield'\n"
                        "error: @k: neg: operand 0 is not a valid value\n");
    free(r);
    diag_free(&d);
    arena_free(a);
}

Test(tir_verify, layouts_must_be_interned) {
    Arena *a = arena_new();
    Module *m = tir_module_new(a);
    Func *f = tir_func_new(m, "k");
    Layout b = {.kind = LAYOUT_BLOCKED, .rank = 1, .spt = {1}, .tpw = {32}, .wpc = {4}, .order = {0}};
    const Layout *lb = tir_layout_intern(m, &b);
    Layout stray = {.kind = LAYOUT_SLICE, .rank = 0, .dim = 0, .parent = &b}; /* parent not interned */
    Layout ok = {.kind = LAYOUT_SLICE, .rank = 0, .dim = 0, .parent = lb};
    const Layout *ls = tir_layout_intern(m, &stray);
    (void)ok;
    tir_func_add_arg(f, "a", tir_type(m, DT_F32, 1, (int32_t[]){4}, NULL, lb));
    /* a rank-0 slice on a rank-1 tensor: wrong rank, and its parent is a stack copy */
    tir_func_add_arg(f, "b", tir_type(m, DT_F32, 1, (int32_t[]){4}, NULL, ls));
    tir_emit(&(Builder){.f = f, .block = f->body}, OP_RETURN, NULL, 0, NULL);
    Diag d;
    diag_init(&d);
    cr_expect(!tir_verify(m, &d));
    char *r = all_diags(&d);
    cr_expect_str_eq(r, "error: @k: argument %b: layout is not interned in the module\n"
                        "error: @k: argument %b: layout rank 0 does not match tensor rank 1\n");
    free(r);
    diag_free(&d);
    arena_free(a);
}

/* The verifier checks each type once per function: a type that passes where no layouts are assigned is
 * checked again in a function whose layouts are (where a tensor without one is an error), and a type that
 * fails is reported at every value of it. */
Test(tir_verify, type_checks_are_per_function) {
    Arena *a = arena_new();
    Module *m = tir_module_new(a);
    Layout b = {.kind = LAYOUT_BLOCKED, .rank = 1, .spt = {1}, .tpw = {32}, .wpc = {4}, .order = {0}};
    const Layout *lb = tir_layout_intern(m, &b);
    const Type *bare = tir_type(m, DT_F32, 1, (int32_t[]){4}, NULL, NULL);
    const Type *laid = tir_type(m, DT_F32, 1, (int32_t[]){4}, NULL, lb);
    Func *f = tir_func_new(m, "plain"); /* no layouts: a tensor without one is fine */
    Builder bf = {.f = f, .block = f->body};
    FuncArg *x = tir_func_add_arg(f, "x", bare);
    tir_emit(&bf, OP_NEG, &x->value, 1, bare);
    tir_emit(&bf, OP_RETURN, NULL, 0, NULL);
    Func *g = tir_func_new(m, "laid"); /* layouts assigned (its argument has one) */
    Builder bg = {.f = g, .block = g->body};
    FuncArg *y = tir_func_add_arg(g, "y", laid);
    tir_emit(&bg, OP_NEG, &y->value, 1, bare);
    tir_emit(&bg, OP_NEG, &y->value, 1, bare);
    tir_emit(&bg, OP_NEG, &y->value, 1, laid);
    tir_emit(&bg, OP_RETURN, NULL, 0, NULL);
    Diag d;
    diag_init(&d);
    cr_expect(!tir_verify(m, &d));
    char *r = all_diags(&d);
    cr_expect_str_eq(r, "error: @laid: neg: result 0: tensor has no layout (layouts are assigned)\n"
                        "error: @laid: neg: result 0: tensor has no layout (layouts are assigned)\n");
    free(r);
    diag_free(&d);
    arena_free(a);
}

/* ---- robustness: mutated inputs never crash the parser, verifier or printer ---- */

static uint64_t rng_next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

Test(tir_parse, survives_mutations) {
    const char *seeds[] = {canon_add, canon_loop, canon_matmul};
    static const char alphabet[] = "%#@<>{}()[]:,=^x0123456789-\n ilfpt";
    uint64_t s = 0x9e3779b97f4a7c15u;
    int parsed = 0;
    for (int iter = 0; iter < 3000; iter++) {
        const char *seed = seeds[iter % 3];
        size_t n = strlen(seed);
        char *buf = malloc(n + 64);
        memcpy(buf, seed, n + 1);
        int edits = 1 + (int)(rng_next(&s) % 4);
        for (int e = 0; e < edits; e++) {
            size_t at = rng_next(&s) % n;
            switch (rng_next(&s) % 4) {
            case 0: buf[at] = alphabet[rng_next(&s) % (sizeof alphabet - 1)]; break;
            case 1: memmove(buf + at, buf + at + 1, n - at), n--; break; /* delete */
            case 2: n = at, buf[n] = 0; break;                            /* truncate */
            default: buf[at] = (char)(rng_next(&s) & 0xff); break;
            }
            if (!n) break;
        }
        Arena *a = arena_new();
        Diag d;
        diag_init(&d);
        SrcFile *src = ARENA_NEW(a, SrcFile);
        *src = (SrcFile){"fuzz.tir", buf, n};
        Module *m = tir_parse(a, src, &d);
        if (m) {
            parsed++;
            tir_verify(m, &d);
            char *out = print_module(m);
            free(out);
        }
        Str r = {0};
        diag_render(&d, &r);
        str_free(&r);
        diag_free(&d);
        arena_free(a);
        free(buf);
    }
    cr_expect(parsed > 0);
}

/* ---- golden tests per pass ---- */

/* The pass a golden folder names: its entry in lower/passes.h, or `verify`
 * (no pass: the file only has to parse, verify and print as expected). */
typedef bool (*GoldenPassFn)(Module *m, Diag *d);
static bool pass_noop(Module *m, Diag *d) {
    (void)m, (void)d;
    return true;
}
static GoldenPassFn golden_pass(const char *name) {
    if (!strcmp(name, "verify")) return pass_noop;
    const PassInfo *p = pass_lookup(name);
    return p ? p->run : NULL;
}

typedef struct Golden {
    char *text;         /* whole file */
    size_t input_len;   /* bytes before the `// CHECK:` line */
    const char *expect; /* NULL: none */
    char *expect_path;  /* sibling .expected, when used */
} Golden;

static const char check_marker[] = "// CHECK:\n";

static void golden_split(Golden *g, const char *path) {
    size_t len = 0;
    g->text = read_file(path, &len);
    g->input_len = len;
    g->expect = NULL;
    g->expect_path = NULL;
    if (!g->text) return;
    for (const char *p = g->text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (!strncmp(p, check_marker, sizeof check_marker - 1)) {
            g->input_len = (size_t)(p - g->text);
            g->expect = p + sizeof check_marker - 1;
            return;
        }
    Str s = {0};
    str_puts(&s, path);
    s.len -= 4; /* ".tir" */
    str_puts(&s, ".expected");
    g->expect_path = str_take(&s);
    char *e = read_file(g->expect_path, NULL);
    if (e) {
        /* keep the expected text alive with the input */
        size_t tl = strlen(g->text), el = strlen(e);
        char *both = malloc(tl + el + 2);
        memcpy(both, g->text, tl + 1);
        memcpy(both + tl + 1, e, el + 1);
        free(g->text);
        free(e);
        g->text = both;
        g->expect = both + tl + 1;
    }
}

/* `// ERROR: msg` lines in the input: the diagnostics must be exactly these. */
static bool golden_errors(const char *path, const SrcFile *src, const Diag *d, bool *had_expectations) {
    bool ok = true;
    int nexpect = 0;
    uint32_t line = 1;
    for (const char *p = src->text, *end = src->text + src->len; p < end; line++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        const char *m = memmem(p, (size_t)(e - p), "// ERROR: ", 10);
        if (m) {
            nexpect++;
            m += 10;
            bool found = false;
            for (int k = 0; k < d->n; k++)
                if (d->msgs[k].loc.line == line && strlen(d->msgs[k].msg) == (size_t)(e - m) &&
                    !memcmp(d->msgs[k].msg, m, (size_t)(e - m)))
                    found = true;
            if (!found) {
                cr_log_error("%s:%u: expected diagnostic not reported: %.*s", path, line, (int)(e - m), m);
                ok = false;
            }
        }
        p = e + 1;
    }
    if (nexpect != d->n) {
        Str r = {0};
        diag_render(d, &r);
        cr_log_error("%s: expected %d diagnostics, got %d:\n%s", path, nexpect, d->n, r.buf ? r.buf : "");
        str_free(&r);
        ok = false;
    }
    *had_expectations = nexpect > 0;
    return ok;
}

static void golden_update(const char *path, const Golden *g, const char *out) {
    FILE *f = fopen(g->expect_path ? g->expect_path : path, "wb");
    if (!f) return;
    if (!g->expect_path) {
        fwrite(g->text, 1, g->input_len, f);
        fputs(check_marker, f);
    }
    fputs(out, f);
    fclose(f);
}

/* One golden file: parse, verify, run the pass, verify, print, compare. */
static bool golden_run(const char *pass_name, const char *path) {
    Golden g;
    golden_split(&g, path);
    if (!g.text) {
        cr_log_error("%s: cannot read", path);
        return false;
    }
    GoldenPassFn pass = golden_pass(pass_name);
    if (!pass) {
        cr_log_error("%s: no pass named '%s'", path, pass_name);
        free(g.text);
        free(g.expect_path);
        return false;
    }
    Arena *a = arena_new();
    Diag d;
    diag_init(&d);
    SrcFile src = {path, g.text, g.input_len};
    bool ok = true;
    Module *m = tir_parse(a, &src, &d);
    bool okrun = m && tir_verify(m, &d) && pass(m, &d) && !d.nerrors && tir_verify(m, &d);
    bool had_errors = false;
    bool diags_ok = golden_errors(path, &src, &d, &had_errors);
    if (had_errors) {
        ok = diags_ok; /* an `// ERROR:` test: the diagnostics are the whole expectation */
    } else if (!okrun) {
        if (diags_ok) cr_log_error("%s: pass '%s' failed without a diagnostic", path, pass_name);
        ok = false;
    } else {
        Str s = {0};
        tir_print_module(&s, m);
        char *out = str_take(&s);
        bool update = getenv("TILE_GOLDEN_UPDATE") && !strcmp(getenv("TILE_GOLDEN_UPDATE"), "1");
        if (update && (!g.expect || strcmp(out, g.expect))) golden_update(path, &g, out);
        else if (!g.expect) {
            cr_log_error("%s: no `// CHECK:` section or .expected file; the pass printed:\n%s", path, out);
            ok = false;
        } else if (strcmp(out, g.expect)) {
            cr_log_error("%s: output differs from the expected text.\n--- expected\n%s--- actual\n%s", path, g.expect,
                         out);
            ok = false;
        }
        /* the printed form parses back to itself */
        SrcFile src2 = {path, out, strlen(out)};
        Diag d2;
        diag_init(&d2);
        Module *m2 = tir_parse(a, &src2, &d2);
        Str s2 = {0};
        if (m2) tir_print_module(&s2, m2);
        if (!m2 || strcmp(s2.buf ? s2.buf : "", out)) {
            cr_log_error("%s: the printed output does not round-trip", path);
            ok = false;
        }
        str_free(&s2);
        diag_free(&d2);
        free(out);
    }
    diag_free(&d);
    arena_free(a);
    free(g.text);
    free(g.expect_path);
    return ok;
}


Test(tir_golden, passes) {
    const char *root = TILE_SOURCE_DIR "/tests/lower";
    struct dirent **passes;
    int np = scandir(root, &passes, is_dir_entry, alphasort);
    cr_assert(np > 0, "no pass folders under %s", root);
    int nfiles = 0, nfail = 0;
    for (int p = 0; p < np; p++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s", root, passes[p]->d_name);
        struct dirent **files;
        int nf = scandir(dir, &files, is_dir_entry, alphasort);
        for (int k = 0; k < nf; k++) {
            size_t l = strlen(files[k]->d_name);
            if (l > 4 && !strcmp(files[k]->d_name + l - 4, ".tir")) {
                char path[8192];
                snprintf(path, sizeof path, "%s/%s", dir, files[k]->d_name);
                nfiles++;
                if (!golden_run(passes[p]->d_name, path)) nfail++;
            }
            free(files[k]);
        }
        if (nf >= 0) free(files);
        free(passes[p]);
    }
    free(passes);
    cr_expect(nfiles > 0, "no golden files");
    cr_expect_eq(nfail, 0, "%d of %d golden files failed (see the log above)", nfail, nfiles);
}

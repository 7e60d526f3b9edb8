/* test_canonicalize.c - the specialize and canonicalize passes.
 *
 * Each case is Tile IR text, run through one pass and printed back; the
 * output must match the expected text exactly and pass the verifier.
 * Canonicalize's output must also be a fixed point (running the pass again
 * changes nothing), which re-parses the printed text.  The cases move to golden files under
 * tests/lower/<pass>/ once the shared harness (tests/test_tir.c) lands. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "lower/passes.h"

static Module *parse_text(Arena *a, SrcFile *src, const char *text, Diag *d) {
    *src = (SrcFile){"<case>", text, strlen(text)};
    Module *m = tir_parse(a, src, d);
    if (!m) {
        Str s = {0};
        diag_render(d, &s);
        cr_assert_fail("parse failed:\n%s", s.buf ? s.buf : "");
    }
    return m;
}

static char *print_text(Module *m) {
    Str s = {0};
    tir_print_module(&s, m);
    return str_take(&s);
}

static char *run_text(const char *pass, const char *text) {
    Arena *a = arena_new();
    Diag d;
    diag_init(&d);
    SrcFile src;
    Module *m = parse_text(a, &src, text, &d);
    cr_assert(tir_verify(m, &d), "test input does not verify");
    bool ok = !strcmp(pass, "specialize") ? lower_specialize(m, &d) : lower_canonicalize(m, &d);
    cr_assert(ok && !d.nerrors, "pass %s failed", pass);
    if (!tir_verify(m, &d)) {
        Str s = {0};
        diag_render(&d, &s);
        cr_assert_fail("IR invalid after %s:\n%s", pass, s.buf ? s.buf : "");
    }
    char *out = print_text(m);
    diag_free(&d);
    arena_free(a);
    return out;
}

static void check(const char *pass, const char *input, const char *expected) {
    char *out = run_text(pass, input);
    cr_assert_str_eq(out, expected, "after %s:\n%s", pass, out);
    if (!strcmp(pass, "canonicalize")) {
        char *again = run_text(pass, out);
        cr_assert_str_eq(again, out, "canonicalize is not idempotent:\n%s", again);
        free(again);
    }
    free(out);
}

/* Integer folding wraps at the type's width; division and remainder by zero and
 * shifts by the width stay; INT_MIN / -1 wraps; casts extend by the source's signedness. */
Test(canonicalize, fold_int) {
    check("canonicalize",
          "kernel @k(%p: ptr<i32>, %q: ptr<u8>, %n: i32) num_warps=4 num_stages=3 {\n"
          "  %0 = const {value=2147483647} : i32\n"
          "  %1 = const {value=1} : i32\n"
          "  %2 = add %0, %1 : i32\n"
          "  %3 = const {value=0} : i32\n"
          "  %4 = div %1, %3 : i32\n"
          "  %5 = rem %1, %3 : i32\n"
          "  %6 = const {value=-2147483648} : i32\n"
          "  %7 = const {value=-1} : i32\n"
          "  %8 = div %6, %7 : i32\n"
          "  %9 = const {value=200} : u8\n"
          "  %10 = const {value=100} : u8\n"
          "  %11 = add %9, %10 : u8\n"
          "  %12 = shr %7, %1 : i32\n"
          "  %13 = const {value=32} : i32\n"
          "  %14 = shl %1, %13 : i32\n"
          "  %15 = cmp %7, %1 {pred=lt} : i1\n"
          "  %16 = cmp %9, %10 {pred=lt} : i1\n"
          "  %17 = const {value=-7} : i32\n"
          "  %18 = const {value=2} : i32\n"
          "  %19 = div %17, %18 : i32\n"
          "  %20 = rem %17, %18 : i32\n"
          "  %21 = cast %17 : u8\n"
          "  %22 = cast %9 : i8\n"
          "  %23 = splat %2 : tensor<8xi32>\n"
          "  %24 = splat %19 : tensor<8xi32>\n"
          "  %25 = mul %23, %24 : tensor<8xi32>\n"
          "  store %p, %2\n"
          "  store %p, %4\n"
          "  store %p, %5\n"
          "  store %p, %8\n"
          "  store %q, %11\n"
          "  store %p, %12\n"
          "  store %p, %14\n"
          "  %26 = select %15, %20, %19 : i32\n"
          "  store %p, %26\n"
          "  %27 = select %16, %20, %19 : i32\n"
          "  store %p, %27\n"
          "  store %q, %21\n"
          "  %28 = cast %22 : i32\n"
          "  store %p, %28\n"
          "  %29 = splat %p : tensor<8xptr<i32>>\n"
          "  store %29, %25\n"
          "  return\n"
          "}\n",
          "kernel @k(%p: ptr<i32>, %q: ptr<u8>, %n: i32) num_warps=4 num_stages=3 {\n"
          "  %0 = const {value=1} : i32\n"
          "  %1 = const {value=-2147483648} : i32\n"
          "  %2 = const {value=0} : i32\n"
          "  %3 = div %0, %2 : i32\n"
          "  %4 = rem %0, %2 : i32\n"
          "  %5 = const {value=-1} : i32\n"
          "  %6 = const {value=44} : u8\n"
          "  %7 = const {value=32} : i32\n"
          "  %8 = shl %0, %7 : i32\n"
          "  %9 = const {value=-3} : i32\n"
          "  %10 = const {value=249} : u8\n"
          "  %11 = const {value=-2147483648} : tensor<8xi32>\n"
          "  store %p, %1\n"
          "  store %p, %3\n"
          "  store %p, %4\n"
          "  store %p, %1\n"
          "  store %q, %6\n"
          "  store %p, %5\n"
          "  store %p, %8\n"
          "  store %p, %5\n"
          "  store %p, %9\n"
          "  store %q, %10\n"
          "  %12 = const {value=-56} : i32\n"
          "  store %p, %12\n"
          "  %13 = splat %p : tensor<8xptr<i32>>\n"
          "  store %13, %11\n"
          "  return\n"
          "}\n");
}

/* Float folding rounds to f16/bf16/f32 (ties to even, overflow to inf,
 * underflow to 0); x/0 and exp stay; casts truncate toward zero; to i1 is != 0. */
Test(canonicalize, fold_float) {
    check("canonicalize",
          "kernel @k(%p: ptr<f16>, %r: ptr<f32>, %s: ptr<bf16>, %t: ptr<i1>) num_warps=4 num_stages=3 {\n"
          "  %0 = const {value=1} : f16\n"
          "  %1 = const {value=0.0009765625} : f16\n"
          "  %2 = add %0, %1 : f16\n"
          "  %3 = const {value=0.00048828125} : f16\n"
          "  %4 = add %0, %3 : f16\n"
          "  %5 = const {value=0.000732421875} : f16\n"
          "  %6 = add %0, %5 : f16\n"
          "  %7 = const {value=65504} : f16\n"
          "  %8 = add %7, %7 : f16\n"
          "  %9 = const {value=0.1} : f32\n"
          "  %10 = const {value=0.2} : f32\n"
          "  %11 = add %9, %10 : f32\n"
          "  %12 = const {value=0} : f32\n"
          "  %13 = div %9, %12 : f32\n"
          "  %14 = cast %9 : bf16\n"
          "  %15 = cast %9 : f16\n"
          "  %16 = const {value=5.9604644775390625e-08} : f16\n"
          "  %17 = mul %16, %3 : f16\n"
          "  %18 = const {value=-2.5} : f32\n"
          "  %19 = cast %18 : i32\n"
          "  %20 = floor %18 : f32\n"
          "  %21 = abs %18 : f32\n"
          "  %22 = const {value=2} : f32\n"
          "  %23 = sqrt %22 : f32\n"
          "  %24 = exp %22 : f32\n"
          "  %25 = cmp %18, %22 {pred=ge} : i1\n"
          "  %26 = min %18, %22 : f32\n"
          "  %27 = neg %26 : f32\n"
          "  store %p, %2\n"
          "  store %p, %4\n"
          "  store %p, %6\n"
          "  store %p, %8\n"
          "  store %r, %11\n"
          "  store %r, %13\n"
          "  store %s, %14\n"
          "  store %p, %15\n"
          "  store %p, %17\n"
          "  %28 = cast %19 : f32\n"
          "  store %r, %28\n"
          "  store %r, %20\n"
          "  store %r, %21\n"
          "  store %r, %23\n"
          "  store %r, %24\n"
          "  store %t, %25\n"
          "  store %r, %27\n"
          "  %29 = cast %18 : i1\n"
          "  store %t, %29\n"
          "  %30 = cast %12 : i1\n"
          "  store %t, %30\n"
          "  return\n"
          "}\n",
          "kernel @k(%p: ptr<f16>, %r: ptr<f32>, %s: ptr<bf16>, %t: ptr<i1>) num_warps=4 num_stages=3 {\n"
          "  %0 = const {value=1} : f16\n"
          "  %1 = const {value=1.0009765625} : f16\n"
          "  %2 = const {value=inf} : f16\n"
          "  %3 = const {value=0.10000000000000001} : f32\n"
          "  %4 = const {value=0.30000001192092896} : f32\n"
          "  %5 = const {value=0} : f32\n"
          "  %6 = div %3, %5 : f32\n"
          "  %7 = const {value=0.10009765625} : bf16\n"
          "  %8 = const {value=0.0999755859375} : f16\n"
          "  %9 = const {value=0} : f16\n"
          "  %10 = const {value=-3} : f32\n"
          "  %11 = const {value=2.5} : f32\n"
          "  %12 = const {value=2} : f32\n"
          "  %13 = const {value=1.4142135381698608} : f32\n"
          "  %14 = exp %12 : f32\n"
          "  %15 = const {value=0} : i1\n"
          "  store %p, %1\n"
          "  store %p, %0\n"
          "  store %p, %1\n"
          "  store %p, %2\n"
          "  store %r, %4\n"
          "  store %r, %6\n"
          "  store %s, %7\n"
          "  store %p, %8\n"
          "  store %p, %9\n"
          "  %16 = const {value=-2} : f32\n"
          "  store %r, %16\n"
          "  store %r, %10\n"
          "  store %r, %11\n"
          "  store %r, %13\n"
          "  store %r, %14\n"
          "  store %t, %15\n"
          "  store %r, %11\n"
          "  %17 = const {value=1} : i1\n"
          "  store %t, %17\n"
          "  store %t, %15\n"
          "  return\n"
          "}\n");
}

/* Ties round to even at the subnormal quantum of f16 and at the ulp of bf16. */
Test(canonicalize, round_ties_even) {
    check("canonicalize",
          "kernel @k(%p: ptr<f16>, %q: ptr<bf16>) num_warps=4 num_stages=3 {\n"
          "  %0 = const {value=5.9604644775390625e-08} : f16\n"
          "  %1 = const {value=1.78813934326171875e-07} : f16\n"
          "  %2 = const {value=0.5} : f16\n"
          "  %3 = mul %0, %2 : f16\n"
          "  %4 = mul %1, %2 : f16\n"
          "  %5 = const {value=1} : bf16\n"
          "  %6 = const {value=0.00390625} : bf16\n"
          "  %7 = add %5, %6 : bf16\n"
          "  %8 = const {value=0.01171875} : bf16\n"
          "  %9 = add %5, %8 : bf16\n"
          "  store %p, %3\n"
          "  store %p, %4\n"
          "  store %q, %7\n"
          "  store %q, %9\n"
          "  return\n"
          "}\n",
          "kernel @k(%p: ptr<f16>, %q: ptr<bf16>) num_warps=4 num_stages=3 {\n"
          "  %0 = const {value=0} : f16\n"
          "  %1 = const {value=1.1920928955078125e-07} : f16\n"
          "  %2 = const {value=1} : bf16\n"
          "  %3 = const {value=1.015625} : bf16\n"
          "  store %p, %0\n"
          "  store %p, %1\n"
          "  store %q, %2\n"
          "  store %q, %3\n"
          "  return\n"
          "}\n");
}

/* Algebraic identities; x+0.0 and x*0.0 stay for floats (-0.0, NaN). */
Test(canonicalize, identities) {
    check("canonicalize",
          "kernel @k(%p: ptr<i32>, %q: ptr<f32>, %x: i32, %y: f32, %c: i1) num_warps=4 num_stages=3 {\n"
          "  %0 = const {value=0} : i32\n"
          "  %1 = const {value=1} : i32\n"
          "  %2 = add %x, %0 : i32\n"
          "  %3 = add %0, %2 : i32\n"
          "  %4 = mul %3, %1 : i32\n"
          "  %5 = div %4, %1 : i32\n"
          "  %6 = sub %5, %0 : i32\n"
          "  store %p, %6\n"
          "  %7 = mul %x, %0 : i32\n"
          "  store %p, %7\n"
          "  %8 = const {value=0} : f32\n"
          "  %9 = add %y, %8 : f32\n"
          "  store %q, %9\n"
          "  %10 = const {value=-0.0} : f32\n"
          "  %11 = add %y, %10 : f32\n"
          "  store %q, %11\n"
          "  %12 = mul %y, %8 : f32\n"
          "  store %q, %12\n"
          "  %13 = const {value=1} : i1\n"
          "  %14 = and %c, %13 : i1\n"
          "  %15 = const {value=0} : i1\n"
          "  %16 = or %15, %14 : i1\n"
          "  %17 = select %16, %x, %x : i32\n"
          "  store %p, %17\n"
          "  %18 = select %13, %x, %0 : i32\n"
          "  store %p, %18\n"
          "  %19 = neg %y : f32\n"
          "  %20 = neg %19 : f32\n"
          "  store %q, %20\n"
          "  %21 = cast %x : i32\n"
          "  store %p, %21\n"
          "  %22 = not %c : i1\n"
          "  %23 = not %22 : i1\n"
          "  %24 = select %23, %y, %8 : f32\n"
          "  store %q, %24\n"
          "  %25 = sub %x, %x : i32\n"
          "  store %p, %25\n"
          "  %26 = xor %c, %c : i1\n"
          "  %27 = select %26, %x, %1 : i32\n"
          "  store %p, %27\n"
          "  return\n"
          "}\n",
          "kernel @k(%p: ptr<i32>, %q: ptr<f32>, %x: i32, %y: f32, %c: i1) num_warps=4 num_stages=3 {\n"
          "  %0 = const {value=0} : i32\n"
          "  %1 = const {value=1} : i32\n"
          "  store %p, %x\n"
          "  store %p, %0\n"
          "  %2 = const {value=0} : f32\n"
          "  %3 = add %y, %2 : f32\n"
          "  store %q, %3\n"
          "  store %q, %y\n"
          "  %4 = mul %y, %2 : f32\n"
          "  store %q, %4\n"
          "  store %p, %x\n"
          "  store %p, %x\n"
          "  store %q, %y\n"
          "  store %p, %x\n"
          "  %5 = select %c, %y, %2 : f32\n"
          "  store %q, %5\n"
          "  store %p, %0\n"
          "  store %p, %1\n"
          "  return\n"
          "}\n");
}

/* CSE: commutative operands, attributes, scoping into and out of regions;
 * loads are never merged. */
Test(canonicalize, cse_regions) {
    check("canonicalize",
          "kernel @k(%p: ptr<i32>, %x: i32, %y: i32, %c: i1, %n: i32) num_warps=4 num_stages=3 {\n"
          "  %0 = add %x, %y : i32\n"
          "  %1 = add %y, %x : i32\n"
          "  %2 = sub %x, %y : i32\n"
          "  %3 = sub %y, %x : i32\n"
          "  store %p, %0\n"
          "  store %p, %1\n"
          "  store %p, %2\n"
          "  store %p, %3\n"
          "  %4 = program_id {axis=0} : i32\n"
          "  %5 = program_id {axis=1} : i32\n"
          "  %6 = program_id {axis=0} : i32\n"
          "  store %p, %4\n"
          "  store %p, %5\n"
          "  store %p, %6\n"
          "  %7 = if %c : i32 {\n"
          "    %8 = add %x, %y : i32\n"
          "    %9 = mul %x, %y : i32\n"
          "    yield %9\n"
          "  } else {\n"
          "    %10 = mul %x, %y : i32\n"
          "    %11 = mul %y, %x : i32\n"
          "    %12 = add %10, %11 : i32\n"
          "    yield %12\n"
          "  }\n"
          "  %13 = mul %x, %y : i32\n"
          "  store %p, %13\n"
          "  store %p, %7\n"
          "  %14 = const {value=0} : i32\n"
          "  %15 = const {value=1} : i32\n"
          "  %16 = for %14, %n, %15, %x : i32 {\n"
          "  ^(%17: i32, %18: i32):\n"
          "    %19 = add %x, %y : i32\n"
          "    %20 = add %18, %19 : i32\n"
          "    %21 = const {value=1} : i32\n"
          "    %22 = load %p : i32\n"
          "    %23 = load %p : i32\n"
          "    %24 = add %22, %23 : i32\n"
          "    %25 = add %20, %24 : i32\n"
          "    yield %25\n"
          "  }\n"
          "  store %p, %16\n"
          "  return\n"
          "}\n",
          "kernel @k(%p: ptr<i32>, %x: i32, %y: i32, %c: i1, %n: i32) num_warps=4 num_stages=3 {\n"
          "  %0 = add %x, %y : i32\n"
          "  %1 = sub %x, %y : i32\n"
          "  %2 = sub %y, %x : i32\n"
          "  store %p, %0\n"
          "  store %p, %0\n"
          "  store %p, %1\n"
          "  store %p, %2\n"
          "  %3 = program_id {axis=0} : i32\n"
          "  %4 = program_id {axis=1} : i32\n"
          "  store %p, %3\n"
          "  store %p, %4\n"
          "  store %p, %3\n"
          "  %5 = if %c : i32 {\n"
          "    %6 = mul %x, %y : i32\n"
          "    yield %6\n"
          "  } else {\n"
          "    %7 = mul %x, %y : i32\n"
          "    %8 = add %7, %7 : i32\n"
          "    yield %8\n"
          "  }\n"
          "  %9 = mul %x, %y : i32\n"
          "  store %p, %9\n"
          "  store %p, %5\n"
          "  %10 = const {value=0} : i32\n"
          "  %11 = const {value=1} : i32\n"
          "  %12 = for %10, %n, %11, %x : i32 {\n"
          "  ^(%13: i32, %14: i32):\n"
          "    %15 = add %14, %0 : i32\n"
          "    %16 = load %p : i32\n"
          "    %17 = load %p : i32\n"
          "    %18 = add %16, %17 : i32\n"
          "    %19 = add %15, %18 : i32\n"
          "    yield %19\n"
          "  }\n"
          "  store %p, %12\n"
          "  return\n"
          "}\n");
}

/* DCE of unused loops and ifs and of a dead loop-carried value; shape ops of
 * splat constants fold (keeping their layout); trans(trans x) and
 * same-type convert_layout go. */
Test(canonicalize, dce_loops) {
    check("canonicalize",
          "#L0 = blocked<spt=[1,4], tpw=[4,8], wpc=[4,1], order=[1,0]>\n"
          "#L1 = blocked<spt=[4,1], tpw=[8,4], wpc=[1,4], order=[0,1]>\n"
          "\n"
          "kernel @k(%p: ptr<f32>, %n: i32, %c: i1) num_warps=4 num_stages=3 {\n"
          "  %0 = const {value=0} : i32\n"
          "  %1 = const {value=1} : i32\n"
          "  %2 = const {value=0} : f32\n"
          "  %3:3 = for %0, %n, %1, %2, %2, %2 : f32, f32, f32 {\n"
          "  ^(%4: i32, %5: f32, %6: f32, %7: f32):\n"
          "    %8 = load %p : f32\n"
          "    %9 = add %5, %8 : f32\n"
          "    %10 = mul %6, %9 : f32\n"
          "    %11 = exp %7 : f32\n"
          "    %12 = add %11, %7 : f32\n"
          "    yield %9, %10, %12\n"
          "  }\n"
          "  store %p, %3#1\n"
          "  %13 = for %0, %n, %1, %2 : f32 {\n"
          "  ^(%14: i32, %15: f32):\n"
          "    %16 = add %15, %15 : f32\n"
          "    yield %16\n"
          "  }\n"
          "  %17 = if %c : f32 {\n"
          "    %18 = load %p : f32\n"
          "    yield %18\n"
          "  } else {\n"
          "    yield %2\n"
          "  }\n"
          "  if %c {\n"
          "    store %p, %2\n"
          "    yield\n"
          "  } else {\n"
          "    yield\n"
          "  }\n"
          "  %19 = for %0, %n, %1, %2 : f32 {\n"
          "  ^(%20: i32, %21: f32):\n"
          "    %40 = atomic_rmw %p, %21 {kind=add} : f32\n"
          "    yield %21\n"
          "  }\n"
          "  %22 = splat %2 : tensor<32x32xf32, #L0>\n"
          "  %23 = convert_layout %22 : tensor<32x32xf32, #L1>\n"
          "  %24 = trans %23 {perm=[1,0]} : tensor<32x32xf32, #L0>\n"
          "  %25 = splat %p : tensor<32x32xptr<f32>, #L0>\n"
          "  %26 = load %25 : tensor<32x32xf32, #L0>\n"
          "  %27 = trans %26 {perm=[1,0]} : tensor<32x32xf32, #L1>\n"
          "  %28 = trans %27 {perm=[1,0]} : tensor<32x32xf32, #L0>\n"
          "  %29 = convert_layout %28 : tensor<32x32xf32, #L0>\n"
          "  %30 = add %29, %24 : tensor<32x32xf32, #L0>\n"
          "  store %25, %30\n"
          "  return\n"
          "}\n"
          "\n"
          "kernel @shapes(%p: ptr<f32>) num_warps=4 num_stages=3 {\n"
          "  %0 = const {value=0.5} : f32\n"
          "  %1 = expand_dims %0 {axis=0} : tensor<1xf32>\n"
          "  %2 = broadcast %1 : tensor<16xf32>\n"
          "  %3 = reshape %2 : tensor<4x4xf32>\n"
          "  %4 = splat %p : tensor<4x4xptr<f32>>\n"
          "  store %4, %3\n"
          "  return\n"
          "}\n",
          "#L0 = blocked<spt=[1,4], tpw=[4,8], wpc=[4,1], order=[1,0]>\n"
          "#L1 = blocked<spt=[4,1], tpw=[8,4], wpc=[1,4], order=[0,1]>\n"
          "\n"
          "kernel @k(%p: ptr<f32>, %n: i32, %c: i1) num_warps=4 num_stages=3 {\n"
          "  %0 = const {value=0} : i32\n"
          "  %1 = const {value=1} : i32\n"
          "  %2 = const {value=0} : f32\n"
          "  %3:2 = for %0, %n, %1, %2, %2 : f32, f32 {\n"
          "  ^(%5: i32, %6: f32, %7: f32):\n"
          "    %8 = load %p : f32\n"
          "    %9 = add %6, %8 : f32\n"
          "    %10 = mul %7, %9 : f32\n"
          "    yield %9, %10\n"
          "  }\n"
          "  store %p, %4\n"
          "  if %c {\n"
          "    store %p, %2\n"
          "    yield\n"
          "  } else {\n"
          "    yield\n"
          "  }\n"
          "  %11 = for %0, %n, %1, %2 : f32 {\n"
          "  ^(%12: i32, %13: f32):\n"
          "    %14 = atomic_rmw %p, %13 {kind=add} : f32\n"
          "    yield %13\n"
          "  }\n"
          "  %15 = const {value=0} : tensor<32x32xf32, #L0>\n"
          "  %16 = splat %p : tensor<32x32xptr<f32>, #L0>\n"
          "  %17 = load %16 : tensor<32x32xf32, #L0>\n"
          "  %18 = add %17, %15 : tensor<32x32xf32, #L0>\n"
          "  store %16, %18\n"
          "  return\n"
          "}\n"
          "\n"
          "kernel @shapes(%p: ptr<f32>) num_warps=4 num_stages=3 {\n"
          "  %0 = const {value=0.5} : tensor<4x4xf32>\n"
          "  %1 = splat %p : tensor<4x4xptr<f32>>\n"
          "  store %1, %0\n"
          "  return\n"
          "}\n");
}

/* Nested dead loops go; a loop with a store stays; int division by zero stays. */
Test(canonicalize, dce_nested) {
    check("canonicalize",
          "kernel @k(%p: ptr<i32>, %n: i32) num_warps=4 num_stages=3 {\n"
          "  %0 = const {value=0} : i32\n"
          "  %1 = const {value=1} : i32\n"
          "  %2 = for %0, %n, %1, %0 : i32 {\n"
          "  ^(%3: i32, %4: i32):\n"
          "    %5 = for %0, %n, %1, %4 : i32 {\n"
          "    ^(%6: i32, %7: i32):\n"
          "      %8 = add %7, %6 : i32\n"
          "      yield %8\n"
          "    }\n"
          "    yield %5\n"
          "  }\n"
          "  for %0, %n, %1 {\n"
          "  ^(%10: i32):\n"
          "    %11 = mul %10, %1 : i32\n"
          "    %12 = add %11, %0 : i32\n"
          "    %13 = ptr_add %p, %12 : ptr<i32>\n"
          "    %14 = const {value=0} : i32\n"
          "    %15 = div %n, %14 : i32\n"
          "    store %13, %15\n"
          "    yield\n"
          "  }\n"
          "  return\n"
          "}\n",
          "kernel @k(%p: ptr<i32>, %n: i32) num_warps=4 num_stages=3 {\n"
          "  %0 = const {value=0} : i32\n"
          "  %1 = const {value=1} : i32\n"
          "  for %0, %n, %1 {\n"
          "  ^(%2: i32):\n"
          "    %3 = ptr_add %p, %2 : ptr<i32>\n"
          "    %4 = div %n, %0 : i32\n"
          "    store %3, %4\n"
          "    yield\n"
          "  }\n"
          "  return\n"
          "}\n");
}

/* An if on a constant condition is replaced by its taken region. */
Test(canonicalize, const_if) {
    check("canonicalize",
          "kernel @k(%p: ptr<i32>, %x: i32) num_warps=4 num_stages=3 {\n"
          "  %0 = const {value=1} : i1\n"
          "  %1 = const {value=0} : i1\n"
          "  %2 = const {value=3} : i32\n"
          "  %3 = if %0 : i32 {\n"
          "    %4 = add %x, %2 : i32\n"
          "    %5 = mul %4, %2 : i32\n"
          "    store %p, %5\n"
          "    yield %5\n"
          "  } else {\n"
          "    yield %x\n"
          "  }\n"
          "  %6 = if %1 : i32 {\n"
          "    yield %x\n"
          "  } else {\n"
          "    %7 = const {value=3} : i32\n"
          "    %8 = mul %2, %7 : i32\n"
          "    yield %8\n"
          "  }\n"
          "  if %1 {\n"
          "    store %p, %x\n"
          "    yield\n"
          "  } else {\n"
          "    yield\n"
          "  }\n"
          "  %9 = add %3, %6 : i32\n"
          "  store %p, %9\n"
          "  return\n"
          "}\n",
          "kernel @k(%p: ptr<i32>, %x: i32) num_warps=4 num_stages=3 {\n"
          "  %0 = const {value=3} : i32\n"
          "  %1 = add %x, %0 : i32\n"
          "  %2 = mul %1, %0 : i32\n"
          "  store %p, %2\n"
          "  %3 = const {value=9} : i32\n"
          "  %4 = add %2, %3 : i32\n"
          "  store %p, %4\n"
          "  return\n"
          "}\n");
}

/* #one arguments become const 1 at the top of the body. */
Test(specialize, specialize) {
    check("specialize",
          "kernel @k(%p: ptr<f32> #div16, %stride: i32 #one, %n: i32, %m: i64 #one) num_warps=4 num_stages=3 {\n"
          "  %0 = program_id {axis=0} : i32\n"
          "  %1 = mul %0, %stride : i32\n"
          "  %2 = ptr_add %p, %1 : ptr<f32>\n"
          "  %3 = cast %m : i32\n"
          "  %4 = add %3, %n : i32\n"
          "  %5 = ptr_add %2, %4 : ptr<f32>\n"
          "  %6 = load %5 : f32\n"
          "  store %p, %6\n"
          "  return\n"
          "}\n",
          "kernel @k(%p: ptr<f32> #div16, %stride: i32 #one, %n: i32, %m: i64 #one) num_warps=4 num_stages=3 {\n"
          "  %0 = const {value=1} : i32\n"
          "  %1 = const {value=1} : i64\n"
          "  %2 = program_id {axis=0} : i32\n"
          "  %3 = mul %2, %0 : i32\n"
          "  %4 = ptr_add %p, %3 : ptr<f32>\n"
          "  %5 = cast %1 : i32\n"
          "  %6 = add %5, %n : i32\n"
          "  %7 = ptr_add %4, %6 : ptr<f32>\n"
          "  %8 = load %7 : f32\n"
          "  store %p, %8\n"
          "  return\n"
          "}\n");
}

/* A pointer cannot be 1: specialize reports it and fails. */
Test(specialize, rejects_pointer) {
    Arena *a = arena_new();
    Diag d;
    diag_init(&d);
    SrcFile src;
    Module *m = parse_text(a, &src, "kernel @k(%p: ptr<f32> #one) num_warps=4 num_stages=3 {\n  return\n}\n", &d);
    cr_assert(!lower_specialize(m, &d));
    cr_assert_eq(d.nerrors, 1);
    cr_assert(strstr(d.msgs[0].msg, "cannot be specialized"));
    diag_free(&d);
    arena_free(a);
}

/* Folding keeps the folded op's value and loc; a long chain folds in one round. */
Test(canonicalize, chain_keeps_loc) {
    Arena *a = arena_new();
    Diag d;
    diag_init(&d);
    Module *m = tir_module_new(a);
    Func *f = tir_func_new(m, "k");
    const Type *i32 = tir_scalar(m, DT_I32);
    ValueId p = tir_func_add_arg(f, "p", tir_ptr(m, i32))->value;
    SrcFile file = {"x.tile", "", 0};
    Builder b = {.f = f, .block = f->body};
    ValueId acc = tir_const_int(&b, i32, 0), one = tir_const_int(&b, i32, 1);
    for (int k = 0; k < 5000; k++) {
        b.loc = (Loc){&file, (uint32_t)k + 1, 1};
        ValueId ops[2] = {acc, one};
        acc = tir_emit_v(&b, OP_ADD, ops, 2, i32);
    }
    ValueId st[2] = {p, acc};
    tir_emit(&b, OP_STORE, st, 2, NULL);
    tir_emit(&b, OP_RETURN, NULL, 0, NULL);
    cr_assert(lower_canonicalize(m, &d));
    cr_assert(tir_verify(m, &d));
    Inst *c = f->values[acc].def;
    cr_assert_eq(c->op, OP_CONST);
    cr_assert_eq(c->a.ival, 5000);
    cr_assert_eq(c->loc.line, 5000);
    cr_assert_eq(f->body->last->prev->ops[1], acc);
    char *out = print_text(m);
    cr_assert_str_eq(out, "kernel @k(%p: ptr<i32>) num_warps=4 num_stages=3 {\n"
                          "  %0 = const {value=5000} : i32\n"
                          "  store %p, %0\n"
                          "  return\n"
                          "}\n");
    free(out);
    diag_free(&d);
    arena_free(a);
}

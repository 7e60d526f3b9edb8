/* test_lang_asm.c - inline_asm_elementwise compiled from inline sources and run on the PTX emulator
 * against exact references: one asm per element, operands of other types than their registers and a
 * tied input, Triton's pack (registers of several narrow elements, several outputs) and several results
 * of one asm, and what a packed group's padding reads. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "runtime/device.h"
#include "support/hostfloat.h"

#include "tests/lang_run.h"

/* inline_asm_elementwise: a funnel-shift rotate per element, on 100 elements of 2 programs (poisoned output) */
Test(lang_asm, inline_asm_elementwise) {
    static const char *src =
        "kernel k(x: *f32, y: *u32, n: i32) {\n"
        "    let o = program_id(0) * 64 + arange(0, 64);\n"
        "    let v = load(x + o, o < n);\n"
        "    let b = inline_asm_elementwise(\"shf.l.wrap.b32 $0, $1, $1, $2;\", \"=r,r,r\", [bitcast(v, u32), 8 as u32], u32);\n"
        "    store(y + o, b, o < n);\n"
        "}\n";
    char *ptx = compile_ptx(src, "sm_80");
    cr_expect(strstr(ptx, "shf.l.wrap.b32"), "%s", ptx);
    free(ptx);
    K k;
    load_src(&k, src, "k");
    enum { N = 100 };
    float x[128];
    uint32_t y[128];
    for (int i = 0; i < 128; i++) x[i] = (float)(i * 3.25 - 17);
    memset(y, 0xee, sizeof y);
    uint64_t dx = upload(&k, x, sizeof x), dy = upload(&k, y, sizeof y);
    int32_t n = N;
    void *params[] = {&dx, &dy, &n};
    launch(&k, 2, params);
    download(&k, y, dy, sizeof y);
    for (int i = 0; i < 128; i++) {
        uint32_t b;
        memcpy(&b, &x[i], 4);
        uint32_t want = i < N ? (b << 8 | b >> 24) : 0xeeeeeeeeu;
        cr_expect_eq(y[i], want, "y[%d] = %#x, want %#x", i, y[i], want);
    }
    unload(&k);
}

/* Python's escapes in strings: a Triton kernel's multi-line assembly, "{\n .reg .b32 t;\n ...}", holds newlines
 * and a tab (the backslashes reached the PTX, which did not load: "expected an instruction, found '\\'"); \" and
 * \\ as before, and an escape Python does not know stays as written. */
Test(lang_asm, string_escapes_in_assembly) {
    static const char *src =
        "kernel k(x: *i32, y: *i32, n: i32) {\n"
        "    let o = program_id(0) * 64 + arange(0, 64);\n"
        "    let v = load(x + o, o < n);\n"
        "    let r = inline_asm_elementwise(\"{\\n\\t.reg .b32 t;\\n\\tmul.lo.s32 t, $1, 3;\\r\\n\\tadd.s32 $0, t, $2;\\n}\", \"=r,r,r\", [v, 7], i32);\n"
        "    static_assert(\"a\\\"b\\\\c\\q\" == \"a\" \"\\\"\" \"b\" \"\\\\\" \"c\\\\q\", \"escapes\");\n"
        "    store(y + o, r, o < n);\n"
        "}\n";
    char *ptx = compile_ptx(src, "sm_80");
    cr_expect(strstr(ptx, "{\n\t.reg .b32 t;\n\tmul.lo.s32 t,"), "%s", ptx);
    free(ptx);
    K k;
    load_src(&k, src, "k");
    enum { N = 101 };
    int32_t x[128], y[128];
    for (int i = 0; i < 128; i++) x[i] = (int32_t)((unsigned)rand() * 2654435761u);
    memset(y, 0xff, sizeof y);
    uint64_t dx = upload(&k, x, sizeof x), dy = upload(&k, y, sizeof y);
    int32_t n = N;
    void *params[] = {&dx, &dy, &n};
    launch(&k, 2, params);
    download(&k, y, dy, sizeof y);
    for (int i = 0; i < 128; i++) {
        int32_t want = i < N ? (int32_t)((uint32_t)x[i] * 3u + 7u) : -1;
        cr_expect_eq(y[i], want, "y[%d] = %d, want %d", i, y[i], want);
    }
    unload(&k);
}

/* Python's triple-quoted strings, as Triton kernels write multi-line assembly (asm="""\n {\n .reg ...\n }\n"""): one
 * string over lines, each line end a '\n', a lone " or "" inside; they were an unterminated string and errors
 * after it.  A string alone as a statement (a docstring) is one error asking for a comment, and a Python line
 * continuation '\' one error saying it is not needed; each is read past, so nothing else is reported. */
Test(lang_asm, triple_quoted_assembly) {
    static const char *src =
        "kernel k(x: *u32, y: *u32) {\n"
        "    let v = load(x + arange(0, 64));\n"
        "    let r = inline_asm_elementwise(asm=\"\"\"\n"
        "    {\n"
        "    .reg .b32 t; // \"a\" \"\"\n"
        "    add.u32 t, $1, 1;\r\n"
        "    mul.lo.u32 $0, t, 3;\n"
        "    }\n"
        "    \"\"\", constraints=\"=r,r\", args=[v], dtype=u32, is_pure=true, pack=1);\n"
        "    store(y + arange(0, 64), r);\n"
        "}\n";
    char *ptx = compile_ptx(src, "sm_80");
    cr_expect(strstr(ptx, "\n    {\n    .reg .b32 t; // \"a\" \"\"\n    add.u32 t,"), "%s", ptx);
    free(ptx);
    K k;
    load_src(&k, src, "k");
    uint32_t x[64], y[64];
    for (int i = 0; i < 64; i++) x[i] = (uint32_t)rand() * 2654435761u;
    uint64_t dx = upload(&k, x, sizeof x), dy = poisoned(&k, sizeof y);
    launch(&k, 1, (void *[]){&dx, &dy});
    download(&k, y, dy, sizeof y);
    for (int i = 0; i < 64; i++) cr_expect_eq(y[i], (x[i] + 1u) * 3u, "y[%d] = %u, want %u", i, y[i], (x[i] + 1u) * 3u);
    unload(&k);
    const BadSource bad[] = {
        {"kernel k(x: *f32) {\n    \"\"\"Adds one.\n    Twice.\"\"\"\n    store(x, load(x) + 1.0);\n}\n",
         "t.tile:2:5: error: a docstring is written as a comment here: /* ... */\n      \"\"\"Adds one.\n      ^\n"},
        {"fn f(x) {\n    \"Doubles.\"\n    return x * 2.0;\n}\nkernel k(x: *f32) {\n    store(x, f(load(x)));\n}\n",
         "t.tile:2:5: error: a docstring is written as a comment here: /* ... */\n      \"Doubles.\"\n      ^\n"},
        {"kernel k(x: *f32, n: i32) {\n    let m = (arange(0, 4) < n) & \\\n        (arange(0, 4) > 1);\n    store(x + arange(0, 4), 1.0, m);\n}\n",
         "t.tile:2:34: error: a line continuation '\\' is not needed here: a statement goes on until its ';'\n"
         "      let m = (arange(0, 4) < n) & \\\n                                   ^\n"},
        {"kernel k(x: *f32) {\n    let s = \"\"\"abc;\n}\n", "t.tile:2:13: error: unterminated string literal (no \"\"\" closes this one)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) { /* each the only message */
        tile_compile_options opt = {0};
        tile_compiled c;
        cr_expect_eq(tile_compile_source("t.tile", bad[i].src, &opt, &c), TILE_ERROR_COMPILE, "compiled: %s", bad[i].src);
        if (i < 3) cr_expect_str_eq(c.diagnostics, bad[i].msg);
        else cr_expect(strstr(c.diagnostics, bad[i].msg), "want %s\ngot %s", bad[i].msg, c.diagnostics);
        tile_compiled_free(&c);
    }
}

/* inline_asm_elementwise with operands of other types than the registers: an f32 through "r" and an
 * f16 result from "=h" are bitcast (the statement works on i32/i16 registers), a tied input "0". */
Test(lang_asm, inline_asm_register_types) {
    static const char *src =
        "kernel k(x: *f32, y: *f16, z: *f32, w: *i32, n: i32) {\n"
        "    let o = program_id(0) * 64 + arange(0, 64);\n"
        "    let v = load(x + o, o < n);\n"
        "    let h = inline_asm_elementwise(\"cvt.rn.f16.f32 $0, $1;\", \"=h,f\", [v], f16);\n"
        "    let a = inline_asm_elementwise(\"and.b32 $0, $1, 0x7fffffff;\", \"=r,r\", [v], f32);\n"
        "    let t = inline_asm_elementwise(\"add.s32 $0, $0, $1;\", \"=r,0\", [o], i32);\n"
        "    store(y + o, h, o < n);\n"
        "    store(z + o, a, o < n);\n"
        "    store(w + o, t, o < n);\n"
        "}\n";
    K k;
    load_src(&k, src, "k");
    enum { N = 100 };
    float x[128], z[128];
    uint16_t y[128];
    int32_t w[128];
    for (int i = 0; i < 128; i++) x[i] = (float)(i * 3.3 - 170.1);
    memset(y, 0xee, sizeof y), memset(z, 0xee, sizeof z), memset(w, 0xee, sizeof w);
    uint64_t dx = upload(&k, x, sizeof x), dy = upload(&k, y, sizeof y), dz = upload(&k, z, sizeof z), dw = upload(&k, w, sizeof w);
    int32_t n = N;
    void *params[] = {&dx, &dy, &dz, &dw, &n};
    launch(&k, 2, params);
    download(&k, y, dy, sizeof y), download(&k, z, dz, sizeof z), download(&k, w, dw, sizeof w);
    for (int i = 0; i < N; i++) {
        cr_expect_eq(y[i], f32_to_f16(x[i]), "y[%d] = %#x, want %#x", i, y[i], f32_to_f16(x[i]));
        cr_expect_eq(z[i], fabsf(x[i]), "z[%d] = %g, want %g", i, z[i], fabsf(x[i]));
        cr_expect_eq(w[i], 2 * i, "w[%d] = %d, want %d", i, w[i], 2 * i); /* tied: $0 starts as o */
    }
    cr_expect_eq(y[N], 0xeeee, "y[%d] written past n", N);
    unload(&k);
}

/* inline_asm_elementwise with pack (Triton's): four i8 in one 32-bit register widened to four f32
 * outputs, f16 pairs added as f16x2, and two results of one asm (a 64-bit product's halves).  Blocks
 * of 64 elements over 128 threads leave each thread one element, so every group is padded; blocks of
 * 512 give each thread four, in two or one groups. */
static void asm_pack(int block) {
    char src[2048];
    snprintf(src, sizeof src,
        "kernel k(x: *i8, a: *f16, b: *f16, y: *f32, s: *f16, lo: *u32, hi: *u32, n: i32) {\n"
        "    let o = program_id(0) * %d + arange(0, %d);\n"
        "    let m = o < n;\n"
        "    let f = inline_asm_elementwise(\"{ .reg .b8 t<4>; mov.b32 {t0, t1, t2, t3}, $4; cvt.rn.f32.s8 $0, t0;\"\n"
        "        \" cvt.rn.f32.s8 $1, t1; cvt.rn.f32.s8 $2, t2; cvt.rn.f32.s8 $3, t3; }\", \"=r,=r,=r,=r,r\", [load(x + o, m)], f32, pack=4);\n"
        "    let h = inline_asm_elementwise(\"add.rn.f16x2 $0, $1, $2;\", \"=r,r,r\", [load(a + o, m), load(b + o, m)], f16, true, 2);\n"
        "    let u = (o * 40503 + 7) as u32;\n"
        "    let (l, g) = inline_asm_elementwise(\"mul.lo.u32 $0, $2, $3; mul.hi.u32 $1, $2, $3;\", \"=r,=r,r,r\", [u, u], (u32, u32));\n"
        "    store(y + o, f, m);\n"
        "    store(s + o, h, m);\n"
        "    store(lo + o, l, m);\n"
        "    store(hi + o, g, m);\n"
        "}\n", block, block);
    char *ptx = compile_ptx(src, "sm_80");
    int muls = 0;
    for (const char *p = ptx; (p = strstr(p, "mul.hi.u32")); p++) muls++;
    cr_expect_eq(muls, block > 128 ? block / 128 : 1, "the two results' asm is one statement, found %d:\n%s", muls, ptx);
    free(ptx);
    K k;
    load_src(&k, src, "k");
    enum { P = 1024 };
    int N = block + 37;
    int8_t x[P];
    uint16_t a[P], b[P], s[P];
    float y[P];
    uint32_t lo[P], hi[P];
    for (int i = 0; i < P; i++) {
        x[i] = (int8_t)(i * 37 - 101);
        a[i] = f32_to_f16((float)(i % 13) - 6.5f), b[i] = f32_to_f16((float)(i % 7) * 0.25f);
    }
    memset(y, 0xee, sizeof y), memset(s, 0xee, sizeof s), memset(lo, 0xee, sizeof lo), memset(hi, 0xee, sizeof hi);
    uint64_t dx = upload(&k, x, sizeof x), da = upload(&k, a, sizeof a), db = upload(&k, b, sizeof b), dy = upload(&k, y, sizeof y),
             ds = upload(&k, s, sizeof s), dl = upload(&k, lo, sizeof lo), dh = upload(&k, hi, sizeof hi);
    int32_t n = N;
    void *params[] = {&dx, &da, &db, &dy, &ds, &dl, &dh, &n};
    launch(&k, P / (unsigned)block, params);
    download(&k, y, dy, sizeof y), download(&k, s, ds, sizeof s), download(&k, lo, dl, sizeof lo), download(&k, hi, dh, sizeof hi);
    for (int i = 0; i < P; i++) {
        uint32_t poison = 0xeeeeeeeeu;
        float fp;
        memcpy(&fp, &poison, 4);
        uint64_t u = (uint32_t)(i * 40503 + 7), sq = u * u;
        float wy = i < N ? (float)x[i] : fp;
        uint16_t ws = i < N ? f32_to_f16((float)(f16_to_d(a[i]) + f16_to_d(b[i]))) : 0xeeee;
        uint32_t wl = i < N ? (uint32_t)sq : poison, wh = i < N ? (uint32_t)(sq >> 32) : poison;
        cr_expect(!memcmp(&y[i], &wy, 4), "y[%d] = %g, want %g", i, y[i], wy);
        cr_expect_eq(s[i], ws, "s[%d] = %#x, want %#x", i, s[i], ws);
        cr_expect_eq(lo[i], wl, "lo[%d] = %#x, want %#x", i, lo[i], wl);
        cr_expect_eq(hi[i], wh, "hi[%d] = %#x, want %#x", i, hi[i], wh);
    }
    unload(&k);
}

Test(lang_asm, inline_asm_pack_and_results) {
    asm_pack(64);
    asm_pack(512);
}

/* A packed group's padding repeats its first element: an asm that loads through pointer arguments reads a real
 * address on a thread that holds one element (the padding was 0: a null pointer, a memcheck fault). */
Test(lang_asm, inline_asm_padding_repeats_a_real_element) {
    static const char *src =
        "kernel k(x: *f32, y: *f32) {\n"
        "    let o = arange(0, 64);\n"
        "    let v = inline_asm_elementwise(\"ld.global.f32 $0, [$2]; ld.global.f32 $1, [$3];\", \"=f,=f,l,l\", [x + o], f32, false, 2);\n"
        "    store(y + o, v * 2.0);\n"
        "}\n";
    K k;
    load_src(&k, src, "k");
    float x[64], y[64];
    for (int i = 0; i < 64; i++) x[i] = (float)i * 0.75f - 3.0f;
    memset(y, 0xee, sizeof y);
    uint64_t dx = upload(&k, x, sizeof x), dy = upload(&k, y, sizeof y);
    void *params[] = {&dx, &dy};
    launch(&k, 1, params);
    download(&k, y, dy, sizeof y);
    for (int i = 0; i < 64; i++) cr_expect_eq(y[i], 2 * x[i], "y[%d] = %g, want %g", i, y[i], 2 * x[i]);
    unload(&k);
}

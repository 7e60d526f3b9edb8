/* test_emu_refuse.c - PTX that ptxas refuses is refused by the emulator at load, with its line and what is wrong,
 * and the forms next to it that ptxas takes still load.  Each refused case is also shown to ptxas when it is
 * installed (it must refuse it too: the emulator refuses only what ptxas does), and each accepted one must
 * assemble.
 *
 *   header       a module without .version, or without .target right after it, or with .version twice; .version's
 *                number on another line, .target without a name, .address_size twice; the free-form headers ptxas
 *                takes (directives sharing a line, a directive's parts on several) load
 *   version      a .version newer than 9.0 (the newest ptxas of CUDA 13.0 reads) or between the known ones (8.9), or
 *                older than the .target needs
 *   dup_reg      a register declared twice in one scope (a name, a range <N>, a name inside a range, the name of a
 *                parameter or variable of the scope); nested scopes may declare a name again
 *   label_opd    a label as an operand of anything but bra and brx.idx (it read the sink)
 *   atom_types   atom/red types the operation does not take (atom.add.b16, atom.exch.u32, atom.inc.s32)
 *   big_global   an array the emulator cannot allocate is reported at its own line (it was "ptx:1")
 *   reg_types    a register whose declared type does not fit the instruction's (add.f32 on .b64 registers), with
 *                ld/st/cvt's relaxed rule (wider registers); the accepted forms compute what the host does
 *   op_types     an instruction type its opcode does not take (add.b32, min.b32, setp.lt.b32, shl.u32, add.pred,
 *                mul.lo.f32, integer mul without .lo/.hi/.wide); every type ptxas takes still loads
 *   missing_types  an instruction with no type (setp.lt %p1, .., add, mov, ld, shfl.sync.idx, vote.sync.all): it ran
 *                on 0-byte operands
 *   cvt_rounding cvt without the rounding its types need, or with one they do not take (cvt.u32.f32 truncated,
 *                cvt.f32.f64 rounded to nearest: the emulator's choice)
 *   float_mods   a rounding, .approx/.full, .ftz, .sat or .NaN an integer, .f32 or .f64 form does not take, or a
 *                missing one it needs (div.f32, fma.f64 without rounding; add.rn.u32, add.sat.f64, fma.rn.ftz.f64)
 *   more_types   slct, set, bfe, bfi, prmt, shf, mul24, mad24, sad, ld/ldu/st types ptxas refuses (ld.global.f16), shf
 *                without .clamp/.wrap, mul24 without .lo/.hi, atom/red .f16/.bf16 adds without .noftz
 *   cvt_modifiers  cvt .ftz with no .f32, integer .sat where nothing saturates, .rna off tf32
 *   const_bank_and_label_names  .const data past 64 KiB; a label named as a register, variable or parameter of its
 *                block (either order); bra to a label an outer register shares a name with still loads
 *   flag_ops     a rounding, .ftz, .sat, .NaN/.xorsign or .relu on an opcode or type that takes none (mov.rn, selp.ftz,
 *                and.sat, max.NaN.s32, min.relu.f32)
 *   cvt_bf16_bytes  cvt between .bf16 and .u8/.s8 with the byte in a wider register (ptxas wants an 8-bit one); the
 *                8-bit forms run
 *   cache_mods   ld/st cache operators with eviction priorities, strong orders or the wrong op; .L1::/.L2:: hints off
 *                .global and generic; .volatile with them; ld.global.nc with a memory order
 *   unsupported_features  what ptxas takes but the emulator cannot run (textures, surfaces, a device-side
 *                launch) is refused with the instruction and its line
 *   line_info    .file twice, malformed or in a body; .loc without its column, at module scope, with a number or ';'
 *                after it (an instruction on its line loads),
 *                inlined_at naming no earlier .loc's location, function_name naming no .section label; .target
 *                debug without a .debug_* section
 * The gates of each feature by .version and .target (refuse/gates, refuse/blackwell_forms_need_sm_100) are in
 * test_emu_diff.c. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "test_emu_refusals.h"

#define HEAD ".version 8.0\n.target sm_90\n.address_size 64\n"

#define K(body) HEAD ".visible .entry k()\n{\n" body "\n ret;\n}\n" /* the body starts at line 6 */

Test(refuse, header) {
    static const Bad bad[] = {
        {".target sm_90\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n", "ptx:1: the PTX must begin with .version, then .target: expected .version, found '.target'"},
        {"// a comment\n\n.visible .entry k()\n{\n ret;\n}\n", "ptx:3: the PTX must begin with .version, then .target: expected .version, found '.visible'"},
        {".version 8.0\n.address_size 64\n.target sm_90\n.visible .entry k()\n{\n ret;\n}\n", "ptx:2: the PTX must begin with .version, then .target: expected .target, found '.address_size'"},
        {".version 8.0\n.version 8.0\n.target sm_90\n.visible .entry k()\n{\n ret;\n}\n", "ptx:2: the PTX must begin with .version, then .target: expected .target, found '.version'"},
        {HEAD ".version 8.0\n.visible .entry k()\n{\n ret;\n}\n", "ptx:4: .version given twice"},
        {"", "ptx:1: the PTX must begin with .version, then .target: expected .version, found the end of the PTX"},
        {".version 8.0\n.target debug, sm_90\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n",
         "ptx:2: .target names the architecture first, then 'debug'"},
        {".version 8.0\n.target texmode_unified, sm_90\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n",
         "ptx:2: .target names the architecture first, then 'texmode_unified'"},
        /* free-form, but as ptxas: .version and its number on one line ("Missing .version directive"), .target with
         * a name after it and after each ',', one .address_size */
        {".version\n8.0\n.target sm_90\n.visible .entry k()\n{\n ret;\n}\n", "ptx:1: bad .version"},
        {".version 8.0\n.target\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n", "ptx:2: bad .target: expected an architecture name, found '.address_size'"},
        {".version 8.0\n.target sm_90,\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n", "ptx:2: bad .target: expected a name after ',', found '.address_size'"},
        {HEAD ".address_size 64\n.visible .entry k()\n{\n ret;\n}\n", "ptx:4: .address_size given twice (line 3 has it"},
        {".version 8.0\n.target sm_90\n.address_size\n64 .address_size 64\n.visible .entry k()\n{\n ret;\n}\n", "ptx:4: .address_size given twice"},
        {".version 8.0\n.target sm_90\n.address_size .visible .entry k()\n{\n ret;\n}\n", "ptx:3: bad .address_size '.visible'"},
    };
    static const char *const good[] = {
        "// a comment first\n.version 8.0 // and after\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n",
        ".version 8.0\n.target sm_90\n.target sm_90\n.visible .entry k()\n{\n ret;\n}\n", /* .target again: ptxas takes it */
        ".version 8.0\n.target sm_90, texmode_unified\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n",
        /* free-form: directives share lines, and a directive's parts span them */
        ".version 8.0 .target sm_90 .address_size 64 .visible .entry k() { ret; }\n",
        ".version 8.0\n.target\nsm_90\n,\ntexmode_unified .address_size\n64 .global .u32 g; .visible .entry k()\n{\n ret;\n}\n",
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90");
}

/* The PTX ISA versions ptxas of CUDA 13.4 reads (1.0-1.5 ... 8.0-8.8, 9.0-9.4; Triton 3.9 writes 9.4 for sm_90): a
 * newer one is refused at its line naming the newest, one between them (8.9, 7.9) as no version at all; each as ptxas
 * refuses it. */
#define VER(v, t) ".version " v "\n.target " t "\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n"
Test(refuse, version) {
    static const Bad bad[] = {
        {VER("9.5", "sm_90"), "ptx:1: unsupported .version 9.5: the newest PTX ISA version the emulator reads is 9.4"},
        {VER("9.10", "sm_90"), "ptx:1: unsupported .version 9.10: the newest PTX ISA version the emulator reads is 9.4"},
        {VER("10.0", "sm_90"), "ptx:1: unsupported .version 10.0: the newest"},
        {VER("8.9", "sm_90"), "ptx:1: unsupported .version 8.9: no PTX ISA has that version (the emulator reads 1.0-1.5, 2.0-2.3, "
                              "3.0-3.2, 4.0-4.3, 5.0-5.1, 6.0-6.5, 7.0-7.8, 8.0-8.8, 9.0-9.4"},
        {VER("7.9", "sm_90"), "ptx:1: unsupported .version 7.9: no PTX ISA has that version"},
        {VER("6.6", "sm_75"), "ptx:1: unsupported .version 6.6: no PTX ISA"},
        {VER("0.9", "sm_90"), "ptx:1: unsupported .version 0.9: no PTX ISA"},
        {VER("7.7", "sm_90"), "ptx:2: PTX .version 7.7 does not support .target sm_90: it needs .version 7.8 or later"},
        {VER("5.0", "sm_70"), "ptx:2: PTX .version 5.0 does not support .target sm_70: it needs .version 5.1 or later"},
    };
    static const char *const good[] = {VER("9.0", "sm_90"), VER("8.8", "sm_90"), VER("7.8", "sm_90"), VER("8.01", "sm_90"),
                                       VER("5.1", "sm_70"), VER("6.5", "sm_75")};
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90");
    /* a minor of 10 or more: no PTX ISA has one (ptxas reads 7.10 as 8.0 and takes it; the emulator refuses it) */
    TileDevice *d = open_emu(false);
    TileDevModule *m = NULL;
    cr_expect_eq(dev_module_load_ptx(d, VER("7.10", "sm_90"), &m), DEV_ERR_PTX);
    cr_expect(strstr(dev_last_error(d), "ptx:1: unsupported .version 7.10: no PTX ISA has that version"), "%s", dev_last_error(d));
    /* 9.1-9.4: read (ptxas of CUDA 13.4 takes them; the installed ptxas may be older, so it is not asked) */
    static const char *const newer[] = {VER("9.4", "sm_90a"), VER("9.3", "sm_80"), VER("9.1", "sm_100a")};
    for (size_t i = 0; i < ARRAY_LEN(newer); i++) {
        m = NULL;
        cr_expect_eq(dev_module_load_ptx(d, newer[i], &m), DEV_OK, "%s: %s", newer[i], dev_last_error(d));
        if (m) dev_module_unload(m);
    }
    dev_close(d);
}

Test(refuse, dup_reg) {
    static const Bad bad[] = {
        {K(" .reg .b32 %r<4>;\n .reg .b32 %r<4>;"), "ptx:7: registers '%r<4>' are declared twice in one scope"},
        {K(" .reg .b32 %r<4>;\n .reg .f32 %r<2>;"), "ptx:7: registers '%r<2>' are declared twice in one scope"},
        {K(" .reg .b32 %r1;\n .reg .b32 %r1;"), "ptx:7: register '%r1' is declared twice in one scope"},
        {K(" .reg .b32 %r<4>;\n .reg .b32 %r3;"), "ptx:7: register '%r3' is declared twice in one scope"},
        {K(" .reg .b32 %r<4>;\n .reg .b32 %r03;"), "ptx:7: register '%r03' is declared twice in one scope"},
        {K(" .reg .b32 %r2;\n .reg .b64 %r<8>;"), "ptx:7: registers '%r<8>' are declared twice in one scope"},
        {K(" .reg .b32 a, a;"), "ptx:6: register 'a' is declared twice in one scope"},
        {K(" .reg .v4 .b32 %v;\n .reg .b32 %v;"), "ptx:7: register '%v' is declared twice in one scope"},
        {K(" { .reg .b32 %q;\n .reg .b32 %q; }"), "ptx:7: register '%q' is declared twice in one scope"},
        {K(" .local .b32 a;\n .reg .b32 a;"), "ptx:7: register 'a' has the name of a variable or parameter of its scope"},
        {HEAD ".visible .entry k(.param .u64 a)\n{\n .reg .b64 a;\n ret;\n}\n", "ptx:6: register 'a' has the name of a variable or parameter"},
        {HEAD ".func (.reg .b32 r) f(.reg .b32 b)\n{\n .reg .b32 b;\n ret;\n}\n", "ptx:6: register 'b' is declared twice in one scope"},
    };
    static const char *const good[] = {
        K(" .reg .b32 %r<4>;\n .reg .b32 %r4;\n .reg .b32 %r;\n .reg .b32 %r4<2>;"), /* %r4, %r, %r40 %r41: none of %r0..%r3 */
        K(" .reg .b32 %r1;\n { .reg .b32 %r1; }\n { .reg .b32 %r1;\n { .reg .b32 %r1; } }"), /* a nested scope hides */
        HEAD ".global .u32 a;\n.visible .entry k()\n{\n .reg .b32 a;\n ret;\n}\n", /* a module variable's name */
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90");
}

Test(refuse, label_opd) {
    static const Bad bad[] = {
        {K(" .reg .b32 %r<2>;\nL1:\n add.u32 %r1, L1, 1;"), "ptx:8: label 'L1' as an operand of add"},
        {K(" .reg .b64 %rd<2>;\nL1:\n mov.u64 %rd1, L1;"), "ptx:8: label 'L1' as an operand of mov"},
        {K(" .reg .b32 %r<2>;\n .reg .pred %p;\n setp.eq.u32 %p, %r1, L2;\nL2:"), "ptx:8: label 'L2' as an operand of setp"},
        /* brx.idx goes to its table + 1 + index: through a plain label it ran the code after the label as bras */
        {K(" .reg .b32 %r<2>;\n mov.u32 %r1, 0;\n brx.idx %r1, L1;\nL1:\n mov.u32 %r1, 1;"),
         "ptx:8: brx.idx's operand 'L1' is not a .branchtargets table (label: .branchtargets L0, L1, ...;)"},
        {K(" .reg .b32 %r<2>;\n mov.u32 %r1, 0;\n brx.idx %r1, T;\nT: .branchtargets L1;\nL1:"),
         "ptx:8: brx.idx's operand 'T' is a .branchtargets table declared after the brx.idx"},
    };
    static const char *const good[] = {
        K(" .reg .b32 %r<2>;\n .reg .pred %p;\n mov.u32 %r1, 0;\n setp.eq.u32 %p, %r1, 0;\n @%p bra L1;\nL1:\n"
          "T: .branchtargets L1, L2;\n brx.idx %r1, T;\nL2:"),
        HEAD ".func f()\n{\n ret;\n}\n.visible .entry k()\n{\n .reg .b64 %rd;\n mov.u64 %rd, f;\n ret;\n}\n",
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90");
}

#define A(ins) K(" .reg .b32 %r<4>;\n .reg .b64 %rd<5>;\n .reg .b16 %h<4>;\n " ins ";")
Test(refuse, atom_types) {
    static const Bad bad[] = {
        {A("atom.global.add.b16 %h1, [%rd2], %h2"), "ptx:9: unsupported atomic 'atom.global.add.b16'"},
        {A("atom.global.add.b32 %r1, [%rd2], %r2"), "ptx:9: unsupported atomic 'atom.global.add.b32'"},
        {A("atom.global.add.s64 %rd1, [%rd2], %rd3"), "ptx:9: unsupported atomic"},
        {A("atom.global.exch.u32 %r1, [%rd2], %r2"), "ptx:9: unsupported atomic"},
        {A("atom.global.exch.b16 %h1, [%rd2], %h2"), "ptx:9: unsupported atomic"},
        {A("atom.global.cas.u32 %r1, [%rd2], %r2, %r3"), "ptx:9: unsupported atomic"},
        {A("atom.global.and.u32 %r1, [%rd2], %r2"), "ptx:9: unsupported atomic"},
        {A("atom.global.inc.s32 %r1, [%rd2], %r2"), "ptx:9: unsupported atomic"},
        {A("atom.global.min.b32 %r1, [%rd2], %r2"), "ptx:9: unsupported atomic"},
        {A("red.global.exch.b32 [%rd2], %r2"), "ptx:9: unsupported atomic"},
        {A("red.global.add.b16 [%rd2], %h2"), "ptx:9: unsupported atomic"},
    };
    static const char *const good[] = {
        A("atom.global.add.u32 %r1, [%rd2], %r2;\n atom.global.add.s32 %r1, [%rd2], %r2;\n atom.global.add.u64 %rd1, [%rd2], %rd3;\n"
          " atom.global.add.f32 %r1, [%rd2], %r2;\n atom.global.add.f64 %rd1, [%rd2], %rd3;\n atom.global.add.noftz.f16 %h1, [%rd2], %h2;\n"
          " atom.global.add.noftz.bf16 %h1, [%rd2], %h2;\n atom.global.add.noftz.f16x2 %r1, [%rd2], %r2;\n"
          " atom.global.and.b32 %r1, [%rd2], %r2;\n atom.global.xor.b64 %rd1, [%rd2], %rd3;\n atom.global.min.s64 %rd1, [%rd2], %rd3;\n"
          " atom.global.max.u32 %r1, [%rd2], %r2;\n atom.global.inc.u32 %r1, [%rd2], %r2;\n atom.global.dec.u32 %r1, [%rd2], %r2;\n"
          " atom.global.exch.b64 %rd1, [%rd2], %rd3;\n atom.global.cas.b16 %h1, [%rd2], %h2, %h3;\n"
          " atom.global.cas.b32 %r1, [%rd2], %r2, %r3;\n red.global.add.u64 [%rd2], %rd3;\n red.global.or.b32 [%rd2], %r2;\n"
          " red.global.max.s32 [%rd2], %r2;\n red.global.dec.u32 [%rd2], %r2"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90");
    /* .bf16 adds are sm_90's */
    static const Bad bad80[] = {
        {".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n .reg .b64 %rd;\n .reg .b16 %h;\n"
         " atom.global.add.noftz.bf16 %h, [%rd], %h;\n ret;\n}\n", "ptx:8: unsupported atomic"},
    };
    expect_refused(bad80, ARRAY_LEN(bad80), NULL, 0, "sm_80");
}

Test(refuse, big_global) {
    TileDevice *d = open_emu(false);
    static const Bad bad[] = {
        {HEAD ".global .u32 ok;\n\n.global .b8 big[65536][65536][65536];\n.visible .entry k()\n{\n ret;\n}\n",
         "ptx:6: array 'big' is larger than the emulator can allocate"},
        {HEAD ".global .b8 wrap[4294967296][4294967296];\n.visible .entry k()\n{\n ret;\n}\n", "ptx:4: array 'wrap' is larger"},
        /* under the emulator's 2^40-byte limit in elements, over it in bytes: the allocation fails, at the variable */
        {HEAD "\n.global .u64 a[1099511627775];\n.visible .entry k()\n{\n ret;\n}\n", "ptx:5: no memory for .global variable 'a'"},
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        TileDevModule *m = NULL;
        cr_expect_eq(dev_module_load_ptx(d, bad[i].ptx, &m), DEV_ERR_PTX, "loaded:\n%s", bad[i].ptx);
        cr_expect(strstr(dev_last_error(d), bad[i].want), "'%s' not in: %s", bad[i].want, dev_last_error(d));
    }
    dev_close(d);
}

/* A kernel's performance directives and parameter space as ptxas bounds them: .reqntid/.maxntid/.maxnreg/
 * .minnctapersm of 0 ("Positive non-zero value expected"), a value over 32 bits, a fourth dimension, .reqntid with
 * .maxntid, and parameters past 4352 bytes (32764 from PTX 8.1 on sm_70 and later).  Each loaded: a .reqntid 0
 * kernel was refused at every launch, for its block. */
#define KD(v, t, params, dirs) ".version " v "\n.target " t "\n.address_size 64\n.visible .entry k(" params ")\n" dirs "\n{\n ret;\n}\n"
Test(refuse, kernel_limits) {
    static const Bad bad[] = {
        {KD("8.0", "sm_90", "", ".reqntid 0"), "ptx:5: .reqntid with a 0: its values are positive"},
        {KD("8.0", "sm_90", "", ".reqntid 32, 1, 0"), "ptx:5: .reqntid with a 0"},
        {KD("8.0", "sm_90", "", ".maxntid 0, 4"), "ptx:5: .maxntid with a 0"},
        {KD("8.0", "sm_90", "", ".maxnreg 0"), "ptx:5: .maxnreg with a 0"},
        {KD("8.0", "sm_90", "", ".maxntid 64\n.minnctapersm 0"), "ptx:6: .minnctapersm with a 0"},
        {KD("8.0", "sm_90", "", ".maxntid 4294967297"), "ptx:5: .maxntid 4294967297: the value does not fit 32 bits"},
        {KD("8.0", "sm_90", "", ".reqntid 2, 2, 2, 2"), "ptx:5: .reqntid has at most three values"},
        {KD("8.0", "sm_90", "", ".reqntid 64\n.maxntid 128"), "ptx:6: .reqntid and .maxntid given together"},
        {KD("8.0", "sm_90", "", ".maxclusterrank 4\n.reqnctapercluster 2"), "ptx:6: .reqnctapercluster and .maxclusterrank given together"},
        {KD("7.0", "sm_80", ".param .align 4 .b8 a[4353]", ""), "ptx:4: kernel 'k' has 4353 bytes of parameters: PTX 7.0 allows 4352"},
        /* to the end of the last parameter, its alignment counted */
        {KD("8.0", "sm_90", ".param .u8 x, .param .align 8 .b8 a[4345]", ""), "ptx:4: kernel 'k' has 4353 bytes of parameters: PTX 8.0 allows 4352"},
        {KD("8.1", "sm_80", ".param .u8 x, .param .align 8 .b8 a[32757]", ""), "kernel 'k' has 32765 bytes of parameters: PTX 8.1 allows 32764"},
        {KD("8.6", "sm_90", ".param .align 4 .b8 a[32765]", ""), "PTX 8.6 allows 32764"},
    };
    static const char *const good[] = {
        KD("8.0", "sm_90", "", ".reqntid 32, 1, 1\n.minnctapersm 1\n.maxnreg 32"),
        KD("8.0", "sm_90", "", ".maxntid 2048\n.reqnctapercluster 0"),
        KD("8.0", "sm_90", "", ".maxntid 2048\n.maxclusterrank 0"),
        KD("7.0", "sm_80", ".param .u8 x, .param .align 8 .b8 a[4344]", ""),
        KD("8.1", "sm_80", ".param .u8 x, .param .align 8 .b8 a[32756]", ""),
        /* a .func's parameters are not the kernel's parameter space */
        ".version 7.0\n.target sm_80\n.address_size 64\n.func f(.param .align 4 .b8 a[8192])\n{\n ret;\n}\n"
        ".visible .entry k()\n{\n ret;\n}\n",
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90");
}

/* .pragma where ptxas takes it (a module's and a signature's "nounroll" were refused as unknown directives) and not
 * where it does not; barrier.cluster's modifiers (barrier.cluster.wait.relaxed loaded, its .relaxed ignored); mapa's
 * and getctarank's operand widths (mapa.u32 of a 64-bit register cut the address to 32 bits). */
#define PR(mod, sig, body) HEAD mod "\n.visible .entry k(.param .u64 p)\n" sig "\n{\n .reg .b32 %r<4>;\n .reg .b64 %rd<4>;\n" \
                           " .shared .align 4 .b32 s;\n " body "\n ret;\n}\n" /* the body's line is 11 */
Test(refuse, pragmas_and_cluster_forms) {
    static const Bad bad[] = {
        {PR(".pragma \"used_bytes_mask 0xf\";", "", ""), "ptx:4: .pragma \"used_bytes_mask 0xf\" is for a function's body"},
        {PR("", ".pragma \"frequency 4\";", ""), "ptx:6: .pragma \"frequency 4\" is for a function's body"},
        {PR(".pragma \"unroll\";", "", ""), "ptx:4: .pragma \"unroll\" is not one ptxas knows"},
        {PR("", "", ".pragma \"enable_smem_spilling\";"), "ptx:11: .pragma \"enable_smem_spilling\" needs PTX ISA .version 8.7"},
        {PR("", "", ".pragma nounroll;"), "ptx:11: bad .pragma: expected a string in quotes, found 'nounroll'"},
        {PR("", "", ".pragma \"used_bytes_mask 0xff\";"), "ptx:11: .pragma \"used_bytes_mask 0xff\" needs PTX ISA .version 8.3"},
        {PR("", "", "barrier.cluster.wait.relaxed;"),
         "ptx:11: 'barrier.cluster.wait.relaxed': barrier.cluster.wait takes .acquire and .aligned, each at most once, not .relaxed"},
        {PR("", "", "barrier.cluster.arrive.acquire;"), "barrier.cluster.arrive takes .release or .relaxed and .aligned"},
        {PR("", "", "barrier.cluster.arrive.relaxed.release;"), "not .release"},
        {PR("", "", "barrier.cluster.wait.aligned.aligned;"), "not .aligned"},
        {PR("", "", "barrier.cluster.arrive.sync;"), "not .sync"},
        {PR("", "", "mapa.u32 %r3, %rd2, 0;"), "ptx:11: 'mapa.u32': operand 2, register '%rd2' of type .b64, does not fit .u32"},
        {PR("", "", "mapa.u64 %rd3, %r2, 0;"), "operand 2, register '%r2' of type .b32, does not fit .u64"},
        {PR("", "", "getctarank.u32 %r1, %rd2;"), "'getctarank.u32': operand 2, register '%rd2' of type .b64, does not fit .u32"},
        {PR("", "", "getctarank.u64 %rd1, %rd2;"), "operand 1, register '%rd1' of type .b64, does not fit .u32"},
    };
    static const char *const good[] = {
        PR(".pragma \"nounroll\";", ".pragma \"nounroll\";", ".pragma \"nounroll\", \"nounroll\";\n"
           " .pragma \"a_pragma_ptxas_warns_of\";\n ld.param.u64 %rd1, [p];\n ld.global.u32 %r1, [%rd1];"),
        PR("", "", "barrier.cluster.arrive.relaxed.aligned;\n barrier.cluster.wait.acquire.aligned;\n barrier.cluster.arrive.release;\n"
           " barrier.cluster.wait;\n mov.u64 %rd1, s;\n cvta.shared.u64 %rd2, %rd1;\n getctarank.u64 %r1, %rd2;\n"
           " getctarank.shared::cluster.u32 %r2, s;\n mapa.u64 %rd3, %rd2, 0;\n mapa.shared::cluster.u32 %r3, s, 0;"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90a");
    /* multimem, which ptxas takes, is refused by name: the emulator has no multicast objects */
    static const char *const multimem[] = {"multimem.ld_reduce.relaxed.sys.global.add.u32 %r1, [%rd1];",
                                           "multimem.st.relaxed.sys.global.v4.f32 [%rd1], {%r1, %r2, %r3, %r1};",
                                           "multimem.red.release.gpu.global.add.u64 [%rd1], %rd2;"};
    TileDevice *d = open_emu(false);
    for (size_t i = 0; i < ARRAY_LEN(multimem); i++) {
        char ptx[1024], want[200];
        snprintf(ptx, sizeof ptx, ".version 8.1\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
                                  " .reg .b32 %%r<4>;\n .reg .b64 %%rd<4>;\n %s\n ret;\n}\n", multimem[i]);
        snprintf(want, sizeof want, "ptx:8: '%.*s': multimem (loads, stores and reductions", (int)strcspn(multimem[i], " "), multimem[i]);
        TileDevModule *m = NULL;
        cr_expect_eq(dev_module_load_ptx(d, ptx, &m), DEV_ERR_PTX, "loaded:\n%s", ptx);
        cr_expect(strstr(dev_last_error(d), want), "'%s' not in: %s", want, dev_last_error(d));
        check_ptxas_arch(ptx, "sm_90a");
        if (m) dev_module_unload(m);
    }
    dev_close(d);
}

/* What ptxas takes and the emulator cannot run is refused at load with the instruction (or the symbol) and its line:
 * textures and surfaces (nvcc's tex2D / surf2Dread / surf2Dwrite on object handles), and a
 * launch from the device (nvcc -rdc's CUDA dynamic parallelism takes the child entry's address); a .f32 C or D of wmma's
 * sub-byte and single-bit shapes (the ISA defines .s32 ones only). */
Test(refuse, unsupported_features) {
    static const struct { const char *target, *decls, *body, *want; } cases[] = {
        {"sm_80", " .reg .b64 %rd<2>;\n .reg .f32 %f<8>;", "tex.2d.v4.f32.f32 {%f3, %f4, %f5, %f6}, [%rd1, {%f1, %f2}];",
         "ptx:8: 'tex.2d.v4.f32.f32': texture, sampler and surface references and their instructions (tex, tld4, txq, suld, "
         "sust, sured, suq) are not supported by the emulator; instead pass the data as a .global pointer parameter and read "
         "it with ld.global.nc (or run the module on a GPU)"},
        {"sm_80", " .reg .b64 %rd<2>;\n .reg .b32 %r<8>;", "suld.b.2d.b32.trap {%r4}, [%rd1, {%r2, %r3}];",
         "ptx:8: 'suld.b.2d.b32.trap': texture, sampler and surface references"},
        {"sm_80", " .reg .b64 %rd<2>;\n .reg .b32 %r<8>;", "sust.b.2d.b32.trap [%rd1, {%r2, %r3}], {%r5};",
         "ptx:8: 'sust.b.2d.b32.trap': texture, sampler and surface references"},
        {"sm_80", " .reg .b64 %rd<2>;\n .reg .b32 %r<8>;", "txq.width.b32 %r1, [%rd1];", "ptx:8: 'txq.width.b32': texture, sampler"},
        {"sm_80", " .reg .b64 %rd<2>;\n .reg .f32 %f<8>;",
         "tld4.r.2d.v4.f32.f32 {%f3, %f4, %f5, %f6}, [%rd1, {%f1, %f2}];", "ptx:8: 'tld4.r.2d.v4.f32.f32': texture, sampler"},
        {"sm_80", " .reg .b64 %rd<2>;", "mov.u64 %rd1, k;",
         "ptx:7: the address of kernel entry 'k' is taken (mov): a kernel launched from the device (CUDA dynamic parallelism) "
         "is not supported"},
        /* ptxas takes a .f32 C of the sub-byte shapes; the ISA has .s32 only */
        {"sm_80", " .reg .b64 %rd<2>;\n .reg .f32 %f<4>;", "wmma.load.c.sync.aligned.m8n8k32.global.row.f32 {%f1, %f2}, [%rd1];",
         "ptx:8: unsupported wmma form 'wmma.load.c.sync.aligned.m8n8k32.global.row.f32': not supported by the emulator"},
        {"sm_80", " .reg .b64 %rd<2>;\n .reg .f32 %f<4>;", "wmma.store.d.sync.aligned.m8n8k128.global.row.f32 [%rd1], {%f1, %f2};",
         "not supported by the emulator: a .f32 C or D of the sub-byte and single-bit shapes"},
    };
    TileDevice *d = open_emu(false);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char ptx[1024];
        snprintf(ptx, sizeof ptx, ".version 8.0\n.target %s\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n%s\n %s\n ret;\n}\n",
                 cases[i].target, cases[i].decls, cases[i].body);
        TileDevModule *m = NULL;
        cr_expect_eq(dev_module_load_ptx(d, ptx, &m), DEV_ERR_PTX, "loaded:\n%s", ptx);
        cr_expect(strstr(dev_last_error(d), cases[i].want), "'%s' not in: %s", cases[i].want, dev_last_error(d));
        check_ptxas_arch(ptx, cases[i].target);
        if (m) dev_module_unload(m);
    }
    /* texture, sampler and surface references, declared in the module or as a kernel's parameters: refused at their
     * line with what to do instead (a .texref read "unsupported declaration qualifier") */
    static const struct { const char *ptx, *want; } refs[] = {
        {".version 8.0\n.target sm_80\n.address_size 64\n.global .texref t;\n.visible .entry k()\n{\n ret;\n}\n",
         "ptx:4: '.texref': texture, sampler and surface references and their instructions (tex, tld4, txq, suld, sust, sured, suq) "
         "are not supported by the emulator; instead pass the data as a .global pointer parameter and read it with ld.global.nc"},
        {".version 8.0\n.target sm_80\n.address_size 64\n.global .surfref t;\n.visible .entry k()\n{\n ret;\n}\n",
         "ptx:4: '.surfref': texture, sampler and surface references"},
        {".version 8.0\n.target sm_80, texmode_independent\n.address_size 64\n.global .samplerref t;\n.visible .entry k()\n{\n ret;\n}\n",
         "ptx:4: '.samplerref': texture, sampler and surface references"},
        {".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p,\n.param .texref t)\n{\n ret;\n}\n",
         "ptx:5: '.texref': texture, sampler and surface references"},
    };
    for (size_t i = 0; i < ARRAY_LEN(refs); i++) {
        TileDevModule *m = NULL;
        cr_expect_eq(dev_module_load_ptx(d, refs[i].ptx, &m), DEV_ERR_PTX, "loaded:\n%s", refs[i].ptx);
        cr_expect(strstr(dev_last_error(d), refs[i].want), "'%s' not in: %s", refs[i].want, dev_last_error(d));
        check_ptxas_arch(refs[i].ptx, "sm_80");
        if (m) dev_module_unload(m);
    }
    dev_close(d);
}

/* Register types against instruction types.  The refused forms are each one register off a form ptxas takes. */
#define T(body) K(" .reg .b32 %r<4>;\n .reg .b64 %rd<4>;\n .reg .f32 %f<4>;\n .reg .u32 %u<4>;\n .reg .b16 %h<4>;\n" \
                  " .reg .pred %p<2>;\n .reg .f64 %fd<2>;\n .reg .s64 %sd<2>;\n .reg .u16 %us<2>;\n " body)
Test(refuse, reg_types) {
    static const Bad bad[] = {
        {T("add.f32 %rd1, %rd2, %rd3;"), "ptx:15: 'add.f32': operand 1, register '%rd1' of type .b64, does not fit .f32"},
        {T("add.f32 %f1, %f2, %u1;"), "ptx:15: 'add.f32': operand 3, register '%u1' of type .u32, does not fit .f32"},
        {T("add.u32 %f1, %r2, %r3;"), "operand 1, register '%f1' of type .f32, does not fit .u32"},
        {T("add.u32 %r1, %r2, %h3;"), "operand 3, register '%h3' of type .b16"},
        {T("mul.lo.u64 %rd1, %rd2, %r1;"), "operand 3, register '%r1' of type .b32"},
        {T("mul.wide.u32 %rd1, %rd2, %r1;"), "operand 2, register '%rd2' of type .b64"},
        {T("mad.lo.s32 %r1, %r2, %r3, %fd1;"), "operand 4, register '%fd1'"},
        {T("fma.rn.f64 %fd1, %fd1, %f1, %fd1;"), "operand 3, register '%f1' of type .f32"},
        {T("mov.u32 %f1, %r1;"), "operand 1, register '%f1' of type .f32, does not fit .u32"},
        {T("mov.f64 %fd1, %sd1;"), "operand 2, register '%sd1' of type .s64"},
        {T("mov.b32 %r1, %rd1;"), "operand 2, register '%rd1'"},
        {T("mov.pred %p1, %r1;"), "operand 2, register '%r1' of type .b32, does not fit .pred"},
        {T("and.b32 %p1, %r1, %r2;"), "operand 1, register '%p1' of type .pred"},
        {T("setp.lt.f32 %p1, %u1, %f2;"), "operand 2, register '%u1'"},
        {T("selp.b64 %rd1, %r1, %rd2, %p1;"), "operand 2, register '%r1'"},
        {T("shl.b32 %r1, %rd1, 3;"), "operand 2, register '%rd1'"},
        {T("neg.s32 %r1, %f1;"), "operand 2, register '%f1'"},
        {T("ld.global.u32 %h1, [%rd1];"), "ptx:15: 'ld.global.u32': operand 1, register '%h1' of type .b16, does not fit .u32 (a register at least as wide"},
        {T("ld.global.u32 %f1, [%rd1];"), "operand 1, register '%f1' of type .f32"},
        {T("ld.global.f32 %u1, [%rd1];"), "operand 1, register '%u1' of type .u32"},
        {T("ld.global.v2.f32 {%f1, %us1}, [%rd1];"), "operand 1, register '%us1' of type .u16"},
        {T("st.global.u64 [%rd1], %r1;"), "operand 2, register '%r1' of type .b32"},
        {T("cvt.rn.f32.u32 %f1, %f2;"), "ptx:15: 'cvt.rn.f32.u32': operand 2, register '%f2' of type .f32"},
        {T("cvt.u32.u16 %h1, %h2;"), "operand 1, register '%h1' of type .b16"},
        {T("cvt.u64.u32 %rd1, %h1;"), "operand 2, register '%h1' of type .b16"},
    };
    static const char *const good[] = {
        /* .b registers of the size fit every type; .u and .s fit each other; .f16x2 fits anything (ptxas's way) */
        T("add.f32 %r1, %r2, %f1;\n add.u32 %u1, %r2, %u3;\n add.s32 %u1, %r2, %u3;\n add.s64 %rd1, %sd1, %rd2;\n"
          " mul.wide.u32 %rd1, %r1, %u1;\n mul.wide.s16 %r1, %h1, %us1;\n mad.wide.u32 %sd1, %u1, %r2, %rd3;\n"
          " mov.b64 %fd1, %sd1;\n mov.b32 %f1, %u1;\n mov.b64 %rd1, {%r1, %f1};\n mov.b32 {%h1, %us1}, %f2;\n"
          " setp.lt.s32 %p1, %u1, %r1;\n selp.f32 %f1, %r1, %f2, %p1;\n shl.b64 %sd1, %fd1, %r1;\n shr.s16 %us1, %h1, %u1;\n"
          " and.pred %p1, %p0, %p1;\n not.b16 %us1, %h1;\n"
          " add.f16x2 %r1, %r2, %r3;\n fma.rn.f16 %h1, %h2, %h3, %h1;\n mov.u32 %u1, %tid.x;\n add.u64 %rd1, %rd1, 8;"),
        /* ld, st, cvt: a register at least as wide as the type */
        T("ld.global.u8 %r1, [%rd1];\n ld.global.s16 %sd1, [%rd1];\n ld.global.b8 %f1, [%rd1];\n ld.global.u32 %rd1, [%rd1];\n"
          " ld.global.f32 %rd2, [%rd1];\n ld.global.v4.u32 {%r0, %u1, %r2, %u3}, [%rd1];\n st.global.u8 [%rd1], %u1;\n"
          " st.global.b16 [%rd1], %fd1;\n st.global.v2.f32 [%rd1], {%f1, %r2};\n"
          " cvt.u32.u8 %r1, %h1;\n cvt.rn.f32.u16 %f1, %r1;\n cvt.u64.u32 %rd1, %sd1;\n cvt.rzi.s32.f32 %u1, %f1;\n"
          " cvt.rn.f16.f32 %h1, %f1;\n cvt.f32.f16 %f1, %h1;\n cvt.u16.u32 %us1, %u1;"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90");
}

/* What the accepted mixed forms compute: a .b32 register read by add.f32 and add.u32, ld.u8 zero-extending into a
 * .b64 register, ld.s16 sign-extending, cvt.u32.u8 of a .b16 register reading its low byte. */
Test(refuse, reg_types_run) {
    TileDevice *d = open_emu(false);
    static const char *ptx = HEAD
        ".visible .entry k(.param .u64 out, .param .u64 in)\n{\n .reg .b32 %r<4>;\n .reg .b64 %rd<6>;\n .reg .f32 %f<2>;\n"
        " .reg .b16 %h;\n .reg .s64 %sd;\n"
        " ld.param.u64 %rd1, [out];\n ld.param.u64 %rd2, [in];\n cvta.to.global.u64 %rd1, %rd1;\n cvta.to.global.u64 %rd2, %rd2;\n"
        " ld.global.b32 %r1, [%rd2];\n ld.global.f32 %f1, [%rd2+4];\n add.f32 %r2, %r1, %f1;\n st.global.b32 [%rd1], %r2;\n"
        " add.u32 %r3, %r1, 1;\n st.global.u32 [%rd1+4], %r3;\n"
        " ld.global.u8 %rd3, [%rd2+8];\n st.global.u64 [%rd1+8], %rd3;\n"
        " ld.global.s16 %sd, [%rd2+10];\n st.global.s64 [%rd1+16], %sd;\n"
        " ld.global.b16 %h, [%rd2+12];\n cvt.u32.u8 %r1, %h;\n st.global.u32 [%rd1+24], %r1;\n"
        " ret;\n}\n";
    check_ptxas_arch(ptx, "sm_90");
    uint8_t in[16];
    for (int i = 0; i < 16; i++) in[i] = (uint8_t)rnd64();
    float a = rndf(-10, 10), b = rndf(-10, 10);
    memcpy(in, &a, 4);
    memcpy(in + 4, &b, 4);
    in[8] |= 0x80; /* zero-extended all the same */
    in[11] |= 0x80; /* a negative s16 */
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t po = poisoned(d, 32), pi = upload(d, in, sizeof in);
    void *params[] = {&po, &pi};
    cr_assert_eq(dev_launch(f, 1, 1, 1, 1, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
    uint8_t out[32];
    download(d, out, po, sizeof out);
    float sum;
    uint32_t inc, low;
    uint64_t zext;
    int64_t sext;
    int16_t s16;
    memcpy(&sum, out, 4);
    memcpy(&inc, out + 4, 4);
    memcpy(&zext, out + 8, 8);
    memcpy(&sext, out + 16, 8);
    memcpy(&low, out + 24, 4);
    memcpy(&s16, in + 10, 2);
    cr_expect_eq(sum, a + b);
    cr_expect_eq(inc, f2u(a) + 1);
    cr_expect_eq(zext, (uint64_t)in[8]);
    cr_expect_eq(sext, (int64_t)s16);
    cr_expect_eq(low, (uint32_t)in[12]);
    dev_free(d, po);
    dev_free(d, pi);
    dev_module_unload(m);
    dev_close(d);
}

/* cvt between .bf16 and .u8/.s8 (sm_90): ptxas wants the byte in an 8-bit register (.b8, .u8, .s8), not the wider
 * register ld/st/cvt take elsewhere ("Arguments mismatch"; .f16 and .f32 with .u8 keep the relaxed rule).  Before:
 * cvt.rn.bf16.u8 of a .b16 register loaded and ran.  The byte forms compute the host's values. */
#define B8(body) K(" .reg .b16 %h<4>;\n .reg .u16 %us<2>;\n .reg .b32 %r<4>;\n .reg .b8 %c<2>;\n .reg .u8 %uc<2>;\n" \
                   " .reg .s8 %sc<2>;\n .reg .f32 %f<2>;\n mov.b16 %h1, 0;\n mov.b32 %r1, 0;\n mov.b16 %us1, 0;\n " body)
Test(refuse, cvt_bf16_bytes) {
    static const Bad bad[] = {
        {B8("cvt.rn.bf16.u8 %h2, %h1;"), "ptx:16: 'cvt.rn.bf16.u8': operand 2, register '%h1' of type .b16, does not fit .u8"},
        {B8("cvt.rn.bf16.s8 %h2, %us1;"), "operand 2, register '%us1' of type .u16, does not fit .s8"},
        {B8("cvt.rz.bf16.u8 %h2, %r1;"), "operand 2, register '%r1' of type .b32, does not fit .u8"},
        {B8("cvt.rni.u8.bf16 %h2, %h1;"), "ptx:16: 'cvt.rni.u8.bf16': operand 1, register '%h2' of type .b16, does not fit .u8"},
        {B8("cvt.rzi.s8.bf16 %r2, %h1;"), "operand 1, register '%r2' of type .b32, does not fit .s8"},
    };
    static const char *const good[] = {
        B8("cvt.rn.bf16.u8 %h2, %c1;\n cvt.rn.bf16.s8 %h2, %sc1;\n cvt.rm.bf16.u8 %h2, %sc1;\n cvt.rn.bf16.u8 %h2, 200;\n"
           " cvt.rni.u8.bf16 %uc1, %h1;\n cvt.rzi.s8.bf16 %c1, %h1;\n cvt.rpi.s8.bf16 %uc1, %h1;"),
        B8("cvt.rn.f16.u8 %h2, %h1;\n cvt.rn.f16.s8 %h2, %r1;\n cvt.rni.u8.f16 %h2, %h1;\n cvt.rzi.s8.f32 %r2, %f1;\n"
           " cvt.rn.f32.u8 %f1, %us1;\n cvt.rn.bf16.u16 %h2, %us1;\n cvt.rn.bf16.s32 %h2, %r1;"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90");
    /* the byte forms run: s8 -> bf16 (exact), bf16 -> u8 rounded to nearest, bf16 -> s8 toward zero */
    TileDevice *d = open_emu(false);
    static const char *ptx = HEAD
        ".visible .entry k(.param .u64 out, .param .u64 in)\n{\n .reg .b64 %rd<3>;\n .reg .s8 %sc;\n .reg .u8 %uc;\n"
        " .reg .b16 %h<3>;\n"
        " ld.param.u64 %rd1, [out];\n ld.param.u64 %rd2, [in];\n"
        " ld.global.s8 %sc, [%rd2];\n cvt.rn.bf16.s8 %h1, %sc;\n st.global.b16 [%rd1], %h1;\n"
        " ld.global.b16 %h2, [%rd2+2];\n cvt.rni.u8.bf16 %uc, %h2;\n st.global.u8 [%rd1+2], %uc;\n"
        " cvt.rzi.s8.bf16 %sc, %h2;\n st.global.s8 [%rd1+3], %sc;\n"
        " ret;\n}\n";
    check_ptxas_arch(ptx, "sm_90");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    for (int rep = 0; rep < 8; rep++) {
        int8_t b = (int8_t)rnd64();
        float v = (float)(int)(rnd64() % 250) + (rep & 1 ? 0.25f : 0.75f); /* exact in bf16: below 256, quarters */
        uint8_t in[4];
        memcpy(in, &b, 1);
        uint16_t vb = ref_bf16(v);
        memcpy(in + 2, &vb, 2);
        uint64_t po = poisoned(d, 4), pi = upload(d, in, sizeof in);
        void *params[] = {&po, &pi};
        cr_assert_eq(dev_launch(f, 1, 1, 1, 1, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
        uint8_t out[4];
        download(d, out, po, sizeof out);
        uint16_t got;
        memcpy(&got, out, 2);
        float vr = u2f((uint32_t)vb << 16);
        cr_expect_eq(got, ref_bf16((float)b), "bf16 of %d: 0x%04x", b, got);
        cr_expect_eq(out[2], (uint8_t)nearbyintf(vr), "u8 of %g: %u", vr, out[2]);
        cr_expect_eq((int8_t)out[3], (int8_t)(vr > 127 ? 127 : (int)vr), "s8 of %g: %d", vr, (int8_t)out[3]);
        dev_free(d, po);
        dev_free(d, pi);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* ld/st cache operators and eviction priorities as ptxas combines them.  Before: all loaded (hints the emulator
 * skips), among them Triton's ld.global.cg.L1::evict_first.L2::cache_hint for tl.load(cache_modifier=".cg",
 * eviction_policy="evict_first"), which ptxas refuses ("Modifier '.evict_first' cannot be combined with '.cg'"). */
#define CM(ins) K(" .reg .b32 %r<3>;\n .reg .b64 %rd<3>;\n mov.b64 %rd1, 0;\n mov.b32 %r1, 0;\n" \
                  " createpolicy.fractional.L2::evict_last.b64 %rd2, 1.0;\n " ins ";")
Test(refuse, cache_mods) {
    static const Bad bad[] = {
        {CM("ld.global.cg.L1::evict_first.L2::cache_hint.b32 %r1, [%rd1], %rd2"),
         "ptx:11: 'ld.global.cg.L1::evict_first.L2::cache_hint.b32': the cache operator .cg cannot be combined with the eviction priority .L1::evict_first"},
        {CM("ld.global.ca.L1::no_allocate.b32 %r1, [%rd1]"), "the cache operator .ca cannot be combined"},
        {CM("st.global.cs.L1::evict_first.L2::cache_hint.b32 [%rd1], %r1, %rd2"), "the cache operator .cs cannot be combined"},
        {CM("ld.volatile.global.L1::evict_last.L2::cache_hint.b32 %r1, [%rd1], %rd2"), ".volatile takes no eviction priority nor .L2::cache_hint"},
        {CM("ld.volatile.global.L2::cache_hint.b32 %r1, [%rd1], %rd2"), ".volatile takes no eviction priority"},
        {CM("st.volatile.global.L1::evict_last.b32 [%rd1], %r1"), ".volatile takes no eviction priority"},
        {CM("ld.volatile.global.cg.b32 %r1, [%rd1]"), "a cache operator (.cg) is for weak accesses"},
        {CM("ld.relaxed.gpu.global.cs.b32 %r1, [%rd1]"), "a cache operator (.cs) is for weak accesses"},
        {CM("st.release.gpu.global.wb.b32 [%rd1], %r1"), "a cache operator (.wb) is for weak accesses"},
        {CM("ld.global.wb.b32 %r1, [%rd1]"), ".wb is no cache operator of ld (.ca .cg .cs .lu .cv)"},
        {CM("st.global.ca.b32 [%rd1], %r1"), ".ca is no cache operator of st (.wb .cg .cs .wt)"},
        {CM("st.global.lu.b32 [%rd1], %r1"), ".lu is no cache operator of st"},
        {CM("ld.global.nc.lu.b32 %r1, [%rd1]"), ".lu is no cache operator of ld.global.nc (.ca .cg .cs)"},
        {CM("ld.weak.global.nc.b32 %r1, [%rd1]"), "ld.global.nc takes no memory order"},
        {CM("ld.shared.L1::evict_last.b32 %r1, [%rd1]"), "are for .global or generic addresses"},
        {CM("st.local.L2::cache_hint.b32 [%rd1], %r1, %rd2"), "are for .global or generic addresses"},
        {CM("ld.const.L2::128B.b32 %r1, [%rd1]"), "are for .global or generic addresses"},
        {CM("st.global.L2::128B.b32 [%rd1], %r1"), ".L2::128B is for ld (a prefetch size), not st"},
        {CM("ld.volatile.local.b32 %r1, [%rd1]"), ".volatile, .relaxed, .acquire and .release are not for .local memory"},
        {CM("ld.release.gpu.global.b32 %r1, [%rd1]"), "ld takes .relaxed or .acquire, not .release"},
        {CM("st.acquire.gpu.global.b32 [%rd1], %r1"), "st takes .relaxed or .release, not .acquire"},
        {CM("ld.global.L2::evict_last.b32 %r1, [%rd1]"), "ld's .L2::evict_last is for 32-byte vectors only (.v8.b32, .v4.b64)"},
        {CM("ld.global.nc.L1::evict_last.L2::evict_first.b32 %r1, [%rd1]"), "ld's .L2::evict_first is for 32-byte vectors only"},
    };
    static const char *const good[] = {
        CM("ld.global.cg.L2::cache_hint.b32 %r1, [%rd1], %rd2;\n ld.global.L1::evict_first.L2::cache_hint.b32 %r1, [%rd1], %rd2;\n"
           " ld.global.lu.L2::128B.b32 %r1, [%rd1];\n ld.global.nc.cs.L2::cache_hint.b32 %r1, [%rd1], %rd2;\n"
           " ld.global.nc.L1::no_allocate.b32 %r1, [%rd1];\n ld.L1::evict_last.L2::256B.b32 %r1, [%rd1];\n"
           " ld.weak.global.cv.b32 %r1, [%rd1];\n ld.shared.ca.b32 %r1, [%rd1];\n ld.local.cs.b32 %r1, [%rd1];\n ld.const.lu.b32 %r1, [%rd1];\n"
           " ld.volatile.global.L2::128B.b32 %r1, [%rd1];\n ld.volatile.shared.b32 %r1, [%rd1];\n"
           " ld.relaxed.gpu.global.L1::evict_last.L2::cache_hint.b32 %r1, [%rd1], %rd2;\n ld.acquire.gpu.L2::64B.b32 %r1, [%rd1];\n"
           " st.global.wt.L2::cache_hint.b32 [%rd1], %r1, %rd2;\n st.global.L1::no_allocate.b32 [%rd1], %r1;\n st.shared.cg.b32 [%rd1], %r1;\n"
           " st.release.gpu.global.L1::evict_last.L2::cache_hint.b32 [%rd1], %r1, %rd2;\n st.volatile.global.b32 [%rd1], %r1;\n"
           " st.weak.local.wb.b32 [%rd1], %r1"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90");
}

/* Line info as ptxas reads it: .file at module scope, its number declared once (the same name again too), nothing
 * after `N "name"[, time[, size]]`; .loc in a body with three numbers, nothing but `, function_name L[+n], inlined_at
 * F L C` after them, inlined_at naming a location an earlier .loc gave, function_name a label of a .section; and a
 * `.target ..., debug` module with a .debug_* section.  Before: each loaded (the extras skipped). */
#define DS ".section .debug_str\n{\n$L__s0:\n.b8 107,0\n}\n"
#define LK(mod, body) HEAD ".file 1 \"a.cu\"\n" mod ".visible .entry k()\n{\n" body "\n ret;\n}\n" DS
Test(refuse, line_info) {
    static const Bad bad[] = {
        {HEAD ".file 1 \"a.cu\"\n.file 1 \"a.cu\"\n.visible .entry k()\n{\n ret;\n}\n", "ptx:5: .file 1 declared twice"},
        {HEAD ".file 1 \"a.cu\"\n.file 1 \"b.cu\"\n.visible .entry k()\n{\n ret;\n}\n", "ptx:5: .file 1 declared twice"},
        {HEAD ".file 1\n.visible .entry k()\n{\n ret;\n}\n", "ptx:4: bad .file directive: expected the file name in quotes"},
        {HEAD ".file \"a.cu\"\n.visible .entry k()\n{\n ret;\n}\n", "ptx:4: bad .file directive: expected a file number"},
        {HEAD ".file 4294967296 \"a.cu\"\n.visible .entry k()\n{\n ret;\n}\n", "ptx:4: bad .file directive: expected a file number"},
        {HEAD ".file 1 \"a.cu\";\n.visible .entry k()\n{\n ret;\n}\n", "ptx:4: bad .file directive: ';' after .file N \"name\""},
        {HEAD ".file 1 \"a.cu\" \"b.cu\"\n.visible .entry k()\n{\n ret;\n}\n", "ptx:4: bad .file directive: '\"b.cu\"' after"},
        {HEAD ".file 1 \"a.cu\", 5, 6, 7\n.visible .entry k()\n{\n ret;\n}\n", "ptx:4: bad .file directive: ',' after"},
        {HEAD ".file 1 \"a.cu\" 5\n.visible .entry k()\n{\n ret;\n}\n", "ptx:4: bad .file directive: '5' after"},
        {HEAD ".file 1 \"a.cu\",\n.visible .entry k()\n{\n ret;\n}\n", "ptx:4: bad .file directive: expected a number (timestamp, size)"},
        {HEAD ".file 1 \"a.cu\" .file 2 \"b.cu\" 5\n.visible .entry k()\n{\n ret;\n}\n", "ptx:4: bad .file directive: '5' after"},
        {LK("", " .reg .b32 %r1;\n .loc 1 3 4 mov.u32 %r1, 1; .loc 1 4 1;"), "ptx:8: bad .loc directive: ';' after its location"},
        {HEAD ".visible .entry k()\n{\n .file 1 \"a.cu\"\n ret;\n}\n", "ptx:6: bad .file directive: .file is a module-scope directive"},
        {LK("", " .loc 1 3"), "ptx:7: bad .loc directive: expected a file number, a line and a column (three numbers below 2^32), found 'ret'"},
        {LK("", " .loc 1 3\n mov.u32 %r1, 1;"), "ptx:7: bad .loc directive: expected a file number, a line and a column"},
        {LK("", " .loc 1 3 4 5"), "ptx:7: bad .loc directive: '5' after its location"},
        {LK("", " .loc 1 3 4;"), "ptx:7: bad .loc directive: ';' after its location"},
        {LK("", " .loc 1 -3 4"), "ptx:7: bad .loc directive: expected a file number, a line and a column (three numbers below 2^32), found '-'"},
        {LK(".loc 1 2 1\n", ""), "ptx:5: bad .loc directive: .loc is for a function's body, not module scope"},
        {LK("", " .loc 1 5 2\n .loc 1 3 1, function_name $L__s0"), "ptx:8: bad .loc directive: function_name needs ', inlined_at FILE LINE COLUMN'"},
        {LK("", " .loc 1 5 2\n .loc 1 3 1, inlined_at 1 5 2"), "ptx:8: bad .loc directive: expected 'function_name LABEL, inlined_at FILE LINE COLUMN' after ','"},
        {LK("", " .loc 1 5 2\n .loc 1 3 1, function_name $L__s0, inlined_at 1 5"), "ptx:8: bad .loc directive: expected inlined_at's file number"},
        {LK("", " .loc 1 3 1, function_name $L__s0, inlined_at 1 5 2"), "ptx:7: bad .loc directive: inlined_at 1 5 2 is no location an earlier .loc gives"},
        {LK("", " .loc 1 5 3\n .loc 1 3 1, function_name $L__s0, inlined_at 1 5 2"), "ptx:8: bad .loc directive: inlined_at 1 5 2 is no location"},
        {LK("", " .loc 1 3 1, function_name $L__s0, inlined_at 1 5 2\n .loc 1 5 2"), "ptx:7: bad .loc directive: inlined_at 1 5 2 is no location"},
        {LK("", " .loc 1 5 2\n .loc 1 3 1, function_name $L__none, inlined_at 1 5 2"),
         "ptx:8: bad .loc directive: function_name '$L__none' is no label of the module's .section data"},
        {LK("", " .loc 1 5 2\n$L__code:\n .loc 1 3 1, function_name $L__code, inlined_at 1 5 2"), "ptx:9: bad .loc directive: function_name '$L__code'"},
        {LK("", " .loc 1 5 2\n .loc 1 3 1, function_name k, inlined_at 1 5 2"), "ptx:8: bad .loc directive: function_name 'k'"},
        {".version 8.0\n.target sm_90, debug\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n",
         "ptx:2: .target names 'debug' but the module has no .section .debug_*"},
        {".version 8.0\n.target sm_90, debug\n.address_size 64\n.file 1 \"a.cu\"\n.visible .entry k()\n{\n .loc 1 2 1\n ret;\n}\n",
         "ptx:2: .target names 'debug'"},
    };
    static const char *const good[] = {
        LK(".file 2 \"a.cu\", 1700000000, 812\n.file 0x3 \"\", 5\n", " .loc 1 3 1\n .loc 2 4 0\n .loc 0x3 0 0\n .loc 7 1 4294967295"),
        /* free-form: a .loc's or .file's parts on several lines, the next directive or instruction on its line */
        LK(".file 2\n\"b.cu\"\n,\n5 .file 3 \"c.cu\"\n", " .reg .b32 %r<2>;\n .loc 1 3 1 mov.u32 %r1, 1; .loc 2\n 4\n 2 L1: .loc 3 1 1\n"
               " .loc 1 5 2 .loc 1 3 1, function_name\n $L__s0, inlined_at 1 5 2 { .loc 1 4 1 }"),
        LK("", " .loc 1 5 2\n .loc 1 3 1, function_name $L__s0, inlined_at 1 5 2\n .loc 1 4 1, function_name $L__s0+1, inlined_at 1 3 1\n"
               " .loc 1 4 2, function_name $L__s0 + 1, inlined_at 1 3 1"),
        /* inlined_at's location from another function of the module; the section before the code */
        HEAD DS ".file 1 \"a.cu\"\n.func f()\n{\n .loc 1 9 9\n ret;\n}\n.visible .entry k()\n{\n"
        " .loc 1 3 1, function_name $L__s0, inlined_at 1 9 9\n ret;\n}\n",
        ".version 8.0\n.target sm_90, debug\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n" DS,
        ".version 8.0\n.target sm_90, debug\n.address_size 64\n.section .debug_abbrev\n{\n.b8 0\n}\n.visible .entry k()\n{\n ret;\n}\n",
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90");
}

/* Instruction types against opcodes: each refused form is ptxas's refusal; the accepted list is every checked type
 * (16- to 64-bit scalars and .pred) ptxas takes for the opcode. */
#define O(ins) K(" .reg .b32 %r<5>;\n .reg .b64 %rd<5>;\n .reg .b16 %h<5>;\n .reg .pred %p<5>;\n " ins ";")
Test(refuse, op_types) {
    static const Bad bad[] = {
        {O("add.b32 %r1, %r2, %r3"), "ptx:10: 'add.b32': add takes .u16 .u32 .u64 .s16 .s32 .s64 .f32 .f64 here, not .b32"},
        {O("add.pred %p1, %p2, %p3"), "'add.pred': add takes"},
        {O("sub.b64 %rd1, %rd2, %rd3"), "not .b64"},
        {O("min.b32 %r1, %r2, %r3"), "'min.b32': min takes"},
        {O("max.b16 %h1, %h2, %h3"), "not .b16"},
        {O("abs.u32 %r1, %r2"), "'abs.u32': abs takes .s16 .s32 .s64 .f32 .f64 here"},
        {O("neg.b32 %r1, %r2"), "'neg.b32'"},
        {O("mul.lo.f32 %r1, %r2, %r3"), "'mul.lo.f32': mul takes .u16 .u32 .u64 .s16 .s32 .s64 here"},
        {O("mul.wide.f32 %rd1, %r2, %r3"), "'mul.wide.f32'"},
        {O("mul.u32 %r1, %r2, %r3"), "'mul.u32': mul takes .f32 .f64 here"},
        {O("mad.s32 %r1, %r2, %r3, %r4"), "'mad.s32': mad takes .f32 .f64 here"},
        {O("div.b32 %r1, %r2, %r3"), "'div.b32'"},
        {O("rem.f32 %r1, %r2, %r3"), "'rem.f32'"},
        {O("and.u32 %r1, %r2, %r3"), "'and.u32': and takes .pred .b16 .b32 .b64 here"},
        {O("or.s32 %r1, %r2, %r3"), "'or.s32'"},
        {O("not.u64 %rd1, %rd2"), "'not.u64'"},
        {O("cnot.pred %p1, %p2"), "'cnot.pred'"},
        {O("shl.u32 %r1, %r2, 1"), "'shl.u32': shl takes .b16 .b32 .b64 here"},
        {O("shr.f32 %r1, %r2, 1"), "'shr.f32'"},
        {O("setp.lt.b32 %p1, %r1, %r2"), "'setp.lt.b32': setp takes .u16 .u32 .u64 .s16 .s32 .s64 .f32 .f64 here"},
        {O("setp.lo.s32 %p1, %r1, %r2"), "'setp.lo.s32': setp takes .u16 .u32 .u64 here"},
        {O("setp.ltu.u32 %p1, %r1, %r2"), "'setp.ltu.u32': setp takes .f32 .f64 here"},
        {O("setp.eq.pred %p1, %p2, %p3"), "'setp.eq.pred'"},
        {O("selp.pred %p1, %p2, %p3, %p4"), "'selp.pred'"},
        {O("popc.u32 %r1, %r2"), "'popc.u32': popc takes .b32 .b64 here"},
        {O("clz.b16 %r1, %h2"), "'clz.b16'"},
        {O("brev.u64 %rd1, %rd2"), "'brev.u64'"},
        {O("bfind.b32 %r1, %r2"), "'bfind.b32': bfind takes .u32 .u64 .s32 .s64 here"},
        {O("fma.rn.u32 %r1, %r2, %r3, %r4"), "'fma.rn.u32'"},
        {O("sqrt.rn.u32 %r1, %r2"), "'sqrt.rn.u32'"},
        {O("ex2.approx.f64 %rd1, %rd2"), "'ex2.approx.f64': ex2 takes .f32 here"},
        {O("tanh.approx.f64 %rd1, %rd2"), "'tanh.approx.f64'"},
        {O("copysign.u32 %r1, %r2, %r3"), "'copysign.u32'"},
        {O("testp.finite.u32 %p1, %r1"), "'testp.finite.u32'"},
    };
    static const char *const good[] = {
        O("add.u16 %h1, %h2, %h3;\n add.s64 %rd1, %rd2, %rd3;\n add.f32 %r1, %r2, %r3;\n sub.f64 %rd1, %rd2, %rd3;\n"
          " min.u32 %r1, %r2, %r3;\n max.s16 %h1, %h2, %h3;\n min.f64 %rd1, %rd2, %rd3;\n abs.s32 %r1, %r2;\n neg.f32 %r1, %r2;\n"
          " mul.lo.u32 %r1, %r2, %r3;\n mul.hi.s64 %rd1, %rd2, %rd3;\n mul.wide.u16 %r1, %h1, %h2;\n mul.rn.f32 %r1, %r2, %r3;\n"
          " mul.f64 %rd1, %rd2, %rd3;\n mad.lo.s32 %r1, %r2, %r3, %r4;\n mad.rn.f64 %rd1, %rd2, %rd3, %rd4;\n"
          " div.u32 %r1, %r2, %r3;\n div.rn.f64 %rd1, %rd2, %rd3;\n rem.s64 %rd1, %rd2, %rd3;\n and.pred %p1, %p2, %p3;\n"
          " xor.b64 %rd1, %rd2, %rd3;\n not.b16 %h1, %h2;\n cnot.b32 %r1, %r2;\n shl.b64 %rd1, %rd2, 3;\n shr.s32 %r1, %r2, 3;\n"
          " shr.u16 %h1, %h2, 3;\n setp.eq.b32 %p1, %r1, %r2;\n setp.lt.s64 %p1, %rd1, %rd2;\n setp.hs.u32 %p1, %r1, %r2;\n"
          " setp.nan.f32 %p1, %r1, %r2;\n selp.b32 %r1, %r2, %r3, %p1;\n selp.f64 %rd1, %rd2, %rd3, %p1;\n popc.b64 %r1, %rd1;\n"
          " clz.b32 %r1, %r2;\n brev.b64 %rd1, %rd2;\n bfind.s64 %r1, %rd1;\n fma.rn.f64 %rd1, %rd2, %rd3, %rd4;\n"
          " sqrt.rn.f32 %r1, %r2;\n rsqrt.approx.f64 %rd1, %rd2;\n ex2.approx.f32 %r1, %r2;\n copysign.f64 %rd1, %rd2, %rd3;\n"
          " testp.finite.f64 %p1, %rd1;\n mov.pred %p1, %p2;\n mov.s16 %h1, %h2;\n mov.f64 %rd1, %rd2;\n"
          " add.f16 %h1, %h2, %h3;\n min.f16x2 %r1, %r2, %r3;\n mov.b32 %r1, %r2"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90");
}

/* An instruction with no type at all (setp.lt %p1, %r1, %r2): it loaded and ran on 0-byte operands (add computed
 * nothing, setp compared zeros, mov and ld moved no bytes; the sign extension shifted by 64). */
Test(refuse, missing_types) {
    static const Bad bad[] = {
        {O("setp.lt %p1, %r1, %r2"), "ptx:10: 'setp.lt' needs a type: .u16 .u32 .u64 .s16 .s32 .s64 .f32 .f64"},
        {O("setp.ltu %p1, %r1, %r2"), "'setp.ltu' needs a type: .f32 .f64"},
        {O("add %r1, %r2, %r3"), "ptx:10: 'add' needs a type: .u16 .u32"},
        {O("mul.lo %r1, %r2, %r3"), "'mul.lo' needs a type: .u16 .u32 .u64 .s16 .s32 .s64"},
        {O("mad.lo %r1, %r2, %r3, %r4"), "'mad.lo' needs a type"},
        {O("div %r1, %r2, %r3"), "'div' needs a type"},
        {O("rem %r1, %r2, %r3"), "'rem' needs a type"},
        {O("neg %r1, %r2"), "'neg' needs a type"},
        {O("not %r1, %r2"), "'not' needs a type: .pred .b16 .b32 .b64"},
        {O("shl %r1, %r2, 2"), "'shl' needs a type"},
        {O("shr %r1, %r2, 2"), "'shr' needs a type"},
        {O("popc %r1, %r2"), "'popc' needs a type: .b32 .b64"},
        {O("bfe %r1, %r2, 1, 2"), "'bfe' needs a type"},
        {O("prmt %r1, %r2, %r3, 0"), "'prmt' needs a type: .b32"},
        {O("selp %r1, %r2, %r3, %p1"), "'selp' needs a type"},
        {O("sqrt.rn %r1, %r2"), "'sqrt.rn' needs a type: .f32 .f64"},
        {O("ex2.approx %r1, %r2"), "'ex2.approx' needs a type: .f32"},
        {O("mov %r1, %r2"), "ptx:10: 'mov' needs a type: the type of the value it moves"},
        {O("mov %p1, %p2"), "'mov' needs a type"},
        {O("ld.global %r1, [%rd1]"), "'ld.global' needs a type"},
        {O("ld.global.v2 {%r1, %r2}, [%rd1]"), "'ld.global.v2' needs a type"},
        {O("ldu.global %r1, [%rd1]"), "'ldu.global' needs a type"},
        {O("st.global [%rd1], %r1"), "'st.global' needs a type"},
        {O("shfl.sync.idx %r1, %r2, 0, 31, -1"), "'shfl.sync.idx' needs a type: .b32"},
        {O("vote.sync.all %p1, %p2, -1"), "'vote.sync.all' needs a type: .pred (.all, .any, .uni) or .b32 (.ballot)"},
        {O("match.any.sync %r1, %r2, -1"), "'match.any.sync' needs a type: .b32 or .b64"},
        {O("redux.sync.add %r1, %r2, -1"), "'redux.sync.add' needs a type"},
        {O("activemask %r1"), "'activemask' needs a type: .b32"},
        {O("addc %r1, %r2, %r3"), "'addc' needs a type"},
    };
    static const char *const good[] = {
        O("setp.lt.s32 %p1, %r1, %r2;\n add.u32 %r1, %r2, %r3;\n mov.u32 %r1, %r2;\n ld.global.u32 %r1, [%rd1];\n"
          " ld.global.v2.u32 {%r1, %r2}, [%rd1];\n st.global.u32 [%rd1], %r1;\n shfl.sync.idx.b32 %r1, %r2, 0, 31, -1;\n"
          " vote.sync.all.pred %p1, %p2, -1;\n vote.sync.ballot.b32 %r1, %p2, -1;\n match.any.sync.b32 %r1, %r2, -1;\n"
          " redux.sync.add.u32 %r1, %r2, -1;\n activemask.b32 %r1;\n isspacep.global %p1, %rd1;\n"
          " add.cc.u32 %r1, %r2, %r3;\n addc.u32 %r1, %r2, %r3"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90");
}

/* cvt's rounding, pair of types by pair (each refused form is ptxas's refusal, each accepted one assembles). */
#define CV(ins) K(" .reg .b32 %r<5>;\n .reg .b64 %rd<5>;\n .reg .b16 %h<5>;\n " ins ";")
Test(refuse, cvt_rounding) {
    static const Bad bad[] = {
        {CV("cvt.u32.f32 %r1, %r2"), "ptx:9: 'cvt.u32.f32' needs an integer rounding (.rni .rzi .rmi .rpi): a float to an integer"},
        {CV("cvt.rn.u32.f32 %r1, %r2"), "'cvt.rn.u32.f32' needs an integer rounding"},
        {CV("cvt.u16.f16 %h1, %h2"), "needs an integer rounding"},
        {CV("cvt.f32.u32 %r1, %r2"), "'cvt.f32.u32' needs a float rounding (.rn .rz .rm .rp): an integer to a float"},
        {CV("cvt.rzi.f32.s32 %r1, %r2"), "needs a float rounding"},
        {CV("cvt.f16.u16 %h1, %h2"), "needs a float rounding"},
        {CV("cvt.f32.f64 %r1, %rd1"), "'cvt.f32.f64' needs a float rounding (.rn .rz .rm .rp): a float to a narrower one"},
        {CV("cvt.rni.f32.f64 %r1, %rd1"), "needs a float rounding"},
        {CV("cvt.f16.f32 %h1, %r1"), "needs a float rounding"},
        {CV("cvt.bf16.f32 %h1, %r1"), "needs a float rounding"},
        {CV("cvt.f16.f64 %h1, %rd1"), "needs a float rounding"},
        {CV("cvt.rn.f64.f32 %rd1, %r1"), "'cvt.rn.f64.f32' needs no rounding"},
        {CV("cvt.rzi.f32.f16 %r1, %h1"), "needs no rounding"},
        {CV("cvt.rn.u32.u64 %r1, %rd1"), "'cvt.rn.u32.u64' needs no rounding"},
        {CV("cvt.rzi.s64.s32 %rd1, %r1"), "needs no rounding"},
        {CV("cvt.rn.f32.f32 %r1, %r2"), "'cvt.rn.f32.f32' needs no float rounding"},
    };
    static const char *const good[] = {
        CV("cvt.rzi.u32.f32 %r1, %r2;\n cvt.rni.s64.f64 %rd1, %rd2;\n cvt.rmi.s16.f16 %h1, %h2;\n cvt.rpi.u8.f32 %h1, %r1;\n"
           " cvt.rn.f32.u32 %r1, %r2;\n cvt.rz.f64.s64 %rd1, %rd2;\n cvt.rn.f16.u16 %h1, %h2;\n cvt.rm.f32.s8 %r1, %h1;\n"
           " cvt.rn.f32.f64 %r1, %rd1;\n cvt.rn.f16.f32 %h1, %r1;\n cvt.rn.bf16.f32 %h1, %r1;\n cvt.rz.f16.f64 %h1, %rd1;\n"
           " cvt.f64.f32 %rd1, %r1;\n cvt.f32.f16 %r1, %h1;\n cvt.f32.bf16 %r1, %h1;\n cvt.f32.f32 %r1, %r2;\n"
           " cvt.rni.f32.f32 %r1, %r2;\n cvt.rzi.f64.f64 %rd1, %rd2;\n cvt.f16.f16 %h1, %h2;\n cvt.u32.u64 %r1, %rd1;\n"
           " cvt.s64.s32 %rd1, %r1;\n cvt.sat.u32.s32 %r1, %r2;\n cvt.u16.u8 %h1, %h2;\n cvt.rn.f16x2.f32 %r1, %r2, %r3"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90");
}

/* Rounding, .approx/.full, .ftz, .sat and .NaN on the integer, .f32 and .f64 arithmetic: each refused form is
 * ptxas's refusal (without the rounding it needs the emulator rounded as it chose; a modifier the type does not take
 * did nothing), each accepted one assembles. */
#define FM(ins) K(" .reg .b32 %r<5>;\n .reg .b64 %rd<5>;\n .reg .f32 %f<5>;\n .reg .f64 %fd<5>;\n .reg .pred %p<2>;\n " ins ";")
Test(refuse, float_mods) {
    static const Bad bad[] = {
        {FM("div.f32 %f1, %f2, %f3"), "ptx:11: 'div.f32' needs one of a rounding (.rn .rz .rm .rp), .approx and .full"},
        {FM("div.ftz.f32 %f1, %f2, %f3"), "'div.ftz.f32' needs one of"},
        {FM("div.rn.approx.f32 %f1, %f2, %f3"), "needs one of"},
        {FM("div.f64 %fd1, %fd2, %fd3"), "'div.f64' needs a rounding modifier (.rn .rz .rm .rp)"},
        {FM("div.approx.f64 %fd1, %fd2, %fd3"), "'div.approx.f64': div.approx is not an instruction"},
        {FM("div.full.f64 %fd1, %fd2, %fd3"), "div.full is not an instruction"},
        {FM("sqrt.f32 %f1, %f2"), "'sqrt.f32' needs one of a rounding (.rn .rz .rm .rp) and .approx"},
        {FM("sqrt.rni.f32 %f1, %f2"), "'sqrt.rni.f32': the rounding of sqrt is .rn, .rz, .rm or .rp"},
        {FM("sqrt.f64 %fd1, %fd2"), "'sqrt.f64' needs a rounding modifier"},
        {FM("sqrt.approx.f64 %fd1, %fd2"), "sqrt.approx is not an instruction"},
        {FM("sqrt.full.f32 %f1, %f2"), "sqrt.full is not an instruction"},
        {FM("rcp.f32 %f1, %f2"), "'rcp.f32' needs one of"},
        {FM("rcp.f64 %fd1, %fd2"), "'rcp.f64' needs a rounding modifier"},
        {FM("rcp.approx.f64 %fd1, %fd2"), "rcp.approx is not an instruction (rcp.approx.f64 needs .ftz)"},
        {FM("rsqrt.f32 %f1, %f2"), "'rsqrt.f32' needs .approx"},
        {FM("rsqrt.rn.f32 %f1, %f2"), "'rsqrt.rn.f32': rsqrt takes no rounding modifier"},
        {FM("ex2.f32 %f1, %f2"), "'ex2.f32' needs .approx"},
        {FM("tanh.f32 %f1, %f2"), "needs .approx"},
        {FM("fma.f32 %f1, %f2, %f3, %f4"), "'fma.f32' needs a rounding modifier (.rn .rz .rm .rp)"},
        {FM("fma.f64 %fd1, %fd2, %fd3, %fd4"), "'fma.f64' needs a rounding modifier"},
        {FM("fma.rna.f32 %f1, %f2, %f3, %f4"), "the rounding of fma is .rn, .rz, .rm or .rp"},
        {FM("mad.f32 %f1, %f2, %f3, %f4"), "'mad.f32' needs a rounding modifier"},
        {FM("mad.sat.f32 %f1, %f2, %f3, %f4"), "'mad.sat.f32' needs a rounding modifier"},
        {FM("add.rn.u32 %r1, %r2, %r3"), "'add.rn.u32': add takes no rounding modifier (rounding is for floating-point types)"},
        {FM("sub.rz.s64 %rd1, %rd2, %rd3"), "sub takes no rounding modifier"},
        {FM("div.rn.u32 %r1, %r2, %r3"), "div takes no rounding modifier"},
        {FM("min.rn.f32 %f1, %f2, %f3"), "'min.rn.f32': min takes no rounding modifier"},
        {FM("neg.rn.f32 %f1, %f2"), "neg takes no rounding modifier"},
        {FM("add.rni.f32 %f1, %f2, %f3"), "the rounding of add is .rn, .rz, .rm or .rp"},
        {FM("add.approx.f32 %f1, %f2, %f3"), "add.approx is not an instruction"},
        {FM("add.ftz.u32 %r1, %r2, %r3"), "'add.ftz.u32': add takes no .ftz with .u32"},
        {FM("abs.ftz.s32 %r1, %r2"), "abs takes no .ftz with .s32"},
        {FM("add.ftz.f64 %fd1, %fd2, %fd3"), "'add.ftz.f64': add takes no .ftz with .f64"},
        {FM("fma.rn.ftz.f64 %fd1, %fd2, %fd3, %fd4"), "fma takes no .ftz with .f64"},
        {FM("sqrt.rn.ftz.f64 %fd1, %fd2"), "sqrt takes no .ftz with .f64"},
        {FM("setp.lt.ftz.f64 %p1, %fd1, %fd2"), "setp takes no .ftz with .f64"},
        {FM("copysign.ftz.f32 %f1, %f2, %f3"), "copysign takes no .ftz"},
        {FM("add.sat.f64 %fd1, %fd2, %fd3"), "'add.sat.f64': .sat is not allowed on .f64"},
        {FM("fma.rn.sat.f64 %fd1, %fd2, %fd3, %fd4"), ".sat is not allowed on .f64"},
        {FM("max.NaN.f64 %fd1, %fd2, %fd3"), "'max.NaN.f64': .NaN and .xorsign are not allowed on .f64"},
    };
    static const char *const good[] = {
        FM("div.rn.f32 %f1, %f2, %f3;\n div.approx.ftz.f32 %f1, %f2, %f3;\n div.full.f32 %f1, %f2, %f3;\n div.rz.f64 %fd1, %fd2, %fd3;\n"
           " sqrt.rn.ftz.f32 %f1, %f2;\n sqrt.approx.f32 %f1, %f2;\n sqrt.rm.f64 %fd1, %fd2;\n rcp.rp.f32 %f1, %f2;\n"
           " rcp.approx.ftz.f64 %fd1, %fd2;\n rcp.rn.ftz.f64 %fd1, %fd2;\n rsqrt.approx.f64 %fd1, %fd2;\n rsqrt.approx.ftz.f32 %f1, %f2;\n"
           " ex2.approx.ftz.f32 %f1, %f2;\n fma.rn.sat.f32 %f1, %f2, %f3, %f4;\n mad.rn.f64 %fd1, %fd2, %fd3, %fd4;\n"
           " mad.lo.u32 %r1, %r2, %r3, %r4;\n add.f32 %f1, %f2, %f3;\n mul.f64 %fd1, %fd2, %fd3;\n add.rn.sat.f32 %f1, %f2, %f3;\n"
           " mul.rz.f64 %fd1, %fd2, %fd3;\n min.ftz.NaN.f32 %f1, %f2, %f3;\n max.xorsign.abs.f32 %f1, %f2, %f3;\n"
           " neg.ftz.f32 %f1, %f2;\n setp.lt.ftz.f32 %p1, %f1, %f2;\n add.sat.s32 %r1, %r2, %r3"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90");
}

/* The types of slct, set, bfe, bfi, prmt, shf, mul24, mad24, sad, ld, ldu and st, the modifiers shf, mul24 and mad24
 * need, and atom/red's .noftz: each refused form is ptxas's refusal (the emulator had run slct.b32.u32 as signed,
 * ld.global.f16 as a .b16 load, shf.l without .clamp as .clamp, atom.add.f16 as .noftz), each accepted one assembles. */
#define MT(ins) K(" .reg .b32 %r<5>;\n .reg .b64 %rd<5>;\n .reg .b16 %h<5>;\n .reg .f32 %f<5>;\n .reg .f64 %fd<5>;\n .reg .pred %p<2>;\n " ins ";")
Test(refuse, more_types) {
    static const Bad bad[] = {
        {MT("slct.b32.u32 %r1, %r2, %r3, %r4"), "ptx:12: 'slct.b32.u32': slct takes .dtype.s32 or .dtype.f32"},
        {MT("slct.b32.f64 %r1, %r2, %r3, %fd4"), "slct takes .dtype.s32 or .dtype.f32"},
        {MT("slct.pred.s32 %p1, %p0, %p1, %r4"), "slct takes"},
        {MT("slct.f16.s32 %h1, %h2, %h3, %r4"), "slct takes"},
        {MT("slct.ftz.b32.s32 %r1, %r2, %r3, %r4"), "'slct.ftz.b32.s32': .ftz needs a .f32 selector"},
        {MT("set.lt.b32.s32 %r1, %r2, %r3"), "'set.lt.b32.s32': set's destination type is .u32, .s32 or .f32, not .b32"},
        {MT("set.lt.u64.s32 %rd1, %r2, %r3"), "not .u64"},
        {MT("set.lt.u32.b32 %r1, %r2, %r3"), "'set.lt.u32.b32': .b32 does not take this comparison"},
        {MT("set.lo.u32.s32 %r1, %r2, %r3"), ".s32 does not take this comparison"},
        {MT("set.ltu.u32.s32 %r1, %r2, %r3"), "does not take this comparison"},
        {MT("set.lt.ftz.u32.f64 %r1, %fd1, %fd2"), "'set.lt.ftz.u32.f64': .ftz needs .f32 operands"},
        {MT("bfe.b32 %r1, %r2, %r3, %r4"), "'bfe.b32': bfe takes .u32 .u64 .s32 .s64 here, not .b32"},
        {MT("bfi.u32 %r1, %r2, %r3, %r4, %r1"), "'bfi.u32': bfi takes .b32 .b64 here"},
        {MT("prmt.u32 %r1, %r2, %r3, %r4"), "'prmt.u32': prmt takes .b32 here"},
        {MT("prmt.b64 %rd1, %rd2, %rd3, %r4"), "prmt takes .b32 here, not .b64"},
        {MT("shf.l.u32 %r1, %r2, %r3, %r4"), "'shf.l.u32': shf takes .b32 here"},
        {MT("shf.l.b32 %r1, %r2, %r3, %r4"), "'shf.l.b32' needs .clamp or .wrap"},
        {MT("mul24.lo.b32 %r1, %r2, %r3"), "'mul24.lo.b32': mul24 takes .u32 .s32 here"},
        {MT("mul24.u32 %r1, %r2, %r3"), "'mul24.u32' needs .lo or .hi"},
        {MT("mad24.lo.s64 %rd1, %rd2, %rd3, %rd4"), "mad24 takes .u32 .s32 here"},
        {MT("sad.b32 %r1, %r2, %r3, %r4"), "'sad.b32': sad takes .u16 .u32 .u64 .s16 .s32 .s64 here"},
        {MT("ld.global.f16 %h1, [%rd1]"), "ptx:12: 'ld.global.f16': ld takes .b8-.b128, .u8-.u64, .s8-.s64, .f32 and .f64, not .f16"},
        {MT("ld.global.v2.bf16 {%h1, %h2}, [%rd1]"), "not .bf16"},
        {MT("ld.shared.f16x2 %r1, [%rd1]"), "not .f16x2"},
        {MT("ld.global.pred %p1, [%rd1]"), "not .pred"},
        {MT("ldu.global.f16 %h1, [%rd1]"), "'ldu.global.f16': ldu takes"},
        {MT("st.global.f16 [%rd1], %h1"), "'st.global.f16': st takes"},
        {MT("atom.global.add.f16 %h1, [%rd1], %h2"), "'atom.global.add.f16' needs .noftz"},
        {MT("atom.global.add.f16x2 %r1, [%rd1], %r2"), "needs .noftz"},
        {MT("atom.global.add.bf16 %h1, [%rd1], %h2"), "needs .noftz"},
        {MT("red.global.add.bf16x2 [%rd1], %r2"), "'red.global.add.bf16x2' needs .noftz"},
        {MT("atom.global.add.noftz.f32 %f1, [%rd1], %f2"), "'atom.global.add.noftz.f32': .noftz is for the .f16 and .bf16 add, min and max only"},
        {MT("atom.global.cas.noftz.b16 %h1, [%rd1], %h2, %h3"), ".noftz is for the"},
        {MT("atom.global.add.ftz.f32 %f1, [%rd1], %f2"), "'atom.global.add.ftz.f32': atom takes no .ftz here"},
    };
    static const char *const good[] = {
        MT("slct.b32.s32 %r1, %r2, %r3, %r4;\n slct.ftz.f32.f32 %f1, %f2, %f3, %f4;\n slct.u64.s32 %rd1, %rd2, %rd3, %r4;\n"
           " slct.b16.s32 %h1, %h2, %h3, %r4;\n set.lt.u32.s32 %r1, %r2, %r3;\n set.lt.ftz.f32.f32 %f1, %f2, %f3;\n"
           " set.lt.s32.f64 %r1, %fd2, %fd3;\n set.eq.u32.b32 %r1, %r2, %r3;\n set.lt.u32.f16 %r1, %h2, %h3;\n"
           " set.lt.f16.s32 %h1, %r2, %r3;\n bfe.u32 %r1, %r2, %r3, %r4;\n bfe.s64 %rd1, %rd2, %r3, %r4;\n"
           " bfi.b64 %rd1, %rd2, %rd3, %r4, %r1;\n prmt.b32 %r1, %r2, %r3, %r4;\n prmt.b32.f4e %r1, %r2, %r3, %r4;\n"
           " shf.r.clamp.b32 %r1, %r2, %r3, %r4;\n shf.l.wrap.b32 %r1, %r2, %r3, %r4;\n mul24.hi.s32 %r1, %r2, %r3;\n"
           " mad24.lo.u32 %r1, %r2, %r3, %r4;\n sad.s16 %h1, %h2, %h3, %h4;\n sad.u64 %rd1, %rd2, %rd3, %rd4;\n"
           " ld.global.b16 %h1, [%rd1];\n ld.global.v2.f64 {%fd1, %fd2}, [%rd1];\n ld.global.nc.b32 %r1, [%rd1];\n"
           " st.shared.b32 [%rd1], %r1;\n ldu.global.b16 %h1, [%rd1];\n"
           " atom.global.add.noftz.f16 %h1, [%rd1], %h2;\n atom.shared.add.noftz.f16 %h1, [%rd1], %h2;\n"
           " atom.global.noftz.add.f16 %h1, [%rd1], %h2;\n red.global.add.noftz.bf16x2 [%rd1], %r2;\n atom.global.add.f32 %f1, [%rd1], %f2"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90");
}

/* cvt's .ftz (where an f32 is converted or made), integer .sat (where the destination does not hold the source) and
 * .rna (cvt.rna.tf32.f32's alone), as ptxas has them. */
Test(refuse, cvt_modifiers) {
    static const Bad bad[] = {
        {CV("cvt.ftz.f64.f64 %rd1, %rd2"), "ptx:9: 'cvt.ftz.f64.f64': .ftz needs a .f32 source or destination"},
        {CV("cvt.rzi.ftz.s64.f64 %rd1, %rd2"), ".ftz needs a .f32"},
        {CV("cvt.rn.ftz.f64.s32 %rd1, %r1"), ".ftz needs a .f32"},
        {CV("cvt.rn.ftz.f16.f64 %h1, %rd1"), ".ftz needs a .f32"},
        {CV("cvt.ftz.u32.u16 %r1, %h1"), ".ftz needs a .f32"},
        {CV("cvt.sat.u64.u32 %rd1, %r2"), "'cvt.sat.u64.u32': .sat where .u64 holds every .u32"},
        {CV("cvt.sat.s64.s32 %rd1, %r2"), ".sat where .s64 holds every .s32"},
        {CV("cvt.sat.u32.u32 %r1, %r2"), ".sat where"},
        {CV("cvt.sat.s32.u16 %r1, %h2"), ".sat where .s32 holds every .u16"},
        {CV("cvt.rna.f32.f64 %r1, %rd1"), "'cvt.rna.f32.f64': .rna is cvt.rna.tf32.f32's rounding only"},
        {CV("cvt.rna.f16.f32 %h1, %r1"), ".rna is"},
    };
    static const char *const good[] = {
        CV("cvt.rn.ftz.f32.f64 %r1, %rd1;\n cvt.ftz.f32.f32 %r1, %r2;\n cvt.rn.ftz.f16.f32 %h1, %r1;\n cvt.ftz.f32.bf16 %r1, %h1;\n"
           " cvt.rn.ftz.f32.s32 %r1, %r2;\n cvt.rzi.ftz.sat.s32.f32 %r1, %r2;\n cvt.sat.f64.f64 %rd1, %rd2;\n"
           " cvt.sat.u8.u16 %h1, %h2;\n cvt.sat.u16.s8 %h1, %h2;\n cvt.sat.u32.s16 %r1, %h2;\n cvt.sat.s16.s32 %h1, %r2;\n"
           " cvt.sat.s32.u32 %r1, %r2;\n cvt.sat.u64.s64 %rd1, %rd2;\n cvt.rna.tf32.f32 %r1, %r2"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90");
}

/* A module's .const data past the 64 KiB bank, at the variable that crosses it (module and function scope, sized by
 * an initializer too); a label named as a register (declared by name), variable or parameter of its block, either
 * order (ptxas: "Duplicate definition"). */
Test(refuse, const_bank_and_label_names) {
    static const char *const E = ".visible .entry k()\n{\n ret;\n}\n";
    char big_init[3 * 65537 + 64];
    size_t n = (size_t)snprintf(big_init, sizeof big_init, "%s", ".const .b8 c[] = {1");
    for (int i = 1; i < 65537; i++) n += (size_t)snprintf(big_init + n, sizeof big_init - n, ",1");
    snprintf(big_init + n, sizeof big_init - n, "};\n");
    char bad_init[sizeof big_init + 200], good_init[sizeof big_init + 200];
    snprintf(bad_init, sizeof bad_init, HEAD "%s%s", big_init, E);
    big_init[n - 2] = 0; /* one element fewer: 65536 bytes, the whole bank */
    snprintf(good_init, sizeof good_init, HEAD "%s};\n%s", big_init, E);
    const Bad bad[] = {
        {HEAD ".const .b8 c[65537];\n.visible .entry k()\n{\n ret;\n}\n",
         "ptx:4: .const variable 'c' brings the module's constant data to 65537 bytes, more than the 65536 of the constant bank"},
        {HEAD ".const .b8 c[40000];\n.const .u32 d[10000];\n.visible .entry k()\n{\n ret;\n}\n", "ptx:5: .const variable 'd' brings"},
        {HEAD ".const .b8 c[40000];\n.visible .entry k()\n{\n .const .b8 d[40000];\n ret;\n}\n", "ptx:7: .const variable 'd'"},
        {bad_init, "ptx:4: .const variable 'c' brings the module's constant data to 65537 bytes"},
        {K(" .reg .b32 L1;\n mov.b32 L1, 0;\nL1:"), "ptx:8: label 'L1' has the name of a register of its block"},
        {K(" bra L1;\nL1:\n .reg .b32 L1;"), "ptx:8: register 'L1' has the name of a label of its block"},
        {HEAD ".visible .entry k(.param .u64 p)\n{\np:\n ret;\n}\n", "ptx:6: label 'p' has the name of a variable or parameter"},
        {HEAD ".func f(.reg .b32 p)\n{\np:\n ret;\n}\n.visible .entry k()\n{\n ret;\n}\n", "ptx:6: label 'p' has the name of a register"},
        {K(" .local .b32 v;\nv:"), "ptx:7: label 'v' has the name of a variable"},
        {K("v:\n .shared .b32 v;"), "ptx:7: variable 'v' has the name of a label of its block"},
        {HEAD ".func f(.param .u32 a);\n.visible .entry k(.param .u32 a)\n{\n { .reg .b32 %r1; }\na:\n ret;\n}\n",
         "ptx:8: label 'a' has the name of a variable or parameter of its block"},
        {HEAD ".visible .entry k(.param .u32 p)\n{\n .reg .b32 p;\n ret;\n}\n",
         "ptx:6: register 'p' has the name of a variable or parameter of its scope ('p')"},
    };
    const char *const good[] = {
        HEAD ".const .b8 c[32768];\n.const .b8 d[32768];\n.visible .entry k()\n{\n ret;\n}\n",
        good_init,
        K(" .reg .b32 %q<3>;\n%q2:"),            /* a range's names take labels */
        K(" .reg .b32 L1;\n {\nL1:\n bra L1;\n }"),         /* a nested block's label */
        K("L1:\n {\n .reg .b32 L1;\n mov.b32 L1, 0;\n }"),
        HEAD ".global .u32 g;\n.func f()\n{\n ret;\n}\n.visible .entry k()\n{\ng:\nf:\n ret;\n}\n", /* module names */
        HEAD ".func f()\n{\nL:\n ret;\n}\n.visible .entry k()\n{\n .reg .b32 L;\n ret;\n}\n",           /* another function's */
        /* a prototype's parameters leave with it (the kernel's zz takes the place a held among the symbols) */
        HEAD ".extern .func f(.param .u32 a);\n.visible .entry k(.param .u32 zz)\n{\na:\n ret;\n}\n",
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90");
}

/* Rounding, .ftz, .sat, .NaN/.xorsign and .relu on opcodes or types that take none (ptxas: "Illegal modifier"); the
 * emulator ran them as if the modifier were absent. */
Test(refuse, flag_ops) {
    static const Bad bad[] = {
        {MT("mov.rn.f32 %f1, %f2"), "ptx:12: 'mov.rn.f32': mov takes no rounding modifier"},
        {MT("selp.rn.f32 %f1, %f2, %f3, %p1"), "selp takes no rounding modifier"},
        {MT("shl.rn.b32 %r1, %r2, 1"), "shl takes no rounding modifier"},
        {MT("max.rn.f16 %h1, %h2, %h3"), "max takes no rounding modifier"},
        {MT("ld.rn.global.f32 %f1, [%rd1]"), "ld takes no rounding modifier"},
        {MT("and.ftz.b32 %r1, %r2, %r3"), "'and.ftz.b32': and takes no .ftz here"},
        {MT("selp.ftz.f32 %f1, %f2, %f3, %p1"), "selp takes no .ftz"},
        {MT("ld.ftz.global.f32 %f1, [%rd1]"), "ld takes no .ftz"},
        {MT("tanh.approx.ftz.f32 %f1, %f2"), "tanh takes no .ftz"},
        {MT("ex2.approx.ftz.f16 %h1, %h2"), "ex2 takes no .ftz"},
        {MT("popc.ftz.b32 %r1, %r2"), "popc takes no .ftz"},
        {MT("and.sat.b32 %r1, %r2, %r3"), "'and.sat.b32': and takes no .sat"},
        {MT("min.sat.f32 %f1, %f2, %f3"), "min takes no .sat"},
        {MT("abs.sat.f32 %f1, %f2"), "abs takes no .sat"},
        {MT("div.rn.sat.f32 %f1, %f2, %f3"), "div takes no .sat"},
        {MT("sqrt.rn.sat.f32 %f1, %f2"), "sqrt takes no .sat"},
        {MT("ex2.approx.sat.f32 %f1, %f2"), "ex2 takes no .sat"},
        {MT("max.NaN.s32 %r1, %r2, %r3"), "'max.NaN.s32': .NaN and .xorsign are for min and max on floating-point types"},
        {MT("min.xorsign.abs.s32 %r1, %r2, %r3"), ".NaN and .xorsign are for min and max"},
        {MT("min.relu.f32 %f1, %f2, %f3"), "'min.relu.f32': .relu is min/max.relu on .s32 and .s16x2"},
        {MT("max.relu.f16 %h1, %h2, %h3"), ".relu is"},
        {MT("add.relu.f32 %f1, %f2, %f3"), ".relu is"},
        {MT("fma.rn.relu.f32 %f1, %f2, %f3, %f4"), ".relu is"},
    };
    static const char *const good[] = {
        MT("ex2.approx.ftz.f32 %f1, %f2;\n lg2.approx.ftz.f32 %f1, %f2;\n sin.approx.ftz.f32 %f1, %f2;\n neg.ftz.f16 %h1, %h2;\n"
           " abs.ftz.f16 %h1, %h2;\n max.ftz.f16 %h1, %h2, %h3;\n fma.rn.ftz.f16 %h1, %h2, %h3, %h4;\n cvt.sat.f32.f32 %f1, %f2;\n"
           " min.relu.s32 %r1, %r2, %r3;\n fma.rn.relu.f16 %h1, %h2, %h3, %h4;\n min.NaN.f32 %f1, %f2, %f3;\n"
           " max.xorsign.abs.f16 %h1, %h2, %h3;\n add.sat.s32 %r1, %r2, %r3;\n mad24.hi.sat.s32 %r1, %r2, %r3, %r4;\n"
           " mul.rn.sat.f32 %f1, %f2, %f3;\n cvt.rn.relu.f16.f32 %h1, %f1;\n slct.ftz.f32.f32 %f1, %f2, %f3, %f4;\n"
           /* the f64 tensor-core forms take a rounding (nvcc writes wmma's .rn) */
           " wmma.mma.sync.aligned.row.col.m8n8k4.f64.f64.f64.f64.rn {%fd1, %fd2}, {%fd1}, {%fd2}, {%fd1, %fd2};\n"
           " mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64.rn {%fd1, %fd2}, {%fd1}, {%fd2}, {%fd1, %fd2}"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90");
}

/* The half-precision forms: cvt's .ftz on a packed, fp8 or tf32 conversion, set's destination types for .f16, .bf16
 * and their pairs, and .noftz outside atom, red and the bulk reductions (each loaded and ran as if the modifier or
 * the type were another: add.noftz.f16 as add.f16, set.lt.f32.f16 as an f32 result). */
Test(refuse, half_forms) {
    static const Bad bad[] = {
        {MT("cvt.rn.ftz.f16x2.f32 %r1, %f1, %f2"), "ptx:12: 'cvt.rn.ftz.f16x2.f32': .ftz is for scalar conversions to or from .f32, not .f16x2 from .f32"},
        {MT("cvt.rn.ftz.bf16x2.f32 %r1, %f1, %f2"), ".ftz is for scalar conversions"},
        {MT("cvt.rna.ftz.tf32.f32 %r1, %f1"), "not .tf32 from .f32"},
        {MT("cvt.rn.ftz.satfinite.e4m3x2.f32 %h1, %f1, %f2"), ".ftz is for scalar conversions"},
        {MT("set.lt.f32.f16 %f1, %h2, %h3"), "'set.lt.f32.f16': set of .f16 gives .u16, .s16, .u32, .s32, .f16 or .bf16, not .f32"},
        {MT("set.lt.u64.f16 %rd1, %h2, %h3"), "not .u64"},
        {MT("set.lt.f16.bf16 %h1, %h2, %h3"), "set of .bf16 gives .u16, .s16, .u32, .s32 or .bf16, not .f16"},
        {MT("set.lt.f32.bf16 %f1, %h2, %h3"), "set of .bf16"},
        {MT("set.lt.u16.f16x2 %h1, %r2, %r3"), "set of .f16x2 gives .f16x2, .u32 or .s32, not .u16"},
        {MT("set.lt.f16x2.bf16x2 %r1, %r2, %r3"), "set of .bf16x2 gives .bf16x2, .u32 or .s32"},
        {MT("add.noftz.f16 %h1, %h2, %h3"), "'add.noftz.f16': .noftz is for atom, red and the bulk reductions"},
        {MT("fma.rn.noftz.f16 %h1, %h2, %h3, %h4"), ".noftz is for atom"},
        {MT("cvt.relu.f32.f16 %f1, %h1"), "'cvt.relu.f32.f16': .relu and .satfinite are for .rn or .rz conversions of .f32 to .f16, .bf16"},
        {MT("cvt.rn.relu.f32.f64 %f1, %fd1"), ".relu and .satfinite are for"},
        {MT("cvt.rn.satfinite.f16.f64 %h1, %fd1"), ".relu and .satfinite are for"},
        {MT("cvt.rn.relu.bf16.f16 %h1, %h2"), ".relu and .satfinite are for"},
        {MT("cvt.rm.relu.f16.f32 %h1, %f1"), ".relu and .satfinite are for"},
        {MT("cvt.rp.satfinite.bf16.f32 %h1, %f1"), ".relu and .satfinite are for"},
        {MT("cvt.satfinite.f32.bf16 %f1, %h1"), ".relu and .satfinite are for"},
        {MT("cvt.rm.f16x2.f32 %r1, %f1, %f2"), "'cvt.rm.f16x2.f32': a pair is made from .f32 rounded .rn or .rz"},
        {MT("cvt.rp.bf16x2.f32 %r1, %f1, %f2"), "a pair is made"},
        {MT("cvt.rn.sat.bf16.f32 %h1, %f1"), "'cvt.rn.sat.bf16.f32': .sat is not for conversions to or from .bf16"},
        {MT("cvt.rni.sat.s32.bf16 %r1, %h1"), ".sat is not for"},
        {MT("cvt.rn.sat.bf16.s32 %h1, %r1"), ".sat is not for"},
        {MT("cvt.rni.f32.bf16 %f1, %h1"), "'cvt.rni.f32.bf16' needs a float rounding (.rn .rz .rm .rp) or none"},
        {MT("cvt.rn.f32.f16 %f1, %h1"), "needs no rounding"},
    };
    static const char *const good[] = {
        MT("cvt.rn.f16x2.f32 %r1, %f1, %f2;\n cvt.rn.relu.bf16x2.f32 %r1, %f1, %f2;\n cvt.rna.tf32.f32 %r1, %f1;\n"
           " cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;\n cvt.ftz.f32.f16 %f1, %h1;\n set.lt.u16.f16 %h1, %h2, %h3;\n"
           " set.lt.s32.f16 %r1, %h2, %h3;\n set.lt.f16.f16 %h1, %h2, %h3;\n set.lt.bf16.f16 %h1, %h2, %h3;\n"
           " set.lt.ftz.u32.f16 %r1, %h2, %h3;\n set.lt.bf16.bf16 %h1, %h2, %h3;\n set.lt.u32.bf16 %r1, %h2, %h3;\n"
           " set.lt.u32.f16x2 %r1, %r2, %r3;\n set.lt.f16x2.f16x2 %r1, %r2, %r3;\n set.lt.s32.bf16x2 %r1, %r2, %r3;\n"
           " set.lt.f16.f32 %h1, %f2, %f3;\n add.rn.f16 %h1, %h2, %h3;\n atom.global.add.noftz.f16 %h1, [%rd1], %h2;\n"
           " red.global.add.noftz.bf16 [%rd1], %h2;\n"
           /* bf16 to a wider float takes a float rounding (it changes nothing) */
           " cvt.rn.f32.bf16 %f1, %h1;\n cvt.rz.ftz.f32.bf16 %f1, %h1;\n cvt.rp.f64.bf16 %fd1, %h1;\n cvt.rm.bf16.f32 %h1, %f1;\n"
           " cvt.rz.relu.bf16x2.f32 %r1, %f1, %f2;\n cvt.rn.relu.f16x2.e4m3x2 %r1, %h1;\n cvt.rn.sat.f16.s32 %h1, %r1;\n"
           " cvt.rni.sat.s32.f16 %r1, %h1"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90");
}

/* PTX 8.7 for sm_90a, the instruction at line 13 */
#define P(ins) ".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 a)\n{\n" \
    " .reg .pred %p<4>;\n .reg .b16 %h<4>;\n .reg .b32 %r<4>;\n .reg .b64 %rd<4>;\n .reg .f32 %f<4>;\n .reg .f64 %fd<4>;\n" \
    " .shared .align 16 .b8 sm[256];\n " ins ";\n ret;\n}\n"

/* Special registers: only mov and an integer cvt read one, mov at its width (16 bits too for %tid, %ntid, %ctaid,
 * %nctaid), cvt from a 64-bit source type only for a 64-bit one.  An add of %tid.x, a mov.u64 of it or a mov.u32 of
 * %clock64 loaded and ran (ptxas: "Special register argument not allowed", "Arguments mismatch"). */
Test(refuse, special_registers) {
    static const Bad bad[] = {
        {P("mov.u64 %rd1, %tid.x"), "ptx:13: 'mov.u64': special register %tid.x is 32 bits (or 16), not 64 bits"},
        {P("mov.s64 %rd1, %laneid"), "ptx:13: 'mov.s64': special register %laneid is 32 bits, not 64 bits"},
        {P("mov.u16 %h1, %laneid"), "special register %laneid is 32 bits, not 16 bits"},
        {P("mov.u32 %r1, %clock64"), "special register %clock64 is 64 bits, not 32 bits"},
        {P("mov.u32 %r1, %globaltimer"), "special register %globaltimer is 64 bits"},
        {P("mov.u64 %rd1, %globaltimer_lo"), "special register %globaltimer_lo is 32 bits"},
        {P("mov.u32 %r1, %current_graph_exec"), "is 64 bits"},
        {P("mov.f32 %f1, %tid.x"), "ptx:13: 'mov.f32': special register %tid.x as an operand: only mov and an integer cvt read one"},
        {P("mov.b32 %r1, {%h1, %tid.x}"), "special register %tid.x is 32 bits, not 16 bits"},
        {P("cvt.u32.u64 %r1, %tid.x"), "ptx:13: 'cvt.u32.u64': special register %tid.x is 32 bits, not a .u64 source"},
        {P("cvt.rn.f32.u32 %f1, %tid.x"), "special register %tid.x as an operand"},
        {P("add.u32 %r1, %tid.x, 1"), "ptx:13: 'add.u32': special register %tid.x as an operand: only mov and an integer cvt"},
        {P("mul.wide.u32 %rd1, %tid.x, 4"), "special register %tid.x as an operand"},
        {P("mad.lo.u32 %r1, %r2, 4, %ctaid.x"), "special register %ctaid.x as an operand"},
        {P("setp.eq.u32 %p1, %laneid, 0"), "special register %laneid as an operand"},
        {P("selp.b32 %r1, %tid.x, 0, %p1"), "special register %tid.x as an operand"},
        {P("popc.b32 %r1, %lanemask_lt"), "special register %lanemask_lt as an operand"},
        {P("st.global.u32 [%rd1], %tid.x"), "special register %tid.x as an operand"},
        {P("shfl.sync.idx.b32 %r1, %tid.x, 0, 31, -1"), "special register %tid.x as an operand"},
        {P("cvta.to.global.u64 %rd1, %globaltimer"), "special register %globaltimer as an operand"},
        {P("atom.global.add.u32 %r1, [%rd1], %tid.x"), "special register %tid.x as an operand"},
        {P("mov.u32 %r1, %is_explicit_cluster"), "%is_explicit_cluster is a .pred special register: only mov.pred reads it"},
    };
    static const char *const good[] = {
        P("mov.u32 %r1, %tid.x;\n mov.s32 %r1, %ntid.y;\n mov.u16 %h1, %ctaid.x;\n mov.b16 %h1, %nctaid.z;\n mov.u64 %rd1, %clock64;\n"
          " mov.s64 %rd1, %globaltimer;\n mov.u32 %r1, %globaltimer_lo;\n mov.u64 %rd1, %gridid;\n mov.u32 %r1, %gridid;\n"
          " mov.u64 %rd1, %pm0_64;\n mov.u32 %r1, %pm0;\n mov.u64 %rd1, %current_graph_exec;\n mov.b64 %rd1, {%tid.x, %tid.y};\n"
          " cvt.u64.u32 %rd1, %tid.x;\n cvt.u64.u16 %rd1, %tid.x;\n cvt.u32.u64 %r1, %clock64;\n cvt.u16.u32 %h1, %laneid;\n"
          " cvt.u32.u8 %r1, %tid.x;\n cvt.s64.s32 %rd1, %smid;\n mov.pred %p1, %is_explicit_cluster;\n add.u32 %r1, %r2, WARP_SZ;\n"
          " mov.u32 %r1, WARP_SZ"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90a");
}

/* Address operands: an immediate address is for .local only, a register address is an integer or bit register, and a
 * generic or .global ld/st/atom/red/prefetch takes no 32-bit register, nor cvta a .u32 type (.address_size 64); mov
 * takes no half, packed, tf32 or fp8 type.  Each loaded and ran before ([16] of .shared read shared byte 16). */
Test(refuse, addresses_and_mov_types) {
    static const Bad bad[] = {
        {P("ld.shared.u32 %r1, [16]"), "ptx:13: 'ld.shared.u32': an immediate address ([16]) is for the .local state space only"},
        {P("st.global.u32 [0], %r1"), "an immediate address ([0]) is for the .local state space only"},
        {P("ld.u32 %r1, [1+2]"), "an immediate address ([3])"},
        {P("atom.shared.add.u32 %r1, [8], 1"), "an immediate address ([8])"},
        {P("ld.param.u32 %r1, [16]"), "an immediate address"},
        {P("cp.async.ca.shared.global [%r1], [16], 4"), "an immediate address ([16])"},
        {P("mbarrier.init.shared.b64 [16], 1"), "an immediate address"},
        {P("ld.shared.u32 %r2, [%f1]"), "ptx:13: 'ld.shared.u32': register '%f' of type .f32 as an address"},
        {P("ld.global.u32 %r2, [%r1]"), "ptx:13: 'ld.global.u32': a 32-bit register as a .global address"},
        {P("st.u32 [%r1], %r2"), "a 32-bit register as a generic address"},
        {P("atom.global.add.u32 %r2, [%r1], 1"), "a 32-bit register as a .global address"},
        {P("red.add.u32 [%r1], 1"), "a 32-bit register as a generic address"},
        {P("prefetch.global.L2 [%r1]"), "a 32-bit register as a .global address"},
        {P("ld.global.nc.u32 %r2, [%r1]"), "a 32-bit register as a .global address"},
        {P("cvta.to.shared.u32 %r1, %rd1"), "ptx:13: 'cvta.to.shared.u32': cvta converts 64-bit addresses (.u64)"},
        {P("cvta.shared.u32 %r1, sm"), "cvta converts 64-bit addresses"},
        {P("cvta.to.shared.u64 %rd1, %r2"), "operand 2, register '%r2' of type .b32, does not fit .u64"},
        {P("mov.f16 %h1, %h2"), "ptx:13: 'mov.f16': mov takes no .f16 (its float types are .f32 and .f64; mov.b16 moves the bits)"},
        {P("mov.bf16 %h1, %h2"), "mov takes no .bf16"},
        {P("mov.f16x2 %r1, %r2"), "mov takes no .f16x2"},
        {P("mov.bf16x2 %r1, %r2"), "mov takes no .bf16x2"},
        {P("mov.tf32 %r1, %r2"), "mov takes no .tf32"},
    };
    static const char *const good[] = {
        P("ld.local.u32 %r1, [16];\n st.local.u32 [0], %r1;\n ld.local.u32 %r1, [-4];\n ld.shared.u32 %r1, [%r2];\n"
          " ld.shared.u32 %r1, [%rd2+4];\n st.shared::cluster.u32 [%r2], %r1;\n ld.local.u32 %r1, [%r2];\n ld.const.u32 %r1, [%r2];\n"
          " atom.shared.add.u32 %r1, [%r2], 1;\n cp.async.ca.shared.global [%r1], [%rd1], 4;\n ld.shared.u32 %r1, [sm+8];\n"
          " ld.global.u32 %r1, [%rd1];\n cvta.to.shared.u64 %rd1, %rd2;\n cvta.shared.u64 %rd1, sm;\n mov.b16 %h1, %h2;\n"
          " mov.b32 %r1, %r2;\n mov.f32 %f1, %f2;\n mov.f64 %fd1, %fd2"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90a");
}

/* Forms of the asynchronous-copy and memory-ordering instructions as ptxas takes them, each of which loaded: cp.async's
 * sizes (cp-size 4, 8, 16, .cg 16; src-size or ignore-src, not both), prefetch's one level and its state spaces,
 * fence's scope and .sync_restrict forms, membar's level, cp.reduce.async.bulk's operation and type per destination
 * (with .noftz for .add of .f16/.bf16 only), createpolicy's type, priorities, fraction and operand widths. */
Test(refuse, async_and_fence_forms) {
    static const Bad bad[] = {
        {P("cp.async.ca.shared.global [%r1], [%rd1], 4, %r2, %p1"), "ptx:13: 'cp.async.ca.shared.global': src-size and ignore-src exclude each other"},
        {P("cp.async.ca.shared.global [%r1], [%rd1], 12"), "cp-size is an immediate 4, 8 or 16"},
        {P("cp.async.cg.shared.global [%r1], [%rd1], 8"), "cp-size is an immediate 16 (.cg copies 16 bytes)"},
        {P("cp.async.ca.shared.global [%r1], [%rd1], 4, 8"), "src-size 8 is past cp-size 4"},
        {P("cp.async.ca.shared.global [%r1], [%rd1], 4, %rd2"), "src-size is a 32-bit integer register, not .b64"},
        {P("prefetch.global.L2::evict_first [%rd1]"), "ptx:13: 'prefetch.global.L2::evict_first': prefetch takes one level"},
        {P("prefetch.L2::evict_unchanged [%rd1]"), "prefetch takes one level"},
        {P("prefetch.global [%rd1]"), "prefetch takes one level"},
        {P("prefetch.global.L2.L1 [%rd1]"), "prefetch takes one level"},
        {P("prefetch.shared.L2 [%rd1]"), "prefetch is for generic, .global or .local addresses"},
        {P("prefetch.local.L2::evict_last [%rd1]"), "prefetch with an eviction priority is for generic or .global addresses"},
        {P("prefetch.global.tensormap [%rd1]"), "prefetch.tensormap is for generic, .const or .param addresses"},
        {P("fence.acq_rel.sync_restrict::shared::cluster.cluster"), "ptx:13: 'fence.acq_rel.sync_restrict::shared::cluster.cluster': the forms are"},
        {P("fence.acquire.sync_restrict::shared::cluster.cta"), "the forms are fence.acquire.sync_restrict::shared::cluster.cluster"},
        {P("fence.acquire.sync_restrict::shared::cta.cluster"), "the forms are"},
        {P("fence.sync_restrict::shared::cluster.cluster"), "the forms are"},
        {P("fence.sc"), "fence takes one scope"},
        {P("fence.relaxed.gpu"), "fence takes one scope"},
        {P("fence.sc.gpu.cta"), "fence takes one scope"},
        {P("fence.mbarrier_init.release.cta"), "the form is fence.mbarrier_init.release.cluster"},
        {P("fence.proxy.async.shared"), "fence.proxy.async at most one state space"},
        {P("fence.proxy.async.cta"), "fence.proxy.async at most one state space"},
        {P("membar.cluster"), "membar takes one level, .cta, .gl or .sys"},
        {P("membar.proxy.async"), "membar takes one level"},
        {P("cp.reduce.async.bulk.global.shared::cta.bulk_group.min.noftz.bf16 [%rd1], [%r1], 16"),
         "ptx:13: 'cp.reduce.async.bulk.global.shared::cta.bulk_group.min.noftz.bf16': .noftz is for .add of .f16 and .bf16 only"},
        {P("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.bf16 [%rd1], [%r1], 16"), "an .add of .bf16 needs .noftz"},
        {P("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.f32 [%rd1], [%r1], 16"), ".noftz is for .add of .f16 and .bf16 only"},
        {P("cp.reduce.async.bulk.global.shared::cta.bulk_group.min.f32 [%rd1], [%r1], 16"), "no .min reduction of .f32 elements into .global"},
        {P("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.s64 [%rd1], [%r1], 16"), "no .add reduction of .s64 elements"},
        {P("cp.reduce.async.bulk.global.shared::cta.bulk_group.and.u32 [%rd1], [%r1], 16"), "no .and reduction of .u32 elements"},
        {P("cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.noftz.f16 [%r2], [%r1], 16, [%r3]"),
         "no .add reduction of .f16 elements into .shared::cluster"},
        {P("cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.min.u64 [%r2], [%r1], 16, [%r3]"),
         "no .min reduction of .u64 elements into .shared::cluster"},
        {P("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.min.u64 [%r1], %rd1, [%r2]"),
         "ptx:13: 'red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.min.u64': no .min of .u64 (red.async: "},
        {P("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.max.s64 [%r1], %rd1, [%r2]"), "no .max of .s64"},
        {P("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.and.u32 [%r1], %r3, [%r2]"), "no .and of .u32"},
        {P("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.or.s32 [%r1], %r3, [%r2]"), "no .or of .s32"},
        {P("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.xor.b64 [%r1], %rd1, [%r2]"), "no .xor of .b64"},
        {P("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.inc.s32 [%r1], %r3, [%r2]"), "no .inc of .s32"},
        {P("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.f32 [%r1], %r3, [%r2]"), "no .add of .f32"},
        {P("st.async.shared::cluster.b32 [%r1], %r3, [%r2]"),
         "ptx:13: 'st.async.shared::cluster.b32' needs .mbarrier::complete_tx::bytes (the mbarrier the bytes complete on)"},
        {P("red.async.relaxed.cluster.shared::cluster.add.u32 [%r1], %r3, [%r2]"), "needs .mbarrier::complete_tx::bytes"},
        {P("st.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.b32 [%r1], %r3, [%r2]"),
         "st.async is .weak or .cluster (no other memory order or scope)"},
        {P("st.async.release.mbarrier::complete_tx::bytes.b32 [%r1], %r3, [%r2]"), "st.async is .weak or .cluster (no other memory order or scope)"},
        {P("red.async.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r1], %r3, [%r2]"),
         "red.async needs .relaxed.cluster and reduces into .shared::cluster"},
        {P("red.async.relaxed.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r1], %r3, [%r2]"), "red.async needs .relaxed.cluster"},
        {P("red.async.release.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r1], %r3, [%r2]"),
         "red.async is .relaxed.cluster (no other memory order or scope)"},
        {P("red.async.relaxed.gpu.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r1], %r3, [%r2]"), "red.async is .relaxed.cluster"},
        {P("red.async.weak.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r1], %r3, [%r2]"), "red.async is .relaxed.cluster"},
        {P("st.async.weak.cluster.mbarrier::complete_tx::bytes.b32 [%r1], %r3, [%r2]"), "st.async is .weak or .cluster"},
        {P("red.async.relaxed.cluster.shared::cta.mbarrier::complete_tx::bytes.add.u32 [%r1], %r3, [%r2]"),
         "reduces into .shared::cluster"},
        {P("createpolicy.cvt.L2.b64 %rd1, %r1"), "ptx:13: 'createpolicy.cvt.L2.b64': the policy converted is a 64-bit register, not .b32"},
        {P("createpolicy.cvt.b64 %rd1, %rd2"), "the form is createpolicy.cvt.L2.b64 d, a"},
        {P("createpolicy.fractional.L2::evict_last.b32 %r1, 1.0"), "createpolicy makes a .b64 policy"},
        {P("createpolicy.fractional.L2::evict_last.b64 %rd1, 1.5"), "the fraction 1.5 is not in (0, 1]"},
        {P("createpolicy.fractional.L2::evict_last.b64 %rd1, 0.0"), "the fraction 0 is not in (0, 1]"},
        {P("createpolicy.fractional.L2::evict_first.L2::evict_last.b64 %rd1, 1.0"), "createpolicy needs an eviction priority"},
        {P("createpolicy.fractional.b64 %rd1, 1.0"), "createpolicy needs an eviction priority"},
        {P("createpolicy.range.L2::evict_last.b64 %rd1, [%rd2], %rd3, %r2"), "the sizes are 32-bit, not .b64"},
    };
    static const char *const good[] = {
        P("cp.async.ca.shared.global [%r1], [%rd1], 4, %r2;\n cp.async.ca.shared.global [%r1], [%rd1], 8, %p1;\n"
          " cp.async.cg.shared.global [%r1], [%rd1], 16, 7;\n cp.async.ca.shared.global.L2::cache_hint [%r1], [%rd1], 4, %p1, %rd2;\n"
          " prefetch.global.L2::evict_last [%rd1];\n prefetch.L2::evict_normal [%rd1];\n prefetch.local.L1 [%rd1];\n prefetch.L1 [%rd1];\n"
          " prefetch.param.tensormap [%rd1];\n prefetch.const.tensormap [%rd1];\n prefetch.tensormap [%rd1];\n"
          " fence.acquire.sync_restrict::shared::cluster.cluster;\n fence.release.sync_restrict::shared::cta.cluster;\n"
          " fence.sc.cta;\n fence.acq_rel.gpu;\n fence.acquire.cluster;\n fence.release.sys;\n fence.gpu;\n"
          " fence.mbarrier_init.release.cluster;\n fence.proxy.async;\n fence.proxy.async.shared::cta;\n fence.proxy.async.global;\n"
          " fence.proxy.alias;\n membar.cta;\n membar.gl;\n membar.sys;\n membar.proxy.alias;\n"
          " cp.reduce.async.bulk.global.shared::cta.bulk_group.min.bf16 [%rd1], [%r1], 16;\n"
          " cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.f16 [%rd1], [%r1], 16;\n"
          " cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f64 [%rd1], [%r1], 16;\n"
          " cp.reduce.async.bulk.global.shared::cta.bulk_group.max.s64 [%rd1], [%r1], 16;\n"
          " cp.reduce.async.bulk.global.shared::cta.bulk_group.xor.b64 [%rd1], [%r1], 16;\n"
          " cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.u64 [%r2], [%r1], 16, [%r3];\n"
          " cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.min.s32 [%r2], [%r1], 16, [%r3];\n"
          " red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.s64 [%r1], %rd1, [%r2];\n"
          " red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.min.s32 [%r1], %r3, [%r2];\n"
          " red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.dec.u32 [%r1], %r3, [%r2];\n"
          " red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.xor.b32 [%r1], %r3, [%r2];\n"
          " red.async.relaxed.cluster.mbarrier::complete_tx::bytes.inc.u32 [%r1], %r3, [%r2];\n"
          " st.async.weak.shared::cluster.mbarrier::complete_tx::bytes.b32 [%r1], %r3, [%r2];\n"
          " st.async.mbarrier::complete_tx::bytes.v2.b64 [%r1], {%rd1, %rd2}, [%r2];\n"
          " st.async.shared::cta.mbarrier::complete_tx::bytes.b32 [%r1], %r3, [%r2];\n"
          " st.async.cluster.mbarrier::complete_tx::bytes.b32 [%r1], %r3, [%r2];\n"
          " createpolicy.cvt.L2.b64 %rd1, %rd2;\n createpolicy.fractional.L2::evict_last.L2::evict_unchanged.b64 %rd1, 1.0;\n"
          " createpolicy.fractional.L2::evict_normal.b64 %rd1, 0f3F000000;\n createpolicy.fractional.L2::evict_first.b64 %rd1;\n"
          " createpolicy.range.L2::evict_last.L2::evict_first.b64 %rd1, [%rd2], %r1, %r2"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90a");
}

/* Found by sweeping single-instruction kernels through ptxas and the emulator: ld/st memory orders with a missing or
 * extra scope, .mmio off .relaxed.sys, two orders; .reg of an instruction-only type or a vector past 128 bits;
 * bar.sync.aligned; selp of f16 pairs and unsigned comparisons of f16/bf16; cvt between .f16 and .bf16 rounded to an
 * integer; cvt with .tf32, f8 or pair types past their forms (cvt.f32.e4m3, cvt.f16.tf32, cvt.tf32.f32 unrounded, an
 * f8 pair without .rn.satfinite); arithmetic on .f16/.bf16 types past their forms (sqrt.rn.f16, add.rz.f16,
 * fma.rn.sat.bf16, ex2.approx.bf16 without .ftz); .cc on 16-bit types; .wide of 64-bit types or into a register
 * not twice as wide (mul.wide.u32 %r1 kept the low half); mul24 into a 64-bit register; .nc off ld.  Each loaded. */
Test(refuse, swept_forms) {
    static const Bad bad[] = {
        {P("ld.relaxed.global.u32 %r1, [%rd1]"), "ptx:13: 'ld.relaxed.global.u32': .relaxed needs a scope (.cta .cluster .gpu .sys)"},
        {P("st.release.u32 [%rd1], %r1"), ".release needs a scope"},
        {P("ld.volatile.gpu.u32 %r1, [%rd1]"), "'ld.volatile.gpu.u32': a load or store without .relaxed, .acquire or .release takes no scope"},
        {P("st.weak.cta.global.u32 [%rd1], %r1"), "takes no scope"},
        {P("ld.relaxed.acquire.gpu.u32 %r1, [%rd1]"), "at most one memory order"},
        {P("ld.relaxed.gpu.gpu.u32 %r1, [%rd1]"), "at most one memory order"},
        {P("ld.mmio.relaxed.gpu.global.u32 %r1, [%rd1]"), "the form is .mmio.relaxed.sys, of a generic or .global address"},
        {P("st.mmio.relaxed.sys.shared.u32 [%r1], %r2"), "the form is .mmio.relaxed.sys"},
        {P("ld.relaxed.gpu.param.u32 %r1, [a]"), ".relaxed is for generic, .global and .shared addresses"},
        {P(".reg .bf16 %q"), "ptx:13: .bf16 is an instruction type, not a register type"},
        {P(".reg .bf16x2 %q"), ".bf16x2 is an instruction type"},
        {P(".reg .tf32 %q"), ".tf32 is an instruction type"},
        {P(".reg .e4m3 %q"), ".e4m3 is an instruction type"},
        {P(".reg .u16x2 %q"), ".u16x2 is an instruction type"},
        {P(".reg .b1 %q"), ".b1 is an instruction type"},
        {P(".reg .v4 .b64 %q"), "ptx:13: a .v4 .b64 register is past 128 bits"},
        {P("bar.sync.aligned 0"), "ptx:13: 'bar.sync.aligned': bar takes no .aligned"},
        {P("bar.warp.sync.aligned -1"), "bar takes no .aligned"},
        {P("selp.f16x2 %r1, %r2, %r3, %p1"), "ptx:13: 'selp.f16x2': selp takes no .f16x2 (selp.b32 selects its bits)"},
        {P("selp.bf16 %h1, %h2, %h3, %p1"), "selp takes no .bf16"},
        {P("setp.lo.f16 %p1, %h1, %h2"), "'setp.lo.f16': .lo .ls .hi .hs compare integers, not .f16"},
        {P("set.hi.u32.bf16 %r1, %h1, %h2"), "compare integers, not .bf16"},
        {P("cvt.rni.f16.bf16 %h1, %h2"), "'cvt.rni.f16.bf16' needs a float rounding (.rn .rz .rm .rp) or none"},
        {P("cvt.f32.e4m3 %f1, %h1"), "ptx:13: 'cvt.f32.e4m3': not a form of cvt (with .tf32, f8 and pair types: "},
        {P("cvt.rn.f16.e5m2 %h1, %h2"), "'cvt.rn.f16.e5m2': not a form of cvt"},
        {P("cvt.rn.satfinite.e4m3.f32 %h1, %f1"), "not a form of cvt"},
        {P("cvt.f32.tf32 %f1, %r1"), "'cvt.f32.tf32': not a form of cvt"},
        {P("cvt.rn.tf32.f16 %r1, %h1"), "not a form of cvt"},
        {P("cvt.tf32.f32 %r1, %f1"), "'cvt.tf32.f32': not a form of cvt"},
        {P("cvt.rna.relu.tf32.f32 %r1, %f1"), "not a form of cvt"},
        {P("cvt.rn.e4m3x2.f32 %h1, %f1, %f2"), "'cvt.rn.e4m3x2.f32': not a form of cvt"},
        {P("cvt.rz.satfinite.e5m2x2.f16x2 %h1, %r1"), "not a form of cvt"},
        {P("cvt.rn.satfinite.e4m3x2.bf16x2 %h1, %r1"), "not a form of cvt"},
        {P("cvt.rn.satfinite.f16x2.e4m3x2 %r1, %h1"), "not a form of cvt"},
        {P("cvt.f16x2.e5m2x2 %r1, %h1"), "not a form of cvt"},
        {P("cvt.rn.bf16x2.e4m3x2 %r1, %h1"), "not a form of cvt"},
        {P("cvt.rn.e5m2x2.e4m3x2 %h1, %h2"), "not a form of cvt"},
        {P("cvt.rn.s32.e4m3x2 %r1, %h1"), "not a form of cvt"},
        {P("sqrt.rn.f16 %h1, %h2"), "ptx:13: 'sqrt.rn.f16': sqrt takes no .f16, .bf16 or pair type (.f32 and .f64 do it)"},
        {P("rcp.approx.ftz.f16x2 %r1, %r2"), "rcp takes no .f16, .bf16 or pair type"},
        {P("div.rn.bf16 %h1, %h2, %h3"), "div takes no .f16, .bf16 or pair type"},
        {P("sin.approx.f16 %h1, %h2"), "sin takes no .f16"},
        {P("mad.rn.f16 %h1, %h2, %h3, %h1"), "mad takes no .f16"},
        {P("copysign.f16 %h1, %h2, %h3"), "copysign takes no .f16"},
        {P("add.rz.f16 %h1, %h2, %h3"), "'add.rz.f16': add rounds .rn (or takes no rounding) on these types"},
        {P("mul.rm.bf16x2 %r1, %r2, %r3"), "mul rounds .rn"},
        {P("add.sat.bf16 %h1, %h2, %h3"), "'add.sat.bf16': add takes no .ftz or .sat on .bf16 types"},
        {P("mul.ftz.bf16x2 %r1, %r2, %r3"), "mul takes no .ftz or .sat on .bf16 types"},
        {P("fma.rz.f16 %h1, %h2, %h3, %h1"), "'fma.rz.f16': fma rounds .rn (.bf16 types: .rn or .rz)"},
        {P("fma.rn.sat.bf16x2 %r1, %r2, %r3, %r1"), "fma takes no .ftz or .sat on .bf16 types"},
        {P("max.ftz.NaN.bf16 %h1, %h2, %h3"), "max takes no .ftz on .bf16 types"},
        {P("neg.ftz.bf16x2 %r1, %r2"), "neg takes no .ftz on .bf16 types"},
        {P("ex2.approx.bf16 %h1, %h2"), "'ex2.approx.bf16': ex2 needs .approx.ftz on .bf16 types"},
        {P("add.cc.u16 %h1, %h2, %h3"), "ptx:13: 'add.cc.u16': .cc is for 32- and 64-bit integer types, not .u16"},
        {P("madc.lo.cc.u16 %h1, %h2, %h3, %h1"), ".cc is for 32- and 64-bit integer types"},
        {P("mul.wide.u64 %rd1, %rd2, %rd3"), "'mul.wide.u64': .wide is for 16- and 32-bit types"},
        {P("mul.wide.u32 %r1, %r2, %r3"), "'mul.wide.u32': operand 1, register '%r1' of type .b32, does not fit .u64"},
        {P("mad.wide.s32 %rd1, %r2, %r3, %r1"), "operand 4, register '%r1' of type .b32, does not fit .s64"},
        {P("mul.wide.u16 %h1, %h2, %h3"), "operand 1, register '%h1' of type .b16, does not fit .u32"},
        {P("mul24.lo.u32 %rd1, %r2, %r3"), "'mul24.lo.u32': operand 1, register '%rd1' of type .b64, does not fit .u32"},
        {P("atom.global.nc.add.u32 %r1, [%rd1], %r2"), "ptx:13: 'atom.global.nc.add.u32': .nc is ld.global.nc's, atom takes none"},
        {P("st.global.nc.u32 [%rd1], %r2"), ".nc is ld.global.nc's, st takes none"},
        {P("ldu.global.nc.u32 %r1, [%rd1]"), ".nc is ld.global.nc's, ldu takes none"},
        {P("st.async.global.b32 [%rd1], %r1"), "ptx:13: 'st.async.global.b32': st.async and red.async on .global need .target sm_100"},
        {P("red.async.relaxed.gpu.global.add.u32 [%rd1], %r1"), "on .global need .target sm_100 or later"},
        {P("sub.u16x2 %r1, %r2, %r3"), "ptx:13: 'sub.u16x2': sub takes no .u16x2 (add, min and max take it)"},
        {P("mul.lo.s16x2 %r1, %r2, %r3"), "mul takes no .s16x2"},
        {P("mad.lo.u16x2 %r1, %r2, %r3, %r1"), "mad takes no .u16x2"},
        {P("abs.s16x2 %r1, %r2"), "abs takes no .s16x2"},
        {P("neg.s16x2 %r1, %r2"), "neg takes no .s16x2"},
        {P("setp.eq.u16x2 %p1, %r2, %r3"), "setp takes no .u16x2"},
        {P(".reg .b32 .align 8 %q"), "ptx:13: a .reg declaration's .align comes before its type"},
        {P(".reg .align 3 .b32 %q"), "ptx:13: bad .align of a .reg declaration (a power of two)"},
    };
    static const char *const good[] = {
        P("ld.relaxed.gpu.global.u32 %r1, [%rd1];\n st.release.sys.u32 [%rd1], %r1;\n ld.acquire.cta.shared.u32 %r1, [%r2];\n"
          " ld.volatile.global.u32 %r1, [%rd1];\n st.weak.u32 [%rd1], %r1;\n ld.mmio.relaxed.sys.global.u32 %r1, [%rd1];\n"
          " ld.relaxed.cluster.shared::cluster.u32 %r1, [%r2];\n .reg .f16 %q1;\n .reg .f16x2 %q2;\n .reg .v4 .b32 %q3;\n"
          " .reg .v2 .b64 %q4;\n .reg .b8 %q5;\n barrier.sync.aligned 0;\n bar.sync 0;\n selp.b32 %r1, %r2, %r3, %p1;\n"
          " setp.ltu.f16 %p1, %h1, %h2;\n set.lt.u32.bf16 %r1, %h1, %h2;\n cvt.rn.f16.bf16 %h1, %h2;\n cvt.f16.bf16 %h1, %h2;\n"
          " cvt.rni.f16.f16 %h1, %h2;\n .reg .align 8 .b32 %q6;\n .reg .align 16 .v4 .b32 %q7;\n"
          " cvt.rna.tf32.f32 %r1, %f1;\n cvt.rna.satfinite.tf32.f32 %r1, %f1;\n cvt.rn.tf32.f32 %r1, %f1;\n cvt.rz.relu.tf32.f32 %r1, %f1;\n"
          " cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;\n cvt.rn.satfinite.relu.e5m2x2.f32 %h1, %f1, %f2;\n"
          " cvt.rn.satfinite.e4m3x2.f16x2 %h1, %r1;\n cvt.rn.relu.satfinite.e5m2x2.f16x2 %h1, %r1;\n"
          " cvt.rn.f16x2.e4m3x2 %r1, %h1;\n cvt.rn.relu.f16x2.e5m2x2 %r1, %h1;\n cvt.rz.relu.satfinite.bf16x2.f32 %r1, %f1, %f2;\n"
          " add.rn.ftz.sat.f16 %h1, %h2, %h3;\n sub.rn.bf16x2 %r1, %r2, %r3;\n mul.bf16 %h1, %h2, %h3;\n fma.rz.bf16 %h1, %h2, %h3, %h1;\n"
          " fma.rn.oob.relu.bf16x2 %r1, %r2, %r3, %r1;\n fma.rn.ftz.sat.f16x2 %r1, %r2, %r3, %r1;\n min.NaN.xorsign.abs.bf16 %h1, %h2, %h3;\n"
          " max.ftz.NaN.f16x2 %r1, %r2, %r3;\n neg.ftz.f16 %h1, %h2;\n abs.bf16x2 %r1, %r2;\n ex2.approx.ftz.bf16x2 %r1, %r2;\n"
          " ex2.approx.f16 %h1, %h2;\n tanh.approx.bf16 %h1, %h2;\n add.cc.s32 %r1, %r2, %r3;\n addc.u16 %h1, %h2, %h3;\n"
          " mul.wide.s32 %rd1, %r2, %r3;\n mad.wide.u16 %r1, %h2, %h3, %r2;\n mul.wide.u32 %rd1, %r2, 1000;\n mul24.hi.s32 %r1, %r2, %r3;\n"
          " ld.global.nc.u32 %r1, [%rd1];\n add.u16x2 %r1, %r2, %r3;\n add.s16x2 %r1, %r2, %r3;\n min.u16x2 %r1, %r2, %r3;\n"
          " max.s16x2 %r1, %r2, %r3;\n min.relu.s16x2 %r1, %r2, %r3"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90a");
}

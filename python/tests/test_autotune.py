"""Autotuning at launch (tile.compile(..., autotune=True)) on the emulator.

Each test has its own cache folder, so the tuning database starts empty; the
kernels' results are checked against NumPy on random inputs with outputs
poisoned first, at sizes that are not multiples of any configuration's block."""
import os
import tempfile
import unittest
import warnings

import numpy as np

import tile

rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))

SCALE = """
@config(BLOCK=128, num_warps=4)
@config(BLOCK=256, num_warps=2)
@config(BLOCK=512, num_warps=8)
@tune_key(n)
kernel scale(x: *f32, y: *f32, n: i32, s: f32, const BLOCK: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    store(y + offs, load(x + offs, offs < n, 0.0) * s, offs < n);
}

kernel fill(x: *f32) { store(x, 7.0); }
"""

# in place: y = 2 y; and an accumulation: sum of x into out[0] (atomic), which must start at 0
INPLACE = """
@config(BLOCK=128)
@config(BLOCK=256)
kernel twice(y: *f32, n: i32, const BLOCK: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    store(y + offs, load(y + offs, offs < n, 0.0) * 2.0, offs < n);
}

@config(BLOCK=64)
@config(BLOCK=128)
kernel total(x: *f32, out: *f32, n: i32, const BLOCK: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    atomic_add(out, sum(load(x + offs, offs < n, 0.0), 0));
}
"""


def grid(n):
    return lambda meta: (tile.cdiv(n, meta["BLOCK"]),)


class Autotune(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dev = tile.Device("emu", cache_dir=self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_meta_has_compile_constexprs(self):
        """A tuned configuration's meta holds compile()'s constexprs too: the grid read BLOCK=1024 (the default)
        where compile gave 128, launched one program for n=1000 and left 872 outputs unwritten."""
        src = ("@config(num_warps=4)\n@config(num_warps=8)\nkernel scale(x: *f32, y: *f32, n: i32, const BLOCK: i32 = 1024) {\n"
               "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
               "    store(y + offs, load(x + offs, offs < n, 0.0) * 2.0, offs < n);\n}\n")
        k = tile.compile(src, autotune=True, device=self.dev, BLOCK=128).scale
        n = 1000
        x = rng.standard_normal(n).astype(np.float32)
        y = np.full(n, np.nan, np.float32)
        seen = []
        k[lambda meta: seen.append(meta["BLOCK"]) or (tile.cdiv(n, meta["BLOCK"]),)](x, y, n)
        self.assertTrue(seen and all(b == 128 for b in seen), seen)
        np.testing.assert_allclose(y, 2 * x.astype(np.float64), rtol=1e-6)

    def write(self, text):
        path = os.path.join(self.tmp.name, "k.tile")
        with open(path, "w") as f:
            f.write(text)
        return path

    def db(self):
        path = os.path.join(self.tmp.name, "tune.db")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return [line.rstrip("\n").split("\t") for line in f if line.strip()]

    def run_scale(self, k, n, s=1.5):
        x = rng.standard_normal(n).astype(np.float32)
        y = np.full(n, np.nan, np.float32)
        k[grid(n)](x, y, n, s)
        np.testing.assert_array_equal(y, (x.astype(np.float64) * s).astype(np.float32))

    def test_picks_per_bucket_and_keeps_it(self):
        m = tile.compile(SCALE, autotune=True, device=self.dev)
        k = m.scale
        self.assertIsInstance(k, tile.Autotuned)
        self.assertEqual(k.keys, ["n"])
        self.assertEqual([c["BLOCK"] for c in k.configs], [128, 256, 512])
        self.assertEqual(k.params, [("x", "*f32"), ("y", "*f32"), ("n", "i32"), ("s", "f32")])
        # a kernel without @config is a plain Kernel
        self.assertIsInstance(m.fill, tile.Kernel)
        self.run_scale(k, 1000)
        self.assertEqual(list(k.cache), ["n=1024"])
        self.assertIn(k.best_config, k.configs)
        chosen = k.cache["n=1024"]
        self.run_scale(k, 777)  # the same bucket: no tuning, the same configuration
        self.assertEqual(list(k.cache), ["n=1024"])
        self.assertEqual(k.cache["n=1024"], chosen)
        self.run_scale(k, 3001)  # another bucket
        self.assertEqual(sorted(k.cache), ["n=1024", "n=4096"])
        # source text has no kernel id: nothing is recorded
        self.assertEqual(self.db(), [])

    def test_string_configuration(self):
        # a string constant tuned by @config: the kernel sees it, .configs reads it without its quotes
        src = """
        const ACT = "none";
        @config(BLOCK=128, ACT="relu")
        @config(BLOCK=256, ACT="relu")
        kernel act(x: *f32, y: *f32, n: i32, const BLOCK: i32) {
            let offs = program_id(0) * BLOCK + arange(0, BLOCK);
            let v = load(x + offs, offs < n, 0.0);
            if ACT == "relu" { v = maximum(v, 0.0); }
            store(y + offs, v, offs < n);
        }
        """
        k = tile.compile(src, autotune=True, device=self.dev).act
        self.assertEqual([c["ACT"] for c in k.configs], ["relu", "relu"])
        n = 1000
        x = rng.standard_normal(n).astype(np.float32)
        y = np.full(n, np.nan, dtype=np.float32)
        k[grid(n)](x, y, n)
        np.testing.assert_array_equal(y, np.maximum(x, 0))

    def test_string_configuration_with_a_space(self):
        # a string value holding a space is one define, not two: every configuration compiles and may win
        # (split at the space it was "bad define 'relu\"'", and the configuration was skipped at launch), and
        # the choice is recorded in the tuning database and read back
        src = """
        @config(BLOCK=128, ACT="leaky relu")
        @config(BLOCK=256, ACT="none")
        kernel act(x: *f32, y: *f32, n: i32, const BLOCK: i32, const ACT = "none") {
            let offs = program_id(0) * BLOCK + arange(0, BLOCK);
            let v = load(x + offs, offs < n, 0.0);
            if ACT == "leaky relu" { v = where(v >= 0.0, v, 0.01 * v); }
            store(y + offs, v, offs < n);
        }
        """
        path = self.write(src)
        k = tile.compile(path, autotune=True, device=self.dev).act
        self.assertEqual([c["ACT"] for c in k.configs], ["leaky relu", "none"])
        self.assertIn("ptx", k.asm(config=0))
        n = 1000
        x = rng.standard_normal(n).astype(np.float32)

        def run(k):
            y = np.full(n, np.nan, dtype=np.float32)
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # no configuration skipped, the choice recorded
                k[grid(n)](x, y, n)
            leaky = k.best_config["ACT"] == "leaky relu"
            np.testing.assert_allclose(y, np.where(x >= 0, x, np.float32(0.01) * x) if leaky else x, rtol=1e-6)
        run(k)
        # the tuning database keeps a string value quoted, as @config writes it (it refused such a record)
        quoted = {"leaky relu": 'BLOCK=128 ACT="leaky relu"', "none": 'BLOCK=256 ACT="none"'}
        rec = self.db()
        self.assertEqual([r[3] for r in rec], [quoted[k.best_config["ACT"]]])
        other = next(c for c in k.configs if c != k.best_config)
        with open(os.path.join(self.tmp.name, "tune.db"), "a") as f:
            f.write("%s\t%s\t%s\t%s\t1e-9\n" % (rec[0][0], rec[0][1], rec[0][2], quoted[other["ACT"]]))
        k2 = tile.compile(path, autotune=True, device=self.dev).act
        run(k2)
        self.assertEqual(k2.best_config, other)  # read from the database, spaces and all

    def test_tuning_database_round_trip(self):
        path = self.write(SCALE)
        k = tile.compile(path, autotune=True, device=self.dev).scale
        self.run_scale(k, 1500, s=-0.5)
        rec = self.db()
        self.assertEqual(len(rec), 1)
        kid, devkey, bucket, config, seconds = rec[0]
        self.assertEqual((devkey, bucket), ("emu/sm_80", "n=2048"))
        self.assertEqual(config, " ".join("%s=%s" % kv for kv in k.best_config.items()))
        self.assertGreater(float(seconds), 0)
        # a record that says another configuration is faster: a new module takes it without timing
        other = next(c for c in k.configs if c != k.best_config)
        with open(os.path.join(self.tmp.name, "tune.db"), "a") as f:
            f.write("%s\t%s\t%s\t%s\t%s\n" % (kid, devkey, bucket, " ".join("%s=%s" % kv for kv in other.items()), 1e-9))
        k2 = tile.compile(path, autotune=True, device=self.dev).scale
        self.run_scale(k2, 1100)
        self.assertEqual(k2.best_config, other)
        # a record outside the @config space is not applied
        with open(os.path.join(self.tmp.name, "tune.db"), "a") as f:
            f.write("%s\t%s\tn=64\tBLOCK=96 num_warps=4\t1e-12\n" % (kid, devkey))
        k3 = tile.compile(path, autotune=True, device=self.dev).scale
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.run_scale(k3, 50)
        self.assertIn(k3.best_config, k3.configs)

    def test_unwritable_tuning_database_warns(self):
        # a cache folder that is a file: the compile cache goes on without it, and so does the launch, with
        # its choice not recorded (the launch raised tile.Error: the tuning database refused the record)
        path = self.write(SCALE)
        blocked = os.path.join(self.tmp.name, "not_a_folder")
        with open(blocked, "w") as f:
            f.write("x")
        dev = tile.Device("emu", cache_dir=blocked)
        k = tile.compile(path, autotune=True, device=dev).scale
        with self.assertWarnsRegex(UserWarning, "not recorded in the tuning database"):
            self.run_scale(k, 700, s=3.0)
        self.assertIn(k.best_config, k.configs)
        self.run_scale(k, 600, s=-2.0)  # the bucket's choice is kept in memory

    def test_restore_value_and_reset_to_zero(self):
        m = tile.compile(INPLACE, autotune=True, device=self.dev, restore_value=("y",), reset_to_zero="out")
        n = 1000
        y0 = rng.standard_normal(n).astype(np.float32)
        y = y0.copy()
        m.twice[grid(n)](y, n)  # two configurations ran on y first: restored, then the launch itself
        np.testing.assert_array_equal(y, y0 * 2)
        m.twice[grid(n)](y, n)  # tuned: one launch
        np.testing.assert_array_equal(y, y0 * 4)
        x = rng.standard_normal(n).astype(np.float32)
        out = np.zeros(1, np.float32)
        m.total[grid(n)](x, out, n)
        np.testing.assert_allclose(out[0], x.astype(np.float64).sum(), rtol=1e-5, atol=1e-4)
        m.total[grid(n)](x, out, n)  # tuned: nothing is zeroed, the launch adds to out
        np.testing.assert_allclose(out[0], 2 * x.astype(np.float64).sum(), rtol=1e-5, atol=1e-4)
        # a list where restore_value names an array: that, not the failed restore's "list indices must be integers"
        m2 = tile.compile(INPLACE, autotune=True, device=self.dev, restore_value=("y",))
        with self.assertRaisesRegex(TypeError, r"argument 'y' \(restore_value / reset_to_zero\): expected an array, got list"):
            m2.twice[grid(n)](list(y0), n)

    def test_without_restore_value_runs_accumulate(self):
        # what restore_value is for: every tuning run doubles y again (2 configurations and the launch)
        m = tile.compile(INPLACE, autotune=True, device=self.dev, kernel="twice")
        y = np.ones(300, np.float32)
        m.twice[grid(300)](y, 300)
        np.testing.assert_array_equal(y, np.full(300, 8, np.float32))

    def test_single_configuration_runs_once(self):
        # one @config is nothing to choose: the call launches it once, as Triton's autotuner with one config does
        # (a tuning run wrote y first: 4 where 2 was due)
        m = tile.compile(INPLACE.replace("@config(BLOCK=256)\n", "", 1), autotune=True, device=self.dev, kernel="twice")
        y0 = rng.standard_normal(301).astype(np.float32)
        y = y0.copy()
        m.twice[grid(301)](y, 301)
        np.testing.assert_array_equal(y, y0 * 2)
        self.assertEqual((m.twice.best_config, m.twice.cache), ({"BLOCK": 128}, {"any": 0}))

    def test_failing_configuration_is_skipped(self):
        src = SCALE.replace("@config(BLOCK=256, num_warps=2)", "@config(BLOCK=96, num_warps=2)")
        m = tile.compile(src, autotune=True, device=self.dev, kernel="scale")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            self.run_scale(m.scale, 999)
        self.assertTrue(any("BLOCK=96" in str(x.message) and "skipped" in str(x.message) for x in w), [str(x.message) for x in w])
        self.assertNotEqual(m.scale.best_config["BLOCK"], 96)

    def test_errors(self):
        with self.assertRaisesRegex(tile.Error, "@config sets BLOCK, which compile\\(\\) also gives"):
            tile.compile(SCALE, autotune=True, device=self.dev, BLOCK=64)
        with self.assertRaisesRegex(tile.Error, "@config sets num_warps"):
            tile.compile(SCALE, autotune=True, device=self.dev, num_warps=4)
        with self.assertRaisesRegex(TypeError, "restore_value and reset_to_zero are for autotune=True"):
            tile.compile(SCALE, device=self.dev, restore_value=("y",))
        with self.assertRaisesRegex(TypeError, "no autotuned kernel has an argument 'z'.*kernels: scale"):
            tile.compile(SCALE, autotune=True, device=self.dev, kernel="scale", restore_value=("z",))
        with self.assertRaises(tile.CompileError) as e:
            tile.compile(SCALE.replace("* s, offs", "* s2, offs"), autotune=True, device=self.dev)
        self.assertIn("unknown name 's2'", str(e.exception))
        # without autotune, a const without a default still needs a value
        with self.assertRaisesRegex(tile.CompileError, "const parameter 'BLOCK' has no default"):
            tile.compile(SCALE, device=self.dev)
        # a @config naming no const parameter, or giving a value of the wrong kind, is the source's error,
        # located at the attribute as without autotune, whichever configuration it is in (its values as
        # defines would only be refused, unlocated, as a plain tile.Error)
        for src, where, what in ((SCALE.replace("@config(BLOCK=512,", "@config(BLOK=512,"), "<source>:4:14",
                                  "'@config' sets 'BLOK', which is neither a const parameter"),
                                 (SCALE.replace("@config(BLOCK=128,", "@config(BLOK=128,"), "<source>:2:14",
                                  "'@config' sets 'BLOK', which is neither a const parameter"),
                                 ('@config(B="x")\nkernel k(x: *f32, const B: i32 = 16) {\n    store(x, B as f32);\n}\n',
                                  "<source>:1:11", "'B' is i32, but its value is the string \"x\"")):
            for auto in (False, True):
                with self.assertRaises(tile.CompileError, msg=(src, auto)) as e:
                    tile.compile(src, autotune=auto, device=self.dev)
                self.assertIn("%s: error: %s" % (where, what), e.exception.diagnostics)
                self.assertNotIn("<-D", e.exception.diagnostics)


if __name__ == "__main__":
    unittest.main()

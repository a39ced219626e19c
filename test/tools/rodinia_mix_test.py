#!/usr/bin/env python3
"""scripts/paper/rodinia-mix.py: footprints, the 32-bit limits of its ladder, and the draw."""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(REPO, "scripts", "paper", "rodinia-mix.py")
spec = importlib.util.spec_from_file_location("rodinia_mix", SCRIPT)
mix = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mix)
PROGRAMS = {p.name: p for p in mix.PROGRAMS}
INT_MAX = 2**31 - 1
GIB = 1 << 30


class Footprints(unittest.TestCase):
    def test_generator_py_footprints(self):
        # GPU-Sched's generator.py lists these bytes for the paper's P100 mixes.
        listed = [("srad_v1", 20000, 12800320000), ("srad_v1", 15000, 7200240000),
                  ("srad_v2", 16384, 6442450944), ("lavaMD", 120, 13575168000),
                  ("lavaMD", 100, 7856000000), ("needle", 32768, 8590458888),
                  ("dwt2d", 16384, 8321499136), ("dwt2d", 8192, 2080374784)]
        for name, size, want in listed:
            self.assertEqual(PROGRAMS[name].footprint(size), want, (name, size))

    def test_ladder_below_each_programs_first_overflow(self):
        for n in PROGRAMS["srad_v1"].sizes:
            self.assertLessEqual(4 * n * n, INT_MAX)          # int mem_size = sizeof(fp) * Ne
        for n in PROGRAMS["srad_v2"].sizes:
            self.assertLessEqual(n * (n + 1), 2**31)          # kernel int index_s
            self.assertEqual(n % 16, 0)
        for b in PROGRAMS["lavaMD"].sizes:
            self.assertLessEqual(100 * b**3, INT_MAX)         # int offset = nh * 100
        for n in PROGRAMS["needle"].sizes:
            self.assertLessEqual((n + 1) ** 2, INT_MAX)       # int size = max_rows * max_cols
            self.assertEqual(n % 16, 0)
        for n in PROGRAMS["dwt2d"].sizes:
            self.assertLessEqual(4 * n * n, INT_MAX)          # int componentSize


class Draw(unittest.TestCase):
    def test_classes_scale_with_the_gpu(self):
        for gib in (80, 140):
            medium, large = mix.ladder(gib)
            self.assertTrue(medium and large)
            for j in medium:
                self.assertTrue(gib / 16 < j["bytes"] / GIB <= gib / 4, j)
            for j in large:
                self.assertTrue(gib / 4 < j["bytes"] / GIB <= 0.8 * gib, j)

    def test_ratio_and_seed(self):
        medium, large = mix.ladder(80)
        a = mix.draw(medium, large, 16, 2, seed=1)
        self.assertEqual(sum(j["kind"] == "medium" for j in a), 8)
        self.assertEqual(sum(j["kind"] == "medium" for j in mix.draw(medium, large, 32, 3, seed=1)), 10)
        self.assertEqual(a, mix.draw(medium, large, 16, 2, seed=1))
        self.assertNotEqual(a, mix.draw(medium, large, 16, 2, seed=2))

    def test_writes_the_workload_and_its_sizes(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "m.wl")
            r = subprocess.run([sys.executable, SCRIPT, "--gpu-gib", "80", "--jobs", "16", "--ratio", "2:1",
                                "--out", out], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            lines = open(out).read().splitlines()
            self.assertEqual(len(lines), 16)
            self.assertTrue(all(l.startswith(mix.ROOT + "/cuda/") for l in lines), lines)
            meta = json.load(open(out + ".json"))
            self.assertEqual([j["command"] for j in meta["mix"]], lines)
            self.assertIn("16 jobs (11 large)", r.stderr)

    def test_bad_ratio_is_refused_by_name(self):
        r = subprocess.run([sys.executable, SCRIPT, "--gpu-gib", "80", "--ratio", "1:2"],
                           capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--ratio", r.stderr)


if __name__ == "__main__":
    unittest.main()

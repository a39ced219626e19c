#!/usr/bin/env python3
"""scripts/report.py on small synthetic runs whose figures are worked out by hand below.

Workload "w1": jobs A, B (80 GiB) and C, D (10 GiB) on 2 GPUs of 140 GiB, context 0.
  single w2: A, B run 0-10 s (kernel k1 8 s), C, D 10-15 s (k1 4 s): makespan 15, turnaround 12.5.
  mgb w4:    all at once, A, B end at 11, C, D at 6, kernels 5% slower: makespan 11 -> 15/11 =
             1.36x single, turnaround 8.5 -> 1.47x, kernel slowdown +5.0%.
  mgb w3:    makespan 12 (a sweep of two worker counts).
  cg:2 w4:   C dies of out-of-memory: 25% crashed.
  Bound: longest_job 10; memory_time: A's NVML samples show 80 GiB (>= 90% of it) held from 1 s
  to 10 s, 9 s, longer than its kernels; the others have no samples, so their kernel times:
  (80*9 + 80*8 + 10*4*2)/(2*140) = 5.1; big_jobs (9+8)/2 = 8.5
  -> 10 s, mgb w4 is +10.0% over it. Worker rule: 2*140/45 = 6.2 -> 6 + 2 = 8; best: 4.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
REPORT = os.path.join(REPO, "scripts", "report.py")
GIB = 1 << 30


def job(name, gb, start, end, kernel_ms, crashed=False, oom=False):
    return {"name": name, "argv": [name], "workload": "heat2d", "gb": gb,
            "memory_bytes": gb * GIB, "queued_s": 0.0, "started_s": start, "ended_s": end,
            "run_s": end - start, "turnaround_s": end, "exit_code": 2 if crashed else 0,
            "signal": 0, "crashed": crashed, "oom": oom, "result": "" if crashed else "PASS",
            "kernel_ms": kernel_ms,
            "kernels": [] if crashed else [{"name": "k1", "ms": kernel_ms, "launches": 10}]}


def run(label, workers, jobs):
    end = max(j["ended_s"] for j in jobs)
    samples = [{"t_s": t, "gpus": [{"util": 50, "mem_util": 10, "mem_used": 1, "mem_total": 140 * GIB},
                                   {"util": 100, "mem_util": 10, "mem_used": 1, "mem_total": 140 * GIB}]}
               for t in range(int(end) + 1)]
    return {"label": label, "jobs_file": "/somewhere/w1.json", "socket": "/tmp/s", "workers": workers,
            "interrupted": False, "summary": {"jobs": len(jobs)}, "jobs": jobs, "gpu_samples": samples}


def write(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f)


def measured_runs(folder):
    a_alone = job("A", 80, 0, 10, 8000)
    a_alone["memory_samples"] = [[0, 0]] + [[t, (75 if t == 5 else 80) * GIB] for t in range(1, 11)]
    write(os.path.join(folder, "w1-single.json"), run("single", 2, [
        a_alone, job("B", 80, 0, 10, 8000),
        job("C", 10, 10, 15, 4000), job("D", 10, 10, 15, 4000)]))
    write(os.path.join(folder, "w1-mgb-w4.json"), run("mgb", 4, [
        job("A", 80, 0, 11, 8400), job("B", 80, 0, 11, 8400),
        job("C", 10, 0, 6, 4200), job("D", 10, 0, 6, 4200)]))
    write(os.path.join(folder, "w1-mgb-w3.json"), run("mgb", 3, [
        job("A", 80, 0, 11, 8400), job("B", 80, 0, 11, 8400),
        job("C", 10, 0, 6, 4200), job("D", 10, 6, 12, 4200)]))
    write(os.path.join(folder, "w1-cg.json"), run("cg:2", 4, [
        job("A", 80, 0, 10, 8000), job("B", 80, 0, 12, 8000),
        job("C", 10, 0, 1, 0, crashed=True, oom=True), job("D", 10, 0, 6, 4000)]))
    write(os.path.join(folder, "w1-jobs.json"), {"jobs": [{"name": "A", "argv": ["a"]}]})  # skipped


def simulated_runs(folder):
    def sim(policy, end):
        return {"label": "w1", "simulated": True, "policy": policy, "workers": 2, "summary": {},
                "jobs": [{"name": "A", "queued_s": 0, "started_s": 0, "ended_s": end,
                          "outcome": "completed", "out_of_memory": False}],
                "utilisation": {"samples": [{"start_s": 0, "end_s": end, "sm_busy": [0.5, 0.25],
                                             "memory_used": [0.1, 0.1]}]}}
    write(os.path.join(folder, "sim.json"), {"runs": [sim("single", 20.0), sim("mgb", 10.0)]})


def generate(results, out_dir, *extra):
    out = os.path.join(out_dir, "results.md")
    proc = subprocess.run([sys.executable, REPORT, results, "--out", out, "--gpu-memory-gib", "140",
                           "--context-mib", "0", *extra], capture_output=True, text=True)
    if not os.path.exists(out):
        return proc, ""
    with open(out) as f:
        return proc, f.read()


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.results = os.path.join(self.tmp.name, "results")
        self.out = os.path.join(self.tmp.name, "docs")
        os.makedirs(self.results)

    def tearDown(self):
        self.tmp.cleanup()

    def test_measured_figures(self):
        measured_runs(self.results)
        proc, text = generate(self.results, self.out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn("No real GPU results yet", text)
        row = next(line for line in text.splitlines() if line.startswith("| mgb | 4 |"))
        cells = [c.strip() for c in row.strip("|").split("|")]
        # policy workers jobs ok crashed makespan jobs/h vs_single turnaround speedup slowdown util bound
        self.assertEqual(cells[5], "11.0")
        self.assertEqual(cells[7], "1.36x")
        self.assertEqual(cells[8], "8.5")
        self.assertEqual(cells[9], "1.47x")
        self.assertEqual(cells[10], "+5.0")
        self.assertEqual(cells[11], "50/100")
        self.assertEqual(cells[12], "+10.0")
        self.assertIn("**10.0 s** (longest_job)", text)
        self.assertIn("memory_time 5.1 s", text)
        self.assertIn("big_jobs 8.5 s", text)
        cg = next(line for line in text.splitlines() if line.startswith("| w1 | cg:2 | 4 |"))
        self.assertIn("| 25 | 1 |", cg)
        self.assertIn("Fewest workers within 3% of the best throughput: **4**", text)
        self.assertIn("gives **8**", text)
        self.assertIn("| mgb throughput vs single-assignment | >= 2.5x | 1.36x (mean of 1 workload(s)) |", text)
        # No crash-free core-to-GPU run: the comparison is not made up.
        self.assertIn("| mgb vs best crash-free core-to-GPU | >= 1.5x | not measured |", text)
        self.assertIn("| kernel | cg:2 w4 | mgb w3 | mgb w4 |", text)
        self.assertIn("| k1 | +0.0 | +5.0 | +5.0 |", text)
        pngs = sorted(os.listdir(os.path.join(self.out, "plots")))
        self.assertEqual(pngs, ["cg_crashes.png", "sweep_w1.png", "throughput.png", "util_w1.png"])
        for name in pngs:
            self.assertIn(f"(plots/{name})", text)

    def test_interrupted_run_stopped_jobs_are_not_crashes(self):
        measured_runs(self.results)
        # An mgb run stopped at 9 s: A and B were stopped by the runner's SIGTERM, C failed on
        # its own (exit 69) at 4 s, D finished.
        a, b = job("A", 80, 0, 9, 0, crashed=True), job("B", 80, 0, 9, 0, crashed=True)
        a["signal"] = b["signal"] = 15
        stopped = run("mgb", 8, [a, b, job("C", 10, 0, 4, 0, crashed=True), job("D", 10, 0, 6, 4200)])
        stopped["interrupted"] = True
        write(os.path.join(self.results, "w1-mgb-w8-stopped.json"), stopped)
        proc, text = generate(self.results, self.out, "--no-plots")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        row = next(line for line in text.splitlines() if line.startswith("| mgb INTERRUPTED | 8 |"))
        cells = [c.strip() for c in row.strip("|").split("|")]
        self.assertEqual(cells[3], "1")      # ok: D
        self.assertEqual(cells[4], "1 (0)")  # crashed: C only
        # The aims take no ratio from an interrupted run (w4 stays the best), but count its crash.
        self.assertIn("| mgb throughput vs single-assignment | >= 2.5x | 1.36x (mean of 1 workload(s)) |", text)
        self.assertIn("| crashed jobs under mgb | 0 | 1 |", text)

    def test_mgb_waits_are_summed_per_run(self):
        measured_runs(self.results)
        jobs = [job("A", 80, 0, 11, 8400), job("B", 80, 0, 11, 8400), job("C", 10, 0, 6, 4200)]
        jobs[0]["mgb_wait_ms"] = {"begin": 1500.0, "grow": 250.0}
        jobs[1]["mgb_wait_ms"] = {"begin": 500.0, "grow": 0.0}
        write(os.path.join(self.results, "w1-mgb-w6.json"), run("mgb", 6, jobs))
        proc, text = generate(self.results, self.out, "--no-plots")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("| mgb | 6 | 2 of 3 | 2.0 | 0.2 |", text)
        self.assertEqual(text.count("waiting for a GPU s"), 1)  # runs without the lines: no rows
        jobs[2]["mgb_wait_ms"] = {"begin": "soon"}
        write(os.path.join(self.results, "w1-mgb-w6.json"), run("mgb", 6, jobs))
        proc, _ = generate(self.results, self.out, "--no-plots")
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("jobs[2].mgb_wait_ms", proc.stderr)

    def test_simulated_only_says_nothing_measured(self):
        simulated_runs(self.results)
        proc, text = generate(self.results, self.out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("**No real GPU results yet**", text)
        self.assertIn("| single (simulated) | 2 |", text)
        row = next(line for line in text.splitlines() if line.startswith("| mgb (simulated)"))
        self.assertIn("| 2.00x |", row)
        self.assertIn("| 50/25 |", row)
        self.assertIn("SIMULATED", text)

    def test_bad_input_names_file_and_field(self):
        doc = run("single", 2, [job("A", 80, 0, 10, 8000)])
        del doc["jobs"][0]["ended_s"]
        write(os.path.join(self.results, "broken.json"), doc)
        proc, _ = generate(self.results, self.out, "--no-plots")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("broken.json.jobs[0].ended_s", proc.stderr)

    def test_missing_folder_and_help(self):
        proc, _ = generate(os.path.join(self.tmp.name, "nowhere"), self.out)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("not a directory", proc.stderr)
        help_run = subprocess.run([sys.executable, REPORT, "--help"], capture_output=True, text=True)
        self.assertEqual(help_run.returncode, 0)
        self.assertIn("RESULTS_DIR", help_run.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)

#!/usr/bin/env python3
"""scripts/report.py --rodinia-mix on one synthetic paper-mix.sh call, figures worked out by hand.

The mix: job 0 program A 10 GiB, job 1 A 20 GiB, job 2 B 5 GiB, on 2 GPUs of 140 GiB, context 0.
  call1, single w2 stopped at 12 s: job 0 ran 0-10 s (done), 1 and 2 were stopped (SIGTERM).
  call2, single w2 stopped at 11 s: job 2 (B) ran 0-5 s (done), 0 and 1 were stopped.
  Solo times: 0 measured 10 s; 1 estimated from A's 1 s/GiB: 20 s; 2 measured in call2: 5 s.
  Single-assignment, first come first served on 2 GPUs: GPU a 10 + 5, GPU b 20 -> 20 s.
  Bound: longest_job 20 s; memory_time (10*10 + 20*20 + 5*5) / 280 = 1.9 s -> 20 s.
  call1's mgb w4: 22 s, 3 done -> 20/22 = 0.91x single, GPU-Sched 24 s -> 24/22 = 1.09x, +10% over bound.
"""

import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import unittest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
REPORT = os.path.join(REPO, "scripts", "report.py")
GIB = 1 << 30


def job(i, program, start, end, signal=0, crashed=False):
    return {"name": f"{i:02d}-{program}", "argv": [program], "queued_s": 0.0, "started_s": start,
            "ended_s": end, "exit_code": -1 if signal else 0, "signal": signal,
            "crashed": crashed or bool(signal), "oom": False, "memory_bytes": 0, "kernels": []}


def run(label, workers, jobs, interrupted=False):
    samples = [{"t_s": 0, "gpus": [{"util": 0, "mem_used": 0, "mem_total": 140 * GIB}] * 2}]
    return {"label": label, "jobs_file": "/x/mgb.json", "workers": workers, "interrupted": interrupted,
            "summary": {}, "jobs": jobs, "gpu_samples": samples}


THREE_JOBS = {"gpu_gib": 140, "jobs": 3, "ratio": "1:1", "seed": 7,
              "mix": [{"program": "A", "size": 1, "bytes": 10 * GIB},
                      {"program": "A", "size": 2, "bytes": 20 * GIB},
                      {"program": "B", "size": 1, "bytes": 5 * GIB}]}


def write_call(folder, runs, log_lines, mix=THREE_JOBS, gpu="NVIDIA H200, 143771 MiB"):
    os.makedirs(folder)
    with open(os.path.join(folder, "mix.wl.json"), "w") as f:
        json.dump(mix, f)
    with tarfile.open(os.path.join(folder, "runs.tar.gz"), "w:gz") as tar:
        for tag, doc in runs.items():
            data = json.dumps(doc).encode()
            info = tarfile.TarInfo(f"results/mgb-runs/{tag}/paper.{tag}.json")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    with open(os.path.join(folder, "paper-mix.log"), "w") as f:
        f.write(f"[   0s] machine: == {gpu}\n" + "".join(line + "\n" for line in log_lines))


class RodiniaMixReportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        t = self.tmp.name
        self.results = os.path.join(t, "results")
        os.makedirs(self.results)
        self.calls = os.path.join(t, "calls")
        write_call(os.path.join(self.calls, "call1"), {
            "single-w2": run("single", 2, [job(0, "A", 0, 10), job(1, "A", 0, 12, signal=15),
                                           job(2, "B", 10, 12, signal=15)], interrupted=True),
            "mgb-w4": run("mgb", 4, [job(0, "A", 0, 12), job(1, "A", 0, 22), job(2, "B", 0, 6)]),
            "mgb-lpt-w4": run("mgb", 4, [job(0, "A", 0, 12), job(1, "A", 0, 22), job(2, "B", 0, 6)]),
        }, ["[  40s] gpusched-w8: wall 25.0 s, workloader's TOTAL_EXPERIMENT_TIME 24.0, jobs lost 0, exit 0"])
        write_call(os.path.join(self.calls, "call2"), {
            "single-w2": run("single", 2, [job(0, "A", 0, 11, signal=15), job(1, "A", 0, 11, signal=15),
                                           job(2, "B", 0, 5)], interrupted=True),
            "cg-2-w4": run("cg:2", 4, [job(0, "A", 0, 3, crashed=True), job(1, "A", 0, 30),
                                       job(2, "B", 0, 5)]),
        }, [])
        with open(os.path.join(self.calls, "call2", "note.txt"), "w") as f:
            f.write("an older build:\nsee its log\n")

    def tearDown(self):
        self.tmp.cleanup()

    def generate(self, *paths):
        out = os.path.join(self.tmp.name, "results.md")
        proc = subprocess.run([sys.executable, REPORT, self.results, "--out", out, "--no-plots",
                               "--context-mib", "0", *[a for p in paths for a in ("--rodinia-mix", p)]],
                              capture_output=True, text=True)
        if not os.path.exists(out):
            return proc, ""
        with open(out) as f:
            return proc, f.read()

    def row(self, text, call, system):
        line = next(l for l in text.splitlines() if l.startswith("| ") and f"{call} |" in l
                    and f"| {system} |" in l)
        return [c.strip() for c in line.strip("|").split("|")]

    def test_figures(self):
        proc, text = self.generate(self.calls)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("#### rodinia-140-3-1to1: 3 jobs, 35 GiB predicted", text)
        self.assertIn("Single-assignment makespan: **20.0 s** (worked out from solo times, 2 measured "
                      "and 1 estimated (A 1.00 s/GiB))", text)
        self.assertIn("Bound: **20.0 s** (longest_job;", text)
        mgb = self.row(text, "call1", "mgb")
        # call GPU system workers makespan done/lost/stopped x-single x-gpusched over-bound
        self.assertEqual(mgb[1], "NVIDIA H200")
        self.assertEqual(mgb[4:], ["22.0", "3 / 0 / 0", "0.91x", "1.09x", "+10%"])
        # paper-mix.sh's mgb-lpt run is mgb in longest-first order: named so.
        self.assertEqual(self.row(text, "call1", "mgb (longest first)")[4:], mgb[4:])
        single = self.row(text, "call1", "single")
        self.assertEqual(single[4:], ["> 12.0 (stopped)", "1 / 0 / 2", "-", "-", "-"])
        gs = self.row(text, "call1", "gpusched")
        self.assertEqual(gs[4:7], ["24.0", "3 / 0 / 0", "0.83x"])
        self.assertIn("call2 (an older build: see its log) |", text)
        cg = self.row(text, "call2 (an older build: see its log)", "cg:2")
        self.assertEqual(cg[5], "2 / 1 / 0")  # lost, not stopped: it crashed on its own
        self.assertEqual(cg[7], "-")  # no GPU-Sched run in that call
        self.assertEqual([cg[6], cg[8]], ["-", "-"])  # it lost a job: no ratio, no distance to the bound
        self.assertIn("| mgb vs GPU-Sched, same call | >= 1.3x | 1.09x |", text)
        self.assertIn("| jobs lost under mgb | 0 | 0 |", text)

    def test_aims_judge_each_mix_by_its_latest_session(self):
        # Session 9 lost a job and was slow; session 10 (sorted as a number, after 9) is the build
        # as it is; a superseded call of session 10 counts neither.
        sessions = os.path.join(self.tmp.name, "sessions")
        slow = {"mgb-w4": run("mgb", 4, [job(0, "A", 0, 3, crashed=True), job(1, "A", 0, 40),
                                         job(2, "B", 0, 6)])}
        good = {"mgb-w4": run("mgb", 4, [job(0, "A", 0, 12), job(1, "A", 0, 22), job(2, "B", 0, 6)])}
        gs = ["[  40s] gpusched-w8: wall 25.0 s, workloader's TOTAL_EXPERIMENT_TIME 24.0, jobs lost 0, exit 0"]
        write_call(os.path.join(sessions, "rodinia-mix-session9", "call1"), slow, gs)
        write_call(os.path.join(sessions, "rodinia-mix-session10", "call1"), good, gs)
        write_call(os.path.join(sessions, "rodinia-mix-session10", "call2"), slow, gs)
        with open(os.path.join(sessions, "rodinia-mix-session10", "call2", "superseded.txt"), "w") as f:
            f.write("a build before\nthe fix\n")
        proc, text = self.generate(os.path.join(sessions, "rodinia-mix-session9"),
                                   os.path.join(sessions, "rodinia-mix-session10"),
                                   self.calls)  # solo times (and an unnumbered, earlier session)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(self.row(text, "session9/call1", "mgb")[5], "2 / 1 / 0")  # shown, not judged
        self.assertIn("session10/call2 (superseded, not in the aims: a build before the fix) |", text)
        self.assertIn("| jobs lost under mgb | 0 | 0 |", text)
        self.assertIn("| mgb vs GPU-Sched, same call | >= 1.3x | 1.09x |", text)
        self.assertIn("| mgb over the bound | <= +15% | +10% |", text)

    def test_stopped_gpusched_gives_a_lower_bound(self):
        # GPU-Sched stopped at its 60 s limit with none lost: mgb's 22 s is > 2.73x it.
        write_call(os.path.join(self.calls, "call3"), {
            "mgb-w4": run("mgb", 4, [job(0, "A", 0, 12), job(1, "A", 0, 22), job(2, "B", 0, 6)]),
        }, ["[  70s] gpusched-w4: wall 60.0 s, workloader's TOTAL_EXPERIMENT_TIME none, jobs lost 0, exit 124"])
        proc, text = self.generate(os.path.join(self.calls, "call3"), os.path.join(self.calls, "call1"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(self.row(text, "call3", "gpusched")[4], "> 60.0 (stopped)")
        self.assertEqual(self.row(text, "call3", "mgb")[7], "> 2.73x")
        self.assertEqual(self.row(text, "call1", "mgb")[7], "1.09x")  # a finished run: exact
        self.assertIn("| mgb vs GPU-Sched, same call | >= 1.3x | 1.09x |", text)
        proc, text = self.generate(os.path.join(self.calls, "call3"))
        self.assertIn("| mgb vs GPU-Sched, same call | >= 1.3x | > 2.73x |", text)

    def test_a_node_of_four_gpus_is_its_own_experiment(self):
        # The same mix on a 4-GPU node (machine.txt: one nvidia-smi line per GPU) gets its own
        # heading, single-assignment and bound; call1 and call2 (2 GPUs) lend it solo times only.
        four = os.path.join(self.tmp.name, "four", "call1")
        write_call(four, {"mgb-w8": run("mgb", 8, [job(0, "A", 0, 21), job(1, "A", 0, 25), job(2, "B", 0, 6)])},
                   [])
        with open(os.path.join(four, "machine.txt"), "w") as f:
            f.write("== today\n64\n" + "NVIDIA H200, 143771 MiB, 580.159.04\n" * 4)
        proc, text = self.generate(self.calls, os.path.dirname(four))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("#### rodinia-140-3-1to1: 3 jobs, 35 GiB predicted (0.1x 2 x 140 GiB)", text)
        self.assertIn("#### rodinia-140-3-1to1 on 4 GPUs: 3 jobs, 35 GiB predicted (0.1x 4 x 140 GiB)", text)
        section = text.split("on 4 GPUs:")[1].split("####")[0]
        # Every solo time borrowed from the 2-GPU calls' rates (A 1 s/GiB, B 1 s/GiB): 10, 20, 5 s.
        self.assertIn("Single-assignment makespan: **20.0 s** (worked out from solo times, 0 measured "
                      "and 3 estimated", section)
        self.assertIn("four/call1 |", section)
        self.assertNotIn("calls/call1 |", section)
        self.assertEqual(self.row(text, "four/call1", "mgb")[4:7], ["25.0", "3 / 0 / 0", "0.80x"])

    def test_no_program_alone_gives_no_single_figure(self):
        # Only call1: job 2's program B never finished alone, so no single-assignment figure is made up.
        proc, text = self.generate(os.path.join(self.calls, "call1"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("Single-assignment makespan: **-** (no solo time for every program", text)
        self.assertEqual(self.row(text, "call1", "mgb")[6], "-")

    def test_rate_from_another_mix_on_the_same_gpu(self):
        # Only call1 of this mix (B never finished alone there) and another mix whose single run
        # finished a B of 10 GiB in 8 s: B's 0.8 s/GiB gives job 2 4 s; on 2 GPUs 10 + 4 | 20 -> 20 s.
        # The same run on another GPU model lends nothing.
        other = {"gpu_gib": 140, "jobs": 1, "ratio": "2:1", "seed": 7,
                 "mix": [{"program": "B", "size": 2, "bytes": 10 * GIB}]}
        for name, gpu in (("same", "NVIDIA H200, 143771 MiB"), ("other", "NVIDIA H100 80GB HBM3, 81559 MiB")):
            write_call(os.path.join(self.tmp.name, name, "call"),
                       {"single-w2": run("single", 2, [job(0, "B", 0, 8)])}, [], mix=other, gpu=gpu)
        call1 = os.path.join(self.calls, "call1")
        proc, text = self.generate(call1, os.path.join(self.tmp.name, "same"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("Single-assignment makespan: **20.0 s** (worked out from solo times, 1 measured and 2 "
                      "estimated (A 1.00 s/GiB, B 0.80 s/GiB from other mixes' single-assignment runs on "
                      "the same GPU))", text)
        proc, text = self.generate(call1, os.path.join(self.tmp.name, "other"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("Single-assignment makespan: **-** (no solo time for every program", text)

    def test_bad_folder_is_named(self):
        proc, _ = self.generate(os.path.join(self.tmp.name, "nowhere"))
        self.assertEqual(proc.returncode, 2)
        self.assertIn("nowhere: not a folder", proc.stderr)
        broken = os.path.join(self.calls, "call1", "mix.wl.json")
        with open(broken, "w") as f:
            f.write("{")
        proc, _ = self.generate(os.path.join(self.calls, "call1"))
        self.assertEqual(proc.returncode, 2)
        self.assertIn("call1/mix.wl.json: cannot read", proc.stderr)


if __name__ == "__main__":
    unittest.main()

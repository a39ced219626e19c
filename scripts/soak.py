#!/usr/bin/env python3
"""Soak test of mgbd and its clients: holders come and go, some are SIGKILLed, mgbd itself is
SIGKILLed and restarted, and connection floods hit it, for --minutes (bounded, self-stopping).

Checks, from `mgb status --json` sampled every 100 ms: no GPU ever reserved past its memory; after
each flood, mgbd answers within 1 s; every holder not killed on purpose exits 0 (its tasks survive
mgbd restarts: docs/service.md, "Restarts"); at the end nothing is left reserved. Prints the
figures and exits 1 if any check failed.

With --hostile, a hostile local user joins (service_test_hostile, as uid 65534 when run as
root): lane connections that park TaskBegins and never read, Watch streams that never read,
65,000-byte labels, forged restores; and an honest probe times its decisions all along. Then
also: mgbd never dies by itself and its RSS stays under 1 GiB; the probe's decision p50/p99/max
are reported, and with --p99-limit-ms checked (a figure of a quiet machine, not for CTest).

Usage: scripts/soak.py --build BUILD_DIR [--minutes 30] [--holders 40] [--seed 1] [--hostile]
                       [--p99-limit-ms 10]
"""
import argparse
import json
import os
import random
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

GIB = 1 << 30


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", required=True, help="build directory (mgbd, mgb, service_test_holder)")
    p.add_argument("--minutes", type=float, default=30.0, help="how long to run (default 30)")
    p.add_argument("--holders", type=int, default=40, help="holder processes kept alive (default 40)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--hostile", action="store_true",
                   help="a hostile user and an honest latency probe join (see above)")
    p.add_argument("--p99-limit-ms", type=float, default=0,
                   help="with --hostile: fail when the probe's decision p99 exceeds this (0: report only)")
    return p.parse_args()


class Soak:
    def __init__(self, args):
        self.build = args.build
        self.mgbd_bin = os.path.join(args.build, "service", "mgbd")
        self.mgb_bin = os.path.join(args.build, "service", "mgb")
        self.holder_bin = os.path.join(args.build, "test", "service", "service_test_holder")
        self.hostile_bin = os.path.join(args.build, "test", "adversarial", "service_test_hostile")
        self.hostile = args.hostile
        self.p99_limit_ms = args.p99_limit_ms
        needed = [self.mgbd_bin, self.mgb_bin, self.holder_bin] + ([self.hostile_bin] if self.hostile else [])
        for path in needed:
            if not os.access(path, os.X_OK):
                sys.exit(f"soak: {path} is not built (build {args.build} first)")
        self.rng = random.Random(args.seed)
        self.deadline = time.monotonic() + args.minutes * 60
        self.target_holders = args.holders
        self.dir = tempfile.mkdtemp(prefix="mgb-soak-")
        os.chmod(self.dir, 0o755)  # the hostile user (uid 65534) reaches the socket
        self.socket = os.path.join(self.dir, "mgbd.sock")
        self.gpus = os.path.join(self.dir, "gpus.json")
        with open(self.gpus, "w") as f:
            json.dump({"gpus": [{"name": f"g{i}", "memory_bytes": 16 * GIB, "sms": 132}
                                for i in range(2)]}, f)
        self.log = open(os.path.join(self.dir, "mgbd.log"), "w")
        self.mgbd = None
        self.holders = {}   # pid -> Popen
        self.killed = set()  # pids killed on purpose
        self.figures = dict(holders_started=0, holders_ok=0, holders_killed=0, holders_failed=0,
                            mgbd_restarts=0, floods=0, flood_connections=0,
                            status_after_flood_max_ms=0.0, samples=0, over_grants=0,
                            unanswered_samples=0, hostile_runs=0, mgbd_crashes=0,
                            probe_decisions=0, probe_errors=0, mgbd_rss_max_mib=0.0)
        self.hostiles = []   # Popen
        self.probe = None
        self.latencies_us = []  # (start, monotonic seconds; latency, microseconds)
        self.outages = []       # [from, to] monotonic seconds: mgbd restarting
        self.failures = []
        self.sampling = True
        self.lock = threading.Lock()

    # ---- processes -----------------------------------------------------------------------
    def start_mgbd(self):
        self.mgbd = subprocess.Popen([self.mgbd_bin, "--socket", self.socket, "--gpus", self.gpus,
                                      "--profile-store", "none"],
                                     stdout=self.log, stderr=self.log)
        end = time.monotonic() + 10
        while time.monotonic() < end and not self.status(timeout_ms=200):
            time.sleep(0.05)
        if self.hostile and os.path.exists(self.socket):
            os.chmod(self.socket, 0o666)  # another local user may connect, as on a shared node

    def check_mgbd(self):
        """mgbd must never end unless we killed it; its RSS is sampled."""
        if self.mgbd.poll() is not None:
            self.figures["mgbd_crashes"] += 1
            self.failures.append(f"mgbd exited by itself ({self.mgbd.returncode})")
            self.start_mgbd()
            return
        try:
            with open(f"/proc/{self.mgbd.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        mib = int(line.split()[1]) / 1024
                        self.figures["mgbd_rss_max_mib"] = max(self.figures["mgbd_rss_max_mib"], round(mib, 1))
        except OSError:
            pass

    def hostile_env(self):
        env = dict(os.environ)
        if os.geteuid() == 0:
            env["MGB_HOSTILE_UID"] = "65534"
        return env

    def hostile_act(self):
        mode = self.rng.choice(["lanes", "watchers", "labels", "restore"])
        args = {"lanes": ["lanes", "20", "200", "20"], "watchers": ["watchers", "200", "20"],
                "labels": ["labels", "100", "10"], "restore": ["restore", "50"]}[mode]
        self.hostiles.append(subprocess.Popen([self.hostile_bin, self.socket] + args, env=self.hostile_env(),
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self.figures["hostile_runs"] += 1
        self.hostiles = [p for p in self.hostiles if p.poll() is None]

    def read_probe(self):
        if self.probe is None:
            return
        for line in self.probe.stdout:
            words = line.split()
            if len(words) == 2 and all(w.isdigit() for w in words):
                self.latencies_us.append((int(words[0]) / 1e6, int(words[1])))
            elif words:
                self.figures["probe_errors"] += 1

    def status(self, timeout_ms=1000):
        try:
            out = subprocess.run([self.mgb_bin, "status", "--json", "--socket", self.socket],
                                 capture_output=True, text=True, timeout=timeout_ms / 1000 + 2)
        except subprocess.TimeoutExpired:
            return None
        if out.returncode != 0:
            return None
        return json.loads(out.stdout)

    def start_holder(self):
        gib = self.rng.choice([1, 2, 3, 4, 6])
        hold_ms = self.rng.randint(100, 800)
        rounds = self.rng.randint(1, 5)
        p = subprocess.Popen([self.holder_bin, self.socket, str(gib * GIB), str(hold_ms), str(rounds)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.holders[p.pid] = p
        self.figures["holders_started"] += 1

    def reap_holders(self):
        for pid, p in list(self.holders.items()):
            rc = p.poll()
            if rc is None:
                continue
            del self.holders[pid]
            if pid in self.killed:
                self.figures["holders_killed"] += 1
            elif rc == 0:
                self.figures["holders_ok"] += 1
            else:
                self.figures["holders_failed"] += 1
                err = p.stderr.read().decode(errors="replace").strip().splitlines()[-1:] if p.stderr else []
                self.failures.append(f"holder {pid} exited {rc}: {' '.join(err)}")

    # ---- events --------------------------------------------------------------------------
    def kill_holders(self):
        for pid in self.rng.sample(list(self.holders), min(3, len(self.holders))):
            self.killed.add(pid)
            os.kill(pid, signal.SIGKILL)

    def restart_mgbd(self):
        # Decisions from the kill until the new mgbd's restore window (3 s) has passed are an
        # outage, not a decision's latency: the probe's samples there are left out.
        self.outages.append([time.monotonic(), None])
        self.mgbd.kill()
        self.mgbd.wait()
        time.sleep(self.rng.uniform(0.2, 1.0))
        self.start_mgbd()
        self.outages[-1][1] = time.monotonic() + 4.0
        self.figures["mgbd_restarts"] += 1

    def flood(self):
        conns = []
        for _ in range(1500):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(self.socket)
                s.send(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
                conns.append(s)
            except OSError:
                s.close()
                break
        time.sleep(1.0)
        for s in conns:
            s.close()
        self.figures["floods"] += 1
        self.figures["flood_connections"] += len(conns)
        t0 = time.monotonic()
        while self.status(timeout_ms=500) is None and time.monotonic() - t0 < 10:
            time.sleep(0.02)
        ms = (time.monotonic() - t0) * 1000
        self.figures["status_after_flood_max_ms"] = max(self.figures["status_after_flood_max_ms"], round(ms, 1))
        if ms > 1000:
            self.failures.append(f"mgbd answered {ms:.0f} ms after a flood (limit 1000)")

    # ---- sampling ------------------------------------------------------------------------
    def sampler(self):
        while self.sampling:
            s = self.status(timeout_ms=500)
            with self.lock:
                if s is None:
                    self.figures["unanswered_samples"] += 1
                else:
                    self.figures["samples"] += 1
                    for g in s["gpus"]:
                        if g["memory_reserved_bytes"] > g["memory_total_bytes"]:
                            self.figures["over_grants"] += 1
                            self.failures.append(f"GPU {g['index']} reserved {g['memory_reserved_bytes']} of {g['memory_total_bytes']}")
            time.sleep(0.1)

    def run(self):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        self.start_mgbd()
        sampler = threading.Thread(target=self.sampler)
        sampler.start()
        probe_reader = None
        if self.hostile:
            seconds = int(self.deadline - time.monotonic()) + 1
            self.probe = subprocess.Popen([self.hostile_bin, self.socket, "probe", str(seconds)],
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            probe_reader = threading.Thread(target=self.read_probe)
            probe_reader.start()
        next_event = time.monotonic() + 10
        last_progress = time.monotonic()
        try:
            while time.monotonic() < self.deadline:
                self.reap_holders()
                while len(self.holders) < self.target_holders:
                    self.start_holder()
                self.check_mgbd()
                if time.monotonic() >= next_event:
                    events = ["kill_holders", "restart_mgbd", "flood"]
                    if self.hostile:
                        events += ["hostile_act"] * 3
                    event = self.rng.choice(events)
                    getattr(self, event)()
                    next_event = time.monotonic() + self.rng.uniform(5, 15)
                if time.monotonic() - last_progress >= 60:
                    last_progress = time.monotonic()
                    left = (self.deadline - time.monotonic()) / 60
                    print(f"soak: {left:.1f} min left: {json.dumps(self.figures)}", flush=True)
                time.sleep(0.05)
            # Let the holders finish by themselves (bounded), then nothing may be left reserved.
            end = time.monotonic() + 60
            while self.holders and time.monotonic() < end:
                self.reap_holders()
                time.sleep(0.1)
            for pid in list(self.holders):
                self.failures.append(f"holder {pid} still running 60 s after the soak")
                self.killed.add(pid)
                os.kill(pid, signal.SIGKILL)
            self.reap_holders()
            # The hostile user leaves too: what it held must come free like anyone's.
            for p in self.hostiles:
                p.kill()
                p.wait()
            time.sleep(1.0)
            final = self.status()
            if final is None:
                self.failures.append("mgbd did not answer at the end")
            else:
                left = sum(g["memory_reserved_bytes"] for g in final["gpus"])
                self.figures["reserved_at_end"] = left
                if left != 0:
                    self.failures.append(f"{left} bytes still reserved at the end")
        finally:
            self.sampling = False
            sampler.join()
            for p in self.hostiles:
                p.kill()
            if self.probe is not None:
                self.probe.kill()
                probe_reader.join()
                self.summarise_probe()
            for p in self.holders.values():
                p.kill()
            if self.mgbd:
                self.mgbd.send_signal(signal.SIGTERM)
                self.mgbd.wait()
        print("soak: " + json.dumps(self.figures, indent=1))
        if self.hostile and self.figures["mgbd_rss_max_mib"] > 1024:
            self.failures.append(f"mgbd RSS reached {self.figures['mgbd_rss_max_mib']} MiB (limit 1024)")
        for f in self.failures[:20]:
            print("soak: FAIL " + f)
        print(f"soak: {'FAILED' if self.failures else 'PASSED'} ({len(self.failures)} failures); mgbd log {self.log.name}")
        return 1 if self.failures else 0


    def summarise_probe(self):
        in_outage = lambda t: any(a <= t <= (b if b is not None else a + 15) for a, b in self.outages)
        lat = sorted(us for t, us in self.latencies_us if not in_outage(t))
        self.figures["probe_decisions"] = len(lat)
        self.figures["probe_decisions_in_restarts"] = len(self.latencies_us) - len(lat)
        if not lat:
            self.failures.append("the honest probe made no decision")
            return
        pick = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] / 1000
        self.figures.update(probe_p50_ms=pick(0.50), probe_p99_ms=pick(0.99), probe_max_ms=lat[-1] / 1000)
        if self.p99_limit_ms > 0 and pick(0.99) > self.p99_limit_ms:
            self.failures.append(f"honest decision p99 {pick(0.99):.2f} ms (limit {self.p99_limit_ms})")


if __name__ == "__main__":
    sys.exit(Soak(parse_args()).run())

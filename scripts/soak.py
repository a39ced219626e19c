#!/usr/bin/env python3
"""Soak test of mgbd and its clients: holders come and go, some are SIGKILLed, mgbd itself is
SIGKILLed and restarted, and connection floods hit it, for --minutes (bounded, self-stopping).

Checks, from `mgb status --json` sampled every 100 ms: no GPU ever reserved past its memory; after
each flood, mgbd answers within 1 s; every holder not killed on purpose exits 0 (its tasks survive
mgbd restarts: docs/service.md, "Restarts"); at the end nothing is left reserved. Prints the
figures and exits 1 if any check failed.

Usage: scripts/soak.py --build BUILD_DIR [--minutes 30] [--holders 40] [--seed 1]
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
    return p.parse_args()


class Soak:
    def __init__(self, args):
        self.build = args.build
        self.mgbd_bin = os.path.join(args.build, "service", "mgbd")
        self.mgb_bin = os.path.join(args.build, "service", "mgb")
        self.holder_bin = os.path.join(args.build, "test", "service", "service_test_holder")
        for path in (self.mgbd_bin, self.mgb_bin, self.holder_bin):
            if not os.access(path, os.X_OK):
                sys.exit(f"soak: {path} is not built (build {args.build} first)")
        self.rng = random.Random(args.seed)
        self.deadline = time.monotonic() + args.minutes * 60
        self.target_holders = args.holders
        self.dir = tempfile.mkdtemp(prefix="mgb-soak-")
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
                            unanswered_samples=0)
        self.failures = []
        self.sampling = True
        self.lock = threading.Lock()

    # ---- processes -----------------------------------------------------------------------
    def start_mgbd(self):
        self.mgbd = subprocess.Popen([self.mgbd_bin, "--socket", self.socket, "--gpus", self.gpus],
                                     stdout=self.log, stderr=self.log)
        end = time.monotonic() + 10
        while time.monotonic() < end and not self.status(timeout_ms=200):
            time.sleep(0.05)

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
        self.mgbd.kill()
        self.mgbd.wait()
        time.sleep(self.rng.uniform(0.2, 1.0))
        self.start_mgbd()
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
        next_event = time.monotonic() + 10
        last_progress = time.monotonic()
        try:
            while time.monotonic() < self.deadline:
                self.reap_holders()
                while len(self.holders) < self.target_holders:
                    self.start_holder()
                if time.monotonic() >= next_event:
                    event = self.rng.choice(["kill_holders", "restart_mgbd", "flood"])
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
            for p in self.holders.values():
                p.kill()
            if self.mgbd:
                self.mgbd.send_signal(signal.SIGTERM)
                self.mgbd.wait()
        print("soak: " + json.dumps(self.figures, indent=1))
        for f in self.failures[:20]:
            print("soak: FAIL " + f)
        print(f"soak: {'FAILED' if self.failures else 'PASSED'} ({len(self.failures)} failures); mgbd log {self.log.name}")
        return 1 if self.failures else 0


if __name__ == "__main__":
    sys.exit(Soak(parse_args()).run())

#!/usr/bin/env python3
"""Interrupting fsbm at random moments leaves no loop device, mount or deleted image behind
(issue 38: "Proof", the signal test).

Each interruption runs one of `fs create`, `bench`, `age` and `replay` as a user would, under
a private FSBM_HOME, and sends SIGINT or SIGTERM, to the process or to its whole group, at a
random moment within the time the same command took uninterrupted in this run (the baseline,
measured first).  Then, each of which must hold:
- the command exited 128 + the signal (130 for SIGINT, 143 for SIGTERM), or 0 where it finished first,
  or died of the signal itself while Python was still loading (nothing begun to undo);
- no loop device is bound to an image beneath the home that `fsbm fs list` does not know, and
  none to a deleted image;
- nothing beneath the home is mounted that `fsbm fs list` does not know;
- `fsbm fs destroy --all` then leaves no loop device and no mount beneath the home.
Last, `fs create` is killed with SIGKILL, which no handler sees, and `fs destroy --all` must
still find and remove what it left.

Usage: .venv/bin/python bench/interrupt.py [--interruptions 24] [--seed 38]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FSBM = str(Path(sys.executable).parent / "fsbm")
DATA = REPO.parent / "shared" / "data"


def fsbm(home: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([FSBM, *args], env={**os.environ, "FSBM_HOME": str(home)}, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout)


def loops_beneath(home: Path) -> list[str]:
    """Loop devices bound to an image beneath `home`, as `losetup -l` lists them."""
    listed = subprocess.run(["losetup", "-l", "-n", "-O", "NAME,BACK-FILE"], capture_output=True, text=True).stdout
    return [line.strip() for line in listed.splitlines() if str(home) in line]


def mounts_beneath(home: Path) -> list[str]:
    return [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines() if str(home) in line.split()[1]]


def known(home: Path) -> list[dict]:
    done = fsbm(home, "fs", "list", "--json", "-")
    return json.loads(done.stdout or "[]") if done.returncode == 0 else []


def leftovers(home: Path) -> list[str]:
    """What an interrupted command left that fsbm does not know of."""
    kept = known(home)
    mounts = {str(Path(fs["directory"]) / "mnt") for fs in kept}
    images = {str(Path(fs["directory"]) / "image.img") for fs in kept}
    out = [f"deleted image: {line}" for line in loops_beneath(home) if "(deleted)" in line]
    out += [f"unknown loop device: {line}" for line in loops_beneath(home) if line.split()[-1] not in images]
    out += [f"unknown mount: {m}" for m in mounts_beneath(home) if m not in mounts]
    return out


def commands(home: Path, trace: Path) -> dict[str, list[str]]:
    return {"fs create": ["fs", "create", "ext4", "--size", "256M", "--name", "victim"],
            "bench": ["bench", "--fs", "target", "--quick", "--only", "meta,read"],
            "age": ["age", "--fs", "target", "--files", "400", "--rounds", "4"],
            "replay": ["replay", str(trace), "--fs", "target"]}


def run(home: Path, args: list[str], sig: int | None, delay: float, group: bool) -> tuple[int, float]:
    """Run `fsbm args`, interrupted after `delay` seconds (never if `sig` is None); its exit
    code and how long it ran."""
    started = time.monotonic()
    proc = subprocess.Popen([FSBM, *args], env={**os.environ, "FSBM_HOME": str(home)}, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    if sig is not None:
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, sig) if group else proc.send_signal(sig)
    code = proc.wait(timeout=600)
    return code, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interruptions", type=int, default=24)
    parser.add_argument("--seed", type=int, default=38)
    options = parser.parse_args()
    rng = random.Random(options.seed)
    trace = DATA / "strace" / "cmatthew_gcc.txt"  # a real gcc build's log (SOURCES.md)
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="fsbm-interrupt-") as tmp:
        home = Path(tmp) / "home"
        cmds = commands(home, trace)
        baseline = {}
        for name, args in cmds.items():  # uninterrupted, each on a fresh target
            fsbm(home, "fs", "create", "ext4", "--size", "512M", "--name", "target")
            code, took = run(home, args, None, 0, False)
            baseline[name] = took
            print(f"baseline {name}: exit {code} in {took:.2f} s")
            fsbm(home, "fs", "destroy", "--all")
        counts = {"interrupted": 0, "finished first": 0}
        for i in range(options.interruptions):
            name = list(cmds)[i % len(cmds)]
            sig = rng.choice([signal.SIGINT, signal.SIGTERM])
            group = rng.random() < 0.5
            delay = rng.uniform(0.02, max(baseline[name], 0.05))
            if name != "fs create":
                fsbm(home, "fs", "create", "ext4", "--size", "512M", "--name", "target")
            code, _ = run(home, cmds[name], sig, delay, group)
            expected = {0, 128 + sig, -sig}
            counts["finished first" if code == 0 else "interrupted"] += 1
            found = leftovers(home)
            if code not in expected:
                found.append(f"exit {code}, expected {sorted(expected)}")
            fsbm(home, "fs", "destroy", "--all")
            found += [f"after destroy --all: {x}" for x in loops_beneath(home) + mounts_beneath(home)]
            status = "ok" if not found else "; ".join(found)
            print(f"{i + 1:2d}. {name:9s} {signal.Signals(sig).name:7s} to the {'group' if group else 'process'} "
                  f"at {delay:.2f} s: exit {code}, {status}")
            failures += [f"{name} at {delay:.2f} s: {x}" for x in found]
        # SIGKILL: no handler runs; destroy --all must still find what was left.
        proc = subprocess.Popen([FSBM, *cmds["fs create"]], env={**os.environ, "FSBM_HOME": str(home)},
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(baseline["fs create"] * 0.6)
        proc.kill()
        proc.wait()
        fsbm(home, "fs", "destroy", "--all")
        killed = loops_beneath(home) + mounts_beneath(home)
        print(f"SIGKILL during fs create, then fs destroy --all: {'nothing left' if not killed else killed}")
        failures += [f"after SIGKILL: {x}" for x in killed]
    print(f"\n{options.interruptions} interruptions: {counts['interrupted']} interrupted, "
          f"{counts['finished first']} finished before the signal; failures: {len(failures)} (must be 0)")
    for f in failures:
        print(f"  {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Robustness of the trace parsers against mutated real inputs (issue 38: "Proof").

Inputs are the shared data's real strace logs, NFS captures and Ellard text, mutated with
a fixed seed: truncation, bit flips, byte runs inserted or deleted, huge lines, NUL bytes,
bytes that are not UTF-8, overflowing numbers, and gzip compression damaged afterwards.
Each mutant goes through the path a user's trace takes (`ingest`, in this process, with a
time limit per input; strace logs also through the sanitizer build of strace2events).
Captures also go through the parse in parts cut by connection (traces/nfs_parts.py), whose
outcome must be the whole capture's, and through the sanitizer build of capsplit.

Counted, each of which must be 0:
- crashes: the native parser killed by a signal, or a sanitizer report;
- tracebacks: an exception that is not one of fsbm's located errors;
- hangs: an input that took longer than the limit;
- unlocated errors: an error that does not name the input file;
- leftovers: an output, or a partial one, left behind by a failed parse;
- parts differ: a capture whose parse in parts ended otherwise than its parse whole.
The baseline is the same inputs unmutated, parsed in the same run: every one must parse.

Usage: .venv/bin/python bench/fuzz.py [--inputs 10000] [--seed 38] [--keep DIR]
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import multiprocessing
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from fsbm.errors import FsbmError
from fsbm.traces.ingest import ingest  # imported once: each input's child is a fork of this process

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
LIMIT_S = 30.0


def _seeds() -> dict[str, list[bytes]]:
    """The unmutated inputs by kind (captures decompressed: the mutations act on pcap bytes)."""
    strace = [_whole_lines(p.read_bytes(), 400_000) for p in sorted((DATA / "strace").iterdir())
              if p.is_file() and p.suffix in (".log", ".txt")]
    captures = [bz2.decompress(p.read_bytes()) for p in sorted((DATA / "nfs" / "epam-nfstrace").glob("*.pcap.bz2"))
                if p.stat().st_size < 200_000][:6]
    ellard = [_whole_lines((DATA / "nfs" / "ellard-text" / "ellard-raw-data.txt").read_bytes(), 200_000)]
    return {"strace": strace, "pcap": captures, "ellard": ellard}


def _whole_lines(data: bytes, size: int) -> bytes:
    """The first `size` bytes or so, ending at a line's end."""
    return data if len(data) <= size else data[:data.rfind(b"\n", 0, size) + 1]


def mutate(data: bytes, rng: random.Random) -> tuple[bytes, bool]:
    """One mutation of `data`, and whether the result is to be gzip-compressed then damaged."""
    b = bytearray(data)
    kind = rng.randrange(9)
    if kind == 0 and b:  # truncation
        del b[rng.randrange(len(b)):]
    elif kind == 1:  # bit flips
        for _ in range(rng.randint(1, 20)):
            if b:
                b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    elif kind == 2 and b:  # a run deleted
        at = rng.randrange(len(b))
        del b[at:at + rng.randint(1, 4000)]
    elif kind == 3:  # a huge line
        at = rng.randrange(len(b) + 1)
        b[at:at] = b"9" * rng.choice((70_000, 1_100_000)) + b"\n"
    elif kind == 4:  # NUL bytes
        for _ in range(rng.randint(1, 10)):
            b.insert(rng.randrange(len(b) + 1), 0)
    elif kind == 5:  # bytes that are not UTF-8
        for _ in range(rng.randint(1, 10)):
            b[rng.randrange(len(b) + 1):0] = bytes([0xff, 0xfe, 0xc3])
    elif kind == 6:  # overflowing numbers
        for _ in range(rng.randint(1, 10)):
            at = rng.randrange(len(b) + 1)
            b[at:at] = rng.choice((b"99999999999999999999999", b"-9223372036854775808", b"0xffffffffffffffffff",
                                   b"18446744073709551616"))
    elif kind == 7:  # another line's bytes spliced in
        if len(b) > 2:
            start = rng.randrange(len(b) - 1)
            at = rng.randrange(len(b))
            b[at:at] = b[start:start + rng.randint(1, 300)]
    return bytes(b), kind == 8


def _damaged_gzip(data: bytes, rng: random.Random) -> bytes:
    packed = bytearray(gzip.compress(data))
    for _ in range(rng.randint(1, 5)):
        packed[rng.randrange(20, max(len(packed), 21))] ^= 0x55
    return bytes(packed[:rng.randrange(30, len(packed) + 1)] if rng.random() < 0.3 else packed)


def _ingest(path: str, out: str, queue: "multiprocessing.Queue[tuple[str, str]]", in_parts: bool = False) -> None:
    try:
        if in_parts:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(2) as pool:
                result = ingest([Path(path)], Path(out), keep_going=bool(int(Path(path).name[0])), workers=pool)
        else:
            result = ingest([Path(path)], Path(out), keep_going=bool(int(Path(path).name[0])))
        queue.put(("ok", f"{result.events} events"))
    except FsbmError as exc:
        queue.put(("located" if path in exc.message else "unlocated", exc.message[:300]))
    except BaseException as exc:  # noqa: BLE001 - the count this benchmark exists for
        queue.put(("traceback", f"{type(exc).__name__}: {exc}"[:300]))


def parse_one(path: Path, out: Path, in_parts: bool = False) -> tuple[str, str]:
    """The outcome of one ingest, in a child process with a time limit."""
    queue: multiprocessing.Queue[tuple[str, str]] = multiprocessing.Queue()
    child = multiprocessing.Process(target=_ingest, args=(str(path), str(out), queue, in_parts))
    child.start()
    child.join(LIMIT_S)
    if child.is_alive():
        child.kill()
        child.join()
        return "hang", str(path)
    if child.exitcode and child.exitcode < 0:
        return "crash", f"signal {-child.exitcode}"
    try:
        return queue.get(timeout=5)
    except Exception:  # noqa: BLE001
        return "crash", f"exit {child.exitcode} with no outcome"


def sanitized_parse(path: Path) -> tuple[str, str]:
    """strace2events built with ASan and UBSan, straight on the input."""
    binary = REPO / "traces" / "bin" / "strace2events-asan"
    try:
        done = subprocess.run([str(binary), "--keep-going", str(path)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        return "hang", str(path)
    report = done.stderr.decode(errors="replace")
    if done.returncode < 0 or "Sanitizer" in report or "runtime error" in report:
        return "crash", report[-300:]
    return "ok", ""


def sanitized_split(path: Path, work: Path) -> tuple[str, str]:
    """capsplit built with ASan and UBSan, straight on the input, cut both ways."""
    binary = REPO / "traces" / "bin" / "capsplit-asan"
    for cut in ("time", "connection"):
        try:
            done = subprocess.run([str(binary), "--by", cut, "3", str(work / "fuzzpart"), str(path)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=LIMIT_S)
        except subprocess.TimeoutExpired:
            return "hang", str(path)
        report = done.stderr.decode(errors="replace")
        if done.returncode not in (0, 2, 3) or "Sanitizer" in report or "runtime error" in report:
            return "crash", report[-300:]
    return "ok", ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--keep", type=Path, help="Copy each input with a bad outcome into this directory.")
    args = parser.parse_args()
    seeds = _seeds()
    rng = random.Random(args.seed)
    share = {"strace": 0.6, "ellard": 0.25, "pcap": 0.15}  # captures cost tshark ~0.3 s each
    counts: Counter[str] = Counter()
    examples: dict[str, str] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fsbm-fuzz-") as tmp:
        work = Path(tmp)
        baseline: Counter[str] = Counter()
        for kind, inputs in seeds.items():
            for i, data in enumerate(inputs):
                path = work / f"0seed{i}.{kind}"
                path.write_bytes(data)
                outcome, _ = parse_one(path, work / "seed.parquet")
                baseline[outcome] += 1
                (work / "seed.parquet").unlink(missing_ok=True)
        print(f"baseline: {sum(baseline.values())} unmutated inputs, {dict(baseline)} (the shared data holds logs "
              "that are not strace output; those are refused, located, unmutated too)")
        for n in range(args.inputs):
            kind = rng.choices(list(share), weights=list(share.values()))[0]
            data, compress = mutate(rng.choice(seeds[kind]), rng)
            keep_going = rng.random() < 0.5
            suffix = {"strace": ".strace", "pcap": ".pcap", "ellard": ".txt"}[kind]
            path = work / f"{int(keep_going)}in{n}{suffix}{'.gz' if compress else ''}"
            path.write_bytes(_damaged_gzip(data, rng) if compress else data)
            out = work / f"out{n}.parquet"
            outcome, detail = parse_one(path, out)
            if kind == "strace" and not compress and outcome in ("ok", "located"):
                sanitized = sanitized_parse(path)
                if sanitized[0] != "ok":
                    outcome, detail = sanitized
            if kind == "pcap" and outcome in ("ok", "located"):
                in_parts = parse_one(path, work / f"parts{n}.parquet", in_parts=True)
                (work / f"parts{n}.parquet").unlink(missing_ok=True)
                sanitized = sanitized_split(path, work)
                if sanitized[0] != "ok":
                    outcome, detail = sanitized
                elif in_parts != (outcome, detail):
                    outcome, detail = "parts differ", f"whole: {detail}; in parts: {in_parts[1]}"
            if outcome != "ok" and outcome != "located":
                examples.setdefault(outcome, f"{path.name}: {detail}")
                if args.keep:
                    args.keep.mkdir(parents=True, exist_ok=True)
                    (args.keep / f"{outcome}-{path.name}").write_bytes(path.read_bytes())
            if outcome == "located" and (out.exists() or any(work.glob(f".out{n}.parquet*"))):
                outcome = "leftover"
                examples.setdefault(outcome, path.name)
            counts[outcome] += 1
            out.unlink(missing_ok=True)
            path.unlink()
            if (n + 1) % 1000 == 0:
                print(f"  {n + 1} inputs in {time.perf_counter() - started:.0f} s: {dict(counts)}", flush=True)
    bad = {k: counts[k] for k in ("crash", "traceback", "hang", "unlocated", "leftover", "parts differ")}
    print(f"{args.inputs} mutated inputs in {time.perf_counter() - started:.0f} s: parsed {counts['ok']}, "
          f"refused with a located error {counts['located']}")
    for name, value in bad.items():
        print(f"  {name}: {value}" + (f"  (e.g. {examples[name]})" if value else ""))
    sys.exit(1 if any(bad.values()) or set(baseline) - {"ok", "located"} else 0)


if __name__ == "__main__":
    main()

"""fsbench refuses bad arguments with one clear line and exit code 2, before touching anything."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from fsbm.microbench.fsbench import QUICK_CASE_SECONDS, QUICK_REPS
from fsbm.predictor.cost_table import PINNED, UNPINNED, CostTable
from fsbm.predictor.pricing import Pricer, WrittenFiles, written_files

pytestmark = pytest.mark.cores_shared  # asserts nothing on a time it measures


def run(fsbench: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(fsbench), *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "--target DIR is required"),
        (("--target", "/nonexistent/dir"), "No such file or directory"),
        (("--target", "/etc/hostname"), "is not a directory"),
        (("--target", "/tmp", "--sizes", "4q"), "'4q' is not a request size"),
        (("--target", "/tmp", "--sizes", "2T"), "'2T' is not a request size between 1 B and 1024G"),
        (("--target", "/tmp", "--only", "teleport"), "neither a family"),
        (("--target", "/tmp", "--caches", "lukewarm"), "unknown value 'lukewarm'"),
        (("--target", "/tmp", "--reps", "0"), "--reps expects a whole number >= 1"),
        (("--target", "/tmp", "--file-size", "12"), "--file-size expects a size of at least 4k"),
        (("--target", "/tmp", "--gaps", "4k,huge"), "'huge' is not a gap between 512 B and 64M"),
        (("--target", "/tmp", "--orders", "sideways"), "unknown value 'sideways'"),
        (("--target", "/tmp", "--file-sizes", "4k,lots"), "'lots' is not a file size between 0 B and 64M"),
        (("--target", "/tmp", "--file-sizes", ",".join(["1k"] * 17)), "--file-sizes: at most 16 values"),
        (("--target", "/tmp", "--bogus"), "unknown option '--bogus'"),
        (("--target", "/tmp", "stray"), "unexpected argument 'stray'"),
    ],
)
def test_bad_arguments_exit_2_with_a_clear_message(fsbench: Path, args: tuple[str, ...], message: str) -> None:
    done = run(fsbench, *args)
    assert done.returncode == 2
    assert message in done.stderr
    assert done.stderr.startswith("fsbench: ")
    assert "Traceback" not in done.stderr


def test_a_cpu_it_may_not_run_on_is_refused_before_a_work_directory_is_made(fsbench: Path, tmp_path: Path) -> None:
    done = run(fsbench, "--target", str(tmp_path), "--cpu", str(os.cpu_count() + 64), "--only", "stat_file")
    assert done.returncode == 2 and "is not a CPU this process may run on" in done.stderr
    assert not list(tmp_path.iterdir())


def test_bad_sizes_are_refused_before_a_work_directory_is_made(fsbench: Path, tmp_path: Path) -> None:
    done = run(fsbench, "--target", str(tmp_path), "--sizes", "4k,64q")
    assert done.returncode == 2 and "'64q' is not a request size" in done.stderr
    assert not list(tmp_path.iterdir())


def test_an_existing_json_file_is_never_overwritten(fsbench: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    out.write_text("precious")
    done = run(fsbench, "--target", str(tmp_path), "--json", str(out))
    assert done.returncode == 2
    assert "exists" in done.stderr
    assert out.read_text() == "precious"


def test_list_names_every_benchmark_with_what_it_isolates(fsbench: Path) -> None:
    listing = run(fsbench, "--list").stdout.splitlines()
    names = {line.split()[0] for line in listing}
    assert {"create", "unlink", "mkdir", "rmdir", "stat_file", "stat_dir", "open", "close", "readdir", "rename",
            "link", "symlink", "chmod", "utimes", "read", "write", "overwrite", "append", "fsync",
            "fdatasync", "fdatasync_overwrite", "fsync_clean", "fsync_dir", "create_written", "create_written_mix",
            "unlink_written", "unlink_written_mix", "append_mix", "create_renamed_mix", "rename_written_mix"} <= names
    assert all(len(line.split(None, 3)) == 4 for line in listing)


def test_default_sweep_brackets_the_block_size(fsbench: Path, tmp_path: Path) -> None:
    done = run(fsbench, "--target", str(tmp_path), "--only", "read", "--caches", "warm", "--orders", "seq",
               "--block-size", "4096", "--dry-run")
    sizes = [int(line.split()[1]) for line in done.stdout.splitlines() if line.startswith("read ")]
    assert {4095, 4096, 4097} <= set(sizes)
    assert min(sizes) == 512 and max(sizes) == 1 << 20


def test_dry_run_states_the_time_it_will_take_and_leaves_nothing(fsbench: Path, tmp_path: Path) -> None:
    done = run(fsbench, "--target", str(tmp_path), "--dry-run")
    assert done.returncode == 0
    assert "5 repetitions of at most 2 s each in 5 rounds, estimated at most" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_quick_effort_is_the_one_the_python_side_assumes(fsbench: Path, tmp_path: Path) -> None:
    """A stored table is reused only at the effort asked for (TableEffort), which names
    quick's repetitions and case budget where the user gave none: they must be fsbench's."""
    done = run(fsbench, "--target", str(tmp_path), "--quick", "--dry-run")
    assert done.returncode == 0
    assert f"{QUICK_REPS} repetitions of at most {QUICK_CASE_SECONDS:g} s each" in done.stderr


def test_o_direct_cases_with_unaligned_sizes_are_skipped_with_a_reason(fsbench: Path, tmp_path: Path) -> None:
    done = run(fsbench, "--target", str(tmp_path), "--only", "read", "--sizes", "4095", "--caches", "direct",
               "--dry-run")
    assert "skip read 4095 B sequential direct: O_DIRECT needs request sizes that are multiples of 512" in done.stdout


def test_help_lists_every_option(fsbench: Path) -> None:
    text = run(fsbench, "--help").stdout
    for option in ("--target", "--quick", "--only", "--json", "--sizes", "--caches", "--reps", "--file-size",
                   "--case-seconds", "--cpu", "--dry-run", "--list"):
        assert option in text


def test_version(fsbench: Path) -> None:
    assert json.dumps(run(fsbench, "--version").stdout.startswith("fsbench "))


def test_a_reader_that_goes_away_stops_the_run_and_leaves_nothing_behind(fsbench: Path, tmp_path: Path) -> None:
    """fsbench | head: the closed pipe stops the run as SIGINT does, the work directory is
    removed; killed by SIGPIPE, it used to stay beneath the target.  The run would last about
    13 s uninterrupted (2 s a case), so the reader goes away mid-run even where this process
    waits seconds for a core; the stop ends it at the next write."""
    proc = subprocess.Popen([str(fsbench), "--target", str(tmp_path), "--quick", "--case-seconds", "2", "--only",
                             "create,unlink,mkdir", "--caches", "warm"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.read(10)
    proc.stdout.close()
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert b"interrupted" in stderr
    assert list(tmp_path.iterdir()) == []


def test_a_reader_gone_before_the_plan_line_leaves_no_work_directory(fsbench: Path, tmp_path: Path) -> None:
    """fsbench 2>&1 | tail -0: the reader of standard error is gone before fsbench writes
    its plan, just after it made its work directory; killed by SIGPIPE there, it left the
    directory beneath the target.  It stops as interrupted, keeps its (empty) results and
    removes the directory, unpinned or pinned alike."""
    for cpu in ("none", None):
        read, write = os.pipe()
        os.close(read)
        out = tmp_path / f"stopped-{cpu}.json"
        pinning = ("--cpu", cpu) if cpu else ()
        done = subprocess.run([str(fsbench), "--target", str(tmp_path), "--quick", "--only", "unlink", "--caches", "warm",
                               *pinning, "--json", str(out)], stdout=subprocess.DEVNULL, stderr=write, timeout=120)
        os.close(write)
        assert done.returncode == 130
        assert json.loads(out.read_text())["interrupted"] is True
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stopped-None.json", "stopped-none.json"]


def traced_writes(fsbench: Path, tmp_path: Path, *args: str) -> tuple[dict, list[int]]:
    """fsbench --quick with `args` on a new target beneath tmp_path, traced: its one result,
    and the bytes each write call it made returned.  --seccomp-bpf: only the writes stop the
    benchmark (51 s traced without it, 0.4 s with it)."""
    out, log = tmp_path / "mix.json", tmp_path / "writes.strace"
    target = tmp_path / "target"
    target.mkdir()
    done = subprocess.run(["strace", "-f", "-qq", "--seccomp-bpf", "-e", "trace=write", "-e", "signal=none",
                           "-o", str(log), str(fsbench), "--target", str(target), "--quick", *args, "--json", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    [result] = json.loads(out.read_text())["results"]
    written = [int(line.rsplit("= ", 1)[1]) for line in log.read_text().splitlines()
               if " write(" in line and "= " in line and line.rsplit("= ", 1)[1].strip().isdigit()]
    return result, written


def test_append_mix_appends_the_workloads_sizes_in_turn(fsbench: Path, tmp_path: Path) -> None:
    """append_mix is planned only with --file-sizes, at the mix's mean; its timed appends cycle
    through the mix (seen in the write calls strace shows), so a page written after 4 bytes
    straddles a page boundary as SQLite's journal pages do."""
    plain = run(fsbench, "--target", str(tmp_path), "--only", "data", "--dry-run")
    assert "append_mix" not in plain.stdout
    planned = run(fsbench, "--target", str(tmp_path), "--only", "append_mix", "--file-sizes", "4,4096,4",
                  "--dry-run")
    assert [line.split()[:2] for line in planned.stdout.splitlines() if "append_mix" in line] == [
        ["append_mix", "1368"]]
    result, written = traced_writes(fsbench, tmp_path, "--only", "append_mix", "--file-sizes", "4,4096,4", "--reps", "1")
    assert result["bench"] == "append_mix" and result["size"] == 1368 and result["file_sizes"] == [4, 4096, 4]
    assert result["order"] == "sequential" and result["cache"] == "warm" and result["ops"] > 0
    pages, small = written.count(4096), written.count(4)
    assert pages >= 50 and abs(small - 2 * pages) <= 4


def test_the_mix_benchmarks_run_only_at_a_mix_and_write_each_file_at_its_size(fsbench: Path, tmp_path: Path) -> None:
    """create_written_mix and unlink_written_mix are planned only with --file-sizes, one case
    each at the mix's mean; the files they make are written at the mix's sizes, cycled (seen
    in the write calls strace shows), and the results carry the mix."""
    plain = run(fsbench, "--target", str(tmp_path), "--only", "meta", "--dry-run")
    assert "create_written_mix" not in plain.stdout and "create_written " in plain.stdout
    planned = run(fsbench, "--target", str(tmp_path), "--only", "create_written_mix,unlink_written_mix",
                  "--file-sizes", "1000,5000,0", "--caches", "warm", "--dry-run")
    assert [line.split()[:2] for line in planned.stdout.splitlines() if "_mix" in line] == [
        ["create_written_mix", "2000"], ["unlink_written_mix", "2000"]]

    result, written = traced_writes(fsbench, tmp_path, "--only", "create_written_mix", "--file-sizes", "1000,5000,0",
                                    "--caches", "warm", "--files", "60", "--reps", "1")
    assert result["bench"] == "create_written_mix" and result["size"] == 2000
    assert result["file_sizes"] == [1000, 5000, 0] and result["ops"] > 0
    assert written.count(1000) >= 15 and written.count(5000) >= 15


def test_write_new_mix_writes_each_new_file_at_the_workloads_request_sizes_in_turn(fsbench: Path,
                                                                                  tmp_path: Path) -> None:
    """write_new_mix is planned only with both mixes, at the requests' mean; it writes file
    after file of the mix of file sizes in the mix of request sizes, cycled on from file to
    file, each file's last write what is left of it (seen in the write calls strace shows),
    and its result carries both mixes."""
    for mixes in ((), ("--file-sizes", "5000,12000"), ("--request-sizes", "4000,10000")):
        planned = run(fsbench, "--target", str(tmp_path), "--only", "write_new_mix", *mixes, "--dry-run")
        assert "write_new_mix" not in planned.stdout
    planned = run(fsbench, "--target", str(tmp_path), "--only", "write_new_mix", "--file-sizes", "5000,12000",
                  "--request-sizes", "4000,10000", "--dry-run")
    assert [line.split()[:2] for line in planned.stdout.splitlines() if "write_new_mix" in line] == [
        ["write_new_mix", "7000"]]
    result, written = traced_writes(fsbench, tmp_path, "--only", "write_new_mix", "--file-sizes", "5000,12000",
                                    "--request-sizes", "4000,10000", "--files", "40", "--reps", "1")
    assert result["bench"] == "write_new_mix" and result["size"] == 7000 and result["ops"] > 0
    assert result["file_sizes"] == [5000, 12000] and result["request_sizes"] == [4000, 10000]
    # Each pair of files: 4000 and the 1000 left of 5000, then 4000 and the 8000 left of 12000.
    assert written.count(1000) == written.count(8000) == 20 and written.count(4000) == 40
    assert 10000 not in written


def writes_between_syncs(log: Path) -> list[list[tuple[int, int]]]:
    """The (size, offset) of each pwrite64 in an strace log, in the batches its fdatasyncs end."""
    batches, batch = [], []
    for line in log.read_text().splitlines():
        if "fdatasync(" in line:
            batches.append(batch)
            batch = []
        elif "pwrite64(" in line:
            size, offset = (int(v) for v in line.split(")")[0].rsplit(",", 2)[1:])
            batch.append((size, offset))
    return batches


def test_a_scattered_rewrite_is_made_durable_as_single_blocks_across_the_file(fsbench: Path, tmp_path: Path) -> None:
    """fdatasync_overwrite in random order rewrites its bytes as single blocks drawn across the
    file, as a database rewrites the pages a transaction changed, then syncs them; in
    sequential order, as one request.  Its file is laid out a block at a time and synced
    first, so its pages are a page each as a database's are (seen in the calls strace shows)."""
    out, log = tmp_path / "scattered.json", tmp_path / "rewrites.strace"
    target = tmp_path / "target"
    target.mkdir()
    done = subprocess.run(["strace", "-f", "-qq", "--seccomp-bpf", "-e", "trace=pwrite64,fdatasync", "-e", "signal=none",
                           "-o", str(log), str(fsbench), "--target", str(target), "--quick", "--only",
                           "fdatasync_overwrite", "--sizes", "32k", "--block-size", "4096", "--file-size", "16M",
                           "--reps", "1", "--ops", "20", "--json", str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    results = {r["order"]: r for r in json.loads(out.read_text())["results"]}
    assert set(results) == {"sequential", "random"} and all(r["size"] == 32768 for r in results.values())
    # The rewrites before each sync (the file's laying out before the first).
    batches = writes_between_syncs(log)
    blocks = [[offset for size, offset in b if size == 4096] for b in batches]
    assert sum(written == [k * 4096 for k in range(4096)] for written in blocks) == 2  # once a case
    whole = [b for b in batches if b and b[0][0] == 32768]
    scattered = [b for b in batches if len(b) == 8 and all(size == 4096 for size, _ in b)]
    assert len(whole) >= 10 and len(scattered) >= 10
    for rewrite in scattered:
        offsets = sorted(offset for _, offset in rewrite)
        assert all(offset % 4096 == 0 for offset in offsets)
        assert sum(b - a == 4096 for a, b in zip(offsets, offsets[1:])) <= 1  # apart, not one run


def test_a_syncs_bytes_are_written_in_the_workloads_requests_where_it_gives_them(fsbench: Path,
                                                                                 tmp_path: Path) -> None:
    """Given a workload's request sizes, fsync and fdatasync write the bytes each sync makes
    durable in requests cycling through them (a page at a time, their pages stay small), and
    their results carry the sizes; without them, in one request (seen in the calls strace
    shows)."""
    target = tmp_path / "target"
    target.mkdir()

    def batches(*more: str, only: str = "fsync") -> tuple[list[dict], list[list[tuple[int, int]]]]:
        out, log = tmp_path / "synced.json", tmp_path / "synced.strace"
        done = subprocess.run(["strace", "-f", "-qq", "--seccomp-bpf", "-e", "trace=pwrite64,fdatasync,fsync",
                               "-e", "signal=none", "-o", str(log), str(fsbench), "--target", str(target), "--quick",
                               "--only", only, "--sizes", "20000", "--block-size", "4096", "--file-size", "16M",
                               "--reps", "1", "--ops", "10", "--json", str(out), "--force", *more],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        text = log.read_text().replace("fsync(", "fdatasync(")
        log.write_text(text)
        return json.loads(out.read_text())["results"], [b for b in writes_between_syncs(log) if b]

    results, synced = batches("--request-sizes", "4,4096,4")
    assert [(r["bench"], r["size"], r.get("request_sizes")) for r in results] == [("fsync", 20000, [4, 4096, 4])]
    assert len(synced) >= 10
    for batch in synced:
        assert [size for size, _ in batch] == [4, 4096, 4] * 4 + [4, 3580]
        offsets = [offset for _, offset in batch]
        assert all(b - a == size for (size, _), a, b in zip(batch, offsets, offsets[1:]))  # one after another
    results, synced = batches()
    assert "request_sizes" not in results[0]
    assert len(synced) >= 10 and all([size for size, _ in batch] == [20000] for batch in synced)
    # A scattered rewrite in the workload's requests: each request whole, at a place of its own.
    results, synced = batches("--request-sizes", "4,4096,4", "--orders", "random", only="fdatasync_overwrite")
    assert [(r["order"], r.get("request_sizes")) for r in results] == [("random", [4, 4096, 4])]
    rewrites = [b for b in synced if b[0][0] == 4]  # not the laying out of the file
    assert len(rewrites) >= 10 and all([size for size, _ in b] == [4, 4096, 4] * 4 + [4, 3580] for b in rewrites)


def test_a_warm_rewrite_starts_from_clean_blocks_and_goes_on_through_the_file(fsbench: Path, tmp_path: Path) -> None:
    """A warm overwrite lays its file out again a block at a time and syncs it, so every block
    is cached, clean and in a page of its own, as a database leaves its pages; each later pass
    of its rewrites begins after an fdatasync and goes on through the file rather than over
    the same blocks again (seen in the calls strace shows)."""
    out, log = tmp_path / "rewrite.json", tmp_path / "rewrites.strace"
    target = tmp_path / "target"
    target.mkdir()
    done = subprocess.run(["strace", "-f", "-qq", "--seccomp-bpf", "-e", "trace=pwrite64,fdatasync", "-e", "signal=none",
                           "-o", str(log), str(fsbench), "--target", str(target), "--quick", "--only", "overwrite",
                           "--sizes", "4096", "--orders", "random", "--caches", "warm", "--block-size", "4096",
                           "--file-size", "1M", "--reps", "1", "--ops", "64", "--min-rep-seconds", "0.1",
                           "--json", str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["results"][0]["ops"] > 4 * 64
    batches = writes_between_syncs(log)
    laid_out = [size_offset for size_offset in batches[0] if size_offset[0] == 4096]
    assert laid_out == [(4096, block * 4096) for block in range(256)]
    passes = batches[1:]
    assert len(passes) >= 4 and all(len(p) == 64 and all(size == 4096 for size, _ in p) for p in passes)
    swept = [offset for p in passes[:4] for _, offset in p]
    assert sorted(swept) == [block * 4096 for block in range(256)]  # the whole file, each block once


def test_stat_listed_mix_reads_each_directorys_files_in_the_order_its_listing_gave(fsbench: Path,
                                                                                   tmp_path: Path) -> None:
    """stat_listed_mix is planned only with --file-sizes; it lists each directory, then stats
    its files by name in the order the listing returned them (seen in the getdents64 and
    newfstatat calls strace shows), every file once a repetition, and its result carries the
    mix and the files it ran among."""
    plain = run(fsbench, "--target", str(tmp_path), "--only", "meta", "--dry-run")
    assert "stat_listed_mix" not in plain.stdout and "read_listed_mix" not in plain.stdout
    at_mix = run(fsbench, "--target", str(tmp_path), "--only", "meta", "--file-sizes", "1k", "--dry-run")
    assert "stat_listed_mix" in at_mix.stdout and "read_listed_mix" in at_mix.stdout
    out, log, target = tmp_path / "listed.json", tmp_path / "listed.strace", tmp_path / "target"
    target.mkdir()
    done = subprocess.run(["strace", "-f", "-qq", "-v", "--seccomp-bpf", "-e", "trace=getdents64,newfstatat",
                           "-e", "signal=none", "-o", str(log), str(fsbench), "--target", str(target), "--quick",
                           "--only", "stat_listed_mix", "--file-sizes", "100,3000", "--caches", "warm", "--files",
                           "250", "--reps", "1", "--min-rep-seconds", "0", "--json", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    [result] = json.loads(out.read_text())["results"]
    assert result["bench"] == "stat_listed_mix" and result["file_sizes"] == [100, 3000] and result["objects"] == 250
    listed, stated = [], []
    for line in log.read_text().splitlines():
        if " getdents64(" in line:
            listed += re.findall(r'd_type=DT_REG, d_name="([^"]+)"', line)
        elif " newfstatat(" in line and "AT_SYMLINK_NOFOLLOW" in line:
            name = re.search(r'newfstatat\(\d+, "([^"]*)"', line)
            if name and "/" not in name.group(1):
                stated.append(name.group(1))
    # The run's own listings and stats come first; then fsbench removes its tree, which lists
    # and stats again.
    assert len(stated) >= 250 and stated[:250] == listed[:250] and len(set(stated[:250])) == 100


def test_create_written_mix_makes_the_asked_count_of_files_and_is_priced_at_it(fsbench: Path, tmp_path: Path) -> None:
    """create_written_mix makes and writes as many files as --files asks, its result says
    them (objects), and the cost table keeps the count: a workload that made that many
    files of that mix is priced by the case, and one that made three times as many asks for
    its own (pricing.written_files)."""
    out, target = tmp_path / "written.json", tmp_path / "target"
    target.mkdir()
    done = run(fsbench, "--target", str(target), "--quick", "--only", "create,create_written_mix", "--file-sizes",
               "100,3000", "--orders", "seq", "--caches", "warm", "--files", "300", "--reps", "1", "--json", str(out))
    assert done.returncode == 0, done.stderr
    [result] = [r for r in json.loads(out.read_text())["results"] if r["bench"] == "create_written_mix"]
    assert result["objects"] == 300
    [case] = [c for c in CostTable.from_fsbench(json.loads(out.read_text()), "tmp").entries if c.files]
    assert case.bench == "create_written_mix" and case.files == 300
    made = WrittenFiles(300, 1550, (100, 3000))
    assert written_files(made) == 300
    pricer = Pricer(CostTable.from_fsbench(json.loads(out.read_text()), "tmp"))
    price = pricer.create_written(made, "warm")
    assert "among 300 files" in price.source and price.ns == pytest.approx(case.latency_ns.mean)
    elsewhere = pricer.create_written(WrittenFiles(900, 1550, (100, 3000)), "warm")
    assert {(u.bench, u.files) for u in pricer.unmeasured} == {("create_written_mix", 900)}
    assert elsewhere.ns == price.ns and "among 300 files (not the workload's 900" in elsewhere.source


def test_a_mix_too_large_for_the_asked_count_is_made_smaller_and_known_by_the_count_asked(fsbench: Path,
                                                                                       tmp_path: Path) -> None:
    """Where the asked count of a mix would hold more than fsbench writes a repetition (256
    MiB), create_written_mix makes fewer files and says both counts; the cost table knows
    the case by the count asked for, so a workload of that count finds it (nothing asked for
    again) and its price says how many files were made."""
    out, target = tmp_path / "written.json", tmp_path / "target"
    target.mkdir()
    mix = (512 << 10, 1 << 20)  # a mean of 768 KiB: 341 files hold 256 MiB
    done = run(fsbench, "--target", str(target), "--quick", "--only", "create_written_mix", "--file-sizes",
               ",".join(map(str, mix)), "--orders", "seq", "--caches", "warm", "--files", "400", "--reps", "1",
               "--min-rep-seconds", "0", "--json", str(out))
    assert done.returncode == 0, done.stderr
    [result] = json.loads(out.read_text())["results"]
    assert (result["files_asked"], result["objects"]) == (400, 341)
    table = CostTable.from_fsbench(json.loads(out.read_text()), "tmp")
    [case] = table.entries
    assert (case.files, case.objects) == (400, 341)
    pricer = Pricer(table)
    price = pricer.create_written(WrittenFiles(400, sum(mix) / 2, mix), "warm")
    assert not pricer.unmeasured and price.ns == pytest.approx(case.latency_ns.mean)
    assert "among 400 files (fsbench made 341" in price.source


def test_readdir_entries_runs_only_where_named_and_lists_directories_of_the_asked_count(fsbench: Path,
                                                                                        tmp_path: Path) -> None:
    """readdir_entries is a workload's own case: no plan of fsbench's defaults, nor of the
    meta family, holds it; named, it lists directories of --files entries each, says so,
    and a cost table keeps that count as the case's."""
    from fsbm.predictor.cost_table import CostTable

    for plain in (run(fsbench, "--target", str(tmp_path), "--quick", "--dry-run"),
                  run(fsbench, "--target", str(tmp_path), "--only", "meta", "--dry-run")):
        assert "readdir_entries" not in plain.stdout and "readdir_small" in plain.stdout
    out = tmp_path / "listing.json"
    done = run(fsbench, "--target", str(tmp_path), "--quick", "--only", "readdir_entries", "--files", "300",
               "--caches", "warm", "--reps", "1", "--json", str(out))
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    [result] = doc["results"]
    assert result["bench"] == "readdir_entries" and result["entries_per_op"] == 300
    assert result["listed_bytes_per_op"] > 300 * 10 and result["objects"] >= 4  # names, "." and ".."; 4+ directories
    [case] = CostTable.from_fsbench(doc, "tmp").entries
    assert case.files == 300 and case.key[-2:] == (300, PINNED)
    assert [p.name for p in tmp_path.iterdir()] == ["listing.json"], "fsbench left its work directory behind"


def test_unlink_entries_runs_only_where_named_and_empties_directories_of_the_asked_count(fsbench: Path,
                                                                                         tmp_path: Path) -> None:
    """unlink_entries is a workload's own case too: named, it empties readdir_entries'
    directories of --files entries each, every file of them in turn, and a cost table keeps
    that count and where fsbench ran (here unpinned) as the case's."""
    from fsbm.predictor.cost_table import CostTable

    plain = run(fsbench, "--target", str(tmp_path), "--quick", "--dry-run")
    assert "unlink_entries" not in plain.stdout and "unlink_written" in plain.stdout
    out = tmp_path / "emptied.json"
    done = run(fsbench, "--target", str(tmp_path), "--quick", "--only", "unlink_entries", "--files", "300",
               "--caches", "warm", "--reps", "1", "--warmup", "0", "--case-seconds", "30", "--cpu", "none",
               "--json", str(out))
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    [result] = doc["results"]
    assert (result["bench"], result["op"], result["files_asked"]) == ("unlink_entries", "unlink", 300)
    assert result["objects"] == 20 * 300 and result["ops"] == result["objects"]  # 40,000 / 300: at most 20 directories
    assert doc["environment"]["pinned_cpu"] is None
    [case] = CostTable.from_fsbench(doc, "tmp").entries
    assert case.key[-2:] == (300, UNPINNED)
    assert [p.name for p in tmp_path.iterdir()] == ["emptied.json"], "fsbench left its work directory behind"

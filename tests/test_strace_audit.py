"""Every call on a file becomes exactly one event: a real program, traced for real.

The program below makes every call that takes a descriptor or a path and acts on a file,
in each of the forms glibc and the kernel offer (AT_EMPTY_PATH, futimens as utimensat with
NULL, fd-based xattrs, openat2, renameat2, in-kernel copies).  The log's own lines are
counted independently of the parser: a completed call whose arguments name the work
directory.  The parser's events must match that count call by call, and a call on the
work directory that this test does not list, as an event or as bookkeeping, fails it: a
new call in a new glibc is then audited rather than silently dropped.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from fsbm.traces.ingest import ingest, read_events

# Times nothing and needs no loop device: may share the cores with another such test.
pytestmark = pytest.mark.cores_shared

PROGRAM = textwrap.dedent(r"""
    import ctypes, fcntl, mmap, os, sys
    libc = ctypes.CDLL(None, use_errno=True)
    AT_FDCWD, AT_EMPTY_PATH = -100, 0x1000
    w = sys.argv[1]

    fd = os.open(f"{w}/a.dat", os.O_CREAT | os.O_RDWR, 0o644)
    os.write(fd, b"x" * 8192)
    os.writev(fd, [b"y" * 10, b"z" * 10])
    os.pwrite(fd, b"p" * 100, 100)
    os.pwritev(fd, [b"q" * 10], 200)
    os.lseek(fd, 0, os.SEEK_SET)
    os.read(fd, 100)
    os.readv(fd, [bytearray(10), bytearray(10)])
    os.pread(fd, 100, 0)
    os.preadv(fd, [bytearray(10)], 0)
    os.fsync(fd)
    os.fdatasync(fd)
    os.ftruncate(fd, 16384)
    os.posix_fallocate(fd, 0, 32768)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_SEQUENTIAL)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.fstat(fd)
    os.fstatvfs(fd)
    os.fchmod(fd, 0o600)
    os.fchown(fd, os.getuid(), os.getgid())
    os.utime(fd)                                   # futimens: utimensat(fd, NULL, ...)
    os.setxattr(fd, "user.k", b"v")                # fsetxattr
    os.getxattr(fd, "user.k")                      # fgetxattr
    os.listxattr(fd)                               # flistxattr
    os.removexattr(fd, "user.k")                   # fremovexattr
    m = mmap.mmap(fd, 4096)
    m.close()
    buf = ctypes.create_string_buffer(256)
    assert libc.statx(fd, b"", AT_EMPTY_PATH, 0xfff, buf) == 0
    assert libc.fchownat(fd, b"", os.getuid(), os.getgid(), AT_EMPTY_PATH) == 0

    out = os.open(f"{w}/b.dat", os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    os.copy_file_range(fd, out, 4096)
    os.sendfile(out, fd, 0, 4096)
    os.close(out)
    os.close(fd)

    os.stat(f"{w}/a.dat")
    os.lstat(f"{w}/a.dat")
    os.access(f"{w}/a.dat", os.R_OK)
    os.statvfs(f"{w}/a.dat")
    os.chmod(f"{w}/a.dat", 0o644)
    os.chown(f"{w}/a.dat", os.getuid(), os.getgid())
    os.utime(f"{w}/a.dat", (1, 1))
    os.truncate(f"{w}/a.dat", 8192)
    os.setxattr(f"{w}/a.dat", "user.k", b"v")
    os.getxattr(f"{w}/a.dat", "user.k")
    os.listxattr(f"{w}/a.dat")
    os.removexattr(f"{w}/a.dat", "user.k")
    os.setxattr(f"{w}/a.dat", "user.k", b"v", follow_symlinks=False)      # lsetxattr
    os.getxattr(f"{w}/a.dat", "user.k", follow_symlinks=False)            # lgetxattr
    os.listxattr(f"{w}/a.dat", follow_symlinks=False)                     # llistxattr
    os.removexattr(f"{w}/a.dat", "user.k", follow_symlinks=False)         # lremovexattr

    os.mkdir(f"{w}/d")
    os.listdir(f"{w}/d")
    os.mknod(f"{w}/d/node", 0o644 | 0o100000)
    os.link(f"{w}/a.dat", f"{w}/d/hard")
    os.symlink(f"{w}/a.dat", f"{w}/d/soft")
    os.readlink(f"{w}/d/soft")
    os.rename(f"{w}/d/hard", f"{w}/d/hard2")
    RENAME_NOREPLACE = 1
    assert libc.renameat2(AT_FDCWD, f"{w}/d/hard2".encode(), AT_FDCWD, f"{w}/d/hard3".encode(), RENAME_NOREPLACE) == 0

    class OpenHow(ctypes.Structure):
        _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]
    how = OpenHow(os.O_RDONLY, 0, 0)
    SYS_openat2 = 437
    fd2 = libc.syscall(SYS_openat2, AT_FDCWD, f"{w}/a.dat".encode(), ctypes.byref(how), ctypes.sizeof(how))
    assert fd2 >= 0
    os.close(fd2)

    for name in (f"{w}/d/node", f"{w}/d/hard3", f"{w}/d/soft"):
        os.unlink(name)
    os.rmdir(f"{w}/d")
    os.unlink(f"{w}/b.dat")
""")

# The calls this program makes on files, each of them one event.
FILE_CALLS = {
    "openat", "openat2", "close", "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv",
    "pwritev", "preadv2", "pwritev2", "lseek", "fsync", "fdatasync", "ftruncate", "truncate", "fallocate",
    "fadvise64", "flock",
    "fstat", "newfstatat", "statx", "fstatfs", "statfs", "access", "faccessat", "faccessat2",
    "fchmod", "chmod", "fchmodat", "fchown", "chown", "fchownat", "utimensat",
    "fsetxattr", "fgetxattr", "flistxattr", "fremovexattr", "setxattr", "getxattr", "listxattr", "removexattr",
    "lsetxattr", "lgetxattr", "llistxattr", "lremovexattr", "mmap", "copy_file_range", "sendfile",
    "mkdir", "getdents64", "mknodat", "mknod", "linkat", "link", "symlinkat", "symlink", "readlinkat",
    "readlink", "rename", "renameat", "renameat2", "unlink", "unlinkat", "rmdir",
}
# Calls that name a file but do no filesystem work of their own: descriptor bookkeeping.
BOOKKEEPING = {"fcntl", "dup", "dup2", "dup3", "chdir", "fchdir", "getcwd", "ioctl", "munmap", "execve"}

_CALL = re.compile(r"^\d+\s+[\d:.]+\s+(\w+)\((.*)\)\s+=\s+(-?\w+)")


def independent_counts(log: Path, work: Path) -> Counter[str]:
    """Completed calls per name whose arguments name the work directory."""
    counts: Counter[str] = Counter()
    for line in log.read_text(errors="replace").splitlines():
        match = _CALL.match(line)
        if match and str(work) in match.group(2) and not match.group(3).startswith("-"):
            counts[match.group(1)] += 1
    return counts


def test_every_call_on_a_file_is_one_event(tmp_path: Path) -> None:
    if shutil.which("strace") is None:
        pytest.fail("strace is missing; `make deps` installs it")
    work = tmp_path / "w"
    work.mkdir()
    log = tmp_path / "audit.strace"
    subprocess.run(["strace", "-f", "-tt", "-T", "-y", "-o", str(log), sys.executable, "-c", PROGRAM, str(work)],
                   check=True)
    theirs = independent_counts(log, work)
    unaudited = set(theirs) - FILE_CALLS - BOOKKEEPING
    assert not unaudited, f"calls on files this audit does not cover: {sorted(unaudited)}"

    events = read_events(ingest([log], tmp_path / "e.parquet").output).to_pandas()
    inside = events["file"].str.startswith(str(work)) | events["path2"].fillna("").str.startswith(str(work))
    ours = Counter(events[inside]["orig"])
    expected = {name: n for name, n in theirs.items() if name in FILE_CALLS}
    missing = {name: (ours.get(name, 0), n) for name, n in expected.items() if ours.get(name, 0) != n}
    assert not missing, f"events against the log's calls, (ours, theirs): {missing}"
    # The forms that once went missing are each in the log, so this test covers them.
    for name in ("utimensat", "statx", "fchownat", "fsetxattr", "openat2", "renameat2", "copy_file_range",
                 "sendfile", "fallocate", "ftruncate"):
        assert expected.get(name, 0) >= 1, f"{name} is not in the log: the program no longer exercises it"
    # A truncation keeps the length it leaves the file at: a replay cuts the file there, not to nothing.
    cut = events[inside & events["orig"].isin(["ftruncate", "truncate"])]
    assert dict(zip(cut["orig"], cut["size"])) == {"ftruncate": 16384, "truncate": 8192}

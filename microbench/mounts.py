"""What the kernel says is mounted and which loop device backs which image."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fsbm.microbench.system import require_program, run


@dataclass(frozen=True)
class Mount:
    mount_point: str
    fstype: str
    source: str
    options: str


def _unescape(field: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as octal (proc(5))."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def mounts() -> list[Mount]:
    """Every mount this process sees, from /proc/self/mountinfo."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) >= 6 and len(tail) >= 2:
            found.append(Mount(_unescape(fields[4]), tail[0], _unescape(tail[1]), fields[5]))
    return found


def mount_at(path: Path) -> Mount | None:
    """The topmost mount exactly at `path`, if any."""
    target = str(path.resolve())
    matches = [m for m in mounts() if m.mount_point == target]
    return matches[-1] if matches else None


def mount_containing(path: Path) -> Mount | None:
    """The mount `path` lies on: the topmost of those with the longest mount point above it."""
    target = path.resolve()
    above = [m for m in mounts() if target == Path(m.mount_point) or Path(m.mount_point) in target.parents]
    return max(above, key=lambda m: len(m.mount_point), default=None) if above else None


def loop_devices_for(image: Path) -> list[str]:
    """Loop devices currently backed by `image` (losetup -j)."""
    losetup = require_program("losetup", "util-linux")
    out = run([losetup, "-j", str(image)])
    # One line per device: "/dev/loop0: [65024]:9979690 (/path/image.img)"
    return [line.split(":", 1)[0] for line in out.splitlines() if line.startswith("/dev/")]

"""What else the machine did while a timed run ran: the counters the kernel keeps anyway,
read before and after the run, so watching costs the run nothing.

A validation's truth is a program's cold runtime on a loop image, and on a shared host the
same run can take twice as long from one minute to the next.  Whether that was the host
(time its hypervisor stole, a disk slow to write) or the filesystem itself (writeback it
started in the run) shows in these counters:

- the CPU time the hypervisor stole and the time every processor waited for I/O
  (/proc/stat's steal and iowait);
- what the machine's own disks read and wrote, how long their reads and writes waited,
  and how many cache flushes they made (/sys/block/*/stat of every disk backed by a
  device: a loop image's I/O reaches them too).  The same reads waiting twice as long in
  one run as in another is the device slower, not the filesystem;
- what the target's own block device wrote, discarded and flushed (its loop device), so
  that the disks' writes beyond it are someone else's, and a filesystem that commits more
  in one run than in another shows it;
- the dirty and writeback memory when the run began (/proc/meminfo);
- on btrfs, how much of the target's device was unallocated when the run began
  (/sys/fs/btrfs): with little left, btrfs reclaims metadata space by committing whole
  transactions while a program writes and syncs, and the same run takes longer.

Read where a counter cannot be (no such file, no loop device behind a mount), it is None.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from fsbm.microbench.mounts import mount_at

SECTOR = 512
MIB = 1 << 20
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_BLOCK = Path("/sys/block")

# Fields of /sys/block/<dev>/stat (Documentation/block/stat.rst).
_READ_SECTORS, _READ_TICKS_MS, _WRITE_SECTORS, _WRITE_TICKS_MS, _DISCARD_SECTORS, _FLUSHES = 2, 3, 6, 7, 13, 15


@dataclass(frozen=True)
class HostActivity:
    """What the machine did over one run (seconds, MiB, counts; None where unread)."""

    steal_s: float | None
    iowait_s: float | None
    disks_read_mib: float | None         # the machine's disks, a loop image's reads included
    disks_read_s: float | None           # summed over their reads: how long reads waited
    disks_written_mib: float | None      # the machine's disks, a loop image's writes included
    disks_write_s: float | None          # summed over their writes: how long writes waited
    disks_flushes: int | None
    target_written_mib: float | None     # the target's own block device
    target_discarded_mib: float | None
    target_flushes: int | None
    dirty_mib_before: float | None
    writeback_mib_before: float | None
    target_unallocated_mib_before: float | None = None  # btrfs only

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _cpu_ticks() -> tuple[int, int] | None:
    """/proc/stat's steal and iowait, summed over the processors, in ticks."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    if fields[0] != "cpu" or len(fields) < 9:
        return None
    return int(fields[8]), int(fields[5])


def _block_stat(name: str) -> list[int] | None:
    try:
        return [int(v) for v in (_BLOCK / name / "stat").read_text().split()]
    except (OSError, ValueError):
        return None


def _disks() -> list[str]:
    """The machine's own disks: block devices backed by a device (loop and ram ones are not)."""
    try:
        return sorted(p.name for p in _BLOCK.iterdir() if (p / "device").exists())
    except OSError:
        return []


def _meminfo_mib(*keys: str) -> list[float | None]:
    try:
        lines = Path("/proc/meminfo").read_text().splitlines()
    except OSError:
        return [None] * len(keys)
    found = {line.split(":")[0]: int(line.split()[1]) for line in lines if len(line.split()) >= 2}
    return [found[key] / 1024 if key in found else None for key in keys]


def block_device_of(mount: Path) -> str | None:
    """The block device (its /sys/block name, as "loop3") mounted at `mount`; None where the
    mount is none or has no device of its own (tmpfs)."""
    found = mount_at(mount)
    if found is None or not found.source.startswith("/dev/"):
        return None
    name = Path(found.source).name
    return name if (_BLOCK / name).exists() else None


def device_bytes_of(mount: Path) -> int | None:
    """The size of the block device mounted at `mount` (block_device_of); None where there is
    none or its size cannot be read."""
    device = block_device_of(mount)
    return _device_bytes(device) if device else None


def _device_bytes(device: str) -> int | None:
    """The size of block device `device` (a name under /sys/block); None where unreadable."""
    try:
        return int((_BLOCK / device / "size").read_text()) * SECTOR
    except (OSError, ValueError):
        return None


@dataclass(frozen=True)
class Counters:
    """The counters at one moment; `until_now` is what moved since."""

    cpu: tuple[int, int] | None
    disks: dict[str, list[int]]
    target_device: str | None
    target: list[int] | None
    dirty_mib: float | None
    writeback_mib: float | None
    unallocated_mib: float | None = None

    @classmethod
    def now(cls, mount: Path | None = None) -> "Counters":
        """The counters now, with those of the block device mounted at `mount` where given."""
        device = block_device_of(mount) if mount is not None else None
        disks = {name: stat for name in _disks() if (stat := _block_stat(name)) is not None}
        dirty, writeback = _meminfo_mib("Dirty", "Writeback")
        return cls(_cpu_ticks(), disks, device, _block_stat(device) if device else None, dirty, writeback,
                   btrfs_unallocated_mib(device) if device else None)

    def until_now(self) -> HostActivity:
        """What moved between these counters and now."""
        later = Counters.now()
        steal = iowait = None
        if self.cpu and later.cpu:
            steal, iowait = ((after - before) / _TICKS for after, before in zip(later.cpu, self.cpu))
        disks = [_moved(self.disks[n], later.disks[n]) for n in self.disks if n in later.disks]
        target = _moved(self.target, _block_stat(self.target_device) if self.target_device else None)

        def summed(field: int) -> int | None:
            return sum(d[field] for d in disks) if disks else None

        return HostActivity(steal, iowait, _mib(summed(_READ_SECTORS)), _seconds(summed(_READ_TICKS_MS)),
                            _mib(summed(_WRITE_SECTORS)), _seconds(summed(_WRITE_TICKS_MS)), summed(_FLUSHES),
                            _mib(target[_WRITE_SECTORS]) if target else None,
                            _mib(target[_DISCARD_SECTORS]) if target else None,
                            target[_FLUSHES] if target else None, self.dirty_mib, self.writeback_mib,
                            self.unallocated_mib)


def btrfs_unallocated_mib(device: str, root: Path = Path("/sys/fs/btrfs")) -> float | None:
    """How much of block device `device` (a name under /sys/block) the btrfs on it has not
    allocated to chunks: the device's size less what its data, metadata and system chunks
    take on disk (their disk_total, which counts a DUP chunk twice).  None where `device`
    holds no mounted btrfs of one device."""
    for fs in root.glob("*/devices"):
        if not (fs / device).exists():
            continue
        if len(list(fs.iterdir())) != 1:
            return None
        size = _device_bytes(device)
        try:
            taken = sum(int((fs.parent / "allocation" / kind / "disk_total").read_text())
                        for kind in ("data", "metadata", "system"))
        except (OSError, ValueError):
            return None
        return (size - taken) / MIB if size is not None else None
    return None


def _moved(before: list[int] | None, after: list[int] | None) -> list[int] | None:
    """A device's counters' moves from `before` to `after`, 0 for a field a kernel does not
    keep (older ones have no discard or flush fields)."""
    if before is None or after is None:
        return None
    width = max(len(before), len(after), _FLUSHES + 1)
    pad = [0] * width
    return [a - b for a, b in zip((after + pad)[:width], (before + pad)[:width])]


def _mib(sectors: int | None) -> float | None:
    return sectors * SECTOR / MIB if sectors is not None else None


def _seconds(ms: int | None) -> float | None:
    return ms / 1e3 if ms is not None else None

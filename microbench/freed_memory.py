"""Memory a virtual machine hands back to its host, held while fsbm measures.

A guest with virtio-balloon free page reporting tells its host which of its free pages the
host may take back, a few seconds after they were freed; the host unmaps them, and the next
use of such a page takes a fault in the host and a page zeroed there (3-8 us of system
time per 4 KiB where it was measured, depending on the hour).  A cold run starts
right after the caches were dropped: the memory the drop freed is still the guest's, and a
run that needs no more than that pays nothing, while one that needs more, or that starts
after a pause, pays for every page beyond it.  So one program's runs fall into two modes
(dd of 256 MiB with an fsync: 0.12 s, or 0.35 s with 0.25 s more system time), and which
one depends on what ran before it; a quick cost table's 1 MiB writes took 458-907 us on ext4
where held tables measured 161-169 us (docs/model-evidence.md, "Memory the guest hands back";
bench/freed_memory.py measures it).  No machine a filesystem is bought for does this.

`held` asks the kernel to keep freed memory from the host for a while (page_reporting's
`min_free_ms`, where the kernel has that setting), uses a block of memory once so that it
is the guest's, and puts the setting back when the measurement ends.  It changes a setting
of the whole machine, so fsbm does it only when asked (`--hold-freed-memory`); `state`
says in a measurement's record which of the three a run saw.
"""

from __future__ import annotations

import mmap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from fsbm.errors import FsbmError

PARAMETERS = Path("/sys/module/page_reporting/parameters")
VIRTIO_DEVICES = Path("/sys/bus/virtio/devices")
BALLOON_DEVICE = 0x0005  # virtio device id of a memory balloon
REPORTING_FEATURE = 5  # VIRTIO_BALLOON_F_REPORTING: the balloon takes free page reports
# How long a freed page stays the guest's before it is reported, while held: the most the
# kernel's setting accepts (5 minutes), far longer than any pause between two runs.
HOLD_MS = 300_000
# Memory used once when the hold starts, so that it is the guest's when a measurement needs it:
# several times a validation program's page cache (write-fsync's 256 MiB) or a quick table's
# data file (64 MiB; 256 MiB in a full one).
WARM_BYTES = 2 << 30
PAGE = 4096

REPORTED, HELD, NOT_REPORTED = "reported to the host", "held from the host", "not reported"


def reports_freed_memory(devices: Path = VIRTIO_DEVICES) -> bool:
    """Whether a virtio balloon with free page reporting is bound to a driver here."""
    for device in devices.glob("*"):
        try:
            kind = int((device / "device").read_text(), 16)
            features = (device / "features").read_text().strip()
        except (OSError, ValueError):
            continue
        if (kind == BALLOON_DEVICE and len(features) > REPORTING_FEATURE and features[REPORTING_FEATURE] == "1"
                and (device / "driver").exists()):
            return True
    return False


def _setting(parameters: Path) -> Path | None:
    knob = parameters / "min_free_ms"
    return knob if knob.exists() else None


def state(devices: Path = VIRTIO_DEVICES, parameters: Path = PARAMETERS) -> str:
    """What happens here to memory a run frees: not reported, reported to the host, or held."""
    if not reports_freed_memory(devices):
        return NOT_REPORTED
    knob = _setting(parameters)
    try:
        held_ms = int(knob.read_text()) if knob else 0
    except (OSError, ValueError):
        held_ms = 0
    return HELD if held_ms >= HOLD_MS else REPORTED


def use_once(size: int) -> None:
    """Write one byte of every page of `size` bytes of anonymous memory, then free it."""
    if size <= 0:
        return
    block = mmap.mmap(-1, size)
    try:
        for offset in range(0, size, PAGE):
            block[offset] = 1
    finally:
        block.close()


@contextmanager
def held(parameters: Path = PARAMETERS, warm_bytes: int = WARM_BYTES,
         warm: Callable[[int], None] = use_once) -> Iterator[None]:
    """Keep memory freed inside the block from the host (module docstring), then put the
    setting back as it was, however the block ends.  An error says why where the kernel has
    no such setting or it cannot be written (not root)."""
    knob = _setting(parameters)
    if knob is None:
        raise FsbmError(f"--hold-freed-memory: this kernel has no setting that holds freed memory "
                        f"({parameters / 'min_free_ms'} does not exist)")
    try:
        before = knob.read_text().strip()
        knob.write_text(str(HOLD_MS))
    except OSError as exc:
        raise FsbmError(f"--hold-freed-memory: cannot set {knob}: {exc.strerror or exc}") from None
    try:
        warm(warm_bytes)
        yield
    finally:
        knob.write_text(before)

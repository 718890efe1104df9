"""Scratch filesystems: loop images formatted, mounted and removed by fsbm alone.

A scratch filesystem lives in its own directory under the scratch root:
``image.img`` (the loop image; absent for tmpfs), ``mnt/`` (the mount point) and
``state.json``.  fsbm formats only an image file it has just created there (exclusive
create, and mkfs is pointed at the file, never at a device), so no mistake in a name
can format someone's disk.  Every step of creation registers its undo; an error,
Ctrl-C or SIGTERM part-way unwinds them in reverse, leaving no mount, loop device or
image behind.
"""

from __future__ import annotations

import json
import os
import re
import signal
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from fsbm.errors import FsbmError, UsageError, raise_terminated
from fsbm.locations import default_scratch_root
from fsbm.microbench.mounts import loop_devices_for, mount_at
from fsbm.microbench.system import require_program, run
from fsbm.units import readable_bytes

STATE_FILE = "state.json"
IMAGE_FILE = "image.img"
MOUNT_DIR = "mnt"

# mkfs program, Debian package, minimum image size (below it the mkfs refuses).
_FORMATTERS: dict[str, tuple[str, str, int]] = {
    "ext2": ("mkfs.ext2", "e2fsprogs", 8 << 20),
    "ext3": ("mkfs.ext3", "e2fsprogs", 8 << 20),
    "ext4": ("mkfs.ext4", "e2fsprogs", 8 << 20),
    "xfs": ("mkfs.xfs", "xfsprogs", 300 << 20),
    "btrfs": ("mkfs.btrfs", "btrfs-progs", 128 << 20),
}
FILESYSTEMS = tuple(_FORMATTERS) + ("tmpfs",)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+=,-]{0,63}$")
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """'2G', '512M', '1.5G', '1048576' -> bytes (powers of 1024)."""
    match = _SIZE.match(text.strip())
    if not match:
        raise UsageError(f"'{text}' is not a size; use e.g. 512M or 2G")
    scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[match.group(2).upper()]
    return int(float(match.group(1)) * scale)


@dataclass
class ScratchFs:
    """One scratch filesystem as recorded in its state.json."""

    name: str
    fstype: str
    size_bytes: int
    mkfs_opts: list[str]
    mount_opts: str
    directory: str
    created: str
    loop_device: str | None = None
    direct_io: bool = False
    aging_state: str = "fresh"
    status: str = field(default="unknown", compare=False)

    @property
    def mount_point(self) -> Path:
        return Path(self.directory) / MOUNT_DIR

    @property
    def image(self) -> Path | None:
        return None if self.fstype == "tmpfs" else Path(self.directory) / IMAGE_FILE

    @property
    def candidate(self) -> str:
        """A label that tells variants apart: 'ext4', 'ext4[data=journal]', 'btrfs[compress=zstd]'."""
        extras = [o for o in (" ".join(self.mkfs_opts), self.mount_opts) if o]
        return f"{self.fstype}[{'; '.join(extras)}]" if extras else self.fstype

    def to_json(self) -> dict[str, object]:
        body = asdict(self)
        body.pop("status")
        return body


def _scratch_root(root: Path | None) -> Path:
    """The scratch root: it must be a directory this user may write (created if missing)."""
    path = Path(root) if root is not None else default_scratch_root()
    if path.exists() and not path.is_dir():
        raise UsageError(f"scratch root {path} is not a directory")
    path.mkdir(parents=True, exist_ok=True)
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"scratch root {path} is not a directory this user may write")
    return path


def _require_root() -> None:
    if os.geteuid() != 0:
        raise FsbmError("scratch filesystems need root (losetup, mkfs and mount)", hint="run fsbm as root")


def _check_name(name: str) -> None:
    if not _NAME.match(name):
        raise UsageError(f"'{name}' is not a scratch filesystem name: use letters, digits and ._+=,- (at most 64)")


def _default_name(fstype: str, mkfs_opts: list[str], mount_opts: str, root: Path) -> str:
    base = fstype
    if mount_opts:
        base += "-" + re.sub(r"[^A-Za-z0-9._=+-]+", "_", mount_opts)[:40]
    if mkfs_opts:
        base += "-mkfs_" + re.sub(r"[^A-Za-z0-9._=+-]+", "_", "_".join(mkfs_opts))[:30]
    name, n = base, 2
    while (root / name).exists():
        name, n = f"{base}-{n}", n + 1
    return name


def _write_state(fs: ScratchFs) -> None:
    """state.json replaced atomically, so a crash never leaves half a record."""
    directory = Path(fs.directory)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".state-")
    with os.fdopen(fd, "w") as out:
        json.dump(fs.to_json(), out, indent=2)
    os.replace(tmp, directory / STATE_FILE)


@contextmanager
def _terminate_raises() -> Iterator[None]:
    """SIGTERM raises Terminated while a filesystem is being made, even for library callers."""
    previous = signal.signal(signal.SIGTERM, raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class _Undo:
    """Undo steps, run newest first when creation does not complete.  Each step is pushed
    before the action it undoes and does nothing where that action never happened, so a
    signal between an action and its push cannot leave the action undone; and the steps run
    with SIGINT and SIGTERM held back, so a second signal cannot cut the undoing short."""

    def __init__(self) -> None:
        self._steps: list[tuple[str, Callable[[], None]]] = []

    def push(self, what: str, step: Callable[[], None]) -> None:
        self._steps.append((what, step))

    def unwind(self) -> list[str]:
        problems = []
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            for what, step in reversed(self._steps):
                try:
                    step()
                except (FsbmError, OSError) as exc:
                    problems.append(f"{what}: {exc}")
            self._steps.clear()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        return problems


def _format_image(fs: ScratchFs) -> None:
    program, package, minimum = _FORMATTERS[fs.fstype]
    if fs.size_bytes < minimum:
        raise UsageError(f"{fs.fstype} needs at least {minimum >> 20} MiB; --size {readable_bytes(fs.size_bytes)} is too "
                         "small")
    mkfs = require_program(program, package)
    force = {"xfs": ["-f"], "btrfs": ["-f"]}.get(fs.fstype, ["-F"])
    quiet = ["-q"]
    run([mkfs, *force, *quiet, *fs.mkfs_opts, str(fs.image)])


def _attach(fs: ScratchFs, undo: _Undo) -> None:
    """Loop device (direct I/O, so cold reads reach the disk, not the host's cache) and mount.
    Their undo steps go first (_Undo): unwound, the mount goes, then the loop devices."""
    mount = require_program("mount", "mount")
    if fs.fstype == "tmpfs":
        undo.push("unmount", lambda: _unmount_if_mounted(fs.mount_point))
        options = f"size={fs.size_bytes}" + (f",{fs.mount_opts}" if fs.mount_opts else "")
        run([mount, "-t", "tmpfs", "-o", options, f"fsbm-{fs.name}", str(fs.mount_point)])
        return
    losetup = require_program("losetup", "util-linux")
    image = fs.image
    assert image is not None
    undo.push("detach the image's loop devices", lambda: _detach_all(image))
    undo.push("unmount", lambda: _unmount_if_mounted(fs.mount_point))
    try:
        device = run([losetup, "--find", "--show", "--direct-io=on", str(image)]).strip()
        fs.direct_io = True
    except FsbmError:
        device = run([losetup, "--find", "--show", str(image)]).strip()
        fs.direct_io = False
    fs.loop_device = device
    command = [mount, "-t", fs.fstype]
    if fs.mount_opts:
        command += ["-o", fs.mount_opts]
    run(command + [device, str(fs.mount_point)])


def _unmount_if_mounted(mount_point: Path) -> None:
    if mount_at(mount_point) is not None:
        run([require_program("umount", "mount"), str(mount_point)])


def _detach_all(image: Path) -> None:
    """Detach every loop device the image backs (whether or not fsbm learnt its name)."""
    if image.exists():
        losetup = require_program("losetup", "util-linux")
        for device in loop_devices_for(image):
            run([losetup, "-d", device])


def create(fstype: str, size: int, *, mkfs_opts: list[str] | None = None, mount_opts: str = "",
           name: str | None = None, root: Path | None = None) -> ScratchFs:
    """Create, format and mount a scratch filesystem; on any failure nothing is left behind."""
    if fstype not in FILESYSTEMS:
        raise UsageError(f"unknown filesystem '{fstype}'; choose one of {', '.join(FILESYSTEMS)}")
    base = _scratch_root(root)
    _require_root()
    mkfs_opts = list(mkfs_opts or [])
    if fstype == "tmpfs" and mkfs_opts:
        raise UsageError("tmpfs has no mkfs; pass its options with --mount-opts")
    name = name or _default_name(fstype, mkfs_opts, mount_opts, base)
    _check_name(name)
    fs = ScratchFs(name, fstype, size, mkfs_opts, mount_opts, str(base / name),
                   datetime.now(timezone.utc).isoformat(timespec="seconds"))

    def format_image(image: Path) -> None:
        os.truncate(image, size)
        _format_image(fs)

    return _build(fs, format_image)


def snapshot(name: str, new_name: str, root: Path | None = None) -> ScratchFs:
    """A copy of a scratch filesystem's image, mounted as a new scratch filesystem, so many
    runs can start from the same aged state.  The source is frozen (fsfreeze) while copied,
    so the copy is consistent; it keeps the source's aging state."""
    base = _scratch_root(root)
    _require_root()
    _check_name(new_name)
    source = get(name, root)
    if source.image is None:
        raise UsageError(f"{name} is tmpfs: it has no image to copy")
    mount_opts = source.mount_opts
    if source.fstype == "xfs":  # two xfs filesystems with one UUID mount only with nouuid
        mount_opts = ",".join(o for o in (mount_opts, "nouuid") if o)
    fs = ScratchFs(new_name, source.fstype, source.size_bytes, list(source.mkfs_opts), mount_opts,
                   str(base / new_name), datetime.now(timezone.utc).isoformat(timespec="seconds"),
                   aging_state=source.aging_state)
    cp = require_program("cp", "coreutils")
    fsfreeze = require_program("fsfreeze", "util-linux")
    frozen = source.status == "mounted"

    def copy_image(image: Path) -> None:
        if frozen:
            run([fsfreeze, "--freeze", str(source.mount_point)])
        try:
            run([cp, "--sparse=always", str(source.image), str(image)])
        finally:
            if frozen:
                run([fsfreeze, "--unfreeze", str(source.mount_point)])

    return _build(fs, copy_image)


def _build(fs: ScratchFs, make_image: Callable[[Path], None]) -> ScratchFs:
    """Directory, image (created empty and exclusively, then filled by make_image), loop
    device and mount, each step with its undo; on any failure nothing is left behind."""
    directory = Path(fs.directory)
    undo = _Undo()
    with _terminate_raises():
        try:
            try:
                directory.mkdir()
            except FileExistsError:
                raise UsageError(f"a scratch filesystem named '{fs.name}' exists; destroy it or pick "
                                 "another name") from None
            undo.push("remove directory", lambda: _remove_if_empty(directory))
            # Recorded from the start, so what a SIGKILL leaves is found by `fs destroy`.
            undo.push("remove its record", lambda: (directory / STATE_FILE).unlink(missing_ok=True))
            _write_state(fs)
            fs.mount_point.mkdir()
            undo.push("remove mount point", lambda: _remove_if_empty(fs.mount_point))
            if fs.image is not None:
                image = fs.image
                with open(image, "xb"):  # exclusive: fsbm formats only what it creates
                    pass
                undo.push("remove image", lambda: image.unlink(missing_ok=True))
                make_image(image)
            _attach(fs, undo)
            _write_state(fs)
        except BaseException as exc:
            problems = undo.unwind()
            if problems:
                raise FsbmError(f"creating {fs.name} failed ({exc}); cleanup also failed: "
                                f"{'; '.join(problems)}") from exc
            raise
    fs.status = "mounted"
    return fs


def _remove_if_empty(path: Path) -> None:
    try:
        path.rmdir()
    except FileNotFoundError:
        pass


def _load(directory: Path) -> ScratchFs:
    body = json.loads((directory / STATE_FILE).read_text())
    fs = ScratchFs(**body)
    fs.status = _status(fs)
    return fs


def _status(fs: ScratchFs) -> str:
    mounted = mount_at(fs.mount_point)
    if mounted is None:
        return "not mounted"
    if fs.fstype != "tmpfs" and fs.loop_device and mounted.source != fs.loop_device:
        return f"mounted from {mounted.source}, expected {fs.loop_device}"
    return "mounted"


def list_all(root: Path | None = None) -> list[ScratchFs]:
    """Every scratch filesystem under the root, with whether it is mounted now."""
    base = _scratch_root(root)
    found = []
    for directory in sorted(p for p in base.iterdir() if (p / STATE_FILE).is_file()):
        try:
            found.append(_load(directory))
        except (OSError, ValueError, TypeError) as exc:
            raise FsbmError(f"{directory / STATE_FILE} is damaged ({exc}); remove that directory by hand") from exc
    return found


def get(name: str, root: Path | None = None) -> ScratchFs:
    _check_name(name)
    directory = _scratch_root(root) / name
    if not (directory / STATE_FILE).is_file():
        known = ", ".join(fs.name for fs in list_all(root)) or "none"
        raise UsageError(f"no scratch filesystem named '{name}' (known: {known})")
    return _load(directory)


def find_by_path(path: Path, root: Path | None = None) -> ScratchFs | None:
    """The scratch filesystem whose mount point holds `path`, if any (to record its options)."""
    resolved = Path(path).resolve()
    for fs in list_all(root):
        if resolved == fs.mount_point or fs.mount_point in resolved.parents:
            return fs
    return None


def mount(name: str, root: Path | None = None) -> ScratchFs:
    """Re-attach and mount a scratch filesystem whose mount went away (e.g. after a reboot)."""
    _require_root()
    fs = get(name, root)
    if fs.status == "mounted":
        return fs
    undo = _Undo()
    with _terminate_raises():
        try:
            _attach(fs, undo)
            _write_state(fs)
        except BaseException:
            undo.unwind()
            raise
    fs.status = "mounted"
    return fs


def set_aging_state(name: str, aging_state: str, root: Path | None = None) -> None:
    fs = get(name, root)
    fs.aging_state = aging_state
    _write_state(fs)


def destroy(name: str, root: Path | None = None) -> None:
    """Unmount, detach and delete a scratch filesystem; only ever inside its own directory."""
    _require_root()
    fs = get(name, root)
    try:
        _unmount_if_mounted(fs.mount_point)
    except FsbmError as exc:
        raise FsbmError(f"cannot unmount {fs.mount_point}: {exc.message}",
                        hint="something is using it; close it (see `fuser -vm`) and retry") from exc
    if fs.image is not None:
        _detach_all(fs.image)
        fs.image.unlink(missing_ok=True)
    directory = Path(fs.directory)
    (directory / STATE_FILE).unlink(missing_ok=True)
    _remove_if_empty(fs.mount_point)
    _remove_if_empty(directory)

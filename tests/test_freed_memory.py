"""Holding freed memory from the host: how a reporting balloon is found, and that the kernel's
setting is held while measuring and put back however the measuring ends."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fsbm.errors import FsbmError
from fsbm.microbench import freed_memory
from tests.conftest import run_fsbm

pytestmark = pytest.mark.cores_shared

MIB = 1 << 20


def _virtio_device(devices: Path, name: str, kind: str, features: str, bound: bool = True) -> None:
    device = devices / name
    device.mkdir(parents=True)
    (device / "device").write_text(kind + "\n")
    (device / "features").write_text(features + "\n")
    if bound:
        (device / "driver").mkdir()


def test_a_balloon_that_takes_reports_is_found_among_other_devices(tmp_path: Path) -> None:
    devices = tmp_path / "devices"
    _virtio_device(devices, "virtio1", "0x0002", "0" * 5 + "1" + "0" * 58)  # a block device: bit 5 is its own
    assert not freed_memory.reports_freed_memory(devices)
    _virtio_device(devices, "virtio0", "0x0005", "0110010100" + "0" * 54)
    assert freed_memory.reports_freed_memory(devices)


def test_a_balloon_without_reporting_or_without_a_driver_reports_nothing(tmp_path: Path) -> None:
    devices = tmp_path / "devices"
    _virtio_device(devices, "virtio0", "0x0005", "0110000000" + "0" * 54)
    _virtio_device(devices, "virtio1", "0x0005", "0110010000" + "0" * 54, bound=False)
    assert not freed_memory.reports_freed_memory(devices)
    assert freed_memory.state(devices, tmp_path / "parameters") == freed_memory.NOT_REPORTED


def _parameters(tmp_path: Path, min_free_ms: str) -> Path:
    parameters = tmp_path / "parameters"
    parameters.mkdir()
    (parameters / "min_free_ms").write_text(min_free_ms + "\n")
    return parameters


def test_the_setting_is_held_inside_and_put_back_after(tmp_path: Path) -> None:
    devices = tmp_path / "devices"
    _virtio_device(devices, "virtio0", "0x0005", "0110010100" + "0" * 54)
    parameters = _parameters(tmp_path, "0")
    assert freed_memory.state(devices, parameters) == freed_memory.REPORTED
    used = []
    with freed_memory.held(parameters, warm_bytes=4 * MIB, warm=lambda size: used.append(size)):
        assert (parameters / "min_free_ms").read_text() == str(freed_memory.HOLD_MS)
        assert freed_memory.state(devices, parameters) == freed_memory.HELD
    assert used == [4 * MIB]
    assert (parameters / "min_free_ms").read_text() == "0"
    assert freed_memory.state(devices, parameters) == freed_memory.REPORTED


def test_the_setting_is_put_back_when_the_measuring_fails(tmp_path: Path) -> None:
    parameters = _parameters(tmp_path, "250")
    with pytest.raises(KeyboardInterrupt):
        with freed_memory.held(parameters, warm_bytes=MIB):
            raise KeyboardInterrupt
    assert (parameters / "min_free_ms").read_text() == "250"


def test_a_kernel_without_the_setting_is_told_not_changed(tmp_path: Path) -> None:
    parameters = tmp_path / "parameters"
    parameters.mkdir()
    (parameters / "page_reporting_order").write_text("9\n")
    with pytest.raises(FsbmError, match="no setting that holds freed memory"):
        with freed_memory.held(parameters):
            pass
    assert sorted(p.name for p in parameters.iterdir()) == ["page_reporting_order"]


def test_memory_is_used_once_page_by_page() -> None:
    freed_memory.use_once(8 * MIB)  # maps, writes and frees without error
    freed_memory.use_once(0)  # nothing to use: no mapping of no bytes


def test_this_kernels_setting_is_held_and_put_back() -> None:
    knob = freed_memory.PARAMETERS / "min_free_ms"
    if not knob.exists():
        pytest.skip("this kernel has no page_reporting min_free_ms setting")
    if os.geteuid() != 0:
        pytest.skip("needs root to write a kernel setting")
    before = knob.read_text().strip()
    with freed_memory.held(warm_bytes=16 * MIB):
        assert knob.read_text().strip() == str(freed_memory.HOLD_MS)
    assert knob.read_text().strip() == before


def test_a_command_that_times_nothing_neither_holds_nor_notes(fsbm_home: Path, tmp_path: Path) -> None:
    done = run_fsbm("trace", "record", "-o", str(tmp_path / "true.strace"), "--hold-freed-memory", "--", "true")
    assert done.returncode == 0, done.stderr
    assert "kept from the host" not in done.stdout and "hands the memory" not in done.stderr

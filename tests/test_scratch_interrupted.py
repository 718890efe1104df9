"""A test run interrupted by SIGTERM (a CI timeout, a cancelled job) still tears down its
scratch filesystems: no mount and no loop device is left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import REPO, require_root

HELD = '''
import time
from pathlib import Path

def test_holds_a_scratch_filesystem(ext4_fs, tmp_path):
    (Path("{marker}")).write_text(str(ext4_fs.mount_point))
    time.sleep(120)
'''


def test_sigterm_to_pytest_unmounts_the_running_tests_scratch_filesystem(tmp_path: Path) -> None:
    require_root()
    marker = tmp_path / "mounted-at"
    held = REPO / "tests" / f"test_held_{os.getpid()}.py"
    held.write_text(HELD.format(marker=marker))
    try:
        proc = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(held)], cwd=REPO,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True)
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert marker.exists(), proc.communicate(timeout=60)[0]
        mount_point = marker.read_text()
        assert mount_point in Path("/proc/mounts").read_text()
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    finally:
        held.unlink()
    assert mount_point not in Path("/proc/mounts").read_text(), out
    loops = subprocess.run(["losetup", "-l", "-n", "-O", "BACK-FILE"], capture_output=True, text=True).stdout
    assert str(Path(mount_point).parent) not in loops, loops

"""Where fsbm keeps what it owns: the results store and the scratch filesystems.

One data directory, ``$FSBM_HOME`` or the platform's user data directory, so a user can
find, back up or delete everything fsbm made in one place.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def data_dir() -> Path:
    """The data directory; created on first use."""
    configured = os.environ.get("FSBM_HOME")
    path = Path(configured) if configured else Path(platformdirs.user_data_dir("fsbm"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def default_store_path() -> Path:
    """``$FSBM_STORE`` if set, else ``fsbm.sqlite`` in the data directory."""
    configured = os.environ.get("FSBM_STORE")
    return Path(configured) if configured else data_dir() / "fsbm.sqlite"


def default_scratch_root() -> Path:
    """Where scratch filesystems (images and mount points) live."""
    return data_dir() / "scratch"


def native_binary(name: str, beside: Path) -> Path:
    """A native tool fsbm built: $FSBM_<NAME>, then `beside`/bin/<name>, then PATH.

    `beside` is the package folder whose Makefile builds it (microbench/, traces/).
    """
    import shutil

    from fsbm.errors import FsbmError

    configured = os.environ.get(f"FSBM_{name.upper().replace('-', '_')}")
    candidates = [Path(configured)] if configured else []
    candidates.append(Path(beside).resolve() / "bin" / name)
    on_path = shutil.which(name)
    if on_path:
        candidates.append(Path(on_path))
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise FsbmError(f"the {name} binary is not built", hint="run `make build` (or `make demo`)")

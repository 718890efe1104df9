"""Reading a document another store exported (`fsbm store import`): checked before it is kept.

A cost table measured on another machine is the usual case: imported under its name with
"@" and the exporting host appended, it stands beside this machine's table of the same
name instead of replacing it as the newest, and `fsbm compare ext4 ext4@other` sets them side
by side.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from fsbm.documents import Profile
from fsbm.errors import UsageError
from fsbm.predictor.cost_table import CostTable
from fsbm.store import DOCUMENT_KINDS, EXPORT_FORMAT, EXPORT_VERSION


@dataclass(frozen=True)
class ImportedDocument:
    kind: str
    body: dict[str, Any]
    stored_name: str | None


def check_import(path: Path) -> ImportedDocument:
    """The document in `path`, or a UsageError saying what in it is wrong."""
    try:
        doc = json.loads(path.read_text())
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise UsageError(f"{path} is not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT:
        raise UsageError(f"{path} is not a file of `fsbm store export` (no \"format\": \"{EXPORT_FORMAT}\")")
    if not isinstance(doc.get("version"), int) or doc["version"] > EXPORT_VERSION:
        raise UsageError(f"{path} has export version {doc.get('version')!r}; this fsbm reads up to {EXPORT_VERSION}")
    kind, body = doc.get("kind"), doc.get("body")
    if kind not in DOCUMENT_KINDS.values():
        raise UsageError(f"{path} holds a {kind!r}; the store keeps {', '.join(sorted(DOCUMENT_KINDS.values()))}")
    if not isinstance(body, dict):
        raise UsageError(f"{path}: \"body\" is not a JSON object")
    try:
        if kind == "cost_table":
            CostTable.from_json(body, str(path))
        elif kind == "profile":
            Profile.of(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UsageError(f"{path}: the {kind} is not valid at {'.'.join(map(str, first['loc']))}: {first['msg']}") \
            from None
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"{path}: the {kind} is not valid: {type(exc).__name__} {exc}") from None
    name, host = doc.get("name"), (doc.get("exported_from") or {}).get("host")
    return ImportedDocument(kind, body, f"{name}@{host}" if name and host else name)

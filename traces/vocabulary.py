"""DESIGN.md's operation vocabulary, and how NFS procedures map onto it.

The strace mapping (syscall -> operation) lives beside the parser that applies it, in
``traces/native/syscalls.c``'s descriptor table; the NFS mapping lives here.  Both use
exactly the names in OPERATIONS.
"""

from __future__ import annotations

OPERATIONS = (
    "open", "close", "create", "read", "write", "stat", "setattr", "readdir", "mkdir", "rmdir",
    "unlink", "rename", "link", "symlink", "readlink", "fsync", "seek", "mmap", "other",
)

# NFSv2/v3 procedures (and NFSv4 COMPOUND operations, by the same names where they exist).
NFS_OPERATIONS: dict[str, str] = {
    "NULL": "other",
    "GETATTR": "stat",
    "SETATTR": "setattr",
    "LOOKUP": "stat",
    "LOOKUPP": "stat",
    "ACCESS": "stat",
    "READLINK": "readlink",
    "READ": "read",
    "WRITE": "write",
    "CREATE": "create",
    "MKDIR": "mkdir",
    "SYMLINK": "symlink",
    "MKNOD": "create",
    "REMOVE": "unlink",
    "RMDIR": "rmdir",
    "RENAME": "rename",
    "LINK": "link",
    "READDIR": "readdir",
    "READDIRPLUS": "readdir",
    "FSSTAT": "other",
    "STATFS": "other",
    "FSINFO": "other",
    "PATHCONF": "other",
    "COMMIT": "fsync",
    "OPEN": "open",
    "OPEN_CONFIRM": "other",
    "OPEN_DOWNGRADE": "other",
    "CLOSE": "close",
    "VERIFY": "stat",
    "NVERIFY": "stat",
}

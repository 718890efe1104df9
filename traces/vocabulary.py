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

# The predictor's groups of operations: every priced line is in one (predictor/model.py),
# and the CPU time a replay measured by kind of operation (fsreplay --cpu-per-op) is added up
# by them, each of fsreplay's kinds in the group REPLAYED_GROUP names, any other in metadata.
GROUPS = ("metadata", "read", "write", "sync")
REPLAYED_GROUP = {"read": "read", "mmap": "read", "write": "write", "copy": "write", "fsync": "sync",
                  "fdatasync": "sync"}

# In-kernel copies: a write event of the destination, the source in path2.  A filesystem
# that shares extents clones instead of copying, so they are a class of their own (the
# characterizer) and replayed as copies (replay_plan).  sendfile never clones: a write.
COPY_CALLS = ("copy_file_range",)

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

# NFSv4 COMPOUND operations that only carry state between the real ones (which file, which
# session).  They are events (traces keep everything) but not workload operations: the
# characterizer leaves them out of Tang's percentages.
NFS4_PLUMBING = frozenset({
    "SEQUENCE", "PUTFH", "PUTROOTFH", "PUTPUBFH", "GETFH", "SAVEFH", "RESTOREFH", "RENEW",
    "EXCHANGE_ID", "CREATE_SESSION", "DESTROY_SESSION", "DESTROY_CLIENTID", "RECLAIM_COMPLETE",
    "SETCLIENTID", "SETCLIENTID_CONFIRM", "SECINFO", "SECINFO_NO_NAME", "BIND_CONN_TO_SESSION",
    "BACKCHANNEL_CTL", "FREE_STATEID", "TEST_STATEID", "RELEASE_LOCKOWNER", "ILLEGAL",
})


# Files that are no filesystem's data, by kind: devices, the kernel's own views, and the
# ends of pipes and sockets (as strace -y names a descriptor).  The characterizer leaves
# calls on them out of the workload; the replay plan leaves them out of the tree.
PSEUDO_FILES = (("devices (/dev)", ("/dev/",)), ("/proc", ("/proc/",)), ("/sys", ("/sys/",)),
                ("pipes and sockets", ("pipe:", "socket:", "anon_inode:")))
PSEUDO_DIRECTORIES = tuple(prefix for name, prefixes in PSEUDO_FILES if name != "pipes and sockets"
                           for prefix in prefixes)
PIPE_PREFIXES = dict(PSEUDO_FILES)["pipes and sockets"]

# An entry a READDIRPLUS reply returned with its attributes: a stat of its own (traces/nfs.py).
LISTED_ENTRY_ORIG = "NFS3.READDIRPLUS_ENTRY"

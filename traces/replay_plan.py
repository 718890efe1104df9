"""Events in, a replay plan out (DESIGN: Replay; Tang 5.4; ARTC's resource order).

The plan (format in microbench/src/plan.h) holds the tree the trace needs before it
starts, then its operations, each with the actor that made it, the open file it uses,
its real size and offset, the error the trace saw, the actor's think time before it, and
the earlier operation on the same file or directory by another actor it must follow.

Names: strace paths are kept, made relative to the target ("/home/a/f" -> "home/a/f");
descriptors whose file the trace never showed become "_unknown/fd-N-pid-P"; NFS file
handles become "_nfs/<handle>".  Nothing is made safe here by string checks: ".." and
absolute paths pass through, and fsreplay's openat2(RESOLVE_BENEATH) refuses them.
Events on pipes, sockets, /dev, /proc and /sys are left out, counted by reason.
An in-kernel copy (copy_file_range) is replayed as one, from its source's handle, so a
filesystem that shares extents clones it as it did traced (a write of the bytes there cost
xfs and btrfs what cp never paid, and left ext4's read of the source out); a copy from
outside the scope is replayed as the write of its bytes.
"""

from __future__ import annotations

import errno as errno_names
import os
import posixpath
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from fsbm.traces.vocabulary import COPY_CALLS, PIPE_PREFIXES, PSEUDO_DIRECTORIES

PSEUDO_PREFIXES = (*PSEUDO_DIRECTORIES, "/run/")  # and /run: sockets and pid files, no workload's data
NFS_ERRORS = {"NOENT": "ENOENT", "EXIST": "EEXIST", "NOTDIR": "ENOTDIR", "ISDIR": "EISDIR", "NOTEMPTY": "ENOTEMPTY",
              "ACCES": "EACCES", "PERM": "EPERM", "NOSPC": "ENOSPC", "NAMETOOLONG": "ENAMETOOLONG",
              "STALE": "ESTALE", "ROFS": "EROFS", "FBIG": "EFBIG", "DQUOT": "EDQUOT", "XDEV": "EXDEV"}
NAMESPACE_OPS = {"create", "unlink", "mkdir", "rmdir", "rename", "link", "symlink"}
# An NFS READDIRPLUS entry's attributes are its own, not a link's target's (traces/nfs.py).
LSTAT_CALLS = {"lstat", "lstat64", "readdirplus_entry"}
FD_STAT_CALLS = {"fstat", "fstat64", "fstatfs"}


@dataclass
class PlanStats:
    events: int = 0
    operations: int = 0
    implicit_opens: int = 0
    skipped: Counter = field(default_factory=Counter)
    tree_directories: int = 0
    tree_files: int = 0
    tree_links: int = 0
    tree_bytes: int = 0
    actors: int = 0


def replay_name(name: str, nfs: bool = False) -> str | None:
    """Where a traced file lives beneath the target; None for what is not a file to replay.
    Only an NFS event's file is a handle ("0x" and its hash, and names looked up beneath
    it): a strace name that merely looks like one ("2024", "cafe") keeps its place.  A
    trailing slash goes ("tree/.git/", as git init makes it, is the directory tree/.git):
    the replay names the last component to the call, and the tree has one entry per file.
    Repeated slashes and "." components are the kernel's no-ops ("/usr/lib//libfoo.so" is
    /usr/lib/libfoo.so) and go too.  A ".." that stays beneath the target is taken out with
    the component before it ("lib/../lib/crt1.o", as gcc names its files, is lib/crt1.o: the
    tree has no entry "lib/.."), as the kernel resolves it unless that component is a
    symlink; one that climbs above the target stays, for the replay's beneath-the-target
    rule to refuse."""
    if not name:
        return None
    if "//" in name or "/./" in name or name.endswith("/."):
        kept = "/".join(part for part in name.split("/") if part not in ("", "."))
        name = ("/" if name.startswith("/") else "") + (kept or ("" if name.startswith("/") else "."))
    if len(name) > 1 and name.endswith("/"):
        name = name.rstrip("/") or "/"
    if "/.." in name or name.startswith("../") or name == "..":
        name = _without_returns(name)
    if name.startswith("?fd="):
        return "_unknown/" + name[1:].replace("=", "-").replace("/", "-")
    if name.startswith("/"):
        if name.startswith(PSEUDO_PREFIXES) or name in ("/dev", "/proc", "/sys"):
            return None
        stripped = name.lstrip("/")
        return stripped or "."
    if nfs and name.startswith("0x"):
        return "_nfs/" + name
    if ":[" in name or name.startswith(PIPE_PREFIXES):
        return None
    return name  # relative as traced: fsreplay resolves it beneath the target, or refuses


def _without_returns(name: str) -> str:
    """`name` with each ".." taken out with the component before it; a relative name whose
    ".." climbs above its start, as it is."""
    absolute = name.startswith("/")
    kept: list[str] = []
    for part in name.split("/")[1:] if absolute else name.split("/"):
        if part != "..":
            kept.append(part)
        elif kept:
            kept.pop()
        elif not absolute:  # above where a relative name starts: hostile, for fsreplay to refuse
            return name      # (an absolute name's ".." at / stays at /, as the kernel's does)
    joined = "/".join(kept)
    return ("/" + joined) if name.startswith("/") else (joined or ".")


def errno_number(name: str | None) -> int:
    if not name:
        return 0
    if name.startswith("NFS"):
        name = NFS_ERRORS.get(name.split("ERR_", 1)[-1], "EIO")
    return getattr(errno_names, name, errno_names.EIO)


def _bytes_read(ret: int | None, asked: int) -> int:
    """How far into its file a successful read reached from its offset: the bytes it returned
    where the trace has them (a read short of what it asked met the end of the file), else
    the bytes it asked for.  Why not the larger of the two:
    grep asks for 96-144 KiB of every file, and its replay tree held each 5 KiB source as a
    144 KiB file: a cold replay read 80 MB where grep read 22 MB (0.17-0.20 s on ext4
    against grep's own 0.12-0.13 s)."""
    return ret if ret is not None and ret >= 0 else asked


def _escape(path: str) -> str:
    return path.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


@dataclass
class _Op:
    actor: int
    kind: str
    handle: int = -1
    flags: int = 0
    offset: int = -1
    size: int = 0
    errno: int = 0
    think: int = 0
    dep: int = -1
    timed: bool = True
    path: str = ""
    path2: str = ""


class PlanBuilder:
    """One pass over the events in trace order, then the tree and the flags."""

    def __init__(self, scoped: bool = False) -> None:
        self.scoped = scoped  # names are relative to a scope; absolute ones lie outside it
        self.ops: list[_Op] = []
        self.stats = PlanStats()
        self.actor_ids: dict[str, int] = {}
        self.current: dict[tuple[int, str], list[int]] = defaultdict(list)  # (actor, path) -> open handles
        self.handles = 0
        self.written: set[int] = set()
        self.listed: set[int] = set()
        self.last_end: dict[int, int] = {}
        self.last_on: dict[str, int] = {}
        self.first_use: dict[str, tuple[str, int, bool]] = {}  # path -> (op, errno, as destination)
        self.directories: set[str] = set()
        self.links: dict[str, str] = {}  # path -> the text its first successful readlink returned
        self.symlinks: set[str] = set()  # paths that are symbolic links just then, as far as the trace shows
        self.size: dict[str, int] = defaultdict(int)
        self.max_io = 4096

    def _actor(self, name: str) -> int:
        return self.actor_ids.setdefault(name, len(self.actor_ids))

    def _touch(self, path: str, op: str, err: int, destination: bool = False) -> None:
        self.first_use.setdefault(path, (op, err, destination))

    def _emit(self, op: _Op, resources: tuple[str, ...]) -> None:
        index = len(self.ops)
        deps = [self.last_on[r] for r in resources if r in self.last_on and self.ops[self.last_on[r]].actor != op.actor]
        op.dep = max(deps) if deps else -1
        for r in resources:
            self.last_on[r] = index
        if op.kind not in ("mmap", "copy"):  # the kernel moves these bytes: no buffer
            self.max_io = max(self.max_io, op.size)
        self.ops.append(op)

    def _handle_for(self, actor: int, path: str) -> int:
        """The actor's open handle on path; an untimed open first when the trace has none (NFS,
        or a descriptor opened before tracing began)."""
        stack = self.current[(actor, path)]
        if stack:
            return stack[-1]
        handle = self.handles
        self.handles += 1
        stack.append(handle)
        self.stats.implicit_opens += 1
        self._emit(_Op(actor, "open", handle=handle, timed=False, path=path), (path,))
        return handle

    def add(self, row: dict, ts: int | None, dur: int | None) -> None:
        self.stats.events += 1
        op, orig = row["op"], row["orig"] or ""
        if orig.startswith("NFS4.") and orig[5:] in {"SEQUENCE", "PUTFH", "PUTROOTFH", "GETFH", "SAVEFH", "RESTOREFH"}:
            self.stats.skipped["nfs4 state"] += 1
            return
        call = orig.rsplit(".", 1)[-1].lower()
        nfs = orig.startswith("NFS")
        path = replay_name(row["file"] or row["path"] or "", nfs)
        if path is None:
            self.stats.skipped["not a file (pipe, socket, /dev, /proc, /sys)"] += 1
            return
        actor = self._actor(row["actor"] or "?")
        err = errno_number(row["errno"])
        think = 0
        if ts is not None:
            if actor in self.last_end:
                think = max(0, ts - self.last_end[actor])
            self.last_end[actor] = ts + (dur or 0)
        base = dict(actor=actor, errno=err, think=think, path=path)
        size = row["size"] if row["size"] is not None and row["size"] >= 0 else 0
        if op == "write" and row["ret"] is not None and 0 <= row["ret"] < size:
            size = row["ret"]  # what was written; copy_file_range asks for "up to" an enormous length
        offset = row["offset"] if row["offset"] is not None and row["offset"] >= 0 else -1
        if op in ("open", "create"):
            self._touch(path, op, err)
            handle = -1
            if not err and not (nfs and op == "create"):
                handle = self.handles
                self.handles += 1
                self.current[(actor, path)].append(handle)
            flags = os.O_CREAT | os.O_RDWR if op == "create" else os.O_RDONLY
            if op == "create" and err == errno_names.EEXIST:
                flags |= os.O_EXCL
            if op == "open" and err == errno_names.ENOTDIR:
                # The trace keeps no flags, but an open of a file that failed "not a directory"
                # asked for one (O_DIRECTORY, as rsync and find probe every entry): replayed
                # without it, it would open the file.
                flags |= os.O_DIRECTORY
            self._emit(_Op(kind="open", handle=handle, flags=flags, **base), (path, posixpath.dirname(path)))
        elif op == "close":
            stack = self.current.get((actor, path))
            if not stack:
                self.stats.skipped["close of a file not opened in the trace"] += 1
                return
            self._emit(_Op(kind="close", handle=stack.pop(), **base), (path,))
        elif op == "write" and call in COPY_CALLS and (source := self._copy_source(row["path2"])) is not None:
            self._copy(path, source, offset, size, base)
        elif op in ("read", "write"):
            self._touch(path, op, err)
            handle = self._handle_for(actor, path)
            if op == "write":
                self.written.add(handle)
            if op == "read" and not err:
                self.size[path] = max(self.size[path], max(offset, 0) + _bytes_read(row["ret"], size))
            self._emit(_Op(kind=op, handle=handle, offset=offset, size=size, **base), (path,))
        elif op == "mmap":
            if err or size <= 0:
                self.stats.skipped["mmap that failed or mapped nothing"] += 1
                return
            self._touch(path, op, err)
            start = max(offset, 0)
            self.size[path] = max(self.size[path], start + size)
            self._emit(_Op(kind="mmap", handle=self._handle_for(actor, path), offset=start, size=size, **base),
                       (path,))
        elif op == "stat":
            self._touch(path, op, err)
            if call in FD_STAT_CALLS and self.current.get((actor, path)):
                self._emit(_Op(kind="fstat", handle=self.current[(actor, path)][-1], **base), (path,))
            else:
                # The trace keeps no AT_SYMLINK_NOFOLLOW: a stat of a link that succeeded is
                # replayed as one that cannot fail for a target not there yet (rsync makes a link,
                # then lstats it, before it makes what the link names).
                lstat = call in LSTAT_CALLS or (not err and path in self.symlinks)
                self._emit(_Op(kind="lstat" if lstat else "stat", **base), (path,))
        elif op == "readdir":
            self._touch(path, op, err)
            self.directories.add(path)
            stack = self.current.get((actor, path))
            if stack and not nfs:
                self.listed.add(stack[-1])
                self._emit(_Op(kind="getdents", handle=stack[-1], size=max(size, 4096), **base), (path,))
            else:
                self._emit(_Op(kind="readdir", **base), (path,))
        elif op == "fsync":
            handle = self._handle_for(actor, path)
            self._emit(_Op(kind="fdatasync" if call == "fdatasync" else "fsync", handle=handle, **base), (path,))
        elif op == "setattr":
            self._touch(path, op, err)
            truncating = "truncate" in call or (nfs and row["size"] is not None)
            if truncating and call.startswith("f") and self.current.get((actor, path)):
                self._emit(_Op(kind="ftruncate", handle=self.current[(actor, path)][-1], size=size, **base), (path,))
            else:
                self._emit(_Op(kind="truncate" if truncating else ("utimes" if "utime" in call else "chmod"),
                               size=size, **base), (path,))
        elif op in ("mkdir", "rmdir", "unlink", "readlink"):
            self._touch(path, op, err)
            if op == "readlink" and not err and row["path2"]:
                self.links.setdefault(path, row["path2"])
                self.symlinks.add(path)
            if op in ("unlink", "rmdir") and not err:
                self.symlinks.discard(path)
            if op in ("mkdir", "rmdir"):
                self.directories.add(path)
            self._emit(_Op(kind=op, **base), (path, posixpath.dirname(path)))
        elif op == "rename" and nfs:  # replayed files sit at their handles, which a rename keeps
            self.stats.skipped["NFS rename (the file keeps its handle, so its place)"] += 1
            return
        elif op in ("rename", "link", "symlink"):
            self._two_paths(op, row, path, base)
        else:
            self.stats.skipped[f"{op} (not replayed)"] += 1
            return
        self.stats.operations += 1

    def _copy_source(self, traced: str | None) -> str | None:
        """Where an in-kernel copy's source lives beneath the target, or None when the trace
        does not name it or it lies outside the scope (on another filesystem: the kernel read
        and wrote it there, and the replay writes the bytes)."""
        if not traced or (self.scoped and traced.startswith("/")):
            return None
        return replay_name(traced)

    def _copy(self, path: str, source: str, offset: int, size: int, base: dict) -> None:
        """copy_file_range from the source's open handle (its file position, as cp's copies
        use) to the destination's, so the replay's kernel clones where it can.  The source
        is assumed read where the destination is written, as a whole-file copy does."""
        err = base["errno"]
        self._touch(source, "read", err)
        self._touch(path, "write", err)
        handle, source_handle = self._handle_for(base["actor"], path), self._handle_for(base["actor"], source)
        self.written.add(handle)
        if not err:
            self.size[source] = max(self.size[source], max(offset, 0) + size)
        self._emit(_Op(kind="copy", handle=handle, flags=source_handle, offset=offset, size=size, path2=source,
                       **base), (path, source))

    def _two_paths(self, op: str, row: dict, path: str, base: dict) -> None:
        err = base["errno"]
        other = row["path2"] or ""
        if op == "symlink":  # path: the link made; path2: the text it holds (kept as traced)
            self._touch(path, op, err, destination=True)
            if not err:
                self.symlinks.add(path)
            self._emit(_Op(kind="symlink", **{**base, "path": other, "path2": path}),
                       (path, posixpath.dirname(path)))
            return
        target = replay_name(other)
        if target is None:
            self.stats.skipped[f"{op} to a pseudo file"] += 1
            return
        if op == "link":  # path: the new name; path2: the existing file
            self._touch(target, op, err)
            self._touch(path, op, err, destination=True)
            self._emit(_Op(kind="link", **{**base, "path": target, "path2": path}),
                       (target, path, posixpath.dirname(path)))
            return
        self._touch(path, op, err)
        self._touch(target, op, err, destination=True)
        if not err:
            if path in self.symlinks:
                self.symlinks.discard(path)
                self.symlinks.add(target)
            else:
                self.symlinks.discard(target)
        self._emit(_Op(kind="rename", **{**base, "path2": target}),
                   (path, target, posixpath.dirname(path), posixpath.dirname(target)))

    def finish_flags(self) -> None:
        for op in self.ops:
            if op.kind != "open" or op.handle < 0:
                continue
            if op.handle in self.listed or op.path in self.directories:
                op.flags = os.O_RDONLY | os.O_DIRECTORY
            elif op.handle in self.written:
                op.flags = (op.flags & ~os.O_ACCMODE) | os.O_RDWR

    def tree(self) -> list[tuple[str, int]]:
        """Tang 5.4: (path, size) for files and (path, -1) for directories present at the start
        (a symbolic link among them is a file here: tree_links says which)."""
        exists = {}
        for path, (op, err, destination) in self.first_use.items():
            made_here = (op in ("create", "mkdir") and err == 0) or destination
            exists[path] = not made_here and err != errno_names.ENOENT

        def ancestors(path: str) -> list[str]:
            out, parent = [], posixpath.dirname(path)
            while parent:
                out.append(parent)
                parent = posixpath.dirname(parent)
            return out

        present: dict[str, bool] = {}

        def present_at_start(path: str) -> bool:
            """Present unless made during the trace, or beneath something made during it;
            remembered per directory, so a path of d components costs d steps once, not d * d."""
            chain, walk = [], path
            while walk and walk not in present:
                chain.append(walk)
                walk = posixpath.dirname(walk)
            above = present.get(walk, True)
            for step in reversed(chain):
                above = present[step] = above and exists.get(step, True)
            return present.get(path, True)

        entries: dict[str, int] = {}
        for path in self.first_use:  # hostile ones ("..") are kept: fsreplay refuses them, and says so
            for parent in ancestors(path):
                if parent != "." and present_at_start(parent):
                    entries[parent] = -1
        for path in self.first_use:
            if path not in entries and path != "." and present_at_start(path):
                entries[path] = -1 if path in self.directories else self.size.get(path, 0)
        return sorted(entries.items(), key=lambda item: (item[0].count("/"), item[0]))

    def tree_links(self, tree: list[tuple[str, int]], parents: set[str]) -> dict[str, str]:
        """The entries of `tree` the trace read as symbolic links (a readlink that succeeded),
        with the text it read: made as links, so that an lstat or a readlink of one ends as
        traced.  One among `parents` (the tree holds something beneath it) stays a directory."""
        return {p: self.links[p] for p, size in tree if size >= 0 and p in self.links and p not in parents}


def within(table: pa.Table, scope: str) -> pa.Table:
    """The events on files beneath the directory `scope`, their names made relative to it, so
    the replay target stands for that directory (calls elsewhere, on libraries or headers,
    are on other filesystems and are not replayed)."""
    scope = scope.rstrip("/") or "/"
    if scope == "/":
        return table
    pattern = "^" + re.escape(scope) + "(/|$)"
    file = table["file"].cast(pa.string())
    table = table.filter(pc.fill_null(pc.match_substring_regex(file, pattern), False))
    for column in ("file", "path", "path2"):
        values = table[column].cast(pa.string())
        rebased = pc.replace_substring_regex(values, pattern, "")
        rebased = pc.if_else(pc.and_(pc.equal(rebased, ""), pc.match_substring_regex(values, pattern)), ".", rebased)
        table = table.set_column(table.schema.get_field_index(column), column, rebased)
    return table


def build_plan(table: pa.Table, scope: str | None = None) -> tuple[str, PlanStats]:
    """The plan text for an event table (of the events beneath `scope`), and what went into it."""
    builder = PlanBuilder(scoped=bool(scope) and scope.rstrip("/") != "")
    columns = ["seq", "ts", "dur", "actor", "op", "orig", "file", "path", "path2", "offset", "size", "ret", "errno"]
    data = within(table.select(columns), scope) if scope else table.select(columns)
    nfs = any(str(o).startswith("NFS") for o in data["orig"].unique().to_pylist())
    # NFS events are written when the reply comes; replay them in the order the calls went out.
    order = "ts" if nfs and data["ts"].null_count == 0 else "seq"
    data = data.sort_by([(order, "ascending"), ("seq", "ascending")])
    for batch in data.to_batches(max_chunksize=65536):
        rows = batch.to_pylist()
        for row in rows:
            builder.add(row, row["ts"], row["dur"])
    builder.finish_flags()
    tree = builder.tree()
    stats = builder.stats
    stats.actors = len(builder.actor_ids)
    stats.tree_directories = sum(1 for _, size in tree if size < 0)
    # A directory that holds another entry is made with it (fsreplay makes every missing
    # parent): writing only the others keeps a deep tree's making linear in its depth.
    parents = {posixpath.dirname(p) for p, _ in tree}
    links = builder.tree_links(tree, parents)
    stats.tree_links = len(links)
    stats.tree_files = len(tree) - stats.tree_directories - stats.tree_links
    stats.tree_bytes = sum(size for _, size in tree if size > 0)
    lines = ["fsbm-replay-plan\t1", f"actors\t{max(stats.actors, 1)}", f"handles\t{builder.handles}",
             f"maxio\t{builder.max_io}"]
    lines += [f"D\t{_escape(p)}" if size < 0 else
              f"L\t{_escape(links[p])}\t{_escape(p)}" if p in links else f"F\t{size}\t{_escape(p)}"
              for p, size in tree if size >= 0 or p not in parents]
    lines += [f"O\t{o.actor}\t{o.kind}\t{o.handle}\t{o.flags}\t0\t{o.offset}\t{o.size}\t{o.errno}\t{o.think}\t"
              f"{o.dep}\t{int(o.timed)}\t{_escape(o.path)}\t{_escape(o.path2)}" for o in builder.ops]
    return "\n".join(lines) + "\n", stats


def write_plan(table: pa.Table, output: Path, scope: str | None = None) -> PlanStats:
    text, stats = build_plan(table, scope)
    Path(output).write_text(text)
    return stats

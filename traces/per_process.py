"""strace -ff logs parsed a process group at a time, in parallel, into the table one parse gives.

`strace -ff -o LOG` writes LOG.<pid>, one log per process.  They are not independent: a child
starts with a copy of its parent's fd table and working directory, and a thread shares its
process's.  So the logs are parsed by **process group**, the processes that share an fd
table or a working directory (a process and its threads), in four steps:

1. **Clones.**  Every log's clone, fork and vfork calls (`strace2events --clones`) say which
   process made which, and whether the two share their tables: the groups, and the tree of
   forks between them.
2. **Groups.**  A group is parsed once the group that forked it is: that parse left the state
   the fork gave the child (traces/native/forks.h).  Groups are parsed in tasks of about
   1/16 of the logs' bytes (a task is one run of the parser, and a run of a shell script has
   thousands of one-process groups); no task holds a group with the group that forked it.
   Tasks whose parents are parsed run at the same time, on a pool of threads or on Dask
   workers.
3. **Shared offsets.**  An open file description inherited across a fork keeps one offset,
   which both sides move.  Each parse wrote every change of a shared description's offset,
   keyed by its line; replayed in key order, they give the offset of every read and write
   through it, as one parse of all the logs would.
4. **The join.**  Every event carries the key of the line that completed it: the groups'
   events sorted by it are in the order one parse of every log emits them, and are numbered
   in that order.  The sort holds the keys; the events are taken from the tasks' files a
   slice at a time.

The result equals the one-process parse (strace2events --logs) event for event.
"""

from __future__ import annotations

import tempfile
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, ThreadPoolExecutor, wait
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from fsbm.counts import added_stats
from fsbm.traces.errors import TraceParseError
from fsbm.traces.schema import EVENT_SCHEMA
from fsbm.traces.strace import ParseStats, ParserRun, per_pid_suffix, run_name, with_span, write_log_list

KEY_COLUMNS = ["key_ns", "key_line", "key_pid"]  # the key of the line that completed the event
KEYED_SCHEMA = pa.schema([*EVENT_SCHEMA, *(pa.field(name, pa.int64()) for name in KEY_COLUMNS)])
TASKS_PER_RUN = 16
JOIN_ROWS = 1 << 18
CLONES_SCHEMA = pa.schema([pa.field(name, pa.int64()) for name in ("parent", "child", "shares")])
OPS_COLUMNS = ["id", "key_ns", "key_line", "pid", "kind", "a", "b", "c", "seq"]
INT64_MAX = (1 << 63) - 1
# Kinds of rows in a shared-ops file (forks.h: enum shared_kind).
FROM, RW, POSITIONAL, SEEK, APPEND, ADVANCE = range(6)


@dataclass(frozen=True)
class ProcessGroup:
    """Processes that share an fd table or working directory, parsed together."""

    number: int
    logs: tuple[Path, ...]
    root: int                 # the process the others were cloned from
    parent: int | None        # the group whose fork made `root`; None for the run's first processes


@dataclass(frozen=True)
class ParseTask:
    """Process groups parsed in one run of the parser, none of them forked by another."""

    number: int
    groups: tuple[ProcessGroup, ...]
    after: tuple[int, ...]    # the tasks that parse the groups that forked these


@dataclass
class TaskParse:
    """What the parse of one task left: its events (with their keys) as an Arrow file, the
    changes it made to shared offsets, and its counts."""

    number: int
    events: Path
    ops: Path
    stats: ParseStats
    first_ns: int
    last_ns: int


@dataclass(frozen=True)
class TaskFailure:
    """A task's logs were not strace output where `position` says: carried back as a value,
    so a worker does not log it as a crash."""

    path: str
    position: int | None
    reason: str

    def error(self) -> TraceParseError:
        return TraceParseError(self.path, self.position, self.reason)


@dataclass
class ProcessTree:
    """The run's process groups, each after the group that forked it."""

    groups: list[ProcessGroup] = field(default_factory=list)

    def tasks(self, parts: int = TASKS_PER_RUN) -> list[ParseTask]:
        """The groups in tasks of about 1/parts of the logs' bytes each, in the tree's order."""
        size = {g.number: sum(log.stat().st_size for log in g.logs) for g in self.groups}
        target = sum(size.values()) / parts
        batches: list[list[ProcessGroup]] = [[]]
        held, numbers = 0, set()  # the current batch's bytes and groups
        for group in self.groups:
            if batches[-1] and (held >= target or group.parent in numbers):
                batches.append([])
                held, numbers = 0, set()
            batches[-1].append(group)
            held += size[group.number]
            numbers.add(group.number)
        task_of = {g.number: i for i, batch in enumerate(batches) for g in batch}
        return [ParseTask(i, tuple(batch), tuple(sorted({task_of[g.parent] for g in batch if g.parent is not None})))
                for i, batch in enumerate(batches) if batch]


def process_tree(logs: list[Path], work: Path, keep_going: bool = False) -> ProcessTree:
    """The process groups of an strace -ff run, from its logs' clone calls."""
    makers: dict[int, tuple[int, bool]] = {}  # child -> (parent, shares its tables)
    for parent, child, shares in _clones(logs, work, keep_going):
        makers.setdefault(child, (parent, shares))
    pids = {per_pid_suffix(log): log for log in logs}
    # A group's processes reach its root through sharing clones.
    def root_of(pid: int) -> int:
        seen = set()
        while pid in makers and makers[pid][1] and makers[pid][0] in pids and pid not in seen:
            seen.add(pid)
            pid = makers[pid][0]
        return pid

    members: dict[int, list[int]] = {}
    for pid in sorted(pids):
        members.setdefault(root_of(pid), []).append(pid)
    number = {root: i for i, root in enumerate(sorted(members))}
    groups = []
    for root, pids_in in members.items():
        maker = makers.get(root)
        parent = number[root_of(maker[0])] if maker and not maker[1] and maker[0] in pids else None
        groups.append(ProcessGroup(number[root], tuple(pids[p] for p in pids_in), root, parent))
    return ProcessTree(_after_parents(groups))


def _after_parents(groups: list[ProcessGroup]) -> list[ProcessGroup]:
    """The groups with each one after its parent (a parent lost to a cycle, which only reused
    pids could make, counts as none)."""
    by_number = {g.number: g for g in groups}
    children: dict[int | None, list[ProcessGroup]] = {}
    for g in groups:
        children.setdefault(g.parent if g.parent in by_number else None, []).append(g)
    ordered, queue = [], deque(children.get(None, []))
    while queue:
        g = queue.popleft()
        ordered.append(g)
        queue.extend(children.get(g.number, []))
    placed = {g.number for g in ordered}
    ordered += [ProcessGroup(g.number, g.logs, g.root, None) for g in groups if g.number not in placed]
    return ordered


def _clones(logs: list[Path], work: Path, keep_going: bool) -> Iterator[tuple[int, int, bool]]:
    """(parent, child, shares) for every process the logs' calls made."""
    run = ParserRun(["--clones", "--logs", str(write_log_list(logs, work / "logs"))], run_name(logs), CLONES_SCHEMA,
                    work / "clones.json", keep_going=keep_going, logs=logs)
    for batch in run:
        for parent, child, shares in zip(*(batch.column(c).to_pylist() for c in CLONES_SCHEMA.names)):
            yield parent, child, bool(shares)


def parse_task(task: ParseTask, work: Path, keep_going: bool,
               _after: list[TaskParse | TaskFailure] = ()) -> TaskParse | TaskFailure:
    """Parse one task's groups into work/events-N.arrow, each group's first process starting
    from the state its parent's parse left (work/forks/ROOT.state).  `_after` are the parses
    of the tasks it follows (on Dask, futures of them): if one failed, this does nothing."""
    for parse in _after:
        if isinstance(parse, TaskFailure):
            return parse
    try:
        return _parse_task(task, work, keep_going)
    except TraceParseError as exc:
        return TaskFailure(str(exc.path), exc.position, exc.reason)


def _parse_task(task: ParseTask, work: Path, keep_going: bool) -> TaskParse:
    n = task.number
    logs = [log for group in task.groups for log in group.logs]
    arguments = ["--logs", str(write_log_list(logs, work / f"logs-{n}")), "--keys", "--group", str(n),
                 "--forks-out", str(work / "forks"), "--shared-ops", str(work / f"ops-{n}.tsv")]
    states = [(g.root, work / "forks" / f"{g.root}.state") for g in task.groups]
    states = [(root, path) for root, path in states if path.exists()]
    if states:
        (work / f"states-{n}").write_text("".join(f"{root}\t{path}\n" for root, path in states))
        arguments += ["--states", str(work / f"states-{n}")]
    run = ParserRun(arguments, run_name(logs), KEYED_SCHEMA, work / f"stats-{n}.json", keep_going=keep_going, logs=logs)
    out = work / f"events-{n}.arrow"
    with pa.OSFile(str(out), "wb") as sink, pa.ipc.new_file(sink, KEYED_SCHEMA) as writer:
        for batch in run:
            writer.write_batch(batch)
    assert run.stats is not None
    return TaskParse(n, out, work / f"ops-{n}.tsv", run.stats, run.first_ns, run.last_ns)


Workers = Executor | Any  # a concurrent.futures executor, or a dask.distributed Client


def parse_groups(tree: ProcessTree, work: Path, workers: Workers, keep_going: bool) -> list[TaskParse]:
    """Every group parsed on `workers`, each once the group that forked it is."""
    (work / "forks").mkdir(exist_ok=True)
    tasks = tree.tasks()
    futures: dict[int, Any] = {}
    for task in tasks:
        futures[task.number] = _submit(workers, parse_task, task, work, keep_going,
                                       [futures[i] for i in task.after])
    try:
        parses = [futures[t.number].result() for t in tasks]
    except BaseException:
        _stop(workers, list(futures.values()))  # none is left writing into `work`
        raise
    for parse in parses:
        if isinstance(parse, TaskFailure):
            raise parse.error()
    return parses


def _stop(workers: Workers, futures: list[Any]) -> None:
    """Cancel what has not started and wait for what has."""
    if isinstance(workers, Executor):
        for future in futures:
            future.cancel()
        wait([f for f in futures if not f.cancelled()])
    else:
        workers.cancel(futures)


def _submit(workers: Workers, fn: Callable[..., TaskParse | TaskFailure], *args: Any) -> Any:
    """fn(*args) on `workers`; the last argument, a list of futures, is waited for first."""
    *given, after = args
    if isinstance(workers, Executor):
        # The pool takes work in the order given, and parents are given first: a task
        # waiting here waits for parses that have started.
        return workers.submit(lambda: fn(*given, [f.result() for f in after]))
    return workers.submit(fn, *given, after, pure=False)  # Dask passes the results


def shared_offsets(parses: list[TaskParse]) -> dict[int, dict[int, int]]:
    """The offsets of reads and writes through descriptions shared across groups, replayed in
    key order: {group: {event seq in that group: offset}}."""
    rows = []
    for parse in parses:
        if parse.ops.stat().st_size:
            ops = pacsv.read_csv(parse.ops, read_options=pacsv.ReadOptions(column_names=OPS_COLUMNS),
                                 parse_options=pacsv.ParseOptions(delimiter="\t"))
            rows.append(ops.append_column("group", pa.array(np.full(len(ops), parse.number)))
                        .append_column("row", pa.array(np.arange(len(ops)))))
    if not rows:
        return {}
    ops = pa.concat_tables(rows)
    ops = ops.take(pc.sort_indices(ops, [(c, "ascending") for c in ("key_ns", "key_line", "pid", "group", "row")]))
    state: dict[int, list[int]] = {}  # id -> [offset, end, append]
    patches: dict[int, dict[int, int]] = {}
    for i, kind, a, b, c, seq, group in zip(*(ops.column(c).to_pylist()
                                              for c in ("id", "kind", "a", "b", "c", "seq", "group"))):
        if kind == FROM:
            state.setdefault(i, [a, b, c])  # the first fork that shared it; later ones copy it
            continue
        st = state.get(i)
        if st is None:
            continue
        if kind == RW:
            off = st[1] if a and st[2] else st[0]
            if b > 0:
                st[0] = min(off + b, INT64_MAX)
                st[1] = max(st[1], st[0])
            if seq >= 0:
                patches.setdefault(group, {})[seq] = off
        elif kind == POSITIONAL and b > 0:
            st[1] = max(st[1], min(a + b, INT64_MAX))
        elif kind == SEEK:
            st[0] = a
        elif kind == APPEND:
            st[2] = a
        elif kind == ADVANCE:
            st[0] = min(st[0] + a, INT64_MAX)
    return patches


def joined(parses: list[TaskParse], patches: dict[int, dict[int, int]],
           rows_at_once: int = JOIN_ROWS) -> Iterator[pa.RecordBatch]:
    """The tasks' events in the order one parse of every log gives, numbered in it (a line
    completes at most one event, so its key orders the events).  The tasks' files are read
    memory-mapped and taken from a slice of the order at a time: what is held is every
    event's key (24 bytes) and one slice."""
    with ExitStack() as stack:
        tables = [pa.ipc.open_file(stack.enter_context(pa.memory_map(str(p.events)))).read_all() for p in parses]
        table = pa.concat_tables(tables) if tables else KEYED_SCHEMA.empty_table()
        order = np.lexsort([table.column(name).to_numpy() for name in reversed(KEY_COLUMNS)])
        # A task's rows are in its own seq order, from 0: the joined table's row of its event
        # seq s is the task's first row plus s.
        first_row = dict(zip((p.number for p in parses), np.cumsum([0] + [len(t) for t in tables])))
        patched = sorted((int(first_row[task]) + seq, offset) for task, by_seq in patches.items()
                         for seq, offset in by_seq.items())
        patched_rows = np.array([row for row, _ in patched], dtype=np.int64)
        patched_offsets = np.array([offset for _, offset in patched], dtype=np.int64)
        batches = table.to_batches()  # over the maps: a take from one copies only what it takes
        starts = np.cumsum([0] + [b.num_rows for b in batches])
        for start in range(0, len(order), rows_at_once):
            rows = order[start:start + rows_at_once]
            chunk = _taken(batches, starts, rows)
            if len(patched_rows):
                chunk = _with_offsets(chunk, rows, patched_rows, patched_offsets)
            chunk = chunk.set_column(0, "seq", pa.array(np.arange(start, start + len(rows), dtype=np.int64)))
            yield from chunk.cast(EVENT_SCHEMA).to_batches()


def _taken(batches: list[pa.RecordBatch], starts: np.ndarray, rows: np.ndarray) -> pa.Table:
    """The rows (of the batches one after another) in the order given, taken batch by batch:
    a take from a table of many chunks would first join them all into one."""
    which = np.searchsorted(starts, rows, side="right") - 1
    grouped = np.argsort(which, kind="stable")
    parts = [batches[which[run[0]]].take(pa.array(rows[run] - starts[which[run[0]]]))
             for run in np.split(grouped, np.flatnonzero(np.diff(which[grouped])) + 1) if len(run)]
    gathered = pa.Table.from_batches(parts).combine_chunks()
    back = np.empty(len(grouped), np.int64)
    back[grouped] = np.arange(len(grouped))
    return gathered.take(pa.array(back)).select(EVENT_SCHEMA.names)


def _with_offsets(chunk: pa.Table, rows: np.ndarray, patched_rows: np.ndarray,
                  patched_offsets: np.ndarray) -> pa.Table:
    """The chunk (the joined table's `rows`) with the replayed offsets of shared descriptions."""
    at = np.minimum(np.searchsorted(patched_rows, rows), len(patched_rows) - 1)
    hit = patched_rows[at] == rows
    if not hit.any():
        return chunk
    column = chunk.column("offset").combine_chunks()
    valid = column.is_valid().to_numpy(zero_copy_only=False)
    values = np.where(valid, column.to_numpy(zero_copy_only=False), 0).astype(np.int64)
    values[hit] = patched_offsets[at[hit]]
    valid[hit] = True
    return chunk.set_column(chunk.schema.get_field_index("offset"), "offset", pa.array(values, mask=~valid))


def joined_stats(parses: list[TaskParse]) -> ParseStats:
    """The counts of every group's parse added up; the timeline's span is the run's."""
    total = added_stats(ParseStats(), [parse.stats for parse in parses])
    timed = [p for p in parses if p.stats.timeline.get("calls")]
    if total.timeline and timed:
        with_span(total.timeline, max(p.last_ns for p in timed) - min(p.first_ns for p in timed))
    return total


class ProcessGroupsReader:
    """Event batches of an strace -ff run parsed a process group at a time on `workers`, or
    one group after another here for None (ingest's reader interface).  ``stats`` is set once
    ``batches()`` is exhausted."""

    def __init__(self, paths: list[Path], workers: Workers | None, *, keep_going: bool = False,
                 rows_at_once: int = JOIN_ROWS, scratch: Path | None = None) -> None:
        self.paths = [Path(p) for p in paths]
        self.scratch = scratch  # where the tasks' files go: a directory the workers see too
        self.rows_at_once = rows_at_once
        self.workers = workers
        self.keep_going = keep_going
        self.stats: ParseStats | None = None

    def batches(self) -> Iterator[pa.RecordBatch]:
        prefix = ".fsbm-strace-ff-" if self.scratch else "fsbm-strace-ff-"  # hidden beside the user's files
        with tempfile.TemporaryDirectory(prefix=prefix, dir=self.scratch) as tmp:
            work = Path(tmp)
            tree = process_tree(self.paths, work, self.keep_going)
            if self.workers is None:
                with ThreadPoolExecutor(1) as one:
                    parses = parse_groups(tree, work, one, self.keep_going)
            else:
                parses = parse_groups(tree, work, self.workers, self.keep_going)
            self.stats = joined_stats(parses)
            yield from joined(parses, shared_offsets(parses), self.rows_at_once)

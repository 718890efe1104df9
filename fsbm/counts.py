"""Counts kept as nested documents, added up: what merging two parses, or two partial
profiles, of one job does to the counts each kept."""

from __future__ import annotations

from itertools import zip_longest
from typing import Any, Iterable, TypeVar

Stats = TypeVar("Stats")


def added_counts(one: Any, other: Any) -> Any:
    """Two counts added up: numbers summed; lists (sums kept by cap, counts by bin) summed
    place by place; objects (counts by operation, by class) key by key, a key one side lacks
    counting as nothing there; and a flag (a recording's syncs skipped) holds where both say
    so, not counted; what neither side has (None) stays so."""
    if isinstance(one, dict) or isinstance(other, dict):
        one, other = one or {}, other or {}
        return {key: added_counts(one.get(key), other.get(key)) for key in {*one, *other}}
    if isinstance(one, (list, tuple)) or isinstance(other, (list, tuple)):
        return [added_counts(x, y) for x, y in zip_longest(one or (), other or ())]
    if one is None and other is None:
        return None
    if isinstance(one, bool) or isinstance(other, bool):
        return all(flag for flag in (one, other) if flag is not None)
    return (one or 0) + (other or 0)


def added_stats(total: Stats, parts: Iterable[object]) -> Stats:
    """Several parses' statistics added up into `total`, an empty statistics object of their
    kind: numbers summed, flags or-ed, the first five errors kept, nested counts (a timeline)
    added as added_counts does, and a named setting (the time origin) kept where one says it."""
    for part in parts:
        for name, value in vars(part).items():
            if isinstance(value, bool):
                setattr(total, name, getattr(total, name) or value)
            elif isinstance(value, int):
                setattr(total, name, getattr(total, name) + value)
            elif isinstance(value, list):
                setattr(total, name, (getattr(total, name) + value)[:5])
            elif isinstance(value, dict):
                setattr(total, name, added_counts(getattr(total, name), value))
            elif isinstance(value, str) and value != "none":
                setattr(total, name, value)
    return total

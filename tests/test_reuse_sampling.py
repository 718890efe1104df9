"""The reuse curve beyond the exact limit: a spatially hashed sample (SHARDS) whose error
against the exact curve is small and is reported beside it."""

from __future__ import annotations

import numpy as np
import pytest

from fsbm.characterizer import reuse
from fsbm.characterizer.reuse import References, reuse_curve, spatial_hashes
from fsbm.documents import Reuse
from fsbm.predictor.model import hit_fraction

# Times nothing and needs no loop device: may share the cores with another such test.
pytestmark = pytest.mark.cores_shared


def _hit_at(curve: dict, sizes: np.ndarray) -> np.ndarray:
    """The hit fraction a curve gives each cache size (in blocks), as the predictor reads it."""
    reuse = Reuse.model_validate(curve)
    return np.array([hit_fraction(reuse, int(size) * reuse.block_size) for size in sizes])


def _files_read_and_reread(rng: np.random.Generator, accesses: int) -> References:
    """Reads and writes of 1-15 blocks at random places in 2,000 files of 64 blocks."""
    return References(rng.integers(0, 2000, accesses), rng.integers(0, 64, accesses) * 4096,
                      rng.integers(1, 16, accesses) * 4096, rng.random(accesses) < 0.7)


def test_a_sampled_curve_is_within_a_hundredth_of_the_exact_one_and_says_its_error() -> None:
    refs = _files_read_and_reread(np.random.default_rng(3), 300_000)
    exact = reuse_curve(refs)
    sampled = reuse_curve(refs, exact_limit=0, budget=400_000)
    assert "sampling" not in exact
    sampling = sampled["sampling"]
    assert 0.15 < sampling["rate"] < 0.2 and sampling["block_references"] > 2_000_000
    assert sampling["sampled_references"] == pytest.approx(400_000, rel=0.1)
    sizes = np.array([p["cache_blocks"] for p in exact["points"]])
    assert sampled["points"][0]["cache_blocks"] * sampling["rate"] >= 1  # no cache smaller than it resolves
    sizes = sizes[sizes >= sampled["points"][0]["cache_blocks"]]
    error = np.abs(_hit_at(sampled, sizes) - _hit_at(exact, sizes))
    assert error.mean() <= 0.01
    assert 0 < sampling["hit_fraction_error"] < 0.02
    assert sampled["block_reads"] == exact["block_reads"]  # counted, not sampled
    assert sampled["distinct_blocks"] == pytest.approx(exact["distinct_blocks"], rel=0.05)
    assert sampled["first_reads"] == exact["first_reads"] == 2000
    Reuse.model_validate(sampled)  # the profile's document holds it


def test_a_block_is_in_a_sample_at_every_reference_or_at_none() -> None:
    keys = np.array([7, 1 << 41, 7, 99, 1 << 41], np.int64)
    hashed, other = spatial_hashes(keys, (1, 2))
    assert hashed[0] == hashed[2] and hashed[1] == hashed[4] and len(set(hashed.tolist())) == 3
    assert other[0] != hashed[0] and other[0] == other[2]


def test_an_access_of_more_blocks_than_a_chunk_is_cut_across_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    refs = References(np.array([0, 1, 0, 1]), np.array([0, 0, 4096, 8192]), np.array([40960, 4096, 4096, 81920]),
                      np.array([False, True, True, True]))
    whole = reuse_curve(refs)
    monkeypatch.setattr(reuse, "CHUNK_BLOCKS", 3)
    assert reuse_curve(refs) == whole
    assert whole["block_reads"] == 1 + 1 + 20 and whole["distinct_blocks"] == 10 + 1 + 20


def test_every_access_is_expanded_into_the_blocks_it_touches_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    # Offsets off block boundaries, accesses of one byte and of many blocks, cut into chunks
    # of 7 blocks: each block once, with its access and rank.
    rng = np.random.default_rng(11)
    refs = References(rng.integers(0, 5, 40), rng.integers(0, 1 << 20, 40), rng.integers(1, 40_000, 40),
                      rng.random(40) < 0.5)
    expected = [((int(f) << reuse.FILE_SHIFT) | block, bool(r), a, place)
                for a, (f, o, n, r) in enumerate(zip(refs.file, refs.offset, refs.length, refs.is_read))
                for place, block in enumerate(range(o // 4096, (o + n - 1) // 4096 + 1))]
    monkeypatch.setattr(reuse, "CHUNK_BLOCKS", 7)
    got = [row for [(keys, is_read, access, place)] in reuse._blocks(refs)
           for row in zip(keys.tolist(), is_read.tolist(), access.tolist(), place.tolist())]
    assert got == expected
    # A sample is those blocks whose hash under its seed falls below the threshold, each seed apart.
    seeds, threshold = (3, 4), 1 << 62
    kept = [[row for row in expected if spatial_hashes(np.array([row[0]], np.int64), (seed,))[0][0] < threshold]
            for seed in seeds]
    sampled: list[list[tuple]] = [[], []]
    for chunk in reuse._blocks(refs, seeds, threshold):
        for mine, (keys, is_read, access, place) in zip(sampled, chunk):
            mine.extend(zip(keys.tolist(), is_read.tolist(), access.tolist(), place.tolist()))
    assert sampled == kept and 0 < len(kept[0]) < len(expected) and kept[0] != kept[1]


def _splitmix(z: int) -> int:
    """splitmix64's finalizer in Python's integers, modulo 2**64."""
    m = (1 << 64) - 1
    z = (z + 0x9E3779B97F4A7C15) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return z ^ (z >> 31)


def test_a_blocks_hash_is_splitmix64_of_its_key_then_of_the_seed() -> None:
    keys = np.array([0, 1, (5 << 40) | 77, (1 << 62) + 3], np.int64)
    hashed = spatial_hashes(keys, (0x5EED_0001, 0x5EED_0002))
    for seed, row in zip((0x5EED_0001, 0x5EED_0002), hashed):
        assert row.tolist() == [_splitmix(_splitmix(int(k)) ^ seed) for k in keys]


def test_each_references_previous_one_to_the_same_key_is_found() -> None:
    keys = np.random.default_rng(5).integers(0, 50_000, 300_000).astype(np.int64) << 12
    order = np.argsort(keys, kind="stable")
    expected = np.full(len(keys), -1, np.int64)
    same = keys[order][1:] == keys[order][:-1]
    expected[order[1:][same]] = order[:-1][same]
    assert (reuse.previous_reference(keys) == expected).all()
    assert reuse.previous_reference(np.array([7, 7, 3, 7], np.int64)).tolist() == [-1, 0, -1, 1]

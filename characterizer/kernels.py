"""The characterizer's C kernels (characterizer/native), loaded once through ctypes."""

from __future__ import annotations

import ctypes
from functools import lru_cache
from pathlib import Path

from fsbm.locations import native_binary

_P = ctypes.c_void_p
_I64 = ctypes.c_int64
_I8 = ctypes.c_int8


@lru_cache(maxsize=1)
def library() -> ctypes.CDLL:
    lib = ctypes.CDLL(str(native_binary("libfsbm_characterizer.so", Path(__file__).parent)))
    lib.fsbm_stack_distances.argtypes = [_P, _I64, _P]
    lib.fsbm_stack_distances.restype = ctypes.c_int
    lib.fsbm_previous_reference.argtypes = [_P, _I64, _P]
    lib.fsbm_previous_reference.restype = ctypes.c_int
    lib.fsbm_member.argtypes = [_P, _I64, _P, _I64, _P]
    lib.fsbm_member.restype = ctypes.c_int
    lib.fsbm_sequence.argtypes = [_I64, _P, _P, _P, _P, _P, _P, _I64, _P, _P, _P, _P, _I8, _I8, _I8, _I8, _I64,
                                  _P, _P, _P, _P, _P, _P, _P]
    lib.fsbm_sequence.restype = _I64
    lib.fsbm_spatial_hashes.argtypes = [_P, _I64, _P, _I64, _P]
    lib.fsbm_spatial_hashes.restype = None
    lib.fsbm_blocks.argtypes = [_I64, _P, _P, _P, _I64, _I64, _P, _I64, _P, _I64, ctypes.c_uint64, _P, _P, _P, _P]
    lib.fsbm_blocks.restype = _I64
    lib.fsbm_block_totals.argtypes = [_I64, _P, _P, _P, _I64, _P]
    lib.fsbm_block_totals.restype = None
    lib.fsbm_data_accesses.argtypes = [_I64, _P, _I8, _I8, _P, _P, _P, _P, _P, _P]
    lib.fsbm_data_accesses.restype = _I64
    lib.fsbm_sync_kinds.argtypes = [_I64, _P, _P, _P, _P, _I64, _P, _P, _P, _P, _I8, _I8, _I8, _I8, _P, _P, _P, _P, _P,
                                    _P]
    lib.fsbm_sync_kinds.restype = _I64
    lib.fsbm_in_place.argtypes = [_I64, _P, _P, _P, _P, _I64, _P, _P, _P, _P, _P, _I8, _I8, _I8, _I8, _P]
    lib.fsbm_in_place.restype = _I64
    lib.fsbm_actor_times.argtypes = [_I64, _P, _P, _I64, _P, _P, _P, _P, _P]
    lib.fsbm_actor_times.restype = _I64
    lib.fsbm_significant_counts.argtypes = [_P, _I64, ctypes.c_int, _P]
    lib.fsbm_significant_counts.restype = _I64
    lib.fsbm_windows.argtypes = [_I64, _P, _I64, _P, _P, _I64, _I64, _P, _P, _P, _P, _P, _P]
    lib.fsbm_windows.restype = _I64
    lib.fsbm_data_classes.argtypes = [_I64, _P, _P, _P, _P, _I8, _P, _P, _P, _P, _P, _P, _I64,
                                      _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P]
    lib.fsbm_data_classes.restype = None
    lib.fsbm_ops.argtypes = [_I64, _P, _I64, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P]
    lib.fsbm_ops.restype = ctypes.c_int
    return lib

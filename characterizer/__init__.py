"""Workload characterizer: events into a workload profile (Tang 4.2; Darshan; Ellard; Mattson)."""

from fsbm.characterizer.characterize import characterize, characterize_file
from fsbm.characterizer.profile import Profile

__all__ = ["Profile", "characterize", "characterize_file"]

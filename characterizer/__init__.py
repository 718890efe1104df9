"""Workload characterizer: events into a workload profile (issue: characterizer)."""

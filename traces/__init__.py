"""Trace ingestion: strace logs and NFS captures into one event table (issue: trace ingestion)."""

"""The commands of `fsbm`, by what they work on (api/cli.py puts them together)."""

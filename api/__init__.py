"""The fsbm command line, the HTTP API and reports."""

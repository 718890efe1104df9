# fsbm: `make demo` runs the main job end to end; `make test` builds and runs every test.
# Both install what they need first (Debian packages, a virtualenv, the native tools).

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
FSBM := $(VENV)/bin/fsbm
STAMP := $(VENV)/.installed
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEBIAN_PACKAGES := e2fsprogs xfsprogs btrfs-progs util-linux mount fio strace tshark zlib1g-dev git sqlite3 make gcc chromium fonts-dejavu-core eatmydata rsync xz-utils ninja-build nfs-ganesha nfs-ganesha-vfs libnfs-utils rpcbind

.PHONY: all deps venv build test test-c test-py demo bench clean

PY_PACKAGES := fsbm microbench traces characterizer predictor api
PY_SOURCES := $(PY_PACKAGES) tests bench

all: build

# Only the packages that are missing, so a second run costs nothing and needs no network.
deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# uv installs the same packages as pip from the same index, downloading in parallel: 45 s here
# against pip's 100 s.  Compiled to bytecode as pip does, since a machine that sets
# PYTHONDONTWRITEBYTECODE (this one does) would otherwise compile every module in every process
# fsbm starts: 8-9 s of imports against 3.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check uv
	$(VENV)/bin/uv pip install -q --compile-bytecode --python $(PY) -e '.[dev]'
	touch $@

venv: $(STAMP)

# fsbm's own modules compiled too (an editable install leaves them to each process): a tenth
# of a second off every command's start where PYTHONDONTWRITEBYTECODE is set.
build: venv
	$(MAKE) -s -C microbench
	$(MAKE) -s -C traces/native
	$(MAKE) -s -C characterizer/native
	$(PY) -m compileall -q -j 0 $(PY_PACKAGES)

test-c: build
	$(MAKE) -s -C microbench check

# Tests whose assertions weigh times of filesystems and of the tracer, or look at the whole
# machine's page cache and loop devices, run first, one at a time on an otherwise idle machine.
# Then the tests that assert nothing on a time they measure run two at once, a file to a worker
# (scratch filesystems included: each test's are its own), the longest files first and the
# files of the served store on one worker (tests/conftest.py; xdist would put the files of most
# tests first).  Both halves share FSBM_TEST_CACHE: what is made once for every test (the
# tracing calibration, made on the first half's quiet cores; a capture's whole table).
test-py: build
	$(PY) -m pyflakes $(PY_SOURCES)
	cache=$$(mktemp -d -t fsbm-test-cache.XXXXXX) && trap 'rm -rf "$$cache"' EXIT && \
	  FSBM_TEST_CACHE=$$cache $(PY) -m pytest -m "not cores_shared" && \
	  FSBM_TEST_CACHE=$$cache $(PY) -m pytest -m cores_shared -n 2 --dist loadfile --no-loadscope-reorder

test: deps build test-c test-py

demo: deps build
	$(FSBM) demo

bench: deps build
	$(PY) bench/fsbench_vs_fio.py
	$(PY) bench/api.py

clean:
	$(MAKE) -s -C microbench clean
	$(MAKE) -s -C traces/native clean
	$(MAKE) -s -C characterizer/native clean
	rm -rf $(VENV) *.egg-info .pytest_cache
	find $(PY_SOURCES) -name __pycache__ -type d -prune -exec rm -rf {} +

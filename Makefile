# parsched: build, demo and test on a fresh machine (python3 >= 3.10, cargo, pip).
#   make demo   - build everything, then `parsched reproduce pools --quick` (writes results/pools)
#   make test   - cargo fmt/clippy/test (+ the runtime's privileged tests as root), ruff,
#                 pytest (two workers, then the real-machine tests alone)
#   make bench-bin - build the real benchmark program bench/bsp (needs a C compiler);
#                  `parsched reproduce desktop` also builds it on demand
#   make fuzz   - the input fuzzers for minutes: the SWF reader and batch machine on mutated
#                 real traces (PARSCHED_FUZZ_CASES, default 200000), the TOML/CSV/--set/
#                 dispatch-table parsers with hypothesis (PARSCHED_FUZZ_EXAMPLES, default
#                 3000); make test runs both briefly (a few hundred cases, seconds)
#   make mpi    - build libparsched_mpi.so for Open MPI and MPICH (target/mpi/<impl>/),
#                 installing them (Debian, as root) where missing
#   make docs   - the documentation site in build/site (mkdocs-material): the pages of
#                 docs/, the model pages from the configuration schema, the reproduction
#                 pages from `parsched reproduce ... --quick` outputs (build/docs-results,
#                 rerun when the code is newer), the CLI and Python references; warnings
#                 are errors and every link and image is checked (tools/docs_site.py)
#   make develop, make clean
# Idempotent: the venv, the Python dependencies and the extension build are
# redone only when their inputs change (stamp files under .venv/).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(BIN)):$(PATH)

DEPS_STAMP  := $(VENV)/.parsched-deps
TEST_STAMP  := $(VENV)/.parsched-test-deps
BUILD_STAMP := $(VENV)/.parsched-build
RUST_SRC    := Cargo.toml $(wildcard Cargo.lock) $(shell find crates -name '*.rs' -o -name Cargo.toml 2>/dev/null)
# What the demo (and the package) needs; the test and lint tools come with
# `make test` only.
PY_DEPS     := "maturin>=1.5,<2" numpy pandas matplotlib rich pyarrow scipy
# The documentation site (make docs; make test builds it and renders every page).
DOCS_DEPS   := "mkdocs>=1.6,<2" "mkdocs-material>=9.5,<10" "mkdocstrings-python>=1.10"
TEST_DEPS   := pytest pytest-xdist hypothesis ruff nbclient nbformat ipykernel "dask[distributed]" "gymnasium>=1.0" \
               $(DOCS_DEPS)

.PHONY: all demo test test-deps develop venv lint rust-test py-test clean bench-bin fuzz cc mpi mpi-deps docs

all: develop

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(DEPS_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(PY_DEPS)
	@touch $@

$(TEST_STAMP): $(DEPS_STAMP) Makefile
	$(BIN)/python -m pip install --quiet $(TEST_DEPS)
	@touch $@

$(BUILD_STAMP): $(DEPS_STAMP) $(RUST_SRC) pyproject.toml
	PIP_QUIET=1 $(BIN)/maturin develop --release --quiet
	@touch $@

venv: $(DEPS_STAMP)

test-deps: $(TEST_STAMP)

develop: $(BUILD_STAMP)

demo: develop
	$(BIN)/parsched reproduce pools --quick

bench-bin: ; $(MAKE) -C bench

# The runtime's privileged tests (#[ignore]d: root, cgroups) run only as root
# with a writable cgroup hierarchy; otherwise one line says they were not run.
# tools/check_msrv.py: the declared rust-version covers every dependency and is
# the msrv clippy's incompatible_msrv lint checks std use against.
# The runtime's tests build bench/*.c: a C compiler is installed where it is
# missing (Debian/Ubuntu, as root); elsewhere those tests fail saying why.
cc:
	@command -v cc >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing a C compiler (gcc) for the runtime's benchmark programs"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc libc6-dev >/dev/null; \
	  else \
	    echo "no C compiler (cc) and none can be installed here: the runtime tests that build bench/*.c will fail" >&2; \
	  fi; }

# The MPI profiling library (crates/parsched-runtime/mpi: libparsched_mpi.so
# and its test programs, for Open MPI and MPICH, under target/mpi/<impl>/).
# Debian's Open MPI, MPICH and gfortran are installed where missing (as root);
# elsewhere the MPI tests fail saying why.
mpi-deps:
	@{ command -v mpicc.openmpi && command -v mpicc.mpich && command -v mpif90.openmpi && command -v hpcc; } >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Open MPI, MPICH, gfortran and HPC Challenge (Debian) for the MPI library, its tests and reproduction"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openmpi-bin libopenmpi-dev mpich libmpich-dev gfortran hpcc >/dev/null; \
	  else \
	    echo "no MPI (mpicc.openmpi, mpicc.mpich) and none can be installed here: the MPI tests will fail" >&2; \
	  fi; }

mpi: mpi-deps cc
	@$(MAKE) -s -C crates/parsched-runtime/mpi
	@$(MAKE) -s -C crates/parsched-runtime/mpi hpcc

rust-test: cc mpi
	$(PYTHON) tools/check_msrv.py
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --quiet --no-deps --workspace --exclude parsched-py
	cargo test --workspace --release --exclude parsched-py
	sh crates/parsched-runtime/tests/privileged.sh --release

lint: test-deps
	$(BIN)/ruff check python tests tools

# Two processes for the tests that do not time real processes (one file per
# worker, so a file's session fixtures are built once); then, alone, the
# tests marked `serial` (tests/conftest.py: real jobs on this machine's CPUs).
py-test: develop test-deps cc mpi docs
	PARSCHED_DOCS_SITE=$(abspath build/site) $(BIN)/python -m pytest -q -n 2 --dist loadfile -m "not serial" tests
	$(BIN)/python -m pytest -q -m serial tests

test: rust-test lint py-test

docs: develop test-deps
	$(BIN)/python tools/docs_site.py

FUZZ_CASES    ?= 200000
FUZZ_EXAMPLES ?= 3000

fuzz: develop test-deps
	PARSCHED_FUZZ_CASES=$(FUZZ_CASES) cargo test --release -p parsched-sim --test integration fuzz_swf
	PARSCHED_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/python -m pytest -q tests/test_fuzz_inputs.py

clean:
	rm -rf $(DEPS_STAMP) $(TEST_STAMP) $(BUILD_STAMP) python/parsched/_core*.so results/pools build

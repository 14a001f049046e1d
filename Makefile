# The two commands of the README. Needs only Python 3.11+, pip and make.
# PYTHON and VENV select the interpreter and its environment; .ci/run's second
# leg runs `make test PYTHON=python3.13 VENV=.venv-latest` (newest releases).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test bench clean

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "sciax needs Python >= 3.11, found " + sys.version.split()[0])'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

# One resolve for sciax and its test extra (it also satisfies `demo`).
$(VENV)/.installed-test: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(VENV)/.installed $@

demo: $(VENV)/.installed
	$(BIN)/sciax demo

# pytest exits 5 when it collects no tests; make treats any non-zero exit as failure.
# Two workers (CI has 2 cores); whole files per worker so module-level compiled
# functions are shared by the tests that use them; in tests/conftest.py's order,
# longest files first (xdist's own reordering, by test count, is turned off).
test: $(VENV)/.installed-test
	$(BIN)/python --version
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder --durations=15

bench: $(VENV)/.installed-test
	$(BIN)/python benchmarks/ode_ensemble.py

clean:
	rm -rf .venv .venv-latest sciax-demo

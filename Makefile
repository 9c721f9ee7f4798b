# Two commands do everything on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo lint test test-fast bench clean docs docs-build

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch first, by exact version: on these machines that is the CPU build on local disk,
	# and the train extra's pin then installs nothing more (never a CUDA build).
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[test,demo,bench,train,lint,play,rllib,openspiel,torchrl]"
	# The docs site and the tutorial's runner: a dependency group (pip >= 25.1, upgraded above).
	$(PY) -m pip install -q --group docs
	# Compile the common kernels now, so that the first game does not (docs/environment.md).
	$(PY) -m qwixx_env.warm
	touch $(STAMP)

# Train a 2-player PPO bot from scratch and play it against the ladder (docs/training.md);
# the environment's own demo (random agents) is `$(PY) -m qwixx_env.demo`.
demo: $(STAMP)
	$(PY) -m qwixx_env.training.demo

# Style (ruff), the one-way import layers (import-linter's contracts in pyproject.toml) and
# types (pyright's basic rules over qwixx_env and training, as installed: .ci/typecheck).
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(PY) .ci/typecheck

# CI: lint, the docs site, then every test.
test: lint docs-build
	$(PY) -m pytest -q

# The documentation site (mkdocs.yml) into site/, --strict: a broken link, a missing page or an
# API reference that does not resolve fails (not --quiet: it hides the warnings --strict counts).
# NO_MKDOCS_2_WARNING: without it Material prints a banner about MkDocs' future on every build.
docs-build: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

# The site served locally at http://127.0.0.1:8000/qwixx_env/, rebuilt on every change.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve

# A developer's quick run: every test but those marked slow.
test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow"

bench: $(STAMP)
	$(PY) benchmarks/aec_speed.py
	$(PY) benchmarks/batched_speed.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis site .cache/mkdocs-jupyter

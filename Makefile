# Two commands do everything on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo lint test test-fast test-wheel test-lowest test-pythons test-integrations bench clean docs docs-build

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	# pip >= 25.1 installs pyproject's dependency groups (--group: the development tools)
	$(PY) -m pip install -q --upgrade "pip>=25.1"
	# torch first, by exact version: on these machines that is the CPU build on local disk,
	# and the train extra's range then installs nothing more (never a CUDA build).
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[all]" --group test --group lint --group bench
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

# CI: lint, the docs site, then every test, then the wheel and sdist as a user gets them.
test: lint docs-build
	$(PY) -m pytest -q
	$(MAKE) test-wheel

# Build the wheel and sdist, check them (twine), install the wheel into a fresh venv and run
# .ci/smoke_wheel.py from outside the tree, and a few tests from the unpacked sdist (.ci/test-wheel).
test-wheel: $(STAMP)
	.ci/test-wheel $(PY)

# The fast tests, and each extra's own, on the lowest declared versions of the core dependencies
# and of these extras, in one venv (Python 3.11; run by .ci/run after make test): the lower
# bounds in pyproject.toml are versions that were tested.
LOWEST_PYTHON ?= python3.11
LOWEST_EXTRAS ?= arena train play rllib
test-lowest:
	.ci/test-venv "$$(.ci/find-python $(LOWEST_PYTHON))" build/venv-lowest lowest $(LOWEST_EXTRAS)

# The fast tests on each CPython 3.10-3.13 found here (PATH or pyenv), the newest dependencies;
# a version not found is skipped with a message. The classifiers name the versions that pass.
test-pythons:
	.ci/test-pythons

# Each RL library integration (BenchMARL, AgileRL, Tianshou, PufferLib) against the real
# library, in a venv of its own (they cannot share one: .ci/test-integrations says why); run by
# .ci/run after make test. One of them: make test-integrations NAMES=agilerl
NAMES ?=
test-integrations:
	.ci/test-integrations $(NAMES)

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

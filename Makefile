# Two commands do everything on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[test,demo,bench]"
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m qwixx_env.demo

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) benchmarks/aec_speed.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis

# Docent: `make run` sets everything up and starts the product,
# `make test` sets everything up and runs the whole test suite.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMPS := $(VENV)/.stamps
NATIVE_SRC := $(shell find native/src -name '*.rs' 2>/dev/null) native/Cargo.toml native/Cargo.lock native/pyproject.toml native/docent_native.pyi
DOCS ?=
INDEX ?= default

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: setup run test test-rust test-python clean-venv

setup: $(STAMPS)/requirements $(STAMPS)/native

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip==26.3

$(STAMPS)/requirements: requirements.txt | $(VENV)/bin/python
	$(PIP) install --quiet -r requirements.txt
	@mkdir -p $(STAMPS) && touch $@

# The native extension is rebuilt whenever its sources change.
$(STAMPS)/native: $(NATIVE_SRC) $(STAMPS)/requirements
	PATH="$(abspath $(VENV))/bin:$$PATH" $(PIP) install --quiet --no-build-isolation --force-reinstall --no-deps ./native
	@mkdir -p $(STAMPS) && touch $@

run: setup
	@if [ -n "$(DOCS)" ]; then \
		$(PY) -m rag_system index "$(DOCS)" --index "$(INDEX)"; \
	else \
		echo "Docent engine is installed. Index a folder with:"; \
		echo "  make run DOCS=<folder> INDEX=<name>"; \
		echo "or: $(PY) -m rag_system index <folder> --index <name> --json"; \
	fi

test: setup test-rust test-python

test-rust:
	cd native && cargo test --quiet

# pytest exits 5 when it collected nothing: a suite that runs no test is a failure here.
test-python:
	@$(PY) -m pytest -q; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests" >&2; exit 1; fi; exit $$rc

clean-venv:
	rm -rf $(VENV)

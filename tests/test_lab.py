"""The CPU lab's parts: problems and hints, the tokenizer, the policy, cached pre-training, the collapse
on the hard level and the rescue by a hint."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mentor.lab import addition, data
from mentor.tasks import arithmetic

ROOT = Path(__file__).resolve().parents[1]
# The lab policy at its default budget lives in the shared, key-addressed cache (the one `mentor demo`
# uses): the first run on a machine pre-trains it (about 2.5 min on an idle core), later runs load it.
LAB_CACHE = Path(os.environ.get("MENTOR_LAB_CACHE", ROOT / ".cache" / "mentor-lab"))
# A tiny budget, for the tests of the training loop and the cache themselves.
TINY_HP = dict(steps=12, batch_size=16, warmup_steps=2, model={"hidden_size": 32, "intermediate_size": 64,
                                                               "num_hidden_layers": 1})


# --- problems, formats, reward -----------------------------------------------------------------------

def test_formats_and_answers():
    row = addition.make_row(23, 45)
    assert row == {"prompt": "Q: 023+045=? A:", "answer": "0068", "operands": [23, 45],
                   "problem_id": "add-023-045", "level": "easy"}
    assert addition.make_row(999, 999)["answer"] == "1998"
    assert arithmetic.hint_prompt(row["prompt"], "00") == "Hint: 00\nQ: 023+045=? A:"
    assert arithmetic.remove_hint(arithmetic.hint_prompt(row["prompt"], "the answer starts with 00")) == row["prompt"]
    assert arithmetic.hint_prompt(row["prompt"], "  ") == row["prompt"]
    assert arithmetic.prefix_prompt(row["prompt"], "00") == "Q: 023+045=? A: 00"
    assert arithmetic.partial_answer_hint("0579", 2) == "05"
    with pytest.raises(ValueError):
        arithmetic.partial_answer_hint("0579", 4)  # the whole answer is never a hint


@pytest.mark.parametrize("completion,expected", [(" 0068", 1.0), ("0068", 1.0), (" 0068\nQ", 1.0), (" 00681", 0.0),
                                                 (" 0067", 0.0), (" 068", 0.0), ("", 0.0), (" 00 68", 0.0)])
def test_reward(completion, expected):
    assert arithmetic.reward(completion, "0068") == expected


def test_generators_are_deterministic_and_splits_disjoint():
    a = data.generate_problems("hard", 300, seed=3, split="train")
    assert a == data.generate_problems("hard", 300, seed=3, split="train")
    assert a != data.generate_problems("hard", 300, seed=4, split="train")
    held = data.generate_problems("hard", 300, seed=3, split="heldout")
    assert not {r["problem_id"] for r in a} & {r["problem_id"] for r in held}
    assert len({r["problem_id"] for r in a}) == 300
    assert all(100 <= x <= 999 for r in a + held for x in r["operands"])
    assert all(addition.split_of(*r["operands"]) == "heldout" for r in held)
    easy = data.generate_problems("easy", 2000, seed=0, split="all")
    assert all(0 <= x <= 99 for r in easy for x in r["operands"]) and len({r["problem_id"] for r in easy}) == 2000
    assert all(len(r["prompt"]) == 15 for r in easy + a)  # fixed width
    with pytest.raises(ValueError):
        data.generate_problems("easy", 20000, split="all")


def test_make_dataset():
    ds = data.make_dataset("hard", 16, seed=0, split="heldout")
    assert ds.column_names == ["prompt", "answer", "operands", "problem_id", "level"]
    assert len(ds) == 16 and isinstance(ds[0]["prompt"], str) and ds[0]["level"] == "hard"
    chains = data.make_dataset("hard", 16, seed=0, split="heldout", lab="composed")
    assert chains.column_names == ["prompt", "answer", "digits", "ops", "problem_id", "level"]
    assert len(data.make_dataset(split="all", lab="composed")) == 4000  # the composed lab's own default size
    with pytest.raises(ValueError, match="unknown lab 'subtraction'"):
        data.generate_problems("hard", 4, lab="subtraction")


# --- tokenizer and policy ----------------------------------------------------------------------------

def test_tokenizer_round_trip(tmp_path):
    from transformers import AutoTokenizer

    from mentor.lab.tokenizer import build_tokenizer

    tok = build_tokenizer()
    text = arithmetic.hint_prompt("Q: 123+456=? A:", "the answer starts with 05") + " 0579"
    ids = tok(text).input_ids
    assert len(ids) == len(text) and tok.unk_token_id not in ids  # one token per character
    assert tok.decode(ids) == text
    tok.save_pretrained(tmp_path)
    tok2 = AutoTokenizer.from_pretrained(tmp_path)
    assert tok2(text).input_ids == ids and tok2.decode(ids) == text
    assert (tok2.pad_token, tok2.eos_token, tok2.bos_token) == ("<pad>", "</s>", "<s>")
    assert tok2.padding_side == "left"
    chat = [{"role": "user", "content": "Q: 023+045=? A:"}]
    assert tok2.apply_chat_template(chat, tokenize=False, add_generation_prompt=True) == "Q: 023+045=? A:"
    chat.append({"role": "assistant", "content": " 0068"})
    assert tok2.apply_chat_template(chat, tokenize=False) == "Q: 023+045=? A: 0068</s>"


def test_policy_is_small_and_seeded():
    import torch

    from mentor.lab.model import build_policy

    m1, tok = build_policy(0)
    m2, _ = build_policy(0)
    m3, _ = build_policy(1)
    n = sum(p.numel() for p in m1.parameters())
    assert 0.5e6 < n < 1.2e6
    assert m1.config.vocab_size == len(tok)
    assert all(torch.equal(a, b) for a, b in zip(m1.parameters(), m2.parameters()))
    assert not all(torch.equal(a, b) for a, b in zip(m1.parameters(), m3.parameters()))


def test_cache_key_covers_what_changes_the_weights(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "experiments"))  # the mask probe's rows: experiments/mask_rows.py
    from mask_rows import MaskRows
    from mentor.lab.pretrain import cache_key

    base = cache_key(0)
    assert base == cache_key(0, steps=1200, tail_share=0.35)  # the defaults, spelled out
    assert base != cache_key(0, **TINY_HP)
    assert base == cache_key(0)
    assert base != cache_key(1)
    assert base != cache_key(0, lr=1e-3)
    assert base != cache_key(0, hint_share=0.0)
    assert base != cache_key(0, tail_start=0)
    assert base != cache_key(0, model={"intermediate_size": 256})
    assert base == cache_key(0, extra=MaskRows(mask_share=0.0, tail_mask_share=0.0))  # the probe's rows, off
    assert base != cache_key(0, extra=MaskRows(mask_share=0.15)) != cache_key(0, extra=MaskRows(0.15, 0.5))
    with pytest.raises(TypeError):
        cache_key(0, learning_rate=1e-3)
    with pytest.raises(ValueError, match="tail_given"):
        cache_key(0, tail_given=[1, 2])
    # The two labs share the cache, each under keys of its own; a lab the code does not know is refused by name.
    assert cache_key(0, lab="composed") != base and cache_key(0, lab="composed") == cache_key(0, lab="composed")
    with pytest.raises(TypeError, match="unknown pre-training hyper-parameter"):
        cache_key(0, lab="composed", tail_share=0.35)  # an addition-lab knob
    with pytest.raises(ValueError, match="unknown lab 'subtraction'"):
        cache_key(0, lab="subtraction")


def test_a_cached_policy_is_keyed_by_the_cpu_kernels_that_trained_it():
    import subprocess
    import sys

    from mentor.lab.environment import kernels
    from mentor.lab.pretrain import cache_key

    # Torch's scalar kernels, forced in a fresh process, are recorded and key another cache entry; the committed
    # checkpoint's key (no versions) stays the one any machine loads.
    code = ("import json; from mentor.lab.environment import kernels; from mentor.lab.pretrain import cache_key; "
            "print(json.dumps([kernels(), cache_key(0), cache_key(0, versions=False)]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                          env={**os.environ, "ATEN_CPU_CAPABILITY": "default"})
    there, key, weights_key = json.loads(done.stdout.splitlines()[-1])
    assert there == {**kernels(), "cpu_capability": "DEFAULT"} and weights_key == cache_key(0, versions=False)
    assert (key == cache_key(0)) == (kernels()["cpu_capability"] == "DEFAULT")


def test_tail_rows_never_show_or_train_a_hard_sums_leading_digits():
    import random

    from mentor.lab.addition import PRETRAIN_DEFAULTS, training_rows
    from mentor.lab.pretrain import _batch
    from mentor.lab.tokenizer import build_tokenizer

    hp = {**PRETRAIN_DEFAULTS, "tail_share": 0.5, "tail_start": 10}
    sample = training_rows(hp, random.Random(0))
    assert all(not _is_hard(p) for p in sample(200, step=9)[0])  # no tail rows before tail_start
    prompts, completions, ends, given = sample(2000, step=10)
    tail = [(p, c, g) for p, c, g in zip(prompts, completions, given) if _is_hard(p)]
    assert 800 < len(tail) < 1200
    true_lead = 0
    for prompt, completion, g in tail:
        a, b = map(int, prompt[3:10].split("+"))
        answer = arithmetic.format_answer(a, b)
        assert g in (3, 4) and completion[g:] == answer[g - 1:]  # the trained part is the true tens/units
        true_lead += completion[1:3] == answer[:2]
    assert true_lead / len(tail) < 0.05  # the given leading digits are random, not the true ones
    tok = build_tokenizer()
    _, _, labels = _batch(tok, prompts[:64], completions[:64], ends[:64], given[:64])
    for row, (p, c, g, end) in enumerate(zip(prompts[:64], completions[:64], given[:64], ends[:64])):
        assert int((labels[row] != -100).sum()) == len(c) - g + end  # loss only after the given characters


def test_mask_rows_teach_copying_one_digit_and_never_a_hard_sum(monkeypatch):
    import random

    monkeypatch.syspath_prepend(str(ROOT / "experiments"))
    from mask_rows import MaskRows
    from mentor.lab.addition import PRETRAIN_DEFAULTS, training_rows

    sample = training_rows(PRETRAIN_DEFAULTS, random.Random(0), MaskRows(mask_share=1.0))
    prompts, completions, ends, given = sample(500, step=0)
    columns = set()
    for prompt, completion, end, g in zip(prompts, completions, ends, given):
        assert prompt.startswith(arithmetic.HINT_MARKER)
        hint_line, question = prompt.split("\n", 1)
        mask = hint_line[len(arithmetic.HINT_MARKER):]
        c = next(i for i, ch in enumerate(mask) if ch != "_")
        columns.add(c)
        assert len(mask) == 4 and mask.count("_") == 3 and not _is_hard(question)  # one digit; an easy question
        assert g == 1 + c and completion[g:] == mask[c] and not end  # only the hinted digit is trained, then cut
    assert columns == {0, 1, 2}


def _is_hard(prompt: str) -> bool:
    return prompt.startswith("Q: ") and prompt[3] != "0"


# --- pre-training, collapse, rescue -----------------------------------------------------------------

def test_pretraining_is_deterministic_and_lowers_the_loss():
    import torch

    from mentor.lab.pretrain import pretrain

    m1, _, info1 = pretrain(seed=3, progress=False, num_threads=1, **TINY_HP)
    m2, _, info2 = pretrain(seed=3, progress=False, num_threads=1, **TINY_HP)
    assert all(torch.equal(a, b) for a, b in zip(m1.parameters(), m2.parameters()))
    assert info1["final_loss"] == info2["final_loss"] < info1["first_loss"]


def test_pretrained_policy_is_cached(tmp_path, monkeypatch):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    import mentor.lab.pretrain
    from mentor.lab.pretrain import pretrained_policy

    path = pretrained_policy(tmp_path, seed=0, progress=False, num_threads=1, **TINY_HP)
    meta = json.loads((Path(path) / "meta.json").read_text())
    assert meta["hparams"]["steps"] == TINY_HP["steps"] and 0 <= meta["easy_acc"] <= 1
    with monkeypatch.context() as m:  # a cache hit trains nothing
        m.setattr(mentor.lab.pretrain, "pretrain", lambda **kw: pytest.fail("a cache hit trained a policy"))
        assert pretrained_policy(tmp_path, seed=0, progress=False, **TINY_HP) == path
    assert pretrained_policy(tmp_path, seed=1, progress=False, num_threads=1, **TINY_HP) != path
    assert len(list(tmp_path.glob("policy-*"))) == 2 and not list(tmp_path.glob(".policy-*"))
    model = AutoModelForCausalLM.from_pretrained(path)
    tok = AutoTokenizer.from_pretrained(path)
    assert model.config.hidden_size == 32 and tok("Q: 1").input_ids == [54, 31, 5, 22]


@pytest.fixture(scope="session")
def lab_policy():
    from mentor.lab.pretrain import pretrained_policy
    from mentor.models.checkpoint import load_checkpoint

    path = pretrained_policy(LAB_CACHE, seed=0, progress=False)
    model, tok = load_checkpoint(path)
    return {"path": path, "model": model, "tokenizer": tok}


def test_pretraining_reaches_high_easy_accuracy(lab_policy):
    from mentor.lab.sampling import evaluate

    meta = json.loads((Path(lab_policy["path"]) / "meta.json").read_text())
    assert meta["easy_acc"] >= 0.95, meta
    easy = data.generate_problems("easy", 300, seed=7, split="all")
    assert evaluate(lab_policy["model"], lab_policy["tokenizer"], easy) >= 0.95


def test_hard_level_collapses_to_zero_reward_unhinted(lab_policy):
    from mentor.lab.sampling import evaluate, sample_rewards

    hard = data.generate_problems("hard", 64, seed=0, split="heldout")
    model, tok = lab_policy["model"], lab_policy["tokenizer"]
    groups = sample_rewards(model, tok, hard, num_samples=8, temperature=1.0, seed=0)
    assert len(groups) == 64 and all(len(g) == 8 for g in groups)
    collapsed = sum(1 for g in groups if max(g) == 0)
    assert collapsed >= 60, f"only {collapsed}/64 groups collapsed"
    assert evaluate(model, tok, hard) <= 0.02


def test_hinted_reattempt_earns_reward(lab_policy):
    from mentor.lab.sampling import evaluate, first_digits, sample_rewards

    hard = data.generate_problems("hard", 64, seed=0, split="heldout")
    model, tok = lab_policy["model"], lab_policy["tokenizer"]
    unhinted = sum(map(sum, sample_rewards(model, tok, hard, seed=0)))
    for placement in ("prompt", "prefix"):
        groups = sample_rewards(model, tok, hard, hint_fn=first_digits(3), placement=placement, seed=0)
        hinted = sum(map(sum, groups))
        assert hinted > unhinted + 8, (placement, hinted, unhinted)
        assert sum(1 for g in groups if max(g) > 0) >= 8  # groups that a hint rescues from collapse
    # more of the answer given, more reward; the policy continues a 2-digit prefix on hard problems (tail rows)
    assert evaluate(model, tok, hard, first_digits(3)) >= evaluate(model, tok, hard, first_digits(1))
    assert evaluate(model, tok, hard, first_digits(2), placement="prefix") >= 0.8

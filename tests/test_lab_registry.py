"""Adding a lab is one record (mentor.lab.labs) and one module: a toy lab of one-digit doubling, registered from here,
is generated, pre-trained, sampled, scored and set up for the demo by the machinery the two shipped labs use, with
no other change to the package."""

import random
import sys
from types import ModuleType

import pytest

from mentor.lab import data, labs
from mentor.lab.demo_settings import DemoSettings
from mentor.types import InputError


def toy_module() -> ModuleType:
    """The toy lab's own module, as a lab would write it: `Q: 3*2=? A:` -> ` 6`, a hint line before the prompt."""
    toy = ModuleType("toy_doubling")

    def make_row(x: int, level: str) -> dict:
        return {"prompt": f"Q: {x}*2=? A:", "answer": str(2 * x), "problem_id": f"double-{x}", "level": level}

    def problems(level: str, n: int, seed: int = 0, split: str = "train") -> list[dict]:
        values = list(range(5)) if level == "easy" else list(range(5, 10))
        return [make_row(x, level) for x in random.Random(f"toy/{level}/{split}/{seed}").sample(values, n)]

    def rows(hp, seed, rng, extra):
        def sample(n: int, step: int):
            picked = [rng.randrange(10) for _ in range(n)]
            return [f"Q: {x}*2=? A:" for x in picked], [f" {2 * x}" for x in picked], [True] * n, [0] * n
        return sample

    toy.problems, toy.rows = problems, rows
    toy.hint_prompt = lambda prompt, hint: f"Hint: {hint}\n{prompt}"
    toy.reward = lambda completion, answer: float(completion.strip() == answer)
    toy.key_data = lambda: {"lab": "toy", "example": make_row(3, "easy")}
    toy.PRETRAIN_DEFAULTS = {"steps": 4, "batch_size": 8, "lr": 1e-3, "warmup_steps": 1, "weight_decay": 0.0,
                             "model": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1}}
    return toy


@pytest.fixture
def toy_lab(tmp_path, monkeypatch):
    toy = toy_module()
    monkeypatch.setitem(sys.modules, toy.__name__, toy)
    record = labs.Lab("toy", toy, 4, toy.problems,
                      labs.Recipe(toy.PRETRAIN_DEFAULTS, toy.rows, toy.key_data, "toy", 1, "toy/{seed}", "toy"),
                      tmp_path / "no-committed-policy", train_problems=5, easy_problems=5,
                      demo={"steps": 7, "learning_rate": 5e-4})
    monkeypatch.setitem(labs.LABS, "toy", record)
    return record


def test_a_registered_lab_gives_problems_and_datasets(toy_lab):
    rows = data.generate_problems("hard", 3, seed=1, lab="toy")
    assert rows == data.generate_problems("hard", 3, seed=1, lab="toy")
    assert {r["level"] for r in rows} == {"hard"} and all(int(r["answer"]) >= 10 for r in rows)
    assert len(data.make_dataset("easy", lab="toy")) == toy_lab.train_problems


def test_a_registered_lab_pretrains_samples_and_scores(toy_lab, tmp_path):
    from mentor.lab.pretrain import cache_key, hparams_of, pretrained_policy
    from mentor.lab.sampling import evaluate, sample_rewards
    from mentor.models.checkpoint import load_checkpoint

    assert hparams_of("toy", {"steps": 2})["steps"] == 2
    with pytest.raises(TypeError, match="unknown pre-training hyper-parameter"):
        hparams_of("toy", {"tail_share": 0.5})  # the addition lab's knob is not the toy's
    assert cache_key(0, False, lab="toy") != cache_key(0, False, lab="addition")
    path = pretrained_policy(tmp_path, seed=0, progress=False, num_threads=1, lab="toy")
    assert path.startswith(str(tmp_path / "toy-"))
    model, tokenizer = load_checkpoint(path)
    problems = data.generate_problems("easy", 4, lab="toy")
    assert 0.0 <= evaluate(model, tokenizer, problems, lab="toy") <= 1.0
    groups = sample_rewards(model, tokenizer, problems, num_samples=2, lab="toy")
    assert len(groups) == 4 and all(len(g) == 2 and set(g) <= {0.0, 1.0} for g in groups)
    with pytest.raises(ValueError, match="the toy lab places hints in: prompt"):
        evaluate(model, tokenizer, problems, hint_fn=lambda row: "1", placement="prefix", lab="toy")


def test_a_registered_lab_sets_its_demo_defaults(toy_lab):
    settings = DemoSettings.for_lab("toy")
    assert (settings.lab, settings.steps, settings.learning_rate) == ("toy", 7, 5e-4)
    assert DemoSettings.for_lab("toy", quick=True).steps == DemoSettings.quick().steps  # quick keeps its budget


def test_an_unknown_lab_is_named_with_the_labs():
    with pytest.raises(ValueError, match=r"unknown lab 'subtraction'; use one of \['addition', 'composed'\]"):
        data.generate_problems("hard", 2, lab="subtraction")
    with pytest.raises(InputError, match="lab: unknown lab 'subtraction'"):
        DemoSettings.for_lab("subtraction")

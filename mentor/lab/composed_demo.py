"""What `mentor demo --lab composed` changes in the demo: each seed's own policy, problems, reward and hint library.

- The policy: seed S pre-trains (or loads from the cache) the composed lab's policy of seed S, with its own gaps.
- `static_hints`: the best fixed library rule for that seed ("reveal step k"), picked as a user with `mentor eval` would:
  every rule is measured on the seed's step-0 failures (collapsed groups of 8 attempts at T=1 on `LIBRARY_PROBLEMS`
  training problems) and the one that rescues most is kept.
- `mentor`: the four-node graph, rules backends of the `composed` task (it reveals the step the attempts first get
  wrong). Both hinted arms splice by `mentor.lab.composed.COMPOSED_STRATEGY`.
- `learning`: the mentor with `hint_choice: learning` (mentor/trl/choice.py): per collapsed group, the graph's hint
  and every one-step library hint the lab allows (`CANDIDATE_COLUMNS`) are tried, G attempts each, and the group gets
  the one with the highest p(1 - p) weighted by HiLL's reliance. It draws G more attempts per extra candidate.
- `two_draws`: the control of `learning`: the same choice between two draws of the graph's own hint (`graph_draws:
  2`), so the same extra attempts and score, with no other hint to choose.
- `resample`: the retry control, `hint_source: none` (`RESAMPLE_CONFIG`). Every collapsed group is re-drawn from its
  *unhinted* prompt, G fresh attempts through the same hook, rounds and splice as the hinted arms: the extra attempts
  the mentor gets, without a hint.
- `sdpo`, `sdpo_library`, `sdpo_mentor`: trained by TRL's SDPOTrainer instead of GRPO (mentor.lab.demo's `_train`):
  SDPO alone (successful rollouts teach), with the seed's library rule as a collapsed group's feedback, and with the
  mentor's hint as that feedback (docs/configuration.md, "The hint as the self-teacher's feedback"). No re-attempt.
"""

from __future__ import annotations

from typing import Any

from mentor.lab import composed as lab
from mentor.lab.composed_eval import best_library, composed_failure_rows
from mentor.lab.data import generate_problems, make_dataset
from mentor.lab.pretrain import pretrained_policy
from mentor.lab.sampling import completions, evaluate
from mentor.tasks.composed import reward, step_hint

LIBRARY_PROBLEMS = 300
MAX_COMPLETION_LENGTH = lab.MAX_NEW_TOKENS
# The learning arm's candidates besides the graph's: "reveal step k" for every step the leak cap allows (not the last).
CANDIDATE_STEPS = list(range(1, lab.LEVELS["hard"]))
CANDIDATE_COLUMNS = [f"hint_step{k}" for k in CANDIDATE_STEPS]
RESAMPLE_CONFIG: dict[str, Any] = {"hint_source": "none"}  # the retry control any task has (docs/configuration.md)
# SDPO's teacher reprompt in the lab's own hint format (`--sdpo-templates lab`): TRL's default templates are English
# prose the char-level policy never read, so its teacher is worse than the student (docs/evidence/sdpo42.md, "Why the SDPO arms
# unlearned"). A demonstration becomes a hint line of the whole answer, feedback the mentor's hint line.
LAB_SDPO_TEMPLATES: dict[str, str] = {"reprompt_template": "{solution}{feedback}{prompt}",
                                      "solution_template": "Hint:{successful_previous_attempt}\n",
                                      "feedback_template": "Hint: {feedback_raw}\n"}


def policy(seed: int, pretrain: dict[str, Any]) -> str:
    return pretrained_policy(seed=seed, lab="composed", **pretrain)


def choose_library(policy_dir: str, seed: int, problems: int = LIBRARY_PROBLEMS) -> dict[str, Any]:
    """The seed's best fixed rule, measured on its step-0 failures: `{"step", "rescue_rates", "groups"}`."""
    rows = composed_failure_rows(policy_dir, generate_problems("hard", problems, seed=seed, split="train", lab="composed"),
                                 seed=seed)
    if not rows:
        return {"step": 1, "rescue_rates": {}, "groups": 0}
    step, rates = best_library(policy_dir, rows, sample_seed=seed)
    return {"step": step, "rescue_rates": rates, "groups": len(rows)}


def heldout(n: int) -> list[dict[str, Any]]:
    return generate_problems("hard", n, seed=10_000, split="heldout", lab="composed")


def dataset(n: int, seed: int, library_step: int | None, candidates: bool = False):
    """The training problems; the static library's hint column (`hint_step<k>`) when a library is given, the
    `CANDIDATE_COLUMNS` with `candidates` (the arms whose config names `hint_candidates`: learning, memory)."""
    ds = make_dataset("hard", n, seed=seed, split="train", lab="composed")
    steps = CANDIDATE_STEPS if candidates else [library_step] if library_step else []
    for k in steps:
        ds = ds.map(lambda row, k=k: {f"hint_step{k}": step_hint([int(c) for c in row["answer"]], k)})
    return ds


def wrong(model, tokenizer, problems: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The problems still wrong, greedy and unhinted, with the steps the policy wrote."""
    from mentor.tasks.composed import extract_steps

    outs = completions(model, tokenizer, problems, lab="composed")
    return [{"problem_id": row["problem_id"], "answer": row["answer"], "got": extract_steps(out[0]),
             "first_wrong_step": first_wrong(out[0], row["answer"])}
            for out, row in zip(outs, problems) if not reward(out[0], row["answer"])]


def first_wrong(completion: str, answer: str) -> int | None:
    from mentor.tasks.composed import ComposedTask

    return ComposedTask().feedback(completion, {"answer": answer})["first_wrong_step"]


def hinted_accuracy(model, tokenizer, problems: list[dict[str, Any]], library_step: int | None) -> float:
    """Greedy accuracy with the library's one-step hint (step 1 when there is no library): for hint dependence."""
    k = library_step or 1
    return evaluate(model, tokenizer, problems, lambda row: step_hint([int(c) for c in row["answer"]], k),
                    lab="composed")

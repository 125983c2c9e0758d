"""The in-step hook under many processes: TRL's GRPOTrainer on 2 CPU ranks (torchrun, gloo) against one process.

One torchrun launch runs every scenario on 2 ranks (this file is its script: `torchrun --nproc_per_node 2
tests/test_distributed.py OUT`); the test runs the same scenarios in one process over the same global batch and
compares. Decoding is greedy, so the batch does not hang on sampling RNG: first attempts, the mentor's decisions
and the re-attempts must come out the same. The global batch is 12 rows, 3 groups of G = 4; on 2 ranks of 6 rows
the middle group spans both ranks.
"""

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from mentor.trace_format import is_all_pass
from mentor.traces import TraceStore
from mentor.trl.distributed import end_process_group, share
from mentor.trl.hook import GenerationHook
from mentor.trl.ledger import HintLedger
from tiny_grpo import G, TeacherSpy, make_sdpo_trainer, make_trainer

ROWS = 12

SCENARIOS = {
    # Every group collapses: 3 hinted groups over 2 ranks, so one rank re-generates a padding copy.
    "split": {"config": {}, "problems": 16, "steps": 1, "pay_hints": True, "easy": 0},
    # Only the last group (all on rank 1) collapses, and hints never pay: two rounds in which rank 0 holds none of
    # the group's rows but re-generates a padding copy, so both ranks make the same collective calls.
    "escalate": {"config": {"max_rounds": 2}, "problems": 16, "steps": 1, "pay_hints": False, "easy": 2},
    # Hints wait for the problem's next sampling; three problems come back every step.
    "next_attempt": {"config": {"mode": "next_attempt"}, "problems": 3, "steps": 2, "pay_hints": True, "easy": 0},
    # hint_choice: learning: 3 groups x 2 candidates tried over 2 ranks; only the column's hint pays, so it is chosen.
    "choice": {"config": {"hint_choice": "learning", "hint_candidates": ["alt"]}, "problems": 16, "steps": 1,
               "pay_hints": True, "easy": 0, "paid_hint": "add the ones first"},
    # SDPOTrainer: the first problem is solved, the other two groups collapse (the middle one spans both ranks) and
    # get the hint as the teacher's feedback; each row's teacher prompt and self-distillation mask are compared.
    "sdpo": {"config": {}, "problems": 16, "steps": 1, "pay_hints": False, "easy": 1, "sdpo": True},
    # redraw_all_pass: the first two problems are solved by every row; their groups (one on rank 0, one over both) are
    # replaced by fresh rows' groups drawn the same on both ranks, and a replacement that collapses is mentored.
    "all_pass": {"config": {"redraw_all_pass": True}, "problems": 16, "steps": 1, "pay_hints": True, "easy": 0,
                 "solved": 2},
}


class Reward:
    """Pays the even rows of hinted attempts (if `pay_hints`) and of first attempts at `easy` problems."""

    __name__ = "dist_reward"

    def __init__(self, pay_hints: bool, easy: set[str], paid_hint: str | None = None, solved: set[str] = frozenset()):
        self.pay_hints, self.easy, self.paid_hint, self.solved, self.sizes = pay_hints, easy, paid_hint, solved, []

    def __call__(self, prompts, completions, problem_id, mentor_hint=None, **kwargs):
        self.sizes.append(len(completions))
        hints = mentor_hint or [""] * len(completions)
        paid = [self.pay_hints and self.paid_hint in (None, hint) for hint in hints]
        return [1.0 if not hint and pid in self.solved else float(i % 2 == 0 and (paid[i] if hint else pid in self.easy))
                for i, (hint, pid) in enumerate(zip(hints, problem_id))]


def run(name: str, out_dir: str, per_device: int) -> dict:
    """One scenario's training run; what every rank saw, as JSON."""
    import torch

    from mentor import Mentor
    from mentor.lab.data import make_dataset
    from mentor.lab.model import build_policy

    scenario = SCENARIOS[name]
    model, tokenizer = build_policy(1, hidden_size=32, intermediate_size=64, num_hidden_layers=1)
    # An untied random output layer, so that greedy completions differ from prompt to prompt (a tied one repeats ':').
    model.lm_head.weight = torch.nn.Parameter(3 * torch.randn_like(model.lm_head.weight))
    dataset = make_dataset("hard", scenario["problems"], seed=0)
    if "paid_hint" in scenario:
        dataset = dataset.add_column("alt", [scenario["paid_hint"]] * len(dataset))
    reward = Reward(scenario["pay_hints"], set(dataset["problem_id"][:scenario["easy"]]), scenario.get("paid_hint"),
                    set(dataset["problem_id"][:scenario.get("solved", 0)]))
    if scenario.get("sdpo"):
        return sdpo_run(scenario, out_dir, per_device, dataset, reward, (model, tokenizer))
    trainer = make_trainer(out_dir, reward, max_steps=scenario["steps"], dataset=dataset, policy=(model, tokenizer),
                           per_device_train_batch_size=per_device, shuffle_dataset=False,
                           generation_kwargs={"do_sample": False})
    callback = Mentor.from_config(scenario["config"]).attach(trainer)
    batches, inner = [], trainer._generate_and_score_completions

    def generate_and_score(inputs):  # the rows this rank trains on, in batch order (before TRL shuffles them)
        out = inner(inputs)
        decode = lambda ids, mask: tokenizer.decode(ids[mask.bool()], skip_special_tokens=True)  # noqa: E731
        batches.append([[decode(p, pm), decode(c, cm), round(float(a), 4)] for p, pm, c, cm, a in zip(
            out["prompt_ids"], out["prompt_mask"], out["completion_ids"], out["completion_mask"], out["advantages"])])
        return out

    trainer._generate_and_score_completions = generate_and_score
    trainer.train()
    logs = [{k: v for k, v in log.items() if k.startswith("mentor/")} for log in trainer.state.log_history
            if "mentor/interventions" in log]
    return {"rows": batches, "logs": logs, "history": callback.hint_history, "pending": callback.pending,
            "sizes": reward.sizes}


def sdpo_run(scenario: dict, out_dir: str, per_device: int, dataset, reward: Reward, policy) -> dict:
    """An SDPO scenario's run: each row this rank trains on (prompt, completion, teacher prompt, mask), as JSON."""
    from mentor import Mentor

    spy, tokenizer = TeacherSpy(), policy[1]
    trainer = make_sdpo_trainer(out_dir, reward, dataset=dataset, policy=policy, callbacks=[spy],
                                per_device_train_batch_size=per_device, generation_kwargs={"do_sample": False})
    callback = Mentor.from_config(scenario["config"]).attach(trainer)
    trainer.train()
    b = spy.batch
    width = b["teacher_input_ids"].size(1) - b["completion_ids"].size(1)
    decode = lambda ids: tokenizer.decode(ids, skip_special_tokens=True)  # noqa: E731  (padding is special)
    rows = [[decode(p), decode(c), decode(t[:width][tm[:width].bool()]), float(m)] for p, c, t, tm, m in zip(
        b["prompt_ids"], b["completion_ids"], b["teacher_input_ids"], b["teacher_attention_mask"],
        b["self_distillation_mask"])]
    logs = [{k: v for k, v in log.items() if k.startswith("mentor/")} for log in trainer.state.log_history
            if "mentor/interventions" in log]
    return {"rows": [rows], "logs": logs, "history": callback.hint_history, "pending": callback.pending,
            "sizes": reward.sizes}


def traces(run_dir: Path) -> list[dict]:
    keys = ("step", "group", "round", "problem_id", "hint", "tier", "attempts", "reattempt", "recovered",
            "teacher_prompt")
    return [{**{k: record[k] for k in keys}, "all_pass": is_all_pass(record), "replacement": record.get("replacement")}
            for record in TraceStore(run_dir, readonly=True).interventions()]


def untimed(logs: list[dict]) -> list[dict]:
    return [{k: v for k, v in log.items() if not k.endswith("_s")} for log in logs]


def test_share_gives_every_rank_as_many_whole_items():
    assert [share(list("abc"), rank, 2) for rank in (0, 1)] == [["a", "b"], ["c", "a"]]
    assert [share(list("ab"), rank, 2) for rank in (0, 1)] == [["a"], ["b"]]
    assert share(list("abc"), 0, 1) == list("abc")
    assert [share(list("abc"), rank, 2, pad=False) for rank in (0, 1)] == [["a", "b"], ["c"]]
    assert [share(list("a"), rank, 2, pad=False) for rank in (0, 1)] == [["a"], []]


def test_a_step_gathers_only_the_collapsed_groups_and_the_pending_hints_it_used():
    hook = object.__new__(GenerationHook)  # gather_needed reads only the group size and the pending hints
    hook.adapter, hook.ledger = SimpleNamespace(num_generations=2), HintLedger(pending={"p1": "h1", "p9": "h9"})
    rows = [{"problem_id": pid} for pid in ("p0", "p0", "p1", "p1", "p2", "p2")]
    prompts, completions = [f"q{i}" for i in range(6)], [f"c{i}" for i in range(6)]
    needed = hook.gather_needed([2], 0, prompts, rows, completions)
    assert needed == ({4: "q4", 5: "q5"}, {4: rows[4], 5: rows[5]}, {4: "c4", 5: "c5"})
    assert hook.ledger.pending == {"p9": "h9"}  # p1's hint was used by this batch, p9's still waits


@pytest.mark.slow  # torchrun
def test_two_ranks_take_the_same_decisions_and_rows_as_one_process(tmp_path):
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    launch = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", __file__,
              str(tmp_path / "ranks")]
    proc = subprocess.Popen(launch, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:  # the single-process runs overlap the ranks' start-up
        single = {name: run(name, str(tmp_path / "single" / name), per_device=ROWS) for name in SCENARIOS}
        output = proc.communicate(timeout=300)[0]
    finally:
        proc.kill()
    assert proc.returncode == 0, output[-4000:]
    for k in (0, 1):  # the group's threads were joined before exit, where one could abort the rank (SIGABRT)
        threads = json.loads((tmp_path / "ranks" / f"threads.rank{k}.json").read_text())
        assert threads and not [name for name in threads if "gloo" in name], threads

    for name, one in single.items():
        ranks = [json.loads((tmp_path / "ranks" / f"{name}.rank{k}.json").read_text()) for k in (0, 1)]
        # The same rows in the same global order (rank 0's, then rank 1's), hinted or not, with the same advantages.
        assert [r0 + r1 for r0, r1 in zip(ranks[0]["rows"], ranks[1]["rows"])] == one["rows"], name
        # Metrics are the same on every rank (timings included: the slowest rank's), and match one process.
        assert ranks[0]["logs"] == ranks[1]["logs"] and untimed(ranks[0]["logs"]) == untimed(one["logs"]), name
        assert ranks[0]["history"] == ranks[1]["history"] == one["history"], name
        assert ranks[0]["pending"] == ranks[1]["pending"] == one["pending"], name
        # Traces are written once (by rank 0), and record the same interventions as one process.
        records = traces(tmp_path / "ranks" / name)
        mentored = [r for r in records if not r["all_pass"]]  # an all-pass re-draw is traced, not mentored
        assert len(mentored) == sum(log["mentor/interventions"] for log in one["logs"]) > 0, name
        assert records == traces(tmp_path / "single" / name), name

    split = [json.loads((tmp_path / "ranks" / f"split.rank{k}.json").read_text()) for k in (0, 1)]
    assert split[0]["logs"][0]["mentor/interventions"] == 3 and split[0]["logs"][0]["mentor/collapse_rate_after"] == 0
    assert all(row[0].startswith("Hint:") for rank in split for row in rank["rows"][0])
    assert [rank["sizes"] for rank in split] == [[6, 8], [6, 8]]  # 3 hinted groups: 2 per rank, one a copy

    escalate = [json.loads((tmp_path / "ranks" / f"escalate.rank{k}.json").read_text()) for k in (0, 1)]
    assert escalate[0]["logs"][0]["mentor/interventions"] == 2  # the last group, in rounds 1 and 2
    assert [sum(row[0].startswith("Hint:") for row in rank["rows"][0]) for rank in escalate] == [0, G]
    assert [rank["sizes"] for rank in escalate] == [[6, 4, 4], [6, 4, 4]]

    later = [json.loads((tmp_path / "ranks" / f"next_attempt.rank{k}.json").read_text()) for k in (0, 1)]
    assert not any(row[0].startswith("Hint:") for rank in later for row in rank["rows"][0])
    assert all(row[0].startswith("Hint:") for rank in later for row in rank["rows"][1])
    assert len(later[0]["history"]) == 3 and later[0]["pending"] == {}

    choice = [json.loads((tmp_path / "ranks" / f"choice.rank{k}.json").read_text()) for k in (0, 1)]
    log = choice[0]["logs"][0]
    assert log["mentor/interventions"] == 3 and log["mentor/candidate_attempts"] == 3 * G
    assert log["mentor/chosen_not_graph"] == 3 and log["mentor/collapse_rate_after"] == 0
    assert all("add the ones first" in row[0] for rank in choice for row in rank["rows"][0])
    assert [rank["sizes"] for rank in choice] == [[6, 12], [6, 12]]  # 6 candidate groups: 3 per rank

    all_pass = [json.loads((tmp_path / "ranks" / f"all_pass.rank{k}.json").read_text()) for k in (0, 1)]
    log = all_pass[0]["logs"][0]
    redraws = [r for r in traces(tmp_path / "ranks" / "all_pass") if r["all_pass"]]
    assert log["mentor/all_pass_redrawn"] == len(redraws) >= 1
    assert log["mentor/all_pass_collapsed"] == sum(r["replacement"]["collapsed"] for r in redraws)

    sdpo = [json.loads((tmp_path / "ranks" / f"sdpo.rank{k}.json").read_text()) for k in (0, 1)]
    log = sdpo[0]["logs"][0]
    assert log["mentor/interventions"] == log["mentor/feedback_groups"] == 2
    teachers = [row[2] for rank in sdpo for row in rank["rows"][0]]
    assert all("feedback from your unsuccessful earlier attempt" in t for t in teachers[G:])  # groups 1 and 2
    assert all("Correct solution" in t for t in teachers[:G]) and len(set(teachers[G:2 * G])) == 1  # spans ranks
    assert [row[3] for rank in sdpo for row in rank["rows"][0]] == [1.0] * 3 * G
    assert [rank["sizes"] for rank in sdpo] == [[6], [6]]  # scored once: no re-attempt


if __name__ == "__main__":  # one rank of the torchrun launch above
    out, rank, world = Path(sys.argv[1]), int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    for scenario in SCENARIOS:
        result = run(scenario, str(out / scenario), per_device=ROWS // world)
        (out / f"{scenario}.rank{rank}.json").write_text(json.dumps(result))
    end_process_group()
    tasks = Path("/proc/self/task")  # the threads left for the interpreter's exit
    (out / f"threads.rank{rank}.json").write_text(json.dumps([(t / "comm").read_text().strip() for t in tasks.iterdir()]))

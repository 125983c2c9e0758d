"""The in-step hook under a collective forward: 2 CPU ranks (torchrun, gloo) whose policy's forward is an all-reduce.

Under FSDP or ZeRO-3 every forward all-gathers the sharded parameters, so a rank that skips or adds one (a generate,
a reliance pass, the loss) hangs the others. Accelerate turns FSDP into DDP on CPU, so the policy here makes its
forward a collective itself (an all-reduce of zeros, under a 60 s gloo timeout, so a hang fails the test), and
each rank records its forwards' batch sizes, which the test compares. transformers keeps FSDP ranks generating in
step (`synced_gpus`, set where it finds an FSDP or ZeRO-3 model); this DDP model gets it set by hand. This file
is also the ranks' script:
`torchrun --nproc_per_node 2 tests/test_collective_forward.py OUT`.

The global batch is 16 rows, 4 groups of G = 4, 2 groups per rank, under `replace_group`, `max_rounds: 2` and
`hint_choice: learning`. A group has 1 or 2 candidate hints (the `alt` column is empty for some problems), so the
candidate groups re-generated per round are odd in number and one rank re-generates a padding copy.
"""

import json
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from functools import partial
from pathlib import Path

import pytest

from mentor.trl.distributed import end_process_group
from tiny_grpo import G, make_trainer

ROOT = Path(__file__).resolve().parents[1]
ROWS, GLOO_TIMEOUT_S, LAUNCH_TIMEOUT_S = 16, 60, 240
PAID = "add the ones first"
SCENARIOS = {
    # Groups 2 and 3 collapse, both on rank 1; rank 0 holds none of their rows. Round 1: 3 candidate groups (group
    # 2's graph hint and column, group 3's graph hint); group 2's column pays. Round 2: group 3 alone, re-generated
    # by rank 0, and by rank 1 as a padding copy.
    "one_rank": {"easy": {0, 1}, "alt": {2: PAID}},
    # Groups 0 and 1 (rank 0) and 2 (rank 1) collapse. Round 1: 5 candidate groups; group 0's column pays and is
    # chosen. Round 2: groups 1 and 2 escalate, 3 candidate groups.
    "uneven": {"easy": {3}, "alt": {0: PAID, 2: "carry the tens"}},
}
CONFIG = {"max_rounds": 2, "hint_choice": "learning", "hint_candidates": ["alt"], "strategy": "replace_group"}


class Reward:
    """Pays the first row of each group (of every reward call) for the column hint PAID, or, unhinted, for the
    `easy` problems."""

    __name__ = "collective_reward"

    def __init__(self, easy: set[str]):
        self.easy, self.sizes = easy, []

    def __call__(self, prompts, completions, problem_id, mentor_hint=None, **kwargs):
        self.sizes.append(len(completions))
        hints = mentor_hint or [""] * len(completions)
        return [float(i % G == 0 and (hint == PAID if hint else pid in self.easy))
                for i, (hint, pid) in enumerate(zip(hints, problem_id))]


def collective_forward(model, sizes: list[int]) -> None:
    """Makes each forward of `model` a collective where a process group runs, as FSDP's all-gather is: it
    all-reduces a zero tensor, so a rank that skips or adds a forward leaves the others waiting (or meeting another
    collective, which the sum shows); in one process it only counts. `sizes` gets each forward's batch size."""
    import torch
    import torch.distributed as dist

    def all_reduce_zeros(module, args, kwargs):
        ids = kwargs.get("input_ids")
        sizes.append((ids if ids is not None else kwargs["inputs_embeds"]).shape[0])
        if dist.is_initialized() and dist.get_world_size() > 1:
            zeros = torch.zeros(8)
            dist.all_reduce(zeros)
            if zeros.any():
                raise RuntimeError(f"forward {len(sizes)} met another rank's other collective: {zeros.tolist()}")

    model.model.register_forward_pre_hook(all_reduce_zeros, with_kwargs=True)


def run(name: str, out_dir: str, per_device: int, world: int) -> dict:
    """One scenario's training run; the rows this rank trained on, the mentor's logs, its forwards, as JSON."""
    import torch

    from mentor import Mentor
    from mentor.lab.data import make_dataset
    from mentor.lab.model import build_policy

    scenario = SCENARIOS[name]
    model, tokenizer = build_policy(1, hidden_size=32, intermediate_size=64, num_hidden_layers=1)
    # An untied random output layer, so that greedy completions differ from prompt to prompt (a tied one repeats ':').
    model.lm_head.weight = torch.nn.Parameter(3 * torch.randn_like(model.lm_head.weight))
    sizes: list[int] = []
    collective_forward(model, sizes)
    if world > 1:  # what transformers sets for an FSDP or ZeRO-3 model: finished ranks keep forwarding with the rest
        model.generate = partial(model.generate, synced_gpus=True)
    dataset = make_dataset("hard", ROWS // G, seed=0)
    dataset = dataset.add_column("alt", [scenario["alt"].get(k, "") for k in range(len(dataset))])
    reward = Reward({dataset["problem_id"][k] for k in scenario["easy"]})
    trainer = make_trainer(out_dir, reward, dataset=dataset, policy=(model, tokenizer), shuffle_dataset=False,
                           per_device_train_batch_size=per_device, generation_kwargs={"do_sample": False})
    callback = Mentor.from_config(CONFIG).attach(trainer)
    batches, inner = [], trainer._generate_and_score_completions

    def generate_and_score(inputs):  # the rows this rank trains on, in batch order (before TRL shuffles them)
        out = inner(inputs)
        decode = lambda ids, mask: tokenizer.decode(ids[mask.bool()], skip_special_tokens=True)  # noqa: E731
        batches.append([[decode(p, pm), decode(c, cm), round(float(a), 4)] for p, pm, c, cm, a in zip(
            out["prompt_ids"], out["prompt_mask"], out["completion_ids"], out["completion_mask"], out["advantages"])])
        return out

    trainer._generate_and_score_completions = generate_and_score
    trainer.train()
    logs = [{k: v for k, v in log.items() if k.startswith("mentor/") and not k.endswith("_s")}
            for log in trainer.state.log_history if "mentor/interventions" in log]
    return {"rows": batches, "logs": logs, "history": callback.hint_history, "sizes": reward.sizes,
            "forwards": sizes}


@pytest.mark.slow  # torchrun
def test_two_ranks_with_a_collective_forward_finish_and_train_the_rows_of_one_process(tmp_path):
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}  # this checkout's mentor
    launch = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", __file__,
              str(tmp_path / "ranks")]
    t0 = time.perf_counter()
    proc = subprocess.Popen(launch, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            start_new_session=True)  # its own process group: a hang's ranks are killed with it
    try:  # the single-process runs overlap the ranks' start-up
        single = {name: run(name, str(tmp_path / "single" / name), ROWS, world=1) for name in SCENARIOS}
        output = proc.communicate(timeout=LAUNCH_TIMEOUT_S)[0]
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail(f"the ranks hung: no exit within {LAUNCH_TIMEOUT_S} s\n{proc.communicate()[0][-4000:]}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, output[-4000:]
    print(f"2 ranks and one process: {time.perf_counter() - t0:.0f} s")

    for name, one in single.items():
        ranks = [json.loads((tmp_path / "ranks" / f"{name}.rank{k}.json").read_text()) for k in (0, 1)]
        # The same rows in the same global order (rank 0's, then rank 1's), hinted or not, with the same advantages.
        assert [r0 + r1 for r0, r1 in zip(ranks[0]["rows"], ranks[1]["rows"])] == one["rows"], name
        assert ranks[0]["logs"] == ranks[1]["logs"] == one["logs"], name
        assert ranks[0]["history"] == ranks[1]["history"] == one["history"], name
        # Both ranks forwarded as often (the all-reduce saw to it), with as many rows each time.
        assert ranks[0]["forwards"] == ranks[1]["forwards"] and ranks[0]["forwards"], name

    one_rank = [json.loads((tmp_path / "ranks" / f"one_rank.rank{k}.json").read_text()) for k in (0, 1)]
    assert [sum(row[0].startswith("Hint:") for row in rank["rows"][0]) for rank in one_rank] == [0, 2 * G]
    assert all(PAID in row[0] for row in one_rank[1]["rows"][0][:G])  # group 2 trains on its paid column hint
    log = one_rank[0]["logs"][0]
    assert log["mentor/interventions"] == 3 and log["mentor/chosen_not_graph"] == 1  # groups 2 and 3, then 3
    # First attempts, then round 1's 3 candidate groups over 2 ranks (2 each, one of rank 1's a padding copy), then
    # round 2's 1 (rank 0 re-generates group 3, rank 1 a padding copy).
    assert [rank["sizes"] for rank in one_rank] == [[8, 2 * G, G], [8, 2 * G, G]]

    uneven = [json.loads((tmp_path / "ranks" / f"uneven.rank{k}.json").read_text()) for k in (0, 1)]
    log = uneven[0]["logs"][0]
    assert log["mentor/interventions"] == 5 and log["mentor/chosen_not_graph"] == 1  # 3 groups, then 2 again
    assert all(PAID in row[0] for row in uneven[0]["rows"][0][:G])  # group 0 trains on its paid column hint
    # Round 1's 5 candidate groups: 3 per rank; round 2's 3: 2 per rank; one of rank 1's a padding copy each time.
    assert [rank["sizes"] for rank in uneven] == [[8, 3 * G, 2 * G], [8, 3 * G, 2 * G]]


if __name__ == "__main__":  # one rank of the torchrun launch above
    import torch.distributed as dist

    out, rank, world = Path(sys.argv[1]), int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    # Opened here for its timeout (accelerate then keeps it): on CPU, TrainingArguments passes no `ddp_timeout`, and
    # gloo's default leaves a rank waiting on a lost collective for 30 minutes.
    dist.init_process_group("gloo", timeout=timedelta(seconds=GLOO_TIMEOUT_S))
    for scenario in SCENARIOS:
        result = run(scenario, str(out / scenario), per_device=ROWS // world, world=world)
        (out / f"{scenario}.rank{rank}.json").write_text(json.dumps(result))
    end_process_group()

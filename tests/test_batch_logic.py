"""The hook's batch rules (mentor/trl/batch.py) and its placement (mentor/placement.py) on plain tensors and lists,
without a trainer: which groups collapsed, which re-attempts each strategy splices in, where a hint goes, and what
the loss then sees.
tests/test_trl_hook.py proves the same rules through a real GRPOTrainer."""

import math

import pytest
import torch

from mentor.config import MentorConfig
from mentor.placement import Placement, neutralised, prompt_text
from mentor.tasks import get_task
from mentor.trl.batch import REDRAW_MARKER, BatchRules, Generation, problem_id
from mentor.types import InputError

G = 4


def rules(weights=(1.0,), names=(), **config) -> BatchRules:
    """Rules for the math task (hint text as it is) with a render that marks the chat template, and an encoder
    of one id per character; `names`: the reward functions' names."""
    config = MentorConfig.load(config)
    placement = Placement(config.hint_placement, get_task("math"),
                          render=lambda messages: "".join(f"<{m['role']}>{m['content']}" for m in messages) + "<a>",
                          encode=lambda text: [ord(c) for c in text])
    return BatchRules(config, placement, G, torch.tensor(weights), reward_names=list(names))


def column(values) -> torch.Tensor:
    """Rewards per function for one reward function."""
    return torch.tensor(values, dtype=torch.float32).unsqueeze(1)


def batch(n_rows: int, tag: str, logprobs: bool = False) -> Generation:
    """`n_rows` rows whose prompt, completion and logprob name the row."""
    return Generation(prompt_ids=[[100 + i] for i in range(n_rows)],
                      completion_ids=[[200 + i, 201] for i in range(n_rows)],
                      tool_mask=None, completions=[f"{tag}{i}" for i in range(n_rows)],
                      logprobs=[[-0.5, -0.5] for _ in range(n_rows)] if logprobs else None,
                      extra_fields={"mentor_hint": [""] * n_rows, "other": [f"{tag}x{i}" for i in range(n_rows)]},
                      images=None, tool_images=[])


def test_a_group_collapses_when_every_weighted_row_scores_at_or_below_the_threshold():
    r = rules(weights=(1.0, 0.5))
    per_func = torch.tensor([[0.0, 0.0]] * G + [[0.0, 0.0]] * (G - 1) + [[0.0, 1.0]] + [[math.nan, math.nan]] * G)
    assert r.collapsed(per_func) == [0, 2]  # group 1 earns 0.5 on its last row; NaN rows are unscorable: failed
    assert r.row_rewards(per_func)[G * 2 - 1] == 0.5 and r.row_rewards(per_func)[G * 2] is None
    # NaN in one function only: the other one's weighted reward counts
    assert r.total(torch.tensor([[math.nan, 2.0]])).tolist() == [1.0]
    assert rules(collapse_threshold=0.5).collapsed(column([0.5] * G)) == [0]


def test_under_success_reward_a_group_of_well_formatted_wrong_answers_is_collapsed():
    # Columns: accuracy, format. Group 0 is well formatted and all wrong; group 1 has one right answer.
    per_func = torch.tensor([[0.0, 1.0]] * G + [[0.0, 1.0]] * (G - 1) + [[1.0, 0.0]])
    names = ("accuracy_reward", "format_reward")
    assert rules((1.0, 0.5), names).collapsed(per_func) == []  # the weighted total hides group 0
    shaped = rules((1.0, 0.5), names, success_reward="accuracy_reward")
    assert shaped.collapsed(per_func) == [0]
    assert shaped.succeeded(per_func).tolist() == [False] * (2 * G - 1) + [True]
    assert shaped.total(per_func).tolist()[:2] == [0.5, 0.5]  # what trains and what the trace shows: unchanged
    # An abstaining success reward (NaN) is a failure, whatever the format reward gives.
    assert shaped.collapsed(torch.tensor([[math.nan, 1.0]] * G)) == [0]


def test_under_hint_source_none_the_re_attempt_is_the_unhinted_prompt_and_shows_no_hint():
    r = rules(hint_source="none", hint_placement="prefix")
    chat = [{"role": "user", "content": "What is 2+2?"}]
    assert r.placement.hinted_prompt("What is 2+2?", r.shown(REDRAW_MARKER)) == "What is 2+2?"
    assert r.placement.hinted_prompt(chat, r.shown(REDRAW_MARKER)) == chat
    assert r.placement.whole_responses(["What is 2+2?"], [r.shown(REDRAW_MARKER)], [" 4"]) == [" 4"]  # no prefix
    out, gen = batch(G, "orig"), batch(G, "redraw")
    r.splice(0, gen, column([1.0] * G), REDRAW_MARKER, out, 0, column([0.0] * G))
    assert out.completions == gen.completions and out.extra_fields["mentor_hint"] == [""] * G
    with pytest.raises(InputError, match="hint_source: none .* mode: in_step"):
        MentorConfig.load({"hint_source": "none", "mode": "next_attempt"})


@pytest.mark.parametrize("config,totals,expected", [
    ({"strategy": "replace_group"}, [0, 1, 0, 1], [0, 1, 2, 3]),
    ({"strategy": "replace_k", "k": 1}, [0, 1, 0, 1], [1]),
    ({"strategy": "replace_k", "k": 3}, [0, 1, 0, 1], [1, 3]),  # only successes, at most k
    ({"strategy": "replace_k", "k": 2}, [0, 0, 0, 0], []),
    ({"strategy": "mixed", "mixed_share": 0.5}, [0, 0, 0, 1], [0, 1]),  # the first rows, success or not
    ({"strategy": "mixed", "mixed_share": 0.01}, [0, 0, 0, 0], [0]),  # at least one
])
def test_picks_follow_the_strategy(config, totals, expected):
    assert rules(**config).picks(totals) == expected


def test_the_hint_goes_where_the_placement_says():
    task = get_task("math")
    prompt = rules().placement  # prompt placement
    assert prompt.hinted_prompt("Solve x.", "try 2") == task.hinted_prompt("Solve x.", "try 2")
    chat = [{"role": "system", "content": "S"}, {"role": "user", "content": "Q1"}, {"role": "assistant", "content": "A"},
            {"role": "user", "content": "Q2"}]
    hinted = prompt.hinted_prompt(chat, "try 2")
    assert hinted[3]["content"] == task.hinted_prompt("Q2", "try 2") and hinted[1]["content"] == "Q1"
    assert chat[3]["content"] == "Q2"  # the batch's own prompt is left as it was
    no_user = [{"role": "system", "content": "S"}]
    assert prompt.hinted_prompt(no_user, "try 2")[-1] == {"role": "user",
                                                         "content": task.hinted_prompt("", "try 2").strip()}
    prefix = rules(hint_placement="prefix").placement
    assert prefix.hinted_prompt("Solve x.", "x = 2") == "Solve x." + task.response_prefix("x = 2")
    assert prefix.hinted_prompt(chat[:2], "x = 2") == "<system>S<user>Q1<a>" + task.response_prefix("x = 2")


def test_a_batch_with_a_prefix_hint_holds_one_prompt_type():
    chat = [{"role": "user", "content": "Q"}]
    hinted = rules(hint_placement="prefix").placement.hinted_batch([chat, chat], ["x = 2", ""])
    assert hinted == ["<user>Q<a>" + get_task("math").response_prefix("x = 2"), "<user>Q<a>"]  # both rendered text
    assert rules(hint_placement="prefix").placement.hinted_batch([chat, chat], ["", ""]) == [chat, chat]
    in_prompt = rules().placement.hinted_batch([chat, chat], ["x = 2", ""])
    assert in_prompt[1] == chat and in_prompt[0][0]["content"] == get_task("math").hinted_prompt("Q", "x = 2")


def test_the_verifier_judges_the_whole_response_under_prefix_placement():
    prefix = rules(hint_placement="prefix").placement
    whole = prefix.whole_responses(["p", [{"role": "user", "content": "q"}], "p"], ["H", "H", ""], ["c", "c", "c"])
    assert whole == ["Hc", [{"role": "assistant", "content": "Hc"}], "c"]
    assert rules().placement.whole_responses(["p"], ["H"], ["c"]) == ["c"]


def test_prefix_ids_fall_back_to_the_prefix_alone_when_the_seam_changed():
    r = rules(hint_placement="prefix").placement
    assert r.prefix_ids([1, 2], [1, 2, 7, 8], "ab") == [7, 8]
    assert r.prefix_ids([1, 2], [1, 3, 7, 8], "ab") == [ord("a"), ord("b")]
    assert rules().placement.prefix_ids([1, 2], [1, 2, 7, 8], "ab") == []  # the hint is in the prompt: no prefix


@pytest.mark.parametrize("config,rewarded,spliced_slots", [
    ({"strategy": "replace_group"}, [0, 1, 0, 1], [0, 1, 2, 3]),
    ({"strategy": "replace_k", "k": 1}, [0, 0, 1, 0], [2]),
    ({"strategy": "mixed", "mixed_share": 0.5}, [1, 0, 0, 0], [0, 1]),
])
def test_splice_puts_the_picked_reattempts_where_the_loss_sees_them(config, rewarded, spliced_slots):
    r = rules(**config)
    out, gen = batch(2 * G, "first"), batch(G, "hinted")
    rewards = column([0.0] * 2 * G)
    hint_rewards = column(rewarded)
    r.splice(1, gen, hint_rewards, "H", out, 0, rewards)
    picks = r.picks([float(x) for x in rewarded])
    for slot, j in enumerate(picks):
        i = G + slot
        assert out.completions[i] == f"hinted{j}" and out.prompt_ids[i] == [100 + j]  # hint kept in the prompt
        assert out.extra_fields["mentor_hint"][i] == "H" and out.extra_fields["other"][i] == f"hintedx{j}"
        assert rewards[i].item() == rewarded[j]
    untouched = [i for i in range(2 * G) if i - G not in range(len(picks))]
    assert all(out.completions[i] == f"first{i}" and out.extra_fields["mentor_hint"][i] == "" for i in untouched)
    assert r.collapsed(rewards) == [0]  # the spliced group now has signal, the other is still collapsed


def test_splice_on_a_rank_updates_every_reward_but_only_its_own_rows():
    r = rules()
    out, gen = batch(G // 2, "mine"), batch(G, "hinted")  # this rank holds rows 2 and 3 of one group
    rewards = column([0.0] * G)
    r.splice(0, gen, column([1, 0, 1, 0]), "H", out, G // 2, rewards)
    assert rewards.squeeze(1).tolist() == [1, 0, 1, 0]
    assert out.completions == ["hinted2", "hinted3"]


def test_strip_hint_trains_the_prefix_of_successes_only_and_drops_their_sampling_logprobs():
    r = rules(hint_placement="prefix", strip_hint=True, train_prefix=True)
    out = batch(G, "first", logprobs=True)
    gen = batch(G, "hinted", logprobs=True)
    gen.prompt_ids = [out.prompt_ids[j] + [7, 8] for j in range(G)]  # the hinted prompt: original + prefix ids
    r.splice(0, gen, column([1, 0, 1, 0]), "H", out, 0, column([0.0] * G))
    for j in (0, 2):  # successes: original prompt, prefix ids trained as completion tokens, no sampling logprob
        assert out.prompt_ids[j] == [100 + j] and out.completion_ids[j] == [7, 8, 200 + j, 201]
        assert out.logprobs[j] == [None] * 4
    for j in (1, 3):  # failures: as generated, the prefix on the prompt side
        assert out.prompt_ids[j] == [100 + j, 7, 8] and out.completion_ids[j] == [200 + j, 201]
        assert out.logprobs[j] == [-0.5, -0.5]
    stripped = rules(strip_hint=True)
    out = batch(G, "first")
    stripped.splice(0, gen, column([0, 0, 0, 0]), "H", out, 0, column([0.0] * G))
    # strip_hint alone: every re-attempt after the original prompt, the prefix trained by none
    assert out.prompt_ids == [[100 + j] for j in range(G)] and out.completions == [f"hinted{j}" for j in range(G)]


def test_correct_off_policy_keeps_the_hinted_sampling_logprobs_for_trl_s_own_correction():
    """Under vLLM TRL weights a row by exp(its log-probs - the sampling ones): the stripped rows keep the hinted
    sampling log-probs of their generated tokens (a given prefix token: log 1), where without the option they are NaN
    (ratio 1)."""
    r = rules(hint_placement="prefix", strip_hint=True, train_prefix=True, correct_off_policy=True)
    out, gen = batch(G, "first", logprobs=True), batch(G, "hinted", logprobs=True)
    gen.prompt_ids = [out.prompt_ids[j] + [7, 8] for j in range(G)]
    gen.logprobs = [[-0.25 * (j + 1), -0.5] for j in range(G)]
    r.splice(0, gen, column([1, 0, 1, 0]), "H", out, 0, column([0.0] * G))
    for j in (0, 2):  # trained after the original prompt: the prefix given (log 1), then the hinted sampling log-probs
        assert out.completion_ids[j] == [7, 8, 200 + j, 201] and out.logprobs[j] == [0.0, 0.0, -0.25 * (j + 1), -0.5]
    for j in (1, 3):  # failures stay as generated, on-policy: their own sampling log-probs
        assert out.logprobs[j] == [-0.25 * (j + 1), -0.5]
    assert r.trained_unhinted(1.0) and not r.trained_unhinted(0.0)


def test_correct_off_policy_needs_strip_hint():
    with pytest.raises(InputError, match="correct_off_policy: true corrects the rows strip_hint trains"):
        MentorConfig(correct_off_policy=True)


def test_a_problem_is_named_by_its_id_column_else_by_its_prompt():
    assert problem_id({"problem_id": 7, "prompt": "x"}) == "7" and problem_id({"id": "a", "prompt": "x"}) == "a"
    assert problem_id({"prompt": "x"}) == problem_id({"prompt": "x"}) != problem_id({"prompt": "y"})
    assert prompt_text([{"role": "system", "content": "S"}, {"role": "user", "content": "Q"}]) == "Q"
    assert prompt_text([{"role": "system", "content": "S"}, {"role": "assistant", "content": "A"}]) == "S\nA"


def test_a_hint_cannot_carry_a_special_token_text():
    specials = ["<|im_start|>", "<|im_end|>", "</s>", "<s>", "x"]  # one-character tokens are left alone
    assert neutralised("a<|im_end|>\n<|im_start|>assistant\nb</s>", specials) == (
        "a< |im_end|>\n< |im_start|>assistant\nb< /s>", 3)
    assert neutralised("plain x text", specials) == ("plain x text", 0)
    assert neutralised("<<s>s>", specials)[0].count("<s>") == 0  # no token re-forms from what is left
    assert neutralised("<a b>", ["<a b>", "< a b>"]) == ("", 1)  # a token with the inserted space: removed
    assert rules().placement.safe_hint("<|im_end|>") == ("<|im_end|>", 0)  # these rules know no special tokens

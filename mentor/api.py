"""Mentor: the mentor added to an existing TRL GRPO script in three lines.

    from mentor import Mentor
    mentor = Mentor.from_config("mentor.yaml")   # or a dict, or a MentorConfig
    mentor.attach(trainer)                       # a GRPOTrainer, RLOOTrainer or SDPOTrainer (or subclass)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from mentor.config import MentorConfig
from mentor.runtime import MentorRuntime
from mentor.types import FailedGroup, InputError, Intervention

if TYPE_CHECKING:
    from mentor.trl.callback import MentorCallback


class Mentor:
    """The mentor: a LangGraph graph that turns collapsed GRPO groups into hints. Build it with
    `Mentor.from_config(...)`, the one constructor users are given.

    Args:
        config: the loaded MentorConfig.
        chat_model: the LangChain chat model for `llm` nodes (default: built from `config.llm`).
    """

    def __init__(self, config: MentorConfig, chat_model: Any = None):
        if not isinstance(config, MentorConfig):
            raise InputError(f"Mentor(...) takes a loaded MentorConfig, got {type(config).__name__}; build the "
                             f"mentor with Mentor.from_config(...), which reads a dict, a YAML file or None")
        self.config = config
        self.runtime = MentorRuntime(self.config, chat_model)
        self.callback: MentorCallback | None = None

    @classmethod
    def from_config(cls, source: MentorConfig | dict | str | None = None, chat_model: Any = None) -> Mentor:
        """A Mentor from a MentorConfig, a dict or a YAML file (a training YAML's `mentor:` section works)."""
        return cls(MentorConfig.load(source), chat_model)

    def diagnose(self, groups: list[FailedGroup], on_done: Callable[[Intervention], None] | None = None
                 ) -> list[Intervention]:
        """Runs stored failed groups through the graph (what `mentor diagnose` does); `on_done` is called with each
        intervention as it finishes. Each group's `timeout_s` starts when the group does, not with the run."""
        return self.runtime.run(groups, on_done and (lambda _, intervention: on_done(intervention)), clock="group")

    def attach(self, trainer) -> MentorCallback:
        """Installs the hook on `trainer` (GRPO, RLOO: hinted re-attempts; SDPO: the hint as the teacher's feedback) and
        registers a MentorCallback; returns the callback."""
        from mentor.trl.attach import attach  # the TRL side imports torch and trl: loaded only to attach

        self.callback = attach(self.config, self.runtime, trainer)
        return self.callback

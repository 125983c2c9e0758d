"""Error classes a node made up: a diagnosis naming classes its task does not have is warned about, once a task.

The `rules` classifier and the `llm` one (its schema's enum) keep to the task's taxonomy; an edited node need not,
and its made-up class would otherwise flow silently into the metrics (`mentor/error_class/<name>`) and the traces."""

from __future__ import annotations

import warnings

from mentor.types import Intervention


def warn_unknown_classes(intervention: Intervention, warned: set[str]) -> None:
    """Warns (UserWarning) the first time a task's diagnosis names a class outside its taxonomy; `warned` holds the
    tasks already warned about (one set per runtime)."""
    if intervention.task in warned:
        return
    try:
        from mentor.tasks import get_task

        taxonomy = set(get_task(intervention.task).taxonomy)
    except Exception:  # a task this process cannot load has no taxonomy to hold the classes to
        return
    named = set(intervention.diagnosis.error_classes) | {intervention.diagnosis.error_class}
    unknown = sorted(c for c in named - taxonomy if c != "unknown")  # "unknown": the default of no diagnosis
    if unknown:
        warned.add(intervention.task)
        warnings.warn(f"error classes {unknown} (group {intervention.problem_id}) are not classes of the "
                      f"'{intervention.task}' task, whose classes are {sorted(taxonomy)}; a node made them up (they "
                      f"are kept, counted under their own names). Warned once per task", UserWarning, stacklevel=2)

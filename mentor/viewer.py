"""The trace viewer: `mentor traces view RUN_DIR` and `mentor traces serve RUN_DIR`."""


def add_traces_command(sub) -> None:
    """Registers `mentor traces ...` on the CLI's sub-parsers."""

"""`mentor demo`: the offline CPU lab that shows zero-reward collapse and the mentor's recovery."""


def add_demo_command(sub) -> None:
    """Registers `mentor demo` on the CLI's sub-parsers."""

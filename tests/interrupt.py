"""Child processes that a test interrupts with SIGINT, as a user's Ctrl-C would."""

import signal


def default_sigint() -> None:
    """A `preexec_fn` restoring SIGINT's default: a shell without job control (a CI script run as `cmd &`) starts its
    children with SIGINT ignored, Python then installs no KeyboardInterrupt handler, and the test's SIGINT is lost."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)

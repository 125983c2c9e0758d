"""Child processes that a test interrupts with SIGINT, as a user's Ctrl-C would, or SIGTERM, as `kill PID` would."""

import signal
import threading
import time

HANG_GUARD_S = 900  # only for a hang: the interrupt tests wait on events (a line of output, a file's lines), not time


def default_sigint() -> None:
    """A `preexec_fn` restoring SIGINT's default: a shell without job control (a CI script run as `cmd &`) starts its
    children with SIGINT ignored, Python then installs no KeyboardInterrupt handler, and the test's SIGINT is lost."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class StreamLines:
    """A subprocess's stdout or stderr read line by line in a thread, so a test can wait for a line rather than for
    seconds."""

    def __init__(self, stream):
        self.lines: list[str] = []
        self.changed = threading.Condition()
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            with self.changed:
                self.lines.append(line)
                self.changed.notify_all()
        with self.changed:
            self.lines.append("")  # the end: the stream closed
            self.changed.notify_all()

    def wait_for(self, text: str) -> bool:
        """Whether a line holding `text` came before the stream closed (or the hang guard passed)."""
        with self.changed:
            return self.changed.wait_for(lambda: any(text in x for x in self.lines) or "" in self.lines, HANG_GUARD_S) \
                and any(text in x for x in self.lines)

    def text(self, final: bool = False) -> str:
        """What came so far; `final`: all of it, once the process has exited."""
        if final:
            self.thread.join(timeout=HANG_GUARD_S)
        with self.changed:
            return "".join(self.lines)


def wait_until(condition) -> bool:
    """Polls `condition` (a file the process writes) until it holds, with the hang guard alone as a bound."""
    deadline = time.monotonic() + HANG_GUARD_S
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True

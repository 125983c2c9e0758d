"""A bounded pool of pre-started sandbox workers. The training process only talks JSON to them: it
never imports, compiles or execs model-written code."""

from __future__ import annotations

import json
import os
import random
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from queue import Queue
from typing import Any, Iterable

from mentor.sandbox.seccomp import build_filter
from mentor.sandbox.tiers import TierInfo, bwrap_args, detect_tier, readable_by_others, worker_source

STATUSES = ("ok", "error", "timeout", "killed")
SECCOMP_FILTER = build_filter()  # None on a machine without a system call table in seccomp.py


@dataclass
class ExecutionResult:
    """What one program did.

    Attributes:
        status: `ok` (exit 0), `error` (non-zero exit, e.g. an uncaught exception), `timeout` (wall-clock
            or CPU limit) or `killed` (a signal: memory, output or file-size limit, a crash, or a dead
            sandbox worker; `reason` says which).
        exit_code: the exit status, or minus the signal number; None when the worker died.
        stdout, stderr: decoded text, at most `max_output` bytes each (head and tail kept).
        duration_s: wall-clock time of the program process.
        tier: the isolation tier it ran under.
        reason: why it was stopped, when it was.
        truncated: True when stdout or stderr lost bytes.
    """

    status: str
    exit_code: int | None
    stdout: str
    stderr: str
    duration_s: float
    tier: str
    reason: str = ""
    truncated: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _minimal_env() -> dict[str, str]:
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp"}


class _Worker:
    """One pre-started worker process and its slot cgroup; used by one thread at a time."""

    _READY_TIMEOUT = 60.0

    def __init__(self, pool: SandboxPool, index: int):
        self.pool = pool
        self.index = index
        self.proc: subprocess.Popen | None = None
        self.buf = b""
        self.seq = 0
        self.cg = pool.tier.cgroups.slot(f"{pool.pool_seq}-{index}") if pool.tier.cgroups else None
        self.base: str | None = None

    # --- life cycle ---------------------------------------------------------------------------------
    def _command(self) -> tuple[list[str], dict[str, Any]]:
        tier = self.pool.tier
        config: dict[str, Any] = {"pidns": True}
        if SECCOMP_FILTER is not None:
            config["seccomp"] = SECCOMP_FILTER.hex()
        if tier.bwrap:
            config.update(base="/tmp", scratch=["/tmp", "/dev/shm"], private_mounts=True)
            prefix = bwrap_args(tier.bwrap, tier.python, tier.bwrap_extra, self.pool.scratch_mb)
        else:
            self.base = os.path.join(self.pool.scratch_dir, f"slot-{self.index}")
            os.makedirs(self.base, exist_ok=True)
            config.update(base=self.base, scratch=[self.base])
            if os.geteuid() == 0:
                config.update(unshare_net=True)
                if readable_by_others(tier.python):
                    config.update(uid=self.pool.base_uid + self.index)
                    os.chown(self.base, 0, 0)
                    os.chmod(self.base, 0o711)
            else:
                config.update(pidns=False)
            prefix = []
        if self.pool.prelude:
            config["prelude"] = self.pool.prelude
        cmd = prefix + [tier.python, "-I", "-S", "-c", worker_source(), json.dumps(config)]
        return cmd, config

    def start(self) -> None:
        cmd, _ = self._command()
        env = _minimal_env()
        if self.cg is not None:
            self.cg.set_limits(self.pool.memory_mb + self.pool.memory_overhead_mb,
                               self.pool.max_procs + self.pool.procs_overhead)
            env["MENTOR_CG"] = " ".join(self.cg.procs_files)
            cmd = ["/bin/sh", "-c", 'for f in $MENTOR_CG; do echo $$ > "$f" || exit 97; done; '
                   'echo -900 > /proc/self/oom_score_adj 2>/dev/null; exec "$@"', "sh"] + cmd
        debug = os.environ.get("MENTOR_SANDBOX_DEBUG")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=None if debug else subprocess.DEVNULL, env=env,
                                     start_new_session=True, close_fds=True, cwd="/")
        self.buf = b""

    def wait_ready(self) -> None:
        try:
            line = self._read_line(time.monotonic() + self._READY_TIMEOUT)
            ready = json.loads(line)
            if not ready.get("ready"):
                raise ValueError(line)
        except Exception as e:
            code = self.proc.poll() if self.proc else None
            self.stop()
            raise RuntimeError(f"sandbox worker failed to start (tier {self.pool.tier.name}, exit {code}): {e}; "
                               "set MENTOR_SANDBOX_DEBUG=1 to see its stderr") from e

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        if self.cg is not None:
            for _ in range(100):
                pids = self.cg.pids()
                if not pids:
                    break
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                time.sleep(0.002)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for f in (proc.stdin, proc.stdout):
            try:
                f.close()
            except OSError:
                pass

    def close(self) -> None:
        self.stop()
        if self.cg is not None:
            self.cg.remove()
        if self.base:
            shutil.rmtree(self.base, ignore_errors=True)

    # --- one program ----------------------------------------------------------------------------------
    def _read_line(self, deadline: float) -> bytes:
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("sandbox worker did not answer")
            ready, _, _ = select.select([fd], [], [], remaining)
            if ready:
                data = os.read(fd, 1 << 16)
                if not data:
                    raise EOFError("sandbox worker exited")
                self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def run(self, program: str, timeout_s: float, memory_mb: int, max_output: int) -> ExecutionResult:
        pool = self.pool
        if self.proc is None or self.proc.poll() is not None:
            self.stop()
            self.start()
            self.wait_ready()
        if self.cg is not None:
            self.cg.set_limits(memory_mb + pool.memory_overhead_mb, pool.max_procs + pool.procs_overhead)
        self.seq += 1
        req = {"id": self.seq, "program": program, "timeout_s": float(timeout_s), "memory_mb": int(memory_mb),
               "max_output": int(max_output), "hard_output": pool.hard_output, "max_file_mb": pool.max_file_mb,
               "max_procs": pool.max_procs, "scratch_mb": pool.scratch_mb}
        try:
            self.proc.stdin.write((json.dumps(req) + "\n").encode())
            self.proc.stdin.flush()
            deadline = time.monotonic() + float(timeout_s) + pool.grace_s
            while True:
                resp = json.loads(self._read_line(deadline))
                if resp.get("id") == self.seq:
                    break
        except (OSError, ValueError, EOFError, TimeoutError) as e:
            self.stop()
            return ExecutionResult("killed", None, "", "", 0.0, pool.tier.name,
                                   reason=f"sandbox worker failed: {e}")
        if resp.get("supervisor_failed"):
            self.stop()  # restarted on the next call
        truncated = resp.get("stdout_bytes", 0) > max_output or resp.get("stderr_bytes", 0) > max_output
        return ExecutionResult(resp["status"], resp.get("exit_code"), resp.get("stdout", ""),
                               resp.get("stderr", ""), float(resp.get("duration_s", 0.0)), pool.tier.name,
                               resp.get("reason", ""), truncated)


class SandboxPool:
    """A bounded pool of sandbox workers. Thread-safe; `map` runs programs concurrently.

    Args:
        workers: how many programs run at once (default `MENTOR_SANDBOX_WORKERS`, else min(4, CPUs)).
        tier: force an isolation tier (see `mentor.sandbox.tiers`); default: the strongest available.
        allow_weak: accept the weak `rlimits` tier (default `MENTOR_SANDBOX_ALLOW_WEAK`).
        python: the interpreter programs run with (default: the base interpreter, standard library only).
        max_procs: processes (and threads) one program may have at once.
        max_file_mb: the largest file a program may write.
        hard_output: bytes of output after which a program is killed.
        scratch_mb: size of the sandbox's private /tmp (bubblewrap tiers).
        prelude: trusted Python source each worker runs once at start as module `mentor_prelude`, which
            programs can import for free (default None: no prelude; the code task passes its test harness,
            so that its 20 ms compile is not paid per program).
        start: start the workers now rather than at first use.
    """

    _seq = 0
    _seq_lock = threading.Lock()

    def __init__(self, workers: int | None = None, *, tier: str | None = None, allow_weak: bool | None = None,
                 python: str | None = None, max_procs: int = 64, max_file_mb: int = 16,
                 hard_output: int = 16 << 20, scratch_mb: int = 1024, memory_mb: int = 512,
                 prelude: str | None = None, start: bool = True):
        self.tier: TierInfo = detect_tier(tier, allow_weak, python)
        if workers is None:
            workers = int(os.environ.get("MENTOR_SANDBOX_WORKERS") or min(4, os.cpu_count() or 1))
        if workers < 1:
            raise ValueError("workers must be at least 1")
        with SandboxPool._seq_lock:
            SandboxPool._seq += 1
            self.pool_seq = SandboxPool._seq
        self.size = workers
        self.max_procs = max_procs
        self.max_file_mb = max_file_mb
        self.hard_output = hard_output
        self.scratch_mb = scratch_mb
        self.memory_mb = memory_mb
        self.prelude = prelude
        self.memory_overhead_mb = 256
        self.procs_overhead = 16
        self.grace_s = 15.0
        self.base_uid = 100000 + 16 * random.randrange(0, 50000)
        self.scratch_dir = tempfile.mkdtemp(prefix="mentor-sandbox-") if self.tier.bwrap is None else ""
        if self.scratch_dir:
            os.chmod(self.scratch_dir, 0o711)
        self._workers = [_Worker(self, i) for i in range(workers)]
        self._idle: Queue[_Worker] = Queue()
        for w in self._workers:
            self._idle.put(w)
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._closed = False
        if start:
            self.start()

    def start(self) -> None:
        """Starts every worker that is not running (in parallel)."""
        pending = [w for w in self._workers if w.proc is None]
        for w in pending:
            w.start()
        for w in pending:
            w.wait_ready()

    def execute(self, program: str, timeout_s: float = 5, memory_mb: int = 512,
                max_output: int = 64 << 10) -> ExecutionResult:
        """Runs `program` (Python source) in a sandbox; see `mentor.sandbox.execute`."""
        if self._closed:
            raise RuntimeError("this SandboxPool is closed")
        if not isinstance(program, str):
            raise TypeError(f"program must be a str, got {type(program).__name__}")
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        if memory_mb <= 0:
            raise ValueError(f"memory_mb must be positive, got {memory_mb}")
        worker = self._idle.get()
        try:
            return worker.run(program, timeout_s, memory_mb, max_output)
        finally:
            self._idle.put(worker)

    def map(self, programs: Iterable[str], timeout_s: float = 5, memory_mb: int = 512,
            max_output: int = 64 << 10) -> list[ExecutionResult]:
        """Runs many programs, at most `workers` at once; results in the order of `programs`."""
        programs = list(programs)
        if not programs:
            return []
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(self.size, thread_name_prefix="mentor-sandbox")
        return list(self._executor.map(lambda p: self.execute(p, timeout_s, memory_mb, max_output), programs))

    def process_count(self) -> int | None:
        """Processes now in the pool's cgroups (workers included); None without cgroups."""
        if self.tier.cgroups is None:
            return None
        return sum(w.cg.process_count() for w in self._workers if w.cg is not None)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._executor is not None:
            self._executor.shutdown(wait=True)
        for w in self._workers:
            w.close()
        if self.scratch_dir:
            shutil.rmtree(self.scratch_dir, ignore_errors=True)

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

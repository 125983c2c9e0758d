"""Isolation tiers, strongest first, and their detection at start-up.

| tier           | what isolates                                                                        |
|----------------|--------------------------------------------------------------------------------------|
| `bwrap+cgroup` | bubblewrap (user, PID, network, IPC, UTS, mount and cgroup namespaces; read-only     |
|                | system files; no /sys, no host /tmp, no home), a fresh PID namespace per program,    |
|                | a per-slot cgroup (`pids.max`, memory limit), rlimits, no capabilities.              |
|                | Every tier: the seccomp filter of seccomp.py (no keyring, io_uring, nested user      |
|                | namespace or AF_VSOCK) on each program.                                              |
| `bwrap`        | the same without the cgroup: as root a fork bomb runs until the wall-clock timeout   |
|                | kills its namespace, and memory is bounded per process only (RLIMIT_AS).             |
| `rlimits`      | weak, opt-in: setsid, rlimits, empty run directory, minimal environment, a subreaper |
|                | that kills leftovers; as root also a per-slot uid (so RLIMIT_NPROC and file          |
|                | permissions apply), no network (a network namespace) and the slot cgroup when        |
|                | available. Files the uid may write (world-writable dirs) stay writable.              |

`MENTOR_SANDBOX_TIER` forces a tier (an error if this machine lacks it); `MENTOR_SANDBOX_ALLOW_WEAK=1`
(or `allow_weak=True`) accepts the `rlimits` tier when nothing stronger exists.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field

from mentor.sandbox.cgroups import CgroupManager

TIERS = ("bwrap+cgroup", "bwrap", "rlimits")
WEAK_TIERS = ("rlimits",)

WORKER_SOURCE_PATH = os.path.join(os.path.dirname(__file__), "_worker.py")


class SandboxUnavailable(RuntimeError):
    """No isolation tier acceptable to the caller is available on this machine."""


@dataclass
class TierInfo:
    name: str
    python: str
    bwrap: str | None = None
    bwrap_extra: list[str] = field(default_factory=list)
    cgroups: CgroupManager | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def weak(self) -> bool:
        return self.name in WEAK_TIERS


def readable_by_others(python: str) -> bool:
    """Whether a process of another uid can run `python` (its prefix may sit under a private /root)."""
    prefix = os.path.dirname(os.path.dirname(os.path.realpath(python)))
    path = prefix
    while True:
        try:
            if not os.stat(path).st_mode & 0o001:
                return False
        except OSError:
            return False
        if path == "/":
            return True
        path = os.path.dirname(path)


def base_python() -> str:
    """The interpreter the workers run: the base interpreter behind a virtual environment, so programs
    see only the standard library, never the trainer's site-packages."""
    exe = getattr(sys, "_base_executable", None) or sys.executable
    return os.path.realpath(exe)


def _python_prefix(python: str) -> str:
    return os.path.dirname(os.path.dirname(os.path.realpath(python)))


def bwrap_args(bwrap: str, python: str, extra: list[str] | None = None, scratch_mb: int = 1024) -> list[str]:
    """The bubblewrap command line that wraps a worker (without the command itself)."""
    args = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-add", "CAP_SYS_ADMIN"]
    args += list(extra or [])
    args += ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    prefix = _python_prefix(python)
    if not (prefix + "/").startswith("/usr/"):
        args += ["--ro-bind", prefix, prefix]
    for f in ("/etc/ld.so.cache", "/etc/localtime", "/etc/passwd", "/etc/group"):
        if os.path.exists(f):
            args += ["--ro-bind", f, f]
    size = str(scratch_mb << 20)
    args += ["--proc", "/proc", "--dev", "/dev", "--size", size, "--tmpfs", "/tmp",
             "--size", size, "--tmpfs", "/dev/shm", "--chdir", "/tmp", "--clearenv",
             "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/tmp",
             "--setenv", "TMPDIR", "/tmp", "--setenv", "LANG", "C.UTF-8", "--"]
    return args


_PROBE = r"""
import ctypes, json, os, socket
libc = ctypes.CDLL(None, use_errno=True)
out = {"uid": os.getuid()}
out["pidns"] = libc.unshare(0x20000000) == 0
if out["pidns"]:
    pid = os.fork()
    if pid == 0:
        os._exit(0 if os.getpid() == 1 else 3)
    out["pid1"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
try:
    socket.create_connection(("127.0.0.1", 9), timeout=0.2)
    out["net"] = True
except OSError as e:
    out["net"] = False
print(json.dumps(out))
"""


def _probe_bwrap(bwrap: str, python: str, extra: list[str]) -> tuple[bool, str]:
    cmd = bwrap_args(bwrap, python, extra) + [python, "-I", "-S", "-c", _PROBE]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, str(e)
    if p.returncode != 0:
        return False, (p.stderr or p.stdout).strip()[-300:]
    try:
        info = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return False, f"unexpected probe output {p.stdout[-200:]!r}"
    if not info.get("pidns") or not info.get("pid1"):
        return False, "bubblewrap runs but a PID namespace cannot be created inside it"
    return True, ""


_cache: dict[tuple, TierInfo] = {}


def detect_tier(tier: str | None = None, allow_weak: bool | None = None, python: str | None = None,
                use_cgroups: bool = True) -> TierInfo:
    """The strongest tier this machine offers (or `tier`, checked). Raises SandboxUnavailable when only
    the weak tier exists and it was not allowed."""
    tier = tier or os.environ.get("MENTOR_SANDBOX_TIER") or None
    if allow_weak is None:
        allow_weak = os.environ.get("MENTOR_SANDBOX_ALLOW_WEAK", "") not in ("", "0", "false", "no")
    if tier is not None and tier not in TIERS:
        raise SandboxUnavailable(f"unknown sandbox tier {tier!r}; choose one of {list(TIERS)}")
    python = python or base_python()
    key = (tier, allow_weak, python, use_cgroups)
    if key in _cache:
        return _cache[key]
    notes: list[str] = []
    requested = tier
    cg = CgroupManager() if use_cgroups else None
    if cg is not None and not cg.available:
        notes.append(f"no per-run cgroup ({cg.error})")
        cg = None
    bwrap = shutil.which("bwrap")
    bwrap_ok, extra = False, []
    if tier in (None, "bwrap+cgroup", "bwrap"):
        if bwrap is None:
            notes.append("bubblewrap not installed (Debian/Ubuntu: apt-get install bubblewrap)")
        else:
            for candidate in (["--disable-userns"], []):
                bwrap_ok, why = _probe_bwrap(bwrap, python, candidate)
                if bwrap_ok:
                    extra = candidate
                    break
            if not bwrap_ok:
                notes.append(f"bubblewrap unusable here: {why} (unprivileged user namespaces may be "
                             "blocked by AppArmor, a seccomp profile or sysctl)")
    if tier is None:
        if bwrap_ok and cg is not None:
            tier = "bwrap+cgroup"
        elif bwrap_ok:
            tier = "bwrap"
        else:
            tier = "rlimits"
    if tier == "bwrap+cgroup" and not (bwrap_ok and cg is not None):
        raise SandboxUnavailable("sandbox tier 'bwrap+cgroup' requested but unavailable: " + "; ".join(notes))
    if tier == "bwrap" and not bwrap_ok:
        raise SandboxUnavailable("sandbox tier 'bwrap' requested but unavailable: " + "; ".join(notes))
    if tier == "bwrap":
        if cg is not None:
            cg.cleanup()
        cg = None
        if os.geteuid() == 0:
            notes.append("as root without a cgroup, fork bombs are stopped only by the wall-clock timeout")
    if tier == "rlimits" and not allow_weak:
        why = "; ".join(notes if requested is None else ["the rlimits tier was asked for by name", *notes])
        raise SandboxUnavailable(
            "no strong sandbox tier is in use (" + why + "). Install bubblewrap with working "
            "user namespaces, or accept the weak rlimits-only tier (no file-system or network isolation "
            "for non-root users, see docs/sandbox.md) with MENTOR_SANDBOX_ALLOW_WEAK=1 or allow_weak=True.")
    if tier == "rlimits" and os.geteuid() == 0:
        if not readable_by_others(python):
            notes.append(f"programs run as root: the interpreter {python} is not readable by other uids")
    info = TierInfo(tier, python, bwrap if tier != "rlimits" else None, extra, cg, notes)
    _cache[key] = info
    return info


def worker_source() -> str:
    with open(WORKER_SOURCE_PATH) as f:
        return f.read()

"""The sandbox worker: a pre-started interpreter that forks once per program.

This file is run as `python -I -S -c <this source> <config json>`, inside the sandbox (bubblewrap) or,
in the weak tier, directly. It imports nothing from `mentor` and only the standard library, so it works
with a bare interpreter and no project files mounted.

Protocol (JSON lines): the pool writes one request per line on the worker's stdin, and reads one
response per line on its stdout. The worker writes `{"ready": ...}` once at start.

Per request the worker enters a fresh PID namespace for its next child (unshare, then setns back),
creates an empty run directory and pipes, and forks the program process P, which is PID 1 of that
namespace, so it cannot name (signal, ptrace) the worker and every process it spawns dies with it. P
sets its limits, drops every capability (or, in the weak tier as root, switches to a per-slot uid),
closes all other descriptors and runs the program. The worker enforces the wall-clock timeout and the
output caps, kills P (the kernel then kills the rest of the namespace), wipes the scratch directories
and writes the response. One fork per program: forks of a warm interpreter dominate the cost.
"""

import ctypes
import gc
import json
import os
import resource
import select
import shutil
import signal
import sys
import time

CONFIG = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
CLONE_NEWIPC = 0x08000000
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
PR_SET_DUMPABLE = 4
PR_SET_PDEATHSIG = 1
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
CLONE_NEWNS = 0x00020000
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_BIND = 4096
SYS_CAPSET = 126  # x86_64; aarch64 is 91
if os.uname().machine in ("aarch64", "arm64"):
    SYS_CAPSET = 91

_libc = ctypes.CDLL(None, use_errno=True)

# Modules that programs commonly import: loaded once here, so a forked program gets them for free.
# Each preloaded module makes every fork a little slower, so only the common ones (HumanEval's).
PRELOAD = ("math", "re", "collections", "itertools", "functools", "heapq", "bisect", "string", "random",
           "typing", "copy", "ast")
for _name in PRELOAD + tuple(CONFIG.get("preload", ())):
    try:
        __import__(_name)
    except Exception:  # a module missing from this interpreter is not fatal
        pass
import builtins  # noqa: E402
import types  # noqa: E402

if CONFIG.get("prelude"):  # trusted helpers (the code task's test harness), compiled once per worker
    _prelude = types.ModuleType("mentor_prelude")
    exec(compile(CONFIG["prelude"], "<mentor_prelude>", "exec"), _prelude.__dict__)
    sys.modules["mentor_prelude"] = _prelude
import linecache  # noqa: E402
import random  # noqa: E402
import traceback  # noqa: E402


def _unshare(flags):
    return _libc.unshare(ctypes.c_int(flags)) == 0


def _private_mounts(req):
    """In P, still privileged in the sandbox's user namespace: a mount namespace of its own with a
    /proc that shows only its PID namespace (no worker, no bubblewrap process to read or trace) and a
    fresh /tmp and /dev/shm that vanish with it."""
    if not _unshare(CLONE_NEWNS):
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS) failed")
    mount = _libc.mount
    mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p)
    if mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        raise OSError(ctypes.get_errno(), "making mounts private failed")
    if mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) != 0:
        raise OSError(ctypes.get_errno(), "mounting /proc failed")
    size = ("size=%dm,mode=1777" % int(req.get("scratch_mb", 256))).encode()
    for path in (b"/tmp", b"/dev/shm"):
        if mount(b"tmpfs", path, b"tmpfs", MS_NOSUID | MS_NODEV, size) != 0:
            raise OSError(ctypes.get_errno(), "mounting a tmpfs failed")
    for path in (b"/proc/keys", b"/proc/key-users"):  # the host's key names and per-user key counts
        if os.path.exists(path) and mount(b"/dev/null", path, None, MS_BIND, None) != 0:
            raise OSError(ctypes.get_errno(), "hiding %s failed" % path.decode())


def _drop_capabilities():
    """No capability left in any set (ambient ones go with the permitted set); no privilege regained by exec."""
    _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    data = (Data * 2)()
    if _libc.syscall(SYS_CAPSET, ctypes.byref(Header(0x20080522, 0)), data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


def _install_seccomp(program):
    """The pool's seccomp filter (mentor/sandbox/seccomp.py: no keyring, io_uring, nested user namespace or
    AF_VSOCK) on this process and everything it spawns; needs no_new_privs, set by _drop_capabilities."""

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    code = ctypes.create_string_buffer(program, len(program))
    prog = Prog(len(program) // 8, ctypes.addressof(code))
    if _libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(prog), ctypes.c_ulong(0),
                   ctypes.c_ulong(0)) != 0:
        raise OSError(ctypes.get_errno(), "installing the seccomp filter failed")


# ----------------------------------------------------------------------------------------------------
# The program process


def _run_program(req, run_dir, out_w, err_w):
    """In P: confine, then run the program like `python -c`. Never returns."""
    try:
        os.setsid()
    except OSError:
        pass
    devnull = os.open("/dev/null", os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    os.closerange(3, 1 << 16)
    if CONFIG.get("private_mounts"):
        _private_mounts(req)
        os.makedirs(run_dir, exist_ok=True)
    os.chdir(run_dir)
    try:
        with open("/proc/self/oom_score_adj", "w") as f:  # the first one the OOM killer picks
            f.write("1000")
    except OSError:
        pass
    timeout = float(req["timeout_s"])
    cpu = int(timeout) + 2
    mem = int(req["memory_mb"]) << 20
    fsize = int(req["max_file_mb"]) << 20
    nproc = int(req["max_procs"])
    for limit, value in ((resource.RLIMIT_CPU, (cpu, cpu + 1)), (resource.RLIMIT_AS, (mem, mem)),
                         (resource.RLIMIT_DATA, (mem, mem)), (resource.RLIMIT_FSIZE, (fsize, fsize)),
                         (resource.RLIMIT_NPROC, (nproc, nproc)), (resource.RLIMIT_CORE, (0, 0)),
                         (resource.RLIMIT_NOFILE, (256, 256))):
        try:
            resource.setrlimit(limit, value)
        except (ValueError, OSError):
            pass
    uid = CONFIG.get("uid")
    if uid is not None:  # weak tier as root: a per-slot uid, so rlimits and file permissions apply
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    _libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    _drop_capabilities()
    if CONFIG.get("seccomp"):
        _install_seccomp(bytes.fromhex(CONFIG["seccomp"]))
    random.seed()
    sys.argv = ["<program>"]
    code = 0
    program = req["program"]
    linecache.cache["<program>"] = (len(program), None, program.splitlines(True), "<program>")
    try:
        exec(compile(program, "<program>", "exec"), {"__name__": "__main__", "__builtins__": builtins})
    except SystemExit as e:
        if e.code is None:
            code = 0
        elif isinstance(e.code, int):
            code = e.code & 0xFF
        else:
            try:
                sys.stderr.write(str(e.code) + "\n")
            except BaseException:
                pass
            code = 1
    except BaseException as e:
        try:  # the traceback starts at the program, as with `python -c`
            traceback.print_exception(type(e), e, e.__traceback__.tb_next)
        except BaseException:
            pass
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    os._exit(code)


# ----------------------------------------------------------------------------------------------------
# The supervisor (the worker itself)


class _Capture:
    """Keeps the first and last `limit // 2` bytes of a stream and counts the rest."""

    def __init__(self, limit):
        self.half = max(1, limit // 2)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data):
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.half:
                del self.tail[: len(self.tail) - self.half]

    def text(self):
        kept = len(self.head) + len(self.tail)
        if self.total > kept:
            mid = "\n...[%d bytes truncated]...\n" % (self.total - kept)
            return self.head.decode("utf-8", "replace") + mid + self.tail.decode("utf-8", "replace")
        return (self.head + self.tail).decode("utf-8", "replace")


def _kill_descendants():
    """Without a PID namespace: kill whatever was re-parented to this subreaper, until nothing is left."""
    uid = CONFIG.get("uid")
    if uid is not None:  # every process of the slot's uid belongs to this run
        pid = os.fork()
        if pid == 0:
            try:
                os.setgid(uid)
                os.setuid(uid)
                for _ in range(50):
                    os.kill(-1, signal.SIGKILL)  # all of the uid's processes but this one
            except OSError:
                pass
            os._exit(0)
        os.waitpid(pid, 0)
    for _ in range(1000):
        children = set()
        try:
            for tid in os.listdir("/proc/self/task"):
                with open("/proc/self/task/%s/children" % tid) as f:
                    children.update(int(p) for p in f.read().split())
        except OSError:
            pass
        while True:  # reap
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                pid = 0
            if pid == 0:
                break
            children.discard(pid)
        if not children:
            return
        for pid in children:
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        time.sleep(0.001)


def _wipe(path):
    try:
        names = os.listdir(path)
    except OSError:
        return
    for name in names:
        full = os.path.join(path, name)
        if os.path.isdir(full) and not os.path.islink(full):
            shutil.rmtree(full, ignore_errors=True)
        else:
            try:
                os.unlink(full)
            except OSError:
                pass


def _probe_pidns(own):
    """How this worker can give each program a fresh PID namespace, tried in a throw-away child (a
    failed setns would leave the worker unable to fork): "setns" (unshare, fork, setns back: one fork
    per program), "double" (fork a helper that unshares: two forks; needed where the namespace we run
    in belongs to a user namespace we hold no capability in, as under unprivileged bubblewrap), or
    "none"."""
    pid = os.fork()
    if pid == 0:
        code = 4
        try:
            if _unshare(CLONE_NEWPID):
                code = 3
                child = os.fork()
                if child == 0:
                    os._exit(0)
                ok = _libc.setns(own, CLONE_NEWPID) == 0
                os.waitpid(child, 0)
                code = 0 if ok else 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return {0: "setns", 3: "double"}.get(code, "none")


def _supervise(req, state):
    """Runs one program and returns the response."""
    if state["pidns_mode"] != "double":
        return _run_once(req, state)
    state["runs"] += 1  # the helper's own count is lost with it
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the helper: a fresh PID namespace for its one child
        code = 0
        try:
            os.close(r)
            _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            resp = _run_once(req, state, fresh_pidns=_unshare(CLONE_NEWPID))
            _write_all(w, json.dumps(resp).encode())
        except BaseException:
            code = 70
        os._exit(code)
    os.close(w)
    chunks = []
    while True:
        data = os.read(r, 1 << 16)
        if not data:
            break
        chunks.append(data)
    os.close(r)
    os.waitpid(pid, 0)
    return json.loads(b"".join(chunks))


def _run_once(req, state, fresh_pidns=False):
    """Runs one program and returns the response. The program process P is the only fork.

    fresh_pidns: whether this process has already unshared a PID namespace that P will be PID 1 of (the
    "double" mode's helper has; default False). In the "setns" mode it is unshared here instead."""
    if state["pidns_mode"] == "setns":
        fresh_pidns = _unshare(CLONE_NEWPID)
    state["runs"] += 1
    run_dir = os.path.join(state["base"], "run-%d" % state["runs"])
    os.mkdir(run_dir, 0o700)
    if CONFIG.get("uid") is not None:
        os.chown(run_dir, CONFIG["uid"], CONFIG["uid"])
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            _run_program(req, run_dir, out_w, err_w)
        finally:
            os._exit(127)
    if fresh_pidns and state["pidns_mode"] == "setns":  # back to our own namespace (unshare works once per namespace)
        if _libc.setns(state["own_pidns"], CLONE_NEWPID) != 0:
            raise OSError(ctypes.get_errno(), "setns back to the worker's PID namespace failed")
    os.close(out_w)
    os.close(err_w)
    limit = int(req["max_output"])
    hard = int(req["hard_output"])
    caps = {out_r: _Capture(limit), err_r: _Capture(limit)}
    pidfd = os.pidfd_open(pid)
    deadline = t0 + float(req["timeout_s"])
    poller = select.poll()
    for fd in (out_r, err_r, pidfd):
        poller.register(fd, select.POLLIN)
    open_fds = {out_r, err_r}
    exited = False
    reason = ""
    killed_by_us = None
    t1 = None
    while open_fds or not exited:
        now = time.monotonic()
        if not exited and now >= deadline and killed_by_us is None:
            killed_by_us = "timeout"
            reason = "wall-clock timeout of %gs" % float(req["timeout_s"])
            _kill_program(pid, fresh_pidns)
        if exited and not fresh_pidns and open_fds:
            _kill_descendants()  # a detached child may still hold the pipes
        wait_ms = 50 if exited or killed_by_us else max(1, int((deadline - now) * 1000) + 1)
        for fd, _ in poller.poll(wait_ms):
            if fd == pidfd:
                t1 = time.monotonic()
                exited = True
                poller.unregister(pidfd)
                continue
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b""
            if not data:
                poller.unregister(fd)
                open_fds.discard(fd)
                continue
            caps[fd].add(data)
            if caps[fd].total > hard and killed_by_us is None:
                killed_by_us = "output"
                reason = "output limit of %d bytes exceeded" % hard
                _kill_program(pid, fresh_pidns)
    for fd in (out_r, err_r, pidfd):
        os.close(fd)
    _, wstatus = os.waitpid(pid, 0)
    if t1 is None:
        t1 = time.monotonic()
    if not fresh_pidns:
        _kill_descendants()
    if os.WIFEXITED(wstatus):
        exit_code = os.WEXITSTATUS(wstatus)
        sig = None
    else:
        sig = os.WTERMSIG(wstatus)
        exit_code = -sig
    if killed_by_us == "timeout":
        status = "timeout"
    elif killed_by_us == "output":
        status = "killed"
    elif sig is not None:
        status = "timeout" if sig == signal.SIGXCPU else "killed"
        reason = {signal.SIGKILL: "killed (memory limit or OOM killer)", signal.SIGXCPU: "CPU time limit",
                  signal.SIGXFSZ: "file size limit", signal.SIGSEGV: "segmentation fault (stack overflow?)"
                  }.get(sig, "killed by signal %d" % sig)
    else:
        status = "ok" if exit_code == 0 else "error"
    shutil.rmtree(run_dir, ignore_errors=True)
    for scratch in CONFIG.get("scratch", ()):  # what the program wrote elsewhere does not outlive it
        _wipe(scratch)
    return {
        "id": req["id"], "status": status, "exit_code": exit_code, "signal": sig,
        "stdout": caps[out_r].text(), "stderr": caps[err_r].text(),
        "stdout_bytes": caps[out_r].total, "stderr_bytes": caps[err_r].total,
        "duration_s": round(t1 - t0, 6), "reason": reason, "fresh_pidns": fresh_pidns,
    }


def _kill_program(pid, fresh_pidns):
    try:
        os.kill(pid, signal.SIGKILL)  # PID 1 of its namespace: the kernel kills all the others
    except OSError:
        pass
    if not fresh_pidns:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


# ----------------------------------------------------------------------------------------------------
# The worker loop


def main():
    ctl_in = os.dup(0)
    ctl_out = os.dup(1)
    devnull = os.open("/dev/null", os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)
    # Not dumpable: a program (same uid in the sandbox) cannot read or write this process's memory
    # through /proc, nor read its environment or descriptors.
    _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    if CONFIG.get("unshare_net"):  # weak tier as root: at least no network
        _unshare(CLONE_NEWNET | CLONE_NEWIPC)
    # pidns_mode: how each program gets a fresh PID namespace, "setns", "double" or "none" (_probe_pidns)
    state = {"pidns_mode": "none", "runs": 0, "base": CONFIG.get("base", "/tmp")}
    if CONFIG.get("pidns"):
        state["own_pidns"] = os.open("/proc/self/ns/pid", os.O_RDONLY)
        state["pidns_mode"] = _probe_pidns(state["own_pidns"])
    if state["pidns_mode"] == "none":
        _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    os.makedirs(state["base"], exist_ok=True)
    os.chdir(state["base"])
    reader = os.fdopen(ctl_in, "rb", buffering=1 << 16)
    gc.collect()
    gc.freeze()  # forked programs do not touch (and copy) the worker's objects when they collect
    ready = {"ready": True, "pid": os.getpid(), "uid": os.getuid(), "python": sys.version.split()[0],
             "pidns_mode": state["pidns_mode"]}
    _write_all(ctl_out, (json.dumps(ready) + "\n").encode())
    while True:
        line = reader.readline()
        if not line:
            os._exit(0)
        try:
            req = json.loads(line)
        except ValueError:
            continue
        if req.get("op") == "exit":
            os._exit(0)
        try:
            response = _supervise(req, state)
        except BaseException:
            response = {"id": req.get("id"), "status": "killed", "exit_code": None, "signal": None,
                        "stdout": "", "stderr": "", "stdout_bytes": 0, "stderr_bytes": 0, "duration_s": 0.0,
                        "reason": "sandbox supervisor error: " + traceback.format_exc()[-500:],
                        "supervisor_failed": True}
        _write_all(ctl_out, (json.dumps(response) + "\n").encode())


if __name__ == "__main__":
    main()

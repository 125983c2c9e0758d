"""The sandbox: its API, its tiers, and a hostile-code suite. Each hostile case must be contained, get
the right status, leave the test process unharmed and leave nothing behind."""

from __future__ import annotations

import os
import secrets
import socket
import textwrap
import threading
import time

import pytest

from mentor.sandbox import ExecutionResult, SandboxPool, SandboxUnavailable, detect_tier, execute

SECRET = "mentor-secret-" + secrets.token_hex(8)
os.environ["MENTOR_TEST_SECRET"] = SECRET  # set before any worker starts: it must never reach one


@pytest.fixture(scope="module")
def pool():
    p = SandboxPool(2)
    yield p
    p.close()


def run(pool, src, **kw) -> ExecutionResult:
    return pool.execute(textwrap.dedent(src), **kw)


def worker_pids(pool) -> list[int]:
    return [w.proc.pid for w in pool._workers if w.proc is not None]


def left_behind(marker: str, guard_s: float = 30) -> list[int]:
    """`host_processes_matching(marker)` once it is empty, or after `guard_s` (a hang guard: a killed process is
    reaped at once, but a loaded machine may take a moment to do it)."""
    deadline = time.monotonic() + guard_s
    while (found := host_processes_matching(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def host_processes_matching(marker: str) -> list[int]:
    """PIDs on the host whose command line contains `marker` (excluding this process)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(name))
        except OSError:
            pass
    return found


def assert_healthy(pool, pids_before=None):
    """The pool still runs programs, and (when given) its workers were not restarted."""
    r = run(pool, "print('alive')")
    assert r.status == "ok" and r.stdout == "alive\n", r
    if pids_before is not None:
        assert worker_pids(pool) == pids_before


# --- the API ------------------------------------------------------------------------------------------


def test_ok_error_and_output(pool):
    r = run(pool, "import sys\nprint('out')\nprint('err', file=sys.stderr)")
    assert (r.status, r.exit_code, r.stdout, r.stderr) == ("ok", 0, "out\n", "err\n")
    assert r.tier == pool.tier.name and r.duration_s > 0
    r = run(pool, "raise KeyError('boom')")
    assert r.status == "error" and r.exit_code == 1
    assert "KeyError: 'boom'" in r.stderr and 'File "<program>", line 1' in r.stderr
    r = run(pool, "import sys; sys.exit(7)")
    assert (r.status, r.exit_code) == ("error", 7)
    r = run(pool, "def f(:\n  pass")
    assert r.status == "error" and "SyntaxError" in r.stderr


def test_module_level_execute_records_tier():
    r = execute("print(6 * 7)", timeout_s=5, memory_mb=256)
    assert r.status == "ok" and r.stdout == "42\n"
    assert r.tier in ("bwrap+cgroup", "bwrap", "rlimits")


def test_empty_cwd_no_stdin_minimal_env(pool):
    r = run(pool, """
        import os, sys
        print(os.listdir('.'))
        print(repr(sys.stdin.read()))
        print(sorted(os.environ))
    """)
    lines = r.stdout.splitlines()
    assert lines[0] == "[]" and lines[1] == "''"
    assert set(eval(lines[2])) <= {"PATH", "HOME", "LANG", "TMPDIR", "PWD", "LC_CTYPE"}


def test_map_keeps_order_and_runs_concurrently(pool):
    # Each program prints its id and when it started and ended (the host's clock): two workers, so the programs
    # overlap two at a time, never more. A 1 s sleep leaves a loaded machine ample time to start the second.
    progs = [f"import time; t = time.time(); time.sleep(1.0); print({i}, t, time.time())" for i in range(4)]
    results = pool.map(progs, timeout_s=30)
    assert [r.stdout.split()[0] for r in results] == [str(i) for i in range(4)]
    spans = [tuple(map(float, r.stdout.split()[1:])) for r in results]
    running = [sum(s <= t < e for s, e in spans) for t, _ in spans]  # programs running as each one starts
    assert max(running) == 2, spans


def test_invalid_arguments(pool):
    with pytest.raises(TypeError):
        pool.execute(b"print(1)")
    with pytest.raises(ValueError):
        pool.execute("print(1)", timeout_s=0)
    with pytest.raises(ValueError, match="memory_mb"):  # a negative limit would silently mean none
        pool.execute("print(1)", memory_mb=-5)


def test_weak_tier_needs_opt_in(monkeypatch):
    monkeypatch.delenv("MENTOR_SANDBOX_ALLOW_WEAK", raising=False)
    with pytest.raises(SandboxUnavailable, match=r"in use \(the rlimits tier was asked for by name\).*ALLOW_WEAK"):
        detect_tier("rlimits")
    with pytest.raises(SandboxUnavailable, match="unknown sandbox tier"):
        detect_tier("chroot")


def test_weak_tier_runs_and_contains_when_allowed():
    with SandboxPool(1, tier="rlimits", allow_weak=True) as weak:
        r = weak.execute("print('hi')")
        assert (r.status, r.stdout, r.tier) == ("ok", "hi\n", "rlimits")
        r = weak.execute("while True: pass", timeout_s=0.5)
        assert r.status == "timeout"
        marker = "%.3f" % (900 + secrets.randbelow(99000) / 1000)
        r = weak.execute(DETACHED.format(marker=marker), timeout_s=2)
        assert r.status == "ok"
        assert left_behind(f"sleep {marker}") == []
        assert SECRET not in weak.execute(READ_ENV.format(pid=os.getpid())).stdout


# --- the hostile-code suite -------------------------------------------------------------------------------


def test_infinite_loop_times_out(pool):
    before = worker_pids(pool)
    r = run(pool, "while True: pass", timeout_s=1)
    assert r.status == "timeout" and r.exit_code == -9 and "timeout" in r.reason  # killed, by the 1 s limit
    assert 0.9 < r.duration_s
    assert_healthy(pool, before)


def test_fork_bomb_is_contained(pool):
    before = worker_pids(pool)
    r = run(pool, """
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
    """, timeout_s=1.5)
    assert r.status in ("timeout", "killed"), r
    if pool.process_count() is not None:  # with cgroups: only the workers' own processes remain
        deadline = time.monotonic() + 60  # a hang guard: the kill is immediate, a loaded machine slow to reap
        while pool.process_count() > 4 * len(before) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pool.process_count() <= 4 * len(before)
    assert_healthy(pool, before)


def test_memory_bomb_is_stopped(pool):
    before = worker_pids(pool)
    r = run(pool, "x = bytearray(8 * 1024**3)", memory_mb=256)
    assert r.status == "error" and "MemoryError" in r.stderr
    r = run(pool, """
        chunks = []
        while True:
            chunks.append(b'x' * 10**7)
    """, memory_mb=256, timeout_s=5)
    assert r.status in ("error", "killed")  # stopped by the memory limit, not the 5 s timeout
    assert r.status == "killed" or "MemoryError" in r.stderr
    assert_healthy(pool, before)


@pytest.mark.skipif(os.geteuid() != 0, reason="the memory cgroup tier needs root")
def test_memory_spread_over_processes_is_bounded(pool):
    if pool.process_count() is None:
        pytest.skip("no cgroup on this machine")
    r = run(pool, """
        import os, time
        kids = []
        for i in range(6):
            pid = os.fork()
            if pid == 0:
                blob = b'x' * (180 * 1024**2)   # under the per-process limit
                time.sleep(0.5)
                os._exit(0)
            kids.append(pid)
        ok = sum(os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) == 0 for p in kids)
        print('survivors', ok)
    """, memory_mb=256, timeout_s=10)
    assert r.status == "ok", r
    assert int(r.stdout.split()[-1]) < 6  # the slot's memory limit (256 + 256 MB) cannot hold six


def test_huge_output_is_bounded(pool):
    before = worker_pids(pool)
    r = run(pool, "print('x' * 10**7)", max_output=4096)
    assert r.status == "ok" and r.truncated and len(r.stdout) < 4096 + 100
    assert "bytes truncated" in r.stdout
    r = run(pool, "while True: print('y' * 4096)", timeout_s=20)
    assert r.status == "killed" and "output limit" in r.reason  # stopped by the output limit, not the 20 s timeout
    assert len(r.stdout) <= 70 * 1024
    assert_healthy(pool, before)


def test_deep_recursion(pool):
    before = worker_pids(pool)
    r = run(pool, "def f(n): return f(n + 1)\nf(0)")
    assert r.status == "error" and "RecursionError" in r.stderr
    r = run(pool, """
        import sys
        sys.setrecursionlimit(10**8)
        def f(n): return f(n + 1) + 1
        f(0)
    """, timeout_s=3, memory_mb=128)
    # Python 3.11 keeps Python frames off the C stack: memory runs out (MemoryError, or the OOM
    # killer), or a C-level overflow crashes it (SIGSEGV), or it is still going at the timeout.
    assert r.status in ("killed", "error", "timeout"), r
    assert_healthy(pool, before)


def test_cannot_write_outside_its_directory(pool, tmp_path):
    tag = secrets.token_hex(6)
    targets = [str(tmp_path / f"escape-{tag}"), f"/tmp/escape-{tag}", f"/usr/escape-{tag}",
               os.path.join(os.getcwd(), f"escape-{tag}"), f"/root/escape-{tag}"]
    r = run(pool, f"""
        for path in {targets!r} + ['../escape-{tag}', '/escape-{tag}']:
            try:
                with open(path, 'w') as f:
                    f.write('pwned')
                print('wrote', path)
            except OSError as e:
                print('blocked', path, type(e).__name__)
    """)
    assert r.status == "ok"
    for t in targets:
        assert not os.path.exists(t), f"{t} escaped the sandbox"
    assert not os.path.exists(f"/escape-{tag}")
    if pool.tier.bwrap:
        assert "wrote /usr/" not in r.stdout and f"wrote {tmp_path}" not in r.stdout


def test_nothing_persists_between_runs():
    with SandboxPool(1) as one:
        r = one.execute("open('left.txt', 'w').write('x'); open('/tmp/left2.txt', 'w').write('x')")
        assert r.status == "ok"
        r = one.execute("import os; print(os.listdir('.'), os.path.exists('/tmp/left2.txt'))")
        assert r.stdout == "[] False\n"


READ_ENV = """
import os
print(dict(os.environ))
for pid in ['self', '1', '2', '{pid}'] + os.listdir('/proc'):
    try:
        with open('/proc/%s/environ' % pid, 'rb') as f:
            print(pid, f.read().decode(errors='replace'))
    except OSError:
        pass
for path in ['/proc/{pid}/cmdline', '/proc/{pid}/mem']:
    try:
        print(open(path, 'rb').read(200))
    except OSError:
        pass
"""


def test_cannot_read_the_parents_secrets(pool):
    r = run(pool, READ_ENV.format(pid=os.getpid()))
    assert r.status == "ok"
    assert SECRET not in r.stdout and SECRET not in r.stderr
    assert "MENTOR_TEST_SECRET" not in r.stdout


def test_no_network(pool):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.settimeout(0.1)
    port = server.getsockname()[1]
    accepted = []
    done = threading.Event()

    def accept():
        while not done.is_set():
            try:
                accepted.append(server.accept())
            except OSError:
                pass

    th = threading.Thread(target=accept)
    th.start()
    try:
        r = run(pool, f"""
            import socket
            for host, port in [('127.0.0.1', {port}), ('1.1.1.1', 53), ('8.8.8.8', 443)]:
                try:
                    socket.create_connection((host, port), timeout=0.5)
                    print('CONNECTED', host)
                except OSError as e:
                    print('blocked', host, e)
            try:
                socket.getaddrinfo('example.com', 80)
                print('CONNECTED dns')
            except OSError as e:
                print('blocked dns', e)
        """, timeout_s=5)
    finally:
        done.set()
        th.join()
        server.close()
    assert r.status == "ok", r
    assert "CONNECTED" not in r.stdout
    assert accepted == []


def test_cannot_signal_or_kill_the_parent(pool):
    before = worker_pids(pool)
    r = run(pool, f"""
        import os, signal
        for target in [os.getppid(), {os.getpid()}, {before[0]}, 1, -1, 0]:
            for sig in (signal.SIGKILL, signal.SIGTERM):
                try:
                    os.kill(target, sig)
                except (OSError, ProcessLookupError):
                    pass
        try:
            os.killpg(os.getpgid(0), signal.SIGKILL)
        except OSError:
            pass
        print('still here')
    """)
    assert r.status in ("ok", "killed")
    assert os.getpid() > 0  # this test process is alive and running
    assert_healthy(pool, before)


DETACHED = """
import os
pid = os.fork()
if pid == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv('/bin/sleep', ['/bin/sleep', '{marker}'])
    os._exit(0)
os.waitpid(pid, 0)
print('spawned')
"""


def test_detached_child_does_not_outlive_the_run(pool):
    before = worker_pids(pool)
    marker = "%.3f" % (900 + secrets.randbelow(99000) / 1000)
    r = run(pool, DETACHED.format(marker=marker))
    assert r.status == "ok" and r.stdout == "spawned\n"
    assert left_behind(f"sleep {marker}") == []
    marker2 = marker + "1"
    r = run(pool, DETACHED.format(marker=marker2) + "\nwhile True: pass\n", timeout_s=1)
    assert r.status == "timeout"
    assert left_behind(f"sleep {marker2}") == []
    assert_healthy(pool, before)


def test_program_cannot_touch_the_worker(pool):
    """The worker is not dumpable: a program cannot read or patch its memory through /proc."""
    before = worker_pids(pool)
    r = run(pool, """
        import os
        hits = []
        me = os.readlink('/proc/self')  # this process, as the mounted /proc numbers it
        for pid in os.listdir('/proc'):
            if not pid.isdigit() or pid == me:
                continue
            for name in ('mem', 'environ'):
                try:
                    with open('/proc/%s/%s' % (pid, name), 'rb') as f:
                        f.read(1)
                    hits.append((pid, name))
                except OSError:
                    pass
        print(hits)
    """)
    assert r.status == "ok" and r.stdout.strip() in ("[]", ""), r.stdout
    assert_healthy(pool, before)


KERNEL_SURFACE = """
import ctypes, errno, socket
libc = ctypes.CDLL(None, use_errno=True)
NR = {nr}
def call(name, *args):
    return errno.errorcode.get(ctypes.get_errno(), "ok") if libc.syscall(NR[name], *args) < 0 else "ok"
try:
    socket.socket(40, socket.SOCK_STREAM)  # AF_VSOCK
    vsock = "ok"
except OSError as e:
    vsock = errno.errorcode[e.errno]
print({{
    "proc_keys": open("/proc/keys").read() + open("/proc/key-users").read(),  # first: before any unshare
    "add_key": call("add_key", b"user", b"{marker}", b"payload", 7, ctypes.c_int(-3)),  # the session keyring
    "request_key": call("request_key", b"user", b"{marker}", None, 0),
    "keyctl": call("keyctl", 0, ctypes.c_int(-3), 0),  # KEYCTL_GET_KEYRING_ID of the session keyring
    "io_uring_setup": call("io_uring_setup", 1, ctypes.create_string_buffer(120)),
    "unshare_user": "ok" if libc.unshare(0x10000000) == 0 else errno.errorcode[ctypes.get_errno()],
    "clone_user": call("clone", 0x10000000 | 17, 0, 0, 0, 0),  # CLONE_NEWUSER | SIGCHLD
    "vsock": vsock,
}})
"""


def test_the_kernel_keyring_io_uring_nested_user_namespaces_and_vsock_are_denied():
    """Issue 25: a program filled root's key quota on the host through add_key, and read the host's key names
    in /proc/keys. The seccomp filter denies the keyring, io_uring, CLONE_NEWUSER and AF_VSOCK."""
    from mentor.sandbox.seccomp import ARCHES

    nr = ARCHES[os.uname().machine][1]
    marker = "mentor-key-" + secrets.token_hex(4)
    for attempt in range(2):  # the second run sees nothing of the first
        r = execute(KERNEL_SURFACE.format(nr=nr, marker=marker))
        assert r.status == "ok", r
        seen = eval(r.stdout)
        assert seen.pop("proc_keys") == ""  # no key names, no per-user counts of the host
        assert seen == {"add_key": "EPERM", "request_key": "EPERM", "keyctl": "EPERM", "io_uring_setup": "EPERM",
                        "unshare_user": "EPERM", "clone_user": "EPERM", "vsock": "EAFNOSUPPORT"}
        with open("/proc/keys") as f:
            assert marker not in f.read()  # nothing reached the host's keyrings
    r = execute("import os, threading, subprocess\n"  # the calls a program does need still work
                "t = threading.Thread(target=print, args=('thread',)); t.start(); t.join()\n"
                "print(subprocess.run(['/bin/echo', 'child'], capture_output=True, text=True).stdout.strip())\n"
                "pid = os.fork()\nif pid == 0: os._exit(3)\nprint(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))")
    assert (r.status, r.stdout) == ("ok", "thread\nchild\n3\n"), r


def test_the_seccomp_filter_covers_the_weak_tier_too():
    from mentor.sandbox.seccomp import ARCHES

    nr = ARCHES[os.uname().machine][1]
    with SandboxPool(1, tier="rlimits", allow_weak=True) as weak:
        r = weak.execute(KERNEL_SURFACE.format(nr=nr, marker="mentor-weak"))
    seen = eval(r.stdout)
    assert (seen["add_key"], seen["io_uring_setup"], seen["vsock"]) == ("EPERM", "EPERM", "EAFNOSUPPORT"), r


def run_bpf(program: bytes, arch: int, nr: int, arg0: int = 0) -> int:
    """What the classic BPF program answers for one system call (the few instructions seccomp.py uses)."""
    import struct

    data = struct.pack("<iIQ6Q", nr, arch, 0, arg0, 0, 0, 0, 0, 0)
    insns = [struct.unpack("=HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        if code == 0x20:
            acc = struct.unpack_from("<I", data, k)[0]
        elif code == 0x06:
            return k
        else:
            taken = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[code]
            pc += jt if taken else jf
        pc += 1


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_filter_decides_each_call_on_both_architectures(machine):
    """The aarch64 program is checked here too, though this machine cannot run it."""
    import errno

    from mentor.sandbox.seccomp import ARCHES, RET_ALLOW, RET_ERRNO, build_filter

    arch, nr = ARCHES[machine]
    program = build_filter(machine)
    eperm, enosys = RET_ERRNO | errno.EPERM, RET_ERRNO | errno.ENOSYS
    for name in ("add_key", "request_key", "keyctl", "io_uring_setup", "io_uring_enter", "io_uring_register"):
        assert run_bpf(program, arch, nr[name]) == eperm, name
    assert run_bpf(program, arch, nr["clone3"]) == enosys
    assert run_bpf(program, arch, nr["unshare"], 0x10000000 | 0x20000) == eperm  # CLONE_NEWUSER with CLONE_NEWNS
    assert run_bpf(program, arch, nr["unshare"], 0x20000000 | 0x20000) == RET_ALLOW  # PID and mount: the worker's
    assert run_bpf(program, arch, nr["clone"], 0x10000000 | 17) == eperm
    assert run_bpf(program, arch, nr["clone"], 0x01200011) == RET_ALLOW  # fork's flags
    assert run_bpf(program, arch, nr["socket"], 40) == RET_ERRNO | errno.EAFNOSUPPORT  # AF_VSOCK
    assert run_bpf(program, arch, nr["socket"], 2) == RET_ALLOW  # AF_INET (the namespace has no network)
    assert run_bpf(program, arch, 0) == RET_ALLOW and run_bpf(program, arch, 1) == RET_ALLOW
    assert run_bpf(program, 0x40000003, nr["add_key"]) == enosys  # i386 (int 0x80): another table, refused
    if machine == "x86_64":
        assert run_bpf(program, arch, 0x40000000 | nr["add_key"]) == enosys  # x32
    assert build_filter("riscv64") is None


def test_early_exit_statuses(pool):
    r = run(pool, "import os; print('bye', flush=True); os._exit(0)")
    assert (r.status, r.stdout) == ("ok", "bye\n")
    r = run(pool, "import os, signal; os.kill(os.getpid(), signal.SIGKILL); print('after')")
    # PID 1 of its namespace ignores signals it sends itself; either way the run is contained.
    assert r.status in ("ok", "killed")


def test_closing_a_pool_leaves_no_cgroups_or_processes():
    p = SandboxPool(1)
    assert p.execute("print(1)").status == "ok"
    dirs = [d for w in p._workers if w.cg is not None for d in w.cg.dirs.values()]
    pids = worker_pids(p)
    p.close()
    for d in dirs:
        assert not os.path.exists(d)
    for pid in pids:
        deadline = time.monotonic() + 30  # a hang guard: close() kills the workers, a loaded machine reaps them
        while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
            try:
                if open(f"/proc/{pid}/stat").read().split()[2] == "Z":
                    break
            except OSError:  # gone meanwhile
                break
            time.sleep(0.05)
        assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"


UNPRIVILEGED = """
import sys, time
sys.path.insert(0, {root!r})
from mentor.sandbox import SandboxPool
with SandboxPool(1, python={python!r}) as p:
    r = p.execute('import os; print(os.getuid(), os.getpid())')
    assert (r.status, r.stdout, r.tier) == ('ok', '65534 1\\n', 'bwrap'), r
    for _ in range(2):  # more than one run: each gets a fresh PID namespace
        assert p.execute('while True: pass', timeout_s=0.5).status == 'timeout'
    r = p.execute('import os\\nwhile True:\\n  try: os.fork()\\n  except OSError: pass', timeout_s=1)
    assert r.status == 'timeout', r
    assert p.execute({detached!r}).stdout == 'spawned\\n'
    assert {secret!r} not in p.execute({read_env!r}).stdout
print('UNPRIVILEGED OK')
"""


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/usr/bin/setpriv") or not os.path.exists("/usr/bin/python3")
                    or not os.path.exists("/usr/bin/bwrap"), reason="needs root (to become nobody), setpriv, "
                    "a system python3 and bubblewrap")
def test_unprivileged_user_gets_the_bwrap_tier():
    """As a normal user (nobody, with the system interpreter) the bwrap tier works, without cgroups."""
    import shutil
    import subprocess
    import tempfile

    marker = "%.3f" % (900 + secrets.randbelow(99000) / 1000)
    with tempfile.TemporaryDirectory() as root:  # a copy nobody can read, wherever the checkout lives
        os.chmod(root, 0o755)
        package = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "mentor")
        shutil.copytree(package, os.path.join(root, "mentor"), ignore=shutil.ignore_patterns("__pycache__", "lab"))
        script = UNPRIVILEGED.format(root=root, python="/usr/bin/python3", detached=DETACHED.format(marker=marker),
                                     secret=SECRET, read_env=READ_ENV.format(pid=os.getpid()))
        p = subprocess.run(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
                            "/usr/bin/python3", "-c", script], capture_output=True, text=True, timeout=120, cwd="/")
    assert "UNPRIVILEGED OK" in p.stdout, p.stderr[-2000:]
    assert left_behind(f"sleep {marker}") == []

"""One cgroup per sandbox worker slot, so that the memory and process limits cover every process a
program spawns. As root, `RLIMIT_NPROC` never applies; only a cgroup stops a fork bomb.

Works with cgroup v1 (`pids` and `memory` hierarchies, as on hybrid hosts) and cgroup v2 (a unified
hierarchy with the `pids` and `memory` controllers delegated). Slots are created under the calling
process's own cgroup, so host limits on the trainer still cover the sandbox.
"""

from __future__ import annotations

import os
import uuid

ROOT = "/sys/fs/cgroup"
GROUP = "mentor-sandbox"


def _own_path(controller: str | None) -> str | None:
    """This process's cgroup path in the v1 hierarchy of `controller`, or in v2 when None."""
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, ctrls, path = line.rstrip("\n").split(":", 2)
                if controller is None and ctrls == "":
                    return path
                if controller is not None and controller in ctrls.split(","):
                    return path
    except OSError:
        return None
    return None


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


class SlotCgroups:
    """The cgroup(s) of one worker slot: `procs_files` to join, limits to set, processes to count."""

    def __init__(self, dirs: dict[str, str], version: int):
        self.dirs = dirs  # "pids" / "memory" -> directory (the same directory under v2)
        self.version = version
        self.memory_mb: int | None = None
        self.max_procs: int | None = None

    @property
    def procs_files(self) -> list[str]:
        return sorted({os.path.join(d, "cgroup.procs") for d in self.dirs.values()})

    def set_limits(self, memory_mb: int, max_procs: int) -> None:
        if memory_mb != self.memory_mb:
            limit = str(memory_mb << 20)
            if self.version == 1:
                self._set_v1_memory(limit, raising=self.memory_mb is not None and memory_mb > self.memory_mb)
            else:
                _write(os.path.join(self.dirs["memory"], "memory.max"), limit)
                try:
                    _write(os.path.join(self.dirs["memory"], "memory.swap.max"), "0")
                except OSError:
                    pass
            self.memory_mb = memory_mb
        if max_procs != self.max_procs:
            _write(os.path.join(self.dirs["pids"], "pids.max"), str(max_procs))
            self.max_procs = max_procs

    def _set_v1_memory(self, limit: str, raising: bool) -> None:
        """The memory limit under cgroup v1, swap included: RAM + swap (`memsw`) capped at the limit too, or on a
        machine with swap the slot's processes would page out rather than be stopped. `memsw` may never be below the
        RAM limit, so a raised limit writes it first. Without swap accounting (no `memsw` file), `swappiness` 0 keeps
        the slot's memory out of swap instead."""
        folder = self.dirs["memory"]
        ram, memsw = os.path.join(folder, "memory.limit_in_bytes"), os.path.join(folder, "memory.memsw.limit_in_bytes")
        if not os.path.exists(memsw):
            _write(ram, limit)
            try:
                _write(os.path.join(folder, "memory.swappiness"), "0")
            except OSError:
                pass
            return
        for path in ((memsw, ram) if raising else (ram, memsw)):
            _write(path, limit)

    def pids(self) -> list[int]:
        try:
            with open(os.path.join(self.dirs["pids"], "cgroup.procs")) as f:
                return [int(p) for p in f.read().split()]
        except OSError:
            return []

    def process_count(self) -> int:
        try:
            with open(os.path.join(self.dirs["pids"], "pids.current")) as f:
                return int(f.read())
        except (OSError, ValueError):
            return len(self.pids())

    def remove(self) -> None:
        for d in set(self.dirs.values()):
            try:
                os.rmdir(d)
            except OSError:
                pass


class CgroupManager:
    """Creates slot cgroups under `<own cgroup>/mentor-sandbox/<pool id>/slot-<n>`. `available` is False
    when this machine does not let us (not root, read-only cgroupfs, controllers not delegated)."""

    def __init__(self) -> None:
        self.pool_id = "%d-%s" % (os.getpid(), uuid.uuid4().hex[:8])
        self.version = 0
        self.bases: dict[str, str] = {}
        self.error = ""
        self._detect()

    @property
    def available(self) -> bool:
        return self.version > 0

    def _detect(self) -> None:
        if os.geteuid() != 0 and not os.environ.get("MENTOR_SANDBOX_CGROUP_DELEGATED"):
            self.error = "not root"
            return
        v1 = {}
        for ctrl in ("pids", "memory"):
            own = _own_path(ctrl)
            if own is None or not os.path.isdir(os.path.join(ROOT, ctrl)):
                v1 = {}
                break
            v1[ctrl] = os.path.join(ROOT, ctrl, own.lstrip("/"), GROUP, self.pool_id)
        if v1 and self._try(v1, 1):
            return
        own = _own_path(None)
        if own is not None and os.path.exists(os.path.join(ROOT, "cgroup.controllers")):
            base = os.path.join(ROOT, own.lstrip("/"), GROUP)
            if self._try_v2(base):
                return
        if not self.error:
            self.error = "no writable pids and memory cgroup controllers"

    def _try(self, bases: dict[str, str], version: int) -> bool:
        try:
            for b in bases.values():
                os.makedirs(b, exist_ok=True)
            self.bases, self.version = bases, version
            probe = self.slot("probe")
            probe.set_limits(64, 16)
            probe.remove()
            return True
        except OSError as e:
            self.error = f"cgroup v{version}: {e}"
            self.bases, self.version = {}, 0
            self.cleanup()
            for b in bases.values():
                try:
                    os.rmdir(b)
                except OSError:
                    pass
            return False

    def _try_v2(self, base: str) -> bool:
        try:
            os.makedirs(base, exist_ok=True)
            with open(os.path.join(base, "cgroup.controllers")) as f:
                have = f.read().split()
            if not {"pids", "memory"} <= set(have):
                self.error = "cgroup v2: pids and memory controllers not delegated"
                return False
            _write(os.path.join(base, "cgroup.subtree_control"), "+pids +memory")
            pool = os.path.join(base, self.pool_id)
            os.makedirs(pool, exist_ok=True)
            _write(os.path.join(pool, "cgroup.subtree_control"), "+pids +memory")
        except OSError as e:
            self.error = f"cgroup v2: {e}"
            return False
        return self._try({"pids": pool, "memory": pool}, 2)

    def slot(self, name: str) -> SlotCgroups:
        dirs = {ctrl: os.path.join(base, name) for ctrl, base in self.bases.items()}
        for d in set(dirs.values()):
            os.makedirs(d, exist_ok=True)
        return SlotCgroups(dirs, self.version)

    def cleanup(self) -> None:
        """Removes the pool's (empty) cgroups; stale ones of dead pools too."""
        for base in set(self.bases.values()):
            _remove_cgroup(base)
        for base in set(self.bases.values()):
            parent = os.path.dirname(base)
            try:
                names = os.listdir(parent)
            except OSError:
                continue
            for name in names:  # pools of processes that no longer exist
                pid = name.split("-", 1)[0]
                if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
                    _remove_cgroup(os.path.join(parent, name))


def _remove_cgroup(path: str) -> None:
    """Removes an empty cgroup and its empty child cgroups; one still in use stays."""
    try:
        for name in os.listdir(path):
            try:
                os.rmdir(os.path.join(path, name))
            except OSError:
                pass
        os.rmdir(path)
    except OSError:
        pass

"""The seccomp filter every sandboxed program runs under: a classic BPF program, assembled here in pure Python.

It denies what Docker's default profile denies of the kernel surface a program could reach from inside the
sandbox and that the code task never needs:

* the kernel keyring (`add_key`, `request_key`, `keyctl`): keys are not namespaced, so a program could fill
  the host user's key quota, or leave keys for the next run;
* io_uring (`io_uring_setup`, `io_uring_enter`, `io_uring_register`): a large, often-exploited surface;
* a nested user namespace (`unshare` or `clone` with `CLONE_NEWUSER`; `clone3`, whose flags a filter cannot
  read, answers ENOSYS, so the C library falls back to `clone`);
* `AF_VSOCK` sockets (the way out of a VM to its host).

Denied calls fail with an errno (EPERM; EAFNOSUPPORT for the socket; ENOSYS for clone3), so a program sees an
ordinary error. A system call of another ABI than the interpreter's (i386 `int 0x80`, x32) fails with ENOSYS.
The worker installs the filter in each program process just before the program runs (`_worker.py`), so the
worker's own namespace calls are unaffected.
"""

from __future__ import annotations

import errno
import os
import struct

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (the low half first on these
# little-endian machines)
_NR, _ARCH, _ARG0_LOW = 0, 4, 16

_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06  # BPF_RET | BPF_K

RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000

CLONE_NEWUSER = 0x10000000
AF_VSOCK = 40
X32_SYSCALL_BIT = 0x40000000

# machine -> (AUDIT_ARCH_*, {name: number})
ARCHES = {
    "x86_64": (0xC000003E, {"add_key": 248, "request_key": 249, "keyctl": 250, "io_uring_setup": 425,
                            "io_uring_enter": 426, "io_uring_register": 427, "unshare": 272, "clone": 56,
                            "clone3": 435, "socket": 41}),
    "aarch64": (0xC00000B7, {"add_key": 217, "request_key": 218, "keyctl": 219, "io_uring_setup": 425,
                             "io_uring_enter": 426, "io_uring_register": 427, "unshare": 97, "clone": 220,
                             "clone3": 435, "socket": 198}),
}
ARCHES["arm64"] = ARCHES["aarch64"]

DENIED = ("add_key", "request_key", "keyctl", "io_uring_setup", "io_uring_enter", "io_uring_register")


def _errno(code: int) -> int:
    return RET_ERRNO | code


def build_filter(machine: str | None = None) -> bytes | None:
    """The filter as an array of `struct sock_filter` (what `prctl(PR_SET_SECCOMP)` takes), for `machine`
    (default: this one); None for a machine this module has no system call table for."""
    machine = machine or os.uname().machine
    if machine not in ARCHES:
        return None
    arch, nr = ARCHES[machine]
    # (code, jump-if-true label, jump-if-false label, k); a label is an index name resolved below
    program: list[tuple[int, str | None, str | None, int]] = [
        (_LD_ABS, None, None, _ARCH),
        (_JEQ, None, "enosys", arch),
        (_LD_ABS, None, None, _NR),
    ]
    if machine == "x86_64":
        program.append((_JGE, "enosys", None, X32_SYSCALL_BIT))
    program += [(_JEQ, "eperm", None, nr[name]) for name in DENIED]
    program += [(_JEQ, "enosys", None, nr["clone3"]), (_JEQ, "new_user", None, nr["unshare"]),
                (_JEQ, "new_user", None, nr["clone"]), (_JEQ, "socket", None, nr["socket"]),
                (_RET, None, None, RET_ALLOW)]
    labels = {"new_user": len(program)}
    program += [(_LD_ABS, None, None, _ARG0_LOW), (_JSET, "eperm", None, CLONE_NEWUSER), (_RET, None, None, RET_ALLOW)]
    labels["socket"] = len(program)
    program += [(_LD_ABS, None, None, _ARG0_LOW), (_JEQ, "eafnosupport", None, AF_VSOCK),
                (_RET, None, None, RET_ALLOW)]
    for name, code in (("eperm", errno.EPERM), ("enosys", errno.ENOSYS), ("eafnosupport", errno.EAFNOSUPPORT)):
        labels[name] = len(program)
        program.append((_RET, None, None, _errno(code)))

    def offset(at: int, label: str | None) -> int:
        if label is None:
            return 0  # the next instruction
        jump = labels[label] - at - 1
        assert 0 <= jump < 256, "a BPF jump reaches at most 255 instructions ahead"
        return jump

    return b"".join(struct.pack("=HBBI", code, offset(i, jt), offset(i, jf), k)
                    for i, (code, jt, jf, k) in enumerate(program))

"""The launcher's seccomp program, run on a small classic-BPF interpreter for every architecture it knows
(x86_64 and aarch64, whatever this machine is): for any system call number and arguments hypothesis draws,
the program's answer is the one the rules say. The real kernel runs it in tests/tools/test_sandbox.py."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings, strategies as st

from tools.sandbox_launch import (ARCHES, FCHMODAT2, IO_URING_SETUP, OPENAT2, RET_ALLOW, RET_EACCES, RET_ENOSYS,
                                  RET_EPERM, XATTRAT, METADATA_IOCTLS, build_filter)

OWN = 4242                 # a pid that is not 0: refused like any other
FAMILIES = (None, (), (1, 16))


def run(program: list, nr: int, arch: int, args: tuple) -> int:
    """Classic BPF as seccomp runs it: LD|W|ABS, JEQ/JGE/JSET with K, RET K over struct seccomp_data."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, *args)
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = program[pc]
        if code == 0x20:
            acc = struct.unpack_from("<I", data, k)[0]
            pc += 1
            continue
        if code == 0x06:
            return k
        taken = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[code]
        pc += 1 + (jt if taken else jf)


def expected(machine: str, nr: int, args: tuple, families, metadata: bool) -> int:
    a = ARCHES[machine]
    low = [x & 0xFFFFFFFF for x in args]
    own = lambda pid: pid == 0                                           # noqa: E731
    if nr >= 0x40000000 or nr == IO_URING_SETUP:
        return RET_EACCES
    if nr == OPENAT2:
        return RET_ENOSYS
    if metadata and nr in a.metadata:
        return RET_EPERM
    if metadata and nr == a.ioctl:
        return RET_EPERM if low[1] in METADATA_IOCTLS else RET_ALLOW
    for number, mode in a.moding:
        if nr == number:
            return RET_EPERM if low[mode] & 0o6000 else RET_ALLOW
    for number, flags, mode in a.creating:
        if nr == number:
            creates = flags is None or low[flags] & (0o100 | 0o20000000)
            return RET_EPERM if creates and low[mode] & 0o6000 else RET_ALLOW
    if nr == a.prlimit64:
        return RET_ALLOW if args[2] == 0 or own(low[0]) else RET_EPERM
    if nr == a.setpriority:
        return RET_ALLOW if low[0] == 0 and own(low[1]) else RET_EPERM
    if nr == a.ioprio:
        return RET_ALLOW if low[0] == 1 and own(low[1]) else RET_EPERM
    if nr in a.sched:
        return RET_ALLOW if own(low[0]) else RET_EPERM
    if nr == a.socket and families is not None:
        return RET_ALLOW if low[0] in families else RET_EACCES
    return RET_ALLOW


def interesting(machine: str) -> list[int]:
    a = ARCHES[machine]
    return [n for n in [*a.metadata, *(n for n, _ in a.moding), *(n for n, _f, _m in a.creating), a.prlimit64,
                        a.setpriority, a.ioprio, *a.sched, a.socket, a.ioctl, IO_URING_SETUP, OPENAT2, FCHMODAT2, *XATTRAT]]


SAMPLES = st.sampled_from([0, OWN, 1, 0o4755, 0o2755, 0o755, 0o100, 0o20200000, 1 << 32, OWN | 1 << 32,
                           *METADATA_IOCTLS, 0x80086601, METADATA_IOCTLS[0] | 1 << 32])
argument = st.one_of(SAMPLES, SAMPLES, SAMPLES, st.integers(0, 2 ** 64 - 1))
CASES = [(machine, nr) for machine in sorted(ARCHES) for nr in dict.fromkeys(interesting(machine))]


def check(machine: str, nr: int, args: tuple, families, metadata: bool) -> None:
    program = build_filter(machine, families, metadata, metadata)
    answer = run(program, nr, ARCHES[machine].audit, args)
    a = ARCHES[machine]
    if not metadata and nr in (a.prlimit64, a.setpriority, a.ioprio, *a.sched):
        assert answer == RET_ALLOW           # without `own` the process calls are not looked at
    else:
        assert answer == expected(machine, nr, args, families, metadata), (nr, args)


@pytest.mark.parametrize("machine, nr", CASES)
@settings(max_examples=60)
@given(args=st.tuples(*[argument] * 6), families=st.sampled_from(FAMILIES), metadata=st.booleans())
def test_each_call_the_filter_looks_at_gets_the_answer_the_rules_say(machine, nr, args, families, metadata):
    check(machine, nr, args, families, metadata)
    check(machine, nr | 0x40000000, args, families, metadata)          # the x32 number of it


@pytest.mark.parametrize("machine", sorted(ARCHES))
@given(nr=st.integers(0, 0x3FFFFFFF), args=st.tuples(*[argument] * 6), families=st.sampled_from(FAMILIES),
       metadata=st.booleans())
def test_any_call_gets_the_answer_the_rules_say(machine, nr, args, families, metadata):
    check(machine, nr, args, families, metadata)


@pytest.mark.parametrize("machine", sorted(ARCHES))
@given(nr=st.integers(0, 2 ** 31 - 1), arch=st.integers(0, 2 ** 32 - 1))
def test_a_call_of_another_abi_is_always_refused(machine, nr, arch):
    """i386 through int 0x80 on x86_64, arm32 on aarch64, anything with another audit arch."""
    if arch == ARCHES[machine].audit:
        arch ^= 1
    for metadata in (False, True):
        assert run(build_filter(machine, None, metadata, True), nr, arch, (0,) * 6) == RET_EACCES


def test_an_unknown_architecture_has_no_filter():
    with pytest.raises(KeyError):
        build_filter("riscv64")

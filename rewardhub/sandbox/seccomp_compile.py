"""Compile a Docker seccomp profile (JSON on stdin) to a BPF program (stdout) with libseccomp.

Run by the system's Python, where Debian's ``python3-seccomp`` installs libseccomp's own bindings
(the service may run in another interpreter, a virtualenv or pyenv build, that cannot import
them): ``/usr/bin/python3 -I seccomp_compile.py < profile.json > filter.bpf``. Standard library
and ``seccomp`` only. Understands exactly what :func:`rewardhub.sandbox.syscall_filter.docker_profile`
writes: a default action of allow, errno rules, and masked-equality, at-least and not-equal
conditions on arguments.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

import seccomp


def compile_profile(profile: dict) -> seccomp.SyscallFilter:
    if profile.get("defaultAction") != "SCMP_ACT_ALLOW":
        raise ValueError("only profiles that allow by default are supported")
    native = seccomp.system_arch()
    wanted = profile.get("architectures") or []
    if wanted and not any(getattr(seccomp.Arch, a.removeprefix("SCMP_ARCH_"), 0) % (1 << 32) == native for a in wanted):
        raise ValueError(f"the profile is for {wanted}, this machine is {native}")
    refusals = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    # a call of another architecture (i386's int 0x80) kills the whole process, not just its thread
    refusals.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)
    for rule in profile["syscalls"]:
        if rule["action"] != "SCMP_ACT_ERRNO":
            raise ValueError(f"unsupported action {rule['action']}")
        action = seccomp.ERRNO(int(rule["errnoRet"]))
        conditions = []
        for arg in rule.get("args", []):
            if arg["op"] == "SCMP_CMP_MASKED_EQ":
                condition = seccomp.Arg(int(arg["index"]), seccomp.MASKED_EQ, int(arg["value"]), int(arg["valueTwo"]))
            elif arg["op"] in ("SCMP_CMP_GE", "SCMP_CMP_NE"):
                compare = seccomp.GE if arg["op"] == "SCMP_CMP_GE" else seccomp.NE
                condition = seccomp.Arg(int(arg["index"]), compare, int(arg["value"]))
            else:
                raise ValueError(f"unsupported comparison {arg['op']}")
            conditions.append(condition)
        for name in rule["names"]:
            try:
                seccomp.resolve_syscall(seccomp.Arch.NATIVE, name)
            except ValueError:
                continue  # a call this architecture does not have cannot be made either
            refusals.add_rule(action, name, *conditions)
    return refusals


def main() -> int:
    refusals = compile_profile(json.load(sys.stdin))
    with tempfile.TemporaryFile() as out:
        refusals.export_bpf(out)
        out.seek(0)
        data = out.read()
    os.write(1, data)
    return 0


if __name__ == "__main__":
    sys.exit(main())

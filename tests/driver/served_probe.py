"""A command for the compile server's tests: it prints what its process has.

:func:`main` is the entry the server serves (``served_probe:main``) and :func:`warm` its
preload hook. Run as a script (``python served_probe.py STATUS``) it is the client: it
prints its own state, hands the command to the server (:func:`llm_compiler.driver.server.delegate`)
and runs it itself when the server does not take it. Its state is read here on its own,
not with the server's code: cgroup, I/O priority (the ``ioprio_get`` system call), scheduling
policy, nice, groups, effective capabilities.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

ENTRY = "served_probe:main"
PRELOAD = "served_probe:warm"

#: ``ioprio_get`` by machine; ``IOPRIO_WHO_PROCESS`` is 1.
IOPRIO_GET = {"x86_64": 252, "aarch64": 31}


def state() -> dict[str, Any]:
    """This process's context, as the server's tests compare it."""
    number = IOPRIO_GET.get(os.uname().machine)
    ioprio = ctypes.CDLL(None, use_errno=True).syscall(number, 1, 0) if number else None
    with open("/proc/self/cgroup") as cgroup, open("/proc/self/status") as status:
        return {
            "pid": os.getpid(),
            "cgroup": cgroup.read(),
            # class 0 ("none") follows nice, whatever level it carries
            "ioprio": ioprio if ioprio is None or ioprio >> 13 else 0,
            "scheduler": os.sched_getscheduler(0),
            "nice": os.getpriority(os.PRIO_PROCESS, 0),
            "groups": sorted(os.getgroups()),
            "capabilities": [line.split()[1] for line in status if line.startswith("CapEff:")],
        }


def warm() -> None:
    """The preload hook: says in the server's log that it ran."""
    sys.stderr.write("probe: warmed\n")


def main(command: str, arguments: Sequence[str]) -> int:
    """Prints the command, its arguments and this process's state; exits with ``arguments[0]``."""
    print(json.dumps({"command": command, "arguments": list(arguments), "state": state()}), flush=True)
    return int(arguments[0])


if __name__ == "__main__":
    from llm_compiler.driver import server

    before = state()
    status = server.delegate("probe", sys.argv[1:], entry=ENTRY, preload=PRELOAD)
    served = status is not None
    if status is None:
        status = main("probe", sys.argv[1:])
    print(json.dumps({"client": before, "served": served}), flush=True)
    sys.exit(status)

#!/usr/bin/env python3
"""take-pid.py PID: starts a host process (sleep) whose pid is PID, by setting the kernel's
last pid to PID - 1 right before each fork (needs root). Prints "took PID" once the process
runs, or "missed" when other processes kept taking the pid. The sleeper outlives this script."""
import os
import sys

target = int(sys.argv[1])
for _ in range(2000):
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(target - 1))
    child = os.fork()
    if child == 0:
        if os.getpid() == target:
            os.setsid()
            # Let go of everything the caller handed down (its pipes; Foundation's Process
            # sees a child as running while any process holds its watch socket).
            null = os.open("/dev/null", os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.closerange(3, 65536)
            os.execv("/usr/bin/sleep", ["sleep", "300"])
        os._exit(0)
    if child == target:
        print("took", child, flush=True)
        sys.exit(0)
    os.waitpid(child, 0)
print("missed", flush=True)

"""What the benchmark reads of processes and the machine: CPU ticks (a process's, each of its
threads', every process's by name, the machine's), page faults, memory, children's CPU."""
import os

TICK = os.sysconf("SC_CLK_TCK")

def cpu_seconds(pid):
    """User+system CPU of a live process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def thread_ticks(pid):
    """CPU ticks so far of each thread of a live process, by its name: the agent's loop is the
    main thread (named as the process), its transfer threads `ferry-curl-N`."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                text = f.read()
        except OSError:
            continue   # ended meanwhile
        name = "loop" if tid == str(pid) else text[text.index("(") + 1:text.rindex(")")]
        fields = text.rsplit(")", 1)[1].split()
        out[(tid, name)] = int(fields[11]) + int(fields[12])
    return out


def minor_faults(pid):
    """Minor page faults of a live process so far (fresh pages it touched)."""
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[7])


def machine_ticks():
    """(all, idle) CPU ticks of the machine so far, from /proc/stat."""
    with open("/proc/stat") as f:
        t = [int(x) for x in f.readline().split()[1:8]]
    return sum(t), t[3] + t[4]


def process_ticks():
    """CPU ticks so far of every live process (kernel threads too), summed by name: what the
    machine's CPU went to between two readings (a process that exited between them is missing;
    its share is in `machine_ticks` and, for a child, in RUSAGE_CHILDREN)."""
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                text = f.read()
        except OSError:
            continue   # gone meanwhile
        name = text[text.index("(") + 1:text.rindex(")")].split("/")[0]   # kworker/u8:2 -> kworker
        fields = text.rsplit(")", 1)[1].split()
        out[(pid, name)] = int(fields[11]) + int(fields[12])
    return out


def ticks_by_name(before, after):
    """CPU ticks each name took between two `process_ticks` readings."""
    spent = {}
    for key, ticks in after.items():
        spent[key[1]] = spent.get(key[1], 0) + ticks - before.get(key, 0)
    return spent


def rss_mib(pid, field="VmRSS"):
    """VmRSS, or RssAnon: the process's own memory (the rest is shared library pages)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def children_cpu():
    r = os.times()
    return r.children_user + r.children_system

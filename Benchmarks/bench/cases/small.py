import os, resource, statistics, subprocess, sys, time
from ..harness import (TICK, cpu_seconds, machine_ticks, minor_faults, no_sync_library, process_ticks, thread_ticks,
                       ticks_by_name)


# The smoke run's guard (CI): Ferry's small-file rate over curl's, the median of its three
# rounds of 300 files, may not fall below this: half the lowest of six smoke runs on
# 2026-11-29 with the transfer threads (0.36-0.66, debug and release builds; see
# docs/benchmarks.md), so it catches a 2x regression, never a noisy round.
SMOKE_SMALL_FLOOR = 0.18

def cpu_readings():
    """The machine's ticks, every process's, this benchmark's and its children's (see `where_cpu_went`)."""
    return (machine_ticks(), process_ticks(), resource.getrusage(resource.RUSAGE_SELF),
            resource.getrusage(resource.RUSAGE_CHILDREN))


def where_cpu_went(ferry, before, after, n):
    """ms of CPU a file between two `cpu_readings`: all the machine's, then its main parts (for
    Ferry: the agent, the kernel's threads that write the files and the journal out, the bus,
    this benchmark as the agent's client; for curl, which exits before the reading: its own from
    RUSAGE_CHILDREN), and nginx's."""
    (m0, p0, s0, c0), (m1, p1, s1, c1) = before, after
    spent = ticks_by_name(p0, p1)
    per_file = lambda ticks: ticks / TICK / n * 1000
    rusage_ms = lambda a, b: (b.ru_utime + b.ru_stime - a.ru_utime - a.ru_stime) / n * 1000
    parts = {"all processes": per_file((m1[0] - m0[0]) - (m1[1] - m0[1]))}
    if ferry:
        parts["the agent"] = per_file(spent.get("ferryd", 0))
        parts["kernel threads (writeback, journal, softirqs)"] = per_file(
            sum(spent.get(k, 0) for k in ("kworker", "jbd2", "ksoftirqd")))
        parts["dbus-daemon"] = per_file(spent.get("dbus-daemon", 0))
        parts["this benchmark (the agent's client)"] = rusage_ms(s0, s1)
    else:
        parts["curl"] = rusage_ms(c0, c1)
    parts["nginx"] = per_file(spent.get("nginx", 0))
    return parts


def thread_split(before, after, n, wall):
    """ms of CPU a file of the agent's loop thread and of its transfer threads, and its busiest
    thread's share of the wall time, between two `thread_ticks` readings."""
    spent = {key: after[key] - before.get(key, 0) for key in after}
    loop = sum(t for (tid, name), t in spent.items() if name == "loop")
    carriers = sum(t for (tid, name), t in spent.items() if name.startswith("ferry-curl"))
    busiest = max(spent.values(), default=0)
    ms = lambda ticks: round(ticks / TICK / n * 1000, 4)
    return ms(loop), ms(carriers), round(100 * busiest / TICK / wall, 1)


# Where the machine has more than two CPUs, Ferry and curl run once more each round pinned to
# two of them (taskset), so one run says how each scales with cores.
PINNED = "0,1"


def run(b):
    n = 300 if b.smoke else 3000
    rounds = 3 if b.smoke else b.rounds   # the guard's median needs a few
    names = [f"f{i:05d}.bin" for i in range(n)]
    for name in names:
        with open(os.path.join(b.www, "small", name), "wb") as f:
            f.write(os.urandom(16 * 1024))
    urls = [f"{b.base}/small/{name}" for name in names]
    listing = os.path.join(b.work, "urls.txt")
    with open(listing, "w") as f:
        f.write("\n".join(urls) + "\n")
    curl_config = os.path.join(b.work, "curl.cfg")

    def ferry_run(d):
        b.download_all(urls, d)

    def peer(argv):
        return lambda d: subprocess.run(argv(d), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def curl_argv(d):
        with open(curl_config, "w") as f:
            for u, name in zip(urls, names):
                f.write(f'url = "{u}"\noutput = "{d}/{name}"\n')
        return ["curl", "-s", "--parallel", "--parallel-max", "16", "-K", curl_config]

    many_cpus = (os.cpu_count() or 1) > 2
    tools = {
        "ferry (16 / 16 per host)": ferry_run,
        **({"ferry pinned to 2 CPUs": ferry_run} if many_cpus else {}),
        **({f"{b.against[0]} (16 / 16 per host)": ferry_run} if b.against else {}),
        "curl --parallel 16": peer(curl_argv),
        **({"curl --parallel 16 pinned to 2 CPUs": peer(lambda d: ["taskset", "-c", PINNED, *curl_argv(d)])}
           if many_cpus else {}),
        "wget2 16 threads": peer(lambda d: ["wget2", "-q", "--no-robots", "--max-threads=16", "-P", d, "-i", listing]),
        "aria2c -j16": peer(lambda d: ["aria2c", "-q", "-j16", "--file-allocation=none", "-d", d, "-i", listing]),
    }
    if not b.peers:   # builds against each other only (a bisect)
        tools = {k: v for k, v in tools.items() if k.startswith("ferry")}
    threads = {}   # the loop's and the transfer threads' ms a file, the busiest thread's % of wall
    rate = {k: [] for k in tools}
    conns = {k: [] for k in tools}
    ferry_cpu = {}
    ferry_faults = {}
    busy = []
    machine = {}   # where the machine's CPU went, ms a file, per round (see `split`)
    rate_defaults = []
    rate_no_sync = []
    no_sync = no_sync_library(b.work)
    for r in range(rounds):
        order = list(tools)[r % len(tools):] + list(tools)[:r % len(tools)]
        for tool in order:
            if tool.startswith("ferry"):
                other = b.against[1] if b.against and tool.startswith(b.against[0]) else None
                b.start_agent("--max-transfers", "16", "--max-per-host", "16", root=b.small_root, bin=other,
                              cpus=PINNED if "pinned" in tool else None)
            d = b.fresh_dir("small", root=b.small_root)
            mark = b.log_mark()
            a0 = cpu_seconds(b.agent.pid) if tool.startswith("ferry") else 0
            f0 = minor_faults(b.agent.pid) if tool.startswith("ferry") else 0
            th0 = thread_ticks(b.agent.pid) if tool.startswith("ferry") else None
            split = tool in ("ferry (16 / 16 per host)", "curl --parallel 16")
            before = cpu_readings() if split else None
            t0 = time.monotonic()
            tools[tool](d)
            elapsed = time.monotonic() - t0
            if tool.startswith("ferry"):
                ferry_cpu.setdefault(tool, []).append((cpu_seconds(b.agent.pid) - a0) / n * 1000)
                ferry_faults.setdefault(tool, []).append((minor_faults(b.agent.pid) - f0) / n)
                loop, carriers, busiest = thread_split(th0, thread_ticks(b.agent.pid), n, elapsed)
                threads.setdefault(f"{tool}: loop thread (ms a file)", []).append(loop)
                threads.setdefault(f"{tool}: transfer threads (ms a file)", []).append(carriers)
                threads.setdefault(f"{tool}: busiest thread (% of wall)", []).append(busiest)
            if split:
                after = cpu_readings()
                if tool.startswith("ferry"):
                    busy.append(100 * (1 - (after[0][1] - before[0][1]) / max(1, after[0][0] - before[0][0])))
                for part, ms in where_cpu_went(tool.startswith("ferry"), before, after, n).items():
                    machine.setdefault(f"{tool.split(' (')[0]}: {part}", []).append(round(ms, 3))
            rate[tool].append(n / elapsed)
            conns[tool].append(b.log_since(mark)[0])
            got = len(os.listdir(d))
            if got != n:
                raise SystemExit(f"{tool}: {got} of {n} files")
        b.start_agent(root=b.small_root)   # Ferry's defaults: 6 transfers, 2 per host
        d = b.fresh_dir("small", root=b.small_root)
        t0 = time.monotonic()
        ferry_run(d)
        rate_defaults.append(n / (time.monotonic() - t0))
        if no_sync:
            b.start_agent("--max-transfers", "16", "--max-per-host", "16", root=b.small_root, preload=no_sync)
            d = b.fresh_dir("small", root=b.small_root)
            t0 = time.monotonic()
            ferry_run(d)
            rate_no_sync.append(n / (time.monotonic() - t0))
    b.stop_agent()   # the last one may run with the preload: no case after it uses it
    if b.smoke and b.peers:
        ratio = statistics.median(f / c for f, c in zip(rate["ferry (16 / 16 per host)"], rate["curl --parallel 16"]))
        print(f"small files: ferry/curl {ratio:.3f} (floor {SMOKE_SMALL_FLOOR})", file=sys.stderr)
        if ratio < SMOKE_SMALL_FLOOR:
            b.report()
            raise SystemExit(f"small files: Ferry's rate is {ratio:.3f} of curl's in this run, under the floor "
                             f"{SMOKE_SMALL_FLOOR} (Benchmarks/bench/cases/small.py SMOKE_SMALL_FLOOR): a speed regression?")
    b.record(f"{n} × 16 KiB, 16 at once", "files/s", rate, better="higher")
    b.record(f"{n} × 16 KiB, TCP connections opened", "connections", conns)
    b.record(f"{n} × 16 KiB, 16 at once, agent CPU per file", "ms", ferry_cpu)
    b.record(f"{n} × 16 KiB, 16 at once, agent page faults per file", "faults", ferry_faults)
    b.results.append((f"{n} × 16 KiB, 16 at once, the agent's threads", "", threads, "see unit"))
    if many_cpus:
        scaling = {
            "ferry: all CPUs / pinned to 2 (files/s, per round)": [
                round(a / p, 2) for a, p in zip(rate["ferry (16 / 16 per host)"], rate["ferry pinned to 2 CPUs"])]}
        if b.peers:
            scaling["curl: all CPUs / pinned to 2"] = [
                round(a / p, 2) for a, p in zip(rate["curl --parallel 16"], rate["curl --parallel 16 pinned to 2 CPUs"])]
        b.results.append((f"{n} × 16 KiB, {os.cpu_count()} CPUs against 2", "", scaling, "see unit"))
    b.results.append((f"{n} × 16 KiB, Ferry alone", "", {
        "ferry with its defaults, 6 / 2 per host (files/s, per round)": rate_defaults,
        "all CPUs busy while ferry runs at 16 (%, per round)": busy,
        "ferry at 16 with fsync made a no-op by a preload, what durability costs (files/s, per round)":
            rate_no_sync or ["no C compiler"]}, "see unit"))
    # What the machine's CPUs allow: at Ferry's CPU a file (all processes), N CPUs busy all the
    # time finish at most N / that many files a second, whatever the threads do.
    if machine:
        ferry_all = machine["ferry: all processes"]
        machine["ferry: the most files/s this machine's CPUs allow at that CPU a file"] = [
            round(os.cpu_count() * 1000 / ms) for ms in ferry_all if ms > 0]
        b.results.append((f"{n} × 16 KiB at 16, the machine's CPU a file (ms, per round; a 10 ms tick is "
                          f"{10 / n:.3f} ms a file)", "", machine, "see unit"))

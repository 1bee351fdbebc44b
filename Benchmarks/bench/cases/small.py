import os, statistics, subprocess, sys, time
from ..harness import cpu_seconds, machine_ticks, minor_faults, no_sync_library


# The smoke run's guard (CI): Ferry's small-file rate over curl's, the median of its three
# rounds of 300 files, may not fall below this: half the lowest the debug build did in seven
# runs on 2026-11-27 (0.18-0.43, see docs/benchmarks.md), so it catches a 2x regression,
# never a noisy round.
SMOKE_SMALL_FLOOR = 0.08

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

    tools = {
        "ferry (16 / 16 per host)": ferry_run,
        **({f"{b.against[0]} (16 / 16 per host)": ferry_run} if b.against else {}),
        "curl --parallel 16": peer(curl_argv),
        "wget2 16 threads": peer(lambda d: ["wget2", "-q", "--no-robots", "--max-threads=16", "-P", d, "-i", listing]),
        "aria2c -j16": peer(lambda d: ["aria2c", "-q", "-j16", "--file-allocation=none", "-d", d, "-i", listing]),
    }
    if not b.peers:   # builds against each other only (a bisect)
        tools = {k: v for k, v in tools.items() if k.startswith("ferry")}
    rate = {k: [] for k in tools}
    conns = {k: [] for k in tools}
    ferry_cpu = {}
    ferry_faults = {}
    busy = []
    rate_defaults = []
    rate_no_sync = []
    no_sync = no_sync_library(b.work)
    for r in range(rounds):
        order = list(tools)[r % len(tools):] + list(tools)[:r % len(tools)]
        for tool in order:
            if tool.startswith("ferry"):
                other = b.against[1] if b.against and tool.startswith(b.against[0]) else None
                b.start_agent("--max-transfers", "16", "--max-per-host", "16", root=b.small_root, bin=other)
            d = b.fresh_dir("small", root=b.small_root)
            mark = b.log_mark()
            a0 = cpu_seconds(b.agent.pid) if tool.startswith("ferry") else 0
            f0 = minor_faults(b.agent.pid) if tool.startswith("ferry") else 0
            m0 = machine_ticks()
            t0 = time.monotonic()
            tools[tool](d)
            elapsed = time.monotonic() - t0
            if tool.startswith("ferry"):
                ferry_cpu.setdefault(tool, []).append((cpu_seconds(b.agent.pid) - a0) / n * 1000)
                ferry_faults.setdefault(tool, []).append((minor_faults(b.agent.pid) - f0) / n)
            if tool == "ferry (16 / 16 per host)":
                m1 = machine_ticks()
                busy.append(100 * (1 - (m1[1] - m0[1]) / max(1, m1[0] - m0[0])))
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
    b.results.append((f"{n} × 16 KiB, Ferry alone", "", {
        "ferry with its defaults, 6 / 2 per host (files/s, per round)": rate_defaults,
        "all CPUs busy while ferry runs at 16 (%, per round)": busy,
        "ferry at 16 with fsync made a no-op by a preload, what durability costs (files/s, per round)":
            rate_no_sync or ["no C compiler"]}, "see unit"))

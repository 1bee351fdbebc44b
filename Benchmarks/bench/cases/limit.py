import os, subprocess, time


def run(b):
    """4 downloads under one 2 MiB/s download limit (aria2c's --max-overall-download-limit
    beside it): the total over a 10 s window against the limit, and each transfer against its
    fair share. Targets (issue 27): total within 10 %, each within 20 %."""
    limit, n = 2 << 20, 4
    window, warmup = (3, 0.5) if b.smoke else (10, 2)
    size = 64 << 20
    for i in range(n):
        with open(os.path.join(b.www, f"limit{i}.bin"), "wb") as f:
            f.truncate(size)
    urls = [f"{b.base}/limit{i}.bin" for i in range(n)]
    rows = {}
    for r in range(b.rounds):
        b.start_agent("--download-limit", str(limit), "--max-transfers", str(n), "--max-per-host", str(n))
        b.session()
        d = b.fresh_dir("limit-ferry")
        ids = [b.api.CreateDownload("bench", u, {"directory": d}) for u in urls]
        time.sleep(warmup)   # a benchmark's window, not a synchronisation
        first = [int(b.api.GetTask(i)["received"]) for i in ids]
        t0 = time.monotonic()
        time.sleep(window)
        last = [int(b.api.GetTask(i)["received"]) for i in ids]
        seconds = time.monotonic() - t0
        rates = [(y - x) / seconds for x, y in zip(first, last)]
        b.stop_agent()
        rows.setdefault("ferry: total / limit", []).append(sum(rates) / limit)
        rows.setdefault("ferry: worst transfer / fair share", []).append(
            max(rates, key=lambda v: abs(v / (limit / n) - 1)) / (limit / n))
        # aria2c with its own overall limit, the same window (file sizes: what it wrote).
        d = b.fresh_dir("limit-aria2c")
        p = subprocess.Popen(["aria2c", "-q", "--file-allocation=none", "-j", str(n), "-d", d,
                              f"--max-overall-download-limit={limit}", *urls],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(warmup)
        names = [os.path.join(d, os.path.basename(u)) for u in urls]
        first = [os.path.getsize(f) if os.path.exists(f) else 0 for f in names]
        t0 = time.monotonic()
        time.sleep(window)
        last = [os.path.getsize(f) if os.path.exists(f) else 0 for f in names]
        seconds = time.monotonic() - t0
        p.kill()
        p.wait()
        rates = [(y - x) / seconds for x, y in zip(first, last)]
        rows.setdefault("aria2c: total / limit", []).append(sum(rates) / limit)
        rows.setdefault("aria2c: worst transfer / fair share", []).append(
            max(rates, key=lambda v: abs(v / (limit / n) - 1)) / (limit / n))
    b.record(f"{n} downloads under a {limit >> 20} MiB/s limit, {window} s window (per round)", "ratio",
             {k: [round(v, 3) for v in vals] for k, vals in rows.items()}, better="see unit")
    for i in range(n):
        os.remove(os.path.join(b.www, f"limit{i}.bin"))

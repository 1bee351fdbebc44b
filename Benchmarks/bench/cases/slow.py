import os, statistics, subprocess, time, json
import dbus
from ..harness import cpu_seconds, free_port, percentile, rss_mib


def run(b):
    n = 20 if b.smoke else 500
    with open(os.path.join(b.www, "slow.bin"), "wb") as f:
        f.write(os.urandom(4 << 20))
    os.makedirs(os.path.join(b.www, "slow"), exist_ok=True)
    os.replace(os.path.join(b.www, "slow.bin"), os.path.join(b.www, "slow", "slow.bin"))
    url = b.base + "/slow/slow.bin"
    window = 3 if b.smoke else 10
    b.start_agent("--max-transfers", str(n), "--max-per-host", str(n))
    s = b.session()
    reqs = dbus.Array([dbus.Struct((url, {"directory": b.fresh_dir("slow")}), signature="sa{sv}") for _ in range(n)],
                      signature="(sa{sv})")
    ids = b.api.CreateDownloads(s, reqs)
    while int(b.api.GetStatus()["running"]) < n:
        time.sleep(0.05)
    monitor = subprocess.Popen(["dbus-monitor", "--address", os.environ["DBUS_SESSION_BUS_ADDRESS"],
                                "type='signal',sender='dev.ferry.Agent1'"], stdout=subprocess.PIPE, text=True)
    time.sleep(0.5)
    c0, t0 = cpu_seconds(b.agent.pid), time.monotonic()
    samples = []
    while time.monotonic() - t0 < window:
        a = time.perf_counter()
        b.api.GetStatus()
        samples.append((time.perf_counter() - a) * 1000)
        time.sleep(0.01)
    elapsed = time.monotonic() - t0
    ferry_cpu = (cpu_seconds(b.agent.pid) - c0) / elapsed * 100
    ferry_rss = [rss_mib(b.agent.pid), rss_mib(b.agent.pid, "RssAnon")]   # all n still running
    monitor.terminate()
    signals_seen = sum(1 for line in monitor.stdout if line.startswith("signal "))
    for i in ids:
        b.api.Cancel(i)
    # aria2c with the same 500 transfers, its RPC asked as often.
    rpc_port = free_port()
    d = b.fresh_dir("slow-aria2")
    listing = os.path.join(b.work, "slow.txt")
    with open(listing, "w") as f:
        for i in range(n):
            f.write(f"{url}\n  out=s{i}.bin\n")
    aria = subprocess.Popen(["aria2c", "-q", f"-j{n}", "--file-allocation=none", "-d", d, "-i", listing,
                             "--enable-rpc", f"--rpc-listen-port={rpc_port}", "--max-connection-per-server=1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import json, urllib.request
    body = json.dumps({"jsonrpc": "2.0", "id": "b", "method": "aria2.getGlobalStat", "params": []}).encode()
    rpc = f"http://127.0.0.1:{rpc_port}/jsonrpc"
    while True:
        try:
            stat = json.load(urllib.request.urlopen(urllib.request.Request(rpc, body)))["result"]
            if int(stat["numActive"]) >= n:
                break
        except OSError:
            pass
        time.sleep(0.05)
    time.sleep(0.5)
    c0, t0 = cpu_seconds(aria.pid), time.monotonic()
    aria_samples = []
    while time.monotonic() - t0 < window:
        a = time.perf_counter()
        urllib.request.urlopen(urllib.request.Request(rpc, body)).read()
        aria_samples.append((time.perf_counter() - a) * 1000)
        time.sleep(0.01)
    aria_cpu = (cpu_seconds(aria.pid) - c0) / (time.monotonic() - t0) * 100
    aria_rss = [rss_mib(aria.pid), rss_mib(aria.pid, "RssAnon")]
    aria.terminate()
    aria.wait()
    b.results.append((f"{n} slow transfers running ({window} s window; one run)", "see each row", {
        "ferry GetStatus p50 / p99 (ms)": [statistics.median(samples), percentile(samples, 99)],
        "aria2c getGlobalStat p50 / p99 (ms)": [statistics.median(aria_samples), percentile(aria_samples, 99)],
        "ferry agent CPU (%)": [ferry_cpu],
        "aria2c CPU (%)": [aria_cpu],
        "ferry signals on the bus per second": [signals_seen / elapsed],
        "ferry agent RSS, of it anonymous (MiB)": ferry_rss,
        "aria2c RSS, of it anonymous (MiB)": aria_rss,
    }, "see unit"))

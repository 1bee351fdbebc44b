import os, statistics, subprocess, time
import dbus
from ..harness import cpu_seconds, free_port, percentile, rss_mib


def run(b, bin=None, label=""):
    """bin, label: another build's (--against)."""
    total = 2000 if b.smoke else 100_000
    singles = 200 if b.smoke else 3000
    b.start_agent(bin=bin)
    s = b.session()
    latency = {}
    empty_rss, empty_anon = rss_mib(b.agent.pid), rss_mib(b.agent.pid, "RssAnon")

    def probe(level):
        ids = [int(t["id"]) for t in b.api.ListTasks("", dbus.UInt64(0), dbus.UInt32(100))]
        for name, call in (("GetStatus", lambda: b.api.GetStatus()),
                           ("GetTask", lambda: b.api.GetTask(dbus.UInt64(ids[len(ids) // 2] if ids else 1))),
                           ("ListTasks page of 100", lambda: b.api.ListTasks("", dbus.UInt64(0), dbus.UInt32(100))),
                           ("ListTaskRows page of 100", lambda: b.api.ListTaskRows("", dbus.UInt64(0), dbus.UInt32(100))),
                           # A page from the middle of the session's list (ids run 1..level).
                           ("ListTasks middle page of 100", lambda: b.api.ListTasks(s, dbus.UInt64(level // 2), dbus.UInt32(100))),
                           # The same through GDBus, the reply left as the C library parsed it (no
                           # Python objects made): the agent's and the bus's share of the round trip.
                           ("ListTasks middle page of 100, GDBus client", lambda: gdbus_call(
                               "ListTasks", GLib.Variant("(stu)", (s, level // 2, 100)))),
                           ("ListTaskRows middle page of 100, GDBus client", lambda: gdbus_call(
                               "ListTaskRows", GLib.Variant("(stu)", (s, level // 2, 100))))):
            if name == "GetTask" and not ids:
                continue
            samples = []
            calls = 50 if b.smoke else 300
            a0 = cpu_seconds(b.agent.pid)
            for _ in range(calls):
                t0 = time.perf_counter()
                call()
                samples.append((time.perf_counter() - t0) * 1000)
            # The round trip includes the Python client's own decoding; the agent's share apart.
            agent_ms = (cpu_seconds(b.agent.pid) - a0) / calls * 1000
            latency.setdefault(name, []).append((level, statistics.median(samples), percentile(samples, 99), agent_ms))

    from gi.repository import Gio, GLib
    gdbus = Gio.DBusConnection.new_for_address_sync(
        os.environ["DBUS_SESSION_BUS_ADDRESS"],
        Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)

    def gdbus_call(method, args):
        return gdbus.call_sync("dev.ferry.Agent1", "/dev/ferry/Agent1", "dev.ferry.Agent1", method, args,
                               None, Gio.DBusCallFlags.NONE, -1, None)

    probe(0)
    batch = 1000
    paused = {"paused": dbus.Boolean(True)}
    t0 = time.monotonic()
    done = 0
    levels = [10_000, total] if not b.smoke else [total]
    # The server side's CPU per task (the agent; the agent and the bus daemon), apart from the
    # Python client's: the rate of batches is mostly the client's and the bus's here.
    cpu_agent, cpu_bus, cpu_probes = cpu_seconds(b.agent.pid), cpu_seconds(b.bus_daemon.pid), [0.0, 0.0]
    while done < total:
        reqs = dbus.Array([dbus.Struct((f"{b.base}/q/{done + i}", paused), signature="sa{sv}") for i in range(batch)],
                          signature="(sa{sv})")
        b.api.CreateDownloads(s, reqs)
        done += batch
        if done in levels and done != total:
            elapsed = time.monotonic() - t0
            a, d = cpu_seconds(b.agent.pid), cpu_seconds(b.bus_daemon.pid)
            probe(done)
            cpu_probes[0] += cpu_seconds(b.agent.pid) - a
            cpu_probes[1] += cpu_seconds(b.bus_daemon.pid) - d
            t0 = time.monotonic() - elapsed
    batch_rate = total / (time.monotonic() - t0)
    agent_us = (cpu_seconds(b.agent.pid) - cpu_agent - cpu_probes[0]) / total * 1e6
    bus_us = (cpu_seconds(b.bus_daemon.pid) - cpu_bus - cpu_probes[1]) / total * 1e6
    probe(total)
    full_rss, full_anon = rss_mib(b.agent.pid), rss_mib(b.agent.pid, "RssAnon")
    t0 = time.monotonic()
    for i in range(singles):
        b.api.CreateDownload(s, f"{b.base}/single/{i}", paused)
    single_rate = singles / (time.monotonic() - t0)
    # ferry list --json over the whole queue.
    c0, t0 = os.times(), time.monotonic()
    with open(os.devnull, "w") as null:
        p = subprocess.Popen([os.path.join(bin or b.bin, "ferry"), "list", "--json"], stdout=null)
        _, status, usage = os.wait4(p.pid, 0)
    list_wall, list_rss = time.monotonic() - t0, usage.ru_maxrss / 1024
    # Idle: syscalls of the agent over a while, with the whole queue in the store.
    idle_seconds = 2 if b.smoke else 20
    # The agent's one-off wakes after a start are over, and GLib's worker thread (used once at
    # start-up, by GNetworkMonitor) has retired: it exits 15 s after its last job, a one-off
    # exit that is not an idle wake-up.
    time.sleep(2.5 if b.smoke else max(2.5, b.agent_started + 16 - time.monotonic()))
    trace = subprocess.run(["timeout", "-s", "INT", str(idle_seconds), "strace", "-f", "-c", "-p", str(b.agent.pid)],
                           capture_output=True, text=True)
    # strace's own attach shows as one restart_syscall per thread: not the agent's doing.
    idle_calls = 0
    for line in trace.stderr.splitlines():
        cols = line.split()
        if len(cols) >= 5 and cols[-1] not in ("total", "restart_syscall", "syscall") and cols[3].isdigit():
            idle_calls += int(cols[3])
    # Restart with the queue in the store: time to the first answer.
    b.stop_agent()
    restart = b.start_agent(fresh=False, bin=bin)
    rows = {
        f"batch enqueue, {batch} per call (tasks/s)": [batch_rate],
        "batch enqueue, CPU per task: agent, agent + bus daemon (µs)": [agent_us, agent_us + bus_us],
        "one CreateDownload per task (calls/s)": [single_rate],
        "agent RSS empty, of it anonymous (MiB)": [empty_rss, empty_anon],
        f"agent RSS with {total} queued, of it anonymous (MiB)": [full_rss, full_anon],
        f"ferry list --json of {total + singles} (s)": [list_wall],
        "ferry list --json max RSS (MiB)": [list_rss],
        f"syscalls in {idle_seconds} s idle, {total} queued": [idle_calls],
        f"restart with {total} in the store, first answer (s)": [restart],
    }
    if b.peers and not label:
        # aria2c's RPC daemon beside it, the same numbers of tasks the same ways (its downloads
        # held with --pause, as Ferry's are created paused): the side-by-side targets.
        aria_batch, aria_single, aria_us = aria2_enqueue(b, total, singles, batch)
        rows[f"aria2c system.multicall of {batch} addUri (tasks/s)"] = [aria_batch]
        rows["aria2c multicall, CPU per task (µs)"] = [aria_us]
        rows["Ferry/aria2c CPU per task in batches: agent, agent + bus daemon"] = [agent_us / aria_us, (agent_us + bus_us) / aria_us]
        rows["aria2c one addUri per task (calls/s)"] = [aria_single]
        rows["Ferry/aria2c: batches, single calls"] = [batch_rate / aria_batch, single_rate / aria_single]
    for name, points in latency.items():
        for level, p50, p99, agent_ms in points:
            rows[f"{name} at {level} tasks, round trip p50 / p99, agent CPU per call (ms)"] = [p50, p99, agent_ms]
    b.results.append((f"Queue of {total} tasks ({label or 'Ferry'} alone; one run)", "see each row", {k: v for k, v in rows.items()}, "see unit"))


def aria2_enqueue(b, total, singles, batch):
    """aria2c's RPC (JSON over HTTP, the usual client): tasks/s in multicalls of `batch` addUri
    (and aria2c's CPU per task), then calls/s of single addUri; its downloads paused, nothing fetched."""
    import json, urllib.request
    port = free_port()
    aria = subprocess.Popen(["aria2c", "--enable-rpc", f"--rpc-listen-port={port}", "--pause=true", "-q",
                             "-d", b.fresh_dir("queue-aria2"), f"--max-download-result={total + singles}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rpc = f"http://127.0.0.1:{port}/jsonrpc"

    def call(method, params):
        body = json.dumps({"jsonrpc": "2.0", "id": "q", "method": method, "params": params}).encode()
        return json.load(urllib.request.urlopen(urllib.request.Request(rpc, body)))

    try:
        while True:
            try:
                call("aria2.getVersion", [])
                break
            except OSError:
                time.sleep(0.05)   # the daemon is starting
        t0, c0 = time.monotonic(), cpu_seconds(aria.pid)
        for start in range(0, total, batch):
            calls = [{"methodName": "aria2.addUri", "params": [[f"{b.base}/qa/{start + i}"]]} for i in range(batch)]
            call("system.multicall", [calls])
        batch_rate = total / (time.monotonic() - t0)
        batch_us = (cpu_seconds(aria.pid) - c0) / total * 1e6
        t0 = time.monotonic()
        for i in range(singles):
            call("aria2.addUri", [[f"{b.base}/sa/{i}"]])
        return batch_rate, singles / (time.monotonic() - t0), batch_us
    finally:
        aria.terminate()
        aria.wait()

import os, signal, subprocess, time


def run(b):
    size = (16 if b.smoke else 512) << 20
    os.makedirs(os.path.join(b.www, "paced"), exist_ok=True)
    path = os.path.join(b.www, "paced", "k.bin")
    with open(path, "wb") as f:
        for _ in range(size >> 20):
            f.write(os.urandom(1 << 20))
    url = b.base + "/paced/k.bin"
    cut = 0.5 if b.smoke else 4.0   # seconds into the download (40 MB/s)
    refetched = {"ferry": [], "curl -C -": [], "aria2c -c": []}
    for r in range(b.rounds):
        # Ferry: kill -9 the agent, start it again, let it finish.
        b.start_agent()
        d = b.fresh_dir("kill-ferry")
        mark = b.log_mark()
        b.session()
        b.api.CreateDownload("bench", url, {"directory": d})
        time.sleep(cut)
        b.stop_agent(signal.SIGKILL)
        b.start_agent(fresh=False)
        b.wait_all_ended(1)
        refetched["ferry"].append((b.log_since(mark)[1] - size) / 1e6)
        for tool, first, again in (
                ("curl -C -", lambda d: ["curl", "-s", "-o", d + "/k.bin", url],
                 lambda d: ["curl", "-s", "-C", "-", "-o", d + "/k.bin", url]),
                ("aria2c -c", lambda d: ["aria2c", "-q", "--file-allocation=none", "-d", d, "-o", "k.bin", url],
                 lambda d: ["aria2c", "-q", "-c", "--file-allocation=none", "-d", d, "-o", "k.bin", url])):
            d = b.fresh_dir("kill-" + tool.split()[0])
            mark = b.log_mark()
            p = subprocess.Popen(first(d), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(cut)
            p.kill()
            p.wait()
            subprocess.run(again(d), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if os.path.getsize(d + "/k.bin") != size:
                raise SystemExit(f"{tool}: wrong size after resuming")
            refetched[tool].append((b.log_since(mark)[1] - size) / 1e6)
    b.record(f"kill -9 {cut:g} s into a {size >> 20} MiB download, bytes fetched twice", "MB", refetched)
    os.remove(path)

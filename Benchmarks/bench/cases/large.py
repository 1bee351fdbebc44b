import os, subprocess
from ..harness import cpu_seconds


def run(b):
    size = (8 if b.smoke else 1024) << 20
    path = os.path.join(b.www, "big.bin")
    with open(path, "wb") as f:
        for _ in range(size >> 20):
            f.write(os.urandom(1 << 20))
    url = b.base + "/big.bin"
    b.start_agent()
    ferry = os.path.join(b.bin, "ferry")
    tools = {
        "ferry (incl. its fsync)": lambda d: [ferry, "download", "--wait", "--dir", d, url],
        "wget2": lambda d: ["wget2", "-q", "--no-robots", "-O", d + "/big.bin", url],
        "curl": lambda d: ["curl", "-s", "-o", d + "/big.bin", url],
        "aria2c": lambda d: ["aria2c", "-q", "--allow-overwrite=true", "--file-allocation=none", "-d", d, "-o", "big.bin", url],
    }
    wall = {k: [] for k in tools}
    wall_sync = {k + " + sync": [] for k in tools if not k.startswith("ferry")}
    cpu = {k: [] for k in tools}
    ceiling = []
    for r in range(b.rounds):
        order = list(tools)[r % len(tools):] + list(tools)[:r % len(tools)]
        for tool in order:
            d = b.fresh_dir("large")
            subprocess.run(["sync"])
            a0 = cpu_seconds(b.agent.pid) if tool.startswith("ferry") else 0
            w, c = b.timed(tools[tool](d))
            if tool.startswith("ferry"):
                c += cpu_seconds(b.agent.pid) - a0
                wall[tool].append(w)
            else:
                ws, _ = b.timed(["sync"])
                wall[tool].append(w)
                wall_sync[tool + " + sync"].append(w + ws)
            cpu[tool].append(c)
            got = os.path.join(d, "big.bin")
            if os.path.getsize(got) != size:
                raise SystemExit(f"{tool}: wrong size")
        ceiling.append(b.timed(["curl", "-s", "-o", "/dev/null", url])[0])
    ferry_key = "ferry (incl. its fsync)"
    b.record(f"One {size >> 20} MiB file, wall incl. flush to disk", "s",
                {ferry_key: wall[ferry_key], **wall_sync, "curl -o /dev/null (loopback ceiling)": ceiling})
    b.record(f"One {size >> 20} MiB file, wall without the peers' sync", "s", wall)
    b.record(f"One {size >> 20} MiB file, CPU (Ferry: agent + CLI)", "s", cpu)
    os.remove(path)

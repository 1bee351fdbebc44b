import os, shutil, socket, subprocess, time
from ..harness import REPO, free_port


def run(b):
    """A 200 MB upload to tuspyserver (PyPI, under uvicorn) on loopback: Ferry's bounded
    PATCHes (`--resumable tus`) against curl making the resource (POST) and sending the file in
    one PATCH, interleaved. What bounding costs. Target (issue 41): Ferry ≤ 1.2 × one PATCH."""
    size = (8 if b.smoke else 200) * 1000 * 1000
    files, log = os.path.join(b.work, "tus-files"), os.path.join(b.work, "tus.log")
    port = free_port()
    server = subprocess.Popen(["python3", os.path.join(REPO, "Tests/Support/tus-server.py"), str(port), files, log],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    b.procs.append(server)
    for _ in range(400):
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            break
        except OSError:
            time.sleep(0.05)
    else:
        raise SystemExit("tuspyserver did not start (scripts/install-deps --test installs it)")
    source = os.path.join(b.work, "tus-source.bin")
    with open(source, "wb") as f:
        for _ in range(size // 1_000_000):
            f.write(os.urandom(1_000_000))
    url = f"http://127.0.0.1:{port}/files/"

    def ferry_run():
        s = b.session()
        before = sum(int(v) for v in b.api.GetStatus()["tasks"].values())
        b.api.CreateUpload(s, url, source, {"method": "POST", "resumable": "tus"})
        b.wait_all_ended(before + 1)

    def curl_run():
        tus = ["-H", "Tus-Resumable: 1.0.0"]
        made = subprocess.run(["curl", "-sf", "-o", "/dev/null", "-w", "%header{location}", "-X", "POST", *tus,
                               "-H", f"Upload-Length: {size}", "-H", "Upload-Metadata: filename Yi5iaW4=", url],
                              check=True, capture_output=True, text=True).stdout.strip()
        subprocess.run(["curl", "-sf", "-o", "/dev/null", "-X", "PATCH", *tus, "-H", "Upload-Offset: 0",
                        "-H", "Content-Type: application/offset+octet-stream", "-T", source,
                        made if made.startswith("http") else f"http://127.0.0.1:{port}{made}"], check=True)

    tools = {"ferry (bounded PATCHes)": ferry_run, "curl (one PATCH)": curl_run}
    wall = {k: [] for k in tools}
    b.start_agent()
    for r in range(b.rounds):
        for tool in list(tools)[r % 2:] + list(tools)[:r % 2]:
            t0 = time.monotonic()
            tools[tool]()
            wall[tool].append(time.monotonic() - t0)
            shutil.rmtree(files, ignore_errors=True)
            os.makedirs(files)
    b.stop_agent()
    b.record(f"one {size // 1000000} MB upload to tuspyserver (tus)", "s", wall)
    os.remove(source)
    server.terminate()

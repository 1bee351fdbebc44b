import os, socket, subprocess, time
from ..harness import free_port


def run(b):
    """3000 × 16 KiB over HTTPS from nginx with HTTP/2 and a test certificate: Ferry at 16
    against curl --parallel (which multiplexes), interleaved, connections counted from nginx's
    log. Target (issue 28): at least 0.5 × curl's files per second, no more connections."""
    n = 100 if b.smoke else 3000
    d = os.path.join(b.work, "h2")
    os.makedirs(os.path.join(b.www, "h2"), exist_ok=True)
    cert, key = os.path.join(b.work, "h2-cert.pem"), os.path.join(b.work, "h2-key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port = free_port()
    conf = os.path.join(b.work, "h2-nginx.conf")
    log = os.path.join(b.work, "h2-access.log")
    with open(conf, "w") as f:
        f.write(f"""daemon off; master_process off; worker_processes 1; pid {b.work}/h2.pid;
error_log {b.work}/h2-error.log; events {{ worker_connections 4096; }}
http {{ log_format conn '$connection $request_uri'; access_log {log} conn; keepalive_requests 100000;
  http2_max_requests 100000; client_body_temp_path {b.work}; proxy_temp_path {b.work}; fastcgi_temp_path {b.work};
  uwsgi_temp_path {b.work}; scgi_temp_path {b.work};
  server {{ listen 127.0.0.1:{port} ssl http2; ssl_certificate {cert}; ssl_certificate_key {key}; root {b.www}; }} }}
""")
    nginx = subprocess.Popen(["nginx", "-p", b.work, "-c", conf])
    b.procs.append(nginx)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            break
        except OSError:
            time.sleep(0.05)
    names = [f"h{i:05d}.bin" for i in range(n)]
    for name in names:
        with open(os.path.join(b.www, "h2", name), "wb") as f:
            f.write(os.urandom(16 * 1024))
    urls = [f"https://127.0.0.1:{port}/h2/{name}" for name in names]

    def connections_since(mark):
        with open(log) as f:
            f.seek(mark)
            return len({l.split()[0] for l in f if l.strip()})

    def ferry_run(out):
        b.download_all(urls, out)

    def curl_run(out):
        config = os.path.join(b.work, "h2-curl.cfg")
        with open(config, "w") as f:
            for u, name in zip(urls, names):
                f.write(f'url = "{u}"\noutput = "{out}/{name}"\n')
        subprocess.run(["curl", "-s", "--cacert", cert, "--parallel", "--parallel-max", "16", "-K", config], check=True)

    tools = {"ferry (16 / 16 per host)": ferry_run, "curl --parallel 16": curl_run}
    rate, conns = {k: [] for k in tools}, {k: [] for k in tools}
    for r in range(b.rounds):
        for tool in list(tools)[r % 2:] + list(tools)[:r % 2]:
            if tool.startswith("ferry"):
                b.start_agent("--max-transfers", "16", "--max-per-host", "16", "--ca-file", cert)
            out = b.fresh_dir("h2")
            mark = os.path.getsize(log) if os.path.exists(log) else 0
            t0 = time.monotonic()
            tools[tool](out)
            rate[tool].append(n / (time.monotonic() - t0))
            conns[tool].append(connections_since(mark))
            if len(os.listdir(out)) != n:
                raise SystemExit(f"{tool}: {len(os.listdir(out))} of {n} files over HTTP/2")
    b.stop_agent()
    b.record(f"{n} × 16 KiB over HTTPS with HTTP/2, 16 at once", "files/s", rate, better="higher")
    b.record(f"{n} × 16 KiB over HTTP/2, TCP connections opened", "connections", conns)
    nginx.terminate()

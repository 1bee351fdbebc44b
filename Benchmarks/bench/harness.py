"""The benchmark's harness: nginx, a private bus, agents of any build, the scratch ext4 and
the tables it prints (what it reads of processes is in readings.py)."""
import argparse, os, shutil, signal, socket, statistics, subprocess, sys, tempfile, time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import dbus  # installed by need() before this module is imported

# The readings, for the cases that import them from here.
from .readings import (TICK, children_cpu, cpu_seconds, machine_ticks, minor_faults,  # noqa: E402,F401
                       process_ticks, rss_mib, thread_ticks, ticks_by_name)


def no_sync_library(folder):
    """A preload library that makes fsync(2), fdatasync(2) and syncfs(2) return at once: run
    beside Ferry, it shows what durability costs. Never part of Ferry. None without a C compiler."""
    source, library = os.path.join(folder, "nosync.c"), os.path.join(folder, "nosync.so")
    with open(source, "w") as f:
        f.write("int fsync(int fd) { return 0; }\nint fdatasync(int fd) { return 0; }\nint syncfs(int fd) { return 0; }\n")
    for cc in ("cc", "clang", "gcc"):
        if shutil.which(cc) and subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", library, source],
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
            return library
    return None


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def percentile(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))] if v else float("nan")


class ScratchExt4:
    """A journaled ext4 in a sparse image file, loop-mounted, for the small-files case.

    Why not just /tmp: a file system without a journal (this VM's root) makes file creation
    after a mass deletion scan every recently deleted inode (ext4's recently_deleted()), so
    3,000 files cost 0.1 s or 3 s depending on what was deleted in the last minutes, for every
    tool alike. A desktop's ext4 has a journal. fsync on the loop device reaches the disk.
    Needs root and a loop device; otherwise the benchmark runs in the temporary folder."""

    def __init__(self, size_gib=8):
        self.image = tempfile.mktemp(prefix="ferry-bench-", suffix=".ext4")
        self.mount = tempfile.mkdtemp(prefix="ferry-bench-fs-")
        self.ok = False
        if os.geteuid() != 0 or not shutil.which("mkfs.ext4"):
            self.why = "not root" if os.geteuid() != 0 else "no mkfs.ext4"
            return
        with open(self.image, "wb") as f:
            f.truncate(size_gib << 30)
        made = subprocess.run(["mkfs.ext4", "-q", "-F", self.image], capture_output=True, text=True)
        mounted = made.returncode == 0 and subprocess.run(["mount", "-o", "loop", self.image, self.mount],
                                                          capture_output=True, text=True)
        if not mounted or mounted.returncode != 0:
            self.why = (mounted.stderr if mounted else made.stderr).strip() or "mount refused"
            os.remove(self.image)
            return
        self.ok = True
        self.why = ""

    def close(self):
        if self.ok:
            if subprocess.run(["umount", self.mount]).returncode != 0:
                subprocess.run(["umount", "-l", self.mount])
            os.remove(self.image)
        shutil.rmtree(self.mount, ignore_errors=True)


def build_revision(rev):
    """The release build of `rev` (a commit of this repository): its bin folder, built once into
    $TMPDIR/ferry-build-SHA from `git archive` (no work tree of the repository is touched)."""
    sha = subprocess.run(["git", "rev-parse", "--verify", rev + "^{commit}"], cwd=REPO, check=True,
                         capture_output=True, text=True).stdout.strip()
    src = os.path.join(tempfile.gettempdir(), "ferry-build-" + sha[:12])
    if not os.path.exists(os.path.join(src, ".build", "release", "ferryd")):
        print(f"building {rev} ({sha[:12]}, release) in {src}...", file=sys.stderr)
        os.makedirs(src, exist_ok=True)
        archive = subprocess.Popen(["git", "archive", sha], cwd=REPO, stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", src], stdin=archive.stdout, check=True)
        archive.wait()
        subprocess.run(["swift", "build", "-c", "release"], cwd=src, check=True, stdout=subprocess.DEVNULL)
    return subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=src, check=True,
                          capture_output=True, text=True).stdout.strip()


class Bench:
    def __init__(self, smoke, rounds, against=None, this=None, peers=True):
        self.smoke = smoke
        self.peers = peers
        self.rounds = rounds
        # (label, bin folder) of another build measured beside this one, or None.
        self.against = (f"ferry@{against}", build_revision(against)) if against else None
        # Smoke runs (CI) stay in the temporary folder: seconds, no figures to trust.
        self.scratch = None if smoke else ScratchExt4()
        if self.scratch and not self.scratch.ok:
            print(f"no scratch ext4 ({self.scratch.why}): figures from the temporary folder", file=sys.stderr)
        self.work = tempfile.mkdtemp(prefix="ferry-bench-")
        # The small files (state and output) go to the scratch ext4; the other cases stay in the
        # temporary folder (a loop device adds its own writeback to one big file's flush).
        scratch = self.scratch.mount if self.scratch and self.scratch.ok else None
        self.small_root = tempfile.mkdtemp(prefix="small-", dir=scratch) if scratch else self.work
        self.filesystem = ("the temporary folder; small files on a journaled ext4 (loop device)" if scratch
                           else "the temporary folder's file system")
        self.procs = []
        self.results = []   # (case, rows) printed at the end
        config = "debug" if smoke and not os.path.exists(os.path.join(REPO, ".build/release/ferryd")) else "release"
        # Always built (incremental: seconds when up to date): a release build left from an
        # earlier commit would otherwise be measured as this work tree's.
        if not this and config == "release":
            print("building ferry (release)...", file=sys.stderr)
            subprocess.run(["swift", "build", "-c", "release"], cwd=REPO, check=True, stdout=subprocess.DEVNULL)
        self.bin = build_revision(this) if this else subprocess.run(
            ["swift", "build", "-c", config, "--show-bin-path"], cwd=REPO, check=True, capture_output=True, text=True).stdout.strip()
        self.config = config
        self.www = os.path.join(self.work, "www")
        os.makedirs(os.path.join(self.www, "small"))
        self.start_nginx()
        self.start_bus()
        self.agent = None

    # -- servers ---------------------------------------------------------------------------

    def start_nginx(self):
        d = os.path.join(self.work, "nginx")
        os.makedirs(os.path.join(d, "tmp"))
        self.port = free_port()
        self.access_log = os.path.join(d, "access.log")
        with open(os.path.join(d, "nginx.conf"), "w") as f:
            f.write(f"""daemon off; master_process off; worker_processes 1; pid {d}/pid;
error_log {d}/error.log; worker_rlimit_nofile 8192;
events {{ worker_connections 4096; }}
http {{ log_format conn '$connection $body_bytes_sent $request_uri';
  access_log {self.access_log} conn; sendfile on; keepalive_requests 100000;
  client_body_temp_path {d}/tmp; proxy_temp_path {d}/tmp; fastcgi_temp_path {d}/tmp;
  uwsgi_temp_path {d}/tmp; scgi_temp_path {d}/tmp;
  server {{ listen 127.0.0.1:{self.port}; root {self.www};
    location /slow/ {{ limit_rate 20k; }}
    location /paced/ {{ limit_rate 40m; }} }} }}
""")
        self.procs.append(subprocess.Popen(["nginx", "-p", d, "-c", os.path.join(d, "nginx.conf")]))
        self.base = f"http://127.0.0.1:{self.port}"
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port)).close()
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("nginx did not start")

    def log_mark(self):
        return os.path.getsize(self.access_log) if os.path.exists(self.access_log) else 0

    def log_since(self, mark):
        """(connections, bytes sent) that nginx logged since `mark`."""
        with open(self.access_log) as f:
            f.seek(mark)
            lines = [l.split() for l in f if l.strip()]
        return len({l[0] for l in lines}), sum(int(l[1]) for l in lines)

    def start_bus(self):
        p = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"], stdout=subprocess.PIPE, text=True)
        self.procs.append(p)
        self.bus_daemon = p   # its CPU is part of what a call costs
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = p.stdout.readline().strip()
        os.environ["XDG_STATE_HOME"] = os.path.join(self.work, "xdg-state")
        self.bus = dbus.bus.BusConnection(os.environ["DBUS_SESSION_BUS_ADDRESS"])

    # -- the agent -------------------------------------------------------------------------

    def start_agent(self, *args, fresh=True, root=None, preload=None, bin=None, cpus=None):
        """root: the folder (file system) its state lives in; the download folders must share it.
        bin: another build's folder (--against). cpus: the CPUs it may use (taskset's list)."""
        self.stop_agent()
        state = os.path.join(root or self.work, "state")
        if fresh:
            shutil.rmtree(state, ignore_errors=True)
        log = open(os.path.join(self.work, "ferryd.log"), "a")
        t0 = self.agent_started = time.monotonic()
        self.agent = subprocess.Popen([*(["taskset", "-c", cpus] if cpus else []),
                                       os.path.join(bin or self.bin, "ferryd"), "--state-dir", state, "--no-popups",
                                       "--log-level", "warning", "--state-reserve-mb", "1", "--state-reserve-percent", "0",
                                       "--download-dir", os.path.join(self.work, "downloads"), *args],
                                      stdout=log, stderr=log,
                                      env=dict(os.environ, LD_PRELOAD=preload) if preload else None)
        os.makedirs(os.path.join(self.work, "downloads"), exist_ok=True)
        while True:
            try:
                self.api = dbus.Interface(self.bus.get_object("dev.ferry.Agent1", "/dev/ferry/Agent1"), "dev.ferry.Agent1")
                self.api.GetStatus()
                return time.monotonic() - t0
            except dbus.DBusException:
                if self.agent.poll() is not None:
                    raise SystemExit("ferryd exited: see " + log.name)
                time.sleep(0.01)

    def stop_agent(self, sig=signal.SIGTERM):
        if self.agent and self.agent.poll() is None:
            self.agent.send_signal(sig)
            self.agent.wait()
        self.agent = None

    def session(self, name="bench"):
        self.api.OpenSession(name, {"keep-events": dbus.Boolean(False)})
        return name

    def download_all(self, urls, directory):
        """One batch of downloads into `directory` in a fresh session, waited for to the end."""
        s = self.session()
        before = sum(int(v) for v in self.api.GetStatus()["tasks"].values())
        reqs = dbus.Array([dbus.Struct((u, {"directory": directory}), signature="sa{sv}") for u in urls],
                          signature="(sa{sv})")
        self.api.CreateDownloads(s, reqs)
        self.wait_all_ended(before + len(urls))

    def wait_all_ended(self, total, timeout=600):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            tasks = self.api.GetStatus()["tasks"]
            ended = sum(int(tasks[s]) for s in ("completed", "failed", "canceled"))
            if ended >= total:
                if int(tasks["failed"]) or int(tasks["canceled"]):
                    raise SystemExit(f"ferry: {int(tasks['failed'])} task(s) failed")
                return
            time.sleep(0.02)   # the poll itself costs the agent: 50 GetStatus a second, under 1 %
        raise SystemExit("ferry: timed out")

    # -- helpers ---------------------------------------------------------------------------

    def fresh_dir(self, name, root=None):
        d = os.path.join(root or self.work, "out", name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        return d

    def timed(self, argv):
        """(wall seconds, CPU seconds) of a command."""
        c0, t0 = children_cpu(), time.monotonic()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.monotonic() - t0, children_cpu() - c0

    def record(self, case, unit, samples, better="lower"):
        """samples: {tool: [value per round]}; Ferry is the tool named 'ferry…'."""
        self.results.append((case, unit, samples, better))

    def report(self):
        out = [f"Benchmark ({'smoke' if self.smoke else f'{self.rounds} rounds'}; {self.config} build; "
               f"{os.cpu_count()} CPUs; files on {self.filesystem}; {time.strftime('%Y-%m-%d')})", ""]
        for case, unit, samples, better in self.results:
            if better == "see unit":   # one run: each row its own measure
                out += [f"**{case}**", "", "| measure | value |", "| --- | --- |"]
                out += [f"| {k} | {' / '.join(fmt(x) for x in v)} |" for k, v in samples.items()] + [""]
                continue
            out.append(f"**{case}** ({unit}, {better} is better)")
            out.append("")
            out.append("| tool | median | min–max | Ferry/tool (median of rounds) |")
            out.append("| --- | --- | --- | --- |")
            first = next((k for k in samples if k.startswith("ferry")), None)
            ferry = samples.get(first)
            for tool, values in samples.items():
                if not values:
                    continue
                ratio = ""
                if ferry and tool != first and len(values) == len(ferry):
                    ratios = [f / v for f, v in zip(ferry, values) if v]   # a peer at 0 has no ratio
                    ratio = f"{statistics.median(ratios):.2f}" if ratios else "–"
                out.append(f"| {tool} | {fmt(statistics.median(values))} | {fmt(min(values))}–{fmt(max(values))} | {ratio} |")
            out.append("")
        text = "\n".join(out)
        print(text)
        with open(os.path.join(tempfile.gettempdir(), "ferry-bench-latest.md"), "w") as f:
            f.write(text + "\n")

    def close(self):
        self.stop_agent()
        for p in self.procs:
            p.terminate()
            p.wait()
        shutil.rmtree(self.work, ignore_errors=True)
        if self.small_root != self.work:
            shutil.rmtree(self.small_root, ignore_errors=True)
        if self.scratch:
            self.scratch.close()


def fmt(v):
    if isinstance(v, str):
        return v
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) >= 100):
        return f"{int(v)}"
    return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"

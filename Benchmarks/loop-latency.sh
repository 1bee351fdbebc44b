#!/usr/bin/env bash
# How long the agent's loop takes to answer GetStatus (p50 / p99 / max over many calls) at rest,
# while a notification server never answers a popup (libnotify would wait 25 s), and while a
# SIZE_MB download with --sha256 is fetched, verified and saved. Target: p99 <= 10 ms in each.
# Usage: Benchmarks/loop-latency.sh [SIZE_MB=2048]
# Needs a release build (swift build -c release), nginx, python3-dbus, dbus-run-session.
set -euo pipefail
size_mb="${1:-2048}"
source "$(dirname "$0")/common.sh"
sha=$(sha256sum "$work/www/big.bin" | cut -d' ' -f1)
echo x > "$work/www/small.bin"

# Calls GetStatus back to back until FILE exists (or for SECONDS) and prints p50 / p99 / max in ms.
cat > "$work/probe.py" <<'PY'
import sys, time, os, dbus
label, until = sys.argv[1], sys.argv[2]
bus = dbus.SessionBus()
agent = bus.get_object("dev.ferry.Agent1", "/dev/ferry/Agent1")
status = agent.get_dbus_method("GetStatus", "dev.ferry.Agent1")
samples = []
end = time.monotonic() + float(until) if until.replace(".", "").isdigit() else None
while (time.monotonic() < end) if end else not os.path.exists(until):
    t0 = time.monotonic(); status(timeout=30); samples.append((time.monotonic() - t0) * 1000)
    time.sleep(0.002)
samples.sort()
pick = lambda q: samples[min(len(samples) - 1, int(q * len(samples)))]
print("%-34s %6d calls  p50 %6.2f ms  p99 %6.2f ms  max %7.2f ms" % (label, len(samples), pick(0.5), pick(0.99), samples[-1]))
PY

inner() {
  "$bin/ferryd" --state-dir "$work/state/ferry" --download-dir "$work/out" --popup-window-ms 50 2>"$work/agent.log" &
  until "$bin/ferry" status >/dev/null 2>&1; do sleep 0.05; done
  /usr/bin/python3 "$work/probe.py" "at rest" 3
  /usr/bin/python3 "$repo/Tests/Support/notification-server.py" "$work/popups.jsonl" --hang &
  gdbus wait --session --timeout 10 org.freedesktop.Notifications
  "$bin/ferry" download --wait "http://127.0.0.1:$port/small.bin" >/dev/null
  until [ -s "$work/popups.jsonl" ]; do sleep 0.05; done   # the Notify call is now hanging
  /usr/bin/python3 "$work/probe.py" "popup to a hung notification server" 3
  ( "$bin/ferry" download --wait --sha256 "$sha" "http://127.0.0.1:$port/big.bin" >/dev/null; touch "$work/done" ) &
  /usr/bin/python3 "$work/probe.py" "${size_mb} MiB download with --sha256" "$work/done"
  cmp -s "$work/out/big.bin" "$work/www/big.bin" || { echo "wrong file" >&2; exit 1; }
}
export -f inner
export work bin port sha size_mb repo
dbus-run-session -- bash -c 'inner; kill $(jobs -p) 2>/dev/null || true'

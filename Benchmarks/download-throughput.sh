#!/usr/bin/env bash
# Throughput of one large download through ferryd versus wget2 and curl, from nginx on loopback.
# Usage: Benchmarks/download-throughput.sh [SIZE_MB=1024] [RUNS=5]
# Needs a release build (swift build -c release) and nginx, wget2, curl, dbus-run-session.
# Prints the median wall time and MB/s of each tool; the ratio ferry/wget2 should be <= 1.
set -euo pipefail
size_mb="${1:-1024}"; runs="${2:-5}"
source "$(dirname "$0")/common.sh"
url="http://127.0.0.1:$port/big.bin"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
time_cmd() { # prints seconds
  local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" "BEGIN{printf \"%.3f\\n\", b-a}"; }

run_all() {
  for tool in wget2 curl ferry; do
    : > "$work/$tool.times"
    for _ in $(seq "$runs"); do
      rm -f "$work/out/"*
      case $tool in
        wget2) time_cmd wget2 -q --no-robots -O "$work/out/big.bin" "$url" ;;
        curl)  time_cmd curl -s -o "$work/out/big.bin" "$url" ;;
        ferry) time_cmd "$bin/ferry" download --wait --dir "$work/out" "$url" ;;
      esac >> "$work/$tool.times"
      cmp -s "$work/out/big.bin" "$work/www/big.bin" || { echo "$tool produced a wrong file" >&2; exit 1; }
    done
    m=$(median < "$work/$tool.times")
    printf '%-6s median %6.3f s  %7.1f MB/s  (runs: %s)\n' "$tool" "$m" "$(awk -v s="$size_mb" -v m="$m" "BEGIN{print s/m}")" "$(tr '\n' ' ' < "$work/$tool.times")"
  done
}
export XDG_STATE_HOME="$work/state"
export -f run_all time_cmd median
export work runs url bin size_mb
dbus-run-session -- bash -c '"$bin/ferryd" --state-dir "$work/state/ferry" & until "$bin/ferry" status >/dev/null 2>&1; do sleep 0.05; done; run_all; kill %1'

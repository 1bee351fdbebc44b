# Shared set-up of the benchmarks (sourced): the release binaries, a work folder removed on
# exit, and nginx serving "$work/www" on a free loopback port ($port), SIZE_MB random bytes in
# "$work/www/big.bin".
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$(cd "$repo" && swift build -c release --show-bin-path)"
[ -x "$bin/ferryd" ] && [ -x "$bin/ferry" ] || { echo "build first: swift build -c release" >&2; exit 1; }
work="$(mktemp -d /tmp/ferry-bench-XXXXXX)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/www" "$work/out" "$work/nginx/logs" "$work/state"
head -c "$((size_mb * 1024 * 1024))" /dev/urandom > "$work/www/big.bin"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$work/nginx/nginx.conf" <<CONF
daemon off; master_process off; worker_processes 1; pid $work/nginx/pid;
error_log $work/nginx/logs/error.log;
events { worker_connections 64; }
http { access_log off; sendfile on; client_body_temp_path $work/nginx/tmp; proxy_temp_path $work/nginx/tmp;
  fastcgi_temp_path $work/nginx/tmp; uwsgi_temp_path $work/nginx/tmp; scgi_temp_path $work/nginx/tmp;
  server { listen 127.0.0.1:$port; root $work/www; } }
CONF
nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" &
until curl -s -o /dev/null "http://127.0.0.1:$port/"; do sleep 0.05; done

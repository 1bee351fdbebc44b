#!/usr/bin/env python3
"""A small HTTP/1.1 server for Ferry's integration tests: real sockets, real HTTP, with faults
on demand. Files come from --root; query parameters choose the behaviour of a response:

  rate=N          send at most N body bytes per second
  hold=N          after N body bytes, stop sending until POST /_release (or the client leaves)
  drop=N          close the connection after N body bytes (only for requests without Range;
                  with drops=K, for each of the first K requests for this URL, ranged or not)
  norange=1       ignore Range: always answer 200 with the whole file
  etag=changing   a new ETag on every request (so If-Range never matches)
  status=S&times=K&retry_after=R   answer the first K requests for this URL with status S
                  (and Retry-After: R when given); later requests are served normally
  cd=NAME         send Content-Disposition: attachment; filename="NAME"
  auth=USER:PASS  require HTTP basic authentication
  authsha=HEX     the same for the USER:PASS whose SHA-256 is HEX (the URL then holds no password)
  redirect=N      answer 302 to the same URL with redirect=N-1 (N=0 serves the file)
  location=URL    answer 302 to URL
  otherhost=H     (on a tus or IETF-draft creation) the upload resource is named on host H, the
                  same port: another origin when the server also listens there (--also H);
                  resauth=USER:PASS: that resource asks for Basic authentication with it

PUT or POST /upload/NAME stores the request body as ROOT/uploads/NAME and answers 201 with
{"stored": NAME, "received": BYTES} (replypad=N: and N more bytes); auth=USER:PASS applies there too.

tus 1.0 (core protocol and creation, as the spec's examples): POST /tus/ with Upload-Length
makes an upload (201, Location: /tus/files/ID; drops=K&dropafter=N: the first K PATCHes of it
are cut, the connection closed, after N body bytes); HEAD /tus/files/ID answers Upload-Offset;
PATCH /tus/files/ID appends at Upload-Offset (409 if it is not the server's), and the complete
upload is written to ROOT/uploads/tus-ID. Each request is logged with method and offset.
/ietf/: the IETF draft Resumable Uploads for HTTP, likewise (see ietf_upload.py).

GET /_log answers a JSON list of every request served: path, query, range, if_range, status,
sent (body bytes), start/end (time.monotonic()), and the request's host, authorization,
cookie and X-Api-Key (as apikey) headers. Prints the chosen port on stdout."""
import argparse, base64, json, os, sys, threading, time, hashlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, parse_qs
from email.utils import formatdate
import ietf_upload, tus_upload
from ietf_upload import IETFUpload
from tus_upload import TusUpload

LOG = []
LOG_LOCK = threading.Lock()
COUNTS = {}
RELEASE = threading.Event()
ROOT = "."

class Handler(TusUpload, IETFUpload, BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self, entry):
        for key in ("host", "authorization", "cookie"):
            entry[key] = self.headers.get(key)
        entry["apikey"] = self.headers.get("X-Api-Key")  # an app's own credential field
        with LOG_LOCK:
            LOG.append(entry)

    def do_PUT(self):
        if urlsplit(self.path).path == "/ietf/":
            return self.ietf_create("PUT")
        self.receive_upload("PUT")

    def do_OPTIONS(self):
        """Discovery: /tus/ and /ietf/ say what they speak; anything else speaks neither."""
        if self.path.startswith("/ietf/"):
            return self.ietf_options()
        self.record({"path": self.path.split("?")[0], "query": "", "method": "OPTIONS", "status": 204, "sent": 0,
                     "start": time.monotonic(), "end": time.monotonic()})
        if not self.path.startswith("/tus/"):
            return self.reply_small(405, b"", [("Allow", "GET, HEAD, PUT, POST")])
        self.tus_reply(204, [("Tus-Version", "1.0.0"), ("Tus-Extension", "creation,termination"), ("Tus-Max-Size", str(1 << 40))])

    def do_HEAD(self):
        if self.path.startswith("/ietf/uploads/"):
            return self.ietf_head()
        self.tus_head()

    def do_PATCH(self):
        if self.path.startswith("/ietf/uploads/"):
            return self.ietf_patch()
        self.tus_patch()

    def receive_upload(self, method):
        url = urlsplit(self.path)
        q = {k: v[0] for k, v in parse_qs(url.query).items()}
        entry = {"path": url.path, "query": url.query, "method": method, "range": None, "if_range": None,
                 "status": 0, "sent": 0, "received": 0, "start": time.monotonic(), "end": None}
        try:
            length = int(self.headers.get("Content-Length", "0"))
            if not self.authorized(q):
                entry["status"] = 401
                self.rfile.read(length)
                return self.reply_small(401, b"auth\n", [("WWW-Authenticate", 'Basic realm="ferry-test"')])
            name = url.path[len("/upload/"):]
            if not url.path.startswith("/upload/") or "/" in name or not name:
                entry["status"] = 404
                self.rfile.read(length)
                return self.reply_small(404, b"not found\n")
            os.makedirs(os.path.join(ROOT, "uploads"), exist_ok=True)
            data = self.rfile.read(length)
            with open(os.path.join(ROOT, "uploads", name), "wb") as f:
                f.write(data)
            entry["received"] = len(data)
            entry["status"] = 201
            # The reply names what was made, as upload APIs do; replypad=N adds N bytes to it.
            reply = json.dumps({"stored": name, "received": len(data)}).encode() + b"\n"
            self.reply_small(201, reply + b"#" * int(q.get("replypad", "0")),
                             [("Location", "/stored/" + name), ("Content-Type", "application/json"), ("Set-Cookie", "sid=secret")])
        finally:
            entry["end"] = time.monotonic()
            self.record(entry)

    def do_POST(self):
        if urlsplit(self.path).path == "/ietf/":
            return self.ietf_create("POST")
        if self.path.startswith("/tus/") and not self.path.startswith("/tus/files/"):
            return self.tus_create({k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()})
        if self.path.startswith("/upload/"):
            return self.receive_upload("POST")
        if self.path == "/_release":
            RELEASE.set()
            self.reply_small(200, b"released\n")
        elif self.path == "/_hold":
            RELEASE.clear()
            self.reply_small(200, b"holding\n")
        else:
            self.reply_small(404, b"not found\n")

    def reply_small(self, status, body, headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/_log":
            with LOG_LOCK:
                body = json.dumps(LOG).encode()
            return self.reply_small(200, body, [("Content-Type", "application/json")])
        q = {k: v[0] for k, v in parse_qs(url.query).items()}
        entry = {"path": url.path, "query": url.query, "range": self.headers.get("Range"),
                 "if_range": self.headers.get("If-Range"), "status": 0, "sent": 0,
                 "start": time.monotonic(), "end": None}
        key = self.path
        with LOG_LOCK:
            COUNTS[key] = COUNTS.get(key, 0) + 1
            n = COUNTS[key]
        try:
            self.serve(url, q, n, entry)
        finally:
            entry["end"] = time.monotonic()
            self.record(entry)

    def authorized(self, q):
        """auth=USER:PASS or authsha=HEX asks for Basic authentication with that credential."""
        header = self.headers.get("Authorization") or ""
        if "auth" in q:
            return header == "Basic " + base64.b64encode(q["auth"].encode()).decode()
        if "authsha" in q:
            try:
                given = base64.b64decode(header[len("Basic "):]) if header.startswith("Basic ") else b""
            except ValueError:
                return False
            return hashlib.sha256(given).hexdigest() == q["authsha"]
        return True

    def resource_base(self, q):
        """Where an upload resource is named: this server, or otherhost=H's origin."""
        return "http://%s:%d" % (q["otherhost"], self.server.server_address[1]) if "otherhost" in q else ""

    def resource_refused(self, upload, entry):
        """An upload resource made with resauth=USER:PASS asks for it: True when it answered 401."""
        if not upload or not upload.get("auth") or self.authorized({"auth": upload["auth"]}):
            return False
        entry["status"], entry["end"] = 401, time.monotonic()
        self.record(entry)
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        # A HEAD's answer has no body: bytes after it would be read as the next answer.
        self.reply_small(401, b"" if self.command == "HEAD" else b"auth\n", [("WWW-Authenticate", 'Basic realm="resource"')])
        return True

    def serve(self, url, q, n, entry):
        if not self.authorized(q):
            entry["status"] = 401
            return self.reply_small(401, b"auth\n", [("WWW-Authenticate", 'Basic realm="ferry-test"')])
        if "location" in q:
            entry["status"] = 302
            return self.reply_small(302, b"", [("Location", q["location"])])
        if int(q.get("redirect", "0")) > 0:
            entry["status"] = 302
            rest = "&".join("%s=%s" % (k, v) for k, v in q.items() if k != "redirect")
            target = "%s?redirect=%d%s" % (url.path, int(q["redirect"]) - 1, "&" + rest if rest else "")
            return self.reply_small(302, b"", [("Location", target)])
        if "status" in q and n <= int(q.get("times", "1")):
            entry["status"] = int(q["status"])
            headers = [("Retry-After", q["retry_after"])] if "retry_after" in q else []
            return self.reply_small(int(q["status"]), b"try later\n", headers)
        name = url.path.lstrip("/")
        path = os.path.join(ROOT, name)
        if "/" in name or not os.path.isfile(path):
            entry["status"] = 404
            return self.reply_small(404, b"not found\n")
        with open(path, "rb") as f:
            data = f.read()
        st = os.stat(path)
        etag = '"%s"' % hashlib.sha1(data).hexdigest()[:16]
        if q.get("etag") == "changing":
            etag = '"v%d-%s"' % (n, etag.strip('"'))
        lastmod = formatdate(st.st_mtime, usegmt=True)
        start = 0
        status = 200
        rng = self.headers.get("Range")
        if rng and q.get("norange") != "1":
            if_range = self.headers.get("If-Range")
            if if_range is None or if_range == etag or (if_range == lastmod and q.get("etag") != "changing"):
                spec = rng.split("=", 1)[1]
                start = int(spec.split("-")[0])
                if start >= len(data):
                    entry["status"] = 416
                    return self.reply_small(416, b"", [("Content-Range", "bytes */%d" % len(data))])
                status = 206
        body = data[start:]
        entry["status"] = status
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", etag)
        self.send_header("Last-Modified", lastmod)
        self.send_header("Accept-Ranges", "bytes")
        if "cd" in q:
            self.send_header("Content-Disposition", 'attachment; filename="%s"' % q["cd"])
        if status == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
        self.end_headers()
        self.send_body(body, q, entry, ranged=rng is not None, n=n)

    def send_body(self, body, q, entry, ranged, n=1):
        rate = int(q.get("rate", "0"))
        hold = int(q["hold"]) if "hold" in q and not ranged else None
        if hold is not None:
            RELEASE.clear()  # each held response waits for its own release
        drop = int(q["drop"]) if "drop" in q and (not ranged or n <= int(q.get("drops", "0"))) else None
        chunk = 16384 if rate == 0 else max(1, min(16384, rate // 20))
        sent = 0
        t0 = time.monotonic()
        while sent < len(body):
            limit = len(body)
            if hold is not None and sent >= hold:
                entry["held"] = sent
                self.wfile.flush()
                # Wait for a release while watching for the client going away.
                while not RELEASE.wait(0.05):
                    if self.client_gone():
                        entry["sent"] = sent
                        return
                hold = None
            if hold is not None:
                limit = min(limit, hold)
            if drop is not None:
                if sent >= drop:
                    entry["sent"] = sent
                    entry["dropped"] = True
                    self.close_connection = True
                    return
                limit = min(limit, drop)
            piece = body[sent:min(limit, sent + chunk)]
            try:
                self.wfile.write(piece)
            except (BrokenPipeError, ConnectionResetError):
                entry["sent"] = sent
                return
            sent += len(piece)
            entry["sent"] = sent
            if rate:
                ahead = sent / rate - (time.monotonic() - t0)
                if ahead > 0:
                    time.sleep(ahead)

    def client_gone(self):
        import select
        r, _, _ = select.select([self.connection], [], [], 0)
        if r:
            try:
                return self.connection.recv(1, 2) == b""  # MSG_PEEK
            except OSError:
                return True
        return False

def main():
    global ROOT
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--also", help="a second address served on the same port (another origin)")
    args = p.parse_args()
    ROOT = ietf_upload.ROOT = tus_upload.ROOT = args.root
    ThreadingHTTPServer.daemon_threads = True
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    if args.also:
        other = ThreadingHTTPServer((args.also, server.server_address[1]), Handler)
        threading.Thread(target=other.serve_forever, daemon=True).start()
    print(server.server_address[1], flush=True)
    server.serve_forever()

if __name__ == "__main__":
    main()

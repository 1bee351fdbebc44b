"""tus 1.0 (core protocol and creation), server side, as the spec's examples show it: the
faultserver's /tus/ paths (see faultserver.py's docstring)."""
import os, threading, time

ROOT = "."
TUS = {}
LOCK = threading.Lock()


def read_into(rfile, data, want):
    """Appends up to `want` bytes of a request body to `data` as they come; the count read."""
    got = 0
    while got < want:
        piece = rfile.read(min(65536, want - got))
        if not piece:
            break
        data += piece
        got += len(piece)
    return got


class TusUpload:
    """Mixed into the faultserver's handler (uses its record and reply_small)."""

    def tus_reply(self, status, headers=()):
        self.reply_small(status, b"", [("Tus-Resumable", "1.0.0"), ("Cache-Control", "no-store")] + list(headers))

    def tus_upload(self):
        name = self.path.split("?")[0][len("/tus/files/"):]
        return name, TUS.get(name)

    def tus_create(self, q):
        entry = {"path": "/tus/", "query": "", "method": "POST", "status": 201, "sent": 0, "received": 0,
                 "start": time.monotonic(), "end": time.monotonic()}
        length = int(self.headers.get("Upload-Length", "-1"))
        if self.headers.get("Tus-Resumable") != "1.0.0" or length < 0:
            entry["status"] = 400
            self.record(entry)
            return self.tus_reply(400)
        with LOCK:
            if len(TUS) >= 20:   # a client in a loop meets an end instead of filling the memory
                entry["status"] = 507
                self.record(entry)
                return self.tus_reply(507)
            name = str(len(TUS) + 1)
            TUS[name] = {"length": length, "data": bytearray(), "drops": int(q.get("drops", "0")),
                         "dropafter": int(q.get("dropafter", "0")), "auth": q.get("resauth")}
        self.record(entry)
        self.tus_reply(201, [("Location", self.resource_base(q) + "/tus/files/" + name)])

    def tus_head(self):
        name, upload = self.tus_upload()
        if self.resource_refused(upload, {"path": self.path, "query": "", "method": "HEAD", "sent": 0, "start": time.monotonic()}):
            return
        self.record({"path": self.path, "query": "", "method": "HEAD", "status": 200 if upload else 404, "sent": 0,
                     "start": time.monotonic(), "end": time.monotonic()})
        if upload is None:
            return self.tus_reply(404)
        self.tus_reply(200, [("Upload-Offset", str(len(upload["data"]))), ("Upload-Length", str(upload["length"]))])

    def tus_patch(self):
        name, upload = self.tus_upload()
        length = int(self.headers.get("Content-Length", "0"))
        entry = {"path": self.path, "query": "", "method": "PATCH", "status": 0, "sent": 0, "received": 0,
                 "offset": int(self.headers.get("Upload-Offset", "-1")), "start": time.monotonic(), "end": None}
        if self.resource_refused(upload, entry):
            return
        try:
            if upload is None:
                entry["status"] = 404
                return self.tus_reply(404)
            if self.headers.get("Content-Type") != "application/offset+octet-stream":
                entry["status"] = 415
                return self.tus_reply(415)
            if entry["offset"] != len(upload["data"]):
                entry["status"] = 409
                return self.tus_reply(409)
            cut = upload["drops"] > 0
            want = min(length, upload["dropafter"]) if cut else length
            got = entry["received"] = read_into(self.rfile, upload["data"], want)
            if cut or got < length:   # dropped (or the client left): no answer
                upload["drops"] -= 1 if cut else 0
                self.close_connection = True
                return
            if len(upload["data"]) == upload["length"]:
                os.makedirs(os.path.join(ROOT, "uploads"), exist_ok=True)
                with open(os.path.join(ROOT, "uploads", "tus-" + name), "wb") as f:
                    f.write(upload["data"])
            entry["status"] = 204
            self.tus_reply(204, [("Upload-Offset", str(len(upload["data"])))])
        finally:
            entry["end"] = time.monotonic()
            self.record(entry)

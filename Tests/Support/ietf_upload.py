"""The IETF draft Resumable Uploads for HTTP (draft-ietf-httpbis-resumable-upload -09 to -15,
interop version 8), server side, as the draft's examples show it: the faultserver's /ietf/ paths.

  OPTIONS /ietf/            Accept-Patch: application/partial-upload (nooptions=1: 405, as a server
                            that does not say)
  POST|PUT /ietf/           with Upload-Complete and Upload-Draft-Interop-Version: 8 makes an upload
                            resource /ietf/uploads/ID, announced in a 104 interim answer (no104=1:
                            not announced); ?0 with no body: 201 + Location (careful creation); ?1
                            with the body: the whole upload in one request (optimistic creation).
                            Without the two headers: a plain upload, stored, no resource.
  HEAD /ietf/uploads/ID     Upload-Offset, Upload-Complete, Upload-Length, Upload-Limit
  PATCH /ietf/uploads/ID    application/partial-upload at Upload-Offset (409 with the server's
                            offset when it differs)
drops=K&dropafter=N (on the creation): the first K requests that carry bytes of uploads made at
that URL are cut after N bytes, the connection closed. More than 20 uploads: 507 (a client in a
loop meets an end instead of filling the test machine's memory). A complete upload is written to ROOT/uploads/ietf-ID and
answered 200 with {"stored": NAME, "received": BYTES} and Upload-Complete: ?1."""
import json, os, threading, time
from urllib.parse import urlsplit, parse_qs

from tus_upload import read_into

VERSION = "8"
ROOT = "."
UPLOADS = {}
DROPS = {}   # creation URL -> drops left, shared by the uploads made there
LOCK = threading.Lock()
LIMIT = ("Upload-Limit", "max-size=%d" % (1 << 40))


class IETFUpload:
    """Mixed into the faultserver's handler (uses its record and reply_small)."""

    def ietf_query(self):
        return {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}

    def ietf_entry(self, method):
        return {"path": urlsplit(self.path).path, "query": "", "method": method, "status": 0, "sent": 0,
                "received": 0, "offset": int(self.headers.get("Upload-Offset", "-1")),
                "start": time.monotonic(), "end": None}

    def ietf_options(self):
        entry = self.ietf_entry("OPTIONS")
        entry["status"] = 405 if self.ietf_query().get("nooptions") else 204
        entry["end"] = time.monotonic()
        self.record(entry)
        if entry["status"] == 405:
            return self.reply_small(405, b"", [("Allow", "POST, PUT")])
        self.reply_small(204, b"", [("Accept-Patch", "application/partial-upload"), LIMIT])

    def ietf_resource(self):
        name = urlsplit(self.path).path[len("/ietf/uploads/"):]
        return name, UPLOADS.get(name)

    def ietf_receive(self, upload, entry):
        """Appends the request's body as far as it comes (or the drop allows): True if whole."""
        length = int(self.headers.get("Content-Length", "0"))
        with LOCK:
            cut = DROPS.get(upload["key"], 0) > 0 and length > 0
            if cut:
                DROPS[upload["key"]] -= 1
        want = min(length, upload["dropafter"]) if cut else length
        got = entry["received"] = read_into(self.rfile, upload["data"], want)
        if cut:
            # The rest is read and thrown away: closing with bytes unread makes the kernel send a
            # reset, which discards what the client has not read yet, a 104 among them.
            read_into(self.rfile, bytearray(), length - got)
        if cut or got < length:   # dropped (or the client left): no answer
            self.close_connection = True
            return False
        return True

    def ietf_finish(self, name, upload, entry, extra=()):
        """The last bytes came with Upload-Complete: ?1: the target's answer to the whole upload."""
        upload["complete"] = True
        os.makedirs(os.path.join(ROOT, "uploads"), exist_ok=True)
        with open(os.path.join(ROOT, "uploads", "ietf-" + name), "wb") as f:
            f.write(upload["data"])
        entry["status"] = 200
        body = json.dumps({"stored": "ietf-" + name, "received": len(upload["data"])}).encode() + b"\n"
        self.reply_small(200, body, [("Upload-Complete", "?1"), ("Content-Type", "application/json")] + list(extra))

    def ietf_create(self, method):
        q = self.ietf_query()
        entry = self.ietf_entry(method)
        complete = self.headers.get("Upload-Complete")
        try:
            if complete not in ("?0", "?1") or self.headers.get("Upload-Draft-Interop-Version") != VERSION:
                data = self.rfile.read(int(self.headers.get("Content-Length", "0")))   # plain: no resource
                entry["received"], entry["status"] = len(data), 201
                return self.reply_small(201, json.dumps({"plain": True, "received": len(data)}).encode())
            with LOCK:
                if len(UPLOADS) >= 20:
                    entry["status"] = 507
                    return self.reply_small(507, b"too many uploads\n")
                name = str(len(UPLOADS) + 1)
                DROPS.setdefault(self.path, int(q.get("drops", "0")))
                UPLOADS[name] = {"data": bytearray(), "complete": False, "key": self.path,
                                 "dropafter": int(q.get("dropafter", "0")),
                                 "length": int(self.headers.get("Upload-Length", "-1")), "auth": q.get("resauth")}
            upload, location = UPLOADS[name], self.resource_base(q) + "/ietf/uploads/" + name
            entry["upload"] = name
            if not q.get("no104"):
                self.wfile.write(("HTTP/1.1 104 Upload Resumption Supported\r\nLocation: %s\r\n%s: %s\r\n\r\n"
                                  % (location, LIMIT[0], LIMIT[1])).encode())
                self.wfile.flush()
            if not self.ietf_receive(upload, entry):
                return
            if complete == "?1":
                return self.ietf_finish(name, upload, entry, [("Location", location)])
            entry["status"] = 201
            self.reply_small(201, b"", [("Location", location), ("Upload-Complete", "?0"), LIMIT])
        finally:
            entry["end"] = time.monotonic()
            self.record(entry)

    def ietf_head(self):
        name, upload = self.ietf_resource()
        entry = self.ietf_entry("HEAD")
        if self.resource_refused(upload, entry):
            return
        entry["status"], entry["end"] = (204 if upload else 404), time.monotonic()
        self.record(entry)
        if upload is None:
            return self.reply_small(404, b"")
        headers = [("Upload-Offset", str(len(upload["data"]))), ("Upload-Complete", "?1" if upload["complete"] else "?0"),
                   LIMIT, ("Cache-Control", "no-store")]
        if upload["length"] >= 0:
            headers.append(("Upload-Length", str(upload["length"])))
        self.reply_small(204, b"", headers)

    def ietf_patch(self):
        name, upload = self.ietf_resource()
        entry = self.ietf_entry("PATCH")
        if self.resource_refused(upload, entry):
            return
        try:
            if upload is None:
                entry["status"] = 404
                return self.reply_small(404, b"")
            if self.headers.get("Content-Type") != "application/partial-upload":
                entry["status"] = 415
                return self.reply_small(415, b"")
            if upload["complete"]:
                entry["status"] = 400
                return self.reply_small(400, b"completed upload\n")
            if entry["offset"] != len(upload["data"]):
                entry["status"] = 409
                return self.reply_small(409, b"", [("Upload-Offset", str(len(upload["data"])))])
            if not self.ietf_receive(upload, entry):
                return
            if self.headers.get("Upload-Complete") == "?1":
                return self.ietf_finish(name, upload, entry)
            entry["status"] = 204
            self.reply_small(204, b"", [("Upload-Complete", "?0")])
        finally:
            entry["end"] = time.monotonic()
            self.record(entry)

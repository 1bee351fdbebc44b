#!/usr/bin/env python3
"""fetch-pdf in Python: seed 000's app on Ferry's D-Bus API, through PyGObject's Gio.DBusProxy.

Downloads one PDF through a background session, prints progress, moves the finished file into
the documents folder (never over another file) and opens it with xdg-open. If the app is
closed meanwhile, the agent finishes the download and starts this script again with
FERRY_BACKGROUND_SESSION set: it then moves the file, acknowledges the events and tells the
agent it is done (FinishedHandlingEvents).

    fetch-pdf.py URL [--documents DIR]
"""
import argparse
import os
import subprocess
import sys

from gi.repository import Gio, GLib

SESSION = "dev.ferry.examples.FetchPDF.Python"


class Agent:
    """The agent's methods as Python calls (the interface: dev.ferry.Agent1.xml)."""

    def __init__(self):
        bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
        # Without DO_NOT_AUTO_START, the first call starts ferryd through D-Bus activation.
        self.proxy = Gio.DBusProxy.new_sync(bus, Gio.DBusProxyFlags.DO_NOT_LOAD_PROPERTIES, None,
                                            "dev.ferry.Agent1", "/dev/ferry/Agent1", "dev.ferry.Agent1", None)

    def call(self, method, signature, *args):
        reply = self.proxy.call_sync(method, GLib.Variant(signature, args) if signature else None,
                                     Gio.DBusCallFlags.NONE, -1, None)
        return reply.unpack() if reply else ()


def move_without_overwriting(path, folder):
    """Moves path into folder under its own name, or "name (1).ext" and so on if taken."""
    os.makedirs(folder, exist_ok=True)
    stem, ext = os.path.splitext(os.path.basename(path))
    n = 0
    while True:
        target = os.path.join(folder, stem + (f" ({n})" if n else "") + ext)
        try:
            os.link(path, target)  # fails if target exists: never replaces a file
            os.unlink(path)
            return target
        except FileExistsError:
            n += 1


class App:
    def __init__(self, documents, relaunched):
        self.agent = Agent()
        self.documents = documents
        self.relaunched = relaunched
        self.task = None
        self.last_percent = -1
        self.saved = {}
        self.exit_code = None
        self.loop = GLib.MainLoop()
        # Relaunch this script, with its folder, when events wait and it is not running.
        launch = [sys.executable, os.path.abspath(__file__), "--documents", documents]
        opened, = self.agent.call("OpenSession", "(sa{sv})", SESSION, {
            "launch-command": GLib.Variant("as", launch),
            "keep-events": GLib.Variant("b", True),
        })
        self.inbox = opened["inbox"]
        self.delivered = 0
        self.agent.proxy.connect("g-signal", self.on_signal)

    def on_signal(self, proxy, sender, signal, params):
        if signal == "EventsAvailable" and params.unpack()[0] == SESSION:
            self.drain()

    def drain(self):
        """Fetches and handles every queued event, acknowledging each once it is handled."""
        while self.exit_code is None:
            events, = self.agent.call("FetchEvents", "(stu)", SESSION, self.delivered, 100)
            if not events:
                break
            for seq, kind, task, data in events:
                self.handle(kind, task, data)
                self.agent.call("AcknowledgeEvents", "(st)", SESSION, seq)
                self.delivered = seq
        if self.relaunched and self.exit_code is None:
            # Every waiting event is handled: the completion handler of iOS.
            self.agent.call("FinishedHandlingEvents", "(s)", SESSION)
            self.exit_code = 0
        if self.exit_code is not None:
            self.loop.quit()

    def handle(self, kind, task, data):
        # Each kind's keys: the dev.ferry.Event.<kind> annotations of FetchEvents in the XML.
        if kind == "progress" and task == self.task:
            received, expected = data["received"], data["expected"]
            if expected > 0:
                percent = received * 100 // expected
                if percent != self.last_percent:
                    self.last_percent = percent
                    print(f"{percent}% ({received} of {expected} bytes)", flush=True)
        elif kind == "finished" and data["file"] and os.path.exists(data["file"]):
            self.saved[task] = move_without_overwriting(data["file"], self.documents)
            print(f"saved {self.saved[task]}", flush=True)
        elif kind == "completed" and task == self.task:
            if data["error"]:
                print(f"fetch-pdf: download failed: {data['error']}", file=sys.stderr)
                self.exit_code = 1
            elif task in self.saved:
                self.exit_code = subprocess.call(["xdg-open", self.saved[task]])
            else:
                self.exit_code = 1

    def download(self, url):
        self.task, = self.agent.call("CreateDownload", "(ssa{sv})", SESSION, url, {
            "directory": GLib.Variant("s", self.inbox),
            "description": GLib.Variant("s", "fetch-pdf.py"),
        })

    def run(self):
        self.drain()  # what an earlier run left (or what this launch is for)
        if self.exit_code is None:
            self.loop.run()
        return self.exit_code


def main():
    parser = argparse.ArgumentParser(description="Download a PDF in the background, then open it.")
    parser.add_argument("url", nargs="?", help="the PDF's http(s) URL")
    parser.add_argument("--documents", default=GLib.get_user_special_dir(GLib.UserDirectory.DIRECTORY_DOCUMENTS)
                        or os.path.expanduser("~/Documents"), help="folder the PDF is saved in")
    args = parser.parse_args()
    relaunched = os.environ.get("FERRY_BACKGROUND_SESSION") == SESSION
    if not relaunched and not (args.url or "").startswith(("http://", "https://")):
        parser.error(f"not an http(s) URL: {args.url}")
    try:
        app = App(args.documents, relaunched)
        if not relaunched:
            app.download(args.url)
        return app.run()
    except GLib.Error as e:
        print(f"fetch-pdf: {e.message}", file=sys.stderr)  # the agent's dev.ferry.Error.* says why
        return 2


if __name__ == "__main__":
    sys.exit(main())

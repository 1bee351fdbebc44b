#!/usr/bin/python3
"""A D-Bus activatable app for tests: started by the bus for its name (argv[1]), it implements
org.freedesktop.Application, records each call as a JSON line in argv[2], and leaves the bus
once it has answered (as a GApplication service does after its work)."""
import json, os, sys
import dbus, dbus.service, dbus.mainloop.glib
from gi.repository import GLib

NAME, RECORD = sys.argv[1], sys.argv[2]
PATH = "/" + NAME.replace(".", "/").replace("-", "_")

def record(method, *args):
    with open(RECORD, "a") as f:
        f.write(json.dumps({"method": method, "args": args}) + "\n")
    GLib.idle_add(loop.quit)

class App(dbus.service.Object):
    @dbus.service.method("org.freedesktop.Application", in_signature="a{sv}")
    def Activate(self, platform):
        record("Activate")

    @dbus.service.method("org.freedesktop.Application", in_signature="asa{sv}")
    def Open(self, uris, platform):
        record("Open", [str(u) for u in uris])

    @dbus.service.method("org.freedesktop.Application", in_signature="sava{sv}")
    def ActivateAction(self, action, parameter, platform):
        record("ActivateAction", str(action), [str(p) for p in parameter], {str(k): str(v) for k, v in platform.items()})

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
address = os.environ.get("DBUS_STARTER_ADDRESS") or os.environ["DBUS_SESSION_BUS_ADDRESS"]
bus = dbus.bus.BusConnection(address)
App(bus, PATH)
name = dbus.service.BusName(NAME, bus)
loop = GLib.MainLoop()
loop.run()

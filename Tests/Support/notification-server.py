#!/usr/bin/python3
"""A freedesktop notification server for tests: owns org.freedesktop.Notifications on the
session bus, records every Notify call as a JSON line in the file given as argv[1], and lets
a test click a popup: dev.ferry.Test.Invoke(u id, s action) emits ActionInvoked.
With --hang as argv[2] it records each Notify call and never answers it (a hung server)."""
import json, sys
import dbus, dbus.service, dbus.mainloop.glib
from gi.repository import GLib

RECORD = sys.argv[1]
HANG = len(sys.argv) > 2 and sys.argv[2] == "--hang"

def plain(v):
    if isinstance(v, (dbus.Boolean,)):
        return bool(v)
    if isinstance(v, (dbus.Byte, dbus.Int16, dbus.Int32, dbus.Int64, dbus.UInt16, dbus.UInt32, dbus.UInt64)):
        return int(v)
    if isinstance(v, (dbus.Double,)):
        return float(v)
    if isinstance(v, (dbus.Array, list)):
        return [plain(x) for x in v]
    if isinstance(v, (dbus.Dictionary, dict)):
        return {str(k): plain(x) for k, x in v.items()}
    return str(v)

class Server(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, "/org/freedesktop/Notifications")
        self.next_id = 1

    @dbus.service.method("org.freedesktop.Notifications", in_signature="susssasa{sv}i", out_signature="u",
                         async_callbacks=("reply", "error"))
    def Notify(self, app, replaces, icon, summary, body, actions, hints, timeout, reply, error):
        nid = self.next_id
        self.next_id += 1
        with open(RECORD, "a") as f:
            f.write(json.dumps({"id": nid, "app": str(app), "summary": str(summary), "body": str(body),
                                "icon": str(icon), "actions": plain(actions), "hints": plain(hints)}) + "\n")
        if not HANG:
            reply(nid)

    @dbus.service.method("org.freedesktop.Notifications", in_signature="", out_signature="as")
    def GetCapabilities(self):
        return ["actions", "body", "sound"]

    @dbus.service.method("org.freedesktop.Notifications", in_signature="", out_signature="ssss")
    def GetServerInformation(self):
        return ("ferry-test", "ferry", "1.0", "1.2")

    @dbus.service.method("org.freedesktop.Notifications", in_signature="u", out_signature="")
    def CloseNotification(self, nid):
        self.NotificationClosed(nid, 3)

    @dbus.service.signal("org.freedesktop.Notifications", signature="uu")
    def NotificationClosed(self, nid, reason):
        pass

    @dbus.service.signal("org.freedesktop.Notifications", signature="us")
    def ActionInvoked(self, nid, action):
        pass

    @dbus.service.method("dev.ferry.Test", in_signature="us", out_signature="")
    def Invoke(self, nid, action):
        self.ActionInvoked(nid, action)
        self.NotificationClosed(nid, 2)

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
server = Server(bus)
name = dbus.service.BusName("org.freedesktop.Notifications", bus)
GLib.MainLoop().run()

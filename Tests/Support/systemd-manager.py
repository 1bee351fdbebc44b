#!/usr/bin/python3
"""Stands in for a systemd user manager on a test bus (none runs here): owns
org.freedesktop.systemd1 and records each StartTransientUnit call as a JSON line in argv[1]
(name, mode, properties). Moving processes into cgroups is the one part it does not do."""
import json, sys
import dbus, dbus.service, dbus.mainloop.glib
from gi.repository import GLib

RECORD = sys.argv[1]

class Manager(dbus.service.Object):
    @dbus.service.method("org.freedesktop.systemd1.Manager", in_signature="ssa(sv)a(sa(sv))", out_signature="o")
    def StartTransientUnit(self, name, mode, properties, aux):
        props = {str(k): ([int(x) for x in v] if isinstance(v, dbus.Array) else str(v)) for k, v in properties}
        with open(RECORD, "a") as f:
            f.write(json.dumps({"name": str(name), "mode": str(mode), "properties": props}) + "\n")
        return dbus.ObjectPath("/org/freedesktop/systemd1/job/1")

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
manager = Manager(bus, "/org/freedesktop/systemd1")
name = dbus.service.BusName("org.freedesktop.systemd1", bus)
GLib.MainLoop().run()

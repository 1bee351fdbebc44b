#!/usr/bin/python3
"""Hears the agent's TaskChanged signals as a client would: subscribes, makes one call (so the
agent knows who it is), prints "ready", then prints "ID STATE" for each signal it hears until
one about a paused task arrives (the test's marker), and exits."""
import dbus, dbus.mainloop.glib
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
loop = GLib.MainLoop()

def changed(task, state):
    print(int(task), str(state), flush=True)
    if state == "paused":
        loop.quit()

bus.add_signal_receiver(changed, signal_name="TaskChanged", dbus_interface="dev.ferry.Agent1", path="/dev/ferry/Agent1")
dbus.Interface(bus.get_object("dev.ferry.Agent1", "/dev/ferry/Agent1"), "dev.ferry.Agent1").GetStatus()
print("ready", flush=True)
loop.run()

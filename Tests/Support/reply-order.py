#!/usr/bin/python3
"""reply-order.py N: as one client, listens for TaskChanged, creates N paused tasks in one
CreateDownloads call and prints how many of their TaskChanged signals it had heard when the
reply arrived ("before-reply K"), then, once all have come, "total N" (D-Bus keeps one sender's
messages in order, so K says whether the agent sent the reply after its turn's signals)."""
import sys, dbus, dbus.mainloop.glib
from gi.repository import GLib

n = int(sys.argv[1])
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
loop = GLib.MainLoop()
api = dbus.Interface(bus.get_object("dev.ferry.Agent1", "/dev/ferry/Agent1"), "dev.ferry.Agent1")
heard = set()
ids = None

def changed(task, state):
    heard.add(int(task))
    if ids is not None and ids <= heard:
        print("total", len(ids & heard), flush=True)
        loop.quit()

def replied(created):
    global ids
    ids = {int(i) for i in created}
    print("before-reply", len(ids & heard), flush=True)
    if ids <= heard:
        print("total", len(ids), flush=True)
        loop.quit()

def failed(e):
    print("error", e, flush=True)
    loop.quit()

bus.add_signal_receiver(changed, signal_name="TaskChanged", dbus_interface="dev.ferry.Agent1", path="/dev/ferry/Agent1")
api.OpenSession("order", {"keep-events": dbus.Boolean(False)})
reqs = dbus.Array([dbus.Struct((f"http://127.0.0.1:9/order/{i}", {"paused": dbus.Boolean(True)}), signature="sa{sv}")
                   for i in range(n)], signature="(sa{sv})")
api.CreateDownloads("order", reqs, reply_handler=replied, error_handler=failed)
GLib.timeout_add_seconds(60, loop.quit)   # a bound, not a synchronisation: "total" must be printed
loop.run()

#!/usr/bin/python3
"""Reads and drives the Downloads window through AT-SPI, as a screen reader or a user would.

  window-driver.py rows NAME...        wait until rows with these names show, print the window as JSON
  window-driver.py press NAME BUTTON   wait for BUTTON in the row that shows NAME, press it
  window-driver.py press - BUTTON      press BUTTON outside the list (e.g. Download)
  window-driver.py has NAME BUTTON     wait for BUTTON in the row that shows NAME
  window-driver.py keeps NAME BUTTON S   BUTTON in the row of NAME stays the same accessible object for
                                       S seconds (a row rebuilt under a screen reader replaces it)
  window-driver.py type FIELD TEXT     type TEXT into the text field named FIELD
  window-driver.py gone NAME           wait until no row shows NAME
  window-driver.py activate NAME HOW   activate the row that shows NAME as a user does, with real
                                       input events (xdotool, XTest): HOW is "enter" (click the row,
                                       press Return) or "double-click"
  window-driver.py set NAME VALUE      in any of the app's windows, set the control named NAME
                                       (a spin button's value, a text field's text)
  window-driver.py toggle NAME         flip the switch named NAME
  window-driver.py get NAME [VALUE]    print the control's value (wait until it is VALUE if given)
  window-driver.py width NAME          the control's width on screen, in pixels
  window-driver.py click NAME          press the button named NAME in any of the app's windows (a dialog's)
  window-driver.py enabled NAME [VALUE] whether the button NAME can be pressed ("true"/"false"; waits for VALUE)
  window-driver.py key KEYS            type KEYS (xdotool's names, e.g. ctrl+comma) into the Downloads window

Waits poll the accessibility tree for the condition (at most 30 s), never a fixed time.
"""
import json
import subprocess
import sys
import time

import pyatspi


def walk(node):
    yield node
    for i in range(node.childCount):
        child = node.getChildAtIndex(i)
        if child is not None:
            yield from walk(child)


def named(n, name):
    """Whether N is called NAME; libadwaita 1.2 on GTK 4.8 names a toast's button twice ("Undo
    Undo": its label, then the label it is labelled by), as a screen reader then reads it."""
    return n.name == name or n.name == name + " " + name


def window():
    for app in pyatspi.Registry.getDesktop(0):
        if app is None:
            continue
        for w in app:
            if w is not None and w.getRoleName() == "frame" and w.name == "Downloads":
                return w
    return None


def control(name):
    """The control with accessible name NAME in any of the app's windows (e.g. Preferences)."""
    for app in pyatspi.Registry.getDesktop(0):
        if app is None or app.name not in ("dev.ferry.Downloads", "ferry-downloads"):
            continue
        for frame in app:
            for n in walk(frame):
                if n.name == name and n.getRoleName() in ("spin button", "text", "password text", "switch", "toggle button",
                                                          "check box", "push button"):
                    return n
    return None


def value_of(n):
    if n.getRoleName() == "push button":
        return "true" if n.getState().contains(pyatspi.STATE_SENSITIVE) else "false"
    role = n.getRoleName()
    if role == "spin button":
        return str(int(n.queryValue().currentValue))
    if role == "text":
        t = n.queryText()
        return t.getText(0, t.characterCount)
    return "true" if n.getState().contains(pyatspi.STATE_CHECKED) else "false"


def rows(frame):
    """Each list item: its labels, buttons and progress bars."""
    out = []
    for node in walk(frame):
        if node.getRoleName() != "list item":
            continue
        row = {"name": node.name, "labels": [], "buttons": [], "progress": []}
        for n in walk(node):
            role = n.getRoleName()
            if role == "label":
                row["labels"].append(n.name)
            elif role == "push button":
                row["buttons"].append(n.name)
            elif role == "progress bar":
                row["progress"].append(n.name)
        out.append(row)
    return out


def until(what, condition):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            frame = window()
            result = condition(frame) if frame is not None else None
        except Exception:   # a row went away while being read: read again
            frame, result = None, None
        if result:
            return frame, result
        time.sleep(0.1)
    sys.exit(f"timed out waiting for {what}")


def row_named(frame, name):
    for node in walk(frame):
        if node.getRoleName() == "list item" and any(n.getRoleName() == "label" and n.name == name for n in walk(node)):
            return node
    return None


def main(args):
    if args[0] == "dump":   # every node of the app's windows: role, name (to write a test)
        for app in pyatspi.Registry.getDesktop(0):
            if app is not None and app.name in ("dev.ferry.Downloads", "ferry-downloads"):
                for frame in app:
                    for n in walk(frame):
                        print(n.getRoleName(), repr(n.name))
    elif args[0] == "rows":
        names = args[1:]

        def read(f):
            # Read inside the wait: a running task's row may be rebuilt while it is read (its
            # objects then are gone), and is read again.
            if not all(row_named(f, n) for n in names):
                return None
            buttons = [n.name for n in walk(f) if n.getRoleName() == "push button"]
            return {"title": f.name, "buttons": buttons, "rows": rows(f)}

        _, shown = until(f"rows {names}", read)
        print(json.dumps(shown))
    elif args[0] in ("press", "has"):
        name, button = args[1], args[2]

        def find(frame):
            row = frame if name == "-" else row_named(frame, name)
            return next((n for n in walk(row) if n.getRoleName() == "push button" and named(n, button)), None) if row else None

        _, target = until(f"button {button!r} in the row of {name!r}", find)
        if args[0] == "press":
            target.queryAction().doAction(0)
        print("found")
    elif args[0] == "focus":   # the keyboard's focus onto a row's button, as Tab would put it
        name, button = args[1], args[2]

        def find(frame):
            row = row_named(frame, name)
            return next((n for n in walk(row) if n.getRoleName() == "push button" and named(n, button)), None) if row else None

        frame, target = until(f"button {button!r} in the row of {name!r}", find)
        wid = subprocess.check_output(["xdotool", "search", "--onlyvisible", "--name", "^%s$" % frame.name], text=True).split()[0]
        # GTK 4.8 takes no focus over AT-SPI: Tab to it, as a keyboard user does (bounded).
        for _ in range(40):
            if target.getState().contains(pyatspi.STATE_FOCUSED):
                print("focused")
                return
            subprocess.check_call(["xdotool", "windowfocus", "--sync", wid, "key", "Tab"])
            time.sleep(0.05)   # the key's effect reaches AT-SPI as an event: read it again
        sys.exit(f"Tab never reached {button!r} of {name!r}")
    elif args[0] == "focused":   # what has the keyboard's focus: "role|name" (waits for NAME if given)
        want = args[1] if len(args) > 1 else None

        deadline = time.monotonic() + 10
        while True:
            frame = window()
            n = next((n for n in walk(frame) if n.getState().contains(pyatspi.STATE_FOCUSED)), None) if frame else None
            if n is not None and (want is None or n.name == want) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        print(f"{n.getRoleName()}|{n.name}" if n is not None else "none|")
    elif args[0] == "label":   # a label reading TEXT in any of the app's windows (waits for it)
        text, deadline = args[1], time.monotonic() + 30
        while True:
            found = [n.name for app in pyatspi.Registry.getDesktop(0)
                     if app is not None and app.name in ("dev.ferry.Downloads", "ferry-downloads")
                     for frame in app for n in walk(frame) if n.getRoleName() == "label"]
            if text in found:
                print("found")
                break
            if time.monotonic() > deadline:
                sys.exit(f"no label {text!r} among {found}")
            time.sleep(0.1)
    elif args[0] == "keeps":
        name, button, seconds = args[1], args[2], float(args[3])

        def find(frame):
            row = row_named(frame, name)
            return next((n for n in walk(row) if n.getRoleName() == "push button" and n.name == button), None) if row else None

        _, first = until(f"button {button!r} in the row of {name!r}", find)
        path, start = first.path, time.monotonic()
        while time.monotonic() < start + seconds:   # an observation over a span, not a wait
            now = find(window())
            if now is None or now.path != path:
                sys.exit(f"{button!r} of {name!r} replaced after {time.monotonic() - start:.1f} s")
            time.sleep(0.2)
        print("same")
    elif args[0] == "type":
        field, text = args[1], args[2]
        _, target = until(f"field {field!r}", lambda f: next((n for n in walk(f) if n.getRoleName() == "text" and n.name == field), None))
        target.queryEditableText().setTextContents(text)
        print("typed")
    elif args[0] in ("set", "toggle", "get", "click", "enabled"):
        name = args[1]
        deadline = time.monotonic() + 30
        while (n := control(name)) is None:
            if time.monotonic() > deadline:
                sys.exit(f"timed out waiting for the control {name!r}")
            time.sleep(0.1)
        if args[0] == "set":
            if n.getRoleName() == "spin button":
                n.queryValue().currentValue = float(args[2])
            else:
                n.queryEditableText().setTextContents(args[2])
            print("set")
        elif args[0] in ("toggle", "click"):
            n.queryAction().doAction(0)
            print("toggled" if args[0] == "toggle" else "clicked")
        else:   # get, enabled
            want = args[2] if len(args) > 2 else None
            while want is not None and value_of(n) != want and time.monotonic() < deadline:
                time.sleep(0.1)
            print(value_of(n))
    elif args[0] == "width":
        # GTK 4.8 answers no character extents over AT-SPI: the field's own width it does.
        n = control(args[1])
        if n is None:
            sys.exit(f"no control {args[1]!r}")
        print(n.queryComponent().getExtents(pyatspi.WINDOW_COORDS)[2])
    elif args[0] == "activate":
        # GTK 4.8 gives list items no AT-SPI action: the input goes in as the X server's events,
        # at the row's name label (its place from AT-SPI, relative to the window).
        name, how = args[1], args[2]

        def label(frame):
            row = row_named(frame, name)
            return next((n for n in walk(row) if n.getRoleName() == "label" and n.name == name), None) if row else None

        frame, target = until(f"the row of {name!r}", label)
        x, y, w, h = target.queryComponent().getExtents(pyatspi.WINDOW_COORDS)
        wid = subprocess.check_output(["xdotool", "search", "--onlyvisible", "--name", "^%s$" % frame.name], text=True).split()[0]
        at = ["mousemove", "--window", wid, str(x + w // 2), str(y + h // 2)]
        if how == "enter":
            subprocess.check_call(["xdotool"] + at + ["click", "1", "key", "Return"])
        else:
            subprocess.check_call(["xdotool"] + at + ["click", "--repeat", "2", "--delay", "80", "1"])
        print("activated")
    elif args[0] == "key":
        frame, _ = until("the window", lambda f: f)
        wid = subprocess.check_output(["xdotool", "search", "--onlyvisible", "--name", "^%s$" % frame.name], text=True).split()[0]
        # No window manager under Xvfb: focus the window, then type (XTest, real input events).
        subprocess.check_call(["xdotool", "windowfocus", "--sync", wid, "key", args[1]])
        print("typed")
    elif args[0] == "gone":
        until(f"{args[1]} gone", lambda f: row_named(f, args[1]) is None)
        print("gone")
    else:
        sys.exit(__doc__)


try:
    main(sys.argv[1:])
except SystemExit:
    raise
except BaseException as e:
    sys.exit(f"{type(e).__name__}: {e}")

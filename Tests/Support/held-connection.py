#!/usr/bin/env python3
"""A D-Bus client whose connection outlives the process that opened it (issue 31, item 2).

held-connection.py FIFO: connects to the session bus (raw protocol: no library threads, so
fork() keeps a usable socket), says Hello and prints "name NAME pid PID". Then it obeys the
lines written to FIFO, one open each: "fork" — the process forks, prints "child PID" and the
parent exits (the bus keeps the parent's pid as the connection's); "call" — calls
dev.ferry.Agent1.GetStatus and prints "reply STRINGS…" or "error STRINGS…" (the error's name among them); then exits."""
import os
import re
import socket
import struct
import sys


def pad(data, n):
    return data + b"\0" * (-len(data) % n)


def method_call(serial, dest, path, interface, member):
    fields = b""
    for code, sig, value in ((1, b"o", path), (2, b"s", interface), (3, b"s", member), (6, b"s", dest)):
        raw = value.encode()
        fields = pad(fields, 8) + bytes([code, 1]) + sig + b"\0" + struct.pack("<I", len(raw)) + raw + b"\0"
    return pad(struct.pack("<cBBBIII", b"l", 1, 0, 1, 0, serial, len(fields)) + fields, 8)


def read_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise SystemExit("bus closed the connection")
        data += chunk
    return data


def reply_to(sock, serial):
    """The method return or error answering `serial`: (kind, header fields, body)."""
    while True:
        head = read_exact(sock, 16)
        kind, body_len, fields_len = head[1], struct.unpack("<I", head[4:8])[0], struct.unpack("<I", head[12:16])[0]
        fields = read_exact(sock, fields_len + (-(16 + fields_len) % 8))
        body = read_exact(sock, body_len)
        m = re.search(rb"\x05\x01u\x00(....)", fields, re.S)   # REPLY_SERIAL
        if kind in (2, 3) and m and struct.unpack("<I", m.group(1))[0] == serial:
            return kind, fields, body


def strings(data):
    return [s.decode() for s in re.findall(rb"[ -~]{3,}", data)]


def command(fifo):
    with open(fifo) as f:
        return f.readline().strip()


def main():
    fifo = sys.argv[1]
    address = os.environ["DBUS_SESSION_BUS_ADDRESS"]
    path = re.search(r"path=([^,;]+)", address).group(1)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    sock.sendall(b"\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\r\n")
    if not sock.recv(4096).startswith(b"OK"):
        raise SystemExit("bus refused authentication")
    sock.sendall(b"BEGIN\r\n")
    sock.sendall(method_call(1, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello"))
    _, _, body = reply_to(sock, 1)
    print("name", strings(body)[0], "pid", os.getpid(), flush=True)
    while True:
        what = command(fifo)
        if what == "fork":
            if os.fork() > 0:
                os._exit(0)
            # Keep only the bus: the test's Process sees the sandbox end only when no process
            # holds the descriptors it handed down.
            for fd in range(3, 1024):
                if fd != sock.fileno():
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            print("child", os.getpid(), flush=True)
        elif what == "call":
            sock.sendall(method_call(2, "dev.ferry.Agent1", "/dev/ferry/Agent1", "dev.ferry.Agent1", "GetStatus"))
            kind, fields, body = reply_to(sock, 2)
            print("reply" if kind == 2 else "error", *strings(fields), *strings(body), flush=True)
            return
        else:
            return


main()

#!/usr/bin/python3
"""Stands in for systemd-journald's native socket (only where none runs): receives what
sd_journal_send(3) sends to SOCKET and appends each entry's fields to OUT, one entry per
paragraph. Prints "ready" once bound.

    journal-listener.py SOCKET OUT"""
import os
import socket
import sys

path, out = sys.argv[1], sys.argv[2]
os.makedirs(os.path.dirname(path), exist_ok=True)
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
print("ready", flush=True)
try:
    while True:
        data = s.recv(1 << 20)
        with open(out, "ab") as f:
            f.write(data.rstrip(b"\n") + b"\n\n")
finally:
    os.unlink(path)

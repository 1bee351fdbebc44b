#!/usr/bin/python3
"""A FUSE file system (fusepy, Debian's python3-fusepy) with one file, /hung.bin, whose reads
block until a line is written to the FIFO RELEASE: a file on a hung network mount, as an app
could hand the agent. Usage: hung-fs.py MOUNTPOINT SIZE RELEASE. Prints "ready" once mounted.
(libfuse's loop holds the main thread, so a Python signal handler would never run.)"""
import errno, os, stat, sys, threading, time

import fusepy

RELEASED = threading.Event()


def wait_for_release(fifo):
    with open(fifo) as f:
        f.readline()
    RELEASED.set()


class Hung(fusepy.Operations):
    def __init__(self, size):
        self.size = size

    def init(self, path):
        print("ready", flush=True)

    def getattr(self, path, fh=None):
        now = time.time()
        if path == "/":
            return {"st_mode": stat.S_IFDIR | 0o755, "st_nlink": 2, "st_ctime": now, "st_mtime": now, "st_atime": now}
        if path == "/hung.bin":
            return {"st_mode": stat.S_IFREG | 0o644, "st_nlink": 1, "st_size": self.size,
                    "st_ctime": now, "st_mtime": now, "st_atime": now}
        raise fusepy.FuseOSError(errno.ENOENT)

    def readdir(self, path, fh):
        return [".", "..", "hung.bin"]

    def open(self, path, flags):
        return 0

    def read(self, path, size, offset, fh):
        print("reading", flush=True)
        RELEASED.wait()   # the mount hangs until the test lets it go
        return b"h" * max(0, min(size, self.size - offset))


if __name__ == "__main__":
    os.mkfifo(sys.argv[3])
    threading.Thread(target=wait_for_release, args=(sys.argv[3],), daemon=True).start()
    fusepy.FUSE(Hung(int(sys.argv[2])), sys.argv[1], foreground=True, nothreads=False, direct_io=True)

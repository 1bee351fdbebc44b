#!/usr/bin/env python3
"""A second tus 1.0 server from PyPI for interop tests: aiohttp-tus (on aiohttp), at /uploads,
storing finished files in FILES_DIR. It answers OPTIONS with its tus headers only when the
request carries Tus-Resumable, as some servers do.

    aiohttp-tus-server.py PORT FILES_DIR"""
import sys
from pathlib import Path

from aiohttp import web
from aiohttp_tus import setup_tus

port, files = int(sys.argv[1]), Path(sys.argv[2])
files.mkdir(parents=True, exist_ok=True)
app = setup_tus(web.Application(client_max_size=64 << 20), upload_path=files, upload_url="/uploads")
web.run_app(app, host="127.0.0.1", port=port, print=None)

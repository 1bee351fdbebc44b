#!/usr/bin/env python3
"""A real tus 1.0 server from PyPI for interop tests: tuspyserver (a FastAPI router) under
uvicorn, at /files, wrapped in a log of every request (method, path, Upload-Offset, body bytes
received, status) as JSON lines.

    tus-server.py PORT FILES_DIR LOG"""
import json
import sys

import uvicorn
from fastapi import FastAPI
from tuspyserver import create_tus_router

port, files, log = int(sys.argv[1]), sys.argv[2], sys.argv[3]
app = FastAPI()
app.include_router(create_tus_router(prefix="files", files_dir=files))


class Logged:
    """ASGI wrapper: counts what each request brought and what it was answered."""

    def __init__(self, inner):
        self.inner = inner

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.inner(scope, receive, send)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        entry = {"method": scope["method"], "path": scope["path"], "status": 0, "received": 0,
                 "offset": int(headers.get("upload-offset", "-1"))}

        async def counting():
            message = await receive()
            if message["type"] == "http.request":
                entry["received"] += len(message.get("body", b""))
            return message

        async def answering(message):
            if message["type"] == "http.response.start":
                entry["status"] = message["status"]
            await send(message)

        try:
            await self.inner(scope, counting, answering)
        finally:
            with open(log, "a") as f:
                f.write(json.dumps(entry) + "\n")


uvicorn.run(Logged(app), host="127.0.0.1", port=port, log_level="warning")

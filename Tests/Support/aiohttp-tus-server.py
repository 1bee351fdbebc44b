#!/usr/bin/env python3
"""A second tus 1.0 server from PyPI for interop tests: aiohttp-tus (on aiohttp), at /uploads,
storing finished files in FILES_DIR. It answers OPTIONS with its tus headers only when the
request carries Tus-Resumable, as some servers do, and reads each PATCH whole before it stores
any of it. MAX_BODY caps a request's body (aiohttp answers 413 past it); "stock" keeps
aiohttp's own cap (1 MiB), as a deployment that never set it has. LOG, when given, gets a JSON
line per request: method, path, the Upload-Offset asked and answered, Content-Length, status.

    aiohttp-tus-server.py PORT FILES_DIR [MAX_BODY|stock [LOG]]"""
import json
import sys
from pathlib import Path

from aiohttp import web
from aiohttp_tus import setup_tus

port, files = int(sys.argv[1]), Path(sys.argv[2])
cap = sys.argv[3] if len(sys.argv) > 3 else str(64 << 20)
log = open(sys.argv[4], "a", buffering=1) if len(sys.argv) > 4 else None
files.mkdir(parents=True, exist_ok=True)


@web.middleware
async def logged(request, handler):
    status, answered = 500, None
    try:
        response = await handler(request)
        status, answered = response.status, response.headers.get("Upload-Offset")
        return response
    except web.HTTPException as e:
        status = e.status
        raise
    finally:
        if log:
            log.write(json.dumps({"method": request.method, "path": request.path,
                                  "offset": int(request.headers.get("Upload-Offset", "-1")),
                                  "answered": int(answered) if answered else -1,
                                  "length": request.content_length or 0, "status": status}) + "\n")


app = web.Application(middlewares=[logged]) if cap == "stock" else web.Application(middlewares=[logged], client_max_size=int(cap))
setup_tus(app, upload_path=files, upload_url="/uploads")
web.run_app(app, host="127.0.0.1", port=port, print=None)

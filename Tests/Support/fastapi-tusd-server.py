#!/usr/bin/env python3
"""fastapi-tusd 0.100.2 (PyPI), a tus 1.0 server, mounted as its README mounts it: a TusRouter
at /files under uvicorn. Its OPTIONS handler crashes (it returns the injected Response, whose
status is None: uvicorn closes the connection with no answer), so automatic discovery never
hears from it; with tus forced it works.

    fastapi-tusd-server.py PORT STORE_DIR"""
import sys

import uvicorn
from fastapi import FastAPI
from fastapi_tusd.tusd import TusRouter

port, store = int(sys.argv[1]), sys.argv[2]
app = FastAPI()
app.include_router(TusRouter(store_dir=store, location="http://127.0.0.1:%d/files" % port, prefix="/files"))
uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")

#!/usr/bin/env python3
"""A site whose download needs the visitor's session (Flask): /login sets the session cookie
and sends the browser on to the download; /statement.pdf answers 403 without the session.
Each request of the file is logged as a JSON line (its cookie, Referer and User-Agent).

    cookie-site.py PORT LOG"""
import json
import sys

from flask import Flask, Response, request

port, log = int(sys.argv[1]), sys.argv[2]
app = Flask(__name__)
STATEMENT = b"%PDF-1.4 statement " + bytes(range(256)) * 800


@app.get("/login")
def login():
    page = ("<!doctype html><title>Account</title><a href='/statement.pdf'>Your statement</a>"
            # The download starts a moment after the page, as a bank's does. A browser starts
            # extensions' service workers beside the first page: under a full test run's load
            # 300 ms was once too short and the download began before the extension listened.
            "<script>setTimeout(() => { location.href = '/statement.pdf' }, 2000)</script>")
    response = Response(page, mimetype="text/html")
    response.set_cookie("sid", "s3cret-session", httponly=True)
    return response


@app.get("/statement.pdf")
def statement():
    with open(log, "a") as f:
        f.write(json.dumps({"cookie": request.headers.get("Cookie"), "referer": request.headers.get("Referer"),
                            "agent": request.headers.get("User-Agent")}) + "\n")
    if request.cookies.get("sid") != "s3cret-session":
        return Response(status=403)
    return Response(STATEMENT, mimetype="application/pdf",
                    headers={"Content-Disposition": "attachment; filename=statement.pdf"})


app.run(host="127.0.0.1", port=port)

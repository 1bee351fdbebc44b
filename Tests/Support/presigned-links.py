"""Third-party servers for the download-naming tests: moto's S3 (an object store that signs
links) behind a Flask app whose /files/<n> redirects to a presigned link, as an app's download
endpoint does; and a Starlette app whose /video answers video/webm with no file name anywhere,
and whose /rates names itself in ISO-8859-1 (RFC 8187).

    python3 presigned-links.py PORTFILE    writes "flask_port starlette_port" once all listen
"""
import os
import sys
import threading

import boto3
import flask
import uvicorn
from moto.server import ThreadedMotoServer
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route
from werkzeug.serving import make_server

s3_server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
s3_server.start()
s3_host, s3_port = s3_server.get_host_and_port()
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
s3 = boto3.client("s3", region_name="us-east-1", endpoint_url=f"http://{s3_host}:{s3_port}")
s3.create_bucket(Bucket="invoices")
s3.put_object(Bucket="invoices", Key="Invoice 2026-0042.pdf", ContentType="application/pdf",
              Body=b"%PDF-1.4\n%invoice 42\n" + b"x" * 50_000)

app = flask.Flask("files")


@app.route("/files/<int:number>")
def file(number):
    link = s3.generate_presigned_url("get_object", Params={"Bucket": "invoices", "Key": "Invoice 2026-0042.pdf"},
                                     ExpiresIn=600)
    return flask.redirect(link, code=302)


flask_server = make_server("127.0.0.1", 0, app, threaded=True)
threading.Thread(target=flask_server.serve_forever, daemon=True).start()


async def video(request):
    return Response(b"\x1aE\xdf\xa3" + b"\0" * 20_000, media_type="video/webm")


async def rates(request):
    # RFC 8187's other charset: "£ rates.txt" in ISO-8859-1.
    return Response(b"rates\n", media_type="text/plain",
                    headers={"Content-Disposition": "attachment; filename*=iso-8859-1'en'%A3%20rates.txt"})


config = uvicorn.Config(Starlette(routes=[Route("/video", video), Route("/rates", rates)]), host="127.0.0.1", port=0, log_level="warning")
starlette_server = uvicorn.Server(config)
threading.Thread(target=starlette_server.run, daemon=True).start()
while not starlette_server.started:
    threading.Event().wait(0.02)
starlette_port = starlette_server.servers[0].sockets[0].getsockname()[1]

with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(f"{flask_server.server_port} {starlette_port}\n")
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
threading.Event().wait()

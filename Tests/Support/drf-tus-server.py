#!/usr/bin/env python3
"""drf-tus 2.0 (PyPI: a tus server for Django REST framework) in a default Django deployment:
stock settings (a request body over DATA_UPLOAD_MAX_MEMORY_SIZE, 2.5 MB, is answered 400),
SQLite, Django's own threaded server. Its OPTIONS answer puts Tus-Version and Tus-Extension in
a JSON body, not in header fields; its middleware adds Tus-Resumable to every answer. Each
request is logged as a JSON line (method, Upload-Offset, body length, status).

    drf-tus-server.py PORT ROOT LOG"""
import json
import os
import sys

import django
from django.conf import settings

port, root, log = int(sys.argv[1]), sys.argv[2], sys.argv[3]
os.makedirs(root, exist_ok=True)


def logged(get_response):
    def middleware(request):
        response = get_response(request)
        with open(log, "a") as f:
            f.write(json.dumps({"method": request.method, "path": request.path,
                                "offset": int(request.headers.get("Upload-Offset", "-1")),
                                "length": int(request.headers.get("Content-Length") or 0),
                                "status": response.status_code}) + "\n")
        return response
    return middleware


settings.configure(
    DEBUG=False, ALLOWED_HOSTS=["*"], SECRET_KEY="drf-tus-test", BASE_DIR=root, ROOT_URLCONF=__name__,
    INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "rest_framework", "rest_framework_tus"],
    MIDDLEWARE=[__name__ + ".logged", "rest_framework_tus.middleware.TusMiddleware"],
    DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.path.join(root, "db.sqlite3")}},
    MEDIA_ROOT=os.path.join(root, "media"),
    REST_FRAMEWORK_TUS={"UPLOAD_DIR": os.path.join(root, "partial")},
    USE_TZ=True,
)
django.setup()

from django.core.management import call_command  # noqa: E402
from django.urls import include, path  # noqa: E402

urlpatterns = [path("", include("rest_framework_tus.urls", namespace="rest_framework_tus"))]
call_command("migrate", verbosity=0)
call_command("runserver", "127.0.0.1:%d" % port, use_reloader=False, verbosity=0)

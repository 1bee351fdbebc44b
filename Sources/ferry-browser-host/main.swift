import Glibc

// Ferry's native messaging host for its browser extension (Chromium, Chrome, Firefox): the
// browser passes the extension's origin (and Firefox the manifest's path) as arguments, which
// the manifests' allowed_origins/allowed_extensions already decided; nothing here reads them.
signal(SIGPIPE, SIG_IGN)  // a browser that goes away ends the host through write's error
exit(BrowserHost().run())

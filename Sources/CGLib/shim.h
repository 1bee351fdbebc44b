#include <glib.h>
#include <glib-object.h>
#include <glib-unix.h>
#include <gio/gio.h>
#include <gio/gunixfdlist.h>
#include <gio/gunixmounts.h>
#include <gio/gdesktopappinfo.h>
/* GSettings' backends: the keyfile one where GLib would only keep settings in memory. */
#define G_SETTINGS_ENABLE_BACKEND
#include <gio/gsettingsbackend.h>

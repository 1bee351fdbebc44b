"""What the benchmark needs from apt (nginx, the peers, strace, python3-dbus and -gi), installed
as root when missing: before the harness and the cases import dbus."""
import shutil, subprocess, sys


def need(tools):
    missing = [pkg for exe, pkg in tools if not shutil.which(exe)]
    try:
        import dbus  # noqa: F401
    except ImportError:
        missing.append("python3-dbus")
    try:
        import gi  # noqa: F401
    except ImportError:
        missing.append("python3-gi")
    if missing:
        print(f"installing {' '.join(missing)}", file=sys.stderr)
        subprocess.run(["apt-get", "update", "-qq"], check=False)
        subprocess.run(["apt-get", "install", "-y", "-qq", *missing], check=True, stdout=subprocess.DEVNULL)

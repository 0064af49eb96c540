# SPDX-License-Identifier: GPL-2.0-or-later
"""Real servers for tests (Prometheus, ClickHouse): started on 127.0.0.1 only, on free ports,
as an unprivileged user when we are root, in a private temporary folder, and always killed
(process group) when the test ends, even on failure."""

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

NOBODY = 65534


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unprivileged(argv):
    """argv run as nobody when we are root (servers refuse or should not run as root)."""
    if os.geteuid() != 0:
        return argv
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", *argv]


class Server:
    """A server process in its own process group, with its output in a log file."""

    def __init__(self, name, argv, tmp):
        self.name = name
        self.log_path = os.path.join(tmp, name + ".log")
        self.log = open(self.log_path, "wb")
        self.argv = argv
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(self.argv, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=15)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait()
        self.proc = None

    def log_text(self):
        self.log.flush()
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")[-3000:]


class TempDir:
    """A temporary folder the unprivileged server user can use."""

    def __init__(self, prefix):
        self.path = tempfile.mkdtemp(prefix=prefix)
        os.chmod(self.path, 0o755)

    def subdir(self, name, owned_by_server=True):
        d = os.path.join(self.path, name)
        os.makedirs(d, exist_ok=True)
        if owned_by_server and os.geteuid() == 0:
            os.chown(d, NOBODY, NOBODY)
        return d

    def cleanup(self):
        shutil.rmtree(self.path, ignore_errors=True)


def http(url, data=None, timeout=10):
    """(status, body text); status 0 when the server does not answer."""
    try:
        with urllib.request.urlopen(url, data=data, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")
    except (urllib.error.URLError, ConnectionError, socket.timeout, TimeoutError):
        return 0, ""


def wait_http(url, seconds, server=None):
    deadline = time.time() + seconds
    while time.time() < deadline:
        status, _ = http(url, timeout=2)
        if status == 200:
            return True
        if server and server.proc and server.proc.poll() is not None:
            return False
        time.sleep(0.2)
    return False


def prom_query(base, query):
    """Instant query: {tuple(sorted label items without __name__): float value}."""
    status, body = http(base + "/api/v1/query?" + urllib.parse.urlencode({"query": query}))
    if status != 200:
        return None
    out = {}
    for r in json.loads(body)["data"]["result"]:
        labels = tuple(sorted((k, v) for k, v in r["metric"].items() if k != "__name__"))
        out[labels] = float(r["value"][1])
    return out

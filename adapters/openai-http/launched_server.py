"""A server the bridge starts itself (--launch): llama-server, or any
program that serves the same API and can listen on a Unix socket.

The server listens on a Unix socket in a fresh temporary folder, so no port
is taken, raced for or reachable from another machine. Its output goes to
a log file in that folder; when it fails to start, or the run fails, the
log's last lines go to the bridge's stderr, which the harness keeps with the
cell. stop() ends it (SIGTERM, then SIGKILL after a grace period), reaps it
and removes the folder. If the bridge itself is killed, the server goes
too: it is in the bridge's process group, which the harness kills, and it
asked the kernel for SIGTERM when its parent dies (PR_SET_PDEATHSIG), for a
bridge run by hand.
"""
import ctypes
import os
import shutil
import signal
import subprocess
import tempfile
import time

import served_api

PR_SET_PDEATHSIG = 1
STOP_GRACE_SECONDS = 10.0
LOG_TAIL_LINES = 20


class LaunchError(Exception):
    """The server could not be started; the message names the command and
    ends with its log's last lines."""


def _die_with_parent():
    """Runs in the child before exec: SIGTERM when the bridge dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def expand(argument, values):
    """One launch argument with its %NAME% placeholders filled (not {NAME}:
    braces are the harness's placeholders in a profile)."""
    for name, value in values.items():
        argument = argument.replace("%%%s%%" % name, value)
    return argument


class LaunchedServer:
    """Starts `program` with `arguments` (%model%: the model file, %socket%:
    the socket's path) and waits until GET `ready_path` answers 200 within
    `ready_timeout` seconds. `url` is the server's address for served_api."""

    def __init__(self, program, arguments, model, ready_path, ready_timeout):
        self.folder = tempfile.mkdtemp(prefix="samebits-served-")
        self.socket = os.path.join(self.folder, "server.sock")
        self.log_path = os.path.join(self.folder, "server.log")
        self.url = "unix:" + self.socket
        self.argv = [program] + [expand(a, {"model": model, "socket": self.socket})
                                 for a in arguments]
        self.process = None
        with open(self.log_path, "wb") as log:
            try:
                self.process = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=log,
                                                stderr=subprocess.STDOUT,
                                                preexec_fn=_die_with_parent)
            except OSError as e:
                shutil.rmtree(self.folder, ignore_errors=True)
                raise LaunchError("cannot start the server (%s): %s"
                                  % (" ".join(self.argv), e)) from None
        try:
            self._wait_ready(ready_path, ready_timeout)
        except LaunchError:
            self.stop()
            raise

    def _wait_ready(self, path, timeout):
        probe = served_api.Server(self.url, 2.0)
        deadline = time.monotonic() + timeout
        last = "no answer yet"
        while time.monotonic() < deadline:
            status = self.process.poll()
            if status is not None:
                raise LaunchError("the server exited with status %d before it was ready (%s);"
                                  " its log's last lines:\n%s"
                                  % (status, " ".join(self.argv), self.log_tail()))
            if os.path.exists(self.socket):
                try:
                    probe.call("GET", path)
                    return
                except served_api.ServedError as e:
                    last = str(e)
            time.sleep(0.1)
        raise LaunchError("the server did not answer GET %s with 200 within %g s (%s); last:"
                          " %s; its log's last lines:\n%s"
                          % (path, timeout, " ".join(self.argv), last, self.log_tail()))

    def log_tail(self):
        try:
            with open(self.log_path, "rb") as log:
                lines = log.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return "(no log)"
        return "\n".join(lines[-LOG_TAIL_LINES:]) or "(empty)"

    def stop(self):
        """Ends and reaps the server, then removes its folder. Returns its
        exit status (None when it had to be killed)."""
        status = None
        if self.process is not None:
            if self.process.poll() is None:
                self.process.terminate()
                try:
                    status = self.process.wait(timeout=STOP_GRACE_SECONDS)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
            else:
                status = self.process.returncode
        shutil.rmtree(self.folder, ignore_errors=True)
        return status

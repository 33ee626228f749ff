"""A real ``redis-server`` on a free loopback port, persistence off.

Tests that need one take the ``redis_server`` fixture (``tests/conftest.py``);
without the binary (Debian's ``redis-server``; ``.ci/run`` installs it) they
are skipped with a message saying so.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time

from tests._support.ports import free_port

__all__ = ["RedisServer", "redis_binary"]


def redis_binary() -> str | None:
    return shutil.which("redis-server")


class RedisServer:
    def __init__(self, binary: str, port: int | None = None) -> None:
        self.binary = binary
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> RedisServer:
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "yes",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"redis-server exited with {self.process.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as probe:
                    probe.sendall(b"PING\r\n")
                    if probe.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                pass
            time.sleep(0.02)
        raise AssertionError("redis-server did not start")

    def kill(self) -> None:
        """SIGKILL: connections drop at once, nothing is flushed."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)

"""``serve`` through a DynamoDB outage at start: bound, alive, not ready, then
ready once the store answers (docs/design.md, Degraded start).

The store is a real stand-in process (``tests/_support/stalled_endpoint.py``)
in front of the session's moto server: it accepts connections and answers
nothing until told to relay. ``serve`` runs as the operator runs it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from api.cli.main import main
from api.cli.secrets import init_secrets
from storage.dynamodb._client import READ_TIMEOUT_SECONDS
from tests._support.ports import free_port

REGION = "us-east-1"
PROOFGATE = str(Path(sys.executable).with_name("proofgate"))
BACKOFF_LINE = "Storage unavailable at start"
READY_WITHIN_SECONDS = 60.0
"""That it becomes ready by itself, not how soon: about a probe and a delay
(``api/runtime/storage_wait.py``) on a quiet machine, but a test run loading
both cores (12 runnable processes) was seen to take over 5 s to start the
gateway once the store answered."""


class Lines:
    """A process's stderr, read on a thread, so a test can wait for a line."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        self._changed = threading.Condition()
        assert process.stderr is not None
        self._stream = process.stderr
        self._thread = threading.Thread(target=self._read, args=(process.stderr,), daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Once the process has exited: the rest of its stderr, then the pipe."""
        self._thread.join(10)
        self._stream.close()

    def _read(self, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self.lines.append("")  # end of stream
            self._changed.notify_all()

    def wait_for(self, text: str, count: int = 1, timeout: float = 60) -> None:
        def seen() -> bool:
            return sum(text in line for line in self.lines) >= count or "" in self.lines

        with self._changed:
            self._changed.wait_for(seen, timeout)
            found = sum(text in line for line in self.lines)
        assert found >= count, f"{text!r} {found} times, wanted {count}:\n{self.text()}"

    def text(self) -> str:
        return "".join(self.lines)


@contextmanager
def stand_in(upstream: str, *extra: str) -> Iterator[tuple[subprocess.Popen[str], int]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests._support.stalled_endpoint", upstream, *extra],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        yield process, port
    finally:
        process.terminate()
        process.wait(10)
        assert process.stdout is not None
        process.stdout.close()


@pytest.fixture
def table(moto_endpoint: str) -> str:
    name = f"outage-{uuid.uuid4().hex[:8]}"
    args = ["create-table", "--table", name, "--endpoint", moto_endpoint, "--region", REGION]
    assert main(args) == 0
    return name


@contextmanager
def serving(
    endpoint: str, table: str, tmp_path: Path, *, exits: bool = False
) -> Iterator[tuple[str, Lines]]:
    """``serve`` as a process; alive to the end unless it ``exits`` (status 1)."""
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PROOFGATE_")},
        **init_secrets(tmp_path / "fleet"),
        "PROOFGATE_BACKEND": "dynamodb",
        "PROOFGATE_AWS_REGION": REGION,
        "PROOFGATE_TABLE": table,
    }
    command = [PROOFGATE, "serve", "--port", str(port), "--endpoint", endpoint]
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    lines = Lines(process)
    try:
        yield f"http://127.0.0.1:{port}", lines
        if exits:
            assert process.wait(30) == 1, lines.text()
        assert process.poll() is None or exits, f"serve exited:\n{lines.text()}"
    finally:
        process.terminate()
        process.wait(15)
        lines.close()
    assert "Traceback" not in lines.text(), lines.text()


def ready_within(url: str, seconds: float) -> float:
    """Seconds until ``/ready`` answered 200, polled; fails past ``seconds``."""
    start = time.monotonic()
    while (elapsed := time.monotonic() - start) < seconds:
        try:
            if httpx.get(f"{url}/ready", timeout=1).status_code == 200:
                return elapsed
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    pytest.fail(f"/ready was not 200 within {seconds} s of the store answering")


@pytest.mark.slow
def test_a_stalled_store_leaves_serve_alive_and_unready_until_it_answers(
    moto_endpoint: str, table: str, tmp_path: Path
) -> None:
    with (
        stand_in(moto_endpoint) as (endpoint, port),
        serving(f"http://127.0.0.1:{port}", table, tmp_path) as (url, lines),
    ):
        # Backoffs until the client's read timeout has passed, which a check
        # without a bound of its own died of (ReadTimeoutError, exit 1), and
        # at least two of them however slowly a loaded machine logs the first.
        started, backoffs = time.monotonic(), 0
        while backoffs < 2 or time.monotonic() - started < READ_TIMEOUT_SECONDS + 2:
            backoffs += 1
            lines.wait_for(BACKOFF_LINE, count=backoffs)
        assert f"DynamoDB at http://127.0.0.1:{port} did not answer within 2 s" in lines.text()
        assert httpx.get(f"{url}/health", timeout=5).status_code == 200
        ready = httpx.get(f"{url}/ready", timeout=5)
        assert (ready.status_code, ready.json()["status"]) == (503, "unavailable")
        refused = httpx.post(f"{url}/graphql", json={"query": "{__typename}"}, timeout=5)
        assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
        assert refused.json()["errors"][0]["extensions"]["code"] == "SERVICE_UNAVAILABLE"

        endpoint.send_signal(signal.SIGUSR1)
        assert endpoint.stdout is not None and endpoint.stdout.readline() == "relaying\n"
        ready_within(url, READY_WITHIN_SECONDS)
        # The gateway itself answers now, on the same socket.
        answered = httpx.post(f"{url}/graphql", json={"query": "{__typename}"}, timeout=5)
        assert answered.status_code == 200, answered.text
    backoffs = [line for line in lines.lines if BACKOFF_LINE in line]
    assert len(backoffs) >= 2 and all(line.endswith(" s\n") for line in backoffs)


def test_a_refused_connection_is_an_outage_too(
    moto_endpoint: str, table: str, tmp_path: Path
) -> None:
    """Nothing listens on the port yet, and 127.0.0.1 resolves: wait, then serve."""
    port = free_port()
    with serving(f"http://127.0.0.1:{port}", table, tmp_path) as (url, lines):
        lines.wait_for(BACKOFF_LINE)
        assert "EndpointConnectionError" in lines.text()
        assert httpx.get(f"{url}/ready", timeout=5).status_code == 503
        with stand_in(moto_endpoint, "--port", str(port), "--relay"):
            ready_within(url, READY_WITHIN_SECONDS)


def test_an_unknown_host_is_a_misconfiguration(
    table: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``.invalid`` never resolves (RFC 6761): one line, exit 1, no waiting."""
    for name, value in init_secrets(tmp_path / "fleet").items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PROOFGATE_BACKEND", "dynamodb")
    monkeypatch.setenv("PROOFGATE_TABLE", table)
    endpoint = "http://no-such-host.invalid:8000"
    code = main(["serve", "--port", str(free_port()), "--endpoint", endpoint])
    captured = capsys.readouterr()
    assert code == 1 and captured.out == ""
    error, hint = captured.err.splitlines()
    assert error == (
        f"proofgate: error: Cannot reach DynamoDB at {endpoint}: no host named no-such-host.invalid"
    )
    assert "PROOFGATE_DYNAMODB_ENDPOINT" in hint


def test_a_misconfiguration_found_while_waiting_stops_serve_with_one_line(
    moto_endpoint: str, tmp_path: Path
) -> None:
    """The store answers at last, and says the table does not exist: waiting
    cannot fix that, so ``serve`` stops as it would have at the first check."""
    missing = f"missing-{uuid.uuid4().hex[:8]}"
    with (
        stand_in(moto_endpoint) as (endpoint, port),
        serving(f"http://127.0.0.1:{port}", missing, tmp_path, exits=True) as (url, lines),
    ):
        lines.wait_for(BACKOFF_LINE)
        assert httpx.get(f"{url}/health", timeout=5).status_code == 200
        endpoint.send_signal(signal.SIGUSR1)
    errors = [line for line in lines.lines if line.startswith("proofgate: ")]
    assert errors == [
        f"proofgate: error: DynamoDB table {missing} does not exist at http://127.0.0.1:{port}\n",
        "proofgate: hint: Create it with `proofgate create-table`, or check PROOFGATE_TABLE "
        "and the region.\n",
    ]

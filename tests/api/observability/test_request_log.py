"""One structured line per request, under the id the client was given; no
secret in any line."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from api.cli.serve import _banner
from api.observability.log_lines import _pairs
from api.observability.observation import Observation, request_id_from
from api.observability.request_log import RequestFields
from api.settings.gateway import Settings
from storage.trace import StorageCall
from tests._support.ports import free_port

ADMIN_KEY = "request-log-admin-key-0123456789"
MISSING_PRODUCT = '{ product(id: "01J00000000000000000000000") { name } }'


class Served:
    def __init__(self, url: str, log: Path, pid: int) -> None:
        self.url = url
        self.log = log
        self.pid = pid

    def post(self, query: str, **headers: str) -> httpx.Response:
        return httpx.post(f"{self.url}/graphql", json={"query": query}, headers=headers, timeout=10)


@pytest.fixture
def served(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Served]:
    """``proofgate serve`` with the log format of the test's parameter (json
    unless it says otherwise), its stdout and stderr in one file."""
    port, log = free_port(), tmp_path / "serve.log"
    env = {
        "PATH": "/usr/bin:/bin",
        "PROOFGATE_DATA_DIR": str(tmp_path / "data"),
        "PROOFGATE_ADMIN_KEY": ADMIN_KEY,
        "PROOFGATE_PORT": str(port),
        "PROOFGATE_LOG_FORMAT": getattr(request, "param", "json"),
    }
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "api.cli.main", "serve"], env=env, stdout=sink, stderr=sink
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and process.poll() is None:
            try:
                httpx.get(f"{url}/health", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        assert process.poll() is None, log.read_text()
        yield Served(url, log, process.pid)
    finally:
        process.terminate()
        process.wait(10)


def json_lines(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]


def wait_for_line(log: Path, needle: str) -> None:
    """The line is written after the response is sent: wait for it, boundedly."""
    deadline = time.monotonic() + 10
    while needle not in log.read_text():
        assert time.monotonic() < deadline, f"no log line with {needle}"
        time.sleep(0.05)


def test_an_error_answer_and_its_log_line_share_one_request_id(served: Served) -> None:
    response = served.post(MISSING_PRODUCT, Authorization=f"Bearer {ADMIN_KEY}")
    (error,) = response.json()["errors"]
    request_id = error["extensions"]["requestId"]
    assert response.headers["x-request-id"] == request_id
    wait_for_line(served.log, request_id)
    mentioning = [line for line in served.log.read_text().splitlines() if request_id in line]
    assert len(mentioning) == 1
    (entry,) = [e for e in json_lines(served.log) if e.get("requestId") == request_id]
    assert entry["logger"] == "proofgate.request" and entry["level"] == "INFO"
    assert entry["method"] == "POST" and entry["path"] == "/graphql" and entry["status"] == 200
    assert entry["operationType"] == "query" and entry["operationName"] is None
    assert entry["principal"] == "ADMIN"
    assert entry["errorCodes"] == [error["extensions"]["code"]]
    assert entry["storageCalls"] >= 1 and entry["durationMs"] > 0


def test_a_plain_incoming_request_id_is_kept(served: Served) -> None:
    response = served.post("query Hello { __typename }", **{"X-Request-Id": "lb-7f3a.42"})
    assert response.headers["x-request-id"] == "lb-7f3a.42"
    wait_for_line(served.log, "lb-7f3a.42")
    (entry,) = [e for e in json_lines(served.log) if e.get("requestId") == "lb-7f3a.42"]
    assert entry["operationName"] == "Hello" and entry["principal"] == "ANONYMOUS"
    assert entry["errorCodes"] == [] and entry["status"] == 200


@pytest.mark.parametrize("incoming", ["a b", "x" * 129, "line\nbreak", '{"json":1}', ""])
def test_an_incoming_request_id_that_could_forge_a_line_is_replaced(incoming: str) -> None:
    assert request_id_from(incoming) != incoming
    assert len(request_id_from(incoming)) == 16


@pytest.mark.parametrize("served", ["text"], indirect=True)
def test_the_text_format_writes_no_secret(served: Served) -> None:
    served.post("query Hello { __typename }", **{"X-Request-Id": "text-1"})
    wait_for_line(served.log, "requestId=text-1")
    output = served.log.read_text()
    (line,) = [line for line in output.splitlines() if "requestId=text-1" in line]
    assert " INFO proofgate.request: request " in line and "operationName=Hello" in line
    assert "Admin key: set by PROOFGATE_ADMIN_KEY" in output
    assert ADMIN_KEY not in output


@pytest.mark.parametrize("demo", [False, True])
def test_a_generated_admin_key_is_printed_only_for_the_demo(tmp_path: Path, demo: bool) -> None:
    """Stdout ends up in log stores; ``make run --demo`` is a developer's terminal."""
    key_file = tmp_path / "admin.key"
    key = "generated-key-0123456789"
    settings = Settings(cursor_key=bytes(32), admin_key=key, admin_key_file=key_file, demo=demo)
    banner = _banner(settings)
    assert str(key_file) in banner
    assert (key in banner) is demo


def test_in_json_mode_every_line_is_json_with_its_process_id(served: Served) -> None:
    """The banner included: a log store that parses each line loses none,
    and lines of ``serve --workers N`` say which process wrote them."""
    request_id = served.post(MISSING_PRODUCT).headers["x-request-id"]
    deadline = time.monotonic() + 10
    while request_id not in served.log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    lines = [line for line in served.log.read_text().splitlines() if line.strip()]
    entries = [json.loads(line) for line in lines]  # fails on any plain-text line
    assert {entry["pid"] for entry in entries} == {served.pid}
    (banner,) = [entry for entry in entries if entry["message"] == "proofgate serving"]
    assert banner["url"] == served.url and ADMIN_KEY not in json.dumps(banner)
    assert any(entry.get("requestId") == request_id for entry in entries)


_TEXTS = st.none() | st.text(max_size=12)


@given(
    request_id=st.text(min_size=1, max_size=20),
    method=st.sampled_from(["POST", "GET"]),
    path=st.sampled_from(["/graphql", "/mcp", "/ingest/x"]),
    status=st.integers(100, 599),
    seconds=st.floats(0, 100, allow_nan=False),
    name=_TEXTS,
    kind=_TEXTS,
    principal=_TEXTS,
    codes=st.lists(st.sampled_from(["BAD_USER_INPUT", "NOT_FOUND", "x'y"]), max_size=3),
    calls=st.lists(
        st.tuples(st.sampled_from(["GetItem", "Query"]), st.floats(0, 1e6, allow_nan=False)),
        max_size=4,
    ),
)
def test_a_lines_text_is_its_fields_as_log_lines_writes_them(
    request_id: str,
    method: str,
    path: str,
    status: int,
    seconds: float,
    name: str | None,
    kind: str | None,
    principal: str | None,
    codes: list[str],
    calls: list[tuple[str, float]],
) -> None:
    """``RequestFields.pairs`` writes in one f-string what ``_pairs`` writes
    from the dict; a field left out or misnamed fails here."""
    observation = Observation(request_id, name, kind, principal, codes)
    observation.storage.calls.extend(StorageCall(op, "AP01", 1, units) for op, units in calls)
    fields = RequestFields({"method": method, "path": path}, status, seconds, observation)
    assert fields.pairs() == _pairs(fields.as_dict())


def test_a_lines_text_that_leaves_a_field_out_is_caught() -> None:
    """The positive control of the comparison above."""
    observation = Observation("r1", "Q", "query", "ANONYMOUS")
    fields = RequestFields({"method": "POST", "path": "/graphql"}, 200, 0.001, observation)
    dropped = fields.as_dict()
    del dropped["principal"]
    assert fields.pairs() != _pairs(dropped)

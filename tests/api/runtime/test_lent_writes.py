"""``LentWrites`` on real sockets: every frame arrives whole on its own
socket, from both threads, and what the kernel did not take comes back by
position with its cause, to be written after it (docs/design.md, Alert
fan-out)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from api.runtime.lent_writes import SHARED_FROM, LentWrites


@pytest.fixture
def writers() -> Iterator[LentWrites]:
    lent = LentWrites()
    yield lent
    lent.close()


@pytest.fixture
def pairs() -> Iterator[list[tuple[socket.socket, socket.socket]]]:
    made: list[tuple[socket.socket, socket.socket]] = []
    yield made
    for ours, theirs in made:
        ours.close()
        theirs.close()


def _pair(pairs: list[tuple[socket.socket, socket.socket]]) -> tuple[socket.socket, socket.socket]:
    ours, theirs = socket.socketpair()
    ours.setblocking(False)  # as the event loop's sockets are
    pairs.append((ours, theirs))
    return ours, theirs


def _tcp_pair(
    pairs: list[tuple[socket.socket, socket.socket]],
) -> tuple[socket.socket, socket.socket]:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        theirs = socket.create_connection(listener.getsockname())
        ours, _ = listener.accept()
    ours.setblocking(False)
    pairs.append((ours, theirs))
    return ours, theirs


def _writer_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name.startswith("proofgate-writer"))


def test_each_frame_arrives_whole_on_its_own_socket_from_both_threads(
    writers: LentWrites, pairs: list[tuple[socket.socket, socket.socket]]
) -> None:
    sockets = [_pair(pairs) for _ in range(4 * SHARED_FROM)]
    frames = [f"frame {n} ".encode() * (n + 1) for n in range(len(sockets))]
    threads = _writer_threads()
    unwritten = writers.write(
        [(ours.fileno(), frame) for (ours, _), frame in zip(sockets, frames, strict=True)]
    )
    assert unwritten == {}
    for (_, theirs), frame in zip(sockets, frames, strict=True):
        assert theirs.recv(len(frame) + 1) == frame
    assert _writer_threads() == threads + 1  # the other half went to the other thread


def test_a_small_batch_stays_on_the_callers_thread(
    writers: LentWrites, pairs: list[tuple[socket.socket, socket.socket]]
) -> None:
    sockets = [_pair(pairs) for _ in range(SHARED_FROM - 1)]
    threads = _writer_threads()
    assert writers.write([(ours.fileno(), b"x") for ours, _ in sockets]) == {}
    assert [theirs.recv(2) for _, theirs in sockets] == [b"x"] * len(sockets)
    assert _writer_threads() == threads


def test_what_the_kernel_did_not_take_comes_back_by_position_with_its_cause(
    writers: LentWrites, pairs: list[tuple[socket.socket, socket.socket]]
) -> None:
    """In both halves: a peer gone (the write fails), a socket whose
    buffers are full (it would block), and a frame larger than the buffers
    (written in part: the rest, after what was sent, is the frame)."""
    sockets = [_pair(pairs) for _ in range(2 * SHARED_FROM)]
    gone = {3, SHARED_FROM + 5}
    for position in gone:
        sockets[position][1].close()
    full = SHARED_FROM + 9
    while True:  # fill both of the socket's buffers
        try:
            sockets[full][0].send(b"f" * 65536)
        except BlockingIOError:
            break
    ours, theirs = _tcp_pair(pairs)
    large = bytes(range(256)) * 16384  # 4 MiB, past loopback's buffers
    lent = [(s.fileno(), b"frame") for s, _ in sockets] + [(ours.fileno(), large)]
    unwritten = writers.write(lent)
    assert {p: cause for p, (_, cause) in unwritten.items()} == {
        3: "write failed",
        SHARED_FROM + 5: "write failed",
        full: "socket would block",
        len(sockets): "partial write",
    }
    assert unwritten[full][0] == b"frame"
    rest = unwritten[len(sockets)][0]
    assert 0 < len(rest) < len(large)
    theirs.settimeout(10)
    received = b""
    while len(received) < len(large) - len(rest):
        received += theirs.recv(1 << 20)
    assert received + rest == large
    for position, (_, peer) in enumerate(sockets):
        if position not in gone and position != full:
            assert peer.recv(16) == b"frame"

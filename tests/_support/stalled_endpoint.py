"""A stand-in DynamoDB endpoint, run as its own process, that stalls and then recovers.

``python -m tests._support.stalled_endpoint UPSTREAM [--port N] [--relay]``
listens on 127.0.0.1 (``--port``, or a free one) and prints the port on
stdout. Until it gets SIGUSR1 it accepts every connection, reads what is
sent and answers nothing, as a stalled service or a black-holed path does;
from SIGUSR1 on (or from the start, with ``--relay``) it relays every
connection to ``UPSTREAM`` (moto's server), the held ones first with what
they sent, so the endpoint "starts answering" the way a recovering service
does. It prints ``relaying`` once it does.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from urllib.parse import urlsplit

__all__ = ["main"]

_CHUNK = 65536


async def _pipe(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    first: asyncio.Future[bytes] | None = None,
) -> None:
    """``first``: a read of ``reader`` already under way."""
    try:
        chunk = await first if first is not None else await reader.read(_CHUNK)
        while chunk:
            writer.write(chunk)
            await writer.drain()
            chunk = await reader.read(_CHUNK)
    except ConnectionError:
        pass
    finally:
        writer.close()


class StandIn:
    def __init__(self, upstream: str, relaying: bool) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.relaying = asyncio.Event()
        if relaying:
            self.relaying.set()

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held = bytearray()
        reading = asyncio.ensure_future(reader.read(_CHUNK))
        recovered = asyncio.ensure_future(self.relaying.wait())
        try:
            while not self.relaying.is_set():
                done, _ = await asyncio.wait(
                    {reading, recovered}, return_when=asyncio.FIRST_COMPLETED
                )
                if reading in done:
                    chunk = reading.result()
                    if not chunk:
                        writer.close()
                        return
                    held += chunk
                    reading = asyncio.ensure_future(reader.read(_CHUNK))
        finally:
            recovered.cancel()
        await self._relay(bytes(held), reading, reader, writer)

    async def _relay(
        self,
        held: bytes,
        reading: asyncio.Future[bytes],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        up_writer.write(held)
        await up_writer.drain()
        await asyncio.gather(_pipe(reader, up_writer, first=reading), _pipe(up_reader, writer))


async def _serve(upstream: str, port: int, relaying: bool) -> None:
    stand_in = StandIn(upstream, relaying)
    server = await asyncio.start_server(stand_in.connection, "127.0.0.1", port)
    loop = asyncio.get_running_loop()

    def recover() -> None:
        stand_in.relaying.set()
        print("relaying", flush=True)

    loop.add_signal_handler(signal.SIGUSR1, recover)
    stopping = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stopping.set)
    print(server.sockets[0].getsockname()[1], flush=True)
    if relaying:
        print("relaying", flush=True)
    async with server:
        await stopping.wait()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("upstream")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--relay", action="store_true")
    args = parser.parse_args(argv)
    asyncio.run(_serve(args.upstream, args.port, args.relay))


if __name__ == "__main__":
    main(sys.argv[1:])

#!/usr/bin/env python3
"""A TCP proxy on loopback that adds latency, for benchmarks of what round
trips cost (a lab's mirror across a building, PyPI across an ocean).

    delayproxy.py PORTFILE UPSTREAM_PORT DELAY_MS [LISTEN_PORT]

Listens on a free 127.0.0.1 port, or LISTEN_PORT (written to PORTFILE once
listening), and
forwards every connection to 127.0.0.1:UPSTREAM_PORT.  Every chunk of bytes,
in either direction, is delivered DELAY_MS after it arrived, in order: a
request and its answer take 2 x DELAY_MS more than without the proxy, and
a new connection's first exchange as well (the connect itself is local; the
TCP handshake across the real distance is not modelled, which favours
whoever opens more connections).  Bandwidth is not limited.  Standard
library only; runs until killed.
"""
import asyncio
import os
import sys
import time


async def pump(reader, writer, delay):
    q = asyncio.Queue()

    async def deliver():
        while True:
            due, data = await q.get()
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            if data is None:
                break
            writer.write(data)
            await writer.drain()
        try:
            writer.write_eof()
        except (OSError, RuntimeError):
            pass

    task = asyncio.ensure_future(deliver())
    try:
        while True:
            data = await reader.read(65536)
            q.put_nowait((time.monotonic() + delay, data or None))
            if not data:
                break
    except (ConnectionError, OSError):
        q.put_nowait((time.monotonic(), None))
    try:
        await task
    except (ConnectionError, OSError):
        pass


async def main():
    portfile, upstream, delay = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) / 1000

    async def handle(cr, cw):
        try:
            ur, uw = await asyncio.open_connection("127.0.0.1", upstream)
        except OSError:
            cw.close()
            return
        await asyncio.gather(pump(cr, uw, delay), pump(ur, cw, delay))
        cw.close()
        uw.close()

    listen = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    server = await asyncio.start_server(handle, "127.0.0.1", listen, backlog=512)
    with open(portfile + ".tmp", "w") as f:
        f.write(str(server.sockets[0].getsockname()[1]))
    os.replace(portfile + ".tmp", portfile)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())

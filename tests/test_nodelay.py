"""Every connection of the dashboard's server sends at once (calib.hosting.nodelay).

The bug it mends: a listening socket made as Streamlit 1.67 makes it
(``socket.socket(family=...)``, protocol number 0) gives accepted connections whose
``proto`` is 0, and asyncio turns Nagle's algorithm off only when ``proto`` is
``IPPROTO_TCP``. These tests run uvicorn in this process on such a socket and read the
option off the server side of a real connection, before and after :func:`nodelay.install`.
"""

from __future__ import annotations

import asyncio
import socket
import threading

import pytest
import uvicorn

from calib.hosting import nodelay


async def _app(scope, receive, send) -> None:  # type: ignore[no-untyped-def]
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


def _server_side_nodelay() -> list[int]:
    """TCP_NODELAY of the server's end of one kept-alive connection to a uvicorn server
    listening on a socket made as Streamlit makes its own."""
    listener = socket.socket(family=socket.AF_INET)  # as streamlit's _bind_socket: proto 0
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    assert listener.proto == 0
    server = uvicorn.Server(uvicorn.Config(_app, http="h11", lifespan="off", log_level="warning"))

    async def main() -> list[int]:
        task = asyncio.create_task(server.serve(sockets=[listener]))
        while not server.started:
            await asyncio.sleep(0.01)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        await writer.drain()
        await reader.readuntil(b"ok")
        got = [p.transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
               for p in server.server_state.connections]
        writer.close()
        server.should_exit = True
        await task
        return got

    # On a thread of its own: the browser tests' session-wide Playwright (its sync API)
    # keeps an event loop marked running on the main thread, and asyncio.run refuses to
    # start inside one (CI failed so when tests/e2e ran first).
    got: list[list[int]] = []
    runner = threading.Thread(target=lambda: got.append(asyncio.run(main())))
    try:
        runner.start()
        runner.join(timeout=30)
    finally:
        listener.close()
    assert got, "the in-process server did not answer within 30 s"
    return got[0]


@pytest.fixture
def restored():  # type: ignore[no-untyped-def]
    """uvicorn's protocol classes as they were, after the test."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    before = H11Protocol.connection_made
    yield
    H11Protocol.connection_made = before  # type: ignore[method-assign]


def test_connections_on_a_proto_zero_listener_keep_nagle_until_installed(restored) -> None:  # type: ignore[no-untyped-def]
    from uvicorn.protocols.http.h11_impl import H11Protocol

    if getattr(H11Protocol.connection_made, "_calib_nodelay", False):  # installed by another test's server
        H11Protocol.connection_made = H11Protocol.connection_made.__wrapped__  # type: ignore[attr-defined]
    assert _server_side_nodelay() == [0]  # the bug: Nagle on
    assert "H11Protocol" in nodelay.install()
    assert _server_side_nodelay() == [1]


def test_install_is_idempotent_and_set_nodelay_skips_what_is_no_tcp_socket(restored) -> None:  # type: ignore[no-untyped-def]
    from uvicorn.protocols.http.h11_impl import H11Protocol

    nodelay.install()
    wrapped = H11Protocol.connection_made
    nodelay.install()
    assert H11Protocol.connection_made is wrapped

    class Transport:
        def __init__(self, sock: socket.socket | None) -> None:
            self.sock = sock

        def get_extra_info(self, name: str) -> socket.socket | None:
            return self.sock if name == "socket" else None

    a, b = socket.socketpair(socket.AF_UNIX)  # a Unix socket: nothing to set
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        assert nodelay.set_nodelay(Transport(a)) is False
        assert nodelay.set_nodelay(Transport(None)) is False
        assert nodelay.set_nodelay(None) is False
        assert nodelay.set_nodelay(Transport(tcp)) is True
        assert tcp.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        for s in (a, b, tcp):
            s.close()

"""A TCP proxy in front of a real server, to cut the network to it at a chosen moment (a metastore outage as a
client sees it: connections reset, new ones refused) and bring it back; the server itself keeps running."""

from __future__ import annotations

import socket
import threading
from types import TracebackType


class TcpProxy:
    """Forwards ``127.0.0.1:<port>`` to ``upstream``. :meth:`cut` resets every open connection and refuses new
    ones (or, with ``after_requests``, does so once that many more client sends have been forwarded);
    :meth:`restore` serves again. ``requests`` counts client sends forwarded."""

    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self.upstream = (upstream_host, upstream_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._guard = threading.Lock()
        self._open: list[socket.socket] = []
        self._down = False
        self._cut_at: int | None = None
        self.requests = 0
        self._closed = False
        threading.Thread(target=self._accept, name="tcp-proxy-accept", daemon=True).start()

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.port}"

    def cut(self, after_requests: int = 0) -> None:
        """Reset every connection and refuse new ones now, or after ``after_requests`` more client sends."""
        with self._guard:
            if after_requests > 0:
                self._cut_at = self.requests + after_requests
                return
        self._go_down()

    def restore(self) -> None:
        """Accept and forward connections again."""
        with self._guard:
            self._down, self._cut_at = False, None

    def close(self) -> None:
        self._closed = True
        self._go_down()
        self._listener.close()

    def __enter__(self) -> TcpProxy:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def _go_down(self) -> None:
        with self._guard:
            self._down, self._cut_at = True, None
            doomed, self._open = self._open, []
        for sock in doomed:
            _reset(sock)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._guard:
                down = self._down
            if down:
                _reset(client)
                continue
            try:
                server = socket.create_connection(self.upstream, timeout=10)
                server.settimeout(None)
            except OSError:
                _reset(client)
                continue
            with self._guard:
                self._open += [client, server]
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, from_client: bool) -> None:
        while True:
            try:
                data = source.recv(65536)
            except OSError:
                data = b""
            if not data:
                _reset(sink)
                _reset(source)
                return
            if from_client:
                with self._guard:
                    self.requests += 1
                    trip = self._cut_at is not None and self.requests >= self._cut_at
                if trip:
                    self._go_down()
                    return
            try:
                sink.sendall(data)
            except OSError:
                _reset(source)
                return


def _reset(sock: socket.socket) -> None:
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass

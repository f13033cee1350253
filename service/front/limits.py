"""What the front door allows each connection and each request, read once from the environment.

Every limit is per worker process (each worker has its own event loop and its own connections);
a pod of W workers holds W times as much. Names, defaults and meanings:

SIZING_MAX_CONNECTIONS           open connections (1000). A connection past it closes the
                                 connection that has been idle longest (HTTP lets a server close
                                 an idle connection), or is answered 503 and closed when none is.
SIZING_MAX_CONNECTIONS_PER_PEER  open connections from one peer address (64), with the same rule
                                 among that peer's own connections. Behind a proxy every client is
                                 the proxy's address: raise it to what the proxy keeps open.
SIZING_HEADER_TIMEOUT_S          seconds from a request's first byte to the end of its head (10);
                                 then 408 and the connection is closed.
SIZING_BODY_TIMEOUT_S            seconds from the end of the head to the end of the body (10); then
                                 408 and the connection is closed.
SIZING_WRITE_TIMEOUT_S           seconds an answer may wait for a client that does not read it (10);
                                 then the connection is dropped.
SIZING_BODY_BUFFER_MIB           request bodies held at once, arriving, waiting for a thread or being
                                 answered (32 MiB); a body that would pass it is answered 503 with
                                 Retry-After. Requests without a body (the probes) never count.
SIZING_BODY_BUFFER_PER_PEER_MIB  the same for one peer address (8 MiB).
SIZING_ARRIVING_PER_PEER         request bodies from one peer address arriving at once (16); past it,
                                 503 with Retry-After. A body that arrives with its head does not
                                 wait, so only slow ones count.

Between two requests, and before the first, a connection may stay idle for gunicorn's
`keepalive` (5 s), then it is closed. A request line is at most 8 KiB (414), a head at most
32 KiB in 100 fields (431), a body at most 1 MiB (413, MAX_BODY_BYTES), and a chunked body's
framing and trailers at most as much again.
"""

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace

MIB = 1 << 20
# Sizing requests are small; a batch of a thousand items stays well under this. The app
# (MAX_CONTENT_LENGTH) and the front door refuse a larger body alike.
MAX_BODY_BYTES = 1 * MIB
# Settings of the worker that read requests in gunicorn's main loop (0.4.x), read no more: a
# server that started with one of them set would not do what its operator asked.
RETIRED = {
    "SIZING_ARRIVAL_S": "SIZING_HEADER_TIMEOUT_S and SIZING_BODY_TIMEOUT_S",
    "SIZING_ARRIVAL_BUFFER_MIB": "SIZING_BODY_BUFFER_MIB",
}


@dataclass(frozen=True)
class FrontLimits:
    """The front door's bounds (the module's docstring says what each does)."""

    max_connections: int = 1000
    max_connections_per_peer: int = 64
    idle_timeout_s: float = 5.0
    header_timeout_s: float = 10.0
    body_timeout_s: float = 10.0
    write_timeout_s: float = 10.0
    max_request_line_bytes: int = 8192
    max_head_bytes: int = 32768
    max_header_fields: int = 100
    max_body_bytes: int = MAX_BODY_BYTES
    body_buffer_bytes: int = 32 * MIB
    body_buffer_per_peer_bytes: int = 8 * MIB
    max_arriving_per_peer: int = 16
    # after the server closes a connection, how long its last answer may take to leave before
    # the socket is dropped
    close_grace_s: float = 5.0

    @property
    def max_message_bytes(self) -> int:
        """The most bytes one request may take on the wire: its head, its body, and as much again
        for a chunked body's framing and trailers."""
        return self.max_head_bytes + 2 * self.max_body_bytes


def env_number(environ: Mapping[str, str], name: str, default, *, integer: bool = False, zero: bool = False):
    """The number a setting of the environment holds, or `default` when it is unset or blank;
    ValueError naming it when it is not a (whole) number above zero (`zero`: zero or more)."""
    value = environ.get(name, "").strip()
    if not value:
        return default
    try:
        number = int(value) if integer else float(value)
    except ValueError:
        raise ValueError(f"{name} must be a {'whole ' if integer else ''}number, got {value!r}") from None
    in_range = number >= 0 if zero else number > 0  # False for nan
    if not (in_range and number < math.inf):
        raise ValueError(f"{name} must be {'zero or more' if zero else 'above zero'}, got {value!r}")
    return number


def from_env(environ: dict[str, str] | None = None, **given: float) -> FrontLimits:
    """The limits the environment sets, over the defaults and what the caller gives (gunicorn's
    keepalive as `idle_timeout_s`). A bad value, or a retired setting, stops the start."""
    environ = dict(os.environ) if environ is None else environ
    for name, successor in RETIRED.items():
        if environ.get(name, "").strip():
            raise ValueError(f"{name} is no longer read: set {successor} instead")
    base = replace(FrontLimits(), **given)
    return replace(
        base,
        max_connections=int(env_number(environ, "SIZING_MAX_CONNECTIONS", base.max_connections, integer=True)),
        max_connections_per_peer=int(env_number(environ, "SIZING_MAX_CONNECTIONS_PER_PEER",
                                             base.max_connections_per_peer, integer=True)),
        header_timeout_s=env_number(environ, "SIZING_HEADER_TIMEOUT_S", base.header_timeout_s),
        body_timeout_s=env_number(environ, "SIZING_BODY_TIMEOUT_S", base.body_timeout_s),
        write_timeout_s=env_number(environ, "SIZING_WRITE_TIMEOUT_S", base.write_timeout_s),
        body_buffer_bytes=int(env_number(environ, "SIZING_BODY_BUFFER_MIB", base.body_buffer_bytes / MIB) * MIB),
        body_buffer_per_peer_bytes=int(env_number(environ, "SIZING_BODY_BUFFER_PER_PEER_MIB",
                                               base.body_buffer_per_peer_bytes / MIB) * MIB),
        max_arriving_per_peer=int(env_number(environ, "SIZING_ARRIVING_PER_PEER", base.max_arriving_per_peer,
                                          integer=True)),
    )

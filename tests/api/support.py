"""What the API tests share: a POST that must answer 200, the answer's JSON, and uvicorn
serving an ASGI app in a thread of the test's process."""

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import uvicorn

SERVE_WAIT_S = 10.0  # the most uvicorn may take to start or to stop before the test fails


def ok(response):
    """The JSON of a 200 answer; the body of anything else as the failure message."""
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def post(client, path, body):
    return ok(client.post(path, json=body))


def texts(messages) -> list[str]:
    """The text of each coded message ({code, message, params}) of an answer's list."""
    return [m["message"] for m in messages]


def codes(messages) -> list[str]:
    """The code of each coded message of an answer's list."""
    return [m["code"] for m in messages]


def answer_of(result):
    """The answer a result carries once: structuredContent (--structured), else its texts: the
    summary (a problem's lead), then the rest of the answer as JSON."""
    if result.structured_content is not None:
        return result.structured_content
    texts = [part.text for part in result.content]
    rest = json.loads(texts[-1]) if texts[-1].startswith(("{", "[")) else {}
    return rest if result.is_error or len(texts) == 1 and rest else {"summary": texts[0], **rest}


@contextmanager
def uvicorn_in_thread(make_app: Callable[[int], object], http: type, **config) -> Iterator[int]:
    """`make_app(port)` served by uvicorn with the protocol class `http`, in a thread of this
    process, on a loopback socket bound here (its port is yielded); stopped, and the thread
    joined, whatever the test did."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(make_app(port), log_config=None, ws="none", http=http,
                                           timeout_graceful_shutdown=2, **config))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + SERVE_WAIT_S
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        yield port
    finally:
        server.should_exit = True
        thread.join(SERVE_WAIT_S)
        listener.close()
    assert not thread.is_alive(), "uvicorn did not stop"

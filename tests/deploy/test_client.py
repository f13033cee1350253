"""service.client against the real server on loopback; retries only where they can help."""

import email.utils
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from service.client import ProblemError, SizingClient, TransportError, retry_after

from . import server as srv


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with srv.running(tmp_path_factory.mktemp("client-server"), workers=2, threads=4) as running:
        yield SizingClient(running.base, timeout_s=10)


def test_every_operation_answers(client):
    assert client.healthz() == {"status": "ok"} and client.readyz() == {"status": "ready"}
    answer = client.estimate(model="llama-3.1-8b", hardware={"card": "rtx-4090"}, lang="zh")
    assert answer["fit"]["fits"] and "放得下" in answer["summary"]
    flat = client.estimate_get(model="llama-3.1-8b", card="rtx-4090", lang="zh")
    assert flat["memory"] == answer["memory"]
    batch = client.estimate_batch([{"model": "llama-3.1-8b", "hardware": {"card": "D-M"}}] * 3)
    assert batch["count"] == 3
    assert client.estimate_batch([{"model": "llama-3.1-8b", "hardware": {"card": "D-M"}}], csv=True).startswith('"index",')
    assert client.estimate_sweep(model="llama-3.1-8b", filters={"kind": "tier"})["count"] == 10
    assert client.memory(model={"params_billion": 7})["weights_bytes"] == 14_000_000_000
    assert client.throughput(model="llama-3.1-8b", hardware={"card": "D-M"})["bound"] == "memory"
    assert client.scaling(model={"params_billion": 7}, workload={"train_tokens": 1e12},
                          hardware={"card": "D-M", "count": 64})["run"]["compute_flops"] == 4.2e22
    assert client.cost(power_w=10_000)["electricity_cost_per_day"] == 168
    capacity = client.capacity(model="llama-3.1-8b", target={"concurrent_users": 50}, cards=["D-M", "C90"])
    assert [o["card"]["id"] for o in capacity["options"]] == ["D-M", "C90"] and capacity["best"]
    compared = dict(model="llama-3.1-8b", target={"concurrent_users": 50}, years=3,
                    options=[{"card": "h100-sxm"}, {"card": "rtx-4090", "count": 2}],
                    prices={"h100-sxm": 220_000, "rtx-4090": 14_000}, rent_per_card_hour={"h100-sxm": 15})
    answer = client.compare(**compared)
    assert answer["best"] and answer["options"][0]["purchase"]["cost_of_ownership"]["typical"] > 0
    assert client.compare(**compared, as_format="csv").startswith('"rank","option",')
    assert '<table id="options">' in client.compare(**compared, as_format="html")
    assert client.rank(line="consumer")["ranking"]
    assert client.recommend(scenario="developer")["tier"]["id"] == "W-A"
    assert client.normalize(value=800, precision="int8", sparse=True)["dense_bf16"] == 200
    assert client.troubleshoot("机器随机重启")["matches"][0]["id"] == "psu"
    assert client.cards(line="datacenter", kind="card")["count"] > 10
    assert client.card("RTX 4090")["id"] == "rtx-4090"
    assert client.models()["count"] >= 25
    assert client.model("meta-llama/Llama-3.1-8B-Instruct")["id"] == "llama-3.1-8b"
    assert client.plot_roofline(model="llama-3.1-8b", card="D-M").startswith(b"<?xml")
    assert client.plot_throughput(model="llama-3.1-8b", card="D-M").startswith(b"<?xml")
    assert client.openapi().startswith("openapi: 3.1")


def test_problems_become_typed_errors(client):
    with pytest.raises(ProblemError) as info:
        client.estimate(model="llama-3.1-8b", hardware={"card": "gtx-9999"})
    assert info.value.status == 422 and info.value.fields == ["hardware.card"]
    assert info.value.request_id
    with pytest.raises(ProblemError) as missing:
        client.card("gtx-9999")
    assert missing.value.status == 404


class Flaky(BaseHTTPRequestHandler):
    """Answers 503 twice, then 200; or always the status in the path (/429-3: 429 with
    Retry-After 3)."""

    calls = 0
    seen: list[float] = []

    def do_GET(self):
        type(self).calls += 1
        type(self).seen.append(time.monotonic())
        code, _, after = self.path.strip("/").partition("-")
        status = int(code) if code.isdigit() else (503 if type(self).calls <= 2 else 200)
        body = b'{"status": "ok"}' if status == 200 else (
            b'{"type": "about:blank", "title": "x", "status": %d, "detail": "d", "errors": []}' % status)
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if status == 200 else "application/problem+json")
        if after:
            self.send_header("Retry-After", after)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture()
def flaky():
    Flaky.calls, Flaky.seen = 0, []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Flaky)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_5xx_is_retried(flaky):
    assert SizingClient(flaky, backoff_s=0.01).healthz() == {"status": "ok"}
    assert Flaky.calls == 3


def test_4xx_is_not_retried(flaky):
    client = SizingClient(flaky, backoff_s=0.01)
    with pytest.raises(ProblemError) as info:
        client._call("GET", "/422")
    assert info.value.status == 422 and Flaky.calls == 1


def test_persistent_5xx_surfaces_after_the_retries(flaky):
    with pytest.raises(ProblemError) as info:
        SizingClient(flaky, retries=2, backoff_s=0.01)._call("GET", "/503")
    assert info.value.status == 503 and Flaky.calls == 3


def test_connection_errors_are_retried_then_raised():
    client = SizingClient(f"http://127.0.0.1:{srv.free_port()}", retries=1, backoff_s=0.01, timeout_s=1)
    with pytest.raises(TransportError):
        client.healthz()


def test_a_retry_after_is_waited_for_then_the_call_is_made_again(flaky):
    with pytest.raises(ProblemError) as info:
        SizingClient(flaky, retries=1, backoff_s=0.01)._call("GET", "/429-1")
    assert info.value.status == 429 and Flaky.calls == 2
    assert Flaky.seen[1] - Flaky.seen[0] >= 1.0


def test_a_retry_after_longer_than_the_client_waits_is_raised_at_once(flaky):
    with pytest.raises(ProblemError):
        SizingClient(flaky, max_wait_s=5)._call("GET", "/503-60")
    assert Flaky.calls == 1


@pytest.mark.parametrize(("attempt", "after", "low", "high"), [
    (0, None, 0.1, 0.2), (2, None, 0.4, 0.8), (10, None, 5.0, 10.0),  # backoff, jittered, capped
    (0, 1.0, 1.0, 1.2), (3, 1.0, 1.0, 2.6), (0, 0.0, 0.0, 0.2),       # Retry-After, and up to a backoff more
    (3, 9.5, 9.5, 10.0),                                               # never past max_wait_s
])
def test_how_long_the_client_waits_before_a_retry(attempt, after, low, high):
    client = SizingClient("http://127.0.0.1:1", backoff_s=0.2, max_wait_s=10)
    waits = {client.wait_s(attempt, after) for _ in range(200)}
    assert all(low <= w <= high for w in waits) and len(waits) > 1  # jittered: a pool does not retry in step


@pytest.mark.parametrize(("header", "seconds"), [("3", 3.0), (" 2.5 ", 2.5), ("-4", 0.0), ("soon", None), ("", None),
                                                 ("nan", None)])
def test_retry_after_as_seconds(header, seconds):
    response = requests.Response()
    response.headers["Retry-After"] = header
    assert retry_after(response) == seconds


def test_retry_after_as_an_http_date():
    response = requests.Response()
    response.headers["Retry-After"] = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 28 <= retry_after(response) <= 30

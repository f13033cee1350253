"""What a request costs follows what it did (service/limits.py): the CPU its thread spent, on top
of what it asked for; costly inputs are bounded before they cost anything; heavy requests wait a
moment for a slot, fairly between clients."""

import threading
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from service.app import create_app
from service.limits import _KEY as LIMITS
from service.limits import FairSlots
from service.security import key_id

ESTIMATE = {"model": "llama-3.1-8b", "hardware": {"card": "D-M"}}
HUGE = {"name": "huge", "params_billion": 2000, "layers": 4000, "hidden_size": 65536, "attention_heads": 512,
        "kv_heads": 8}


def app_with(**config):
    return create_app({"CACHE_SIZE": 0, **config})


def level(app, client: str) -> float:
    buckets = app.extensions[LIMITS].buckets
    with buckets._lock:
        return buckets._level(client, time.monotonic())


# --- the cost follows the CPU ------------------------------------------------------------------

def test_a_request_that_spends_more_cpu_than_it_asked_for_pays_the_difference():
    """A ranking asks for 3 x 62.5 units; with a unit of 0.01 ms of CPU, what it spent is far more
    (twice the asked units is 3.75 ms of CPU, which ranking a 4000-layer model over a line's cards
    spends many times over, however warm its caches)."""
    app = app_with(API_KEYS=("k-test-key-00000000000000000000000",), RATE_LIMIT=0.001, RATE_BURST=1e6, UNIT_CPU_MS=0.01)
    client = app.test_client()
    assert client.post("/v1/rank", json={"line": "datacenter", "model": HUGE}, headers={"X-API-Key": "k-test-key-00000000000000000000000"}).status_code == 200
    paid = 1e6 - level(app, key_id("k-test-key-00000000000000000000000"))
    assert paid > 3 * 4000 / 64 * 2  # well beyond what it asked for: its CPU time, in 0.01 ms units


def test_a_cheap_request_pays_what_it_asked_for():
    app = app_with(API_KEYS=("k-test-key-00000000000000000000000",), RATE_LIMIT=0.001, RATE_BURST=100, UNIT_CPU_MS=1000)
    client = app.test_client()
    assert client.post("/v1/memory", json={"model": HUGE}, headers={"X-API-Key": "k-test-key-00000000000000000000000"}).status_code == 200
    key = key_id("k-test-key-00000000000000000000000")
    assert level(app, key) == pytest.approx(100 - 4000 / 64, abs=0.01)  # weighed like an estimate


@pytest.mark.parametrize(("path", "body"), [
    ("/memory", {"model": HUGE}),
    ("/throughput", {"model": HUGE, "hardware": {"card": "D-M", "count": 8}}),
    ("/scaling", {"model": HUGE, "workload": {"train_tokens": 1e12}, "hardware": {"card": "D-M", "count": 64}}),
    ("/rank", {"line": "datacenter", "model": HUGE}),
    ("/recommend", {"model": HUGE}),
])
def test_every_endpoint_weighs_its_model_by_its_layers(path, body):
    response = app_with(MAX_REQUEST_COST=50).test_client().post(path, json=body)
    assert response.status_code == 413, response.get_json()
    assert "limit of 50 per request" in response.get_json()["detail"]


def test_a_flooding_key_is_refused_by_what_its_requests_cost_in_cpu():
    """One unit a second, a 20-unit burst: an unknown long name costs its CPU, so the key empties
    its bucket in a few requests instead of the hundreds a flat unit allowed."""
    app = app_with(API_KEYS=("flood-test-key-0000000000000000000", "calm-test-key-00000000000000000000"), RATE_LIMIT=1.0, RATE_BURST=20.0, UNIT_CPU_MS=0.05)
    client = app.test_client()
    statuses = [client.get("/v1/models/" + "x1" * 100, headers={"X-API-Key": "flood-test-key-0000000000000000000"}).status_code for _ in range(30)]
    assert statuses[0] == 404 and 429 in statuses and statuses.index(429) < 10
    assert client.post("/v1/estimate", json=ESTIMATE, headers={"X-API-Key": "calm-test-key-00000000000000000000"}).status_code == 200


def test_what_requests_cost_is_in_the_metrics():
    app = app_with(API_KEYS=("k-test-key-00000000000000000000000",))
    client = app.test_client()
    client.post("/v1/estimate", json=ESTIMATE, headers={"X-API-Key": "k-test-key-00000000000000000000000"})
    text = client.get("/metrics").get_data(as_text=True)
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in text_string_to_metric_families(text) for s in family.samples}
    key = key_id("k-test-key-00000000000000000000000")
    assert samples[("sizing_request_units_total", (("client", key), ("route", "/v1/estimate")))] >= 1
    assert samples[("sizing_request_cpu_seconds_total", (("route", "/v1/estimate"),))] > 0


# --- what is unbounded today is bounded ----------------------------------------------------------

@pytest.mark.parametrize("path", ["/models/", "/cards/"])
def test_a_lookup_name_longer_than_any_is_refused_without_a_search(client, path):
    started = time.thread_time()
    response = client.get(path + "a1" * 1950)
    assert response.status_code == 404 and "at most 200 characters" in response.get_json()["detail"]
    assert time.thread_time() - started < 0.1  # no closest-name search over 3,900 characters


def test_the_closest_name_search_costs_the_same_for_any_name_length(client):
    assert "closest: rtx-4090" in client.post("/v1/estimate", json={
        "model": "llama-3.1-8b", "hardware": {"card": "RTX 4099"}}).get_json()["detail"]
    assert "closest: llama-3.1-8b" in client.get("/v1/models/llama 3.1 8").get_json()["detail"]


def test_a_body_of_many_unknown_fields_gets_a_short_problem(client):
    body = {**ESTIMATE, **{f"unknown_{i}": 1 for i in range(5000)}}
    response = client.post("/v1/estimate", json=body)
    problem = response.get_json()
    assert response.status_code == 422 and len(response.data) < 5000
    assert len(problem["errors"]) == 21 and problem["errors"][-1]["message"] == "4,980 more invalid fields are not listed"
    assert problem["detail"].endswith("and 4,980 more.")
    assert problem == client.post("/v1/estimate", json=body).get_json() | {"request_id": problem["request_id"]}


# --- heavy requests: a bounded wait, fair between clients ------------------------------------------

def waiting(slots: FairSlots, client: str, results: list) -> threading.Thread:
    thread = threading.Thread(target=lambda: results.append((client, slots.acquire(client))))
    thread.start()
    deadline = time.monotonic() + 10
    while not any(w.client == client for w in slots._waiting) and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.001)
    return thread


def test_a_heavy_request_waits_for_a_slot_and_takes_it_when_one_frees():
    slots, results = FairSlots(1, queue=2, wait_s=10), []
    assert slots.acquire("a")
    thread = waiting(slots, "b", results)
    slots.release()
    thread.join(10)
    assert results == [("b", True)]


def test_the_wait_is_bounded():
    slots = FairSlots(1, queue=2, wait_s=0.05)
    assert slots.acquire("a")
    started = time.monotonic()
    assert not slots.acquire("b") and time.monotonic() - started >= 0.05
    slots.release()
    assert slots.acquire("b")  # the slot came back whole


def test_one_waiting_place_per_client_and_a_bounded_queue():
    slots, results = FairSlots(1, queue=2, wait_s=10), []
    assert slots.acquire("a")
    first = waiting(slots, "a", results)
    assert not slots.acquire("a")  # a client's second waiting request is refused at once
    second = waiting(slots, "b", results)
    assert not slots.acquire("c")  # the queue is full
    slots.release()
    slots.release()
    first.join(10)
    second.join(10)
    assert sorted(results) == [("a", True), ("b", True)]


def test_a_freed_slot_goes_to_the_client_served_least_recently():
    slots, results = FairSlots(1, queue=2, wait_s=10), []
    assert slots.acquire("greedy")
    threads = [waiting(slots, "greedy", results), waiting(slots, "calm", results)]  # greedy asked first
    slots.release()
    threads[1].join(10)
    assert results == [("calm", True)]
    slots.release()
    threads[0].join(10)
    assert results == [("calm", True), ("greedy", True)]


def test_a_worker_with_no_queue_refuses_at_once():
    slots = FairSlots(1, queue=0, wait_s=10)
    assert slots.acquire("a")
    started = time.monotonic()
    assert not slots.acquire("b") and time.monotonic() - started < 1


@pytest.mark.parametrize(("threads", "slots", "queue"), [(4, 1, 2), (8, 1, 6), (2, 1, 0), (1, 1, 0), (4, 2, 1)])
def test_the_queue_leaves_one_thread_for_light_requests(monkeypatch, threads, slots, queue):
    monkeypatch.setenv("THREADS", str(threads))
    monkeypatch.setenv("SIZING_HEAVY_CONCURRENCY", str(slots))
    assert create_app().extensions[LIMITS].slots["batch"].queue == queue


def test_a_request_as_costly_as_a_batch_takes_a_batch_slot_whatever_its_endpoint():
    app = app_with(HEAVY_WAIT_S=0.05)
    client = app.test_client()
    slots = app.extensions[LIMITS].slots["batch"]
    assert slots.acquire("a batch elsewhere")
    try:
        busy = client.post("/v1/rank", json={"line": "datacenter", "model": HUGE})  # 3 x 62.5 units
        assert busy.status_code == 503 and busy.headers["Retry-After"] == "1"
        assert client.post("/v1/rank", json={"line": "datacenter", "model": "llama-3.1-8b"}).status_code == 200
    finally:
        slots.release()
    assert client.post("/v1/rank", json={"line": "datacenter", "model": HUGE}).status_code == 200
    assert slots.acquire("next") and slots._free == 0  # the costly request gave its slot back
    slots.release()

"""Optional API keys (constant-time, 401 problem+json), probes and metrics configurable, CORS."""

import pytest

from service.app import create_app

KEYS = ("k-alpha-123-test-key-0000000000000", "k-beta-456-test-key-00000000000000")
BODY = {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}}


@pytest.fixture()
def locked():
    return create_app({"TESTING": True, "API_KEYS": KEYS}).test_client()


def test_without_keys_configured_the_api_is_open(client):
    assert client.post("/v1/estimate", json=BODY).status_code == 200


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"X-API-Key": "k-alpha-123-test-key-000000000000"},
                                     {"Authorization": "Basic azphbHBoYS0xMjM="}])
def test_a_missing_or_wrong_key_is_a_401_problem(locked, headers):
    response = locked.post("/estimate", json=BODY, headers=headers)
    assert response.status_code == 401
    assert response.mimetype == "application/problem+json"
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert response.get_json()["request_id"] == response.headers["X-Request-ID"]


@pytest.mark.parametrize("headers", [{"Authorization": "Bearer k-alpha-123-test-key-0000000000000"}, {"authorization": "bearer k-beta-456-test-key-00000000000000"},
                                     {"X-API-Key": "k-beta-456-test-key-00000000000000"}])
def test_any_configured_key_is_accepted(locked, headers):
    assert locked.post("/estimate", json=BODY, headers=headers).status_code == 200


def test_probes_and_metrics_stay_open_unless_configured(locked):
    for path in ("/healthz", "/readyz", "/metrics"):
        assert locked.get(path).status_code == 200, path
    strict = create_app({"TESTING": True, "API_KEYS": KEYS, "AUTH_PROBES": True, "AUTH_METRICS": True})
    for path in ("/healthz", "/readyz", "/metrics"):
        assert strict.test_client().get(path).status_code == 401, path


def test_keys_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("SIZING_API_KEYS", " one-test-key-000000000000000000000 , two-test-key-000000000000000000000 ")
    monkeypatch.setenv("SIZING_AUTH_METRICS", "true")
    client = create_app({"TESTING": True}).test_client()
    assert client.get("/v1/cards", headers={"X-API-Key": "two-test-key-000000000000000000000"}).status_code == 200
    assert client.get("/v1/cards").status_code == 401
    assert client.get("/metrics").status_code == 401


def test_cors_allows_listed_origins_only():
    client = create_app({"TESTING": True, "CORS_ORIGINS": ("https://dash.example",)}).test_client()
    allowed = client.post("/v1/cost", json={"power_w": 100}, headers={"Origin": "https://dash.example"})
    assert allowed.headers["Access-Control-Allow-Origin"] == "https://dash.example"
    assert "Origin" in allowed.headers["Vary"]
    other = client.post("/v1/cost", json={"power_w": 100}, headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in other.headers


def test_cors_preflight_needs_no_key():
    client = create_app({"TESTING": True, "API_KEYS": KEYS, "CORS_ORIGINS": ("https://dash.example",)}).test_client()
    response = client.options("/estimate", headers={
        "Origin": "https://dash.example", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type, authorization"})
    assert response.status_code == 200
    assert "POST" in response.headers["Access-Control-Allow-Methods"]
    assert "Authorization" in response.headers["Access-Control-Allow-Headers"]


@pytest.mark.parametrize(("given", "kept"), [("abc-123", True), ("a" * 129, False), ("bad id", False),
                                              ("<script>", False)])
def test_request_ids_are_taken_only_when_sane(client, given, kept):
    response = client.get("/healthz", headers={"X-Request-ID": given})
    assert (response.headers["X-Request-ID"] == given) is kept


COMPARE = {"model": "llama-3.1-8b", "target": {"concurrent_users": 4}, "options": [{"card": "D-M"}],
           "prices": {"D-M": 1000}}


@pytest.mark.parametrize(("method", "path", "kwargs", "mimetype", "policy"), [
    ("POST", "/compare", {"json": COMPARE, "headers": {"Accept": "text/html"}}, "text/html", "default-src 'none'"),
    ("GET", "/plots/roofline.svg", {"query_string": {"model": "llama-3.1-8b", "card": "D-M"}}, "image/svg+xml",
     "default-src 'none'"),
    ("GET", "/docs", {}, "text/html", "default-src 'self'; script-src 'self' 'unsafe-inline'"),
])
def test_pages_and_pictures_say_what_they_may_load(client, method, path, kwargs, mimetype, policy):
    for _ in range(2):  # the second from the cache where there is one
        response = client.open(path, method=method, **kwargs)
        assert response.status_code == 200 and response.mimetype == mimetype
        csp = response.headers["Content-Security-Policy"]
        assert csp.startswith(policy) and "frame-ancestors 'none'" in csp and "base-uri 'none'" in csp
        assert response.headers["X-Content-Type-Options"] == "nosniff"


def test_no_answer_may_be_sniffed_into_something_else(client):
    for response in (client.post("/v1/estimate", json=BODY), client.get("/healthz"), client.get("/nowhere"),
                     client.get("/openapi.yaml")):
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert "Content-Security-Policy" not in response.headers  # data, not pages


@pytest.mark.parametrize("keys", ["short-key", "a" * 31 + ",b" * 40])
def test_a_key_shorter_than_32_characters_stops_the_start_and_is_not_repeated(monkeypatch, keys):
    monkeypatch.setenv("SIZING_API_KEYS", keys)
    with pytest.raises(ValueError, match="at least 32") as refused:
        create_app({"TESTING": True})
    assert "short-key" not in str(refused.value) and "a" * 31 not in str(refused.value)
    with pytest.raises(ValueError, match="SIZING_API_KEYS holds a key of 9 characters"):
        create_app({"TESTING": True, "API_KEYS": ("short-key",)})


def test_a_scrapers_key_opens_metrics_and_nothing_else():
    scraper = "scraper-key-" + "0" * 24
    client = create_app({"TESTING": True, "API_KEYS": KEYS, "METRICS_KEYS": (scraper,),
                         "AUTH_METRICS": True}).test_client()
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers={"Authorization": f"Bearer {scraper}"}).status_code == 200
    assert client.get("/metrics", headers={"X-API-Key": KEYS[0]}).status_code == 200
    assert client.post("/v1/estimate", json=BODY, headers={"X-API-Key": scraper}).status_code == 401
    # an open API with a closed /metrics
    open_api = create_app({"TESTING": True, "METRICS_KEYS": (scraper,), "AUTH_METRICS": True}).test_client()
    assert open_api.post("/v1/estimate", json=BODY).status_code == 200
    assert open_api.get("/metrics").status_code == 401


def test_refused_keys_are_charged_to_their_address_and_a_valid_key_never_is():
    import time

    from service.security import REFUSALS_BURST, REFUSALS_PER_S

    client = create_app({"TESTING": True, "API_KEYS": KEYS}).test_client()
    started = time.monotonic()
    guesses = [client.get("/v1/cards", headers={"X-API-Key": f"guess-{i}"}) for i in range(int(REFUSALS_BURST) + 10)]
    refilled = (time.monotonic() - started) * REFUSALS_PER_S  # what the bucket earned meanwhile
    statuses = [g.status_code for g in guesses]
    assert statuses[:int(REFUSALS_BURST)] == [401] * int(REFUSALS_BURST) and set(statuses) == {401, 429}
    assert statuses.count(401) <= REFUSALS_BURST + 1 + refilled
    refused = next(g for g in guesses if g.status_code == 429)
    assert refused.mimetype == "application/problem+json" and int(refused.headers["Retry-After"]) >= 1
    assert "without a valid API key" in refused.get_json()["detail"]
    # the same address with a valid key is served; another address is still told 401
    assert client.get("/v1/cards", headers={"X-API-Key": KEYS[1]}).status_code == 200
    other = client.get("/v1/cards", environ_base={"REMOTE_ADDR": "10.9.8.7"})
    assert other.status_code == 401


@pytest.mark.parametrize(("method", "path", "body"), [
    ("post", "/v1/estimate", BODY), ("post", "/estimate", BODY), ("get", "/v1/cards?limit=1", None),
    ("post", "/v1/compare", {"model": "llama-3.1-8b", "target": {"concurrent_users": 4}, "options": [{"card": "l4"}]}),
    ("post", "/v1/estimate", {"model": "nope"})])
def test_negotiated_answers_say_what_they_vary_on_and_are_private(client, method, path, body):
    response = getattr(client, method)(path, json=body)
    assert {"Accept", "Accept-Language"} <= set(response.vary) and response.cache_control.private
    for plain in ("/healthz", "/openapi.yaml"):
        assert "Accept-Language" not in client.get(plain).vary

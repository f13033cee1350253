"""The answer cache: the same request gets the same bytes; anything that changes the answer,
or whether there is one, is part of the key."""

import json

from service.app import create_app

BODY = json.dumps({"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}})


def post(client, body=BODY, content_type="application/json", **headers):
    return client.post("/v1/estimate", data=body, content_type=content_type, headers=headers)


def test_the_same_question_gets_the_same_bytes():
    client = create_app({"TESTING": True, "CACHE_SIZE": 8}).test_client()
    first, again = post(client), post(client)
    assert first.status_code == again.status_code == 200
    assert first.get_data() == again.get_data()


def test_a_kept_answer_is_not_served_to_the_same_bytes_sent_as_text():
    client = create_app({"TESTING": True, "CACHE_SIZE": 8}).test_client()
    assert post(client).status_code == 200
    response = post(client, content_type="text/plain")
    assert response.status_code == 415 and response.mimetype == "application/problem+json"


def test_the_language_asked_for_is_part_of_the_key():
    client = create_app({"TESTING": True, "CACHE_SIZE": 8}).test_client()
    english = post(client, **{"Accept-Language": "en"}).get_json()["summary"]
    chinese = post(client, **{"Accept-Language": "zh-CN"}).get_json()["summary"]
    assert english != chinese and "显存" in chinese


def test_the_cache_keeps_at_most_its_size():
    app = create_app({"TESTING": True, "CACHE_SIZE": 2})
    client = app.test_client()
    for tokens in (1000, 2000, 3000):
        body = json.dumps({**json.loads(BODY), "workload": {"context_tokens": tokens}})
        assert post(client, body).status_code == 200
    assert len(app.extensions["sizing.cache"]._items) == 2


def test_capacity_and_compare_answer_again_from_the_cache_in_each_media_type_and_field_set(monkeypatch):
    """/capacity and /compare compute once per distinct request: the same body, Accept and fields=
    get the kept bytes without computing; another media type or field set is its own answer."""
    from service.api import compare as compare_view
    from service.sizing import questions

    app = create_app({"TESTING": True, "CACHE_SIZE": 16})
    client = app.test_client()
    calls = {"capacity": 0, "compare": 0}
    capacity, compare = questions.capacity, compare_view.domain.compare

    def counted(name, real):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return real(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(questions, "capacity", counted("capacity", capacity))
    monkeypatch.setattr(compare_view.domain, "compare", counted("compare", compare))
    asked = {"model": "llama-3.1-8b", "target": {"concurrent_users": 4}}
    for _ in range(2):
        first = client.post("/v1/capacity", json={**asked, "cards": ["l4", "rtx-4090"]})
        sparse = client.post("/v1/capacity?fields=summary", json={**asked, "cards": ["l4", "rtx-4090"]})
        json_answer = client.post("/v1/compare", json={**asked, "options": [{"card": "l4"}]})
        csv_answer = client.post("/v1/compare", json={**asked, "options": [{"card": "l4"}]},
                                 headers={"Accept": "text/csv"})
        assert {r.status_code for r in (first, sparse, json_answer, csv_answer)} == {200}
        assert set(sparse.get_json()) == {"summary"} and csv_answer.mimetype == "text/csv"
    assert calls == {"capacity": 2, "compare": 2}


def test_the_cache_keeps_at_most_its_bytes_and_never_one_answer_larger_than_them():
    """Capacity over the catalog is about 370 KB: counted by entries alone, 1024 of them would hold
    380 MB a worker. An answer weighs its body (at least the budget's share of one entry)."""
    from service.api.cache import ResponseCache

    cache = ResponseCache(size=100, budget_bytes=10_000)
    for i in range(50):
        cache.put(i, (b"x" * 1_000, "application/json", None))
    assert sum(len(body) for body, _, _ in cache._items.values()) <= 10_000 and len(cache._items) == 10
    cache.put("big", (b"x" * 20_000, "application/json", None))
    assert cache.get("big") is None and cache.get(49) is not None
    small = ResponseCache(size=4, budget_bytes=10_000)
    for i in range(10):
        small.put(i, (b"{}", "application/json", None))
    assert len(small._items) == 4  # the count still bounds small answers

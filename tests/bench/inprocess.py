"""In-process costs beside the HTTP benchmark: one new question (whole, without its
alternatives, sparse), one trivial request, and a 1000-item batch of new questions against
llm-analysis 0.2.2 on the same model and card, alternating in one run so both see the same
machine.

llm-analysis lives in its own virtual environment (LLM_ANALYSIS_PYTHON, made by `make bench`:
its pinned transformers must not enter the service's); it answers one inference estimate per
`infer()` call, with its logging disabled (it logs INFO lines to stderr as it ships, which
would measure its logging, not its arithmetic). The same question as the peer's is a batch
whose `fields=` name what its estimate answers: memory, fit and card count, decode tokens/s
per stream and time to first token, for a prompt of its seq_len and 128 tokens generated.
"""

import json
import os
import statistics
import subprocess
import time

MODEL, CARD = "llama-2-7b", "a100-80gb-sxm"
LLM_ANALYSIS = ("NousResearch_Llama-2-7b-hf", "a100-sxm-80gb")  # the same model and card, in its names
# One llm-analysis round per line read: 1000 inference estimates at distinct prompt lengths.
_PEER = f"""
import logging, sys, time
from llm_analysis.analysis import infer
logging.disable(logging.CRITICAL)
n = 0
for line in sys.stdin:
    start = time.perf_counter()
    for i in range(1000):
        n += 1
        infer(model_name={LLM_ANALYSIS[0]!r}, gpu_name={LLM_ANALYSIS[1]!r}, seq_len=1000 + n % 3000,
              num_tokens_to_generate=128, batch_size_per_gpu=1)
    print((time.perf_counter() - start) / 1000 * 1e3, flush=True)
"""


# What llm-analysis's inference estimate answers, as the service's fields.
PEER_FIELDS = ("memory.total_bytes,fit.fits,fit.cards_needed,throughput.decode_tokens_per_s_expected,"
               "throughput.time_to_first_token_s")
# Every part of an estimate but its alternatives.
WITHOUT_ALTERNATIVES = ("model,card,mode,precision,memory,fit,parallelism,throughput,training,energy,host,"
                        "ownership,capacity,lang,summary,assumptions,warnings")


def _app():
    from .floor import bench_app  # the floor view (/bench/echo) beside the service's routes

    return bench_app({"CACHE_SIZE": 0}).test_client()


def _per_request_ms(call, n: int) -> float:
    start = time.perf_counter()
    for i in range(n):
        response = call(i)
        assert response.status_code == 200, response.get_json()
    return (time.perf_counter() - start) / n * 1e3


def single_requests(n: int = 200, rounds: int = 5) -> dict:
    """ms per request in process, best of `rounds` alternating rounds: a new estimate question
    whole, the same without its alternatives, a sparse one, and the floor."""
    client = _app()
    body = {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}}
    for i in range(50):  # warm
        client.post("/v1/estimate", json={**body, "workload": {"context_tokens": 500 + i}})
    asks = {"estimate_ms": "/v1/estimate", "without_alternatives_ms": "/v1/estimate?fields=" + WITHOUT_ALTERNATIVES,
            "sparse_ms": "/v1/estimate?fields=summary,fit.fits,fit.cards_needed"}
    best = dict.fromkeys([*asks, "trivial_ms"], float("inf"))
    offset = 1000
    for _ in range(rounds):
        for key, path in asks.items():
            best[key] = min(best[key], _per_request_ms(lambda i, path=path, offset=offset: client.post(
                path, json={**body, "workload": {"context_tokens": offset + i}}), n))
            offset += n
        best["trivial_ms"] = min(best["trivial_ms"], _per_request_ms(
            lambda i: client.post("/bench/echo", json=body), n))
    return best


def _batch_item_ms(client, items: list[dict], fields: str | None) -> float:
    start = time.perf_counter()
    response = client.post("/v1/estimate/batch" + (f"?fields={fields}" if fields else ""), json={"items": items})
    elapsed = time.perf_counter() - start
    assert response.status_code == 200 and all(item["ok"] for item in response.get_json()["items"])
    return elapsed / len(items) * 1e3


def batch_vs_peer(python: str | None, rounds: int = 5) -> dict:
    """ms per item of a 1000-item batch of new questions, whole and asking llm-analysis's
    figures, and llm-analysis's ms per estimate (its logging off), alternating round by round;
    medians. Without llm-analysis, only the batches."""
    client = _app()
    peer = None
    if python:
        peer = subprocess.Popen([python, "-c", _PEER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)
    ours, same, theirs = [], [], []
    n = 0
    try:
        for _ in range(rounds):
            items = []
            for _ in range(1000):  # the peer's questions: a prompt of seq_len, 128 tokens generated
                n += 1
                items.append({"model": MODEL, "hardware": {"card": CARD},
                              "workload": {"prompt_tokens": 1000 + n % 3000, "output_tokens": 128}})
            ours.append(_batch_item_ms(client, items, None))
            same.append(_batch_item_ms(client, items, PEER_FIELDS))
            if peer is not None:
                peer.stdin.write("go\n")
                peer.stdin.flush()
                theirs.append(float(peer.stdout.readline()))
    finally:
        if peer is not None:
            peer.stdin.close()
            peer.wait(timeout=60)
    return {"batch_item_ms": statistics.median(ours), "batch_peer_fields_item_ms": statistics.median(same),
            "peer_ms": statistics.median(theirs) if theirs else None}


if __name__ == "__main__":
    print(json.dumps({**single_requests(), **batch_vs_peer(os.environ.get("LLM_ANALYSIS_PYTHON"))}, indent=1))

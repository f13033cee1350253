"""In-process costs beside the HTTP benchmark: one new question, one trivial request, and a
1000-item batch of new questions against llm-analysis 0.2.2 on the same model and card,
alternating in one run so both see the same machine.

llm-analysis lives in its own virtual environment (LLM_ANALYSIS_PYTHON, made by `make bench`:
its pinned transformers must not enter the service's); it answers one inference estimate per
`infer()` call, with its defaults (INFO logging, as it ships).
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
import sys, time
from llm_analysis.analysis import infer
n = 0
for line in sys.stdin:
    start = time.perf_counter()
    for i in range(1000):
        n += 1
        infer(model_name={LLM_ANALYSIS[0]!r}, gpu_name={LLM_ANALYSIS[1]!r}, seq_len=1000 + n % 3000,
              num_tokens_to_generate=128, batch_size_per_gpu=1)
    print((time.perf_counter() - start) / 1000 * 1e3, flush=True)
"""


def _app():
    from .floor import bench_app  # the floor view (/bench/echo) beside the service's routes

    return bench_app({"CACHE_SIZE": 0}).test_client()


def _per_request_ms(call, n: int) -> float:
    start = time.perf_counter()
    for i in range(n):
        call(i)
    return (time.perf_counter() - start) / n * 1e3


def single_requests(n: int = 400) -> dict:
    """ms per request in process: a new estimate question, a sparse one, and the floor."""
    client = _app()
    body = {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}}
    for i in range(50):  # warm
        client.post("/v1/estimate", json={**body, "workload": {"context_tokens": 500 + i}})
    return {
        "estimate_ms": _per_request_ms(lambda i: client.post(
            "/v1/estimate", json={**body, "workload": {"context_tokens": 1000 + i}}), n),
        "sparse_ms": _per_request_ms(lambda i: client.post(
            "/v1/estimate?fields=summary,fit.fits,fit.cards_needed", json={**body, "workload": {"context_tokens": 5000 + i}}), n),
        "trivial_ms": _per_request_ms(lambda i: client.post("/bench/echo", json=body), n),
    }


def batch_vs_peer(python: str | None, rounds: int = 5) -> dict:
    """ms per item of a 1000-item batch of new questions, and llm-analysis's ms per estimate,
    alternating round by round; medians. Without llm-analysis, only the batch."""
    client = _app()
    peer = None
    if python:
        peer = subprocess.Popen([python, "-c", _PEER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)
    ours, theirs = [], []
    offset = 0
    try:
        for _ in range(rounds):
            items = [{"model": MODEL, "hardware": {"card": CARD}, "workload": {"context_tokens": 1000 + offset + i}}
                     for i in range(1000)]
            offset += 1000
            start = time.perf_counter()
            response = client.post("/v1/estimate/batch", json={"items": items})
            elapsed = time.perf_counter() - start
            assert response.status_code == 200 and all(item["ok"] for item in response.get_json()["items"])
            ours.append(elapsed / 1000 * 1e3)
            if peer is not None:
                peer.stdin.write("go\n")
                peer.stdin.flush()
                theirs.append(float(peer.stdout.readline()))
    finally:
        if peer is not None:
            peer.stdin.close()
            peer.wait(timeout=60)
    return {"batch_item_ms": statistics.median(ours),
            "peer_ms": statistics.median(theirs) if theirs else None}


if __name__ == "__main__":
    print(json.dumps({**single_requests(), **batch_vs_peer(os.environ.get("LLM_ANALYSIS_PYTHON"))}, indent=1))

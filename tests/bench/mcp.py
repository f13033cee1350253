"""What the MCP layer adds to a question: the same new-ish estimate asked N times through POST
/estimate and through the estimate tool, in process and over HTTP beside a running service.

    python -m tests.bench.mcp [--calls 200] [--url http://127.0.0.1:8000]

With --url, the MCP server is started over streamable HTTP in front of that service (as the pod
runs it) and compared with posting to the service directly. Prints medians and p90 in ms.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

import anyio
import requests
from mcp import Client

from service.app import create_app
from service.mcp_server import InProcess, build_server

QUESTION = {"model": "Llama 3.1 70B", "hardware": {"card": "RTX 4090", "count": 2}, "workload": {"precision": "int4"}}


def question(i: int) -> dict:
    # a new context length each call, so the answer cache does not answer for the domain
    return {**QUESTION, "workload": {**QUESTION["workload"], "context_tokens": 1024 + i}}


def report(name: str, seconds: list[float]) -> None:
    ms = sorted(s * 1e3 for s in seconds)
    print(f"{name:<34} median {statistics.median(ms):6.2f} ms   p90 {ms[int(len(ms) * 0.9)]:6.2f} ms")


async def tool_calls(target, calls: int, offset: int) -> list[float]:
    times = []
    async with Client(target) as client:
        for i in range(calls):
            start = time.perf_counter()
            result = await client.call_tool("estimate", question(offset + i))
            times.append(time.perf_counter() - start)
            assert not result.is_error, result.content[0].text
    return times


def in_process(calls: int) -> None:
    app = create_app()
    client = app.test_client()
    times = []
    for i in range(calls):
        start = time.perf_counter()
        assert client.post("/v1/estimate", json=question(i)).status_code == 200
        times.append(time.perf_counter() - start)
    report("POST /estimate, in process", times)
    report("estimate tool, in process", anyio.run(tool_calls, build_server(InProcess(app)), calls, calls))


def over_http(calls: int, url: str) -> None:
    session = requests.Session()
    times = []
    for i in range(calls):
        start = time.perf_counter()
        assert session.post(f"{url}/v1/estimate", json=question(10 * calls + i), timeout=30).status_code == 200
        times.append(time.perf_counter() - start)
    report("POST /estimate over HTTP", times)
    port = "8931"
    proc = subprocess.Popen([sys.executable, "-m", "service.mcp_server", "--http", "--port", port],
                            env={**os.environ, "SIZING_URL": url})
    try:
        for _ in range(300):
            try:
                if requests.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except requests.ConnectionError:
                time.sleep(0.1)
        report("estimate tool over HTTP, beside it", anyio.run(tool_calls, f"http://127.0.0.1:{port}/mcp", calls,
                                                               20 * calls))
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--url", help="a running service to put the MCP server in front of")
    args = parser.parse_args()
    in_process(args.calls)
    if args.url:
        over_http(args.calls, args.url.rstrip("/"))


if __name__ == "__main__":
    main()

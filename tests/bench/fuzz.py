"""`make fuzz`: schemathesis against the running server (gunicorn on loopback) with many more
examples than the in-process contract test. Exits non-zero on any failure.

Every check runs except positive_data_acceptance: a schema-valid body may still name an
unknown card or model, which the spec documents as a 422. Invalid data may also be refused
with 413 (a body or batch over the limit) or 414 (a request line over gunicorn's limit),
both problem+json. The server runs with four heavy-request slots per worker (one per thread),
so that a batch meeting another is answered rather than refused with 503.
"""

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from .run import free_port, start_server, stop_server

CONFIG = """[checks.negative_data_rejection]
expected-statuses = [400, 401, 403, 404, 405, 406, 409, 413, 414, 415, 422, 428, 429]
"""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-examples", type=int, default=300)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    port = free_port()
    log = Path(tempfile.mkdtemp()) / "server.log"
    # Fuzzing checks answers, not load: with two fuzzing workers a batch may meet another on one
    # server worker, and the heavy-request slot's 503 would read as a server error.
    proc = start_server(port, 2, 4, log, SIZING_HEAVY_CONCURRENCY="4")
    config = Path(tempfile.mkdtemp()) / "schemathesis.toml"
    config.write_text(CONFIG)
    try:
        command = [str(Path(sys.executable).with_name("schemathesis")), "--config-file", str(config), "run",
                   f"http://127.0.0.1:{port}/openapi.yaml", "--max-examples", str(args.max_examples),
                   "--exclude-checks", "positive_data_acceptance", "--workers", str(args.workers),
                   "--phases", "examples,coverage,fuzzing"]
        print(" ".join(command), flush=True)
        return subprocess.run(command).returncode
    finally:
        stop_server(proc)


if __name__ == "__main__":
    sys.exit(main())

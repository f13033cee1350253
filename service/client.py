"""A Python client for the sizing service, on requests.

    from service.client import SizingClient, ProblemError
    client = SizingClient("http://127.0.0.1:8000", api_key=None, timeout_s=10)
    answer = client.estimate(model="llama-3.1-70b", hardware={"card": "h100-sxm"})

Every method returns the decoded JSON answer (str for YAML, CSV and HTML, bytes for SVG). Errors the
service reports as problem+json raise ProblemError. 5xx answers, 429 (a spent rate limit) and
connection errors are retried: after the Retry-After the service sends (429, and the 503 of a
busy batch slot), else with exponential backoff, both with random jitter so that a pool of
threads does not come back in step, and never longer than `max_wait_s` at a time (a longer
Retry-After is raised at once). Other 4xx never are: they would only fail again.
"""

import email.utils
import math
import random
import time
from typing import Any

import requests

Json = dict[str, Any]
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class SizingClientError(Exception):
    """Base class of the client's errors."""


class ProblemError(SizingClientError):
    """The service answered with RFC 9457 problem details."""

    def __init__(self, status: int, title: str, detail: str, errors: list[Json],
                 request_id: str | None) -> None:
        super().__init__(f"{status} {title}: {detail}")
        self.status, self.title, self.detail = status, title, detail
        self.errors, self.request_id = errors, request_id

    @property
    def fields(self) -> list[str]:
        return [e.get("field", "") for e in self.errors]


class TransportError(SizingClientError):
    """The service could not be reached, or kept failing, after the retries."""


class SizingClient:
    """Typed calls to each operation of openapi.yaml."""

    def __init__(self, base_url: str, *, api_key: str | None = None, timeout_s: float = 10.0,
                 retries: int = 3, backoff_s: float = 0.2, max_wait_s: float = 10.0,
                 session: requests.Session | None = None):
        self.base_url = base_url.rstrip("/")
        self.timeout_s, self.retries, self.backoff_s, self.max_wait_s = timeout_s, retries, backoff_s, max_wait_s
        self.session = session or requests.Session()
        if api_key:
            self.session.headers["Authorization"] = f"Bearer {api_key}"

    # --- the whole picture ---------------------------------------------------------------

    def estimate(self, *, model: str | Json, hardware: Json, workload: Json | None = None,
                 energy: Json | None = None, lang: str | None = None, **extra: Any) -> Json:
        return self._post("/v1/estimate", _body(model=model, hardware=hardware, workload=workload,
                                             energy=energy, lang=lang, **extra))

    def estimate_get(self, *, model: str, card: str, count: int | None = None, **params: Any) -> Json:
        return self._call("GET", "/v1/estimate", params=_body(model=model, card=card, count=count, **params))

    def estimate_batch(self, items: list[Json], *, csv: bool = False) -> Json | str:
        return self._post("/v1/estimate/batch", {"items": items}, csv=csv)

    def estimate_sweep(self, *, model: str | Json, workload: Json | None = None,
                       filters: Json | None = None, csv: bool = False, **extra: Any) -> Json | str:
        return self._post("/v1/estimate/sweep", _body(model=model, workload=workload, filters=filters,
                                                   **extra), csv=csv)

    # --- one question each --------------------------------------------------------------

    def memory(self, *, model: str | Json, workload: Json | None = None,
               hardware: Json | None = None) -> Json:
        return self._post("/v1/memory", _body(model=model, workload=workload, hardware=hardware))

    def throughput(self, *, model: str | Json, hardware: Json, workload: Json | None = None) -> Json:
        return self._post("/v1/throughput", _body(model=model, workload=workload, hardware=hardware))

    def scaling(self, *, model: str | Json, workload: Json, hardware: Json,
                deadline_days: float | None = None) -> Json:
        return self._post("/v1/scaling", _body(model=model, workload=workload, hardware=hardware,
                                            deadline_days=deadline_days))

    def capacity(self, *, model: str | Json, target: Json, workload: Json | None = None,
                 cards: list[str] | None = None, filters: Json | None = None, **extra: Any) -> Json:
        """The cards (and machines) each card type needs to meet a serving target."""
        return self._post("/v1/capacity", _body(model=model, target=target, workload=workload,
                                             cards=cards, filters=filters, **extra))

    def compare(self, *, model: str | Json, options: list[Json] | Json, target: Json | None = None,
                workload: Json | None = None, years: float | None = None, prices: dict[str, float] | None = None,
                rent_per_card_hour: dict[str, float] | None = None, energy: Json | None = None,
                as_format: str = "json", **extra: Any) -> Json | str:
        """Hardware options side by side, bought or rented: the JSON answer, or with `as_format`
        "csv" the options table, "html" the printable report (both as text)."""
        body = _body(model=model, options=options, target=target, workload=workload, years=years, prices=prices,
                     rent_per_card_hour=rent_per_card_hour, energy=energy, **extra)
        accept = {"json": None, "csv": "text/csv", "html": "text/html"}[as_format]
        if accept is None:
            return self._post("/v1/compare", body)
        return self._call("POST", "/v1/compare", json=body, headers={"Accept": accept}, raw=True).decode("utf-8")

    def cost(self, *, power_w: float | None = None, hardware: Json | None = None,
             energy: Json | None = None, **extra: Any) -> Json:
        return self._post("/v1/cost", _body(power_w=power_w, hardware=hardware, energy=energy, **extra))

    def rank(self, **body: Any) -> Json:
        return self._post("/v1/rank", _body(**body))

    def recommend(self, **body: Any) -> Json:
        return self._post("/v1/recommend", _body(**body))

    def normalize(self, *, value: float, precision: str, sparse: bool = False,
                  accumulate: str | None = None) -> Json:
        return self._post("/v1/normalize", _body(value=value, precision=precision, sparse=sparse,
                                              accumulate=accumulate))

    def troubleshoot(self, q: str, *, lang: str | None = None, line: str | None = None) -> Json:
        return self._call("GET", "/v1/troubleshoot", params=_body(q=q, lang=lang, line=line))

    # --- catalog, pictures and operations -----------------------------------------------

    def cards(self, **filters: Any) -> Json:
        return self._call("GET", "/v1/cards", params=_body(**filters))

    def card(self, card_id: str) -> Json:
        return self._call("GET", f"/v1/cards/{requests.utils.quote(card_id, safe='')}")

    def models(self) -> Json:
        return self._call("GET", "/v1/models")

    def model(self, model_id: str) -> Json:
        return self._call("GET", f"/v1/models/{requests.utils.quote(model_id, safe='/')}")

    def plot_roofline(self, **params: Any) -> bytes:
        return self._call("GET", "/v1/plots/roofline.svg", params=_body(**params), raw=True)

    def plot_throughput(self, **params: Any) -> bytes:
        return self._call("GET", "/v1/plots/throughput.svg", params=_body(**params), raw=True)

    def healthz(self) -> Json:
        return self._call("GET", "/healthz")

    def readyz(self) -> Json:
        return self._call("GET", "/readyz")

    def openapi(self) -> str:
        return self._call("GET", "/openapi.yaml", raw=True).decode("utf-8")

    # --- transport ------------------------------------------------------------------------

    def _post(self, path: str, body: Json, csv: bool = False):
        headers = {"Accept": "text/csv"} if csv else None
        answer = self._call("POST", path, json=body, headers=headers, raw=csv)
        return answer.decode("utf-8") if csv else answer

    def _call(self, method: str, path: str, *, raw: bool = False, **kwargs: Any):
        url = self.base_url + path
        for attempt in range(self.retries + 1):
            try:
                response = self.session.request(method, url, timeout=self.timeout_s, **kwargs)
            except (requests.ConnectionError, requests.Timeout) as exc:
                if attempt == self.retries:
                    raise TransportError(f"{method} {url}: {exc}") from exc
                wait = self.wait_s(attempt)
            else:
                wait = self.wait_s(attempt, retry_after(response)) if response.status_code in RETRY_STATUSES \
                    else None
                if wait is None or attempt == self.retries:
                    return _decode(response, raw)
            time.sleep(wait)
        raise TransportError(f"{method} {url}: no answer")  # unreachable: the loop returns or raises

    def wait_s(self, attempt: int, after_s: float | None = None) -> float | None:
        """How long to wait before retry `attempt` + 1: the service's Retry-After when it gave one,
        else backoff_s x 2^attempt, capped at max_wait_s, and jittered (the backoff drawn from
        its upper half, a Retry-After lengthened by up to the backoff). None: do not retry (the
        service asked for a longer wait than max_wait_s)."""
        backoff = min(self.max_wait_s, self.backoff_s * 2 ** attempt)
        if after_s is None:
            return random.uniform(backoff / 2, backoff)
        if after_s > self.max_wait_s:
            return None
        return min(self.max_wait_s, after_s + random.uniform(0, backoff))


def retry_after(response: requests.Response) -> float | None:
    """A Retry-After header as seconds (it is a number of seconds or an HTTP date); None if
    absent or unreadable."""
    value = response.headers.get("Retry-After", "").strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _body(**fields: Any) -> Json:
    return {k: v for k, v in fields.items() if v is not None}


def _decode(response: requests.Response, raw: bool):
    if response.status_code >= 400:
        if response.headers.get("Content-Type", "").startswith("application/problem+json"):
            p = response.json()
            raise ProblemError(p.get("status", response.status_code), p.get("title", ""),
                               p.get("detail", ""), p.get("errors", []), p.get("request_id"))
        raise TransportError(f"{response.status_code} from {response.url}: {response.text[:200]}")
    return response.content if raw else response.json()

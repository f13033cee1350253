"""Flat CSV for dashboards: one row per item, unit-suffixed columns."""

import csv
import io
import unicodedata

from flask import Response, request

CSV_MIME = "text/csv"

# (column, path into the estimate answer); every number carries its unit in the name.
COLUMNS = (
    ("model", ("model", "name")),
    ("params", ("model", "params")),
    ("card", ("card", "id")),
    ("kind", ("card", "kind")),  # tier (the guide's) or card (a product): a sweep lists both
    ("line", ("card", "line")),
    ("mode", ("mode",)),
    ("precision", ("precision",)),
    ("count", ("fit", "count")),
    ("fits", ("fit", "fits")),
    ("cards_needed", ("fit", "cards_needed")),
    ("plan", ("parallelism", "description", "message")),
    ("tensor", ("parallelism", "tensor")),
    ("pipeline", ("parallelism", "pipeline")),
    ("expert", ("parallelism", "expert")),
    ("data", ("parallelism", "data")),
    ("replicas", ("parallelism", "replicas")),
    ("machines", ("parallelism", "machines")),
    ("bound", ("throughput", "bound")),
    ("weights_bytes", ("memory", "weights_bytes")),
    ("kv_cache_bytes", ("memory", "kv_cache_bytes")),
    ("total_bytes", ("memory", "total_bytes")),
    ("need_bytes_per_card", ("fit", "need_bytes_per_card")),
    ("max_concurrent_sequences", ("fit", "max_concurrent_sequences")),
    ("decode_tokens_per_s_ceiling", ("throughput", "decode_tokens_per_s_ceiling")),
    ("decode_tokens_per_s_expected", ("throughput", "decode_tokens_per_s_expected")),
    ("total_tokens_per_s", ("throughput", "total_tokens_per_s")),
    ("max_total_tokens_per_s", ("throughput", "full_load", "total_tokens_per_s")),
    ("time_per_output_token_s", ("throughput", "full_load", "time_per_output_token_s")),
    ("time_to_first_token_s", ("throughput", "time_to_first_token_s")),
    ("training_time_s", ("training", "run", "time_s")),
    ("cards_for_target", ("capacity", "cards")),
    ("machines_for_target", ("capacity", "machines")),
    ("power_w", ("energy", "power_w")),
    ("energy_kwh_per_year", ("energy", "energy_kwh_per_year")),
    ("electricity_cost_per_year", ("energy", "electricity_cost_per_year")),
    ("currency", ("energy", "currency")),
    ("total_cost_of_ownership", ("ownership", "total")),
)
# A batch or sweep item: its index and outcome, its problem when it failed, its answer's columns.
ITEM_COLUMNS = (("index", ("index",)), ("ok", ("ok",)), ("error_status", ("problem", "status")),
                ("error_detail", ("problem", "detail")),
                *((name, ("estimate", *path)) for name, path in COLUMNS))


def wants_csv() -> bool:
    """Whether the caller's Accept header prefers CSV to JSON."""
    return preferred(("application/json", CSV_MIME)) == CSV_MIME


def preferred(mimes: tuple[str, ...]) -> str:
    """The type among `mimes` the Accept header gives the highest q (the first on a tie, so the
    first is the default). Media-type parameters other than q (`text/csv; charset=utf-8`) name
    the same type: werkzeug keeps them and would not match."""
    return max(mimes, key=lambda mime: (_quality(mime), -mimes.index(mime)))


def _quality(mime: str) -> float:
    """The q the Accept header gives `mime`: its most specific range's, 0 when none covers it."""
    kind = mime.split("/")[0]
    best, rank = 0.0, -1
    for value, q in request.accept_mimetypes:
        media = value.split(";")[0].strip().lower()
        specificity = {mime: 2, f"{kind}/*": 1, "*/*": 0}.get(media)
        if specificity is not None and specificity > rank:
            best, rank = q, specificity
    return best


def _dig(answer: dict, path: tuple[str, ...]):
    value = answer
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # OWASP CSV injection: what a spreadsheet evaluates


def _text(value) -> str:
    """A value as a cell's text: a coded message ({code, message, params}) as its sentence."""
    if isinstance(value, dict) and "message" in value and "code" in value:
        return str(value["message"])
    return str(value)


def _inert(text: str) -> str:
    """Text a spreadsheet shows and never evaluates: one that would start a formula once its
    leading spaces and invisible format characters (a zero-width space, a BOM, a direction mark)
    are skipped starts with an apostrophe instead (OWASP's advice)."""
    lead = 0
    while lead < len(text) and (text[lead].isspace() or unicodedata.category(text[lead]) == "Cf"):
        lead += 1
    return "'" + text if text.startswith(FORMULA_STARTS) or text[lead:].startswith(FORMULA_STARTS) else text


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value) if isinstance(value, float) else str(value)
    return _inert(" | ".join(_text(v) for v in value) if isinstance(value, list) else _text(value))


def table_csv(rows: list[dict], columns: tuple[tuple[str, tuple[str, ...]], ...]) -> Response:
    """Answers (one per row) as CSV, one column per (name, path into the answer), every cell
    quoted: a spreadsheet that splits on `;` or a tab keeps each cell whole."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n", quoting=csv.QUOTE_ALL)
    writer.writerow(name for name, _ in columns)
    for row in rows:
        writer.writerow(_cell(_dig(row, path)) for _, path in columns)
    return Response(out.getvalue(), mimetype=CSV_MIME)


def rows_csv(items: list[dict], paths: tuple[str, ...] | None = None) -> Response:
    """Items of a batch or sweep, each {"ok", "estimate"} or {"ok", "problem"}, as CSV: with
    `paths` (the estimate's fields asked for), only the columns of the estimate they cover."""
    if paths is None:
        return table_csv(items, ITEM_COLUMNS)
    outcome, estimate = ITEM_COLUMNS[:4], ITEM_COLUMNS[4:]  # index, ok, error_status, error_detail; the rest
    asked = tuple((name, path) for name, path in estimate
                  if any(".".join(path[1:]) == p or ".".join(path[1:]).startswith(p + ".") for p in paths))
    return table_csv(items, outcome + asked)

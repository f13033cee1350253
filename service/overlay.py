"""An operator's catalog file: cards, models and negotiated prices added without a release.

The file is YAML, named by the SIZING_CATALOG_FILE environment variable (in Kubernetes,
mounted from a ConfigMap). It is read and checked once at start; a bad file stops the
service with a message naming the file and line, rather than serving wrong numbers.

    cards:            # each entry in the grammar of service/sizing/data/cards.toml
      - id: h100-sxm-lab
        ...
    models:           # each entry in the grammar of service/sizing/data/models.toml
      - id: our-model
        name: Our Model 8B
        config_source: internal registry
        config: {model_type: llama, hidden_size: 4096, ...}
    prices:           # card id or alias -> purchase price per card (date optional)
      h100-sxm: {amount: 25000, currency: USD, source: "2026 framework contract"}
    rents:            # card id or alias -> rental price per card-hour, with the date it held on
      h100-sxm: {amount: 2.1, currency: USD, source: "provider quote Q-1142", date: 2026-11-02}
"""

import datetime as dt
import math
import re
from collections.abc import Mapping
from pathlib import Path

import yaml

from .sizing import Catalogs, Price, SizingError, extend_catalogs, model_preset, real_card

ENV_VAR = "SIZING_CATALOG_FILE"
_SECTIONS = ("cards", "models", "prices", "rents")


class CatalogFileError(ValueError):
    """The operator's catalog file cannot be used; the message names the file and line."""


def _lines(node: yaml.Node) -> dict[str, list[int]]:
    """For each top-level section, the 1-based line of each of its entries."""
    out: dict[str, list[int]] = {}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            items = value.value if isinstance(value, (yaml.SequenceNode, yaml.MappingNode)) else []
            out[key.value] = [(item[0] if isinstance(item, tuple) else item).start_mark.line + 1
                              for item in items]
    return out


MAX_FILE_BYTES = 4 << 20  # a catalog of thousands of cards is well under this
MAX_NAME_CHARS = 200
# Characters a name may not hold: control characters break logs and CSV rows, and `$` starts
# matplotlib's mathtext, which fails or draws something else in a plot's title.
_BAD_NAME = re.compile(r"[\x00-\x1f\x7f$]")


def _plain_yaml(text: str, path: Path) -> yaml.Node | None:
    """Refuse what YAML allows but a catalog never needs: anchors and aliases (a 657-byte file of
    nested aliases expands to 52 MB once an answer repeats it), duplicate keys (the later one
    silently wins) and non-finite numbers (.inf, .nan, 1.0e+400), each named with its line. The
    composed document comes back, for the entries' lines."""
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise CatalogFileError(f"{path}:{event.start_mark.line + 1}: anchors and aliases (&name, *name) "
                                   "are not allowed in a catalog file: write each entry out")
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key, value in node.value:
                if key.value in seen:
                    raise CatalogFileError(f"{path}:{key.start_mark.line + 1}: duplicate key {key.value!r}")
                seen.add(key.value)
                stack.extend((key, value))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif node.tag == "tag:yaml.org,2002:float" and not math.isfinite(yaml.safe_load(node.value)):
            raise CatalogFileError(f"{path}:{node.start_mark.line + 1}: {node.value!r} is not a finite number")
    return root


def _names(raw: Mapping, where: str) -> None:
    """An entry's id, name and aliases: plain text of at most MAX_NAME_CHARS characters."""
    names = [raw.get("id"), raw.get("name"), *(raw.get("aliases") or [])]
    for name in names:
        if isinstance(name, str) and (len(name) > MAX_NAME_CHARS or _BAD_NAME.search(name)):
            raise ValueError(f"{where}: the name {name[:40]!r} must be at most {MAX_NAME_CHARS} characters, "
                             "without control characters or '$'")


def _load(path: Path) -> tuple[dict, dict[str, list[int]]]:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise CatalogFileError(f"{path}: larger than {MAX_FILE_BYTES >> 20} MiB; a catalog file is small")
        text = path.read_text(encoding="utf-8")
        node = _plain_yaml(text, path)
        data = yaml.safe_load(text) or {}
    except OSError as exc:
        raise CatalogFileError(f"{path}: cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise CatalogFileError(f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(data, Mapping) or set(data) - set(_SECTIONS):
        raise CatalogFileError(f"{path}:1: the file is a mapping of {', '.join(_SECTIONS)}")
    return dict(data), _lines(node)


def _price(raw, where: str, dated: bool = False) -> Price:
    """A price entry; `dated` (a rent) requires the date it held on, a purchase price may give one."""
    if not isinstance(raw, Mapping) or set(raw) - {"amount", "currency", "source", "date"}:
        raise ValueError(f"{where}: a price is {{amount, currency, source, date}}")
    amount = raw.get("amount")
    if isinstance(amount, bool) or not isinstance(amount, (int, float)) or not 0 < amount < math.inf:
        raise ValueError(f"{where}: amount must be a positive number")
    if not all(isinstance(raw.get(k), str) and raw[k].strip() for k in ("currency", "source")):
        raise ValueError(f"{where}: currency and source are required")
    date = raw.get("date")
    if dated and date is None:
        raise ValueError(f"{where}: a rental price needs the date it held on (date: YYYY-MM-DD)")
    if date is not None and not isinstance(date, dt.date):  # YAML reads an ISO date as a date
        raise ValueError(f"{where}: date must be an ISO date (YYYY-MM-DD)")
    return Price(float(amount), raw["currency"], raw["source"], None if date is None else date.isoformat())


def load_catalog_file(path: Path, base: Catalogs) -> Catalogs:
    """`base` extended by the operator's file; CatalogFileError naming the line if it is bad."""
    data, lines = _load(path)

    def at(section: str, index: int) -> str:
        line = lines.get(section, [])
        return f"{path}:{line[index] if index < len(line) else '?'}: {section}[{index}]"

    tiers = {c.id: c for c in base.cards.cards if c.kind == "tier"}
    try:
        cards = tuple(real_card(raw, tiers, at("cards", i)) if _entry(raw, at("cards", i))
                      else _not_mapping(at("cards", i)) for i, raw in enumerate(data.get("cards") or []))
        models = tuple(model_preset(raw, at("models", i)) if _entry(raw, at("models", i))
                       else _not_mapping(at("models", i)) for i, raw in enumerate(data.get("models") or []))
        prices = {str(k): _price(v, at("prices", i))
                  for i, (k, v) in enumerate((data.get("prices") or {}).items())}
        rents = {str(k): _price(v, at("rents", i), dated=True)
                 for i, (k, v) in enumerate((data.get("rents") or {}).items())}
        return extend_catalogs(base, cards, models, prices, rents)
    except SizingError as exc:
        raise CatalogFileError(f"{path}: {exc.field or 'prices'}: {exc.message}") from None
    except (ValueError, TypeError) as exc:
        raise CatalogFileError(str(exc)) from None


def _entry(raw, where: str) -> bool:
    """Whether `raw` is an entry (a mapping), its names checked."""
    if not isinstance(raw, Mapping):
        return False
    _names(raw, where)
    return True


def _not_mapping(where: str):
    raise ValueError(f"{where}: each entry is a mapping")


# The catalogs each file was read into by this process, by the path as given. gunicorn's master
# reads the file once, at start (deploy/gunicorn.conf.py), and every worker it forks, then or
# after a crash, serves what the master read: the workers of one master never disagree on a
# price, and an edit on disk, good or broken, changes nothing until the next start.
_PINNED: dict[str, Catalogs] = {}


def pin_catalog_file(path: str, base: Catalogs) -> Catalogs:
    """Read and check the file now and keep what it says for this process and its children;
    CatalogFileError (naming the line) if it is bad, and then nothing is kept or replaced."""
    catalogs = load_catalog_file(Path(path), base)
    _PINNED[path] = catalogs
    return catalogs


def pinned_catalogs(path: str) -> Catalogs | None:
    """What `pin_catalog_file` read from `path` in this process (or the parent it forked from)."""
    return _PINNED.get(path)

"""Every `source` and `*_source` in the catalog data is shown to users, so it names the public
document and where in it the figure stands (paper and table, repository, path and commit, page):
never how the figure was found or which tool found it. The walk reads every TOML file in
service/sizing/data/ and every key that ends in `source`, at any depth, in tables and arrays of
tables.
"""

import tomllib
from pathlib import Path

import pytest

DATA = Path(__file__).parents[2] / "service" / "sizing" / "data"

# Research notes that have no place in a source shown to users (matched case-insensitively).
RESEARCH_NOTES = (
    "partial:",
    "not found in the index",
    "code index",
    "find_string",
    "file id",
    "look-up",
    "lookup id",
    "refdata",
    "shared/",
    "fetched 20",
    "held-out-runs",
    "does not name its repository",
    ".claude/",
)

def _walk(node, where):
    """(where, key, value) for each key ending in `source` under `node`."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key.endswith("source"):
                yield where, key, value
            if isinstance(value, (dict, list)):
                yield from _walk(value, f"{where}.{key}" if where else key)
    elif isinstance(node, list):
        for position, item in enumerate(node):
            label = f"{where}[{position + 1}]"
            if isinstance(item, dict) and "id" in item:
                label += f" ({item['id']})"
            yield from _walk(item, label)


def _sources():
    for path in sorted(DATA.glob("*.toml")):
        with path.open("rb") as f:
            data = tomllib.load(f)
        for where, key, value in _walk(data, ""):
            yield path.name, where or "(top level)", key, value


SOURCES = list(_sources())


def _cases():
    for name, where, key, value in SOURCES:
        yield pytest.param(name, where, key, value, id=f"{name}:{where}.{key}")


def test_the_walk_reaches_the_sources_in_arrays_of_tables():
    assert any(where.startswith("card[") and key == "source" for _, where, key, _ in SOURCES)
    assert any(where.startswith("model[") and key == "config_source" for _, where, key, _ in SOURCES)


@pytest.mark.parametrize(("name", "where", "key", "value"), list(_cases()))
def test_a_source_carries_no_research_note(name, where, key, value):
    text = value.lower() if isinstance(value, str) else ""
    found = [phrase for phrase in RESEARCH_NOTES if phrase in text]
    assert not found, f"{name} {where} {key}: research note {found}"


@pytest.mark.parametrize(("name", "where", "key", "value"),
                         [pytest.param(*case, id=f"{case[0]}:{case[1]}.{case[2]}") for case in SOURCES])
def test_a_source_is_a_non_empty_text(name, where, key, value):
    assert isinstance(value, str) and value.strip(), f"{name} {where} {key}: empty source {value!r}"

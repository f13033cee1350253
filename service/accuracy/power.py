"""The machine-power regime: the service's draw for a server or rack-scale machine against the
figure its vendor publishes, in sample (the machine priced at its own platform entry) and out of
sample (that entry and its source removed from the table, and the share model refitted on the
other platforms, as a card without an entry is priced)."""

import csv
from importlib import resources

from ..sizing.catalog import catalog, get_card
from ..sizing.host import host_sizing, packaged_power_table, power_table

FILE = "power.csv"


def read_power_rows() -> list[dict]:
    """data/power.csv, its comment header skipped."""
    text = resources.files(__package__).joinpath(f"data/{FILE}").read_text(encoding="utf-8")
    return list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))


def power_cases(rows: list[dict]) -> list[tuple[str, str, float, float, float]]:
    """(case, source, published W, estimate W in sample, estimate W out of sample) per row: the
    typical draw host_sizing gives `count` cards in machines of `cards_per_machine`."""
    table = packaged_power_table()
    card_power_w = {c.id: c.power_w for c in catalog().cards if c.kind == "card"}
    cases = []
    for row in rows:
        card = get_card(row["card"])
        count, per_machine = int(row["count"]), int(row["cards_per_machine"])
        own = table.platform_for(card.id)
        others = power_table([p for p in table.platforms if p is not own], card_power_w)
        cases.append((row["case"], row["source"], float(row["published_w"]),
                      host_sizing(card, count, per_machine, table).typical_power_w,
                      host_sizing(card, count, per_machine, others).typical_power_w))
    return cases

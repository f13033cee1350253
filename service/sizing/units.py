"""Units, decided once.

Inside the domain every quantity is SI: bytes, FLOP, FLOP/s, bytes/s, seconds, watts.
Conversions happen at the edges, through the constants below.

Model sizes use decimal GB (1e9 bytes), as the guide does (7B x 2 B = 14 GB). Card
capacities marketed as "N GB" are N GiB of physical memory (2^30 bytes each).
"""

KB = 1_000
MB = 1_000_000
GB = 1_000_000_000
TB = 1_000_000_000_000
KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30

BILLION = 1e9
TERA = 1e12

SECONDS_PER_HOUR = 3_600
SECONDS_PER_DAY = 86_400
HOURS_PER_DAY = 24
DAYS_PER_YEAR = 365
HOURS_PER_YEAR = HOURS_PER_DAY * DAYS_PER_YEAR  # 8760, the guide's year
WATTS_PER_KW = 1_000


def gib_to_bytes(gib: float) -> int:
    """Binary gibibytes to bytes (an "80 GB" card holds 80 GiB)."""
    return round(gib * GIB)


def gb_per_s_to_bytes_per_s(gb_per_s: float) -> float:
    """Decimal GB/s (datasheet bandwidth) to bytes/s."""
    return gb_per_s * GB


def tflops_to_flops(tflops: float) -> float:
    """TFLOP/s (or TOPS) to FLOP/s."""
    return tflops * TERA


def billions_to_count(billions: float) -> int:
    """A parameter count given in billions, as an exact integer count."""
    return round(billions * BILLION)

"""Measure this machine's accelerator: memory bandwidth, matmul rate, and a synthetic decode
loop, and print them as an entry for an operator's catalog file (SIZING_CATALOG_FILE), so that
the service uses the card's measured ceilings instead of the datasheet's.

    python -m service.accuracy.calibrate --card h100-sxm            # PyTorch on the first GPU
    python -m service.accuracy.calibrate --backend numpy --quick    # the CPU, as a smoke test

PyTorch is not a dependency of the service: install the build that matches the machine.
"""

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import yaml

from ..sizing.units import GB, GIB, TERA


@dataclass(frozen=True)
class Measurement:
    device: str
    bandwidth_gb_per_s: float
    matmul_tflops: float
    decode_tokens_per_s: float
    decode_weights_bytes: int
    decode_bandwidth_gb_per_s: float


def best_seconds(run: Callable[[], None], sync: Callable[[], None], repeats: int) -> float:
    """The fastest of `repeats` timed runs after one warm-up, in seconds."""
    run()
    sync()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        sync()
        best = min(best, time.perf_counter() - start)
    return best


def copy_bandwidth_gb_per_s(bytes_copied: int, seconds: float) -> float:
    """A copy reads and writes every byte: 2 x bytes / time, in GB/s."""
    return 2 * bytes_copied / seconds / GB


def matmul_tflops(n: int, seconds: float) -> float:
    """An n x n x n matmul does 2 n^3 FLOPs, in TFLOP/s."""
    return 2 * n**3 / seconds / TERA


class NumpyBackend:
    """The CPU through NumPy: a smoke test of the method, not a card's figures."""

    name = "cpu (numpy)"

    def __init__(self):
        import numpy

        self.np = numpy

    def sync(self) -> None:
        pass

    def buffers(self, n_bytes: int):
        count = n_bytes // 4
        return self.np.ones(count, dtype=self.np.float32), self.np.empty(count, dtype=self.np.float32)

    def copy(self, source, target) -> None:
        self.np.copyto(target, source)

    def square(self, n: int):
        return self.np.ones((n, n), dtype=self.np.float32)

    def matmul(self, a, b) -> None:
        a @ b

    def weights(self, layers: int, width: int):
        return [self.np.ones((width, width), dtype=self.np.float32) for _ in range(layers)], \
            self.np.ones(width, dtype=self.np.float32)

    def decode_step(self, weights, x) -> None:
        for w in weights:
            x = w @ x


class TorchBackend:
    """The first CUDA or ROCm device through PyTorch, in bf16."""

    def __init__(self):
        import torch

        if not torch.cuda.is_available():
            raise SystemExit("no CUDA or ROCm device visible to PyTorch; use --backend numpy")
        self.torch = torch
        self.device = torch.device("cuda")
        self.name = torch.cuda.get_device_name(0)

    def sync(self) -> None:
        self.torch.cuda.synchronize()

    def buffers(self, n_bytes: int):
        count = n_bytes // 2
        make = self.torch.empty
        return (make(count, dtype=self.torch.bfloat16, device=self.device),
                make(count, dtype=self.torch.bfloat16, device=self.device))

    def copy(self, source, target) -> None:
        target.copy_(source)

    def square(self, n: int):
        return self.torch.randn(n, n, dtype=self.torch.bfloat16, device=self.device)

    def matmul(self, a, b) -> None:
        self.torch.matmul(a, b)

    def weights(self, layers: int, width: int):
        make = self.torch.randn
        return ([make(width, width, dtype=self.torch.bfloat16, device=self.device) for _ in range(layers)],
                make(width, dtype=self.torch.bfloat16, device=self.device))

    def decode_step(self, weights, x) -> None:
        for w in weights:
            x = self.torch.mv(w, x)


def measure(backend, copy_bytes: int, matmul_n: int, layers: int, width: int, repeats: int) -> Measurement:
    """Copy bandwidth, matmul rate, and a decode loop that reads every weight once per token."""
    source, target = backend.buffers(copy_bytes)
    copy_s = best_seconds(lambda: backend.copy(source, target), backend.sync, repeats)
    a = backend.square(matmul_n)
    matmul_s = best_seconds(lambda: backend.matmul(a, a), backend.sync, repeats)
    weights, x = backend.weights(layers, width)
    step_s = best_seconds(lambda: backend.decode_step(weights, x), backend.sync, repeats)
    weight_bytes = sum(w.nbytes if hasattr(w, "nbytes") else w.element_size() * w.nelement()
                       for w in weights)
    return Measurement(backend.name, copy_bandwidth_gb_per_s(copy_bytes, copy_s),
                       matmul_tflops(matmul_n, matmul_s), 1 / step_s, weight_bytes,
                       weight_bytes / step_s / GB)


def _datasheet(card_id: str | None) -> dict:
    """The catalog card's datasheet fields, in the catalog file's grammar (empty if none)."""
    if not card_id:
        return {}
    from ..sizing.catalog import get_card

    card = get_card(card_id)
    link = card.interconnect_bytes_per_s
    return {
        "vendor": card.vendor or "NVIDIA", "line": card.line, "tier": card.tier,
        "memory_gib": card.memory_bytes / GIB, "memory_type": card.memory_type,
        "bandwidth_gb_per_s": card.bandwidth_bytes_per_s / GB, "power_w": card.power_w,
        "interconnect": card.interconnect,
        **({"interconnect_gb_per_s": link / GB} if link else {}),
        "ecc": card.ecc, "source": card.source,
        "dense_tflops": {k: v / TERA for k, v in card.dense_flops.items()},
    }


def _significant(value: float) -> float:
    """Four significant figures: a slow device's 0.04 TFLOP/s stays 0.04, where one decimal
    would write 0.0, which the catalog file refuses."""
    return float(f"{value:.4g}")


def catalog_entry(m: Measurement, card: str | None) -> str:
    """A cards entry for SIZING_CATALOG_FILE: the catalog card's datasheet figures (when --card
    names one) with the measured ceilings beside them."""
    entry = {
        "id": f"{card or 'my-card'}-measured",
        "name": f"{m.device} (measured here)",
        **_datasheet(card),
        "measured_bandwidth_gb_per_s": _significant(m.bandwidth_gb_per_s),
        "measured_dense_tflops": {"bf16": _significant(m.matmul_tflops)},
        "measured_source": (f"service.accuracy.calibrate on {m.device}: copy {m.bandwidth_gb_per_s:.0f} GB/s, "
                            f"bf16 matmul {m.matmul_tflops:.1f} TFLOP/s, synthetic decode "
                            f"{m.decode_tokens_per_s:.1f} tokens/s over {m.decode_weights_bytes / GB:.2f} GB "
                            f"({m.decode_bandwidth_gb_per_s:.0f} GB/s)"),
    }
    return yaml.safe_dump({"cards": [entry]}, sort_keys=False, allow_unicode=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("torch", "numpy"), default="torch")
    parser.add_argument("--card", help="the catalog id this card is (GET /cards)")
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    args = parser.parse_args(argv)
    backend = TorchBackend() if args.backend == "torch" else NumpyBackend()
    sizes = dict(copy_bytes=64 << 20, matmul_n=512, layers=8, width=1024, repeats=3) if args.quick else \
        dict(copy_bytes=4 << 30, matmul_n=8192, layers=32, width=8192, repeats=10)
    m = measure(backend, **sizes)
    print(f"# {m.device}: copy {m.bandwidth_gb_per_s:.1f} GB/s, matmul {m.matmul_tflops:.2f} TFLOP/s, "
          f"decode {m.decode_tokens_per_s:.1f} tokens/s ({m.decode_bandwidth_gb_per_s:.1f} GB/s)")
    print(catalog_entry(m, args.card))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Accelerator sizing service: memory, fit, roofline throughput, training time, energy and cost."""

__version__ = "0.6.0"

"""Accuracy against published measurements: the cases, the validation run, and a calibration
script for an operator's own card."""

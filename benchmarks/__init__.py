"""Accuracy and speed benchmarks of automodel against Extra-P (engine-independent harness)."""

"""Generators of synthetic experiments with known metrics, for tests, benchmarks and the demo."""

"""Benchmarks and load generators, each figure beside a floor measured in the same run."""

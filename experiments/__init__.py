"""Experiments: tournaments, benchmarks and the ``pipslab`` CLI."""

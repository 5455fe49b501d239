"""Dominoes: one engine, variants as data (``pipslab.envs.dominoes.variants``)."""

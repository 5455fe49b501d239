"""Dominoes: one engine, variants as data (``envs.dominoes.variants``)."""

"""Agents that play pipslab's games: one interface (``pipslab.agents.base.Agent``), made by name."""
from .base import Agent, Observation
from .registry import agent_names, make_agent, register

# Let the env adapters make opponents by name (``gym.make(..., opponent="heaviest")``)
# without importing this package: envs never import agents.
from pipslab.envs.opponents import install_agent_factory  # noqa: E402

install_agent_factory(make_agent)

__all__ = ["Agent", "Observation", "agent_names", "make_agent", "register"]

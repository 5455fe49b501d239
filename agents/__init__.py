"""Agents that play pipslab's games: one interface (``pipslab.agents.base.Agent``), made by name."""
from .base import Agent, Observation
from .registry import add_catalogue, agent_names, make_agent, register

# the built-in agents (agents/builtin.py), imported when an agent is first looked up by name
add_catalogue("pipslab.agents.builtin")

# Let the env adapters make opponents by name (``gym.make(..., opponent="heaviest")``)
# without importing this package: envs never import agents.
from pipslab.envs.opponents import install_agent_factory  # noqa: E402

install_agent_factory(make_agent)

__all__ = ["Agent", "Observation", "agent_names", "make_agent", "register"]

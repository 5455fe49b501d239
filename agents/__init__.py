"""Agents that play pipslab's games: one interface (``pipslab.agents.base.Agent``), made by name."""
from .base import Agent, Observation
from .registry import agent_names, make_agent, register

__all__ = ["Agent", "Observation", "agent_names", "make_agent", "register"]

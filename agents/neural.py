"""Neural agents and evaluators by name, registered without importing torch.

torch takes seconds to import; the first lookup by name imports every built-in agent
module (:mod:`pipslab.agents.builtin`), and most commands (``pipslab play happy``…) never
build a network.  So the factories here import the network modules only when an agent or
evaluator is built:

* ``td`` (backgammon) and ``eval=td[:NET]`` -- :mod:`pipslab.agents.td`;
* ``net`` (every domino game) and ``eval=net[:NET]`` (family ``dominoes``) --
  :mod:`pipslab.agents.domino_net`.
"""
from __future__ import annotations

from .evaluators import register_evaluator
from .netfiles import DEFAULT_NET
from .registry import register


@register("td", games=["backgammon"])
def _make_td(game: str, net: str = DEFAULT_NET):
    from .td import TDAgent
    return TDAgent(net=net)


def _td_evaluator(net: str = DEFAULT_NET):
    from .td import TDEvaluator
    return TDEvaluator(net)


register_evaluator("backgammon", "td", _td_evaluator)


@register("net", family="dominoes")
def _make_net(game: str, net: str = "", sample: bool = False):
    from .domino_net import NetAgent
    return NetAgent(net=net or None, sample=sample)


def _net_evaluator(net: str = ""):
    from .domino_net import NetEvaluator
    return NetEvaluator(net or None)


register_evaluator("dominoes", "net", _net_evaluator)

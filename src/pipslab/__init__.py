"""pipslab: a self-play training and evaluation lab for dominoes and backgammon.

``import pipslab`` registers the Gymnasium ids (``pipslab/HappyDominoes-v0``,
``pipslab/TroshinDominoes-v0``, ``pipslab/TripleDominoes-v0``, ``pipslab/Backgammon-v0``),
so ``gymnasium.make("pipslab:pipslab/HappyDominoes-v0")`` works with no other import.
The code lives in three subpackages, following the rules -> envs -> agents -> experiments
layering: :mod:`pipslab.envs` (rules engines and their envs), :mod:`pipslab.agents` and
:mod:`pipslab.experiments` (harness, training, the ``pipslab`` CLI).
"""
from . import envs  # noqa: F401  (registers the Gymnasium ids)
from . import agents  # noqa: F401,E402  (lets the envs make opponents by name: pipslab.envs.opponents)

__version__ = "0.1.0"

"""pipslab: a self-play training and evaluation lab for dominoes and backgammon.

``import pipslab`` registers the Gymnasium ids (``pipslab/HappyDominoes-v0``,
``pipslab/TroshinDominoes-v0``, ``pipslab/TripleDominoes-v0``, ``pipslab/Backgammon-v0``),
so ``gymnasium.make("pipslab:pipslab/HappyDominoes-v0")`` works with no other import.
The code lives in three subpackages, following the rules -> envs -> agents -> experiments
layering: :mod:`pipslab.envs` (rules engines and their envs), :mod:`pipslab.agents` and
:mod:`pipslab.experiments` (harness, training, the ``pipslab`` CLI).
"""
import os as _os
import sys as _sys

try:
    from . import envs  # noqa: F401  (registers the Gymnasium ids)
    from . import agents  # noqa: F401  (lets the envs make opponents by name: pipslab.envs.opponents)
except KeyboardInterrupt:
    # Ctrl-C while the ``pipslab`` command is still importing (before its main() can catch
    # it): the command's one line and status 130, as everywhere else.  Inside a user's own
    # program the interrupt goes on as usual.
    if _os.path.basename(_sys.argv[0] if _sys.argv else "") == "pipslab":
        _sys.stderr.write("pipslab: interrupted\n")
        raise SystemExit(130) from None
    raise

__version__ = "0.1.0"

"""pipslab: a self-play training and evaluation lab for dominoes and backgammon.

The Python API (``docs/api.md``)::

    import pipslab
    env = pipslab.make_env("happy", mode="block", opponents="heaviest")   # a Gymnasium env
    agent = pipslab.make_agent("pimc:samples=20", "happy")               # any agent spec
    net = pipslab.load_net("happy-block")                                # policy(), value()
    tables = pipslab.tournament("happy", ["net", "heaviest"], games=200, seed=1)
    tables.summary                                                       # a DataFrame
    pipslab.analyze("results/tournament-happy-block").summary            # error rates

``import pipslab`` also registers the Gymnasium ids (``pipslab/HappyDominoes-v0``,
``pipslab/TroshinDominoes-v0``, ``pipslab/TripleDominoes-v0``, ``pipslab/Backgammon-v1``).
The code lives in three subpackages, following the rules -> envs -> agents -> experiments
layering: :mod:`pipslab.envs`, :mod:`pipslab.agents` and :mod:`pipslab.experiments`; the
API's names are loaded on first use, so ``import pipslab`` stays light.
"""
import os as _os
import sys as _sys

from . import interrupts as _interrupts

# Ctrl-C while the ``pipslab`` command is still importing (before its main() can catch it)
# is the command's one line and status 130, as everywhere else (``interrupts``: also when
# the interrupt surfaces as another error).  Inside a user's own program it goes on as usual.
_COMMAND = _os.path.basename(_sys.argv[0] if _sys.argv else "") == "pipslab"
if _COMMAND:
    _interrupts.install()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("pipslab")
    except PackageNotFoundError:   # a source tree on sys.path, not installed
        return "0+unknown"


try:
    from . import envs  # noqa: F401  (registers the Gymnasium ids)
    from . import agents  # noqa: F401  (lets the envs make opponents by name: pipslab.envs.opponents)
    from .envs.game import get_game  # noqa: F401
    __version__ = _version()
    if _COMMAND:    # the command's entry point is imported next: its imports under the same guard
        from .experiments import cli as _cli  # noqa: F401
except BaseException:
    if _COMMAND and _interrupts.noted():
        _sys.stderr.write("pipslab: interrupted\n")
        raise SystemExit(130) from None
    raise

_API = ("make_env", "make_agent", "load_net", "tournament", "analyze", "register_policy")
__all__ = ["get_game", "__version__", *_API]


def __getattr__(name):
    if name in _API:
        from .experiments import api
        return getattr(api, name)
    raise AttributeError(f"module 'pipslab' has no attribute {name!r}")

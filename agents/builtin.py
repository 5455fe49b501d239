"""The built-in agents and evaluators: importing this module registers every one of them.

It only imports.  :mod:`pipslab.agents` hands it to the registry as its catalogue
(:func:`pipslab.agents.registry.add_catalogue`), imported on the first lookup by name, so
plug-ins import the registry and the registry imports no plug-in.  A new built-in agent
module is one line here.
"""
from . import random_agent  # noqa: F401
from . import dominoes  # noqa: F401
from . import human  # noqa: F401
from . import search_dominoes  # noqa: F401
from . import search_backgammon  # noqa: F401
from . import backgammon  # noqa: F401
from . import neural  # noqa: F401
from . import policies  # noqa: F401

"""Load, or on a fresh clone compile, every numba function before the suite starts.

A cold compile of the engines takes minutes; under pytest-xdist each worker (and each
command-line test's process started before the cache is written) would compile the same
functions at once.  Here two processes compile disjoint modules side by side, and the
suite then loads them from numba's cache.  ``test.sh`` runs this before pytest.
"""
import subprocess
import sys

GROUPS = (
    ("pipslab.envs.backgammon.fast",),
    ("pipslab.envs.dominoes.compiled", "pipslab.agents.dominoes_compiled", "pipslab.agents.pimc_compiled",
     "pipslab.agents.ismcts_compiled"),
)


def main() -> int:
    procs = [subprocess.Popen([sys.executable, "-c", "import importlib\n"
                               f"for name in {list(group)!r}:\n"
                               "    importlib.import_module(name).warm_up()\n"]) for group in GROUPS]
    return max(p.wait() for p in procs)


if __name__ == "__main__":
    sys.exit(main())

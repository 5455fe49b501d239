import os
import signal
import sys

# A suite started in the background by a non-interactive shell (``./test.sh &``) inherits
# SIGINT ignored, and an ignored signal stays ignored across exec: the Ctrl-C tests'
# pipslab processes would never see their Ctrl-C.  A Python handler is reset to the
# default on exec, so the children get the ordinary KeyboardInterrupt again.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The tests live in tests/envs, tests/agents and tests/experiments (mirroring the packages)
# and import the code as installed, ``pipslab.envs`` …; the helper modules they share
# (dominoes_helpers, backgammon_helpers, harness_helpers, harness_fakes) stay here in tests/,
# importable by their plain names from every folder.
TESTS = os.path.dirname(os.path.abspath(__file__))
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)
# ``python -m pytest`` puts the repository root on sys.path, where the folders envs/,
# agents/ and experiments/ would import as top-level packages of their own (a second
# agent registry, say) behind a stray ``import agents``: the tests see only pipslab.*.
ROOT = os.path.dirname(TESTS)
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != ROOT]

# CI replays the same hypothesis examples every run (a failure there is then reproducible
# from the log); a developer's run explores new ones.
from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

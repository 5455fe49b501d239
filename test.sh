#!/usr/bin/env bash
# Run the whole test suite (sets up .venv/ with the test extras and the browser first when
# they are missing); arguments go to pytest:
#   ./test.sh -m "not slow"     the quick loop (no test over about 2 s)
#   ./test.sh -m "not peers"    without the peer packages (open-spiel, gnubg-nn, dominoes)
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -x .venv/bin/pipslab ] || ! .venv/bin/python -c "import xdist, selenium, sb3_contrib, tensorboard" 2>/dev/null; then
  bash setup.sh
  .venv/bin/python -m pip install -q -e ".[dev]"
fi
# The play page's browser tests (tests/experiments/test_serve*.py) drive Debian's chromium
# through its chromium-driver: installed here when missing (as root, or with sudo -n).
bash tests/install_browser.sh
# numba's cache of the compiled engines, filled once before the workers start (minutes on a
# fresh clone, where each worker would otherwise compile the same functions at once).
.venv/bin/python tests/warm_compiled.py
# On every core: pytest-xdist's worker processes (-n auto; PIPSLAB_TEST_WORKERS=0 runs in this
# one process, or pass -n N); tests marked xdist_group(NAME) share one worker (--dist loadgroup).
exec .venv/bin/python -m pytest -n "${PIPSLAB_TEST_WORKERS:-auto}" --dist loadgroup "$@"

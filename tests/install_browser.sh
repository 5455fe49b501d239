#!/usr/bin/env bash
# Debian's chromium and chromium-driver for the browser tests, when missing (as root, or
# with sudo -n).  Only the tests need a browser; the main job (./run.sh) does not.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
  exit 0
fi
if command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo -n"; fi
  { $SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q \
      chromium chromium-driver fonts-dejavu-core; } >/dev/null \
    || echo "install_browser.sh: could not install chromium and chromium-driver with apt-get; the browser tests will fail until they are installed" >&2
else
  echo "install_browser.sh: apt-get is not available: install chromium and its chromedriver by hand (the browser tests need them)" >&2
fi

#!/bin/sh
# Debian's Chromium for the browser tests (tests/feedback/test_report.py, tests/feedback/test_feedback.py).
# Idempotent: does nothing when /usr/bin/chromium is already there.  Needs root (apt-get).
set -eu
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "tests/browser/install.sh: /usr/bin/chromium is missing; run as root (or: sudo apt-get install -y chromium)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
test -x /usr/bin/chromium

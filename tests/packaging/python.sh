#!/bin/sh
# tests/packaging/python.sh: the Python package (make test-python).
#
# Installs bindings/python offline into a fresh venv of Debian's python3
# (its system site-packages give setuptools and wheel), then runs
# python_test.py with it from outside the repository, so that the module
# and the extension come from the installed package.
set -eu
cd "$(dirname "$0")/../.."
repo=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --no-index --no-build-isolation ./bindings/python
rm -rf bindings/python/build bindings/python/src/*.egg-info
cd "$tmp"
"$tmp/venv/bin/python" "$repo/tests/packaging/python_test.py" "$repo/chash"

#!/usr/bin/env bash
# A virtualenv outside the repository for the Python client library's tests (sdk/python): its dependencies from PyPI
# (httpx, cryptography, rfc8785, eth-account), pytest, and hatchling for the wheel the packaging test builds. The
# library itself is imported from the checkout (pytest pythonpath).
# Prints the venv's python on stdout. NOTARY_SDK_PYTHON_VENV overrides the location.
set -euo pipefail
venv="${NOTARY_SDK_PYTHON_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/notary/sdk-python-venv}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import httpx, cryptography, rfc8785, pytest, anyio, eth_account, hatchling' 2>/dev/null; then
  echo "notary: creating the Python client venv in $venv (httpx, cryptography, rfc8785, eth-account, pytest, hatchling)" >&2
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check httpx==0.28.1 cryptography==50.0.2 rfc8785==0.1.4 eth-account==0.14.0 pytest==9.2.0 hatchling==1.33.0 >&2
fi
echo "$venv/bin/python"

#!/usr/bin/env bash
# A virtualenv outside the repository for the independent Python receipt verifier (spec/verify-python): Ed25519 from
# `cryptography`, RFC 8785 from `rfc8785`, nothing of ours. Prints the venv's python on stdout.
# NOTARY_RECEIPTS_VENV overrides the location.
set -euo pipefail
venv="${NOTARY_RECEIPTS_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/notary/receipts-venv}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import cryptography, rfc8785' 2>/dev/null; then
  echo "notary: creating the receipt verifier venv in $venv (cryptography, rfc8785)" >&2
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check cryptography==50.0.2 rfc8785==0.1.4 >&2
fi
echo "$venv/bin/python"

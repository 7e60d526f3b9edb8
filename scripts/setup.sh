#!/usr/bin/env bash
# Install the Debian packages tile builds against (and locales, whose de_DE a test makes).  Safe to run again.
set -euo pipefail
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
pkgs=(llvm-22-dev libxxhash-dev libcriterion-dev libtree-sitter-dev cmake pkg-config build-essential python3-dev python3-venv locales)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -o DPkg::Lock::Timeout=300
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -o DPkg::Lock::Timeout=300 "${missing[@]}"
fi

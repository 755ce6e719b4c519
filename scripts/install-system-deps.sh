#!/usr/bin/env bash
# System packages the test suite needs (Debian): headless Chromium + ChromeDriver for the
# WebShop HTML-mode tests. Installs only what is missing; needs root (or sudo) for apt.
set -euo pipefail
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
[ ${#missing[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-system-deps: ${missing[*]} missing and no apt-get here: install Chromium and its chromedriver with this machine's package manager; browser tests will be skipped (and fail under CI=true)" >&2
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
    echo "install-system-deps: need root to apt-get install ${missing[*]}; browser tests will be skipped (and fail under CI=true)" >&2
    exit 0
  fi
fi
echo "install-system-deps: installing Debian's ${missing[*]} (apt-get; for the WebShopHTML and browser tests)" >&2
export DEBIAN_FRONTEND=noninteractive
${SUDO:-} apt-get update -qq
${SUDO:-} apt-get install -y -qq --no-install-recommends "${missing[@]}"

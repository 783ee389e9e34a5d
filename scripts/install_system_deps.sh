#!/bin/sh
# Install the system tools the sandbox needs, if they are missing (safe to run again and again):
#   bwrap  (bubblewrap: the kernel isolation of the local sandbox backend)
#   g++    (C and C++ programs; gcc comes with it)
#   node   (JavaScript programs)
#   chromium and chromium-driver (headless browser the tests of the operator page GET /ui drive)
# Debian/Ubuntu (apt-get) only; elsewhere it says what to install. Needs root, or sudo.
set -eu

missing=""
command -v bwrap >/dev/null 2>&1 || missing="$missing bubblewrap"
command -v g++ >/dev/null 2>&1 || missing="$missing g++"
command -v node >/dev/null 2>&1 || missing="$missing nodejs"
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
command -v chromedriver >/dev/null 2>&1 || missing="$missing chromium-driver"

if [ -z "$missing" ]; then
    echo "system dependencies present: bwrap $(bwrap --version 2>/dev/null | cut -d' ' -f2), g++ $(g++ -dumpversion), node $(node --version), $(chromium --version 2>/dev/null)"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "missing:$missing -- install them with your system's package manager" >&2
    exit 1
fi

as_root=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        as_root="sudo"
    else
        echo "missing:$missing -- run this script as root (or install sudo)" >&2
        exit 1
    fi
fi

echo "installing:$missing"
$as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
# shellcheck disable=SC2086 # the package list is meant to split into words
$as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
bwrap --version

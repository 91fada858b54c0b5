#!/usr/bin/env bash
# Installs what the native plugin package proof (test/packages/native.test.ts) compiles with: g++ (C++17), JUCE's
# module sources, libsodium, libcurl and zlib headers, from Debian/Ubuntu packages. Does nothing when they are all
# installed. Needs root or sudo. Then: npx vitest run test/packages/native.test.ts (or npm test).
# .ci/run calls it before the test suites.
set -euo pipefail

packages=(g++ juce-modules-source-data libsodium-dev libcurl4-openssl-dev zlib1g-dev)

if ! command -v dpkg >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "native-toolchain: not a Debian/Ubuntu system; install a C++17 compiler, JUCE 7 module sources (set JUCE_MODULES_DIR)," >&2
  echo "native-toolchain: libsodium, libcurl and zlib development files yourself: ${packages[*]}" >&2
  exit 1
fi

missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "native-toolchain: installed (${packages[*]})"
  exit 0
fi

if [ "$(id -u)" = 0 ]; then as_root=(); elif command -v sudo >/dev/null 2>&1; then as_root=(sudo); else
  echo "native-toolchain: missing ${missing[*]}; run this script as root (no sudo here)" >&2
  exit 1
fi
echo "native-toolchain: installing ${missing[*]}"
"${as_root[@]}" apt-get update -qq
# juce-modules-source-data holds JUCE's module sources only; juce-modules-source would pull GTK/WebKit headers the
# test does not need.
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"

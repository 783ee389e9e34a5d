#!/bin/sh
# Build a rewardhub image from Debian packages alone: debootstrap a minimal bookworm with the
# packages of a list, then `docker import` it. No image registry is needed (where one is,
# `docker build deploy/sandbox` makes the same runtime from python:3.11-slim).
#
#   scripts/build_sandbox_image.sh                      # the sandbox runtime, every toolchain
#   scripts/build_sandbox_image.sh --tier core          # Python, C/C++, JavaScript and Bash only
#   scripts/build_sandbox_image.sh --base               # the base of deploy/Dockerfile.* (BASE_IMAGE)
#
# The image is tagged NAME:HASH and NAME:latest, where HASH covers the suite, the tier, the package
# list and RECIPE below: when an image with that tag exists, the run only re-tags it (seconds).
# Downloaded .debs are kept in $REWARDHUB_DEBOOTSTRAP_CACHE (default /var/cache/rewardhub/debootstrap),
# so a rebuild after a change of the list fetches only what is new. Needs root, debootstrap and a
# running Docker engine. Prints "image: NAME:HASH (built in Ns | cached)" on its last line. Two
# runs for one tag at once build it once (a lock file per tag): the second waits, then re-tags.
set -eu
cd "$(dirname "$0")/.."

SUITE=bookworm
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE=${REWARDHUB_DEBOOTSTRAP_CACHE:-/var/cache/rewardhub/debootstrap}
IMAGE=rewardhub-sandbox-runtime
LIST=deploy/sandbox/packages.txt
TIER=full
RECIPE=1  # raise it when the steps below change what an image holds: the hash then changes too

while [ $# -gt 0 ]; do
    case "$1" in
        --tier) TIER=$2; shift 2 ;;
        --image) IMAGE=$2; shift 2 ;;
        --packages) LIST=$2; shift 2 ;;
        --base) IMAGE=rewardhub-debian-base; LIST=deploy/base-packages.txt; shift ;;
        *) echo "usage: $0 [--tier core|full] [--image NAME] [--packages FILE] [--base]" >&2; exit 2 ;;
    esac
done
case "$TIER" in core|full) ;; *) echo "unknown tier: $TIER (core or full)" >&2; exit 2 ;; esac
[ -r "$LIST" ] || { echo "no package list $LIST" >&2; exit 2; }

# "name:tier" lines; the core tier takes only the core lines, the full tier all of them
packages=$(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$LIST" | awk -F: -v tier="$TIER" \
    'NF && (tier == "full" || $2 == "" || $2 == "core") { print $1 }' | sort -u)
hash=$({ echo "$SUITE $TIER recipe=$RECIPE"; echo "$packages"; } | sha256sum | cut -c1-16)
tag="$IMAGE:$hash"

if ! docker info >/dev/null 2>&1; then
    echo "no Docker engine answers here (start dockerd first; see .ci/run)" >&2
    exit 1
fi
# One build of a tag at a time: .ci/run starts the builds early, in the background, and a docker
# test that finds its image missing runs this script too; the second caller waits here, then finds
# the tag. (The lock is held until this script exits.)
if command -v flock >/dev/null 2>&1; then
    mkdir -p /run/lock
    exec 9>"/run/lock/rewardhub-image-$IMAGE-$hash.lock"
    flock 9
fi
if docker image inspect "$tag" >/dev/null 2>&1; then
    docker tag "$tag" "$IMAGE:latest"
    echo "image: $tag (cached)"
    exit 0
fi
command -v debootstrap >/dev/null 2>&1 || { echo "debootstrap is not installed (scripts/install_system_deps.sh)" >&2; exit 1; }

started=$(date +%s)
rootfs=$(mktemp -d /var/tmp/rewardhub-rootfs.XXXXXX)
cleanup() {
    # debootstrap mounts /proc and /sys (and may bind /dev) in the tree while it configures: never
    # delete through a mount that is still there
    for mount in dev/pts dev sys proc; do umount "$rootfs/$mount" 2>/dev/null || true; done
    rm -rf --one-file-system "$rootfs" "$rootfs.log"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
mkdir -p "$CACHE"
echo "building $tag from $LIST ($TIER):" $packages
# shellcheck disable=SC2086 # the package list is meant to split into words
debootstrap --variant=minbase --include="$(echo $packages | tr ' ' ,)" --cache-dir="$CACHE" \
    "$SUITE" "$rootfs" "$MIRROR" >"$rootfs.log" 2>&1 || { tail -30 "$rootfs.log" >&2; exit 1; }
# what a container never needs: package indexes, downloaded archives, docs
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
    "$rootfs"/usr/share/doc "$rootfs"/usr/share/man "$rootfs"/usr/share/info
# the folders the Docker backend mounts into: the harness (read-only) and the control socket's
mkdir -p "$rootfs/opt/rewardhub/inside" "$rootfs/run/rewardhub"
tar --numeric-owner -C "$rootfs" -c . | docker import \
    --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8' --change 'WORKDIR /tmp' \
    --change "LABEL org.rewardhub.packages-hash=$hash org.rewardhub.tier=$TIER" \
    --change 'CMD ["/bin/bash"]' - "$tag" >/dev/null
docker tag "$tag" "$IMAGE:latest"
echo "image: $tag (built in $(($(date +%s) - started))s)"

#!/bin/sh
# Install the system tools the sandbox needs, if they are missing (safe to run again and again):
#   bwrap  (bubblewrap: the kernel isolation of the local sandbox backend)
#   g++    (C and C++ programs; gcc comes with it)
#   node   (JavaScript programs)
#   go     (Go programs: golang-go)
#   javac  (Java programs: default-jdk-headless)
#   rustc  (Rust programs: rustc)
#   tsc    (TypeScript programs: node-typescript, compiled to JavaScript and run by node)
#   bash   (Bash programs)
#   python3-seccomp (libseccomp's bindings for the system Python: builds the sandbox's system-call filter)
#   chromium and chromium-driver (headless browser the tests of the operator page GET /ui drive)
#   docker.io, debootstrap and docker-compose (the Docker sandbox backend and the compose deployment:
#       the engine, the tool that builds their images from Debian packages, scripts/build_sandbox_image.sh,
#       and compose for tests/deploy/test_compose_smoke.py)
# Debian/Ubuntu (apt-get) only; elsewhere it says what to install. Needs root, or sudo.
#
# A tool counts as present only where the sandbox can see it: programs run with
# PATH=/usr/local/bin:/usr/bin:/bin and a read-only /usr, so a compiler in a home folder
# (rustup's ~/.cargo/bin, say) does not count.
set -eu

SANDBOX_PATH=/usr/local/bin:/usr/bin:/bin
have() { PATH=$SANDBOX_PATH command -v "$1" >/dev/null 2>&1; }

missing=""
have bwrap || missing="$missing bubblewrap"
have g++ || missing="$missing g++"
have node || missing="$missing nodejs"
have go || missing="$missing golang-go"
have javac || missing="$missing default-jdk-headless"
have rustc || missing="$missing rustc"
have tsc || missing="$missing node-typescript"
have bash || missing="$missing bash"
have chromium || missing="$missing chromium"
have chromedriver || missing="$missing chromium-driver"
/usr/bin/python3 -c "import seccomp" >/dev/null 2>&1 || missing="$missing python3-seccomp"
# Debian's engine; its package starts no daemon here (.ci/run starts dockerd, without a bridge)
PATH=/usr/sbin:/usr/bin:/sbin:/bin command -v dockerd >/dev/null 2>&1 || missing="$missing docker.io"
PATH=/usr/sbin:/usr/bin:/sbin:/bin command -v debootstrap >/dev/null 2>&1 || missing="$missing debootstrap"
# compose for the deployment's smoke test: Debian's docker-compose (1.29) where no v2 plugin is there
command -v docker-compose >/dev/null 2>&1 || docker compose version >/dev/null 2>&1 || missing="$missing docker-compose"

versions() {
    echo "system dependencies present: bwrap $(bwrap --version 2>/dev/null | cut -d' ' -f2), g++ $(g++ -dumpversion)," \
        "node $(node --version), $(PATH=$SANDBOX_PATH go version | cut -d' ' -f3)," \
        "javac $(PATH=$SANDBOX_PATH javac -version 2>&1 | cut -d' ' -f2), $(PATH=$SANDBOX_PATH rustc --version | cut -d' ' -f1-2)," \
        "tsc $(PATH=$SANDBOX_PATH tsc --version | cut -d' ' -f2), bash ${BASH_VERSION:-$(bash -c 'echo $BASH_VERSION')}," \
        "python3-seccomp, $(chromium --version 2>/dev/null), $(/usr/sbin/dockerd --version 2>/dev/null | cut -d, -f1)," \
        "debootstrap $(dpkg-query -W -f '${Version}' debootstrap 2>/dev/null)"
}

if [ -z "$missing" ]; then
    versions
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
# No service may start during the install: Debian's docker.io would start dockerd with its default
# bridge and NAT rules. policy-rc.d answering 101 forbids it (kept if the machine has one already).
policy=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy=/usr/sbin/policy-rc.d
    $as_root sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod 755 $policy"
fi
# shellcheck disable=SC2086 # the package list is meant to split into words
$as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
[ -z "$policy" ] || $as_root rm -f "$policy"
versions

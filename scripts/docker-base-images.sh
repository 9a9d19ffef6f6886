#!/usr/bin/env bash
# Makes the two base images the Dockerfile builds FROM, on a machine that cannot pull them:
#
#   debian:bookworm-slim                  Debian 12 from `debootstrap --variant=minbase`,
#                                         slimmed as the official image is (no docs, man pages
#                                         or locales), imported with `docker import`
#   health-warehouse-swift:6.3-bookworm   that image plus the Swift toolchain installed on this
#                                         machine (/opt/swift), built from
#                                         deploy/docker/swift-toolchain.Dockerfile
#
#   bash scripts/docker-base-images.sh    # then:
#   docker build --build-arg SWIFT_IMAGE=health-warehouse-swift:6.3-bookworm -t health-warehouse:local .
#
# An image that already exists is left alone, a real pulled one included. Needs root (debootstrap),
# a running Docker engine and Debian's mirror. Variables: RUNTIME_IMAGE, SWIFT_IMAGE,
# SWIFT_TOOLCHAIN (default /opt/swift), DEBIAN_MIRROR, BASE_IMAGES_WORK (a scratch folder).
set -euo pipefail

repository="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runtime_image="${RUNTIME_IMAGE:-debian:bookworm-slim}"
swift_image="${SWIFT_IMAGE:-health-warehouse-swift:6.3-bookworm}"
toolchain="${SWIFT_TOOLCHAIN:-/opt/swift}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
work="${BASE_IMAGES_WORK:-/var/tmp/health-warehouse-base-images}"

step() { echo "docker-base-images: $*" >&2; }
fail() { echo "docker-base-images: error: $*" >&2; exit 1; }

docker info >/dev/null 2>&1 || fail "no Docker engine answers (start dockerd, or check DOCKER_HOST)"

if docker image inspect "$runtime_image" >/dev/null 2>&1; then
  step "$runtime_image is there"
else
  [ "$(id -u)" -eq 0 ] || fail "debootstrap needs root to make $runtime_image"
  command -v debootstrap >/dev/null || fail "debootstrap is missing: apt-get install debootstrap"
  rootfs="$work/bookworm-slim"
  rm -rf "$rootfs"
  mkdir -p "$work/debs"
  step "debootstrap bookworm (minbase) into $rootfs"
  debootstrap --variant=minbase --cache-dir="$work/debs" bookworm "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || fail "debootstrap failed: see $work/debootstrap.log"
  # What debuerreotype does for the official slim image: the same sources (updates and
  # security too), no documentation installed now or later, no package cache kept.
  rm -f "$rootfs/etc/apt/sources.list"
  cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<'SOURCES'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker" <<'DPKG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/man/*
DPKG
  cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'APT'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
APT
  echo 'APT::Install-Recommends "false";' >"$rootfs/etc/apt/apt.conf.d/docker-no-recommends"
  find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$rootfs"/usr/share/{groff,info,linda,lintian,locale,man}/* "$rootfs"/var/cache/apt/*.bin \
         "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/*.log
  step "importing $rootfs as $runtime_image"
  tar --numeric-owner -C "$rootfs" -c . | docker import --change 'CMD ["bash"]' - "$runtime_image" >/dev/null
  rm -rf "$rootfs"
fi

if docker image inspect "$swift_image" >/dev/null 2>&1; then
  step "$swift_image is there"
else
  [ -x "$toolchain/usr/bin/swift" ] || fail "no Swift toolchain at $toolchain (set SWIFT_TOOLCHAIN)"
  mkdir -p "$work"
  step "building $swift_image from $runtime_image and $toolchain"
  # The context is a tar stream: the Dockerfile, and the toolchain's usr/ without what a build
  # never runs (the debugger, the language server, documentation tools: about 1 GB).
  tar -c -C "$repository/deploy/docker" swift-toolchain.Dockerfile \
      -C "$toolchain" \
      --exclude='usr/bin/lldb*' --exclude='usr/lib/liblldb*' --exclude='usr/bin/repl_swift' \
      --exclude='usr/bin/sourcekit-lsp' --exclude='usr/lib/libsourcekitdInProc.so' --exclude='usr/lib/libSwiftSourceKit*' \
      --exclude='usr/bin/clangd' --exclude='usr/bin/docc' --exclude='usr/share/docc' --exclude='usr/bin/swift-format' \
      usr \
    | docker build --build-arg "BASE_IMAGE=$runtime_image" -f swift-toolchain.Dockerfile -t "$swift_image" - \
      >"$work/swift-image.log" 2>&1 \
    || { tail -n 20 "$work/swift-image.log" >&2; fail "building $swift_image failed: see $work/swift-image.log"; }
fi

docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E "^($runtime_image|$swift_image) " >&2 || true

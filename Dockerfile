# health-warehouse in a slim Debian image: the receiver (`serve`) and every other command.
#
#   docker build -t health-warehouse:local .
#   docker run --rm health-warehouse:local --help
#
# Where the official base images cannot be pulled, scripts/docker-base-images.sh makes local
# ones (debootstrap, and the Swift toolchain installed on the machine); name them with
#   docker build --build-arg SWIFT_IMAGE=health-warehouse-swift:6.3-bookworm -t health-warehouse:local .
# No BuildKit-only syntax: the classic builder and BuildKit both build it, offline too.
#
# Both stages are Debian 12 (bookworm), so the -dev packages the build links against and the
# runtime libraries installed below are the same builds. Tests/DeploymentTests checks that the
# runtime stage installs every shared library the binary links (ldd + dpkg -S).

ARG SWIFT_IMAGE=swift:6.3-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

# ---------------------------------------------------------------------------------------------
FROM ${SWIFT_IMAGE} AS build

RUN export DEBIAN_FRONTEND=noninteractive \
 && apt-get -q update \
 && apt-get -q install -y --no-install-recommends \
      libpq-dev libmicrohttpd-dev zlib1g-dev libssl-dev libxml2-dev libzip-dev libgnutls28-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /src
# The package has no remote dependencies: nothing to resolve first. .dockerignore keeps
# .build, .git, .env and data folders out of the context.
COPY . .

# The Swift runtime is linked statically; only Debian's C libraries stay shared.
RUN swift build -c release --static-swift-stdlib --product health-warehouse \
 && mkdir -p /staging \
 && cp "$(swift build -c release --static-swift-stdlib --show-bin-path)/health-warehouse" /staging/ \
 && cp /usr/libexec/swift/linux/swift-backtrace-static /staging/

# ---------------------------------------------------------------------------------------------
FROM ${RUNTIME_IMAGE}

# One line per library the binary links (see `ldd health-warehouse`):
#   libpq5 (libpq.so.5), libmicrohttpd12 (libmicrohttpd.so.12), zlib1g (libz.so.1),
#   libssl3 (libcrypto.so.3), libxml2 (libxml2.so.2), libzip4 (libzip.so.4), libgnutls30
#   (libgnutls.so.30: checking a TLS pair and its expiry; serve --tls-cert), libstdc++6 and libgcc-s1 (the statically linked Swift runtime's
#   C++ and unwinder); libc6 is in every Debian image. ca-certificates for TLS to an external
#   PostgreSQL (sslmode=verify-full sslrootcert=/etc/ssl/certs/ca-certificates.crt).
RUN export DEBIAN_FRONTEND=noninteractive \
 && apt-get -q update \
 && apt-get -q install -y --no-install-recommends \
      libpq5 \
      libmicrohttpd12 \
      zlib1g \
      libssl3 \
      libxml2 \
      libzip4 \
      libgnutls30 \
      libstdc++6 \
      libgcc-s1 \
      ca-certificates \
 && rm -rf /var/lib/apt/lists/*

RUN useradd --system --uid 10001 --user-group --home-dir /nonexistent --shell /usr/sbin/nologin warehouse

COPY --from=build /staging/health-warehouse /usr/local/bin/health-warehouse
COPY --from=build /staging/swift-backtrace-static /usr/local/libexec/swift-backtrace-static
COPY deploy/refuse-placeholders.sh /usr/local/libexec/refuse-placeholders.sh

# A crash prints a symbolicated backtrace to the log instead of nothing.
ENV SWIFT_BACKTRACE=enable=yes,sanitize=yes,threads=all,images=all,interactive=no,swift-backtrace=/usr/local/libexec/swift-backtrace-static

USER warehouse:warehouse
WORKDIR /tmp
EXPOSE 8080

# DATABASE_URL must be set (compose.yaml does): without it the binary would try to run an
# embedded PostgreSQL, which this image does not contain. Every command starts through
# refuse-placeholders.sh: a password still .env.example's `change-me…` stops it with a message.
ENTRYPOINT ["sh", "/usr/local/libexec/refuse-placeholders.sh", "health-warehouse"]
CMD ["serve", "--listen", "0.0.0.0:8080"]

# A Swift build image made from a toolchain already installed on this machine, for the
# Dockerfile's build stage where `swift:6.3-bookworm` cannot be pulled (scripts/docker-base-images.sh
# builds it; nothing else needs it). The toolchain lands in /usr, where the official swift
# images keep it, so the Dockerfile's paths are the same with either image.
#
# The build context is a tar stream of this file and the toolchain's usr/ folder (the script
# makes it), never the repository.

ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}

# What the toolchain's own programs link (libcurl4, libedit2, libxml2, libsqlite3-0,
# libncurses6, libuuid1: `ldd` over its bin/ and lib/), and what linking a program needs (the C
# library's and libstdc++'s development files, binutils, pkg-config for the system-library
# targets).
RUN export DEBIAN_FRONTEND=noninteractive \
 && apt-get -q update \
 && apt-get -q install -y --no-install-recommends \
      binutils \
      libc6-dev \
      libgcc-12-dev \
      libstdc++-12-dev \
      libcurl4 \
      libedit2 \
      libxml2 \
      libsqlite3-0 \
      libncurses6 \
      libuuid1 \
      pkg-config \
      ca-certificates \
      tzdata \
 && rm -rf /var/lib/apt/lists/*

COPY usr/ /usr/

RUN swift --version

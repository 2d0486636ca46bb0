#!/usr/bin/env bash
# Installs the Debian 12 packages Tandem builds, tests and runs with. Idempotent: when every
# package is present it only checks and returns. Needs root (or sudo) the first time.
set -euo pipefail

packages=(
    build-essential cmake ninja-build pkg-config git
    libvulkan-dev vulkan-validationlayers mesa-vulkan-drivers vulkan-tools glslc xvfb xauth
    libxcb1-dev
    mpv ffmpeg
    libglm-dev libfmt-dev libcli11-dev nlohmann-json3-dev
    libgtest-dev libgmock-dev libbenchmark-dev libtinygltf-dev libstb-dev
    spirv-tools libspirv-cross-c-shared-dev
    clang-format python3
    clang libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

echo "tandem: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "tandem: run as root or install sudo" >&2; exit 1; }
    sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

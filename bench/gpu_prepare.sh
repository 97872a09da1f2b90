#!/usr/bin/env bash
# Builds what bench/gpu.sh needs on a GPU machine that can reach no package registry, here, to
# be carried there (docs/cuda.md, "On a GPU machine"):
#   build-gpu/         pbf, tests/test_cuda and tests/test_cuda_api with the CUDA backend
#                      (no mesh import, MPI or renderer: fewer libraries to carry), and lib/ with
#                      the shared libraries they need beyond glibc and libstdc++
#   build-gpu-render/  pbf with the renderer too (`pbf bench --render`), and its lib/
#   .gl/               the GL loader packages (glvnd's libEGL, libGL, ...) to unpack there
# Then, on the GPU machine, with those paths carried:
#   for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
#   export LD_LIBRARY_PATH=$PWD/build-gpu/lib:$PWD/build-gpu-render/lib
#   export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
#   PBF_PREBUILT=1 bash bench/gpu.sh out/gpu
# Usage: bash bench/gpu_prepare.sh        (after scripts/install-deps.sh; JOBS, default nproc)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
common=(-DCMAKE_BUILD_TYPE=Release -DPBF_CUDA=ON -DPBF_MESH=OFF -DPBF_MPI=OFF)

cmake -S . -B build-gpu "${common[@]}" -DPBF_RENDER=OFF >/dev/null
cmake --build build-gpu -j"$jobs" --target pbf_cli test_cuda test_cuda_api
cmake -S . -B build-gpu-render "${common[@]}" -DPBF_RENDER=ON -DPBF_BUILD_TESTS=OFF >/dev/null
cmake --build build-gpu-render -j"$jobs" --target pbf_cli

# copy_libs DIR BINARY...: the libraries the binaries load, less glibc's, libstdc++, libgcc and
# the GL loaders (.gl/ brings those, the NVIDIA driver the rest)
copy_libs() {
    local dir=$1
    shift
    mkdir -p "$dir"
    ldd "$@" | awk '$3 ~ /^\// { print $3 }' | sort -u | while read -r lib; do
        case "$(basename "$lib")" in
        libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | ld-linux*) ;;
        libstdc++.so.* | libgcc_s.so.*) ;;
        libEGL.so.* | libGL.so.* | libGLX.so.* | libGLdispatch.so.* | libOpenGL.so.*) ;;
        *) cp -L "$lib" "$dir/" ;;
        esac
    done
}
copy_libs build-gpu/lib build-gpu/pbf build-gpu/tests/test_cuda build-gpu/tests/test_cuda_api
copy_libs build-gpu-render/lib build-gpu-render/pbf

# the GL loaders, for this machine's architecture list regardless of what it is
mkdir -p .gl /tmp/pbf-apt-amd64/partial
o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/pbf-apt-amd64)
apt-get "${o[@]}" update >/dev/null
(cd .gl && apt-get "${o[@]}" download libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 \
    >/dev/null 2>&1)

echo "bench/gpu_prepare.sh: carry build-gpu/pbf build-gpu/tests/test_cuda" \
    "build-gpu/tests/test_cuda_api build-gpu/lib build-gpu-render/pbf build-gpu-render/lib .gl"
du -sh build-gpu/lib build-gpu-render/lib .gl

#!/usr/bin/env bash
# Builds what bench/gpu.sh needs on a GPU machine that can reach no package registry, here, and
# gathers it in one folder to carry there, .gpu/ (docs/cuda.md, "On a GPU machine"):
#   .gpu/build-gpu/         pbf, tests/test_cuda, tests/test_cuda_api and
#                           tests/test_surface_gpu with the CUDA backend (no mesh import, MPI, OpenVDB or
#                           renderer: fewer libraries), and lib/ with the shared libraries they
#                           need beyond glibc and libstdc++
#   .gpu/build-gpu-render/  pbf with the renderer too (`pbf bench --render`, `pbf view
#                           --offscreen`), test_render_cuda, and their lib/
#   .gpu/gl/                the GL loader packages (glvnd's libEGL, libGL, ...) to unpack there
#   .gpu/validation/        the measured dam-break data of ../shared/validation, where present
# Then, on the GPU machine, with .gpu carried:
#   for f in .gpu/gl/*.deb; do dpkg -x $f /; done; ldconfig
#   export LD_LIBRARY_PATH=$PWD/.gpu/build-gpu/lib:$PWD/.gpu/build-gpu-render/lib
#   export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
#   export PBF_VALIDATION_DATA=$PWD/.gpu/validation
#   PBF_PREBUILT=1 BUILD_DIR=.gpu/build-gpu RENDER_BUILD_DIR=.gpu/build-gpu-render \
#       bash bench/gpu.sh out/gpu
# Usage: bash bench/gpu_prepare.sh        (after scripts/install-deps.sh; JOBS, default nproc)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
common=(-DCMAKE_BUILD_TYPE=Release -DPBF_CUDA=ON -DPBF_MESH=OFF -DPBF_MPI=OFF -DPBF_VDB=OFF)

cmake -S . -B build-gpu "${common[@]}" -DPBF_RENDER=OFF >/dev/null
cmake --build build-gpu -j"$jobs" --target pbf_cli test_cuda test_cuda_api test_surface_gpu
cmake -S . -B build-gpu-render "${common[@]}" -DPBF_RENDER=ON -DPBF_BUILD_TESTS=ON >/dev/null
cmake --build build-gpu-render -j"$jobs" --target pbf_cli test_render_cuda

rm -rf .gpu
mkdir -p .gpu/build-gpu/tests .gpu/build-gpu-render .gpu/gl
cp build-gpu/pbf .gpu/build-gpu/
cp build-gpu/tests/test_cuda build-gpu/tests/test_cuda_api build-gpu/tests/test_surface_gpu \
    .gpu/build-gpu/tests/
cp build-gpu-render/pbf "$(find build-gpu-render -name test_render_cuda -type f | head -1)" \
    .gpu/build-gpu-render/

# copy_libs DIR BINARY...: the libraries the binaries load, less glibc's, libstdc++, libgcc and
# the GL loaders (gl/ brings those, the NVIDIA driver the rest)
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
copy_libs .gpu/build-gpu/lib .gpu/build-gpu/pbf .gpu/build-gpu/tests/*
copy_libs .gpu/build-gpu-render/lib .gpu/build-gpu-render/pbf \
    .gpu/build-gpu-render/test_render_cuda

# the GL loaders, for this machine's architecture list regardless of what it is
mkdir -p /tmp/pbf-apt-amd64/partial
o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/pbf-apt-amd64)
apt-get "${o[@]}" update >/dev/null
(cd .gpu/gl && apt-get "${o[@]}" download libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 \
    >/dev/null 2>&1)

data=${PBF_VALIDATION_DATA:-../shared/validation}
if [ -d "$data" ]; then cp -r "$data" .gpu/validation; fi

echo "bench/gpu_prepare.sh: carry .gpu"
du -sh .gpu

#!/usr/bin/env bash
# Installs the Debian 12 packages pbf needs to build, test, render and plot, and to build and
# test the Python package.
# Safe to run again: apt-get skips what is already there. Needs root (or sudo).
set -euo pipefail

packages=(
  build-essential cmake pkg-config          # toolchain
  ninja-build                               # the builds of scripts/test.sh (make works too)
  libcjson-dev                              # scene files
  zlib1g-dev                                # CRC-32 of checkpoint files
  libassimp-dev                             # triangle meshes as solids (OBJ, STL, PLY)
  libopenvdb-dev libboost-dev               # OpenVDB level sets of the surface (docs/surface.md)
  blender                                   # the test that opens a .vdb in Blender and renders it
  libopenmpi-dev openmpi-bin                # runs split over MPI processes (docs/mpi.md)
  libpng-dev                                # rendered frames
  libegl-dev libgl-dev libegl-mesa0 libgl1-mesa-dri libglfw3-dev   # OpenGL: EGL headless, GLFW windows
  xvfb xauth                                # a real window for the viewer test on headless machines
  ffmpeg                                    # H.264 video through a pipe; side-by-side pictures
  fonts-dejavu-core                         # the labels of scripts/param_pictures.sh
  gnuplot-nox                               # plots (forces, validation)
  clang libclang-rt-14-dev libomp-14-dev    # libFuzzer (scripts/fuzz.sh): clang, its runtimes, OpenMP
  valgrind                                  # memcheck run of the test suite
  python3-dev python3-setuptools python3-numpy python3-venv python3-pip   # the Python package
  python3-pytest python3-mypy               # its tests (pytest; stubtest checks the .pyi stubs)
  python3-h5py                              # pbf dataset: LagrangeBench's HDF5 layout (docs/datasets.md)
  python3                                   # test helpers
  blender python3-pil                       # the Blender add-on and its test (docs/blender.md)
  paraview python3-paraview                 # pbf paraview and its test (pvbatch under xvfb-run)
)

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"

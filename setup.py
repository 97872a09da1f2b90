"""Builds the extension module pbf._core with CMake (python/CMakeLists.txt).

CMake builds the static libraries pbf and pbf_render with position-independent code (tests
off) and links them into the module; this file copies the module where setuptools expects it.
Everything comes from the repository and Debian packages: nothing is downloaded.

Environment (all optional):
  PBF_CUDA=AUTO|ON|OFF      the CUDA backend (default AUTO: built when nvcc is found)
  PBF_RENDER=AUTO|ON|OFF    the renderer (default AUTO: built when EGL, GL headers, libpng are)
  PBF_VDB=AUTO|ON|OFF       OpenVDB level sets (default OFF: the module has no binding for them,
                            and OpenVDB's templates take about a CPU minute to compile)
  PBF_PYTHON_BUILD_DIR=DIR  CMake's build folder (default build/python-<interpreter>)
  PBF_BUILD_JOBS=N          parallel compile jobs (default: the CPU count)
  PBF_PYTHON_MODULE=FILE    a module already built by a CMake build folder configured with
                            -DPBF_PYTHON=ON (its python/_core*.so): copied instead of building
                            the libraries again (scripts/test_python.sh, after the release build)
"""

import os
import re
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def library_version():
    """PBF_VERSION_STRING of include/pbf/base.h: the package has the library's version."""
    with open(os.path.join(ROOT, "include", "pbf", "base.h"), encoding="utf-8") as f:
        return re.search(r'#define PBF_VERSION_STRING "([^"]+)"', f.read()).group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        target = self.get_ext_fullpath(ext.name)
        prebuilt = os.environ.get("PBF_PYTHON_MODULE")
        if prebuilt:
            if not os.path.isfile(prebuilt):
                raise RuntimeError(f"pbf: PBF_PYTHON_MODULE={prebuilt}: no such file (a module "
                                   "built with cmake -DPBF_PYTHON=ON, target pbf_python)")
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(prebuilt, target)
            return
        if shutil.which("cmake") is None:
            raise RuntimeError("pbf: cmake is needed to build the module (apt-get install cmake; "
                               "scripts/install-deps.sh installs everything)")
        tag = sys.implementation.cache_tag + "-" + sysconfig.get_platform()
        build_dir = os.environ.get("PBF_PYTHON_BUILD_DIR") or os.path.join(ROOT, "build",
                                                                           "python-" + tag)
        jobs = os.environ.get("PBF_BUILD_JOBS") or str(os.cpu_count() or 1)
        configure = [
            "cmake", "-S", ROOT, "-B", build_dir,
            "-DCMAKE_BUILD_TYPE=Release",
            "-DCMAKE_POSITION_INDEPENDENT_CODE=ON",
            "-DPBF_BUILD_TESTS=OFF",
            "-DPBF_PYTHON=ON",
            "-DPBF_CUDA=" + os.environ.get("PBF_CUDA", "AUTO"),
            "-DPBF_RENDER=" + os.environ.get("PBF_RENDER", "AUTO"),
            "-DPBF_VDB=" + os.environ.get("PBF_VDB", "OFF"),
            "-DPython3_EXECUTABLE=" + sys.executable,
        ]
        subprocess.check_call(configure)
        subprocess.check_call(["cmake", "--build", build_dir, "--target", "pbf_python",
                               "-j", jobs])
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = os.path.join(build_dir, "python", "_core" + suffix)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built, target)


setup(
    version=library_version(),
    ext_modules=[Extension("pbf._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
)

"""The API is typed and documented: the .pyi stubs match the module (mypy's stubtest) and every
public name has a docstring. (`mypy --check-untyped-defs examples/python python/tests` checks
the examples and tests against the stubs; it is left out of the suite for its time.)"""

import importlib.util
import inspect
import subprocess
import sys

import pytest

import pbf

needs_mypy = pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                                reason="mypy is not installed (Debian: python3-mypy)")


@needs_mypy
def test_stubs_match_the_module(source_dir, tmp_path):
    allow = source_dir / "python" / "tests" / "stubtest_allowlist.txt"
    config = tmp_path / "mypy.ini"  # the cache of numpy's stubs is kept between runs
    config.write_text(f"[mypy]\ncache_dir = {source_dir / 'build' / 'mypy-cache-stubtest'}\n")
    done = subprocess.run([sys.executable, "-m", "mypy.stubtest", "pbf", "--allowlist", str(allow),
                           "--mypy-config-file", str(config)],
                          cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_everything_public_is_documented():
    missing = []
    for name in pbf.__all__:
        obj = getattr(pbf, name)
        if name.startswith("__") or isinstance(obj, (bool, str)):
            continue
        if not (obj.__doc__ or "").strip():
            missing.append(name)
        if inspect.isclass(obj) and not issubclass(obj, (BaseException, tuple)):
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                if not (getattr(member, "__doc__", None) or "").strip():
                    missing.append(f"{name}.{attr}")
    assert not missing, f"no docstring: {missing}"
    # signatures are visible to help() and IDEs
    assert str(inspect.signature(pbf.World.step)) == "(self, /, dt, steps=1)"
    assert "overrides" in str(inspect.signature(pbf.Scene.load))

"""Shared fixtures of the Python tests (run by scripts/test_python.sh, see docs/python.md).

PBF_SOURCE_DIR: the repository (default: two folders up); PBF_CLI: the `pbf` command to compare
against (default: build/pbf in the repository); tests that need it are skipped without it."""

import os
import shutil
from pathlib import Path

import pytest

import pbf

SOURCE_DIR = Path(os.environ.get("PBF_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SCENES = SOURCE_DIR / "scenes"

# The coarse dam break of the command-line tests: 1,500 particles, a few ms per step. One
# thread: the 2-core test machine is shared, and results do not depend on the count.
COARSE = {"fluid.particle_radius": 0.02, "solver.threads": 1}


@pytest.fixture
def source_dir() -> Path:
    return SOURCE_DIR


@pytest.fixture
def dam_break() -> Path:
    return SCENES / "dam_break.json"


@pytest.fixture
def coarse_scene() -> pbf.Scene:
    return pbf.Scene.load(SCENES / "dam_break.json", COARSE)


@pytest.fixture
def pbf_cli() -> str:
    cli = os.environ.get("PBF_CLI") or str(SOURCE_DIR / "build" / "pbf")
    if not (os.path.isfile(cli) and os.access(cli, os.X_OK)) and shutil.which(cli) is None:
        pytest.skip(f"the pbf command is not built ({cli}; set PBF_CLI)")
    return cli

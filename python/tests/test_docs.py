"""docs/python.md runs as written: its ```python snippets, in order and in one namespace, in a
folder laid out like a fresh checkout (the repository's scenes/, no out/), as a reader would
paste them into `.venv/bin/python` from the repository's folder."""

import re

import pytest

import pbf


def snippets(source_dir):
    text = (source_dir / "docs" / "python.md").read_text()
    return re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)


def test_python_md_snippets_run(tmp_path, source_dir, monkeypatch, capsys):
    blocks = snippets(source_dir)
    assert len(blocks) >= 2, "docs/python.md: no python snippets found"
    (tmp_path / "scenes").symlink_to(source_dir / "scenes")
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__main__"}
    ran = 0
    for i, code in enumerate(blocks, 1):
        if "Renderer(" in code and not pbf.HAVE_RENDER:
            continue  # the module was built without the renderer: that snippet cannot run
        if "world.split(" in code:
            continue  # runs under mpirun, on two ranks: test_mpi.py
        exec(compile(code, f"docs/python.md, python snippet {i}", "exec"), namespace)
        ran += 1
    assert ran >= 1
    # what the first snippet says it does: a world stepped through the scene's frames, the
    # last frame exported as `pbf run` writes it
    world, scene = namespace["world"], namespace["scene"]
    assert world.time == pytest.approx(scene.frames * scene.dt, rel=1e-5)
    last = pbf.read_particles(str(tmp_path / "out" / "last.ply"))
    assert len(last.ids) == world.particle_count == scene.particle_count
    assert (last.positions == world.positions()).all()
    step_ms, energy = (float(v) for v in capsys.readouterr().out.split()[:2])
    assert step_ms > 0.0 and energy > 0.0
    if pbf.HAVE_RENDER:
        image = pbf.read_png(str(tmp_path / "out" / "frame.png"))
        assert image.shape == (360, 640, 4)
        assert len({tuple(p) for p in image.reshape(-1, 4)[::97]}) > 20  # a picture, not a fill

"""Scenes through Python: loading, overrides, dicts, and the library's errors as exceptions."""

import json
import pickle

import pytest

import pbf


def test_load_with_overrides(dam_break):
    scene = pbf.Scene.load(dam_break, {"solver.iterations": 6, "time.frames": 10,
                                       "output.format": ["ply", "vtk"]})
    assert scene.name == "dam_break"
    assert scene.source == str(dam_break)
    assert scene.frames == 10
    assert scene.formats == ["ply", "vtk"]
    assert scene.to_dict()["solver"]["iterations"] == 6
    # the same overrides in the command line's form
    same = pbf.Scene.load(dam_break, ["solver.iterations=6", "time.frames=10",
                                      'output.format=["ply","vtk"]'])
    assert same.to_json() == scene.to_json()


def test_dt_is_the_float_pbf_run_steps(dam_break):
    scene = pbf.Scene.load(dam_break, {"time.fps": 7}, check=False)
    # 1/7 rounded to single precision, not the double 1/7
    assert scene.dt == pytest.approx(1 / 7, rel=1e-7)
    assert scene.dt != 1 / 7
    import numpy as np
    assert scene.dt == float(np.float32(1) / np.float32(7))


def test_from_dict_round_trip(dam_break):
    scene = pbf.Scene.load(dam_break)
    again = pbf.Scene.from_dict(scene.to_dict(), source=str(dam_break))
    assert again.to_json() == scene.to_json()
    assert again.particle_count == scene.particle_count == 49152
    text = pbf.Scene.from_json(scene.to_json())
    assert text.to_json() == scene.to_json()
    copy = pickle.loads(pickle.dumps(scene))
    assert copy.to_json() == scene.to_json()


def test_default_scene():
    scene = pbf.Scene.default({"time.frames": 3})
    assert scene.source == "<built-in>"
    assert scene.frames == 3
    assert scene.particle_count > 0


def test_missing_file(tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(pbf.FileError) as e:
        pbf.Scene.load(missing)
    assert str(missing) in str(e.value)
    assert e.value.status == "io"
    assert isinstance(e.value, OSError)


def test_unknown_key_names_the_key():
    with pytest.raises(pbf.ParseError) as e:
        pbf.Scene.from_dict({"solver": {"iteratons": 3}})
    message = str(e.value)
    assert "<dict>" in message and "solver.iteratons" in message and "iterations" in message
    assert e.value.status == "parse"
    assert isinstance(e.value, ValueError)


def test_out_of_range_value():
    with pytest.raises(pbf.InvalidArgumentError) as e:
        pbf.Scene.default({"solver.iterations": 0})
    assert "solver.iterations" in str(e.value)


def test_broken_json():
    with pytest.raises(pbf.ParseError) as e:
        pbf.Scene.from_json('{"name": ', source="broken.json")
    assert "broken.json" in str(e.value)


def test_bad_override_forms():
    with pytest.raises(TypeError):
        pbf.Scene.default(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        pbf.Scene.default([1, 2])  # type: ignore[list-item]
    with pytest.raises(pbf.Error):
        pbf.Scene.default(["no-equals-sign"])


def test_check_warnings_and_errors():
    # particles starting inside a collider: a warning, not an error
    data = {"fluid": {"blocks": [{"min": [0, 0, 0], "max": [0.2, 0.2, 0.2]}]},
            "colliders": [{"type": "sphere", "center": [0.1, 0.1, 0.1], "radius": 0.05}]}
    with pytest.warns(pbf.SceneWarning, match="collider"):
        scene = pbf.Scene.from_dict(data)
    assert any("collider" in w for w in scene.check())
    # a time step in which gravity alone moves a particle past the kernel radius: an error
    with pytest.raises(pbf.InvalidArgumentError):
        pbf.Scene.from_dict({"time": {"fps": 1, "substeps": 1}})
    # unchecked, it loads
    pbf.Scene.from_dict({"time": {"fps": 1, "substeps": 1}}, check=False)


def test_scene_json_is_json(coarse_scene):
    assert json.loads(coarse_scene.to_json())["fluid"]["particle_radius"] == 0.02
    assert coarse_scene.camera["fov"] == 45.0
    assert coarse_scene.has_tool is False

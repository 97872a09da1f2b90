"""Rendering a world to a numpy image on a headless EGL context (Mesa's llvmpipe on a machine
without a GPU), and PNG files."""

import subprocess
import threading

import numpy as np
import pytest

import pbf

needs_renderer = pytest.mark.skipif(not pbf.HAVE_RENDER, reason="module built without the renderer")


@pytest.fixture(scope="module")
def renderer():
    with pbf.Renderer(width=160, height=90) as r:
        yield r


@needs_renderer
def test_render_a_world(renderer, coarse_scene):
    world = pbf.World(coarse_scene)
    world.step(coarse_scene.dt)
    image = renderer.render(world, camera=coarse_scene)
    assert image.dtype == np.uint8 and image.shape == (90, 160, 3)
    rgba = renderer.render(world, camera=coarse_scene, alpha=True)
    assert rgba.shape == (90, 160, 4) and np.array_equal(rgba[..., :3], image)
    # the fluid shows: the image differs from the same view of an empty tank
    empty = pbf.World(coarse_scene, fill=False)
    background = renderer.render(empty, camera=coarse_scene)
    changed = np.any(image != background, axis=2).mean()
    assert 0.02 < changed < 0.9
    assert renderer.settings()["width"] == 160
    assert "EGL" in renderer.description
    # a default camera, a camera of our own
    assert renderer.render(world).shape == (90, 160, 3)
    top = renderer.render(world, camera={"position": (0.8, 3.0, 0.21), "target": (0.8, 0.0, 0.2),
                                         "fov": 60})
    assert not np.array_equal(top, image)


@needs_renderer
def test_render_equals_pbf_run_png(tmp_path, renderer, pbf_cli, dam_break):
    subprocess.run([pbf_cli, "run", str(dam_break), "--frames", "2", "--out", str(tmp_path / "run"),
                    "--format", "none", "--png", str(tmp_path / "png"), "--resolution", "160x90",
                    "--quiet", "--threads", "1", "--set", "fluid.particle_radius=0.02"], check=True)
    scene = pbf.Scene.load(dam_break, {"fluid.particle_radius": 0.02})
    world = pbf.World(scene, threads=1)
    world.step(scene.dt, steps=2)
    image = renderer.render(world, camera=scene)
    cli = pbf.read_png(tmp_path / "png" / "frame_00002.png")
    assert cli.shape == (90, 160, 4)
    assert np.array_equal(cli[..., :3], image)


@needs_renderer
def test_renderer_errors(renderer, coarse_scene):
    with pytest.raises(pbf.InvalidArgumentError, match="4x720"):
        pbf.Renderer(width=4)
    with pytest.raises(ValueError, match="spheres"):
        pbf.Renderer(look="glass")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        renderer.render("not a world")  # type: ignore[arg-type]
    world = pbf.World(coarse_scene)
    with pytest.raises(ValueError, match="position"):
        renderer.render(world, camera={"fov": 30})
    # a GL context is current on one thread: another thread gets an error, not a crash
    errors = []

    def other_thread():
        try:
            renderer.render(world)
        except RuntimeError as e:
            errors.append(str(e))

    t = threading.Thread(target=other_thread)
    t.start()
    t.join()
    assert errors and "thread" in errors[0]


@needs_renderer
def test_png_round_trip(tmp_path):
    rgb = (np.arange(20 * 30 * 3) % 251).astype(np.uint8).reshape(20, 30, 3)
    pbf.write_png(tmp_path / "a.png", rgb)
    back = pbf.read_png(tmp_path / "a.png")
    assert back.shape == (20, 30, 4)
    assert np.array_equal(back[..., :3], rgb) and np.all(back[..., 3] == 255)
    with pytest.raises(ValueError):
        pbf.write_png(tmp_path / "b.png", np.zeros((4, 4), np.uint8))
    with pytest.raises(pbf.Error, match="missing.png"):
        pbf.read_png(tmp_path / "missing.png")


@pytest.mark.skipif(pbf.HAVE_RENDER, reason="module built with the renderer")
def test_without_renderer():
    with pytest.raises(pbf.UnsupportedError):
        pbf.Renderer()

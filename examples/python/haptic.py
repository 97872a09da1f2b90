#!/usr/bin/env python3
"""Drive the tool like a haptic device and plot the force on it (docs/python.md, docs/tool.md).

The tank and sphere of scenes/tool_sphere.json, stepped in 1 ms steps (the haptic loop). Every
step the "device" (here a function of time: lower the sphere into the water, stir it in a
circle, lift it out) gives the pose, world.set_tool_pose moves the sphere there over the step,
and world.tool_state() gives the force of the fluid ON the sphere in newtons: what a device
would render to the hand. The run writes forces.csv and, with gnuplot, forces.png.

Usage: .venv/bin/python examples/python/haptic.py [--out DIR] [--seconds 4]
           [--radius 0.0125] [--threads N] [--realtime] [--no-plot]
"""

import argparse
import math
import os
import shutil
import subprocess
import sys
import time

import numpy as np

import pbf

HERE = os.path.dirname(os.path.abspath(__file__))
SCENE = os.path.join(HERE, "..", "..", "scenes", "tool_sphere.json")

START = np.array([0.3, 0.4, 0.2])  # above the water (its surface is at 0.3 m)
DEPTH = 0.17                       # the centre's height while stirring
STIR_RADIUS, STIR_PERIOD = 0.08, 2.0


def smoothstep(u):
    """0 to 1 with zero slope at both ends: a hand starts and stops moving smoothly."""
    u = min(max(u, 0.0), 1.0)
    return u * u * (3.0 - 2.0 * u)


def device(t, seconds):
    """The device's position at time t: down for 1 s, stir, up in the last second."""
    down, up = 1.0, max(seconds - 1.0, 1.0)
    bottom = START + [0.0, DEPTH - START[1], 0.0]
    if t < down:
        return START + (bottom - START) * smoothstep(t / down)
    if t < up:
        # a circle in the horizontal plane through the bottom point, its radius opening and
        # closing over half a second (no jump in velocity: the force would spike)
        a = 2.0 * math.pi * (t - down) / STIR_PERIOD
        r = STIR_RADIUS * smoothstep((t - down) / 0.5) * smoothstep((up - t) / 0.5)
        return bottom + r * np.array([math.sin(a), 0.0, 1.0 - math.cos(a)])
    return bottom + (START - bottom) * smoothstep(t - up)


def plot(folder):
    """forces.png from forces.csv with gnuplot (the project's plotting tool)."""
    if shutil.which("gnuplot") is None:
        print("haptic.py: gnuplot not found, forces.png not drawn (apt-get install gnuplot-nox)",
              file=sys.stderr)
        return False
    script = """
set terminal pngcairo size 1000,700 font 'sans,10'
set output 'forces.png'
set datafile separator ','
set key top left
set multiplot layout 2,1
set title 'Force of the fluid on the tool (pbf, Python haptic loop)'
set ylabel 'force (N)'
plot 'forces.csv' using 1:5 with lines title 'F_x', '' using 1:6 with lines title 'F_y', \\
     '' using 1:7 with lines title 'F_z', '' using 1:8 with lines lw 2 title '|F|'
set title 'Tool centre'
set xlabel 'time (s)'
set ylabel 'position (m)'
plot 'forces.csv' using 1:2 with lines title 'x', '' using 1:3 with lines title 'y', \\
     '' using 1:4 with lines title 'z'
unset multiplot
"""
    done = subprocess.run(["gnuplot"], input=script, text=True, cwd=folder,
                          capture_output=True)
    if done.returncode != 0:
        print(f"haptic.py: gnuplot failed: {done.stderr.strip()}", file=sys.stderr)
        return False
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="out/haptic", help="output folder (default %(default)s)")
    parser.add_argument("--seconds", type=float, default=4.0, help="simulated seconds (default 4)")
    parser.add_argument("--radius", type=float, default=0.0125,
                        help="particle radius, m (default 0.0125: 4,600 particles)")
    parser.add_argument("--threads", type=int, default=0, help="CPU threads, 0 = all")
    parser.add_argument("--realtime", action="store_true",
                        help="pace the loop to the wall clock, as a device would")
    parser.add_argument("--no-plot", action="store_true", help="write forces.csv only")
    args = parser.parse_args(argv)

    # 1 ms steps of one substep: the haptic loop of docs/tool.md
    scene = pbf.Scene.load(SCENE, {"fluid.particle_radius": args.radius, "time.fps": 1000,
                                   "time.substeps": 1, "solver.threads": args.threads})
    world = pbf.World(scene)
    steps = int(round(args.seconds / scene.dt))
    rows = np.zeros((steps, 9))
    print(f"haptic.py: {world.particle_count} particles, {steps} steps of "
          f"{scene.dt * 1000:.3g} ms", file=sys.stderr)
    wall0 = time.perf_counter()
    for k in range(steps):
        t = (k + 1) * scene.dt
        world.set_tool_pose(device(t, args.seconds))
        world.step(scene.dt)
        s = world.tool_state()
        rows[k] = (s.time, *s.position, *s.total, math.hypot(*s.total), s.contacts)
        if args.realtime:
            late = time.perf_counter() - wall0 - t
            if late < 0:
                time.sleep(-late)
    wall = time.perf_counter() - wall0

    os.makedirs(args.out, exist_ok=True)
    csv = os.path.join(args.out, "forces.csv")
    header = "time_s,x_m,y_m,z_m,fx_N,fy_N,fz_N,f_N,contacts"
    tmp = csv + f".tmp.{os.getpid()}"
    np.savetxt(tmp, rows, delimiter=",", header=header, comments="", fmt="%.9g")
    os.replace(tmp, csv)  # complete or absent
    rate = steps / wall
    print(f"haptic.py: {rate:.0f} steps/s ({1000 / rate:.2f} ms per step; a device wants 1000), "
          f"largest |F| {rows[:, 7].max():.3f} N -> {csv}", file=sys.stderr)
    if not args.no_plot and plot(args.out):
        print(f"haptic.py: plot -> {os.path.join(args.out, 'forces.png')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# Pictures of what each fluid-material parameter does, for docs/physics.md and docs/scenes.md:
# for every parameter a small scene is run two or three times with only that parameter changed,
# the last frame of each run is rendered headless (`pbf run --png`, EGL) at 480x270, and the
# frames are put side by side, each labelled with its value, into docs/img/params/NAME.png
# (ffmpeg's hstack and drawtext; the labels need the DejaVu font of fonts-dejavu-core).
# Every run is coarse and short: 300 to 6,144 particles, 0.15 to 3 s of simulated time. On the
# shared 2-core machine at a load of about 10, most runs took 20-60 s and the longest,
# density's three 3-second oil_water runs (4,608 particles), about 5 minutes each; the 12
# pictures took about 45 minutes there, summed over the separate invocations that made them. The frame rate is lowered and the substeps raised so
# that dt = 1/240 s as in the shipped scenes while only a few frames are rendered.
# Usage: bash scripts/param_pictures.sh [NAME ...]   (default: all; PBF=path to the pbf binary,
#        default ./build/pbf; OUT=output folder, default docs/img/params; THREADS, default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
pbf=${PBF:-./build/pbf}
out=${OUT:-docs/img/params}
threads=${THREADS:-2}
font=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
size=480x270

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
export EGL_PLATFORM=${EGL_PLATFORM:-surfaceless}

# shot SCENE TAG SECONDS [--set ...]: runs $work/SCENE.json for SECONDS and keeps its last frame
# as $work/SCENE-TAG.png.
shot() {
    local scene=$1 tag=$2 seconds=$3
    shift 3
    local dir="$work/$scene-$tag"
    nice "$pbf" run "$work/$scene.json" --time "$seconds" --format none --out "$dir/run" \
        --png "$dir" --resolution "$size" --threads "$threads" --quiet "$@"
    local last
    last=$(ls "$dir"/frame_*.png | tail -n 1)
    cp "$last" "$work/$scene-$tag.png"
}

# strip NAME "LABEL1" IMG1 "LABEL2" IMG2 ...: the images side by side, 4 white pixels apart,
# each with its label in the top left corner, into $out/NAME.png (a 256-colour palette keeps the
# file small).
strip() {
    local name=$1
    shift
    local inputs=() filter="" n=0 stack=""
    while [ $# -gt 0 ]; do
        local label=$1 img=$2
        shift 2
        inputs+=(-i "$img")
        local text=""
        if [ -f "$font" ]; then
            printf '%s' "$label" >"$work/label$n.txt"
            text=",drawtext=fontfile=$font:textfile=$work/label$n.txt:x=8:y=8:fontsize=17:fontcolor=black:box=1:boxcolor=white@0.7:boxborderw=4"
        fi
        local pad=""
        if [ $# -gt 0 ]; then pad=",pad=iw+4:ih:0:0:white"; fi
        filter+="[$n:v]format=rgb24$text$pad[p$n];"
        stack+="[p$n]"
        n=$((n + 1))
    done
    filter+="${stack}hstack=inputs=$n,split[a][b];[a]palettegen=stats_mode=full[pal];[b][pal]paletteuse=dither=none"
    ffmpeg -loglevel error -y "${inputs[@]}" -filter_complex "$filter" -frames:v 1 "$work/$name.png"
    mv "$work/$name.png" "$out/$name.png"
    echo "param_pictures: $out/$name.png ($(stat -c %s "$out/$name.png") bytes)"
}

# --- surface tension: a zero-gravity cube of water, 1,000 particles (r = 3 mm), after 0.15 s.
surface_tension() {
    cat >"$work/tension.json" <<'EOF'
{
  "domain": {"min": [0, 0, 0], "max": [0.2, 0.2, 0.2]},
  "materials": [{"name": "water", "absorption": [40, 15, 7.5]}],
  "fluid": {"particle_radius": 0.003,
            "blocks": [{"min": [0.068, 0.068, 0.068], "max": [0.132, 0.132, 0.132]}]},
  "gravity": [0, 0, 0],
  "time": {"fps": 10, "substeps": 24},
  "camera": {"position": [0.1, 0.15, 0.3], "target": [0.1, 0.1, 0.1], "fov": 35}
}
EOF
    shot tension off 0.15
    shot tension weak 0.15 --set 'materials[0].surface_tension=0.01'
    shot tension water 0.15 --set 'materials[0].surface_tension=0.0728'
    strip surface_tension "σ = 0" "$work/tension-off.png" \
        "σ = 0.01 N/m" "$work/tension-weak.png" \
        "σ = 0.0728 N/m (water)" "$work/tension-water.png"
}

# --- adhesion of the walls: a 32 mm cube of water (512 particles, r = 2 mm, sigma = 0.0728 N/m)
# on the floor under a weak gravity (0.5 m/s^2), after 1.5 s: the wider the footprint, the more
# it wets (the setting of tests/test_materials.c: drop_spreads_with_adhesion).
adhesion() {
    cat >"$work/adhesion.json" <<'EOF'
{
  "domain": {"min": [0, 0, 0], "max": [0.1, 0.06, 0.1]},
  "materials": [{"name": "water", "surface_tension": 0.0728, "absorption": [40, 15, 7.5]}],
  "fluid": {"particle_radius": 0.002,
            "blocks": [{"min": [0.034, 0, 0.034], "max": [0.066, 0.032, 0.066]}]},
  "gravity": [0, -0.5, 0],
  "time": {"fps": 10, "substeps": 24},
  "camera": {"position": [0.05, 0.045, 0.125], "target": [0.05, 0.008, 0.05], "fov": 40}
}
EOF
    shot adhesion off 1.5
    shot adhesion sigma 1.5 --set domain.adhesion=0.0728
    shot adhesion twice 1.5 --set domain.adhesion=0.1456
    strip adhesion "W = 0" "$work/adhesion-off.png" \
        "W = σ = 0.0728 N/m" "$work/adhesion-sigma.png" \
        "W = 2σ = 0.1456 N/m" "$work/adhesion-twice.png"
}

# --- friction of the walls: a block of water 0.2 m long and 6 cm deep (r = 1 cm, 300 particles)
# sliding along +x at 1 m/s on the floor, after 0.5 s (tests/test_materials.c:
# friction_holds_the_slide). It started at x = 0.05-0.25 m.
friction() {
    cat >"$work/friction.json" <<'EOF'
{
  "domain": {"min": [0, 0, 0], "max": [1.0, 0.3, 0.2]},
  "materials": [{"name": "water", "absorption": [16, 6, 3]}],
  "fluid": {"particle_radius": 0.01,
            "blocks": [{"min": [0.05, 0, 0], "max": [0.25, 0.06, 0.2], "velocity": [1, 0, 0]}]},
  "time": {"fps": 10, "substeps": 24},
  "camera": {"position": [0.5, 0.35, 0.95], "target": [0.5, 0.02, 0.1], "fov": 45}
}
EOF
    shot friction off 0.5
    shot friction half 0.5 --set domain.friction=0.5
    shot friction two 0.5 --set domain.friction=2
    strip friction "μ = 0 (free-slip)" "$work/friction-off.png" \
        "μ = 0.5" "$work/friction-half.png" \
        "μ = 2" "$work/friction-two.png"
}

# --- adhesion of a collider: a 28 mm cube of water (343 particles, r = 2 mm, sigma = 0.0728 N/m)
# set 5 mm above a sphere collider of radius 2 cm under a weak gravity (0.5 m/s^2), after 1.5 s.
collider_adhesion() {
    cat >"$work/cadhesion.json" <<'EOF'
{
  "domain": {"min": [0, 0, 0], "max": [0.1, 0.1, 0.1]},
  "materials": [{"name": "water", "surface_tension": 0.0728, "absorption": [40, 15, 7.5]}],
  "fluid": {"particle_radius": 0.002,
            "blocks": [{"min": [0.036, 0.07, 0.036], "max": [0.064, 0.098, 0.064]}]},
  "colliders": [{"type": "sphere", "center": [0.05, 0.045, 0.05], "radius": 0.02}],
  "gravity": [0, -0.5, 0],
  "time": {"fps": 10, "substeps": 24},
  "camera": {"position": [0.05, 0.08, 0.17], "target": [0.05, 0.05, 0.05], "fov": 40}
}
EOF
    shot cadhesion off 1.5
    shot cadhesion sigma 1.5 --set 'colliders[0].adhesion=0.0728'
    shot cadhesion twice 1.5 --set 'colliders[0].adhesion=0.1456'
    strip collider_adhesion "W = 0" "$work/cadhesion-off.png" \
        "W = σ = 0.0728 N/m" "$work/cadhesion-sigma.png" \
        "W = 2σ = 0.1456 N/m" "$work/cadhesion-twice.png"
}

# --- friction of a collider: the sliding block of friction() on a box collider 4 cm high that
# covers the floor.
collider_friction() {
    cat >"$work/cfriction.json" <<'EOF'
{
  "domain": {"min": [0, 0, 0], "max": [1.0, 0.3, 0.2]},
  "materials": [{"name": "water", "absorption": [16, 6, 3]}],
  "fluid": {"particle_radius": 0.01,
            "blocks": [{"min": [0.05, 0.041, 0], "max": [0.25, 0.101, 0.2], "velocity": [1, 0, 0]}]},
  "colliders": [{"type": "box", "center": [0.5, 0.02, 0.1], "half_extents": [0.5, 0.02, 0.1]}],
  "time": {"fps": 10, "substeps": 24},
  "camera": {"position": [0.5, 0.39, 0.95], "target": [0.5, 0.06, 0.1], "fov": 45}
}
EOF
    shot cfriction off 0.5
    shot cfriction half 0.5 --set 'colliders[0].friction=0.5'
    shot cfriction two 0.5 --set 'colliders[0].friction=2'
    strip collider_friction "μ = 0 (free-slip)" "$work/cfriction-off.png" \
        "μ = 0.5" "$work/cfriction-half.png" \
        "μ = 2" "$work/cfriction-two.png"
}

# A coarse dam break (r = 12.5 mm, 6,144 particles) in the 1.6 x 0.8 x 0.4 m tank of
# scenes/splash.json, with one material whose keys the callers set.
dam_scene() {
    cat >"$work/$1.json" <<'EOF'
{
  "domain": {"min": [0, 0, 0], "max": [1.6, 0.8, 0.4]},
  "materials": [{"name": "water"}],
  "fluid": {"particle_radius": 0.0125, "blocks": [{"min": [0, 0, 0], "max": [0.4, 0.6, 0.4]}]},
  "time": {"fps": 10, "substeps": 24},
  "camera": {"position": [0.8, 1.0, 2.1], "target": [0.8, 0.3, 0.2], "fov": 45}
}
EOF
}

# --- surface drag: the coarse dam break after 0.6 s.
surface_drag() {
    dam_scene drag
    shot drag off 0.6
    shot drag mid 0.6 --set fluid.surface_drag=10
    shot drag strong 0.6 --set fluid.surface_drag=50
    strip surface_drag "c = 0" "$work/drag-off.png" \
        "c = 10 /s" "$work/drag-mid.png" \
        "c = 50 /s" "$work/drag-strong.png"
}

# --- XSPH: the coarse dam break after 1.0 s, as it runs up the far wall.
xsph() {
    dam_scene xsph
    shot xsph off 1.0 --set 'materials[0].xsph=0'
    shot xsph default 1.0
    shot xsph strong 1.0 --set 'materials[0].xsph=0.3'
    strip xsph "XSPH c = 0" "$work/xsph-off.png" \
        "c = 0.01 (default)" "$work/xsph-default.png" \
        "c = 0.3" "$work/xsph-strong.png"
}

# --- viscosity: a column 0.1 m wide and 0.2 m high in a channel 6 cm deep (r = 5 mm, 1,200
# particles, free-slip floor) collapsing for 0.3 s (tests/test_viscosity.c:
# viscosity_slows_spreading).
viscosity() {
    cat >"$work/viscosity.json" <<'EOF'
{
  "domain": {"min": [0, 0, 0], "max": [0.6, 0.3, 0.06]},
  "materials": [{"name": "water", "absorption": [24, 9, 4.5]}],
  "fluid": {"particle_radius": 0.005, "blocks": [{"min": [0, 0, 0], "max": [0.1, 0.2, 0.06]}]},
  "time": {"fps": 10, "substeps": 24},
  "camera": {"position": [0.3, 0.22, 0.75], "target": [0.3, 0.07, 0.03], "fov": 35}
}
EOF
    shot viscosity off 0.3
    shot viscosity honey 0.3 --set fluid.viscosity=0.01
    shot viscosity paste 0.3 --set fluid.viscosity=1
    strip viscosity "ν = 0" "$work/viscosity-off.png" \
        "ν = 0.01 m²/s (honey)" "$work/viscosity-honey.png" \
        "ν = 1 m²/s" "$work/viscosity-paste.png"
}

# --- gravity scale (buoyancy): a layer of a second fluid of the same density (golden) under
# water, in a tank 6 cm deep (r = 5 mm, 3,600 particles), after 1.5 s.
buoyancy() {
    cat >"$work/buoyancy.json" <<'EOF'
{
  "domain": {"min": [0, 0, 0], "max": [0.3, 0.3, 0.06]},
  "materials": [
    {"name": "water", "absorption": [24, 9, 4.5]},
    {"name": "light", "absorption": [6, 9, 45]}
  ],
  "fluid": {"particle_radius": 0.005, "blocks": [
    {"min": [0, 0, 0], "max": [0.3, 0.06, 0.06], "material": "light"},
    {"min": [0, 0.06, 0], "max": [0.3, 0.2, 0.06], "material": "water"}
  ]},
  "time": {"fps": 10, "substeps": 24},
  "camera": {"position": [0.15, 0.17, 0.7], "target": [0.15, 0.13, 0.03], "fov": 40}
}
EOF
    shot buoyancy one 1.5
    shot buoyancy zero 1.5 --set 'materials[1].gravity_scale=0'
    shot buoyancy neg 1.5 --set 'materials[1].gravity_scale=-1'
    strip buoyancy "gravity_scale = 1" "$work/buoyancy-one.png" \
        "0" "$work/buoyancy-zero.png" \
        "-1" "$work/buoyancy-neg.png"
}

# The oil_water scene at r = 12.5 mm (4,608 particles).
oil_scene() {
    sed -e 's/"particle_radius": 0.0075/"particle_radius": 0.0125/' \
        -e 's/"fps": 60, "frames": 300, "substeps": 4/"fps": 10, "substeps": 24/' \
        scenes/oil_water.json >"$work/$1.json"
}

# --- density of a second fluid: oil_water after 3 s with the oil's density changed, seen from
# lower down than the scene's camera so that the layers show.
density() {
    oil_scene density
    local low=(--set 'camera.position=[0.5, 0.3, 1.25]' --set 'camera.target=[0.5, 0.1, 0.15]'
               --set camera.fov=40)
    shot density light 3 "${low[@]}"
    shot density equal 3 "${low[@]}" --set 'materials[1].density=1000'
    shot density heavy 3 "${low[@]}" --set 'materials[1].density=1250'
    strip density "oil 800 kg/m³" "$work/density-light.png" \
        "oil 1000 kg/m³" "$work/density-equal.png" \
        "oil 1250 kg/m³" "$work/density-heavy.png"
}

# --- absorption: oil_water after 1 s with the oil's colour changed.
absorption() {
    oil_scene absorption
    shot absorption golden 1
    shot absorption water 1 --set 'materials[1].absorption=[8, 3, 1.5]'
    shot absorption red 1 --set 'materials[1].absorption=[1, 12, 14]'
    strip absorption "oil (1.5, 2.5, 12) /m" "$work/absorption-golden.png" \
        "oil (8, 3, 1.5) /m, as water" "$work/absorption-water.png" \
        "oil (1, 12, 14) /m" "$work/absorption-red.png"
}

# --- diffuse particles: scenes/splash.json (r = 12.5 mm) after 0.8 s.
diffuse() {
    sed -e 's/"fps": 60, "frames": 120, "substeps": 4/"fps": 10, "substeps": 24/' \
        scenes/splash.json >"$work/diffuse.json"
    shot diffuse off 0.8 --set diffuse.enabled=false
    shot diffuse default 0.8
    shot diffuse strong 0.8 --set diffuse.trapped_air_rate=1000 --set diffuse.wave_crest_rate=1000
    strip diffuse "diffuse off" "$work/diffuse-off.png" \
        "on, rates 100 /s (default)" "$work/diffuse-default.png" \
        "rates 1000 /s" "$work/diffuse-strong.png"
}

all="surface_tension adhesion collider_adhesion friction collider_friction surface_drag xsph viscosity buoyancy density absorption diffuse"
for name in ${*:-$all}; do
    "$name"
done

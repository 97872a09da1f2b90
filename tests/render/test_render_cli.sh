#!/usr/bin/env bash
# Command-line tests of rendering: test_render_cli.sh PBF SOURCE_DIR PNG_CHECK CASE
#   view        `pbf view --screenshot` under Xvfb (skips, exit 77, without xvfb-run)
#   view_offscreen  `pbf view --offscreen` without a display: the frame rate report, a
#               screenshot, and a CUDA scene where none can run fails cleanly
#   view_fluids `pbf view` of a two-fluid scene tints each fluid as `pbf run --png` does
#   run_video   `pbf run --video --png` writes a video with every frame and the PNGs
#   render      `pbf render EXPORT_DIR` renders a run's files afterwards; bad input fails
#   render_solids  a mesh scene's solids_NNNNN files, and `pbf render` drawing them
#   render_fluids  `pbf render` of a two-fluid run with spray and foam draws what `pbf run` drew
set -u
pbf=$1 src=$2 png_check=$3 case=$4
png_diff=$(dirname "$png_check")/png_diff
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pbf_render_cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# A small, quick dam break: ~1500 particles.
small=(--set fluid.particle_radius=0.02)

fail() { echo "FAIL: $*" >&2; exit 1; }

frames_in() { # number of video frames in $1
  ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames \
    -of csv=p=0 "$1"
}

need_ffmpeg() {
  command -v ffmpeg > /dev/null && command -v ffprobe > /dev/null || { echo "SKIP: no ffmpeg"; exit 77; }
}

case $case in
view)
  command -v xvfb-run > /dev/null || { echo "SKIP: xvfb-run is not installed"; exit 77; }
  xvfb-run -a -s "-screen 0 800x600x24" "$pbf" view "${small[@]}" --resolution 320x240 \
    --frames 4 --screenshot "$tmp/shot.png" || fail "pbf view exited with $?"
  "$png_check" "$tmp/shot.png" 320 240 || fail "bad screenshot"
  # Without a display the viewer says what to do instead, and fails cleanly.
  out=$(env -u DISPLAY -u WAYLAND_DISPLAY "$pbf" view "${small[@]}" --frames 1 \
        --screenshot "$tmp/none.png" 2>&1) && fail "pbf view without a display succeeded"
  grep -q "no display" <<< "$out" || fail "unexpected message: $out"
  [ ! -e "$tmp/none.png" ] || fail "a screenshot without a display"
  ;;
view_offscreen)
  # The viewer's loop drawing into an EGL image: no window, no display needed.
  out=$(env -u DISPLAY -u WAYLAND_DISPLAY "$pbf" view "${small[@]}" --offscreen --frames 6 \
        --resolution 160x120 2>&1) || fail "pbf view --offscreen exited with $?: $out"
  grep -q "5 frames in .* fps drawn" <<< "$out" || fail "no frame rate in: $out"
  grep -q "s simulated per s of wall time" <<< "$out" || fail "no simulation rate in: $out"
  env -u DISPLAY "$pbf" view "${small[@]}" --offscreen --frames 3 --resolution 160x120 \
    --screenshot "$tmp/off.png" 2> /dev/null || fail "pbf view --offscreen --screenshot failed"
  "$png_check" "$tmp/off.png" 160 120 || fail "bad off-screen screenshot"
  # A CUDA world where none can run (or, on a GPU, through interop): a clear message.
  if ! "$pbf" bench --backend cuda --particles 1000 --steps 1 > /dev/null 2>&1; then
    out=$("$pbf" view "${small[@]}" --offscreen --frames 2 --resolution 160x120 \
          --set 'solver.backend="cuda"' 2>&1) && fail "a CUDA view without a GPU succeeded"
    grep -Eq "backend 'cuda' (cannot run here|is not available in this build)" <<< "$out" \
      || fail "unexpected message: $out"
  fi
  ;;
view_fluids)
  # Oil and water (scenes/oil_water.json, ~1100 particles), the viewer paused on its first
  # state without the HUD: each fluid tinted by its material's absorption, so the screenshot
  # matches frame 0 of `pbf run --png` (png_diff: % pixels off by more than 24 of 255, mean
  # difference; measured 0 and 0). With one tint for both, as the viewer drew before, 7.2 % of
  # the pixels are off (mean 2.5).
  command -v xvfb-run > /dev/null || { echo "SKIP: xvfb-run is not installed"; exit 77; }
  oil_water=("$src/scenes/oil_water.json" --set fluid.particle_radius=0.02)
  "$pbf" run "${oil_water[@]}" --frames 0 --out "$tmp/out" --format none --png "$tmp/live" \
    --resolution 160x120 --quiet || fail "pbf run exited with $?"
  xvfb-run -a -s "-screen 0 800x600x24" "$pbf" view "${oil_water[@]}" --paused --no-hud \
    --resolution 160x120 --frames 2 --screenshot "$tmp/view.png" 2> "$tmp/err" \
    || fail "pbf view exited with $?: $(cat "$tmp/err")"
  read -r share mean <<< "$("$png_diff" "$tmp/live/frame_00000.png" "$tmp/view.png")" \
    || fail "png_diff"
  awk -v s="$share" -v m="$mean" 'BEGIN { exit !(s <= 0.5 && m <= 0.3) }' \
    || fail "the viewer's fluids differ from pbf run's: $share % of the pixels, mean $mean"
  ;;
run_video)
  need_ffmpeg
  "$pbf" run "${small[@]}" --frames 8 --out "$tmp/out" --format none --quiet \
    --video "$tmp/dam.mp4" --png "$tmp/png" --resolution 160x120 || fail "pbf run exited with $?"
  [ "$(frames_in "$tmp/dam.mp4")" = 9 ] || fail "video frames: $(frames_in "$tmp/dam.mp4")"
  [ "$(ls "$tmp/png" | wc -l)" = 9 ] || fail "png frames: $(ls "$tmp/png")"
  [ -z "$(ls "$tmp" | grep -v -x -e out -e png -e dam.mp4)" ] || fail "stray files: $(ls "$tmp")"
  # Bad options are usage errors that name them.
  "$pbf" run --resolution 12x7 --frames 1 --out "$tmp/x" 2> "$tmp/err" && fail "bad resolution accepted"
  grep -q -- "--resolution" "$tmp/err" || fail "message: $(cat "$tmp/err")"
  "$pbf" run --look glass --frames 1 --out "$tmp/x" 2> "$tmp/err"; [ $? = 2 ] || fail "bad look exit code"
  ;;
render)
  need_ffmpeg
  "$pbf" run "${small[@]}" --frames 5 --out "$tmp/out" --quiet || fail "pbf run exited with $?"
  "$pbf" render "$tmp/out" --video "$tmp/again.mp4" --png "$tmp/frames" --resolution 160x120 \
    --look spheres --color speed --quiet || fail "pbf render exited with $?"
  [ "$(frames_in "$tmp/again.mp4")" = 6 ] || fail "video frames: $(frames_in "$tmp/again.mp4")"
  [ -f "$tmp/frames/frame_00005.png" ] || fail "missing PNG: $(ls "$tmp/frames")"
  # Without scene.json the radius is estimated and the domain is the particles' box.
  rm "$tmp/out/scene.json"
  "$pbf" render "$tmp/out" --png "$tmp/noscene" --resolution 160x120 2> "$tmp/err" \
    || fail "pbf render without scene.json: $(cat "$tmp/err")"
  grep -q "estimated" "$tmp/err" || fail "message: $(cat "$tmp/err")"
  # Errors: nothing to write (usage, 2), a folder without frames (1).
  "$pbf" render "$tmp/out" 2> /dev/null; [ $? = 2 ] || fail "no output accepted"
  mkdir "$tmp/empty"
  "$pbf" render "$tmp/empty" --png "$tmp/p" 2> "$tmp/err"; [ $? = 1 ] || fail "empty folder accepted"
  grep -q "no frame_" "$tmp/err" || fail "message: $(cat "$tmp/err")"
  ;;
render_solids)
  # A scene with a mesh: solids_NNNNN.ply/.vtk beside the particle files, an earlier run's
  # removed, and `pbf render` draws them (the image changes without them); a broken one fails.
  export PBF_CACHE_DIR="$tmp/cache"
  mkdir -p "$tmp/out" && touch "$tmp/out/solids_00099.ply"
  "$pbf" run "$src/scenes/glass_fill.json" --set fluid.particle_radius=0.005 --frames 2 \
    --format ply,vtk --out "$tmp/out" --quiet 2> /dev/null || fail "pbf run exited with $?"
  for f in solids_00000.ply solids_00002.ply solids_00000.vtk solids_00002.vtk; do
    [ -s "$tmp/out/$f" ] || fail "missing $f: $(ls "$tmp/out")"
  done
  [ ! -e "$tmp/out/solids_00099.ply" ] || fail "an earlier run's solids file stayed"
  grep -a -q "comment solid 0 glass.obj position" "$tmp/out/solids_00002.ply" || fail "no pose"
  "$pbf" render "$tmp/out" --png "$tmp/with" --resolution 160x120 --quiet || fail "pbf render: $?"
  rm "$tmp/out"/solids_*
  "$pbf" render "$tmp/out" --png "$tmp/without" --resolution 160x120 --quiet || fail "pbf render: $?"
  ! cmp -s "$tmp/with/frame_00002.png" "$tmp/without/frame_00002.png" || fail "no glass drawn"
  echo "ply" > "$tmp/out/solids_00001.ply"
  "$pbf" render "$tmp/out" --png "$tmp/broken" --resolution 160x120 --quiet 2> "$tmp/err"
  [ $? = 1 ] || fail "broken accepted"
  grep -q "solids_00001.ply" "$tmp/err" || fail "message: $(cat "$tmp/err")"
  ;;
render_fluids)
  # Oil and water (scenes/oil_water.json, ~1100 particles) with diffuse particles: `pbf render`
  # tints each fluid by its material's absorption (the files' phase field, the scene's
  # materials) and draws diffuse_NNNNN.ply, so its frame matches the one `pbf run --png` drew
  # (png_diff: % pixels off by more than 24 of 255, mean difference; measured 0 and 0.006).
  # Giving oil water's colour changes it (measured 8.7 % of the pixels), and so does leaving
  # the diffuse files out (0.27 %, mean 0.19); a broken diffuse file is an error naming it.
  "$pbf" run "$src/scenes/oil_water.json" --set fluid.particle_radius=0.02 \
    --set diffuse.enabled=true --frames 12 --out "$tmp/out" --png "$tmp/live" \
    --resolution 160x120 --quiet || fail "pbf run exited with $?"
  grep -a -q "property int phase" "$tmp/out/frame_00012.ply" || fail "no phase field"
  grep -a -q "element vertex [1-9]" "$tmp/out/diffuse_00012.ply" || fail "no diffuse particles"
  off() { # off A B SHARE MEAN: true when A and B differ by at least one of the two
    read -r share mean <<< "$("$png_diff" "$1" "$2")" || fail "png_diff $1 $2"
    awk -v s="$share" -v m="$mean" -v S="$3" -v M="$4" 'BEGIN { exit !(s > S || m > M) }'
  }
  "$pbf" render "$tmp/out" --png "$tmp/after" --resolution 160x120 --quiet || fail "pbf render: $?"
  for f in 00006 00012; do
    ! off "$tmp/live/frame_$f.png" "$tmp/after/frame_$f.png" 0.05 0.05 \
      || fail "frame $f differs from pbf run's: $("$png_diff" "$tmp/live/frame_$f.png" "$tmp/after/frame_$f.png")"
  done
  sed 's/\[1.5, 2.5, 12\]/[8, 3, 1.5]/' "$tmp/out/scene.json" > "$tmp/one_colour.json"
  grep -q -F '[1.5, 2.5, 12]' "$tmp/one_colour.json" && fail "oil's colour not replaced"
  "$pbf" render "$tmp/out" --scene "$tmp/one_colour.json" --png "$tmp/one" \
    --resolution 160x120 --quiet || fail "pbf render --scene: $?"
  off "$tmp/after/frame_00012.png" "$tmp/one/frame_00012.png" 2 1 || fail "one tint for both fluids"
  mkdir "$tmp/plain" && cp "$tmp/out"/frame_* "$tmp/out/scene.json" "$tmp/plain/"
  "$pbf" render "$tmp/plain" --png "$tmp/nodiffuse" --resolution 160x120 --quiet || fail "render: $?"
  off "$tmp/after/frame_00012.png" "$tmp/nodiffuse/frame_00012.png" 0.1 0.08 \
    || fail "the diffuse particles were not drawn"
  echo "ply" > "$tmp/out/diffuse_00003.ply"
  "$pbf" render "$tmp/out" --png "$tmp/broken" --resolution 160x120 --quiet 2> "$tmp/err"
  [ $? = 1 ] || fail "broken accepted"
  grep -q "diffuse_00003.ply" "$tmp/err" || fail "message: $(cat "$tmp/err")"
  ;;
*)
  fail "unknown case $case"
  ;;
esac
echo "ok: $case"

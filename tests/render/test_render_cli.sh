#!/usr/bin/env bash
# Command-line tests of rendering: test_render_cli.sh PBF SOURCE_DIR PNG_CHECK CASE
#   view        `pbf view --screenshot` under Xvfb (skips, exit 77, without xvfb-run)
#   run_video   `pbf run --video --png` writes a video with every frame and the PNGs
#   render      `pbf render EXPORT_DIR` renders a run's files afterwards; bad input fails
#   render_solids  a mesh scene's solids_NNNNN files, and `pbf render` drawing them
set -u
pbf=$1 src=$2 png_check=$3 case=$4
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
  "$pbf" render "$tmp/out" --png "$tmp/broken" --quiet 2> "$tmp/err"; [ $? = 1 ] || fail "broken accepted"
  grep -q "solids_00001.ply" "$tmp/err" || fail "message: $(cat "$tmp/err")"
  ;;
*)
  fail "unknown case $case"
  ;;
esac
echo "ok: $case"

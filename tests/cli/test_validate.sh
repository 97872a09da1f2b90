#!/usr/bin/env bash
# Probes and `pbf validate` from the command line (docs/validation.md). Usage:
#   test_validate.sh PBF_BINARY SOURCE_DIR CASE
# Runs use coarse particles (r = 1 cm, a few thousand particles) so that each case takes
# seconds: they check that the pipeline works and that its numbers are sane, not the physics
# figures of docs/validation.md (those come from `pbf validate` at the scenes' resolutions).
# Exit 77 (a skip) where the measured data is not there.
set -u

PBF=$(realpath "${1:?usage: test_validate.sh PBF_BINARY SOURCE_DIR CASE}")
SRC=${2:?source dir}
CASE=${3:?case}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pbf_validate_${CASE}_XXXXXX")
trap 'rm -rf "$TMP"' EXIT
DATA=${PBF_VALIDATION_DATA:-$SRC/../shared/validation}
# Lobovsky's tank with 2 cm particles: 30 x 15 x 7 = 3150 particles, 2 substeps at 120 fps, one
# thread (so few particles gain nothing from a second one, and lose much on a busy machine).
COARSE=(--set fluid.particle_radius=0.01 --set time.substeps=2 --threads 1)

fail() { echo "FAIL [$CASE]: $*" >&2; exit 1; }
expect_rc() {
    local want=$1; shift
    "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    [ "$rc" -eq "$want" ] || { cat "$TMP/out" "$TMP/err" >&2; fail "'$*' exited $rc, expected $want"; }
}
expect_in() { grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "'$2' not in $(basename "$1")"; }; }
need_data() { [ -f "$DATA/lobovsky2014_H300_water_level.csv" ] || { echo "no data in $DATA: skipped"; exit 77; }; }
# The value of one metric in metrics.csv: metric_value FILE METRIC PROBE COLUMN (6 measured, 7 simulated)
metric_value() { grep -F ",$2,\"$3\"," "$1" | head -1 | cut -d, -f"$4"; }
# in_range VALUE LO HI
in_range() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v + 0 == v && v >= lo && v <= hi) }'; }

cd "$SRC" || fail "no source folder"

# pbf run writes probes.csv next to stats.csv, one row per frame, and resume keeps it in step.
case_probes_csv() {
    expect_rc 0 "$PBF" run scenes/validation/lobovsky_h300.json "${COARSE[@]}" --frames 12 \
        --checkpoint-every 6 --out "$TMP/run" --quiet
    local csv="$TMP/run/probes.csv"
    [ -f "$csv" ] || fail "no probes.csv"
    head -1 "$csv" | grep -qx 'frame,time,H1_m,H2_m,H3_m,H4_m,H1_top_m,H2_top_m,H3_top_m,H4_top_m,front_m,P1_N,P1_Pa,P2_N,P2_Pa,P3_N,P3_Pa,P4_N,P4_Pa' \
        || fail "probes.csv header: $(head -1 "$csv")"
    [ "$(wc -l <"$csv")" -eq 14 ] || fail "probes.csv has $(wc -l <"$csv") lines, expected 14"
    # frame 0: the column stands 0.3 m high at H1 (its level and its highest particle), the
    # other gauges are dry, the front is the column's face at x = 0.6
    local row0; row0=$(sed -n 2p "$csv")
    in_range "$(echo "$row0" | cut -d, -f3)" 0.299 0.301 || fail "H1 at frame 0: $row0"
    [ "$(echo "$row0" | cut -d, -f4)" = 0 ] || fail "H2 at frame 0: $row0"
    in_range "$(echo "$row0" | cut -d, -f7)" 0.299 0.301 || fail "H1_top at frame 0: $row0"
    [ "$(echo "$row0" | cut -d, -f8)" = 0 ] || fail "H2_top at frame 0: $row0"
    in_range "$(echo "$row0" | cut -d, -f11)" 0.599 0.601 || fail "front at frame 0: $row0"
    # resume to frame 18: rows 0..18, in order, and the first 13 rows unchanged
    cp "$csv" "$TMP/before.csv"
    expect_rc 0 "$PBF" resume "$TMP/run" --frames 18 --quiet
    [ "$(wc -l <"$csv")" -eq 20 ] || fail "after resume: $(wc -l <"$csv") lines, expected 20"
    [ "$(cut -d, -f1 "$csv" | tail -n +2 | tr '\n' ' ')" = "$(seq 0 18 | tr '\n' ' ')" ] \
        || fail "frames out of order after resume"
    cmp -s <(head -8 "$TMP/before.csv") <(head -8 "$csv") || fail "resume changed the rows up to the checkpoint"
    # a scene without probes leaves no probes.csv behind in the same folder
    expect_rc 0 "$PBF" run scenes/dam_break.json --set fluid.particle_radius=0.02 --frames 1 \
        --format none --out "$TMP/run" --quiet
    [ ! -e "$csv" ] || fail "an earlier run's probes.csv was left in the folder"
}

# Bad probe input is refused with the file, the key and the expectation.
case_probe_errors() {
    expect_rc 1 "$PBF" run scenes/validation/lobovsky_h300.json --set 'probes[4].radus=0.01' \
        --frames 1 --out "$TMP/x"
    expect_in "$TMP/err" "scenes/validation/lobovsky_h300.json: unknown key 'probes[4].radus' for a height probe (did you mean 'radius'?)"
    expect_rc 1 "$PBF" run scenes/validation/lobovsky_h300.json --set 'probes[0].fraction=0' \
        --frames 1 --out "$TMP/x"
    expect_in "$TMP/err" "scenes/validation/lobovsky_h300.json: 'probes[0].fraction' must be in (0, 1)"
    expect_rc 1 "$PBF" run scenes/validation/lobovsky_h300.json --set 'probes[9].position=[1.5, 0.01, 0.075]' \
        --frames 1 --out "$TMP/x"
    expect_in "$TMP/err" "'probes[9].position' must lie on the domain wall x = 1.61"
    expect_rc 1 "$PBF" info scenes/validation/spheric2.json --set 'probes[0].position=[0.5, 0, 1.5]'
    expect_in "$TMP/err" "'probes[0].position' must lie inside the domain, got z = 1.5 outside [0, 1]"
}

# The command's usage errors.
case_validate_usage() {
    expect_rc 2 "$PBF" validate
    expect_in "$TMP/err" "which case? spheric2 or lobovsky"
    expect_rc 2 "$PBF" validate marin
    expect_in "$TMP/err" "unknown case 'marin'"
    expect_rc 0 "$PBF" validate --help
    expect_in "$TMP/out" "pbf validate spheric2|lobovsky"
    expect_rc 1 "$PBF" validate lobovsky --data "$TMP/nothing" --out "$TMP/v"
    expect_in "$TMP/err" "$TMP/nothing/lobovsky2014_H300_water_level.csv"
    need_data
    expect_rc 1 "$PBF" validate lobovsky --plot-only --data "$DATA" --out "$TMP/empty"
    expect_in "$TMP/err" "no run in"
}

# A short, coarse Lobovsky run through the whole pipeline: metrics and plots, sane numbers.
case_validate_lobovsky() {
    need_data
    expect_rc 0 "$PBF" validate lobovsky "${COARSE[@]}" --time 0.5 --data "$DATA" \
        --out "$TMP/v" --quiet
    local m="$TMP/v/coarse/metrics.csv"
    [ -f "$m" ] || fail "no metrics.csv"
    [ -f "$TMP/v/metrics.md" ] || fail "no metrics.md"
    expect_in "$TMP/v/metrics.md" "| wetting time | H2 | T = t sqrt(g/H) |"
    # T = 0.5 s * sqrt(g/H) = 2.9: the front has reached every gauge and the far wall
    local t
    for probe in "x = 865 mm (H2)" "x = 1114 mm (H3)" "x = 1362.5 mm (H4)" "far wall (P1)"; do
        t=$(metric_value "$m" "front arrival" "$probe" 7)
        local tm; tm=$(metric_value "$m" "front arrival" "$probe" 6)
        # within 30 % of the measured arrival even with 2 cm particles
        in_range "$t" "$(awk -v x="$tm" 'BEGIN{print 0.7 * x}')" "$(awk -v x="$tm" 'BEGIN{print 1.3 * x}')" \
            || fail "front arrival at $probe: simulated $t, measured $tm"
    done
    t=$(metric_value "$m" "wetting time" "H2" 7)
    in_range "$t" 0.7 1.4 || fail "H2 wetting time $t"
    # the simulated arrival is read as the measured one is: the gauge's wetting at H2, the
    # sensor's first pressure at the far wall; the leading particle gets there no later
    [ "$(metric_value "$m" "front arrival" "x = 865 mm (H2)" 7)" = "$t" ] \
        || fail "front arrival at H2 is not the gauge's wetting time $t"
    [ "$(metric_value "$m" "front arrival" "far wall (P1)" 7)" = "$(metric_value "$m" "pressure arrival" "P1" 7)" ] \
        || fail "front arrival at the far wall is not P1's pressure arrival"
    local lead; lead=$(metric_value "$m" "leading edge" "x = 1114 mm (H3)" 7)
    awk -v a="$lead" -v b="$(metric_value "$m" "front arrival" "x = 1114 mm (H3)" 7)" \
        'BEGIN{exit !(a > 0 && a <= b)}' || fail "leading edge at H3 $lead is after the gauge's arrival"
    t=$(metric_value "$m" "height RMS" "H1" 7)
    in_range "$t" 0 0.15 || fail "H1 height RMS $t (in units of H)"
    t=$(metric_value "$m" "pressure arrival" "P1" 7)
    in_range "$t" 1.7 3.2 || fail "P1 pressure arrival $t"
    if command -v gnuplot >/dev/null; then
        for png in heights pressure front; do
            [ -s "$TMP/v/$png.png" ] || fail "no $png.png"
            head -c 8 "$TMP/v/$png.png" | od -An -c | grep -q 'P   N   G' || fail "$png.png is not a PNG"
        done
    fi
    # --plot-only redraws from the run without simulating
    rm -f "$TMP/v/heights.png"
    expect_rc 0 "$PBF" validate lobovsky --plot-only --data "$DATA" --out "$TMP/v" --quiet
    [ -f "$TMP/v/metrics.md" ] || fail "no metrics.md after --plot-only"
    if command -v gnuplot >/dev/null; then [ -s "$TMP/v/heights.png" ] || fail "--plot-only drew no heights.png"; fi
}

"case_$CASE"
echo "ok [$CASE]"

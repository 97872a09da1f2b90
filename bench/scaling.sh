#!/usr/bin/env bash
# The performance report's figures (docs/performance.md, "Scaling"): `pbf bench` over particle
# counts from 10k to 1M and over 1 and 2 threads, with
#   - ms per step and per stage (the model: table 4.3 of the thesis in the seeds),
#   - the thread scaling 1 -> 2 (speed-up and parallel efficiency at each count),
#   - memory per particle (peak resident set of the bench process, less that of a tiny run),
#   - a log-log plot of ms per step against particle count with the least-squares slope.
#
# usage: bench/scaling.sh [BUILD_DIR] [OUT_DIR]      (after building; gnuplot for the plot)
#   BUILD_DIR  default build            OUT_DIR  default out/bench/scaling
# environment (defaults in brackets):
#   COUNTS   particle counts                    [10000 30000 100000 300000 1000000]
#   THREADS  thread counts                      [1 2]
#   STEPS    timed steps per count              [10]
#   WARMUP   untimed steps first                [3]
#   REPEAT   runs per count and thread count; the one with the lowest median is kept [1]
#   BENCH_ARGS  more options for pbf bench, e.g. "--set time.substeps=4"   []
#
# Writes OUT_DIR/scaling.csv (one row per count and thread count), OUT_DIR/scaling.md (the
# tables, ready for docs/performance.md), OUT_DIR/scaling.png (the log-log plot), and the raw
# `pbf bench --csv` files. Timings need a quiet machine: run it when nothing else is running, and
# state the machine and the load next to the figures. The minimum over the timed steps (ms_min)
# would be the figure least disturbed by other jobs, but it is the first, still ordered steps of
# the dam break; the tables and the fit use the median (run it quiet).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-out/bench/scaling}
counts=${COUNTS:-10000 30000 100000 300000 1000000}
threads=${THREADS:-1 2}
steps=${STEPS:-10}
warmup=${WARMUP:-3}
repeat=${REPEAT:-1}
pbf="$build/pbf"
[ -x "$pbf" ] || { echo "scaling.sh: no $pbf (build first, or give the build folder)" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || { echo "scaling.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
mkdir -p "$out"

# The baseline resident set: the program, its libraries and an almost empty world.
/usr/bin/time -f '%M' -o "$out/rss_base.txt" "$pbf" bench --particles 1000 --steps 1 --warmup 0 \
    --threads 1 >/dev/null 2>&1
base_kb=$(tail -1 "$out/rss_base.txt")

csv="$out/scaling.csv"
echo "particles,threads,ms_median,ms_min,ms_predict,ms_grid,ms_neighbors,ms_lambda,ms_delta,ms_velocity,ms_vorticity,particle_steps_per_s,avg_neighbors,peak_rss_kb,bytes_per_particle" > "$csv"
for t in $threads; do
    for n in $counts; do
        raw="$out/bench_${n}_t${t}.csv"
        best=""
        for r in $(seq "$repeat"); do # keep the run with the lowest median: noise only adds time
            echo "scaling.sh: $n particles, $t thread(s), run $r of $repeat" >&2
            # shellcheck disable=SC2086
            /usr/bin/time -f '%M' -o "$out/rss_${n}_t${t}.txt" "$pbf" bench --particles "$n" \
                --steps "$steps" --warmup "$warmup" --threads "$t" --csv "$raw.try" \
                ${BENCH_ARGS:-} >/dev/null
            med=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "ms_median") c = i; next }
                           { print $c }' "$raw.try")
            if [ -z "$best" ] || awk -v a="$med" -v b="$best" 'BEGIN { exit !(a < b) }'; then
                best=$med
                mv "$raw.try" "$raw"
                rss=$(tail -1 "$out/rss_${n}_t${t}.txt")
            fi
        done
        rm -f "$raw.try"
        # the bench's columns by name (its CSV header), so a new column does not break this
        awk -F, -v t="$t" -v rss="$rss" -v base="$base_kb" '
            NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
            { n = $col["particles"]
              printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%.0f\n", n, t,
                  $col["ms_median"], $col["ms_min"], $col["ms_predict"], $col["ms_grid"],
                  $col["ms_neighbors"], $col["ms_lambda"], $col["ms_delta"], $col["ms_velocity"],
                  $col["ms_vorticity"], $col["particle_steps_per_s"], $col["avg_neighbors"], rss,
                  (rss - base) * 1024.0 / n }' "$raw" >> "$csv"
    done
done

# Least-squares slope of log(ms_median) against log(particles), per thread count:
# time ~ N^slope. The median, not the minimum: the minimum is the first, still ordered steps.
fit() { # fit THREADS -> "slope intercept"
    awk -F, -v t="$1" 'NR > 1 && $2 == t && $3 > 0 {
            x = log($1); y = log($3); n++; sx += x; sy += y; sxx += x * x; sxy += x * y }
        END { if (n < 2) { print "nan nan"; exit }
              b = (n * sxy - sx * sy) / (n * sxx - sx * sx); a = (sy - b * sx) / n
              printf "%.4f %.6f\n", b, a }' "$csv"
}

md="$out/scaling.md"
{
    echo "Command: \`bench/scaling.sh $build\` (COUNTS=\"$counts\" THREADS=\"$threads\" STEPS=$steps WARMUP=$warmup REPEAT=$repeat ${BENCH_ARGS:+BENCH_ARGS=\"$BENCH_ARGS\"})."
    echo "Machine: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
    echo
    for t in $threads; do
        read -r slope _ < <(fit "$t")
        echo "#### $t thread(s): ms per step (median and min of $steps) and per stage (mean), slope of log median time against log N: $slope"
        echo
        echo "| particles | ms/step median | min | predict | grid | neighbours | lambda | delta | velocity | vorticity+XSPH | particle-steps/s | neighbours/particle |"
        echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
        awk -F, -v t="$t" 'NR > 1 && $2 == t {
            printf "| %d | %.1f | %.1f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.3g | %.1f |\n",
                $1, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13 }' "$csv"
        echo
    done
    first=$(echo "$threads" | awk '{print $1}')
    last=$(echo "$threads" | awk '{print $NF}')
    if [ "$first" != "$last" ]; then
        echo "#### Thread scaling $first -> $last (from the median ms/step)"
        echo
        echo "| particles | ms $first thread(s) | ms $last threads | speed-up | efficiency |"
        echo "|---|---|---|---|---|"
        awk -F, -v a="$first" -v b="$last" 'NR > 1 { if ($2 == a) ta[$1] = $3; if ($2 == b) tb[$1] = $3 }
            END { for (n in ta) if (n in tb) printf "%d %s %s\n", n, ta[n], tb[n] }' "$csv" | sort -n |
            awk -v a="$first" -v b="$last" '{ s = $2 / $3
                printf "| %d | %.1f | %.1f | %.2f | %.0f %% |\n", $1, $2, $3, s, 100 * s * a / b }'
        echo
    fi
    echo "#### Memory (peak resident set of \`pbf bench\`, less ${base_kb} KiB for a 1000-particle run)"
    echo
    echo "| particles | peak RSS (MiB) | bytes per particle |"
    echo "|---|---|---|"
    awk -F, -v t="$first" 'NR > 1 && $2 == t { printf "| %d | %.1f | %.0f |\n", $1, $14 / 1024.0, $15 }' "$csv"
} > "$md"

if command -v gnuplot >/dev/null; then
    plot="plot"
    sep=""
    colors=("#1f77b4" "#d62728" "#2ca02c" "#9467bd")
    i=0
    for t in $threads; do
        read -r slope icpt < <(fit "$t")
        c=${colors[$((i % 4))]}
        plot+="$sep '$csv' using (\$2 == $t ? \$1 : 1/0):3 with points pt 7 ps 1.5 lc rgb '$c' title '$t thread(s), measured'"
        plot+=", exp($icpt) * x**$slope with lines lw 2 dt 2 lc rgb '$c' title sprintf('fit: t = c N^{%.3f}', $slope)"
        sep=","
        i=$((i + 1))
    done
    gnuplot <<GP
set terminal pngcairo size 900,620 font "sans,11"
set output "$out/scaling.png"
set datafile separator ","
set logscale xy
set xlabel "particles N"
set ylabel "ms per step (median of $steps)"
set title "pbf bench: dam break, time per step against particle count"
set grid
set key top left
$plot
GP
    echo "scaling.sh: $out/scaling.png" >&2
else
    echo "scaling.sh: gnuplot not found: no plot (the tables are in $md)" >&2
fi
echo "scaling.sh: $csv, $md" >&2
cat "$md"

#!/usr/bin/env bash
# The figures of docs/performance.md, "Converging faster":
#  1. density error against iteration, plain Jacobi and Chebyshev, on the same dam-break state
#     -> docs/img/convergence.png (+ the CSV next to it, in out/bench/)
#  2. ms per step against the target error, error-controlled and accelerated, 50k particles,
#     one solve per step at the dam break's substep (1/240 s) -> a table on stdout and
#     docs/img/target_error.png
# usage: bench/convergence.sh [BUILD_DIR]   (after building; needs gnuplot)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=out/bench
mkdir -p "$out" docs/img

"$build/bench/pbf_convergence" --frames 30 --iterations 60 > "$out/convergence.csv"
# the Chebyshev settings the run used, from the CSV's first line ("... rho R gamma G delay D")
cheb=$(head -1 "$out/convergence.csv" | sed -n 's/.*rho \([^ ]*\) gamma \([^ ]*\) delay \([^ ;,]*\).*/rho \1, gamma \2, delay \3/p')
gnuplot <<GP
set terminal pngcairo size 900,560 font "sans,11"
set output "docs/img/convergence.png"
set datafile separator ","
set logscale y
set xlabel "iteration (density constraint passes)"
set ylabel "average density error (%)"
set title "Dam break, 49k particles, one 1/240 s substep from the state at t = 0.5 s"
set grid
set key top right
plot "$out/convergence.csv" every ::1 using 1:2 with linespoints pt 7 ps 0.5 title "plain Jacobi", \
     "" every ::1 using 1:3 with linespoints pt 5 ps 0.5 title "Chebyshev ($cheb)", \
     0.01 with lines dt 2 lc rgb "gray" title "target 0.01 %"
GP

echo "target_error_percent,ms_median,mean_iterations,avg_error_mean_percent,avg_error_max_percent" > "$out/target_error.csv"
for t in 0.1 0.05 0.02 0.01 0.005; do
  "$build/pbf" bench --particles 50000 --steps 20 --set time.fps=240 \
      --set solver.target_error=$t --csv "$out/te_$t.csv" > /dev/null
  # columns by name from the bench CSV
  awk -F, -v t=$t 'NR==1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
      { printf "%s,%s,%s,%.5f,%.5f\n", t, $c["ms_median"], $c["mean_iterations"],
               100 * $c["avg_density_error_mean"], 100 * $c["avg_density_error_max"] }' \
      "$out/te_$t.csv" >> "$out/target_error.csv"
done
column -s, -t "$out/target_error.csv"
gnuplot <<GP
set terminal pngcairo size 900,560 font "sans,11"
set output "docs/img/target_error.png"
set datafile separator ","
set logscale x
set xlabel "target average density error (%)"
set ylabel "ms per step (median)"
set y2label "iterations per step"
set y2tics
set ytics nomirror
set title "50k-particle dam break, one 1/240 s solve per step, 2 threads"
set grid
plot "$out/target_error.csv" every ::1 using 1:2 with linespoints pt 7 title "ms per step", \
     "" every ::1 using 1:3 axes x1y2 with linespoints pt 5 title "iterations"
GP
echo "wrote docs/img/convergence.png, docs/img/target_error.png and $out/*.csv"

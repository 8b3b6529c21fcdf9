# SPDX-License-Identifier: MIT
# latchbench CSV -> PNG plots.  Usage:
#   gnuplot -e "csv='build/latchbench.csv'; outdir='docs'" bench/plot.gp
# CSV columns: workload,n,case,peer,metric,median,min,max,runs
if (!exists("csv")) csv = 'build/latchbench.csv'
if (!exists("outdir")) outdir = 'docs'
set datafile separator ','
set terminal pngcairo size 900,560 noenhanced font ',10'
set key outside right top
set grid
set linetype 9 lc rgb '#a0522d' pt 10
peers = "plain latch seqlock rwlock mutex tsearch urcu-lfht ck-hs sorted-latch"

# The CSV rows of workload w, case c, peer p and metric m.
rows(w, c, p, m) = sprintf("< awk -F, '$1==%d && $3==\"%s\" && $4==\"%s\" && $5==\"%s\"' %s", w, c, p, m, csv)

set logscale xy
set xlabel 'elements (n)'

set output outdir.'/bench-lookup.png'
set title 'Workload 1: lookup cost, one thread, uniform hits (median; bars: min..max over runs)'
set ylabel 'ns per lookup'
plot for [p in peers] rows(1, 'uniform hit', p, 'ns/lookup') using 2:6:7:8 with yerrorlines title p

set output outdir.'/bench-write.png'
set title 'Workload 3: write cost, one thread (median; bars: min..max over runs)'
set ylabel 'ns per insert+erase pair'
plot for [p in peers] rows(3, 'insert+erase', p, 'ns/pair') using 2:6:7:8 with yerrorlines title p

set output outdir.'/bench-ranges.png'
set title 'Workload 4: address ranges (median; bars: min..max over runs)'
set xlabel 'ranges (n)'
set ylabel 'ns per operation'
plot for [p in "latch sorted-latch rwlock"] rows(4, 'find', p, 'ns/op') using 2:6:7:8 with yerrorlines title p.' find', \
     for [p in "latch sorted-latch rwlock"] rows(4, 'insert+erase', p, 'ns/op') using 2:6:7:8 with yerrorlines dashtype 2 title p.' insert+erase'

# Workload 2: reader throughput against writer rate, at n = 10^4.
unset logscale x
set xlabel 'writer rate (insert+erase pairs per second)'
set ylabel 'reader lookups per second (all readers)'
set xtics ('0' 0, '1e3' 1, '1e5' 2, 'max' 3)
set xrange [-0.3:3.3]
rate(c) = c eq 'writer 0/s' ? 0 : c eq 'writer 1e3/s' ? 1 : c eq 'writer 1e5/s' ? 2 : 3
conc(p) = sprintf("< awk -F, '$1==2 && $2==10000 && $4==\"%s\" && $5==\"lookups/s\"' %s", p, csv)
set output outdir.'/bench-concurrency.png'
set title 'Workload 2: readers beside one writer, n = 10^4 (median; bars: min..max over runs)'
plot for [p in peers] conc(p) using (rate(strcol(3))):6:7:8 with yerrorlines title p

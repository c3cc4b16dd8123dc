# plots.gp: the figures of `make experiments`, from the TSV tables that
# sql/vnode_sweep.sql and sql/modn_vs_ring.sql leave in out/.
#   gnuplot sql/plots.gp     (run from the top directory)

set datafile separator "\t"
set grid
set key top right

# vnode sweep: max/min keys per node against virtual nodes per node.
# Columns: nodes vnodes hash node-1 node-2 node-3 max/min worst% exact%
set title "100,000 keys on 2 and 3 equal nodes (xxh3, md5)"
set xlabel "virtual nodes per node"
set ylabel "keys per node, max / min"
set xrange [0:1050]
set yrange [1:*]
do for [fmt in "svg png"] {
  if (fmt eq "svg") { set terminal svg size 720,420 dynamic font "sans,12" }
  else { set terminal pngcairo size 720,420 font "sans,10" }
  set output "out/vnode_sweep.".fmt
  plot "out/vnode_sweep.tsv" skip 1 \
         using 2:($1==2 && strcol(3) eq "xxh3" ? $7 : 1/0) \
         with linespoints pt 7 title "2 nodes, xxh3", \
       "" skip 1 using 2:($1==3 && strcol(3) eq "xxh3" ? $7 : 1/0) \
         with linespoints pt 5 title "3 nodes, xxh3", \
       "" skip 1 using 2:($1==2 && strcol(3) eq "md5" ? $7 : 1/0) \
         with linespoints pt 6 dt 2 title "2 nodes, md5", \
       "" skip 1 using 2:($1==3 && strcol(3) eq "md5" ? $7 : 1/0) \
         with linespoints pt 4 dt 2 title "3 nodes, md5"
}

# Movement: fraction of keys moved when a node joins n nodes.
# Columns: n, ring moved, ring exact, 1/(n+1), modn moved, modn exact, n/(n+1)
set title "Keys moved when node n+1 joins (100,000 keys)"
set xlabel "nodes before the join (n)"
set ylabel "fraction of keys moved"
set xrange [1.5:10.5]
set yrange [0:1]
set key center right
do for [fmt in "svg png"] {
  if (fmt eq "svg") { set terminal svg size 720,420 dynamic font "sans,12" }
  else { set terminal pngcairo size 720,420 font "sans,10" }
  set output "out/modn_vs_ring.".fmt
  plot "out/modn_vs_ring.tsv" skip 1 using 1:5 with points pt 7 ps 1.2 \
         title "modn, measured", \
       "" skip 1 using 1:7 with lines dt 2 lw 2 title "n/(n+1)", \
       "" skip 1 using 1:2 with points pt 5 ps 1.2 title "ring (160 vnodes), measured", \
       "" skip 1 using 1:3 with lines lw 1 title "ring, exact (ch\\_diff)", \
       "" skip 1 using 1:4 with lines dt 2 lw 2 title "1/(n+1)"
}

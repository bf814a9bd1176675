#!/usr/bin/env bash
# Issue 12's hang check: N back-to-back runs of one command on a runtime (process or docker); per
# run its exit code, its time, and what is left a second after it (pole-bench processes, containers
# and networks labelled pole-bench), with the verdict, the elected leader, lost writes and serving ms.
# Usage: scripts/back-to-back.sh process|docker [N]
rt=$1; n=${2:-20}
cd "$(dirname "$0")/.."
for i in $(seq 1 $n); do
  out=$(mktemp -d /tmp/b2b-$rt-XXXX)
  t0=$(date +%s.%N)
  timeout 600 npx pole-bench run topologies/paper-3dc-deployment-1.yaml --oracle history --rate 200 --duration 25s --kill-at 10s --quiet --json --out $out --runtime $rt --seed $((100+i)) > $out.json 2> $out.err
  code=$?
  t1=$(date +%s.%N)
  sleep 1
  procs=$(ps aux | grep -E "bin/run.js|pole-bench run" | grep -v grep | wc -l)
  ctr=$(docker ps -aq --filter label=pole-bench=true 2>/dev/null | wc -l)
  nets=$(docker network ls -q --filter label=pole-bench=true 2>/dev/null | wc -l)
  verdict=$(python3 -c "import json;r=json.load(open('$out.json'));print(r['verdict'],r['leaders']['elected'],r['writes']['lost'],round(r['recovery']['servingMs'] or -1))" 2>/dev/null || echo "no-result")
  printf "%s run %2d exit %s %.1f s left procs=%s containers=%s networks=%s | %s\n" $rt $i $code $(echo "$t1 - $t0" | bc) $procs $ctr $nets "$verdict"
  # A failed run keeps its outputs to look at.
  if [ $code -eq 0 ]; then rm -rf $out $out.json $out.err; else echo "  kept $out $out.json $out.err"; fi
done

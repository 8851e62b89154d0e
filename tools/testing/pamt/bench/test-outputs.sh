#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What make bench prints, checked (make test): one "ok NAME" or "FAIL NAME"
# line per check.
#   json_matches_table_*  small runs of each make bench scenario and of the
#                         replay: check-json.py reads the JSON back against
#                         the printed table, and the tally line is there
#   busy_machine_is_said  under a synthetic load (2 spinners per CPU), the
#                         first line warns, every wall-clock target reads
#                         "not judged", and count targets are still judged
#   tally_adds_up         tally.sh over those outputs
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=$here/build/pamt_bench
vt=$here/../vt/build/pamt_vt
out=$here/build/outputs
rm -rf "$out"
mkdir -p "$out"
small=(--pages-per-td 20000 --quiet)

for sc in 1td 5td churn reclaim; do
	if "$bin" --scenario $sc "${small[@]}" --json "$out/$sc.json" > "$out/$sc.txt" 2>/dev/null &&
	   grep -Eq '^targets: [0-9]+ met, [0-9]+ missed' "$out/$sc.txt" &&
	   "$here/check-json.py" "$out/$sc.txt" "$out/$sc.json"; then
		echo "ok json_matches_table_$sc"
	else
		echo "FAIL json_matches_table_$sc"
	fi
done
if [ -x "$vt" ] || make -s -C "$here/../vt" build/pamt_vt >/dev/null; then
	if "$vt" --replay --mem-scale 0.02 --out "$out/vt" > "$out/replay.txt" 2>/dev/null &&
	   "$here/check-json.py" "$out/replay.txt" "$out/vt/replay.json"; then
		echo "ok json_matches_table_replay"
	else
		echo "FAIL json_matches_table_replay"
	fi
fi

if "$here/tally.sh" 0 "$out"/{1td,5td,churn,reclaim}.txt "$out/replay.txt" > "$out/tally.txt" &&
   met=$(cat "$out"/{1td,5td,churn,reclaim}.txt "$out/replay.txt" |
	 awk '/^targets: [0-9]+ met/ { n += $2 } END { print n + 0 }') &&
   grep -q "^make bench: targets: $met met" "$out/tally.txt" &&
   ! grep -q "no tally in" "$out/tally.txt"; then
	echo "ok tally_adds_up: $(head -1 "$out/tally.txt")"
else
	echo "FAIL tally_adds_up"
fi

# A synthetic load: two spinners per CPU, for the length of one small run.
pids=()
for _ in $(seq $((2 * $(nproc)))); do
	sh -c 'while :; do :; done' &
	pids+=($!)
done
sleep 1
"$bin" --scenario churn --strategy atomic,magazine "${small[@]}" > "$out/busy.txt" 2>/dev/null
kill "${pids[@]}" 2>/dev/null
wait 2>/dev/null
if head -1 "$out/busy.txt" | grep -q '^WARNING: the machine is busy' &&
   grep -q 'slow time (get+put).*: not judged' "$out/busy.txt" &&
   grep -q 'SEAMCALLs: .*: met$' "$out/busy.txt" &&
   grep -Eq '^targets: [0-9]+ met, [0-9]+ missed \([0-9]+ wall-clock targets? not judged' "$out/busy.txt"; then
	echo "ok busy_machine_is_said: $(grep 'machine before' "$out/busy.txt" | sed 's/^ *//')"
else
	echo "FAIL busy_machine_is_said"
	head -8 "$out/busy.txt"
fi

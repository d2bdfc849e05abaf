#!/usr/bin/env bash
# pipeline.sh: a shell pipeline of compressors, the classic case of work that
# stays on one CPU because each stage wakes the next on its own CPU.
#
# Each stage recompresses the previous stage's output, so every stage has
# real work to do. With N stages on M CPUs the best case keeps min(N, M)
# CPUs busy; cpu_utilization = (user + sys) / wall tells you how close the
# scheduler came (1.0 = one CPU's worth).
#
# Output (one line):
#   time: <ms> (ms)  cpu_utilization: <x>  stages: <n>  input_mb: <mb>  compressor: <name>
set -euo pipefail

stages=4
input_mb=16
compressor=bzip2

usage() {
	echo "usage: $0 [-n stages] [-m input_mb] [-c bzip2|gzip|xz|zstd]" >&2
	exit 2
}

while getopts "n:m:c:h" opt; do
	case "$opt" in
	n) stages=$OPTARG ;;
	m) input_mb=$OPTARG ;;
	c) compressor=$OPTARG ;;
	*) usage ;;
	esac
done
[[ "$stages" =~ ^[1-9][0-9]*$ && "$input_mb" =~ ^[1-9][0-9]*$ ]] || usage
command -v "$compressor" >/dev/null || { echo "pipeline.sh: $compressor not found" >&2; exit 1; }

# Random input, made once up front so the generator is not part of the timing.
input=$(mktemp)
trap 'rm -f "$input"' EXIT
head -c "$((input_mb * 1024 * 1024))" /dev/urandom >"$input"

cmd="$compressor -c <\"\$1\""
for ((i = 1; i < stages; i++)); do
	cmd+=" | $compressor -c"
done

# bash's time keyword reports wall, user and sys of the whole pipeline.
TIMEFORMAT='%3R %3U %3S'
times=$( { time bash -c "$cmd >/dev/null" _ "$input" 2>/dev/null; } 2>&1 )
read -r real user sys <<<"$times"

awk -v r="$real" -v u="$user" -v s="$sys" -v n="$stages" -v mb="$input_mb" -v c="$compressor" \
	'BEGIN { if (r <= 0) r = 0.001;
	         printf "time: %d (ms)  cpu_utilization: %.2f  stages: %d  input_mb: %d  compressor: %s\n",
	                r * 1000 + 0.5, (u + s) / r, n, mb, c }'

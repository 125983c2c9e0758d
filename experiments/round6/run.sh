#!/usr/bin/env bash
# Round 6's pre-registered run (docs/evaluation.md, "Evidence, round 6"), exactly its commands, per sampling seed; a
# seed's finished file is kept, so the run resumes across sessions (commit this folder after each seed). Needs a quiet
# machine and `make setup-vllm setup-qwen setup-qwen-1.5b`. The eval's table goes to log_S.txt unread: the plan reads
# no comparison before the last seed's eval; this script prints only the group counts and the fallbacks.
# Usage: experiments/round6/run.sh SEED ...   (3, 4, 5, ... in order; it starts no seed's failures once the earlier
# seeds hold 250 collapsed groups, the plan's stopping rule; `run.sh count` gives the figure)
#        experiments/round6/run.sh failures SEED ...   (only the failures stage; `run.sh SEED` then runs the eval)
set -euo pipefail
cd "$(dirname "$0")/../.."
export VLLM_CPU_KVCACHE_SPACE=2
E=experiments/round6 M=Qwen/Qwen2.5-Coder-0.5B-Instruct PORT=8011
stamp() { echo "$(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- mentor graphs prompts benchmarks/eval_configs || echo ' (dirty)')"; }
sha256sum --quiet -c $E/frozen.sha256  # the graph, prompts, configs and problems the plan froze
if [ "${1:-}" = count ]; then  # the collapsed groups so far, per seed: the stopping rule's figure
  for f in $E/failures_*.jsonl; do echo "$f $(wc -l < "$f")"; done; cat $E/failures_*.jsonl | wc -l; exit 0
fi
stage=all
if [ "${1:-}" = failures ]; then stage=failures; shift; fi  # only the failures stage: the evals follow later
server=
# (a killed server's wait returns 143: under `set -e` that ended the script before its summary, as in seed 3's run)
stop_server() { if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi; server=; }
trap stop_server EXIT
for s in "$@"; do
  if [ ! -f $E/failures_$s.jsonl ]; then
    [ "$s" -eq 3 ] || [ -f $E/failures_$((s - 1)).jsonl ] || { echo "seed $((s - 1)) comes before seed $s"; exit 2; }
    total=$(cat $E/failures_*.jsonl 2>/dev/null | wc -l || true)
    if [ "$total" -ge 250 ]; then echo "== $total collapsed groups before seed $s: the plan adds no more seeds"; break; fi
    echo "== seed $s: failures, $(stamp)" | tee -a $E/log_$s.txt
    .venv-vllm/bin/mentor failures --source policy --family humaneval --n 164 --problems $E/problems.txt \
        --policy $M --seed $s --engine vllm -o $E/failures_$s.jsonl 2>>$E/log_$s.txt | tee -a $E/log_$s.txt
  fi
  if [ $stage = all ] && [ ! -f $E/eval_$s.json ]; then
    # The eval, its engine and the 1.5B server peak near this VM's 24 GB (seed 6's first attempt was OOM-killed at
    # 23.7 GB): swap, which changes no computation, lets the idle server page out instead.
    if [ "$(awk '/SwapTotal/ {print $2}' /proc/meminfo)" -lt $((7 << 20)) ]; then  # kB: 8 GB of swap less its header
      echo "seed $s: add 8 GB of swap first: fallocate -l 8G /swapfile && chmod 600 /swapfile && mkswap /swapfile" \
           "&& swapon /swapfile"; exit 2
    fi
    echo "== seed $s: eval, $(stamp)" | tee -a $E/log_$s.txt
    make -s serve-qwen-1.5b QWEN_BIG_PORT=$PORT >>$E/server_$s.txt 2>&1 & server=$!
    until curl -sf localhost:$PORT/v1/models >/dev/null; do kill -0 $server; sleep 5; done
    rm -rf $E/iv_$s  # an interrupted seed's eval is rerun whole
    .venv-vllm/bin/mentor eval $E/failures_$s.jsonl --policy $M --engine vllm --seed $((100 + s)) \
        --max-new-tokens 384 --config mentor_llm=benchmarks/eval_configs/qwen_mentor_llm.yaml \
        --config mentor_big=benchmarks/eval_configs/qwen_mentor_big.yaml \
        --interventions $E/iv_$s -o $E/eval_$s.json >>$E/log_$s.txt 2>&1
    stop_server
  fi
  if [ $stage = all ]; then  # the counts only (no rate): groups, fallbacks with their causes, withheld hints
    jq -r '.configs | to_entries[] | "\(.key): \(.value.groups) groups, \(.value.llm_fallbacks // 0) llm fallbacks, \(.value.withheld // 0) withheld"' \
        $E/eval_$s.json | tee -a $E/log_$s.txt
    cat $E/iv_$s/*.jsonl | jq -r 'select((.fallbacks // []) | length > 0) | .fallbacks[]' | cut -c1-120 \
        | sort | uniq -c | sed 's/^/fallbacks: /' | tee -a $E/log_$s.txt
  fi
  echo "== seed $s: done ($stage), $(stamp)" | tee -a $E/log_$s.txt
done

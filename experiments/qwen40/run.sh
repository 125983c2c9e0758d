#!/usr/bin/env bash
# Issue 40's pre-registered run (docs/evidence/qwen40.md, "Pre-registration"), exactly its commands, per
# sampling seed; a seed's file that exists is kept, so the run resumes across sessions (commit this folder before each
# stop; log_S.txt keeps each command's printed figures). Needs a quiet machine and `make setup-vllm setup-qwen`.
# Usage: experiments/qwen40/run.sh [SEED ...] (default 0 1 2); STAGES=failures runs only the first stage (to fit a
# session: an eval takes about 80 min and cannot resume)
set -euo pipefail
cd "$(dirname "$0")/../.."
export VLLM_CPU_KVCACHE_SPACE=2
E=experiments/qwen40 M=Qwen/Qwen2.5-Coder-0.5B-Instruct STAGES=${STAGES:-failures eval}
quiet() { grep --line-buffered -v -E '^\(|INFO |WARNING ' || true; }  # the figures printed, without vLLM's log lines
for s in ${*:-0 1 2}; do
  if [ ! -f $E/failures_$s.jsonl ]; then
    echo "== seed $s: failures, $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $E/log_$s.txt
    .venv-vllm/bin/mentor failures --source policy --family humaneval --n 164 \
        --policy $M --seed $s --engine vllm -o $E/failures_$s.jsonl | quiet | tee -a $E/log_$s.txt
  fi
  if [[ $STAGES == *eval* && ! -f $E/eval_$s.json ]]; then
    echo "== seed $s: eval, $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $E/log_$s.txt
    rm -rf $E/iv_$s  # an interrupted seed's eval is rerun whole
    .venv-vllm/bin/mentor eval $E/failures_$s.jsonl --policy $M \
        --engine vllm --seed $((100 + s)) --max-new-tokens 384 --config feedback=benchmarks/eval_configs/qwen_feedback.yaml \
        --config mentor=default --config mentor_llm=benchmarks/eval_configs/qwen_mentor_llm.yaml \
        --interventions $E/iv_$s -o $E/eval_$s.json | quiet | tee -a $E/log_$s.txt
  fi
  echo "== seed $s: $STAGES done, $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $E/log_$s.txt
done

"""The TRL side: the generation hook wrapped around a GRPOTrainer, the callback that keeps the mentor's state in
checkpoints, and the collectives that keep every rank in step. The only package of mentor that imports trl."""

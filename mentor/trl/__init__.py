"""The TRL side: attaching to a GRPOTrainer, the generation hook wrapped around it, the callback that keeps the
mentor's state in checkpoints, and the collectives that keep every rank in step."""

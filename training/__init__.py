"""Training and evaluation tools (single-seat wrapper, PPO training, tournaments)."""

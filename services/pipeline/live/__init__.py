"""Live delivery: the broker's in-process fan-out, tailing, transports, per-caller quotas."""

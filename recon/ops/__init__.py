"""The operator's side of recon: the heartbeat, the run log in the terminal, the freshness check."""

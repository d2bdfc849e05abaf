"""Numbers about runs: sample statistics, figures, what differs between setups."""

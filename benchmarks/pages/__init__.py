"""The core's own pages: home, runs, machines, uploads, format help, the harness, accounts."""

"""Protection of the server process: per-request size and memory checks, Host-header checks, memory given back after large requests."""

"""Query planning (file slices for snapshot, read-optimized, incremental and time-travel queries) and the
file-group reader."""

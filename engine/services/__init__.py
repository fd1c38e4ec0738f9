"""Table services (compaction, clustering, clean, archive, savepoint/restore): schedule, execute, commit."""

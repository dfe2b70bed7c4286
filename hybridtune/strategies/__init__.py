"""Tuning strategies: one protocol (ask, tell, end) per strategy, run live by the pipeline or replayed on a stored pool, and their evaluation."""

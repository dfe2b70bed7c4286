"""Tuning strategies: one protocol (ask, tell, end), run live or replayed, and their evaluation.

Each strategy runs live in the pipeline or is replayed on a stored pool.
"""

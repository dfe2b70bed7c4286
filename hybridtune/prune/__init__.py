"""Pruning: from a ranking of predictions to the shortlist that is measured."""

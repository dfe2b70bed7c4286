"""Correction models learned from the store: features, estimators, training, persistence, replay."""

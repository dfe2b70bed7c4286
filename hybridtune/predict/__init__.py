"""Offline predictions: kerncraft ECM and roofline, working sets, communication cost, ranking."""

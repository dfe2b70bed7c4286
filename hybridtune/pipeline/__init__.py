"""The application: the stages in order, store policy, corrections, the tuned solver's sources."""

"""The application: the stages in their order, store policy, corrections and the tuned solver's sources."""

"""The face: the command line and the one place that knows the order of the stages."""

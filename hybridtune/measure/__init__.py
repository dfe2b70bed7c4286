"""Online measurement: building generated C, verifying it against the reference and timing it."""

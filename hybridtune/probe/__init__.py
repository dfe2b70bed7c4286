"""The machine probe: host facts, the in-core model, bandwidth benchmarks and the kerncraft machine file."""

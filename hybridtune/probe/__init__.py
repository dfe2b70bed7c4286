"""The machine probe: host facts, in-core model, bandwidth benchmarks, the kerncraft machine file."""

"""The compiler adapter: gcc builds of variants and native programs, and running those programs."""

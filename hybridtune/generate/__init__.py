"""From validated specs to the variant pool and, later, to generated code."""

"""Clusters beyond this machine: SimGrid platforms and SMPI runs of the generated MPI variants."""

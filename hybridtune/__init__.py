"""hybridtune: measurement-plus-model hybrid autotuner for parallel iterated Runge-Kutta solvers."""

__version__ = "0.1.0"

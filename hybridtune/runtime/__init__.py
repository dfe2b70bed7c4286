"""Who runs the pipeline's tasks: launch discovery, executors over MPI nodes, shutdown signals."""

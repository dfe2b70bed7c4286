"""Reports: rankings and tuning results as text and JSON, from records (printing is the CLI's)."""

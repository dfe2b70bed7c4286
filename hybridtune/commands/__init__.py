"""The command line: one thin module per command that parses, calls the pipeline, prints, exits."""

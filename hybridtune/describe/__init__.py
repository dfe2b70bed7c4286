"""YAML to validated, frozen specs: methods, IVPs, kernels, skeletons, machines, scenarios."""

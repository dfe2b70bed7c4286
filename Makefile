# Two commands on a fresh machine: `make tune` (install, run the main job on the default scenario)
# and `make test` (install, run the whole suite).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST_MACHINE := data/machines/host.yml

.PHONY: tune test install clean probe

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

probe: $(STAMP)
	$(BIN)/hybridtune machine probe -o $(HOST_MACHINE)

$(HOST_MACHINE): | $(STAMP)
	$(BIN)/hybridtune machine probe -o $(HOST_MACHINE)

tune: $(STAMP) | $(HOST_MACHINE)
	$(BIN)/hybridtune tune scenarios/default.yaml

test: $(STAMP)
	$(BIN)/python -m pytest tests

clean:
	rm -rf $(VENV) build *.egg-info

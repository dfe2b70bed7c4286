# Two commands on a fresh machine: `make tune` (install, run the main job on the default scenario)
# and `make test` (install, run the whole suite).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Extra-P in a venv of its own (it needs numpy < 2 and PySide6): predict/extrap_adapter.py runs it
EXTRAP_VENV := .venv-extrap
EXTRAP := $(EXTRAP_VENV)/.installed
HOST_MACHINE := data/machines/host.yml

.PHONY: tune test install clean probe extrap

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

$(EXTRAP):
	$(PYTHON) -m venv $(EXTRAP_VENV)
	$(EXTRAP_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(EXTRAP_VENV)/bin/python -m pip install --quiet extrap==4.2.5
	touch $(EXTRAP)

extrap: $(EXTRAP)

probe: $(STAMP)
	$(BIN)/hybridtune machine probe -o $(HOST_MACHINE)

$(HOST_MACHINE): | $(STAMP)
	$(BIN)/hybridtune machine probe -o $(HOST_MACHINE)

tune: $(STAMP) | $(HOST_MACHINE)
	$(BIN)/hybridtune tune scenarios/default.yaml

# the two environments are installed side by side (their downloads and unpacking overlap)
test:
	$(MAKE) --no-print-directory -j2 install extrap
	$(BIN)/python -m pytest tests

clean:
	rm -rf $(VENV) $(EXTRAP_VENV) build *.egg-info

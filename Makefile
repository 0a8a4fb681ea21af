# Two commands for a fresh machine with Python 3.11 and make:
#   make demo   install everything, audit the sample night in data/sample/, print where the report is
#   make test   install everything, run the whole test suite (slow exhaustive checks included)
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export DO_NOT_TRACK := 1

.PHONY: demo test test-fast odds bench lock clean

$(STAMP): requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/pitaudit demo

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q --durations=15

test-fast: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q -m "not slow"

odds: $(STAMP)
	@for rs in $$($(BIN)/pitaudit rulesets --names); do $(BIN)/pitaudit odds --ruleset $$rs; done

# every benchmark prints its figures (minutes: simulate, ingest and audit each write a 1,000,000-round night)
BENCHMARKS := poker_eval baccarat blackjack holdem_bonus simulate ingest audit detectors report
bench: $(STAMP)
	@for b in $(BENCHMARKS); do echo "== benchmarks/$$b.py"; $(BIN)/python -m benchmarks.$$b || exit 1; done

# re-pin every dependency (maintainers only; needs the network to the package index)
lock:
	$(PYTHON) -m venv /tmp/pitaudit-lock && /tmp/pitaudit-lock/bin/pip install --quiet -e '.[dev]' \
	  && /tmp/pitaudit-lock/bin/pip freeze --exclude-editable | grep -v '^pitaudit' > requirements.lock

clean:
	rm -rf $(VENV) out .pytest_cache

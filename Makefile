# Meld8 developer commands. Everything runs in ./.venv (created on first use).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install test test-slow sanitize lint format bench demo clean

$(STAMP): pyproject.toml setup.py meld8_env/hands/*.c meld8_env/hands/*.h meld8_env/engine/*.c meld8_env/engine/*.h
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# CPU torch from the local wheel first: a bare 'torch' requirement pulls a multi-GB CUDA build
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[dev,train,web]'
	touch $(STAMP)

install: $(STAMP)

test: install  ## the CI test command: fails if the C extension did not build
	MELD8_REQUIRE_NATIVE=1 $(BIN)/python -m pytest -q

test-slow: install  ## 10M-hand differential run (minutes)
	MELD8_REQUIRE_NATIVE=1 $(BIN)/python -m pytest -q -m slow

sanitize: install  ## ASan + UBSan build of the C extensions in a scratch copy, then the boundary fuzz tests
	PYTHON=$(BIN)/python tools/sanitize.sh

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: install
	$(BIN)/python -m pip install -q -e '.[bench]' || echo 'no pettingzoo[classic]: baseline rows skipped'
	$(BIN)/python bench/hand_eval.py
	$(BIN)/python bench/env_throughput.py

demo: install  ## the main job, small: the shipped PPO agent against both bots in a duplicate tournament, then the calculator
	# --resume once the log is there: a second `make demo` re-checks the logged games (re-created from their seeds) and
	# shows the table again (a --resume with no log to continue is refused: it would start a new tournament)
	$(BIN)/meld8 tournament --agents ppo,defensive,greedy --boards 40 --seed 1 --workers 2 --out results/demo $(if $(wildcard results/demo/games.jsonl),--resume)
	$(BIN)/meld8 score "2s 3s 4s 6h 7h 8h 9d 9c" --win 8h --tsumo --dora-indicator 8d

clean:
	rm -rf $(VENV) build *.egg-info meld8_env/hands/*.so

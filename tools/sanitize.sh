#!/usr/bin/env bash
# The sanitizer job: build the C extensions with AddressSanitizer + UndefinedBehaviorSanitizer in a
# scratch copy of the tracked files, then run the boundary fuzz tests (and the engine tests) on it.
# Any out-of-bounds access, use of uninitialised stack memory or undefined shift aborts the run.
# Usage: tools/sanitize.sh [pytest args...]   (PYTHON=... picks the interpreter; default .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
[[ "$PY" = /* ]] || PY="$PWD/$PY"  # absolute, without resolving the venv symlink
ARGS=("$@")
# plus the engine's wait table, the C bots (and their tie-break with witnesses; the _lite policies' pool-size tie-break; the CHEATING oracle policy), the belief sampler's C core, the evaluator's one-search and tie-break acceptance (its per-card count with the drawn card placed first) and one-pass discard table (near winning too, every acc_mode), and the threaded rollout (with its pauses for external seats)
[ ${#ARGS[@]} -eq 0 ] && ARGS=(tests/test_boundary_fuzz.py tests/test_fast_engine.py tests/test_engine_surface.py tests/test_wait_table.py
  tests/test_cbots.py::test_one_search_acceptance_equals_per_card_search
  tests/test_cbots.py::test_tiebreak_acceptance_is_exact_above_beat
  tests/test_cbots.py::test_tiebreak_acceptance_places_the_drawn_card_first_exactly
  tests/test_cbots.py::test_distance_after_every_discard_in_one_pass_equals_per_discard
  tests/test_cbots.py::test_one_pass_table_near_winning_equals_per_discard
  tests/test_cbots.py::test_discard_table_refuses_bad_input_in_one_line
  "tests/test_cbots.py::test_c_bots_equal_python_twins[3p]"
  "tests/test_cbots.py::test_c_bots_equal_python_twins_on_tie_breaks[3p]"
  "tests/test_cbots.py::test_lite_bots_change_only_the_far_tie_break[3p]"
  tests/test_cbots.py::test_oracle_refuses_observations
  tests/test_oracle.py::test_oracle_never_deals_in_while_a_safe_discard_exists
  tests/test_cbots.py::test_rollout_deterministic_and_thread_independent
  tests/test_search.py::test_rollout_plays_each_record_once_whatever_the_threads
  tests/test_cbots.py::test_special_form_bound_equals_the_unbounded_searches
  tests/test_rollout_external.py tests/test_belief_core.py tests/test_arena_c_games.py
  tests/test_state_records.py::test_a_record_field_out_of_range_is_refused_on_every_path
  tests/test_state_records.py::test_an_observed_seat_out_of_range_is_refused)
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
# the tracked files (links stay links), plus untracked test files while developing
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -xf - -C "$SCRATCH"
(cd "$SCRATCH" && MELD8_SANITIZE=1 "$PY" setup.py -q build_ext --inplace >/dev/null)
export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
export PYTHONPATH="$SCRATCH" MELD8_REQUIRE_NATIVE=1
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$SCRATCH"
echo "sanitizer build (ASan + UBSan) in $SCRATCH: pytest ${ARGS[*]}"
"$PY" -m pytest -q -p no:cacheprovider "${ARGS[@]}"

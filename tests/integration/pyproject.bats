#!/usr/bin/env bats
# pyproject.toml as a stack's input (-r pyproject.toml, --extra, --all-extras,
# --group).  Its TOML reader against Python's tomllib: the spec's own cases
# and documents tomllib refuses (tests/fixtures/toml), then REAL
# pyproject.toml files from the newest sdists on PyPI (cached; skipped with
# a message when PyPI cannot be reached).  What cannot be read is refused
# with the file, the cause and what to do.  (The closure from a pyproject
# equal to uv's: real_stacks.bats.)

setup_file() {
	export OWTOML=$OW_BUILD_DIR/tests/owtoml ORACLE=$OW_SOURCE_DIR/tests/tools/toml_oracle.py
}

@test "the TOML reader agrees with tomllib: the spec's examples, and every document tomllib refuses is refused naming FILE:LINE" {
	run "$ORACLE" "$OWTOML" "$OW_SOURCE_DIR"/tests/fixtures/toml/*.toml
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^ok .*refused by tomllib' <<<"$output")" -ge 25 ]
	grep -q '^ok .*valid-spec.toml: the same tree' <<<"$output"
}

@test "the TOML reader agrees with tomllib on real pyproject.toml files from PyPI sdists" {
	run "$OW_SOURCE_DIR/tests/tools/pypi_pyprojects.py" "$BATS_TEST_TMPDIR/real" packaging hatchling black httpx \
		pydantic pip pytest ruff uv scikit-learn pandas jupyterlab jupyterlab-server matplotlib poetry-core
	[ "$status" -ne 3 ] || skip "PyPI cannot be reached: the real pyproject.toml files were not compared ($output)"
	[ "$status" -eq 0 ]
	n=$(ls "$BATS_TEST_TMPDIR/real" | wc -l)
	[ "$n" -ge 12 ]
	run "$ORACLE" "$OWTOML" "$BATS_TEST_TMPDIR"/real/*.toml
	echo "$output"
	[ "$status" -eq 0 ]
	# and the requirements read from them: pandas' [all] names its own extras
	f=$(ls "$BATS_TEST_TMPDIR"/real/pandas-*.toml)
	run "$OWTOML" --pyproject "$f" --extra all
	[ "$status" -eq 0 ]
	[ "$(jq length <<<"$output")" -gt 20 ]
	! jq -r '.[].text' <<<"$output" | grep -qi '^pandas'
}

@test "[build-system] as pip reads it (pip's own load_pyproject_toml): real pyproject.toml files, none, and what pip refuses" {
	run "$OW_SOURCE_DIR/tests/tools/pypi_pyprojects.py" "$BATS_TEST_TMPDIR/real" packaging hatchling black httpx \
		pydantic pip pytest ruff uv scikit-learn pandas jupyterlab jupyterlab-server matplotlib poetry-core
	[ "$status" -ne 3 ] || skip "PyPI cannot be reached: the real pyproject.toml files were not compared ($output)"
	[ "$status" -eq 0 ]
	d=$BATS_TEST_TMPDIR/bs
	mkdir -p "$d"
	printf '[build-system]\nbuild-backend = "x"\n' >"$d/norequires.toml"
	printf '[build-system]\nrequires = "setuptools"\n' >"$d/notlist.toml"
	printf '[build-system]\nrequires = ["setup tools >= 1"]\n' >"$d/badreq.toml"
	printf '[build-system]\nrequires = [1]\n' >"$d/notstring.toml"
	printf '[build-system]\nrequires = ["setuptools>=61"]\n' >"$d/nobackend.toml"
	printf '[project]\nname = "x"\n' >"$d/nobuildsystem.toml"
	run python3 "$OW_SOURCE_DIR/tests/tools/buildsys_oracle.py" "$OWTOML" - "$d"/*.toml "$BATS_TEST_TMPDIR"/real/*.toml
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^ok .*both refuse' <<<"$output")" -eq 4 ]
	[ "$(grep -c '^ok ' <<<"$output")" -ge 19 ]
}

pyproject() { mkdir -p "$BATS_TEST_TMPDIR/p" && cat >"$BATS_TEST_TMPDIR/p/pyproject.toml"; }

resolve_py() { "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" resolve --offline --index-url http://127.0.0.1:9/whl \
	--variant cu128 --python 3.12 --platform linux-x86_64 -r "$BATS_TEST_TMPDIR/p/pyproject.toml" "$@"; }

@test "what a pyproject.toml cannot give is refused before anything is fetched: the file, the cause, what to do" {
	pyproject <<'TOML'
[project]
name = "lab"
version = "1"
dynamic = ["dependencies"]
TOML
	run resolve_py
	echo "$output"
	[ "$status" -eq 2 ] || [ "$status" -eq 1 ]
	[[ $output == *"pyproject.toml: the dependencies are dynamic"*"list them in a requirements file (-r) instead"* ]]
	pyproject <<'TOML'
[project]
name = "lab"
dependencies = ["torch"]
[project.optional-dependencies]
cuda = ["triton"]
data = ["datasets"]
[dependency-groups]
a = [{include-group = "b"}]
b = ["x", {include-group = "A"}]
TOML
	run resolve_py --extra gpu
	[[ $output == *"pyproject.toml: [project.optional-dependencies] has no 'gpu' (it has: cuda, data)"* ]]
	run resolve_py --group dev
	[[ $output == *"[dependency-groups] has no 'dev' (it has: a, b)"* ]]
	run resolve_py --group a
	[[ $output == *"[dependency-groups] 'A' includes itself"* ]]
	pyproject <<'TOML'
[project]
name = "lab"
dependencies = "torch"
TOML
	run resolve_py
	[[ $output == *"pyproject.toml:3: project.dependencies must be an array of requirement strings"* ]]
	pyproject <<'TOML'
[project]
name = "lab"
dependencies = ["torch @ https://example.org/torch.whl"]
TOML
	run resolve_py
	[[ $output == *"pyproject.toml:3 (project.dependencies): torch @ https://example.org/torch.whl: a direct URL cannot be resolved from an index"* ]]
	pyproject <<'TOML'
[project]
name = "lab"
dependencies = ["torch",
TOML
	run resolve_py
	[[ $output == *"pyproject.toml:4: an array that is never closed (no ']')"* ]]
	# --extra without a pyproject.toml
	printf 'torch\n' >"$BATS_TEST_TMPDIR/req.txt"
	run "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" resolve --offline --index-url http://127.0.0.1:9/whl \
		-r "$BATS_TEST_TMPDIR/req.txt" --extra cuda
	[ "$status" -eq 2 ]
	[[ $output == *"--extra, --all-extras and --group read a pyproject.toml: give it with -r pyproject.toml"* ]]
	# nothing was stored by any of these
	[ ! -e "$BATS_TEST_TMPDIR/ws/index.db" ] || [ "$("$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" --json ls files | jq .count)" -eq 0 ]
}

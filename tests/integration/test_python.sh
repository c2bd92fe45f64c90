#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# The Python package (bindings/python): it installs with pip from the source tree alone (no
# index, the build backend Debian ships), type-checks under mypy --strict, and its own tests
# pass against this agentbox: the control socket's protocol, runs, and a harness's agent loop
# over a session (bindings/python/tests/test_agentbox.py says what each asserts).
. "$(dirname "$0")/lib.sh"

PKG_SRC=$AGENTBOX_SOURCE/bindings/python

# install DIR: the package from a copy of its source (a build writes beside the source, which
# may not be ours) into DIR, as `pip install ./bindings/python` would into an environment.
install() {
	cp -r "$PKG_SRC" "$CASE/src" || fail "cannot copy $PKG_SRC"
	expect_exit 0 env PIP_DISABLE_PIP_VERSION_CHECK=1 "$PY" -m pip install --no-index \
		--no-build-isolation --no-deps --no-cache-dir --target "$1" "$CASE/src"
}

t_pip_install() {
	install "$CASE/site"
	assert_exists "$CASE/site/agentbox/py.typed" "the package says it is typed"
	expect_exit 0 env PYTHONPATH="$CASE/site" "$PY" -c \
		'import agentbox; print(agentbox.__version__, agentbox.__file__)'
	assert_contains "$OUT" "$CASE/site/agentbox/__init__.py" "the installed copy is the one imported"
}

t_typed() {
	"$PY" -c 'import mypy' 2>/dev/null || fail "mypy is missing: tools/install-deps installs it"
	expect_exit 0 "$PY" -m mypy --strict --cache-dir "$CASE/cache" "$PKG_SRC/agentbox"
}

t_package_tests() {
	install "$CASE/site"
	expect_exit 0 env PYTHONPATH="$CASE/site" AGENTBOX_BINARY="$AGENTBOX" TEST_WORKDIR="$CASE" \
		"$PY" "$CASE/src/tests/test_agentbox.py" -v
	assert_contains "$ERR" "OK" "unittest's summary"
}

run_case pip_install t_pip_install
run_case typed t_typed
run_case package_tests t_package_tests
finish

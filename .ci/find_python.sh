# shellcheck shell=bash
# find_python VERSION: prints an interpreter for VERSION that really runs (pyenv's, else
# on PATH), or nothing. Sourced by .ci/versions and .ci/focus-validator.
find_python() {
    local version="$1" candidate
    # pyenv's shims answer for every installed version but fail for one not selected,
    # so each candidate is asked to run before it is used.
    for candidate in \
        $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$version".*/bin/python"$version" 2>/dev/null | sort -V -r) \
        "$(command -v "python$version" 2>/dev/null || true)"; do
        if [ -n "$candidate" ] && "$candidate" -c "import sys" >/dev/null 2>&1; then
            printf '%s' "$candidate"
            return
        fi
    done
}

#!/usr/bin/env bash
# CI's hardening and packaging steps, run by .ci/run after the README's test command has built and
# tested `build`. Each step is timed; the times are printed at the end, also when a step fails.
#   1. the whole test suite again, built with ASan+UBSan (build-asan, -DMESHPLAN_SANITIZE=ON)
#   2. the libFuzzer targets (build-fuzz, clang), each FUZZ_SECONDS over a copy of its seeds
#   3. the .deb from `build` (cpack), unpacked into a clean root and checked there: Depends, the
#      files, `meshplan-cli --version`, an evaluate of the installed default plan, the desktop
#      file, the AppStream metainfo and the man pages
# Usage: bash packaging/ci-hardening.sh [STEP...]   (no STEP: all of them, in order; steps are
#   deps asan-build asan-test fuzz-build fuzz-run package install-check)
# Environment: JOBS (build jobs, 2), FUZZ_SECONDS (60), KEEP (1: keep the unpacked root).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_TARGETS="fuzz_plan:plan fuzz_hfconfig:hfconfig fuzz_deck:deck"

step_names=()
step_seconds=()
report() {
    local total=0 i
    echo "== ci-hardening step times"
    for i in "${!step_names[@]}"; do
        printf '  %-16s %5ds\n' "${step_names[$i]}" "${step_seconds[$i]}"
        total=$((total + step_seconds[i]))
    done
    printf '  %-16s %5ds\n' total "$total"
}
trap report EXIT
# step NAME COMMAND...: runs one step, timed; a failing step ends the script.
step() {
    local name=$1 start rc=0
    shift
    echo "== $name"
    start=$(date +%s)
    # A subshell outside any `||`, so that `set -e` holds inside the step's function.
    set +e
    (set -e; "$@")
    rc=$?
    set -e
    step_names+=("$name")
    step_seconds+=($(($(date +%s) - start)))
    if [ "$rc" != 0 ]; then
        echo "ci-hardening: step $name failed ($rc)" >&2
        exit "$rc"
    fi
}

deps() { sh packaging/install-deps.sh --hardening; }

# ---- 1. sanitizers ------------------------------------------------------------------------------
# -O1 with assertions on (a Debug build at -O1): what ASan recommends, and quicker to compile.
asan_build() {
    cmake -S . -B build-asan -DMESHPLAN_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O1 >/dev/null
    cmake --build build-asan -j"$JOBS"
}
asan_test() {
    # The sanitizer options come with each test (tests/CMakeLists.txt). No LSan suppressions are
    # needed: Debian's Qt 6.4, fontconfig and QCustomPlot report no leaks in this suite.
    ctest --test-dir build-asan --output-on-failure -j"$JOBS"
}

# ---- 2. fuzzing ---------------------------------------------------------------------------------
fuzz_build() {
    cmake -S . -B build-fuzz -DMESHPLAN_FUZZ=ON -DMESHPLAN_BUILD_TESTS=OFF -DCMAKE_CXX_COMPILER=clang++ \
        -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O1 >/dev/null
    local targets=() t
    for t in $FUZZ_TARGETS; do targets+=(--target "${t%%:*}"); done
    cmake --build build-fuzz -j"$JOBS" "${targets[@]}"
}
# Runs every target at once (one core each) over a fresh copy of its seeds; a crash, a leak, a
# sanitizer report or a timeout fails the step and leaves the reproducer in build-fuzz/artifacts/.
fuzz_run() {
    local work=build-fuzz/run artifacts=build-fuzz/artifacts t name corpus pids=() rc=0 i=0
    rm -rf "$work"
    mkdir -p "$work" "$artifacts"
    for t in $FUZZ_TARGETS; do
        name=${t%%:*}
        corpus=${t##*:}
        mkdir -p "$work/$name"
        cp tests/fuzz/corpus/"$corpus"/* "$work/$name/"
        ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
            ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer \
            build-fuzz/tests/fuzz/"$name" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 \
            -dict=tests/fuzz/"$corpus".dict -print_final_stats=1 -artifact_prefix="$artifacts/$name-" \
            "$work/$name" >"$work/$name.log" 2>&1 &
        pids+=($!)
    done
    for t in $FUZZ_TARGETS; do
        name=${t%%:*}
        if wait "${pids[$i]}"; then
            echo "$name: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$name.log" | grep -o '[0-9]*$') executions," \
                 "$(grep -o 'stat::new_units_added: *[0-9]*' "$work/$name.log" | grep -o '[0-9]*$') new inputs, no crash"
        else
            rc=1
            echo "$name: FAILED; the last lines of its log ($work/$name.log):"
            tail -n 60 "$work/$name.log"
        fi
        i=$((i + 1))
    done
    if [ "$rc" != 0 ]; then
        echo "reproducers (copy them into tests/fuzz/corpus/<target>/ once fixed):"
        ls -l "$artifacts"
    fi
    return "$rc"
}

# ---- 3. the package -----------------------------------------------------------------------------
package() {
    rm -f build/meshplan_*.deb
    (cd build && cpack -G DEB)
}
install_check() {
    local deb fail=0 f
    # root stays global: the EXIT trap that removes it runs after this function has returned.
    deb=$(ls build/meshplan_*.deb)
    echo "-- $deb"
    dpkg-deb -f "$deb"
    # Depends must come from dpkg-shlibdeps: Qt and QCustomPlot with versions, not a hand-written list.
    dpkg-deb -f "$deb" Depends | grep -q 'libqt6widgets6 (>=' || { echo "Depends lacks shlibdeps' Qt"; return 1; }
    dpkg-deb -f "$deb" Depends | grep -q 'libqcustomplot2.1-qt6' || { echo "Depends lacks QCustomPlot"; return 1; }
    echo "-- contents"
    dpkg-deb -c "$deb" | awk '{print $1, $3, $6}'
    # Would apt accept it on this machine (every dependency installable)? Simulated only.
    apt-get install -s -qq "./$deb" >/dev/null
    root=$(mktemp -d)
    [ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$root"' EXIT
    dpkg -x "$deb" "$root"
    local prefix="$root/usr"
    for f in bin/meshplan bin/meshplan-cli \
             share/applications/io.meshplan.Meshplan.desktop share/metainfo/io.meshplan.Meshplan.metainfo.xml \
             share/mime/packages/io.meshplan.Meshplan.xml share/icons/hicolor/scalable/apps/io.meshplan.Meshplan.svg \
             share/icons/hicolor/16x16/apps/io.meshplan.Meshplan.png share/icons/hicolor/256x256/apps/io.meshplan.Meshplan.png \
             share/man/man1/meshplan-cli.1.gz share/man/man1/meshplan.1.gz share/meshplan/default-plan.meshplan \
             share/doc/meshplan/copyright; do
        [ -s "$prefix/$f" ] || { echo "missing from the package: /usr/$f"; fail=1; }
    done
    ls "$prefix"/share/meshplan/scenarios/*.meshplan >/dev/null || fail=1
    for f in "$prefix"/share/icons/hicolor/*x*/apps/io.meshplan.Meshplan.png; do
        local size=${f#"$prefix"/share/icons/hicolor/}
        size=${size%%/*}
        file -b "$f" | grep -q "PNG image data, ${size/x/ x }," || { echo "not a ${size} PNG: $f"; fail=1; }
    done
    file -b "$prefix/bin/meshplan-cli" | grep -q 'ELF 64-bit.*stripped' || { echo "meshplan-cli: not a stripped ELF"; fail=1; }
    # The installed binaries run from the clean root on the system's libraries alone (no build RUNPATH).
    if readelf -d "$prefix/bin/meshplan-cli" "$prefix/bin/meshplan" | grep -E 'RPATH|RUNPATH'; then
        echo "installed binaries carry a RUNPATH"; fail=1
    fi
    echo "-- run from $root"
    (cd / && "$prefix/bin/meshplan-cli" --version) || fail=1
    (cd / && "$prefix/bin/meshplan" --version) || fail=1
    (cd / && "$prefix/bin/meshplan-cli" evaluate "$prefix/share/meshplan/default-plan.meshplan") || fail=1
    for f in "$prefix"/share/meshplan/scenarios/*.meshplan; do
        (cd / && "$prefix/bin/meshplan-cli" evaluate --json "$f" >/dev/null) || { echo "evaluate failed: $f"; fail=1; }
    done
    echo "-- validate the desktop integration files"
    desktop-file-validate "$prefix/share/applications/io.meshplan.Meshplan.desktop" || fail=1
    appstreamcli validate --no-net "$prefix/share/metainfo/io.meshplan.Meshplan.metainfo.xml" || fail=1
    if command -v update-mime-database >/dev/null; then
        XDG_DATA_DIRS="$prefix/share" update-mime-database "$prefix/share/mime" || fail=1
        grep -q 'application/x-meshplan-plan' "$prefix/share/mime/globs2" || { echo "mime type not registered"; fail=1; }
    fi
    for f in "$prefix"/share/man/man1/*.1.gz; do
        # man's own lint, as lintian runs it: any troff warning fails.
        if LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$f" 2>&1 >/dev/null | grep .; then
            echo "man page warnings: $f"; fail=1
        fi
    done
    [ "${KEEP:-0}" = 1 ] && echo "kept the unpacked root: $root"
    return "$fail"
}

all_steps="deps asan-build asan-test fuzz-build fuzz-run package install-check"
for name in ${*:-$all_steps}; do
    case " $all_steps " in
        *" $name "*) step "$name" "${name//-/_}" ;;
        *) echo "ci-hardening: no step \"$name\" (steps: $all_steps)" >&2; exit 2 ;;
    esac
done

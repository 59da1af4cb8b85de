# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The build scripts' cache lock: two builds started at once in one empty cache both succeed, and one built.

A fake ``go`` first on PATH records each build, sleeps (the first one 1 s, so the two builds overlap) and writes the binaries
the real one would; no Go toolchain or module proxy is needed. Each script is started twice at the same
moment with the same fresh GPUOPS_CACHE_DIR: before the lock, both built into the same ``<dir>.tmp`` and
the second failed (``mv: cannot stat .../kubernetes-v1.34.10.tmp``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess

import pytest

TESTS = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FAKE_GO = r"""#!/usr/bin/env bash
# fake go: "go build [flags] -o OUT PKG..." -> one executable per package (OUT ending in / is a directory).
set -euo pipefail
[ "$1" = build ] || { echo "fake go: only 'go build'" >&2; exit 2; }
shift
out=""
pkgs=()
while [ $# -gt 0 ]; do
  case $1 in
    -o) out=$2; shift 2 ;;
    -ldflags|-tags) shift 2 ;;
    -*) shift ;;
    *) pkgs+=("$1"); shift ;;
  esac
done
# The first build is slow enough for the second script to reach the lock; the others need not be.
if grep -q '^start' "$FAKE_GO_LOG" 2>/dev/null; then sleep 0.2; else sleep "$FAKE_GO_SLEEP"; fi
echo "start $$ $out" >>"$FAKE_GO_LOG"
if [ "${out%/}" != "$out" ]; then
  for p in "${pkgs[@]}"; do printf '#!/bin/sh\n' >"$out${p##*/}"; chmod +x "$out${p##*/}"; done
else
  printf '#!/bin/sh\n' >"$out"; chmod +x "$out"
fi
echo "done $$ $out" >>"$FAKE_GO_LOG"
"""

# script, what it prints (the paths it built), how many `go build` runs a cold cache takes
SCRIPTS = [
    ("localcluster/build.sh", 3),  # kubernetes (three binaries in one run), etcd, kwok; no kubectl
    ("monitoring/build_promtool.sh", 1),
    ("oracles/build.sh", 7),  # helm, dpconfig, ctkinstaller, containerd 1.7, 2.0, 2.1, 2.2
]


@pytest.fixture
def fake_env(tmp_path):
    bindir = tmp_path / "fakebin"
    bindir.mkdir()
    go = bindir / "go"
    go.write_text(FAKE_GO)
    go.chmod(0o755)
    env = dict(os.environ)
    for name in ("GPUOPS_BIN_DIR", "KUBEBUILDER_ASSETS", "PROMTOOL", "XDG_CACHE_HOME"):
        env.pop(name, None)
    env.update(
        PATH="{0}{1}{2}".format(bindir, os.pathsep, os.environ.get("PATH", "")),
        GPUOPS_CACHE_DIR=str(tmp_path / "cache"),
        FAKE_GO_LOG=str(tmp_path / "go.log"),
        FAKE_GO_SLEEP="1",
    )
    return env, tmp_path


def started_builds(log_path):
    with open(log_path) as f:
        return [line.split()[2] for line in f if line.startswith("start ")]


def run_script(script, env):
    """One build script of tests/ run to its end, its output kept (it may fail: the caller looks)."""
    return subprocess.run(
        ["bash", os.path.join(TESTS, script)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False
    )


@pytest.mark.parametrize("script, builds", SCRIPTS, ids=[s for s, _n in SCRIPTS])
def test_two_builds_at_once_share_one_build(fake_env, script, builds):
    env, tmp_path = fake_env
    path = os.path.join(TESTS, script)
    procs = [
        subprocess.Popen(["bash", path], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _i in range(2)
    ]
    results = [(p.wait(timeout=120), p.stdout.read().decode(), p.stderr.read().decode()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    for rc, out, err in results:
        assert rc == 0, err
    # Both print the same binaries, and they are there.
    assert results[0][1] == results[1][1] and results[0][1].strip()
    for line in results[0][1].split("\n"):
        if not line.strip():
            continue
        target = line.split()[-1]
        if os.path.isdir(target):  # localcluster/build.sh prints the directory of the five links
            names = sorted(os.listdir(target))
            assert names == sorted(["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"])
            assert all(os.access(os.path.join(target, n), os.X_OK) for n in names)
        else:
            assert os.access(target, os.X_OK), target
    # Every program was built once, by one of the two: the other waited for the lock and reused it.
    started = started_builds(str(tmp_path / "go.log"))
    assert len(started) == builds and len(set(started)) == builds, started
    assert "built meanwhile by another build; reusing it" in results[0][2] + results[1][2], results
    # No temporary build directory is left in the cache.
    leftovers = [n for n in os.listdir(str(tmp_path / "cache" / "bin")) if ".tmp" in n]
    assert leftovers == []


def test_a_failed_build_leaves_no_binary_and_no_temporary_directory(fake_env):
    env, tmp_path = fake_env
    failing = tmp_path / "fakebin" / "go"
    failing.write_text("#!/bin/sh\necho 'fake go: compile error' >&2\nexit 1\n")
    proc = run_script("monitoring/build_promtool.sh", env)
    assert proc.returncode != 0 and b"compile error" in proc.stderr
    assert proc.stdout == b""
    assert [n for n in os.listdir(str(tmp_path / "cache" / "bin")) if not n.startswith(".")] == []


def test_kubectl_is_built_only_when_asked_for_and_then_linked(fake_env):
    """`make test` builds no kubectl (no test runs it); `make cluster-up` asks for it (--kubectl) for people."""
    env, tmp_path = fake_env
    env["FAKE_GO_SLEEP"] = "0"
    script = os.path.join(TESTS, "localcluster/build.sh")

    def run(*args):
        proc = subprocess.run(["bash", script] + list(args), env=env, stdout=subprocess.PIPE, check=True)
        return sorted(os.listdir(proc.stdout.decode().strip().splitlines()[-1]))

    assert "kubectl" not in run()
    assert not any("/kubectl" in p for p in started_builds(str(tmp_path / "go.log")))
    assert "kubectl" in run("--kubectl")
    assert "kubectl" in run()  # linked once built
    started = started_builds(str(tmp_path / "go.log"))
    assert len(started) == 4 and sum("kubectl-v" in p for p in started) == 1, started
    bad = subprocess.run(["bash", script, "--bogus"], env=env, stderr=subprocess.PIPE, check=False)
    assert bad.returncode == 2 and b"usage: build.sh [--kubectl]" in bad.stderr


def test_named_oracle_programs_are_built_alone_and_an_unknown_name_is_refused(fake_env):
    """`build.sh helm` builds helm only (test_gpu_operator_helm.py, while `make test` builds the rest beside it)."""
    env, tmp_path = fake_env
    env["FAKE_GO_SLEEP"] = "0"
    script = os.path.join(TESTS, "oracles/build.sh")
    proc = subprocess.run(["bash", script, "helm"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
    assert [line.split()[0] for line in proc.stdout.decode().splitlines()] == ["helm"]
    assert [os.path.basename(p) for p in started_builds(str(tmp_path / "go.log"))] == ["helm"]
    # --locate with a name answers for that program only: helm is built, dpconfig is not.
    located = subprocess.run(["bash", script, "--locate", "helm"], env=env, stdout=subprocess.PIPE, check=False)
    assert located.returncode == 0 and located.stdout.decode().split()[0] == "helm"
    missing = subprocess.run(["bash", script, "--locate", "dpconfig"], env=env, stderr=subprocess.PIPE, check=False)
    assert missing.returncode == 1 and b"not built: dpconfig" in missing.stderr
    unknown = subprocess.run(["bash", script, "hlem"], env=env, stderr=subprocess.PIPE, check=False)
    assert unknown.returncode == 2
    assert b"no oracle program named 'hlem' (one of: helm dpconfig" in unknown.stderr
    assert len(started_builds(str(tmp_path / "go.log"))) == 1


def test_helm_first_so_the_integration_test_waits_least(fake_env):
    """The full build starts with helm: `make test` runs it beside the integration tests, which need helm first."""
    env, tmp_path = fake_env
    env["FAKE_GO_SLEEP"] = "0"
    subprocess.run(["bash", os.path.join(TESTS, "oracles/build.sh")], env=env, stdout=subprocess.PIPE, check=True)
    assert os.path.basename(started_builds(str(tmp_path / "go.log"))[0]) == "helm"


def test_a_failed_kubernetes_build_fails_the_control_plane_script(fake_env):
    """etcd and kwok build, Kubernetes fails: the script fails and leaves no Kubernetes directory (it used to exit 0
    with an empty one: the call sat in a `|| rc=$?` list, where bash ignores errexit)."""
    env, tmp_path = fake_env
    env["FAKE_GO_SLEEP"] = "0"
    go = tmp_path / "fakebin" / "go"
    go.write_text(
        FAKE_GO.replace(
            "set -euo pipefail\n",
            'set -euo pipefail\ncase "$*" in *k8s.io/kubernetes/cmd*) echo "fake go: compile error" >&2; exit 1;; esac\n',
            1,
        )
    )
    proc = run_script("localcluster/build.sh", env)
    assert proc.returncode != 0 and b"compile error" in proc.stderr, proc.stderr
    assert b"kubernetes built" not in proc.stderr
    assert proc.stdout == b""
    built = sorted(n for n in os.listdir(str(tmp_path / "cache" / "bin")) if not n.startswith("."))
    assert [n.split("-v")[0] for n in built] == ["etcd", "kwok"], built

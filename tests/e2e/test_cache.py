"""pyddc's compile cache (codegen/BuildCache): a second build of the same
thing runs no C++ compiler, anything that changes the output misses, the
size limit evicts the least recently used entries, and processes building
the same kernel at once agree on one entry. Every test has its own cache
($PYDD_CACHE_DIR)."""

import os
import subprocess
import sys
import sysconfig

import pytest

import pydd

EXT = sysconfig.get_config_var("EXT_SUFFIX")
KERNEL = """\
from pydd import *

def scale(x: Array(float64), a: float64) -> Array(float64):
    y = zeros(len(x))
    for i in range(len(x)):
        y[i] = a * x[i] + {c}
    return y
"""


@pytest.fixture
def env(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("PYDD_CACHE_DIR", str(cache))
    monkeypatch.delenv("PYDD_CACHE_SIZE", raising=False)
    return cache


def pyddc(*args, **kw):
    proc = subprocess.run([pydd.find_pyddc(), *map(str, args)], capture_output=True, text=True, timeout=300, **kw)
    assert proc.returncode == 0, proc.stderr
    return proc


def write(path, c=0.0):
    path.write_text(KERNEL.format(c=c))
    return path


def entries(cache):
    return sorted(p.name for p in cache.iterdir() if p.is_dir() and not p.name.startswith(".")) \
        if cache.exists() else []


def ran_compiler(proc):
    """Whether pyddc -v showed a C++ compiler command."""
    return any(line.split()[0].endswith(("++", "g++", "clang++", "c++")) for line in proc.stderr.splitlines()
               if line.strip())


def test_second_build_is_a_hit(env, tmp_path):
    src = write(tmp_path / "k.pydd")
    first = pyddc("-v", "-O0", src, "-o", tmp_path / "a")
    assert ran_compiler(first) and "pyddc: cached: " in first.stderr
    second = pyddc("-v", "-O0", src, "-o", tmp_path / "b")
    assert not ran_compiler(second) and "pyddc: cache hit: " in second.stderr
    a, b = (tmp_path / d / f"k{EXT}" for d in "ab")
    assert a.read_bytes() == b.read_bytes()
    assert len(entries(env)) == 1


@pytest.mark.parametrize("change", ["source", "opt", "bounds-check", "host", "name"])
def test_what_changes_the_output_misses(env, tmp_path, change):
    src = write(tmp_path / "k.pydd")
    pyddc("-O0", src, "-o", tmp_path / "out")
    args = ["-O0", src]
    if change == "source":
        write(src, 1.0)
    elif change == "opt":
        args[0] = "-O1"
    elif change == "bounds-check":
        args.append("--bounds-check")
    elif change == "host":
        args.append("--host=cpp")
    else:
        args[1] = write(tmp_path / "k2.pydd")
    proc = pyddc("-v", *args, "-o", tmp_path / "out2")
    assert ran_compiler(proc), proc.stderr
    assert len(entries(env)) == 2


def test_comment_only_change_hits_nothing_stale(env, tmp_path):
    # The key covers the source text itself, not only the generated code.
    src = write(tmp_path / "k.pydd")
    pyddc("-O0", src, "-o", tmp_path / "out")
    src.write_text(src.read_text() + "# a comment\n")
    pyddc("-O0", src, "-o", tmp_path / "out")
    assert len(entries(env)) == 2


def test_cpp_host_is_cached_whole(env, tmp_path):
    src = write(tmp_path / "k.pydd")
    pyddc("--host=cpp", "-O0", src, "-o", tmp_path / "a")
    proc = pyddc("-v", "--host=cpp", "-O0", src, "-o", tmp_path / "b")
    assert not ran_compiler(proc)
    for name in ("libk.a", "libk.so", "k.h"):
        assert (tmp_path / "b" / name).read_bytes() == (tmp_path / "a" / name).read_bytes()


def test_no_cache_builds_and_stores_nothing(env, tmp_path):
    src = write(tmp_path / "k.pydd")
    pyddc("-O0", src, "-o", tmp_path / "a")
    proc = pyddc("-v", "--no-cache", "-O0", src, "-o", tmp_path / "b")
    assert ran_compiler(proc) and "cache" not in proc.stderr
    assert (tmp_path / "b" / f"k{EXT}").is_file()
    write(src, 2.0)
    pyddc("--no-cache", "-O0", src, "-o", tmp_path / "c")
    assert len(entries(env)) == 1


def test_in_cache_names_the_entry(env, tmp_path):
    src = write(tmp_path / "k.pydd")
    entry = pyddc("-O0", "--in-cache", src).stdout.strip()
    assert os.path.dirname(entry) == str(env) and os.path.basename(entry).startswith("k-")
    assert os.listdir(entry) == [f"k{EXT}"]
    assert pyddc("-O0", "--in-cache", src).stdout.strip() == entry
    assert not list(tmp_path.glob(f"k{EXT}"))  # nothing written to -o's default


def test_size_limit_evicts_least_recently_used(env, tmp_path, monkeypatch):
    srcs = [write(tmp_path / f"k{i}.pydd", float(i)) for i in range(3)]
    pyddc("-O0", srcs[0], "-o", tmp_path / "out")
    size = sum(f.stat().st_size for d in env.iterdir() if d.is_dir() for f in d.iterdir())
    # Room for two entries of this size, not three.
    monkeypatch.setenv("PYDD_CACHE_SIZE", str(int(size * 2.5)))
    pyddc("-O0", srcs[1], "-o", tmp_path / "out")
    pyddc("-O0", srcs[0], "-o", tmp_path / "out")  # a hit: k0 is now more recent than k1
    proc = pyddc("-v", "-O0", srcs[2], "-o", tmp_path / "out")
    assert "pyddc: evicted " in proc.stderr and "/k1-" in proc.stderr
    assert [e.split("-")[0] for e in entries(env)] == ["k0", "k2"]


def test_size_suffixes(env, tmp_path, monkeypatch):
    src = write(tmp_path / "k.pydd")
    monkeypatch.setenv("PYDD_CACHE_SIZE", "1K")  # smaller than any entry: only the newest stays
    pyddc("-O0", src, "-o", tmp_path / "out")
    write(src, 3.0)
    pyddc("-O0", src, "-o", tmp_path / "out")
    assert len(entries(env)) == 1
    monkeypatch.setenv("PYDD_CACHE_SIZE", "1G")
    write(src, 4.0)
    pyddc("-O0", src, "-o", tmp_path / "out")
    assert len(entries(env)) == 2


def test_concurrent_builds_of_one_kernel(env, tmp_path):
    # Four processes start on the same new kernel at once: one builds, the
    # others wait for its entry; all outputs are that entry's bytes.
    src = write(tmp_path / "k.pydd", 7.0)
    exe = pydd.find_pyddc()
    procs = [subprocess.Popen([exe, "-v", "-O0", str(src), "-o", str(tmp_path / f"out{i}")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(4)]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    assert all(rc == 0 for rc, _ in results), results
    assert sum("pyddc: cached: " in err for _, err in results) == 1, results
    built = {(tmp_path / f"out{i}" / f"k{EXT}").read_bytes() for i in range(4)}
    assert len(built) == 1
    assert len(entries(env)) == 1
    assert [p.name for p in env.iterdir() if p.name.startswith(".tmp")] == []


def test_compile_hits_in_a_second_process(env, tmp_path):
    # pydd.compile imports straight from the entry; a new process neither
    # rebuilds nor copies.
    src = write(tmp_path / "k.pydd", 0.5)
    script = ("import sys, numpy as np, pydd\n"
              f"m = pydd.compile({str(src)!r}, opt=0, extra_args=['-v'])\n"
              "print(m.__file__)\n"
              "print(m.scale(np.arange(3.0), 2.0).tolist())\n")
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "PYDDC": pydd.find_pyddc()}) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
        assert r.stdout.splitlines()[1] == "[0.5, 2.5, 4.5]"
    assert "pyddc: cached: " in runs[0].stderr and "pyddc: cache hit: " in runs[1].stderr
    assert not ran_compiler(runs[1])
    assert runs[0].stdout.splitlines()[0] == runs[1].stdout.splitlines()[0]
    assert runs[0].stdout.splitlines()[0].startswith(str(env))

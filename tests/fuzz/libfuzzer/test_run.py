"""run.py's corpus handling, with the libFuzzer target of the build directory
$PYDD_BUILD_DIR (else this checkout's build/); part of ctest `fuzz`."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run  # noqa: E402

BUILD = Path(os.environ.get("PYDD_BUILD_DIR", HERE.parents[2] / "build"))
EXE = BUILD / "libfuzzer" / "pydd_fuzz"
SEEDS = sorted((HERE.parents[2] / "examples").glob("*.pydd"))[:4]
FLAGS = run.LIMITS


def corpus_with_copies(tmp_path):
    """Four inputs, each also under a second name: the copies add no coverage."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for k, p in enumerate(SEEDS):
        (corpus / f"{k}").write_bytes(p.read_bytes())
        (corpus / f"{k}-copy").write_bytes(p.read_bytes())
    return corpus


@pytest.mark.skipif(not EXE.exists(), reason="no libFuzzer target in this build")
def test_merge_keeps_one_of_each_input(tmp_path, capsys):
    assert len(SEEDS) == 4
    corpus = corpus_with_copies(tmp_path)
    run.merge_corpus(EXE, corpus, FLAGS + [f"-artifact_prefix={tmp_path}/"], dict(os.environ), tmp_path)
    kept = sorted(p.read_bytes() for p in corpus.iterdir())
    assert 1 <= len(kept) <= len(SEEDS)
    assert len(set(kept)) == len(kept)  # no input twice
    assert set(kept) <= {p.read_bytes() for p in SEEDS}
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["corpus"]  # no scratch left
    assert "merged the corpus from 8 to" in capsys.readouterr().out


def test_failed_merge_keeps_the_corpus(tmp_path, capsys):
    corpus = corpus_with_copies(tmp_path)
    before = sorted(p.name for p in corpus.iterdir())
    run.merge_corpus(Path("/bin/false"), corpus, FLAGS, dict(os.environ), tmp_path)
    assert sorted(p.name for p in corpus.iterdir()) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["corpus"]
    assert "merging the corpus failed" in capsys.readouterr().out


FAKE_FUZZER = """#!/usr/bin/python3
import sys
with open(sys.argv[0] + ".args", "a") as f:
    f.write(repr(sys.argv[1:]) + "\\n")
sys.stderr.write("stat::number_of_executed_units: 7\\n")
"""


@pytest.mark.parametrize("seconds, campaign", [(45, False), (600, True)])
def test_only_campaigns_use_the_corpus(tmp_path, seconds, campaign):
    """A campaign fuzzes the kept corpus; a shorter run (CI's) a scratch one,
    so that its time stays bounded: libFuzzer executes a whole corpus before
    its time limit applies, and a 45 s run after a campaign took minutes.
    (A stand-in fuzzer records how run.py calls it.)"""
    work = tmp_path / "libfuzzer"
    work.mkdir()
    fake = work / "pydd_fuzz"
    fake.write_text(FAKE_FUZZER)
    fake.chmod(0o755)
    corpus = corpus_with_copies(work)
    before = sorted((p.name, p.read_bytes()) for p in corpus.iterdir())
    proc = subprocess.run([sys.executable, str(HERE / "run.py"), "--build", str(tmp_path), "--seconds", str(seconds),
                           "--no-merge"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "libfuzzer: 7 executions" in proc.stdout
    (args,) = [eval(line) for line in (work / "pydd_fuzz.args").read_text().splitlines()]
    assert (args[0] == str(corpus)) == campaign, args
    assert f"-max_total_time={seconds}" in args
    assert sorted((p.name, p.read_bytes()) for p in corpus.iterdir()) == before

"""Runs the libFuzzer target over frontend, sema, passes and emitters.

    /usr/bin/python3 tests/fuzz/libfuzzer/run.py --seconds 30          # CI
    /usr/bin/python3 tests/fuzz/libfuzzer/run.py --seconds 3600 -j 2   # a campaign
    /usr/bin/python3 tests/fuzz/libfuzzer/run.py --seconds 3600 -j 2 --background

The seeds are every .pydd file in the repository. A campaign (ten minutes
or more) grows the corpus in <build>/libfuzzer/corpus from one campaign to
the next, and first merges it down to the inputs that add coverage; a
shorter run (CI's) fuzzes the seeds alone, so that its time stays bounded
however large a campaign left the corpus. Prints the number of
executions and exits non-zero on a finding (the crashing input is saved as
<build>/libfuzzer/crash-*; rerun it with `pydd_fuzz FILE`).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
# What an input may take, fuzzing and merging alike.
LIMITS = ["-timeout=30", "-rss_limit_mb=2048", "-max_len=16384", "-detect_leaks=0"]
# Runs this long or longer are campaigns: they keep and merge the corpus.
CAMPAIGN_SECONDS = 600


def lowest_priority():
    """nice 19 for this process and the fuzzer it starts. Under Linux's
    autogroup scheduling, nice only ranks processes within one session: a
    campaign started with setsid or nohup from another terminal is a
    session of its own and took half the cores from a test suite at nice
    15. Its autogroup's nice ranks the session itself."""
    os.nice(19)
    try:
        with open("/proc/self/autogroup", "w") as f:
            f.write("19")
    except OSError:
        pass  # no autogroups (kernel.sched_autogroup_enabled=0): nice is enough


def merge_corpus(exe, corpus, flags, env, cwd):
    """Replaces the corpus with its inputs that add coverage (libFuzzer's
    -merge=1). -jobs fuzzers write every new or reduced input and delete
    none: one 135-minute campaign grew it to 19,867 files, which each fuzzer
    then spent six minutes executing before it fuzzed. The old corpus is
    replaced only once the merge has succeeded."""
    merged = corpus.with_name("corpus.merging")
    shutil.rmtree(merged, ignore_errors=True)
    merged.mkdir()
    before = sum(1 for _ in corpus.iterdir())
    start = time.monotonic()
    proc = subprocess.run([str(exe), "-merge=1", str(merged), str(corpus)] + flags,
                          stderr=subprocess.PIPE, text=True, errors="replace", env=env, cwd=cwd)
    if proc.returncode != 0:
        shutil.rmtree(merged, ignore_errors=True)
        print(f"libfuzzer: merging the corpus failed (exit status {proc.returncode}); fuzzing it unmerged")
        print(proc.stderr[-3000:])
        return
    old = corpus.with_name("corpus.old")
    shutil.rmtree(old, ignore_errors=True)
    corpus.rename(old)
    merged.rename(corpus)
    shutil.rmtree(old)
    after = sum(1 for _ in corpus.iterdir())
    print(f"libfuzzer: merged the corpus from {before} to {after} inputs in {time.monotonic() - start:.0f} s",
          flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=str(ROOT / "build"), help="the main build directory")
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--background", action="store_true",
                    help="run at the lowest priority, yielding the cores to anything else")
    ap.add_argument("--no-merge", action="store_true",
                    help="fuzz the corpus as it is (one the previous campaign merged)")
    args = ap.parse_args()
    if args.background:
        lowest_priority()
    work = Path(args.build).resolve() / "libfuzzer"  # the fuzzers run in a scratch cwd
    exe = work / "pydd_fuzz"
    if not exe.exists():
        sys.exit(f"no {exe}: configure with clang-14 and libFuzzer installed (see tests/fuzz/README.md)")
    campaign = args.seconds >= CAMPAIGN_SECONDS
    # libFuzzer executes a whole corpus before its time limit applies: a
    # 45 s ctest run after a campaign that left 24,000 inputs timed out at
    # 300 s. A short run therefore starts from the seeds, in a scratch corpus.
    with tempfile.TemporaryDirectory() as scratch, tempfile.TemporaryDirectory() as seeds:
        corpus = work / "corpus" if campaign else Path(scratch)
        corpus.mkdir(exist_ok=True)
        for k, p in enumerate(sorted(ROOT.rglob("*.pydd"))):
            if "build" not in p.relative_to(ROOT).parts:
                shutil.copy(p, Path(seeds, f"{k}_{p.name}"))
        flags = LIMITS + [f"-artifact_prefix={work}/"]
        cmd = [str(exe), str(corpus), seeds, f"-max_total_time={args.seconds}", "-print_final_stats=1",
               f"-dict={HERE / 'pydd.dict'}"] + flags
        if args.jobs > 1:
            # N whole fuzzers sharing the corpus directory (each adds what
            # it finds and reloads the others' finds), not -fork=N: fork
            # mode restarts short jobs that each execute their share of the
            # corpus again, and ran 129 executions a second against 213 for
            # two jobs over the same 180 s on the idle 2-core machine.
            cmd += [f"-jobs={args.jobs}", f"-workers={args.jobs}"]
        # ASan's defaults keep 256 MB of freed memory in quarantine and record
        # every allocation's stack; with them an execution spent a third of
        # its time in fresh page faults and stack unwinding. A smaller
        # quarantine still catches a use shortly after a free, and a report
        # gets its allocation stack by rerunning the input with `pydd_fuzz FILE`.
        env = dict(os.environ)
        env.setdefault("ASAN_OPTIONS", "quarantine_size_mb=16:malloc_context_size=0")
        with tempfile.TemporaryDirectory() as logs:  # -jobs writes fuzz-<job>.log into the cwd
            if campaign and not args.no_merge and any(corpus.iterdir()):
                merge_corpus(exe, corpus, flags, env, logs)
            start = time.monotonic()
            proc = subprocess.run(cmd, stderr=subprocess.PIPE, text=True, errors="replace", env=env, cwd=logs)
            elapsed = time.monotonic() - start
            # With -jobs the parent also copies each finished fuzzer's log to
            # its stderr: count from the logs alone, or each job counts twice.
            job_logs = "".join(p.read_text(errors="replace") for p in sorted(Path(logs).glob("fuzz-*.log")))
            log = job_logs or proc.stderr
    # Each fuzzer prints its count at exit, on a finding and on Ctrl-C too.
    execs = sum(int(n) for n in re.findall(r"stat::number_of_executed_units:\s*(\d+)", log))
    # Interrupted (Ctrl-C to the campaign): libFuzzer's exit status 72; with
    # -jobs the parent exits 1 and every fuzzer logs the interruption.
    interrupted = proc.returncode == 72 or log.count("libFuzzer: run interrupted") >= args.jobs
    print(f"libfuzzer: {execs} executions in {elapsed:.0f} s, exit status {proc.returncode}"
          + (" (interrupted)" if interrupted else ""))
    if proc.returncode != 0 and not interrupted:
        print(log[-6000:])
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())

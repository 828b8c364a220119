"""Running ab, and one verified measurement: warm-up, repeats, counts.

Each repeat reads the servers' counts before and after the ab run, so the
verification compares what ab completed with what the application served
in exactly that run.
"""

import dataclasses
import os
import shlex
import subprocess
import tempfile

from benchmarks import serverside
from benchmarks.abparse import AbOutputError
from benchmarks.abparse import parse_ab_output
from benchmarks.stats import Run
from benchmarks.stats import summarize
from benchmarks.stats import verify

AB = 'ab'


@dataclasses.dataclass(frozen=True)
class Load:
    """How ab loads the server."""

    requests: int
    concurrency: int
    keep_alive: bool = False

    @property
    def label(self):
        return '-c %d%s' % (self.concurrency, ' -k' if self.keep_alive else '')


@dataclasses.dataclass(frozen=True)
class Post:
    """A form POST: the body file and its content type."""

    body_file: str
    content_type: str = 'application/x-www-form-urlencoded'


def ab_command(url, load, percentile_csv=None, post=None,
               variable_length=False):
    """The ab command line for one run."""
    command = [AB, '-n', str(load.requests), '-c', str(load.concurrency),
               '-r']
    if load.keep_alive:
        command.append('-k')
    if percentile_csv:
        command += ['-e', percentile_csv]
    if post is not None:
        command += ['-p', post.body_file, '-T', post.content_type]
    if variable_length:
        command.append('-l')
    command.append(url)
    return command


def shown(command):
    """A command as it would be typed, without the harness's temp files."""
    visible = []
    skip = False
    for part in command:
        if skip:
            skip = False
            continue
        if part == '-e':
            skip = True
            continue
        visible.append(shlex.quote(part))
    return ' '.join(visible)


def ab_error(text):
    """What ab said when it printed no summary, without its usage text."""
    lines = [line for line in text.splitlines() if line.strip()
             and not line.startswith((' ', 'Usage:', 'Options are:'))]
    return '\n'.join(lines)[-500:]


def run_ab(url, load, post=None, variable_length=False, timeout=None):
    """Run ab; return (AbResult or None, printed text, command)."""
    handle, csv_path = tempfile.mkstemp(prefix='ab-', suffix='.csv')
    os.close(handle)
    command = ab_command(url, load, csv_path, post, variable_length)
    try:
        completed = subprocess.run(command, capture_output=True, text=True,
                                   timeout=timeout)
        with open(csv_path) as csv_file:
            csv_text = csv_file.read()
    finally:
        os.unlink(csv_path)
    text = completed.stdout + completed.stderr
    try:
        result = parse_ab_output(completed.stdout, csv_text)
    except AbOutputError:
        result = None
    return result, text, command


def warm_up(server, path, requests, concurrency, post=None):
    """Requests whose numbers are not kept (caches, connections, JIT of
    the page templates)."""
    if requests <= 0:
        return None
    before = serverside.total_counts(server.count_dir)
    result, text, _ = run_ab(server.url(path),
                             Load(requests, concurrency), post, True)
    # The server counts a response just after ab has it: let the last
    # ones land before the first measured run reads its starting count.
    serverside.wait_for_counts(server.count_dir, before,
                               result.complete if result is not None else 0)
    return result


def measure_once(server, path, load, post=None, redirects_expected=False):
    """One ab run, verified against the server's counts."""
    before = serverside.total_counts(server.count_dir)
    result, text, command = run_ab(server.url(path), load, post,
                                   variable_length=post is not None)
    expected = result.complete if result is not None else 0
    served = serverside.wait_for_counts(server.count_dir, before, expected)
    verification = verify(result, load.requests, served, redirects_expected)
    if result is None:
        verification.problems.append(ab_error(text))
    return Run(result, served, verification, shown(command))


def measure(server, path, load, repeats, warmup=0, post=None,
            redirects_expected=False, log=print):
    """Warm up, then ``repeats`` verified runs; return (runs, Summary)."""
    warm_up(server, path, warmup, load.concurrency, post)
    runs = []
    for number in range(1, repeats + 1):
        run = measure_once(server, path, load, post, redirects_expected)
        runs.append(run)
        log('    %s %s run %d: %s req/s, %s' % (
            server.config.label, load.label, number,
            '%.0f' % run.result.requests_per_second if run.result else '-',
            run.verification.describe()))
    return runs, summarize(runs)

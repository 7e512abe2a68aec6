"""Where a cache hit's time goes, whole processes side by side: `gpujit build` hits of
examples/saxpy.cu and examples/block_reduce.cu (CUB's headers: a group of ~640 records), each
block_reduce run with the check's timeline on (GPUJIT_BENCH_CHECK=v, printed by -v), which gives the
group check's monotonic start and end. Per setting, medians over the rounds (interleaved, the
order rotated each round) of: the whole process; spawn to the check's start; the check; the
check's end to the process's end — and whether the check was begun ahead (cache/records/head_start.c).

Usage: python3 bench/hit_phases.py [GPUJIT] [ROUNDS] [KNOBS]   (defaults: build/gpujit 41 8,2,1)
  KNOBS: GPUJIT_CHECK_THREADS counts, each with GPUJIT_BENCH_CHECK letters after it, comma-separated
         ("8", "2b", "1", ...)
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, '..', 'examples')
LINE = re.compile(r'check of (\d+) records in ([\d.]+) ms \(monotonic (\d+) to (\d+) ns(; begun ahead)?\)')


def run(gpujit, cache, example, knob):
    env = dict(os.environ, GPUJIT_SERVER='0')
    if knob is not None:
        count = knob.rstrip('bu')
        env['GPUJIT_CHECK_THREADS'] = count
        env['GPUJIT_BENCH_CHECK'] = knob[len(count):] + 'v'
    t0 = time.monotonic_ns()
    p = subprocess.run([gpujit, 'build', '-v' if knob is not None else '-q', '--cache-dir', cache, '-o', os.path.join(cache, example + '.cubin'),
                        os.path.join(EXAMPLES, example + '.cu')], env=env, stderr=subprocess.PIPE)
    t1 = time.monotonic_ns()
    if p.returncode != 0:
        sys.exit('gpujit build %s failed: %s' % (example, p.stderr.decode()[-400:]))
    m = LINE.search(p.stderr.decode())
    if not m:
        return {'total': (t1 - t0) / 1e6}
    return {'total': (t1 - t0) / 1e6, 'before': (int(m.group(3)) - t0) / 1e6, 'check': float(m.group(2)),
            'after': (t1 - int(m.group(4))) / 1e6, 'ahead': bool(m.group(5)), 'records': int(m.group(1))}


def main():
    gpujit = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, '..', 'build', 'gpujit')
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 41
    knobs = (sys.argv[3] if len(sys.argv) > 3 else '8,2,1').split(',')
    settings = [('saxpy', None)] + [('block_reduce', k) for k in knobs]
    with tempfile.TemporaryDirectory(prefix='gpujit-hit-phases-') as cache:
        for s in settings:  # stored, noted, then a hit or two to settle
            for _ in range(3):
                run(gpujit, cache, *s)
        res = {s: [] for s in settings}
        for r in range(rounds):
            for s in settings[r % len(settings):] + settings[:r % len(settings)]:
                res[s].append(run(gpujit, cache, *s))
    med = lambda s, k: statistics.median([x[k] for x in res[s] if k in x]) if any(k in x for x in res[s]) else float('nan')
    base = med(settings[0], 'total')
    print('gpujit build hits, whole processes, medians of %d interleaved rounds (ms)' % rounds)
    print('%-22s %7s %7s %8s %7s %7s  %s' % ('setting', 'total', 'ratio', 'to check', 'check', 'after', 'begun ahead'))
    for s in settings:
        ahead = [x['ahead'] for x in res[s] if 'ahead' in x]
        print('%-22s %7.3f %6.2fx %8.3f %7.3f %7.3f  %s' % (
            '%s %s' % (s[0], 'N=' + s[1] if s[1] else ''), med(s, 'total'), med(s, 'total') / base,
            med(s, 'before'), med(s, 'check'), med(s, 'after'), '%d of %d' % (sum(ahead), len(ahead)) if ahead else '-'))
        print('RESULT hit_phase_ms %s_%s %.3f' % (s[0], s[1] or 'default', med(s, 'total')))


if __name__ == '__main__':
    main()

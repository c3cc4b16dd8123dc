"""tests/compat/compatkit.py: what the checks against real programs in
tests/compat/ share. Importing it also puts tests/gen/ on the module path,
for the independent models there (nginx_model, haproxy_gen, ...).

  free_port, port_is_free   ports on loopback
  wait_listening            wait for a started server to accept
  stop                      stop processes this run started, by their pid
  chash_db                  an in-memory connection with chash loaded
  make_keys                 generated keys of mixed shapes
  agreement                 count the keys a program and chash agree on
"""
import os
import random
import socket
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'gen'))


def free_port(host='127.0.0.1'):
    s = socket.socket()
    s.bind((host, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def port_is_free(host, port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # as servers do
    try:
        s.bind((host, port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def wait_listening(host, port, deadline, who):
    """Until time.monotonic() passes deadline; then SystemExit, naming
    the check (who)."""
    while time.monotonic() < deadline:
        try:
            socket.create_connection((host, port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit('%s: %s:%d never started listening' % (who, host, port))


def stop(procs, timeout=5):
    """Terminate each of procs (subprocess.Popen, or None), then reap it,
    killing those that have not ended after timeout seconds."""
    procs = [p for p in procs if p is not None]
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def chash_db(so):
    db = sqlite3.connect(':memory:')
    db.enable_load_extension(True)
    db.load_extension(so)
    return db


def report_variants(tag, program, wrong):
    """Print each wrong variant's disagreements ({name: count}); returns how
    many agree everywhere with program (a check that cannot fail)."""
    agreeing = 0
    for name, n in wrong.items():
        print('%s wrong variant (%s): %d disagreements' % (tag, name, n))
        if n == 0:
            print('%s: the wrong variant "%s" agrees with %s: the check cannot fail'
                  % (tag, name, program))
            agreeing += 1
    return agreeing


def agreement(keys, got, expect, program):
    """How many keys program (got) and chash (expect) place alike; prints
    the first key they do not."""
    ok = sum(1 for g, e in zip(got, expect) if g == e)
    for k, g, e in zip(keys, got, expect):
        if g != e:
            print('  mismatch: key %r: %s chose %s, chash says %s' % (k, program, g, e))
            break
    return ok


def make_keys(seed, n, text_only):
    """n distinct keys (bytes) of mixed shapes, sorted: ASCII, UTF-8 beyond
    ASCII, decimal numbers; text_only keeps them valid UTF-8 (for
    programs that read keys as Java strings), else bytes that are not
    UTF-8 are mixed in."""
    rnd = random.Random(seed)
    shapes = [
        lambda i: b"user:%d" % i,
        lambda i: b"session:%08x" % rnd.getrandbits(32),
        lambda i: ("ключ-%d-émoji-🙂" % i).encode(),
        lambda i: ("鍵%dキー" % i).encode(),
        lambda i: bytes(rnd.randint(0x21, 0x7e) for _ in range(rnd.randint(1, 40))),
        lambda i: b"%d" % rnd.getrandbits(rnd.randint(1, 64)),
    ]
    if not text_only:
        shapes.append(lambda i: bytes(rnd.randint(0, 255)
                                      for _ in range(rnd.randint(1, 12))))
    keys = set()
    while len(keys) < n:
        keys.add(shapes[len(keys) % len(shapes)](len(keys)))
    return sorted(keys)

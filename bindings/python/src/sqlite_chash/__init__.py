"""sqlite_chash: chash, consistent hashing inside SQLite, for Python's sqlite3.

    import sqlite3, sqlite_chash
    conn = sqlite3.connect("app.db")
    sqlite_chash.load(conn)
    conn.execute("SELECT ch_locate(?, '[\\"a\\",\\"b\\",\\"c\\"]')", (42,))

The package ships the loadable extension; loadable_path() is its path, for
other tools (the sqlite3 shell's .load, another binding).

Python's sqlite3 module must have been built with extension loading
(Debian's /usr/bin/python3 is; some pyenv, python.org macOS and other
builds are not: their connections have no enable_load_extension).
"""
import os

__all__ = ["load", "loadable_path"]
__version__ = "0.1.0"


def loadable_path():
    """The path of the chash loadable extension inside this package."""
    here = os.path.dirname(os.path.abspath(__file__))
    for suffix in ("so", "dylib", "dll"):
        path = os.path.join(here, "chash." + suffix)
        if os.path.isfile(path):
            return path
    raise FileNotFoundError("sqlite_chash: no chash loadable extension in " + here)


def load(conn):
    """Load chash into the sqlite3 connection conn.

    Extension loading is switched on for the load and off after it,
    whatever it was before (Python's sqlite3 cannot tell): a caller that
    loads other extensions itself switches it on again.
    """
    if not hasattr(conn, "enable_load_extension"):
        raise RuntimeError(
            "sqlite_chash: this Python's sqlite3 module cannot load extensions"
            " (it was built without them); use a Python whose sqlite3 can,"
            " such as Debian's /usr/bin/python3, or one built with"
            " --enable-loadable-sqlite-extensions")
    conn.enable_load_extension(True)
    try:
        conn.load_extension(loadable_path())
    finally:
        conn.enable_load_extension(False)

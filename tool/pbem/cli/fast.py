"""The commands served before the full command line is built: `pbem verify` (a player's checkout, CI) and the git
hooks (`pbem hook pre-receive|post-receive`, a fresh process at every push). Each imports only what it needs: no
typer, no rendering, no other command group, and of the rulesets only the one the game names (DESIGN §11: one
new commit costs about one commit, starting Python included).

Only the plain forms are served here (`pbem verify [RANGE] [--format text|json|github]`, the hooks without
arguments); anything else (`--help`, a wrong value, an unknown option) goes to the full app, which says what is
wrong exactly as it always did. What both share (the output writer, the one-line answer to an error of the
machine) lives here, without typer, so that the two paths print the same bytes.
"""

from __future__ import annotations

import builtins
import errno
import gc
import marshal
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from types import CodeType
from typing import Any, Callable, Iterator, NoReturn, Optional, Sequence

STDOUT = "standard output"  # what a failed write to it names, where the error names no file
FORMATS = ("text", "json", "github")  # `pbem verify --format` (cli/options.py OutputFormat)
HOOKS = ("pre-receive", "post-receive")


def write_out(text: str) -> None:
    """Print a command's output; an error of the standard output (a full disk, a closed pipe) says that it was
    the standard output that failed (one line, exit 2: `answer_os_error`)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as exc:
        if exc.filename is None:
            exc.filename = STDOUT
        raise


def served(argv: Sequence[str]) -> Optional[int]:
    """The exit code of `argv` when it is one of the commands served here, else None (the full app serves it)."""
    args = list(argv)
    if len(args) == 2 and args[0] == "hook" and args[1] in HOOKS:
        return _run(lambda: _hook(args[1]))
    if args[:1] == ["verify"]:
        parsed = verify_arguments(args[1:])
        if parsed is not None:
            return _run(lambda: verify(*parsed))
    return None


# What a served command made that only the end of its process frees (`leave`): the judged history of a verification.
_LEFT: list[object] = []


def leave(code: int) -> NoReturn:
    """End the process of a served command with `code`, as `sys.exit` would, less the interpreter's teardown,
    which would free the judged game and history object by object (some 40 ms at 10,000 commits) where the
    system frees a process's memory at once. The exit handlers still run, and the output is flushed."""
    import atexit

    try:
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass  # a closed pipe or stream was answered already (cli/__init__.py main)
    finally:
        os._exit(code)


def frozen() -> None:
    """Leave every object made so far out of the garbage collector's later passes and the one at exit (the
    modules and a loaded state: some hundred thousand objects, none of them garbage): some 0.03 s of CPU."""
    gc.freeze()


def verify_arguments(args: Sequence[str]) -> Optional[tuple[Optional[str], str]]:
    """(range, format) of `pbem verify`'s plain forms; None for anything else (help, a repeated or unknown option,
    a value typer would refuse), which the full app then answers."""
    revisions: Optional[str] = None
    output: Optional[str] = None
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "--format" and rest and output is None:
            output = rest.pop(0)
        elif arg.startswith("--format=") and output is None:
            output = arg[len("--format="):]
        elif arg and not arg.startswith("-") and revisions is None:
            revisions = arg
        else:
            return None
    output = output or "text"
    return (revisions, output) if output in FORMATS else None


def verify(revisions: Optional[str], output: str) -> int:
    """`pbem verify [RANGE] --format FORMAT`: the findings of the range's commits (DESIGN §3, §8); exit 1 when
    there are any."""
    with _uncollected():
        from pbem.errors import ILLEGAL
        from pbem.services import clonelock, gitstate
        from pbem.services.ranges import verify_range
        from pbem.services.report import findings_github, findings_json, findings_text
        from pbem.store.repo import GameRepo

    repo = GameRepo.open(Path.cwd())
    gitstate.guard(repo)  # as every command's workspace (services/workspace.py Workspace.open)
    if not repo.is_bare:
        clonelock.acquire(repo.git_dir)  # against `pbem watch` working in the clone meanwhile (cli/options.py)
    with _uncollected():
        findings, count, judged = verify_range(repo, revisions)
    _LEFT.append(judged)  # for the process's end to free (`leave`)
    render = {"text": findings_text, "json": findings_json, "github": findings_github}[output]
    write_out(render(findings, count))
    return ILLEGAL if findings else 0


def _hook(stage: str) -> int:
    with _uncollected():
        from pbem.services import hook

    run = hook.pre_receive if stage == "pre-receive" else hook.post_receive
    return run(sys.stdin, sys.stderr)


@contextmanager
def _uncollected() -> Iterator[None]:
    """Import or verify without the garbage collector, and leave what was made out of its later passes: importing
    makes some hundred thousand objects, none of them garbage (cli/application.py does the same); the walk of a
    verification collects nothing (verify/history.py), and the one pass on leaving it would look through the
    whole judged game (some 100,000 objects, 60 ms at 10,000 commits) just before the command exits."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        frozen()
        if collecting:
            gc.enable()


class CompiledMethods:
    """The methods `dataclasses` writes for each of pbem's classes (__init__, __repr__, __eq__, __hash__, a frozen
    class's __setattr__ and __delattr__), compiled once and kept under the user's cache folder, as the schemas'
    validators are (formats/schemas.py `_compiled`).

    `dataclasses` makes each method by formatting its source text and calling `exec` on it: compiling some 400
    small functions for the classes `pbem verify` imports is about 0.05 s of CPU, a sixth of one new commit.
    While `active`, the `exec` that module calls takes the code object compiled from the very same text, exactly
    as `exec` would have compiled it (no inherited `__future__` flags, the same optimisation level, the name
    "<string>"), so every class and method is what it was; only the compiling is skipped. Best effort: an
    unreadable or foreign file is an empty cache, and one that cannot be written is no harm."""

    LIMIT = 1024  # methods kept (verify and the hooks use some 450); past it a process keeps only those it used

    def __init__(self, path: Path) -> None:
        self.path = path
        self.known: dict[str, CodeType] = {}
        self.used: dict[str, CodeType] = {}
        self.new = 0

    @classmethod
    def default(cls) -> "CompiledMethods":
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        tag = f"{sys.implementation.cache_tag}-{sys.hexversion:x}-O{sys.flags.optimize}"  # marshal's format, -O
        return cls(Path(base) / "pbem" / f"dataclasses-{tag}.marshal")

    def exec(self, source: Any, globals: Any = None, locals: Any = None) -> None:
        """`exec` as `dataclasses` calls it, with the compiled text taken from the cache."""
        if not isinstance(source, str):
            builtins.exec(source, globals, locals)
            return
        code = self.known.get(source)
        if code is None:
            code = compile(source, "<string>", "exec", dont_inherit=True)
            self.new += 1
        self.used[source] = code
        builtins.exec(code, globals, locals)

    @contextmanager
    def active(self) -> Iterator[None]:
        import dataclasses

        if hasattr(dataclasses, "exec"):  # someone else's already (or ours, nested): leave it alone
            yield
            return
        try:
            loaded = marshal.loads(self.path.read_bytes())  # marshal.load(a file) reads object by object: 5x slower
            if isinstance(loaded, dict):
                self.known = loaded
        except (OSError, ValueError, EOFError, TypeError):
            pass
        dataclasses.exec = self.exec  # type: ignore[attr-defined]
        try:
            yield
        finally:
            del dataclasses.exec  # type: ignore[attr-defined]
            self.save()

    def save(self) -> None:
        if not self.new:
            return
        keep = {**self.known, **self.used} if len(self.known) + self.new <= self.LIMIT else self.used
        temp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temp.write_bytes(marshal.dumps(keep))
            os.replace(temp, self.path)
        except (OSError, ValueError):
            return


def _run(action: Callable[[], int]) -> int:
    """Run a served command as the full app runs one (cli/options.py `run`, cli/application.py `Commands`): a
    PbemError is one line on stderr and its exit code, an error of the machine one line and exit 2; the clone's
    lock is given back at the end. The classes it imports, here and while a kept state is loaded, are made with
    their methods compiled beforehand (`CompiledMethods`)."""
    with CompiledMethods.default().active():
        from pbem.errors import USAGE, PbemError

        try:
            return action()
        except PbemError as exc:
            sys.stderr.write(f"pbem: {exc}\n")
            return exc.exit_code
        except OSError as exc:
            answer_os_error(exc)
            return USAGE
        finally:
            if "pbem.services.clonelock" in sys.modules:
                sys.modules["pbem.services.clonelock"].release_all()


def answer_os_error(exc: OSError) -> None:
    """An error of the machine (a full disk, a missing folder, a permission denied) as one line on stderr; a
    reader who stopped reading (`pbem log | head -1`) gets nothing more."""
    from pbem.errors import os_error

    if exc.errno == errno.EPIPE:  # the reader stopped reading: nothing more to say to him
        silence_stdout()
        return
    where = what_failed(exc)
    if STDOUT in (exc.filename, where):  # what it still buffers would fail again at exit
        silence_stdout()
    sys.stderr.write(f"pbem: {os_error(exc, where)}\n")
    sys.stderr.flush()


def what_failed(exc: OSError) -> Optional[str]:
    """What an error that names no file was about: the standard output (typer's `echo` to it failed: the frame
    it failed in says so), or the current folder (removed under the command's feet); else None."""
    if exc.filename is not None:
        return None
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_name == "echo" and frame.f_locals.get("err") is False:
            return STDOUT
        tb = tb.tb_next
    try:
        os.getcwd()
    except OSError:
        return "the current folder"
    return None


def silence_stdout() -> None:
    """Point stdout at the null device, so the interpreter's last flush at exit has nowhere to fail (no
    "Exception ignored" after a closed pipe or a full disk)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, OSError):  # not a file (typer's test runner): nothing is left to flush
        return
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, fd)
    os.close(null)

"""`pbem verify` and the pre-receive hook run as a fresh process at every checkout, CI run and push: they import
only what they need (cli/fast.py), never typer and the other command groups, the rendering, or a ruleset the
game does not name. Each case runs the real command once in a subprocess and reads which modules it loaded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Table

# Prints the loaded modules' names to the file named first, then runs `pbem ARGS...` as the console script does.
LOADED = ("import atexit, sys; out = sys.argv.pop(1); "
          "atexit.register(lambda: open(out, 'w').write('\\n'.join(sorted(sys.modules)))); "
          "from pbem.cli import main; sys.argv[0] = 'pbem'; main()")

# Never needed to judge a tactical game, nor to print its findings; nor `ssl`, which pygit2 would import to load
# certificates for a network pbem never reaches through it (store/git.py).
NEVER = ("typer", "click", "rich", "diplomacy", "pbem.render", "pbem.rulesets.dow", "pbem.services.dow",
         "pbem.services.workspace", "pbem.cli.application", "pbem.cli.options", "ssl")


def loaded(table: Table, tmp_path: Path, args: list[str], cwd: Path, stdin: str = "",
           env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    out = tmp_path / "modules.txt"
    done = subprocess.run([sys.executable, "-c", LOADED, str(out), *args], cwd=cwd, input=stdin,
                          env={**table.env("fed"), **(env or {})}, capture_output=True, text=True, check=False)
    return done, set(out.read_text().split("\n"))


def unwanted(modules: set[str]) -> set[str]:
    cli_groups = {m for m in modules if m.startswith("pbem.cli.") and m != "pbem.cli.fast"}
    return cli_groups | {m for m in modules if any(m == n or m.startswith(n + ".") for n in NEVER)}


@pytest.mark.parametrize("args", [["verify"], ["verify", "--format", "json"], ["verify", "HEAD~1..HEAD"]],
                         ids=" ".join)
def test_verify_of_a_tactical_game_imports_only_what_it_needs(base_played: Table, tmp_path: Path,
                                                              args: list[str]) -> None:
    done, modules = loaded(base_played, tmp_path, args, base_played.repo_dir)
    assert done.returncode == 0, done.stderr
    assert "pbem.rulesets.tactical.ruleset" in modules and "pbem.verify.history" in modules  # it did judge
    assert unwanted(modules) == set()
    # it runs no git, signs nothing and makes no key (services/gitstate.py, store/signer.py, crypto/keys.py)
    assert not {"subprocess", "secrets", "random"} & modules


def test_the_pre_receive_hook_imports_only_what_it_needs(base_played: Table, tmp_path: Path) -> None:
    bare = tmp_path / "shared.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(base_played.repo_dir), str(bare)], check=True,
                   env=base_played.env())
    head = base_played.git("rev-parse", "HEAD").stdout.decode().strip()
    for ref in subprocess.run(["git", "-C", str(bare), "for-each-ref", "--format=%(refname)"], check=True,
                              capture_output=True, text=True).stdout.split():
        subprocess.run(["git", "-C", str(bare), "update-ref", "-d", ref], check=True)  # the objects, as pushed
    done, modules = loaded(base_played, tmp_path, ["hook", "pre-receive"], bare,
                           f"{'0' * 40} {head} refs/heads/main\n", {"GIT_DIR": str(bare)})
    assert done.returncode == 0, done.stderr
    assert "pbem.rulesets.tactical.ruleset" in modules  # the whole pushed history was judged
    assert unwanted(modules) == set()


def test_the_guard_sees_a_command_group_imported(base_played: Table, tmp_path: Path) -> None:
    """Anything beyond the plain forms goes to the full app, which the guard above would catch."""
    done, modules = loaded(base_played, tmp_path, ["verify", "--help"], base_played.repo_dir)
    assert done.returncode == 0, done.stderr
    assert {"typer", "pbem.cli.application", "pbem.cli.report"} <= unwanted(modules)


def test_pygit2_is_imported_without_ssl_and_leaves_the_real_one_to_later_imports() -> None:
    """store/git.py imports pygit2 with a stand-in `ssl`: gone once pygit2 is in, so `import ssl` is Python's."""
    probe = ("import sys; from pbem.store.git import pygit2; from pbem.store.repo import GameRepo; "
             "assert 'ssl' not in sys.modules, 'ssl imported'; "
             "assert pygit2.settings.ssl_cert_file is None; "
             "import ssl; ssl.create_default_context(); print(pygit2.LIBGIT2_VERSION)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()


# The methods dataclasses made for every class of the modules `pbem verify` imports on a tactical game, told apart
# by everything but where they live in memory; run plainly, then with cli/fast.py's compiled methods.
METHODS = r"""
import contextlib, json, re, sys, types
from pathlib import Path
from pbem.cli.fast import CompiledMethods

def code(c):
    return [c.co_code.hex(), [code(k) if isinstance(k, types.CodeType) else repr(k) for k in c.co_consts],
            c.co_names, c.co_varnames, c.co_freevars, c.co_cellvars, c.co_filename, c.co_qualname, c.co_flags,
            c.co_argcount, c.co_kwonlyargcount, c.co_firstlineno, c.co_linetable.hex()]

def shown(value):
    return re.sub(r" at 0x[0-9a-f]+", "", repr(value))

def methods():
    out = {}
    for name, module in sorted(sys.modules.items()):
        for cls in vars(module).values() if name.startswith("pbem.") else ():
            if isinstance(cls, type) and "__dataclass_fields__" in vars(cls) and cls.__module__ == name:
                for attr, f in sorted(vars(cls).items()):
                    if isinstance(f, types.FunctionType) and f.__code__.co_filename == "<string>":
                        out[f"{cls.__qualname__}.{attr}"] = [
                            code(f.__code__), f.__qualname__, shown(f.__annotations__), shown(f.__defaults__),
                            shown(f.__kwdefaults__), [type(c.cell_contents).__name__ for c in f.__closure__ or ()]]
                out[f"{cls.__qualname__}.__doc__"] = cls.__doc__
                out[f"{cls.__qualname__}.__match_args__"] = repr(getattr(cls, "__match_args__", None))
    return out

cache = sys.argv[1]
compiled = CompiledMethods(Path(cache)) if cache else None
with compiled.active() if compiled else contextlib.nullcontext():
    import pbem.services.gitstate, pbem.services.ranges, pbem.services.report, pbem.rulesets.tactical.ruleset
print(json.dumps({"methods": methods(), "new": compiled.new if compiled else None}))
"""


def test_compiled_dataclass_methods_are_those_dataclasses_compiles(tmp_path: Path) -> None:
    """Every method made with the compiled methods (the cache empty, then filled) is the one `dataclasses` makes."""
    import json

    def run(cache: str) -> dict[str, object]:
        done = subprocess.run([sys.executable, "-c", METHODS, cache], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    cache = str(tmp_path / "methods.marshal")
    plain, cold, warm = run(""), run(cache), run(cache)
    assert len(plain["methods"]) > 300  # type: ignore[arg-type]
    assert cold["methods"] == plain["methods"] and warm["methods"] == plain["methods"]
    assert cold["new"] > 300 and warm["new"] == 0  # type: ignore[operator]


def test_kept_validators_are_found_by_the_schema_files_stats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A validator compiled once is found again without reading a schema file (formats/schemas.py `_stamp`);
    a schema file changed since is read, and its new validator used."""
    import os
    import shutil

    from pbem.errors import PbemError
    from pbem.formats import resources, schemas

    folder = tmp_path / "schemas"
    shutil.copytree(resources.schemas_dir(), folder)
    monkeypatch.setattr(schemas, "schemas_dir", lambda: folder)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(schemas, "_CROSSCHECK", False)  # the suite's second opinion reads every file
    part = "pbem/report/1#/$defs/entry"
    entry = {"at": "1.1.move", "by": "fed", "do": {"pass": True}}
    try:
        schemas.reset()
        schemas.validate(part, entry, file="f.yaml")
        assert schemas._files.cache_info().currsize == 1  # compiled from the files
        schemas.reset()
        schemas.validate(part, entry, file="f.yaml")
        assert schemas._files.cache_info().currsize == 0  # found by the stats: no schema file read
        report = folder / "report.json"
        changed = json.loads(report.read_text())
        changed["$defs"]["entry"]["properties"]["by"] = {"const": "kli"}
        report.write_text(json.dumps(changed))
        os.utime(report, ns=(1, 1))  # a time of its own, whatever the clock's resolution
        schemas.reset()
        with pytest.raises(PbemError):
            schemas.validate(part, entry, file="f.yaml")
    finally:
        schemas.reset()


# Runs `pbem ARGS...` as the console script does, with an exit handler, and telling when the process is ended at once.
ENDING = ("import atexit, os, sys\n"
          "exit_now = os._exit\n"
          "os._exit = lambda code: (os.write(1, b'ended at once\\n'), exit_now(code))\n"
          "atexit.register(lambda: sys.stdout.write('exit handler ran\\n'))\n"
          "from pbem.cli import main; sys.argv[0] = 'pbem'; main()")


@pytest.mark.parametrize("args, code", [(["verify"], 0), (["verify", "--format", "json"], 0),
                                        (["verify", "no-such-revision"], 2)], ids=str)
def test_a_served_command_ends_without_the_interpreter_s_teardown(base_played: Table, args: list[str],
                                                                  code: int) -> None:
    """`pbem verify` ends its process at once once it has answered (cli/fast.py `leave`: the judged game is not
    freed object by object): its exit code and output as ever, its exit handlers run first."""
    done = subprocess.run([sys.executable, "-c", ENDING, *args], cwd=base_played.repo_dir,
                          env=base_played.env("fed"), capture_output=True, text=True, check=False)
    assert done.returncode == code, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-2:] == ["exit handler ran", "ended at once"]
    if code == 0:
        assert lines[0].startswith("ok: ") if args == ["verify"] else json.loads("\n".join(lines[:-2])) is not None
    else:
        assert done.stderr.startswith("pbem: ")


def test_a_command_of_the_full_app_ends_as_python_ends(base_played: Table) -> None:
    """Only the served commands end at once: the others end through `sys.exit`."""
    done = subprocess.run([sys.executable, "-c", ENDING, "log"], cwd=base_played.repo_dir,
                          env=base_played.env("fed"), capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "exit handler ran"

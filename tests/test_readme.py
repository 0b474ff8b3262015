"""The README and the pages under docs/ are executed, so they cannot drift from the code.

The README comes first and the docs/ pages after it in name order (``PAGES``); what follows holds
for all of them, read as one text, unless it names a page.

- Every command in their ``sh`` blocks runs, in order, in a scratch directory: training with a
  budget of seconds (``--time-budget 2``; ``--num-workers 0`` becomes 2 and ``--hands`` 400
  where the full command would take minutes), analysis on what that training wrote, ``play``
  with ``q`` typed. Only ``pip``, ``tensorboard`` and ``pytest`` lines are left out.
- Their Python examples run for real on the No-Limit checkpoint those commands produced.
- Every flag a command's section names exists in that command's ``--help``, and every flag in
  the ``--help`` is documented there; the same for the commands in the Performance table
  (docs/performance.md), each row of which must name one, and for the README's Tools table,
  each row of which gives one example.
- The configuration reference lists every key with its true default, marks the conditional
  ones, and the other YAML examples load; the export example has the export's fields.
"""

import ast
import importlib
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from holdem import config as config_mod

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TEXTS = {page.relative_to(ROOT).as_posix(): page.read_text() for page in PAGES}
README = TEXTS["README.md"]
SKIPPED = ("pip ", "tensorboard ", "python -m pytest")
SHRINK = {"--time-budget": "2", "--hands": "400"}
FLAG_RE = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def blocks(language):
    """The bodies of the fenced blocks in ``language`` of every page, in order."""
    return [block for text in TEXTS.values()
            for block in re.findall(rf"^```{language}\n(.*?)^```$", text, re.M | re.S)]


def shell_commands():
    """Each command of the ``sh`` blocks, continuation lines joined."""
    commands = []
    for block in blocks("sh"):
        commands += [line.strip() for line in block.replace("\\\n", " ").splitlines()
                     if line.strip() and not line.lstrip().startswith("#")]
    return commands


def shrink(argv):
    """The command with a budget of seconds: see the module docstring."""
    out = list(argv)
    for i, arg in enumerate(out[:-1]):
        if arg in SHRINK:
            out[i + 1] = SHRINK[arg]
        elif arg == "--num-workers" and out[i + 1] == "0":
            out[i + 1] = "2"
    return out


@pytest.fixture(scope="module")
def worked(tmp_path_factory):
    """(directory, [(command, CompletedProcess)]): every page's command run there in order."""
    directory = tmp_path_factory.mktemp("readme")
    for name in ("configs", "assets"):
        (directory / name).symlink_to(ROOT / name)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    results = []
    for command in shell_commands():
        if command.startswith(SKIPPED):
            continue
        argv = shrink(shlex.split(command))
        assert argv[:2] == ["python", "-m"] and argv[2].startswith("holdem.cli."), command
        proc = subprocess.run([sys.executable, *argv[1:]], cwd=directory, env=env, input="q\n",
                              capture_output=True, text=True, timeout=600)
        results.append((command, proc))
    return directory, results


def test_shell_examples_run(worked):
    _, results = worked
    ran = [command.split()[2] for command, _ in results]
    for module in ("train_blueprint", "eval_blueprint", "inspect_blueprint", "charts",
                   "export_strategy", "play"):
        assert f"holdem.cli.{module}" in ran
    for command, proc in results:
        assert proc.returncode == 0, f"{command}\n{proc.stderr}"
        assert "Traceback" not in proc.stderr, f"{command}\n{proc.stderr}"
        if "train_blueprint" in command:
            assert proc.stdout.startswith("done: iterations="), f"{command}\n{proc.stderr}"


def test_the_readmes_continued_run_keeps_its_workers_and_tensorboard(worked):
    """The main job trains with workers and TensorBoard; the README's "continue the run"
    command gives only its budget and the logdir, and must not drop either."""
    _, results = worked
    first = [proc for command, proc in results
             if "train_blueprint" in command and "--tensorboard" in command
             and "--num-workers" in command and "--resume-from" not in command]
    resumed = [proc for command, proc in results
               if "train_blueprint" in command and "--resume-from" in command]
    assert first and resumed
    for proc in resumed:
        assert "resuming with the run's settings (num_workers 2, backend process, tensorboard " \
               "true" in proc.stderr, proc.stderr
        assert "starting 2 workers" in proc.stderr, proc.stderr


def test_the_readmes_resume_command_keeps_the_runs_own_settings(tmp_path):
    """Issue 40: the README's "continue the run" command passed --config, which put back what
    the file sets (a run's --snapshot-interval 5 returned to 600). Run as the README writes
    it, after a run with --snapshot-interval 5 in the logdir it names, it keeps every setting."""
    from holdem import checkpoint as ckpt

    resumes = [command for command in shell_commands()
               if "train_blueprint" in command and "--resume-from" in command]
    assert resumes
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    for n, command in enumerate(resumes):
        argv = shrink(shlex.split(command))
        directory = tmp_path / str(n)
        directory.mkdir()
        for name in ("configs", "assets"):
            (directory / name).symlink_to(ROOT / name)
        logdir = argv[argv.index("--logdir") + 1]
        first = subprocess.run([sys.executable, "-m", "holdem.cli.train_blueprint", "--config",
                                "configs/hunl_default.yaml", "--iters", "1000",
                                "--snapshot-interval", "5", "--logdir", logdir, "--quiet"],
                               cwd=directory, env=env, capture_output=True, text=True,
                               timeout=600)
        assert first.returncode == 0, first.stderr
        proc = subprocess.run([sys.executable, *argv[1:]], cwd=directory, env=env,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, f"{command}\n{proc.stderr}"
        assert "resuming with the run's settings" in proc.stderr
        assert "changed:" not in proc.stderr, proc.stderr
        header = ckpt.load(ckpt.resolve(directory / logdir)).header
        assert header["config"]["train"]["snapshot_interval"] == 5


def test_python_example_runs(worked, monkeypatch):
    directory, _ = worked
    monkeypatch.chdir(directory)
    examples = blocks("python")
    assert examples
    loaded = []
    for code in examples:
        namespace = {}
        exec(compile(code, "README.md or docs/", "exec"), namespace)
        if "bp" in namespace:
            loaded.append(namespace["bp"])
    assert loaded
    assert all(bp.metadata["game"] == "nlhe" for bp in loaded)


def sections():
    """{module: text} of the ``### `python -m holdem.cli.MODULE ...``` sections of every page (a
    module's sections joined, heading included; a section ends at the next heading or at the
    end of its page)."""
    found = {}
    for text in TEXTS.values():
        parts = re.split(r"^(#{2,3} .*)$", text, flags=re.M)
        for heading, body in zip(parts[1::2], parts[2::2]):
            m = re.match(r"### `python -m holdem\.cli\.(\w+)", heading)
            if m:
                found[m[1]] = found.get(m[1], "") + heading + body
    return found


def test_every_command_has_a_section():
    modules = {p.stem for p in (ROOT / "holdem" / "cli").glob("*.py")
               if hasattr(importlib.import_module(f"holdem.cli.{p.stem}"), "build_parser")}
    assert modules <= set(sections())


def own_flags(module, text):
    """The flags ``text`` names, less those of `other_command --flag` spans."""
    others = "|".join(m for m in sections() if m != module)
    return set(FLAG_RE.findall(re.sub(rf"`(?:{others})\b[^`]*`", "", text)))


def help_flags(module):
    parser = importlib.import_module(f"holdem.cli.{module}").build_parser()
    return set(FLAG_RE.findall(parser.format_help())) - {"--help"}


@pytest.mark.parametrize("module", sorted(sections()))
def test_command_sections_document_exactly_the_flags_of_help(module):
    documented = own_flags(module, sections()[module])
    actual = help_flags(module)
    assert documented - actual == set(), f"the docs name flags {module} does not have"
    assert actual - documented == set(), f"{module} has flags the docs do not document"


def performance_rows():
    table = TEXTS["docs/performance.md"].split("# Performance", 1)[1].split("\n## ", 1)[0]
    return [line for line in table.splitlines()
            if line.startswith("| ") and not line.startswith(("| what", "| ---"))]


def test_performance_rows_name_their_command():
    rows = performance_rows()
    assert len(rows) > 10
    tool_sources = {p.name: p.read_text() for p in (ROOT / "tools").glob("*.py")}
    for row in rows:
        commands = re.findall(r"`(python (?:-m holdem\.cli\.|-c |tools/)[^`]*)`",
                              row.rsplit("[", 1)[-1])
        assert commands, f"no command in brackets: {row[:80]}"
        for command in commands:
            argv = shlex.split(command)
            flags = set(FLAG_RE.findall(" ".join(argv[2:])))
            if argv[1] == "-m":
                assert flags <= help_flags(argv[2].removeprefix("holdem.cli.")), command
            elif argv[1] == "-c":
                continue
            else:
                name = Path(argv[1]).name
                assert name in tool_sources, command
                source = tool_sources[name] + tool_sources["benchlib.py"]
                assert all(f'"{flag}"' in source for flag in flags), command


def test_tools_table_gives_one_example_of_every_command():
    table = README.split("## Tools", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines()
            if line.startswith("| `") and not line.startswith("| ---")]
    named = []
    for row in rows:
        module = re.match(r"\| `(\w+)` \|", row)[1]
        (command,) = re.findall(r"`(python -m holdem\.cli\.[^`]*)`", row.replace("\\|", "|"))
        argv = shlex.split(command)
        assert argv[2] == f"holdem.cli.{module}", row
        assert set(FLAG_RE.findall(" ".join(argv[3:]))) <= help_flags(module), command
        named.append(module)
    assert sorted(named) == sorted(sections())


def reference():
    """The configuration reference block: the YAML block that lists every key."""
    (block,) = [b for b in blocks("yaml") if "required: kuhn | leduc | nlhe" in b]
    return block


def test_config_reference_lists_every_key_with_its_default():
    data = yaml.safe_load(reference())
    assert list(data) == config_mod._section_names()
    for section in config_mod._section_names():
        defaults = config_mod._defaults(section)
        assert sorted(data[section]) == sorted(config_mod._section_fields(section))
        for name, value in data[section].items():
            if (section, name) != ("game", "name"):
                assert value == config_mod._plain(defaults[name]), f"{section}.{name}"


def test_config_reference_marks_the_conditional_keys():
    """A key documented with a [condition] is one the config checks, and the other way round."""
    game_bound = {f"{s}.{n}" for s in ("game", "solver", "train")
                  for n in config_mod._section_fields(s)
                  if config_mod._brought_by(s, n) is not None}    # keys games bring or use
    conditional = ({f"{s}.{n}" for (s, n), rule in config_mod.KEYS.items()
                    if rule.applies or rule.run} | game_bound)
    marked, section = set(), None
    for line in reference().splitlines():
        m = re.match(r"^(\s*)(\w+):[^#]*(#\s*(.*))?$", line)
        if not m:
            continue
        if not m[1]:
            section = m[2]
            continue
        if (m[4] or "").startswith("[") and section != "actions":
            marked.add(f"{section}.{m[2]}")
    assert marked == conditional


def test_other_yaml_examples_load(tmp_path):
    examples = [b for b in blocks("yaml") if b != reference()]
    assert examples
    for i, text in enumerate(examples):
        path = tmp_path / f"example{i}.yaml"
        path.write_text(text)
        config_mod.load(path)


def test_export_example_has_the_fields_of_an_export(worked, tmp_path):
    from holdem.cli.export_strategy import main

    directory, _ = worked
    out = tmp_path / "leduc.json"
    assert main(["--checkpoint", str(directory / "runs" / "leduc"), "--out", str(out)]) == 0
    real = json.loads(out.read_text())
    (example,) = blocks("json")
    shown = ast.literal_eval(example.replace(", ...]", "]").replace("true", "True")
                             .replace("null", "None"))
    assert set(shown) == set(real)
    assert set(shown["infosets"][0]) == set(real["infosets"][0])

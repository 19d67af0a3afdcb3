"""The one reader of input text and writer of output files: every OS failure is one line naming the path."""

from __future__ import annotations

import errno
import tempfile

import pytest

import automodel
from automodel.errors import DataError, ModelFileError, OutputError, SpaceError
from automodel.files import check_output, read_text, write_atomic, write_text


def test_directories_given_as_input_files_are_named(tmp_path):
    """Root cause 6 of issue 17: a directory as model file or search space was an IsADirectoryError."""
    with pytest.raises(ModelFileError, match=rf"^{tmp_path}: is a directory, expected a model JSON file$"):
        automodel.load_model(tmp_path)
    folder = tmp_path / "space.toml"
    folder.mkdir()
    with pytest.raises(SpaceError, match="is a directory, expected a search-space TOML file"):
        automodel.fit(_runs(tmp_path), space=folder)
    with pytest.raises(DataError, match="is a directory with no CUBE profiles in its folders; expected a file of "
                                        "measurements or a CUBE set"):
        automodel.fit(tmp_path)


def _runs(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("n,p,time\n1,1,1\n2,1,2\n3,1,3\n4,1,4\n")
    return path


def test_bytes_that_are_not_utf8_name_the_offset(tmp_path):
    path = tmp_path / "m.json"
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(ModelFileError, match=r"not UTF-8 text \(byte 0xff at offset 7\)"):
        read_text(path, "a model JSON file", ModelFileError)


def test_a_byte_order_mark_is_dropped(tmp_path):
    path = tmp_path / "m.txt"
    path.write_bytes("\ufeffhello".encode("utf-8"))
    assert read_text(path, "text", DataError) == "hello"


def test_output_through_a_regular_file_is_an_output_error(tmp_path):
    """Root cause 6: a path through a regular file was a NotADirectoryError traceback."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(OutputError, match=f"{blocker} is not a folder"):
        write_text(blocker / "model.json", "{}")
    with pytest.raises(OutputError, match="is a directory"):
        write_text(tmp_path, "{}")
    with pytest.raises(OutputError, match="does not exist"):
        write_text(tmp_path / "absent" / "model.json", "{}")


def test_an_unwritable_folder_leaves_nothing(tmp_path, monkeypatch):
    """A read-only folder (simulated: the tests may run as root, who may write anywhere)."""
    def refuse(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")
    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with pytest.raises(OutputError, match=r"cannot write in .*\(permission denied\)"):
        write_text(tmp_path / "model.json", "{}")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_leaves_neither_file_nor_temporary(tmp_path):
    def full(tmp):
        tmp.write_text("partial")
        raise OSError(errno.ENOSPC, "No space left on device")
    with pytest.raises(OutputError, match=r"out.csv: cannot be written \(no space left on device\)"):
        write_atomic(tmp_path / "out.csv", full)
    assert list(tmp_path.iterdir()) == []


def test_a_successful_write_replaces_the_file(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")
    write_text(path, "new")
    assert path.read_text() == "new" and len(list(tmp_path.iterdir())) == 1


def test_written_files_get_the_mode_of_a_plain_open(tmp_path):
    """Issue 13 (noticed): output files came out 0600, the mode of the temporary file."""
    import os

    mask = os.umask(0o022)
    try:
        path = write_text(tmp_path / "out.txt", "x")
    finally:
        os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o644


def test_a_file_written_again_keeps_its_mode(tmp_path):
    """A file made private (0600) came out 0644, readable by every user, when a command wrote it again:
    a plain open() keeps the mode of the file it truncates, the rename of a new file did not."""
    path = tmp_path / "model.json"
    path.write_text("old")
    path.chmod(0o600)
    write_text(path, "new")
    assert path.read_text() == "new" and path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("command", [["fit", "{runs}", "-o", "{runs}", "--quiet", "--templates", "none"],
                                     ["predict", "{model}", "{runs}", "-o", "{runs}"],
                                     ["predict", "{model}", "{runs}", "-o", "{model}"],
                                     ["report", "{runs}", "-o", "{link}"],
                                     ["kernels", "{runs}", "--out", "{runs}"],
                                     # the search space is an input too: -o space.toml replaced it by the model
                                     ["fit", "{runs}", "--space", "{space}", "-o", "{space}", "--quiet"],
                                     ["report", "{runs}", "--space", "{space}", "-o", "{space}", "--quiet"],
                                     ["kernels", "{runs}", "--space", "{space}", "--report", "{space}"],
                                     ["demo", "--data", "{runs}", "--plot", "{runs}"]])
def test_an_output_that_is_an_input_is_refused(tmp_path, capsys, model_json, command):
    """``fit runs.csv -o runs.csv`` replaced the measured runs by the model; ``predict`` rewrote its input."""
    from automodel.cli import main
    from automodel.space.config import space_path

    runs, model, link = tmp_path / "runs.csv", tmp_path / "model.json", tmp_path / "link.csv"
    space = tmp_path / "space.toml"
    runs.write_bytes((model_json.parent / "runs.csv").read_bytes())
    model.write_bytes(model_json.read_bytes())
    space.write_bytes(space_path("default").read_bytes())
    link.symlink_to(runs)
    before = runs.read_bytes(), model.read_bytes(), space.read_bytes()
    args = [a.format(runs=runs, model=model, link=link, space=space) for a in command]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ": is the input file " in err
    assert (runs.read_bytes(), model.read_bytes(), space.read_bytes()) == before


def test_two_outputs_of_one_command_are_refused_before_either_is_written(tmp_path, capsys):
    """``kernels --out x.json --report x.json`` wrote the models, then replaced them by the report:
    exit 0, the models lost. The second output is checked against the first, written or not yet."""
    from automodel.cli import main

    profile = tmp_path / "p.jsonl"
    profile.write_text("".join(f'{{"params": {{"p": {p}}}, "callpath": "{k}", "value": {p * (i + 1)}}}\n'
                               for i, k in enumerate(("a", "b")) for p in (1, 2, 4, 8)))
    out = tmp_path / "x.json"
    assert main(["kernels", str(profile), "--out", str(out), "--report", str(tmp_path / "." / "x.json")]) == 2
    assert capsys.readouterr().err == (f"automodel: error: {tmp_path / '.' / 'x.json'}: is the command's other output "
                                       f"{out} too; expected another file to write (one would replace the other)\n")
    assert not out.exists()
    with pytest.raises(OutputError, match="other output"):
        check_output(tmp_path / "fig.png", others=[None, "-", tmp_path / "sub" / ".." / "fig.png"])
    assert check_output(tmp_path / "fig.png", others=[tmp_path / "runs.csv"]) == tmp_path / "fig.png"

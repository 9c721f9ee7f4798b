"""A sheet is a file: `Variant.from_file` / `Variant.to_file` (JSON and TOML) and
`resolve_variant`, the one function every door (``--variant``, a training config, the play
server) names a variant through: a registered name, a sheet file, ``module:attribute``."""

from __future__ import annotations

import dataclasses
import textwrap

import pytest

from qwixx_env.core.options import TableOptions
from qwixx_env.core.variant import (
    CLASSIC,
    LONGO,
    Row,
    Variant,
    get_variant,
    register_variant,
    resolve_variant,
    variant_names,
)

UP = tuple(range(2, 13))


def mixx(name: str, **change) -> Variant:
    """A colour-mixed two-row sheet: each row's cells alternate between two dice."""
    rows = (Row("a", UP, ("red", "yellow") * 5 + ("red",)), Row("b", UP[::-1], ("green", "blue") * 5 + ("green",)))
    return Variant(name=name, faces=6, lock_cells=1, lock_threshold=5, score_table=CLASSIC.score_table,
                   rows_to_end=1, rows=rows, **change)


@pytest.mark.parametrize("suffix", [".json", ".toml"])
@pytest.mark.parametrize("variant", [mixx("files_mixx"), dataclasses.replace(LONGO, name="files_longo")],
                         ids=["mixed colours", "lucky numbers"])
def test_a_variant_written_to_a_file_reads_back_equal(tmp_path, suffix, variant):
    path = variant.to_file(tmp_path / f"sheet{suffix}")
    assert Variant.from_file(path) == variant
    if variant.lucky_rule is None and suffix == ".toml":
        assert "lucky_rule" not in path.read_text()  # TOML has no null: the default is left out


def test_a_hand_written_toml_sheet_takes_the_defaults_for_what_it_leaves_out(tmp_path):
    # three rows, each crossed with its own die (no colors), five penalties to end
    path = tmp_path / "trio.toml"
    path.write_text(textwrap.dedent("""\
        name = "files_trio"
        faces = 6
        lock_cells = 1
        lock_threshold = 5
        score_table = [0, 1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 66, 78]
        max_penalties = 5

        [[rows]]
        name = "red"
        numbers = [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]

        [[rows]]
        name = "green"
        numbers = [12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2]

        [[rows]]
        name = "blue"
        numbers = [12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2]
    """))
    v = Variant.from_file(path)
    assert v.row_names == ("red", "green", "blue") and v.dice_colors == ("red", "green", "blue")
    assert (v.max_penalties, v.penalty_points, v.rows_to_end, v.lucky_count) == (5, 5, 2, 0)


@pytest.mark.parametrize(
    "text, message",
    [
        ('name = "x"\nfaces = 6\nlock_cells = 1\nlock_threshold = 5\nscore_table = [0, 1]\nspeed = 3\n',
         r"trio.toml': variant: unknown keys \['speed'\]"),
        ('name = "x"\nfaces = 6\nlock_cells = 1\nlock_threshold = 5\n', r"missing \['score_table'\]"),
        ('name = "x"\nfaces = 6\nlock_cells = 1\nlock_threshold = 5\nscore_table = [0, 1]\n',
         r"trio.toml': score_table: got 2 entries; the x sheet needs at least 13"),
        ('name = "x"\nfaces = 99\nlock_cells = 1\nlock_threshold = 5\nscore_table = [0]\n',
         r"faces: got 99; expected an integer from 2 to 16"),
        ('name = "x"\nfaces = 6\nlock_cells = 1\nlock_threshold = 5\nscore_table = [0]\n'
         '[[rows]]\nname = "red"\nnumbers = [2, 2]\n', r"row red: numbers \(2, 2\); expected 2 different sums"),
        ('name = "x"\nfaces = \n', r"trio.toml': not valid TOML"),
    ],
    ids=["unknown key", "missing key", "short score table", "faces", "row numbers", "syntax"],
)
def test_a_bad_sheet_file_is_refused_naming_the_file_and_the_key(tmp_path, text, message):
    path = tmp_path / "trio.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        Variant.from_file(path)


def test_a_file_that_is_not_there_or_not_a_sheet_file_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"variant file '.*nothing.json': no such file"):
        Variant.from_file(tmp_path / "nothing.json")
    with pytest.raises(ValueError, match=r"expected a name ending in .json or .toml"):
        Variant.from_file(tmp_path / "sheet.yaml")
    with pytest.raises(ValueError, match=r"variant file '.*bad.json': not valid JSON"):
        (tmp_path / "bad.json").write_text("{")
        Variant.from_file(tmp_path / "bad.json")


def test_resolve_variant_takes_a_name_a_file_relative_to_a_folder_and_module_attribute(tmp_path, monkeypatch):
    assert resolve_variant("classic") is CLASSIC
    sheet = mixx("files_resolved")
    sheet.to_file(tmp_path / "mine.json")
    assert "files_resolved" not in variant_names()
    assert resolve_variant("mine.json", relative_to=tmp_path) == sheet
    assert "files_resolved" in variant_names() and TableOptions(variant="files_resolved").rules == sheet
    (tmp_path / "my_sheets.py").write_text(
        "from qwixx_env.core.variant import CLASSIC\nimport dataclasses\n"
        "SHEET = dataclasses.replace(CLASSIC, name='files_module')\nDATA = {**SHEET.as_dict(), 'name': 'files_data'}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert resolve_variant("my_sheets:SHEET").name == "files_module"
    assert resolve_variant("my_sheets:DATA").name == "files_data"  # a Variant's dict works too
    with pytest.raises(ValueError, match=r"variant: got 'my_sheets:NOTHING'; cannot import it"):
        resolve_variant("my_sheets:NOTHING")
    with pytest.raises(ValueError, match=r"variant: got 'mixx'; expected one of \('classic', 'longo'\).*a sheet file"):
        resolve_variant("mixx")


def test_a_file_that_redefines_a_registered_name_is_refused_naming_the_file_and_what_differs(tmp_path):
    register_variant(mixx("files_taken"))
    mixx("files_taken", penalty_points=3).to_file(tmp_path / "other.json")
    with pytest.raises(ValueError, match=r"other.json': variant 'files_taken' is registered already, with another "
                                         r"definition \(penalty_points 5 / 3"):
        resolve_variant(tmp_path / "other.json")


def test_register_variant_replaces_a_definition_only_when_asked_and_never_the_packages():
    first, second = mixx("files_notebook"), mixx("files_notebook", max_penalties=3)
    register_variant(first)
    with pytest.raises(ValueError, match="replace=True"):
        register_variant(second)
    assert register_variant(second, replace=True) is second and get_variant("files_notebook") == second
    with pytest.raises(ValueError, match="variant 'classic' is registered already"):
        register_variant(dataclasses.replace(CLASSIC, penalty_points=3), replace=True)
    assert get_variant("classic") == CLASSIC

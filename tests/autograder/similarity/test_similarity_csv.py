"""similarity.csv from hand-made records: a row per pair then per known match, scores per function, inert cells."""

import csv
import io

from similarity_records import GATHER, LOSS, roster

from autograder.similarity import table


def read(tmp_path, similarity) -> list[list[str]]:
    path = tmp_path / "similarity.csv"
    table.write_csv(similarity, path)
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))


def test_it_writes_a_row_per_pair_highest_first_then_a_row_per_known_match(tmp_path):
    rows = read(tmp_path, roster())
    assert rows[0] == ["kind", "a", "b", "source", "score", LOSS, GATHER]
    assert rows[1] == ["pair", "ada", "bob", "", "0.82", "0.7", "0.9"]
    assert rows[2] == ["pair", "ada", "cal", "", "0.05", "0.1", "0"]
    assert rows[3] == ["known", "ada", "solutions", "solutions", "1", "", "1"]  # loss not compared: empty
    assert len(rows) == 4


def test_no_cell_begins_like_a_formula_whatever_the_students_folder_is_called(tmp_path):
    names = ('=HYPERLINK("http://x")', "+1+1", "-2")
    rows = read(tmp_path, roster(*names))
    cells = [cell for row in rows for cell in row]
    assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in cells)
    assert rows[1][1:3] == ['\'=HYPERLINK("http://x")', "'+1+1"]


def test_a_name_with_a_newline_or_a_bidi_override_stays_on_one_printable_line(tmp_path):
    rows = read(tmp_path, roster("ada\nbob", "x\u202ey"))
    assert rows[1][1:3] == ["ada\\nbob", "x\\u202ey"]

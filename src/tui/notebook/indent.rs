//! Indentation edits of the cell editor, as plain functions over lines:
//! Backspace in the indentation removes one level (to the previous multiple
//! of [`LEVEL`] columns), Shift+Tab dedents lines by one level wherever the
//! cursor is, Tab with a selection indents the selected lines (issue 27).

/// Columns in one indentation level.
pub const LEVEL: usize = 4;

/// Backspace at character column `col` of `line`: when only spaces are left
/// of the cursor, how many to delete to reach the previous indentation level
/// (1 to [`LEVEL`]); `None` elsewhere (Backspace deletes one character).
pub fn backspace_width(line: &str, col: usize) -> Option<usize> {
    if col == 0 || line.chars().take(col).any(|c| c != ' ') {
        return None;
    }
    if line.chars().count() < col {
        return None;
    }
    Some(col - (col - 1) / LEVEL * LEVEL)
}

/// How many characters dedenting `line` removes from its start: a leading
/// tab, or the spaces down to the previous indentation level.
pub fn dedent_width(line: &str) -> usize {
    if line.starts_with('\t') {
        return 1;
    }
    let spaces = line.chars().take_while(|c| *c == ' ').count();
    if spaces == 0 {
        0
    } else {
        spaces - (spaces - 1) / LEVEL * LEVEL
    }
}

/// The rows an indent or dedent applies to: those of the selection from
/// `start` to `end` (each (row, column), in order), without its last row
/// when the selection ends at that row's start; the cursor's row when
/// nothing is selected.
pub fn rows(
    selection: Option<((usize, usize), (usize, usize))>,
    cursor_row: usize,
) -> (usize, usize) {
    match selection {
        Some(((r1, _), (r2, 0))) if r2 > r1 => (r1, r2 - 1),
        Some(((r1, _), (r2, _))) => (r1, r2),
        None => (cursor_row, cursor_row),
    }
}

/// Dedents rows `first..=last` of `lines` by one level; returns, per row
/// from `first`, how many characters its start lost.
pub fn dedent(lines: &mut [String], first: usize, last: usize) -> Vec<usize> {
    lines
        .iter_mut()
        .skip(first)
        .take(last.saturating_sub(first) + 1)
        .map(|line| {
            let n = dedent_width(line);
            let cut = line.char_indices().nth(n).map_or(line.len(), |(i, _)| i);
            line.replace_range(..cut, "");
            n
        })
        .collect()
}

/// Indents rows `first..=last` of `lines` by one level (empty rows stay
/// empty); returns, per row from `first`, how many characters its start got.
pub fn indent(lines: &mut [String], first: usize, last: usize) -> Vec<usize> {
    lines
        .iter_mut()
        .skip(first)
        .take(last.saturating_sub(first) + 1)
        .map(|line| {
            if line.is_empty() {
                0
            } else {
                line.insert_str(0, &" ".repeat(LEVEL));
                LEVEL
            }
        })
        .collect()
}

/// A position (row, column) moved for a row whose start changed by `delta`
/// characters (per row from `first`, as [`dedent`] and [`indent`] return
/// them); `grew` says whether they were added or removed.
pub fn shift(pos: (usize, usize), first: usize, deltas: &[usize], grew: bool) -> (usize, usize) {
    let (row, col) = pos;
    let Some(&delta) = row.checked_sub(first).and_then(|i| deltas.get(i)) else {
        return pos;
    };
    if grew {
        (row, if col == 0 { 0 } else { col + delta })
    } else {
        (row, col.saturating_sub(delta))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backspace_in_the_indentation_goes_back_a_level() {
        assert_eq!(backspace_width("        x", 8), Some(4));
        assert_eq!(backspace_width("        x", 4), Some(4));
        assert_eq!(backspace_width("      x", 6), Some(2));
        assert_eq!(backspace_width("   ", 1), Some(1));
        assert_eq!(backspace_width("    x", 5), None);
        assert_eq!(backspace_width("  x ", 4), None);
        assert_eq!(backspace_width("x", 0), None);
        assert_eq!(backspace_width("", 0), None);
    }

    #[test]
    fn dedent_removes_a_level_or_a_tab() {
        let mut lines: Vec<String> = ["        a", "      b", "c", "\t\td", "  e"]
            .map(String::from)
            .to_vec();
        let deltas = dedent(&mut lines, 0, 4);
        assert_eq!(lines, ["    a", "    b", "c", "\td", "e"]);
        assert_eq!(deltas, [4, 2, 0, 1, 2]);
        assert_eq!(shift((1, 7), 0, &deltas, false), (1, 5));
        assert_eq!(shift((2, 1), 0, &deltas, false), (2, 1));
        assert_eq!(shift((4, 1), 0, &deltas, false), (4, 0));
        assert_eq!(shift((9, 3), 0, &deltas, false), (9, 3));
    }

    #[test]
    fn indent_adds_a_level_to_lines_with_text() {
        let mut lines: Vec<String> = ["a", "", "  b"].map(String::from).to_vec();
        let deltas = indent(&mut lines, 0, 2);
        assert_eq!(lines, ["    a", "", "      b"]);
        assert_eq!(shift((2, 3), 0, &deltas, true), (2, 7));
        assert_eq!(shift((0, 0), 0, &deltas, true), (0, 0));
    }

    #[test]
    fn a_selection_ending_at_a_row_start_leaves_that_row() {
        assert_eq!(rows(Some(((1, 2), (3, 0))), 3), (1, 2));
        assert_eq!(rows(Some(((1, 2), (3, 1))), 3), (1, 3));
        assert_eq!(rows(Some(((2, 0), (2, 0))), 2), (2, 2));
        assert_eq!(rows(None, 5), (5, 5));
    }
}

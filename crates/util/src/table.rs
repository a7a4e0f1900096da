//! The aligned text tables crawlrank prints (the simulator's results and repeated results, the
//! seeds' evaluation): written one way, so that every report lines its columns up alike.

use std::io::Write;

/// Writes `rows` as a table: the first column left-aligned, the others right-aligned, two
/// spaces apart, widths in characters (cells may hold "±" or "∞"), a rule under the header
/// row (the first), no trailing spaces. Nothing is written for no rows.
pub fn write_aligned(rows: &[Vec<String>], w: &mut impl Write) -> std::io::Result<()> {
    let Some(header) = rows.first() else {
        return Ok(());
    };
    let len = |s: &str| s.chars().count();
    let widths: Vec<usize> = (0..header.len())
        .map(|c| rows.iter().map(|r| len(&r[c])).max().unwrap_or(0))
        .collect();
    for (i, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (cell, &width))| {
                let pad = " ".repeat(width - len(cell));
                if c == 0 {
                    format!("{cell}{pad}")
                } else {
                    format!("{pad}{cell}")
                }
            })
            .collect();
        writeln!(w, "{}", cells.join("  ").trim_end())?;
        if i == 0 {
            let rule = widths.iter().sum::<usize>() + 2 * (widths.len().saturating_sub(1));
            writeln!(w, "{}", "-".repeat(rule))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::write_aligned;

    #[test]
    fn columns_line_up_by_characters_under_a_rule() {
        let rows: Vec<Vec<String>> = [["policy", "hot@5%"], ["bfs", "0.1 ± 0.02"], ["x", ""]]
            .iter()
            .map(|r| r.iter().map(|c| c.to_string()).collect())
            .collect();
        let mut out = Vec::new();
        write_aligned(&rows, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "policy      hot@5%\n------------------\nbfs     0.1 ± 0.02\nx\n"
        );
        let mut none = Vec::new();
        write_aligned(&[], &mut none).unwrap();
        assert!(none.is_empty());
    }
}

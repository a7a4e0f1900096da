//! One field of the CSV tables crawlrank writes (the simulator's and the offline frontier
//! ranking's tidy `summary.csv`, their statistics and paired tests): a graph's name or an
//! impact column comes from the user and may hold a comma, so it is quoted as RFC 4180 says.

/// `s` as one CSV field: as it is, or quoted (quotes doubled) when it holds a comma, a quote
/// or a line break.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::csv_field;

    #[test]
    fn fields_are_quoted_only_when_they_must_be() {
        assert_eq!(csv_field("cnr-2000"), "cnr-2000");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
    }
}

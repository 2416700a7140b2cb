//! The files a step writes for the runner (`$GITHUB_OUTPUT`, `$GITHUB_ENV`): `name=value`
//! lines and `name<<DELIM` heredocs.

/// `name=value` lines and `name<<DELIM` heredocs of an environment file.
pub fn parse_env_file(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim().is_empty() {
            continue;
        }
        let heredoc = line.split_once("<<").filter(|(k, _)| !k.contains('='));
        if let Some((name, delim)) = heredoc {
            let mut value = Vec::new();
            loop {
                match lines.next() {
                    Some(l) if l == delim => break,
                    Some(l) => value.push(l),
                    None => return Err(format!("Matching delimiter not found '{delim}'")),
                }
            }
            out.push((name.to_owned(), value.join("\n")));
        } else if let Some((k, v)) = line.split_once('=') {
            out.push((k.to_owned(), v.to_owned()));
        } else {
            return Err(format!("Invalid format '{line}'"));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_files_with_heredocs() {
        let got = parse_env_file("a=1\nb<<EOF\nx\ny=z\nEOF\n\nc=\n").unwrap();
        assert_eq!(
            got,
            [
                ("a".into(), "1".into()),
                ("b".into(), "x\ny=z".into()),
                ("c".into(), String::new())
            ]
        );
        assert!(
            parse_env_file("b<<EOF\nx\n")
                .unwrap_err()
                .contains("delimiter")
        );
    }
}

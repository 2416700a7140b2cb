//! Escaping for every place a string from a results file, a config or a tool's output is
//! printed: GitHub workflow commands (annotations), Markdown, HTML and SVG, and terminals.
//! One home, so a renderer never invents its own rules.

/// A workflow command's message: `%`, CR and LF percent-encoded (`::error ::<message>`).
pub fn workflow_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value (`title=`): as [`workflow_data`], and `:` and `,`.
pub fn workflow_property(s: &str) -> String {
    workflow_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// Text in GitHub Markdown: every character Markdown could read as markup (and `|`, for
/// tables) backslash-escaped, and an `&` that would start an entity reference; line breaks
/// turned into spaces.
pub fn markdown(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.char_indices() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' => {
                out.push('\\');
                out.push(c);
            }
            '&' if starts_entity(&s[i..]) => out.push_str("\\&"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Text written into Markdown as it is, its own inline markup (code spans, emphasis) kept,
/// but held on its line: CR and LF turned into spaces, so it cannot start a heading, a list
/// or a workflow command on a line of its own; `<` backslash-escaped, so it opens no HTML
/// tag, and so is an `&` that would start an entity reference; a `#` or `>` it starts with,
/// or a fence (three backticks or tildes), escaped too, so it opens no block where it starts
/// a line (a list item).
pub fn markdown_line(s: &str) -> String {
    let body = s.len() - s.trim_start_matches([' ', '\t', '\r', '\n']).len();
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.char_indices() {
        match c {
            '\n' | '\r' => out.push(' '),
            '<' => out.push_str("\\<"),
            '&' if starts_entity(&s[i..]) => out.push_str("\\&"),
            '#' | '>' if i == body => {
                out.push('\\');
                out.push(c);
            }
            '`' | '~' if i == body && s[i..].starts_with(&c.to_string().repeat(3)) => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Whether `s` (which starts with `&`) starts with what Markdown reads as an entity
/// reference: `&name;`, `&#123;`, `&#x1F;`.
fn starts_entity(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('&') else {
        return false;
    };
    let name = rest
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'#')
        .count();
    (1..=32).contains(&name) && rest.as_bytes().get(name) == Some(&b';')
}

/// A Markdown code span that survives backticks inside (its fence one backtick longer than
/// the longest run of them), and `|`, which GitHub splits table cells on even inside code;
/// line breaks turned into spaces.
pub fn markdown_code(s: &str) -> String {
    let s = markdown_cell(s);
    let run = longest_run(&s, '`');
    if run == 0 {
        format!("`{s}`")
    } else {
        let fence = "`".repeat(run + 1);
        format!("{fence} {s} {fence}")
    }
}

/// The fence of a Markdown fenced code block holding `text`: three backticks, or one more
/// than the longest run of backticks in it, so no line of it can close the block.
pub fn markdown_fence(text: &str) -> String {
    "`".repeat(longest_run(text, '`').max(2) + 1)
}

/// The length of the longest run of `c` in `s`.
fn longest_run(s: &str, c: char) -> usize {
    s.split(|x| x != c)
        .map(|r| r.len() / c.len_utf8())
        .max()
        .unwrap_or(0)
}

/// Text in a Markdown table cell written as is but for `|`, backslash-escaped (GitHub splits a
/// row at every `|` that is not), and line breaks, which would end the row, turned into
/// spaces.
pub fn markdown_cell(s: &str) -> String {
    bars(s).replace(['\n', '\r'], " ")
}

/// `s` with every `|` backslash-escaped, the backslashes right before one doubled first: a `|`
/// after an even run of them is not escaped, and GitHub splits a table row there, code span
/// or not.
fn bars(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c == '|' {
            let slashes = out.len() - out.trim_end_matches('\\').len();
            out.push_str(&"\\".repeat(slashes + 1));
        }
        out.push(c);
    }
    out
}

/// A Markdown link or image target (a relative path): spaces, which would end it, encoded.
pub fn markdown_target(s: &str) -> String {
    s.replace(' ', "%20")
}

/// Text for HTML content, attribute values, and SVG: the five entities.
pub fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A message on one line: its lines trimmed, empty ones dropped, joined with spaces. Table
/// cells and terminal lines hold one.
pub fn one_line(s: &str) -> String {
    s.split(['\n', '\r'])
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `s` with the userinfo of every URL in it removed (`https://user:secret@host/…` →
/// `https://host/…`): what is printed never carries a credential a URL held.
pub fn without_userinfo(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| c == '/' || c.is_whitespace() || c == '\'' || c == '"' || c == '`')
            .unwrap_or(tail.len());
        match tail[..end].rfind('@') {
            Some(at) => rest = &tail[at + 1..],
            None => rest = tail,
        }
    }
    out.push_str(rest);
    out
}

/// Text that GitHub would read as a mention (`@user`, `@org/team`: a notification to them) or
/// a reference (`#12`, `owner/repo#12`: a back-link on that issue) made inert: a zero-width
/// space after every `@` and `#`, so no login or number follows one directly (a Markdown
/// backslash escape is not relied on: GitHub finds mentions in the rendered text, where the
/// backslash is gone). For external text in a comment or a check run; it reads the same.
pub fn unmention(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        out.push(c);
        if matches!(c, '@' | '#') {
            out.push('\u{200B}');
        }
    }
    out
}

/// Text for a terminal (and a runner's log): ANSI escape sequences removed, other control
/// characters but tab and line feed shown as `\u{..}`, so a name cannot move the cursor or
/// recolour the screen; a line that would start with `::` has its first `:` written `%3A`,
/// so a name cannot issue a workflow command on a GitHub runner; URLs lose their userinfo.
pub fn terminal(s: &str) -> String {
    let shown = without_userinfo(&strip_controls(s));
    if !shown.contains("::") {
        return shown;
    }
    let mut out = String::with_capacity(shown.len());
    for (i, line) in shown.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let body = line.trim_start();
        if body.starts_with("::") {
            out.push_str(&line[..line.len() - body.len()]);
            out.push_str("%3A");
            out.push_str(&body[1..]);
        } else {
            out.push_str(line);
        }
    }
    out
}

fn strip_controls(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                // CSI (`ESC [ … final`) or OSC (`ESC ] … BEL|ESC \`), else the one next char.
                match chars.next() {
                    Some('[') => {
                        for d in chars.by_ref() {
                            if ('@'..='~').contains(&d) {
                                break;
                            }
                        }
                    }
                    Some(']') => {
                        while let Some(d) = chars.next() {
                            if d == '\u{7}' || (d == '\u{1b}' && chars.next_if_eq(&'\\').is_some())
                            {
                                break;
                            }
                        }
                    }
                    _ => {}
                }
            }
            '\t' | '\n' => out.push(c),
            c if c.is_control() => out.push_str(&c.escape_unicode().to_string()),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hostile name of `@org/team` in a pull request's comment notified the team: Markdown
    /// escaping left the `@` as it was.
    #[test]
    fn a_mention_or_an_issue_reference_in_external_text_is_inert() {
        let s = unmention("@org/team and @user, owner/repo#12, #3");
        assert!(!s.contains("@o") && !s.contains("@u") && !s.contains("#1") && !s.contains("#3"));
        assert_eq!(
            s.replace('\u{200B}', ""),
            "@org/team and @user, owner/repo#12, #3"
        );
    }

    #[test]
    fn urls_lose_their_userinfo() {
        assert_eq!(
            without_userinfo("push to https://x-access-token:ghs_s3cret@github.com/o/r.git failed"),
            "push to https://github.com/o/r.git failed"
        );
        assert_eq!(
            without_userinfo("`http://user:pw@127.0.0.1:8/x` and ftp://h/p"),
            "`http://127.0.0.1:8/x` and ftp://h/p"
        );
        assert_eq!(without_userinfo("no url here: a@b"), "no url here: a@b");
    }

    #[test]
    fn workflow_commands() {
        assert_eq!(workflow_data("50% off\nnext"), "50%25 off%0Anext");
        assert_eq!(workflow_property("a: b, c"), "a%3A b%2C c");
    }

    #[test]
    fn markdown_text_and_code() {
        assert_eq!(markdown("a|b_c\n#d"), "a\\|b\\_c \\#d");
        assert_eq!(markdown_code("x|y"), "`x\\|y`");
        assert_eq!(markdown_code("a`b"), "`` a`b ``");
        assert_eq!(markdown_cell("a|b_c"), "a\\|b_c");
        assert_eq!(markdown_cell("a\nb\r\nc"), "a b  c");
        assert_eq!(markdown_cell("a\\|b"), "a\\\\\\|b");
        assert_eq!(markdown_code("a\\|b"), "`a\\\\\\|b`");
        assert_eq!(markdown_target("charts/a b.svg"), "charts/a%20b.svg");
    }

    #[test]
    fn markdown_entities() {
        assert_eq!(markdown("&amp; &#60; & co &;"), "\\&amp; \\&\\#60; & co &;");
        assert_eq!(markdown_line("R&D &lt;"), "R&D \\&lt;");
    }

    #[test]
    fn markdown_code_fences_outgrow_backticks_inside() {
        assert_eq!(markdown_code("a``b"), "``` a``b ```");
        assert_eq!(markdown_code("`x`"), "`` `x` ``");
        assert_eq!(markdown_code("a\r\nb"), "`a  b`");
        assert_eq!(markdown_fence("plain\nlog"), "```");
        assert_eq!(markdown_fence("```\n## out"), "````");
        assert_eq!(markdown_fence("a `````` b"), "```````");
    }

    #[test]
    fn markdown_lines_keep_their_markup_on_their_line() {
        assert_eq!(
            markdown_line("row `c-O2` on **mix**: _fast_"),
            "row `c-O2` on **mix**: _fast_"
        );
        assert_eq!(markdown_line("Linux 6.8 #1 SMP"), "Linux 6.8 #1 SMP");
        assert_eq!(markdown_line("x\n## injected"), "x ## injected");
        assert_eq!(markdown_line("\n## injected"), " \\## injected");
        assert_eq!(markdown_line("y\r\n::warning::x"), "y  ::warning::x");
        assert_eq!(
            markdown_line("<script>alert(1)</script>"),
            "\\<script>alert(1)\\</script>"
        );
        assert_eq!(markdown_line("> quote"), "\\> quote");
        assert_eq!(markdown_line("a > b"), "a > b");
        assert_eq!(markdown_line("```rust"), "\\```rust");
        assert_eq!(markdown_line("  ~~~"), "  \\~~~");
        assert_eq!(markdown_line("`a` b"), "`a` b");
    }

    #[test]
    fn html_entities() {
        assert_eq!(
            html("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn lines_and_terminals() {
        assert_eq!(one_line("a\r\n  b|c\n\n"), "a b|c");
        assert_eq!(terminal("red \u{1b}[31mX\u{1b}[0m"), "red X");
        assert_eq!(terminal("t\u{1b}]0;title\u{7}x"), "tx");
        assert_eq!(terminal("a\u{8}b\tc\n"), "a\\u{8}b\tc\n");
        assert_eq!(
            terminal("row x\n::warning::pwned\n  ::error::too\nok :: fine"),
            "row x\n%3A:warning::pwned\n  %3A:error::too\nok :: fine"
        );
    }
}

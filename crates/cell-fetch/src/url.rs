//! The little URL handling a fetch needs: scheme check, file name, credentials removed.

/// Whether `url` is `http://` or `https://` (case-insensitive scheme).
pub(super) fn is_http(url: &str) -> bool {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// Splits `scheme://authority` from the rest (path, query, fragment).
fn split_authority(url: &str) -> (&str, &str) {
    let after = url.find("://").map_or(0, |i| i + 3);
    let end = url[after..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| after + i);
    url.split_at(end)
}

/// `url` with any `user:password@` removed, fit for messages.
pub(crate) fn redact(url: &str) -> String {
    let (head, rest) = split_authority(url);
    let after = head.find("://").map_or(0, |i| i + 3);
    match head[after..].rfind('@') {
        Some(at) => format!("{}{}{rest}", &head[..after], &head[after + at + 1..]),
        None => url.to_owned(),
    }
}

/// The last path segment of `url`, percent-decoded; `None` if the path ends in `/` or is empty.
pub(crate) fn file_name(url: &str) -> Option<String> {
    let (_, rest) = split_authority(url);
    let path = &rest[..rest.find(['?', '#']).unwrap_or(rest.len())];
    let last = path.rsplit('/').next().unwrap_or("");
    let name = percent_decode(last);
    (!name.is_empty()).then_some(name)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |at: usize| bytes.get(at).and_then(|&b| char::from(b).to_digit(16));
        let escaped = if bytes[i] == b'%' {
            (hex(i + 1), hex(i + 2))
        } else {
            (None, None)
        };
        if let (Some(h), Some(l)) = escaped {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_redaction() {
        assert_eq!(
            file_name("https://h/a/b/x-1.tar.gz?sig=1#f").as_deref(),
            Some("x-1.tar.gz")
        );
        assert_eq!(
            file_name("https://h/a/x%2B1.zip").as_deref(),
            Some("x+1.zip")
        );
        assert_eq!(file_name("https://h/a/x%2").as_deref(), Some("x%2"));
        assert_eq!(file_name("https://h/dir/"), None);
        assert_eq!(file_name("https://h"), None);
        assert_eq!(redact("https://u:p@h:1/x@y"), "https://h:1/x@y");
        assert_eq!(redact("http://h/x"), "http://h/x");
        assert!(is_http("HTTPS://h/x") && is_http("http://h") && !is_http("file:///x"));
    }
}

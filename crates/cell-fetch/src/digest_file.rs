//! `.sha256` files: `sha256sum` output (`HEX  NAME`, `HEX *NAME`, a bare `HEX`), and the BSD
//! form `SHA256 (NAME) = HEX`.

use cell_schema::Sha256;

use super::download;
use super::error::FetchError;
use super::http::Timeouts;
use super::url::redact;

/// A digest file larger than this is not a digest file.
pub const MAX_DIGEST_FILE: usize = 1 << 20;

/// Downloads the digest file at `url` and picks the digest of `archive_name`.
pub(super) async fn fetch_expected(
    client: &reqwest::Client,
    timeouts: Timeouts,
    url: &str,
    archive_name: &str,
) -> Result<Sha256, FetchError> {
    let text = fetch_text(client, timeouts, url).await?;
    pick(&text, archive_name, true).map_err(|e| FetchError::DigestFile {
        url: redact(url),
        msg: e.to_string(),
    })
}

/// Downloads a digest file (at most [`MAX_DIGEST_FILE`] bytes) as text.
pub(super) async fn fetch_text(
    client: &reqwest::Client,
    timeouts: Timeouts,
    url: &str,
) -> Result<String, FetchError> {
    let mut response = download::get(client, timeouts, url).await?;
    let mut bytes = Vec::new();
    while let Some(piece) = download::chunk(&mut response, timeouts, url).await? {
        bytes.extend_from_slice(&piece);
        if bytes.len() > MAX_DIGEST_FILE {
            return Err(FetchError::DigestFile {
                url: redact(url),
                msg: format!("larger than {MAX_DIGEST_FILE} bytes; is it really a .sha256 file?"),
            });
        }
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// A digest file that names no usable digest for the archive.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum DigestFileError {
    /// A line that is none of the known forms.
    #[error(
        "line {line}: expected `HEX  NAME`, `HEX *NAME`, a bare `HEX` or `SHA256 (NAME) = HEX`, found `{shown}`"
    )]
    BadLine {
        /// 1-based line number.
        line: usize,
        /// Its first 80 characters.
        shown: String,
    },
    /// Not one digest in it.
    #[error("no SHA-256 digest in the file")]
    Empty,
    /// Several digests, none for the archive.
    #[error("it lists {count} digests but none for `{archive}`; pass --sha256 instead")]
    NotListed {
        /// How many it lists.
        count: usize,
        /// The archive's file name.
        archive: String,
    },
    /// One line, naming another file than the archive.
    #[error(
        "its one line is the digest of `{listed}`, not of `{archive}`: give the checksum file of `{archive}`, or pass --sha256"
    )]
    OtherFile {
        /// The name the line gives.
        listed: String,
        /// The archive's file name.
        archive: String,
    },
    /// The archive twice, with two digests.
    #[error("it lists `{0}` twice with different digests")]
    Conflicting(String),
}

/// The digest for `archive_name` in the text of a digest file: the line naming it (by its
/// base name: `dist/x.tgz` and `./x.tgz` name `x.tgz`), or, when `bare` allows it, a bare
/// digest alone in the file. A file of one line that names another file is refused: it is
/// that file's digest.
pub(super) fn pick(text: &str, archive_name: &str, bare: bool) -> Result<Sha256, DigestFileError> {
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_start_matches('\u{feff}').trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let parsed = parse_line(line).ok_or_else(|| DigestFileError::BadLine {
            line: i + 1,
            shown: line.chars().take(80).collect(),
        })?;
        lines.push(parsed);
    }
    match lines.as_slice() {
        [] => Err(DigestFileError::Empty),
        [(digest, None)] if bare => Ok(digest.clone()),
        [(digest, Some(listed))] if names(listed, archive_name) => Ok(digest.clone()),
        [(_, Some(listed))] => Err(DigestFileError::OtherFile {
            listed: listed.chars().take(200).collect(),
            archive: archive_name.to_owned(),
        }),
        many => {
            let mut hits = many
                .iter()
                .filter(|(_, n)| n.as_deref().is_some_and(|n| names(n, archive_name)));
            let Some((first, _)) = hits.next() else {
                return Err(DigestFileError::NotListed {
                    count: many.len(),
                    archive: archive_name.to_owned(),
                });
            };
            if hits.any(|(d, _)| d != first) {
                return Err(DigestFileError::Conflicting(archive_name.to_owned()));
            }
            Ok(first.clone())
        }
    }
}

/// Whether the name a line gives is the archive's: the same base name, whatever directory
/// (`./`, `dist/`) the line puts before it.
fn names(listed: &str, archive_name: &str) -> bool {
    base_name(listed) == base_name(archive_name)
}

fn base_name(name: &str) -> &str {
    name.rsplit(['/', '\\']).next().unwrap_or(name)
}

/// One line: the digest and the file name, if any.
fn parse_line(line: &str) -> Option<(Sha256, Option<String>)> {
    if let Some(rest) = line.strip_prefix("SHA256 (") {
        let (name, hex) = rest.rsplit_once(") = ")?;
        return Some((Sha256::parse(hex).ok()?, Some(name.to_owned())));
    }
    // sha256sum prefixes a line with `\` when it escaped the name.
    let line = line.strip_prefix('\\').unwrap_or(line);
    let (hex, rest) = match line.find(char::is_whitespace) {
        Some(i) => (&line[..i], line[i..].trim_start()),
        None => (line, ""),
    };
    let digest = Sha256::parse(hex).ok()?;
    // `*` marks binary mode, which sha256sum writes before the name.
    let name = rest.strip_prefix('*').unwrap_or(rest);
    Some((digest, (!name.is_empty()).then(|| name.to_owned())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_line_naming_the_asset_by_its_base_name_counts() {
        let a = "cell-0.1.0-linux-x86_64.tar.gz";
        let d = hex('a');
        let strict = |text: String| pick(&text, a, false);
        assert!(strict(format!("{d}  {a}")).is_ok());
        assert!(strict(format!("{d} *dist/{a}")).is_ok());
        assert!(strict(format!("SHA256 ({a}) = {d}")).is_ok());
        assert!(strict(format!("# {a}\n{d}")).is_err());
        assert!(strict(d.clone()).is_err());
        assert!(strict(format!("{d}  evil-{a}")).is_err());
        assert!(strict(format!("{d}  {a}.sig")).is_err());
    }

    fn hex(c: char) -> String {
        c.to_string().repeat(64)
    }

    #[test]
    fn bare_and_single_lines() {
        assert_eq!(
            pick(&format!("{}\n", hex('a')), "x.tgz", true)
                .unwrap()
                .as_str(),
            hex('a')
        );
        assert_eq!(
            pick(&format!("{} *x.tgz", hex('C')), "x.tgz", true)
                .unwrap()
                .as_str(),
            hex('c')
        );
    }

    #[test]
    fn a_single_line_naming_another_file_is_refused_naming_both() {
        // One line `HEX  other.tgz` was taken as the digest of `x.tgz`.
        let err = pick(&format!("{}  other.tgz\n", hex('b')), "x.tgz", true).unwrap_err();
        assert_eq!(
            err,
            DigestFileError::OtherFile {
                listed: "other.tgz".into(),
                archive: "x.tgz".into()
            }
        );
        let msg = err.to_string();
        assert!(
            msg.contains("`other.tgz`, not of `x.tgz`") && msg.contains("--sha256"),
            "{msg}"
        );
        let bsd = format!("SHA256 (other.tgz) = {}\n", hex('b'));
        assert!(matches!(
            pick(&bsd, "x.tgz", true),
            Err(DigestFileError::OtherFile { .. })
        ));
        // The archive's name as sha256sum writes it: binary mode, `./`, a directory, BSD.
        for line in [
            format!("{}  x.tgz", hex('d')),
            format!("{} *x.tgz", hex('d')),
            format!("{}  ./x.tgz", hex('d')),
            format!("{} *./x.tgz", hex('d')),
            format!("{}  dist/x.tgz", hex('d')),
            format!("SHA256 (./x.tgz) = {}", hex('d')),
        ] {
            assert_eq!(
                pick(&line, "x.tgz", true).unwrap().as_str(),
                hex('d'),
                "{line}"
            );
        }
        // A name that only ends like the archive's is another file.
        let err = pick(&format!("{}  old-x.tgz", hex('d')), "x.tgz", true).unwrap_err();
        assert!(matches!(err, DigestFileError::OtherFile { .. }), "{err}");
    }

    #[test]
    fn several_names_pick_ours() {
        let text = format!(
            "# digests\n{}  a.zip\n{} *dist/x.tgz\n{}  y.tgz\n",
            hex('1'),
            hex('2'),
            hex('3')
        );
        assert_eq!(pick(&text, "x.tgz", true).unwrap().as_str(), hex('2'));
        let err = pick(&text, "z.tgz", true).unwrap_err();
        assert!(err.to_string().contains("none for `z.tgz`"), "{err}");
        let bsd = format!(
            "SHA256 (a.zip) = {}\nSHA256 (x.tgz) = {}\n",
            hex('4'),
            hex('5')
        );
        assert_eq!(pick(&bsd, "x.tgz", true).unwrap().as_str(), hex('5'));
    }

    #[test]
    fn garbage_is_named() {
        let err = pick("not a digest  x.tgz\n", "x.tgz", true).unwrap_err();
        assert!(err.to_string().starts_with("line 1:"), "{err}");
        assert!(pick("\n# nothing\n", "x.tgz", true).is_err());
    }
}

//! `cell fetch`.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use cell_fetch::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_ENTRIES, DEFAULT_MAX_RATIO, DEFAULT_MAX_UNPACKED_BYTES,
    DEFAULT_RATIO_FLOOR, Expected, FetchRequest, Fetched, Timeouts, UnpackOptions, fetch,
};
use cell_schema::Sha256;
use clap::{ArgGroup, Args};

use crate::cli::{Cli, Format};
use crate::exit::Exit;

/// `cell fetch --url URL (--sha256 HEX | --sha256-url URL) --into DIR`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("digest").required(true).args(["sha256", "sha256_url"])))]
pub struct FetchArgs {
    /// Archive to download (http or https; redirects are followed). Its file name picks the
    /// format: .tar.gz/.tgz, .tar.xz/.txz or .zip.
    #[arg(long, value_name = "URL")]
    pub url: String,
    /// Expected SHA-256 of the archive: 64 hex digits.
    #[arg(long, value_name = "HEX", value_parser = Sha256::parse)]
    pub sha256: Option<Sha256>,
    /// URL of a .sha256 file (sha256sum format) holding the expected digest: the line naming
    /// the archive's file name, or a bare digest alone in the file.
    #[arg(long, value_name = "URL")]
    pub sha256_url: Option<String>,
    /// Directory to unpack into; it must not exist or be empty.
    #[arg(long, value_name = "DIR")]
    pub into: PathBuf,
    /// Drop this many leading path components from every entry, as GNU tar counts them (a
    /// leading `./` is one); entries with no more components than that are skipped, and the
    /// files and links among them are said.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub strip_components: usize,
    /// Abort the download past this many bytes.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_BYTES)]
    pub max_bytes: u64,
    /// Refuse an archive that unpacks to more than this many bytes.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_UNPACKED_BYTES)]
    pub max_unpacked_bytes: u64,
    /// Refuse an archive that unpacks to more than this many times its own size (0: no
    /// ratio cap); at least --ratio-floor bytes are always allowed.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_RATIO)]
    pub max_ratio: u64,
    /// The unpacked bytes the ratio always allows, however small the archive.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_RATIO_FLOOR)]
    pub ratio_floor: u64,
    /// Refuse an archive with more than this many entries.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_ENTRIES)]
    pub max_entries: usize,
    /// Give up on a download after this many seconds in all, however steadily bytes arrive
    /// (exit 2, naming the URL; nothing is left behind). Default: `FETCH_TIMEOUT_S` of the
    /// project's versions.env, else 600.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: Option<u64>,
    /// Seconds a download may receive nothing before it fails (tests shorten it).
    #[arg(long, hide = true, value_name = "SECONDS", default_value_t = 60)]
    pub idle_timeout: u64,
}

impl FetchArgs {
    /// The library request these arguments describe, with the download deadline `deadline`.
    fn request(&self, deadline: Duration) -> FetchRequest {
        let expected = match (&self.sha256, &self.sha256_url) {
            (Some(digest), _) => Expected::Digest(digest.clone()),
            (None, Some(url)) => Expected::DigestUrl(url.clone()),
            (None, None) => unreachable!("clap requires --sha256 or --sha256-url"),
        };
        FetchRequest {
            max_bytes: self.max_bytes,
            unpack: UnpackOptions {
                strip_components: self.strip_components,
                max_unpacked_bytes: self.max_unpacked_bytes,
                max_entries: self.max_entries,
                max_ratio: self.max_ratio,
                ratio_floor: self.ratio_floor,
            },
            timeouts: Timeouts {
                idle: Duration::from_secs(self.idle_timeout),
                ..Timeouts::default()
            },
            deadline,
            ..FetchRequest::new(self.url.clone(), expected, self.into.clone())
        }
    }
}

/// Runs `cell fetch`: exit 0 verified and unpacked, 1 digest mismatch or unsafe archive,
/// 2 anything else (network, HTTP status, disk, caps, arguments).
pub fn run(args: &FetchArgs, cli: &Cli) -> anyhow::Result<Exit> {
    let deadline = match args.timeout {
        Some(s) => Duration::from_secs(s),
        None => project_deadline(cli)?,
    };
    match fetch(&args.request(deadline)) {
        Ok(done) => {
            if !cli.quiet {
                eprintln!(
                    "verified sha256 {} ({} bytes); unpacked {} entries into {}",
                    done.sha256,
                    done.bytes,
                    done.entries,
                    done.into.display()
                );
                if !done.dropped.is_empty() {
                    eprintln!(
                        "--strip-components {}: {}",
                        args.strip_components,
                        cell_schema::escape::terminal(&done.dropped.to_string())
                    );
                }
            }
            if cli.format == Format::Json {
                writeln!(std::io::stdout().lock(), "{}", to_json(&done))?;
            }
            Ok(Exit::Ok)
        }
        Err(err) => {
            // Entry names and digest-file lines come from the download: shown, never obeyed.
            eprintln!("Error: {}", cell_schema::escape::terminal(&err.to_string()));
            Ok(if err.is_integrity() {
                Exit::Gate
            } else {
                Exit::Infra
            })
        }
    }
}

/// `FETCH_TIMEOUT_S` of the project's versions.env, when there is one; the default else.
fn project_deadline(cli: &Cli) -> anyhow::Result<Duration> {
    let path = cli.root.join(cell_model::VERSIONS_ENV);
    if !path.is_file() {
        return Ok(cell_fetch::DEFAULT_DEADLINE);
    }
    let env = cell_model::VersionsEnv::load(&path)?;
    let settings = cell_model::Settings::from_env(&env)?;
    Ok(Duration::from_secs(settings.fetch_timeout_s))
}

fn to_json(done: &Fetched) -> serde_json::Value {
    serde_json::json!({
        "url": done.url,
        "sha256": done.sha256.as_str(),
        "bytes": done.bytes,
        "entries": done.entries,
        "dropped": { "count": done.dropped.count, "first": done.dropped.first },
        "into": done.into.to_string_lossy(),
    })
}

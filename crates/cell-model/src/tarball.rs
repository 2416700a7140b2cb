//! A toolchain installed from a release tarball, resolved for one platform: which URL, which
//! digest, which published checksum file. Keys are looked up as `<KEY>_<OS>_<ARCH>`, then
//! `<KEY>_<ARCH>` on Linux only (the keys written before macOS cells existed are Linux's), then
//! `<KEY>`: a macOS cell without its own key is an error, never the Linux tarball.

use std::collections::BTreeMap;

use cell_schema::Sha256;

use crate::env::VersionsEnv;
use crate::error::TarballError;

/// `install.tarball` of a toolchain, as configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TarballDef {
    /// The `versions.env` key of the asset URL, looked up per platform.
    pub url_key: Option<String>,
    /// The asset URL as a template of `{version}`, `{os}` and `{arch}`, when no key is used.
    pub template: Option<String>,
    /// How the project spells our OS and architecture names (`macos = "darwin"`).
    pub spell: BTreeMap<String, String>,
    /// The `versions.env` key of the pinned SHA-256, looked up per platform.
    pub sha256_key: Option<String>,
    /// The published checksum file's URL, a template that may also use `{url}`.
    pub checksum: Option<String>,
    /// The `versions.env` key of the version, if any.
    pub version_key: Option<String>,
    /// Its value.
    pub version: Option<String>,
    /// The release tag, a template (default `{version}`).
    pub tag: Option<String>,
    /// Leading path components to strip when unpacking.
    pub strip: u32,
    /// Mirror URL prefixes, tried in order before the URL itself.
    pub mirrors: Vec<String>,
}

/// How a digest was established: the schema's own type, so a job records it as is.
pub use cell_schema::Verified as Verification;

/// One platform's tarball: everything an installer needs, with the keys it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TarballSource {
    /// The asset URL.
    pub url: String,
    /// Where to try it, in order: each mirror with the file name appended, then the URL.
    pub urls: Vec<String>,
    /// The asset's file name.
    pub asset: String,
    /// The `versions.env` key the URL came from (absent for a template).
    pub url_key: Option<String>,
    /// The pinned digest, when one is set for this platform.
    pub sha256: Option<Sha256>,
    /// The key it came from.
    pub sha256_key: Option<String>,
    /// The published checksum file, when the project has one.
    pub checksum_url: Option<String>,
    /// The version as pinned.
    pub version: Option<String>,
    /// The release tag.
    pub tag: String,
    /// Leading path components to strip.
    pub strip: u32,
}

impl TarballSource {
    /// How the digest will be established.
    pub fn verification(&self) -> Verification {
        match (&self.sha256, &self.checksum_url) {
            (Some(_), Some(_)) => Verification::Both,
            (None, Some(_)) => Verification::Checksum,
            _ => Verification::Pin,
        }
    }
}

/// The keys a per-platform lookup tries, in order.
pub fn candidates(key: &str, os: &str, arch: &str) -> Vec<String> {
    let (os_up, arch_up) = (os.to_ascii_uppercase(), arch.to_ascii_uppercase());
    let mut keys = vec![format!("{key}_{os_up}_{arch_up}")];
    if os == "linux" {
        keys.push(format!("{key}_{arch_up}"));
    }
    keys.push(key.to_owned());
    keys
}

/// The first of [`candidates`] that `versions.env` sets, with its value.
fn look<'a>(
    env: &'a VersionsEnv,
    key: &str,
    os: &str,
    arch: &str,
) -> Result<(String, &'a str), TarballError> {
    let keys = candidates(key, os, arch);
    keys.iter()
        .find_map(|k| env.get(k).map(|v| (k.clone(), v)))
        .ok_or_else(|| TarballError::MissingKey {
            key: key.to_owned(),
            tried: keys.clone(),
            platform: format!("{os}-{arch}"),
        })
}

/// The URL key's level of the lookup when the digest key found is less specific than it: a
/// platform's own URL with the generic digest is a mismatch waiting to happen at install.
fn less_specific(
    sha_key: &str,
    url_key: Option<&str>,
    sha_base: &str,
    def: &TarballDef,
    os: &str,
    arch: &str,
) -> Option<usize> {
    let (url_key, url_base) = (url_key?, def.url_key.as_deref()?);
    let level = |key: &str, base: &str| candidates(base, os, arch).iter().position(|k| k == key);
    let (u, s) = (level(url_key, url_base)?, level(sha_key, sha_base)?);
    (s > u).then_some(u)
}

/// A template with `{version}`, `{os}`, `{arch}` (spelt the project's way) and `{url}` filled.
fn expand(
    template: &str,
    def: &TarballDef,
    os: &str,
    arch: &str,
    url: Option<&str>,
) -> Result<String, TarballError> {
    let spelt = |name: &str| def.spell.get(name).map_or(name, String::as_str).to_owned();
    let mut out = template
        .replace("{os}", &spelt(os))
        .replace("{arch}", &spelt(arch));
    if out.contains("{version}") {
        let Some(v) = &def.version else {
            return Err(TarballError::Template(format!(
                "`{template}` uses {{version}} but the tarball has no `version` key"
            )));
        };
        out = out.replace("{version}", v);
    }
    if let Some(u) = url {
        out = out.replace("{url}", u);
    }
    if out.contains(['{', '}']) {
        return Err(TarballError::Template(format!(
            "`{template}`: only {{version}}, {{os}}, {{arch}} (and {{url}} in a checksum) may be used"
        )));
    }
    Ok(out)
}

/// The asset's file name: the last path segment, without query or fragment.
pub fn file_name(url: &str) -> &str {
    url.split(['?', '#'])
        .next()
        .unwrap_or_default()
        .rsplit('/')
        .next()
        .unwrap_or_default()
}

/// `def` resolved for one platform.
pub fn resolve(
    env: &VersionsEnv,
    def: &TarballDef,
    os: &str,
    arch: &str,
) -> Result<TarballSource, TarballError> {
    let (url, url_key) = match (&def.url_key, &def.template) {
        (Some(key), _) => {
            let (k, v) = look(env, key, os, arch)?;
            (v.to_owned(), Some(k))
        }
        (None, Some(t)) => (expand(t, def, os, arch, None)?, None),
        (None, None) => {
            return Err(TarballError::Template(
                "set `url` (a versions.env key) or `template`".into(),
            ));
        }
    };
    let (sha256, sha256_key) = match &def.sha256_key {
        Some(key) => match look(env, key, os, arch) {
            Ok((k, _))
                if let Some(at) = less_specific(&k, url_key.as_deref(), key, def, os, arch) =>
            {
                return Err(TarballError::Unpaired {
                    url_key: url_key.unwrap_or_default(),
                    sha256_key: k,
                    want: candidates(key, os, arch)[at].clone(),
                });
            }
            Ok((k, v)) => {
                let d = Sha256::parse(v).map_err(|error| TarballError::BadSha256 {
                    key: k.clone(),
                    error,
                })?;
                (Some(d), Some(k))
            }
            // A published checksum can stand in for a pin missing on this platform.
            Err(_) if def.checksum.is_some() => (None, None),
            Err(e) => return Err(e),
        },
        None => (None, None),
    };
    let checksum_url = def
        .checksum
        .as_deref()
        .map(|t| expand(t, def, os, arch, Some(&url)))
        .transpose()?;
    let asset = file_name(&url).to_owned();
    let mut urls: Vec<String> = def
        .mirrors
        .iter()
        .map(|m| format!("{}/{asset}", m.trim_end_matches('/')))
        .collect();
    urls.push(url.clone());
    let tag = match &def.tag {
        Some(t) => expand(t, def, os, arch, None)?,
        None => def.version.clone().unwrap_or_else(|| asset.clone()),
    };
    Ok(TarballSource {
        url,
        urls,
        asset,
        url_key,
        sha256,
        sha256_key,
        checksum_url,
        version: def.version.clone(),
        tag,
        strip: def.strip,
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn env(text: &str) -> VersionsEnv {
        VersionsEnv::parse(Path::new("versions.env"), text).unwrap()
    }

    fn keyed() -> TarballDef {
        TarballDef {
            url_key: Some("ZIG_URL".into()),
            template: None,
            spell: BTreeMap::new(),
            sha256_key: Some("ZIG_SHA256".into()),
            checksum: None,
            version_key: Some("ZIG_VERSION".into()),
            version: Some("0.16.0".into()),
            tag: None,
            strip: 1,
            mirrors: vec!["https://m.example/zig/".into()],
        }
    }

    const LINUX_ONLY: &str = "ZIG_URL_X86_64=https://z.example/zig-x86_64-linux.tar.xz\nZIG_SHA256_X86_64=70e49664a74374b48b51e6f3fdfbf437f6395d42509050588bd49abe52ba3d00\n";

    #[test]
    fn a_linux_cell_reads_the_arch_key_and_a_macos_cell_never_does() {
        let e = env(LINUX_ONLY);
        let s = resolve(&e, &keyed(), "linux", "x86_64").unwrap();
        assert_eq!(s.url_key.as_deref(), Some("ZIG_URL_X86_64"));
        assert_eq!(s.asset, "zig-x86_64-linux.tar.xz");
        assert_eq!(s.urls[0], "https://m.example/zig/zig-x86_64-linux.tar.xz");
        assert_eq!(s.verification(), Verification::Pin);
        let err = resolve(&e, &keyed(), "macos", "x86_64").unwrap_err();
        assert_eq!(
            err.to_string(),
            "versions.env has none of ZIG_URL_MACOS_X86_64, ZIG_URL for macos-x86_64: add ZIG_URL_MACOS_X86_64=..."
        );
    }

    #[test]
    fn the_os_and_arch_key_comes_first() {
        let e = env(&format!(
            "{LINUX_ONLY}ZIG_URL_MACOS_AARCH64=https://z.example/zig-aarch64-macos.tar.xz\nZIG_SHA256_MACOS_AARCH64=b23d70deaa879b5c2d486ed3316f7eaa53e84acf6fc9cc747de152450d401489\n"
        ));
        let s = resolve(&e, &keyed(), "macos", "aarch64").unwrap();
        assert_eq!(s.sha256_key.as_deref(), Some("ZIG_SHA256_MACOS_AARCH64"));
        assert_eq!(s.tag, "0.16.0");
    }

    #[test]
    fn a_template_is_spelt_the_projects_way_and_its_checksum_follows_the_url() {
        let def = TarballDef {
            url_key: None,
            template: Some("https://go.example/go{version}.{os}-{arch}.tar.gz".into()),
            spell: [("macos", "darwin"), ("aarch64", "arm64")]
                .into_iter()
                .map(|(a, b)| (a.to_owned(), b.to_owned()))
                .collect(),
            sha256_key: None,
            checksum: Some("{url}.sha256".into()),
            tag: Some("go{version}".into()),
            version: Some("1.26.7".into()),
            ..keyed()
        };
        let s = resolve(&env(""), &def, "macos", "aarch64").unwrap();
        assert_eq!(s.url, "https://go.example/go1.26.7.darwin-arm64.tar.gz");
        assert_eq!(
            s.checksum_url.as_deref(),
            Some("https://go.example/go1.26.7.darwin-arm64.tar.gz.sha256")
        );
        assert_eq!(s.tag, "go1.26.7");
        assert_eq!(s.verification(), Verification::Checksum);
    }

    #[test]
    fn a_platforms_own_url_needs_its_own_digest() {
        let e = env(
            "ZIG_URL_MACOS_AARCH64=https://z.example/zig-aarch64-macos.tar.xz\nZIG_SHA256=70e49664a74374b48b51e6f3fdfbf437f6395d42509050588bd49abe52ba3d00\n",
        );
        let err = resolve(&e, &keyed(), "macos", "aarch64").unwrap_err();
        assert_eq!(
            err.to_string(),
            "ZIG_URL_MACOS_AARCH64 has no digest of its own: ZIG_SHA256 is less specific; add ZIG_SHA256_MACOS_AARCH64=..."
        );
    }

    #[test]
    fn an_unknown_placeholder_is_refused() {
        let def = TarballDef {
            url_key: None,
            template: Some("https://x.example/{name}.tar.gz".into()),
            ..keyed()
        };
        let e = resolve(&env(""), &def, "linux", "x86_64").unwrap_err();
        assert!(
            e.to_string().contains("only {version}, {os}, {arch}"),
            "{e}"
        );
    }
}

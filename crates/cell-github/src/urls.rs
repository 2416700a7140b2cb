//! The URLs a response hands the client: the API's origin, the next page of a `Link` header,
//! a redirect's `Location`, and a URL as it may be printed.

use reqwest::Url;

/// A scheme, host and port: what two URLs must share for the token to go to both.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl Origin {
    /// The origin of `url`, `None` if it is not an absolute `http` or `https` URL with a host.
    pub fn of(url: &str) -> Option<Self> {
        let url = Url::parse(url).ok()?;
        if !matches!(url.scheme(), "http" | "https") {
            return None;
        }
        Some(Self {
            scheme: url.scheme().to_owned(),
            host: url.host_str()?.to_owned(),
            port: url.port_or_known_default()?,
        })
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}://{}:{}", self.scheme, self.host, self.port)
    }
}

/// Where a redirect of `url` points, resolved against it; `Err` says why there is none.
pub(crate) fn location(url: &str, location: Option<&str>) -> Result<String, String> {
    let location = location.ok_or("redirect without Location")?;
    let base = Url::parse(url).map_err(|e| e.to_string())?;
    let next = base
        .join(location)
        .map_err(|e| format!("unusable Location: {e}"))?;
    Ok(next.into())
}

/// The `rel="next"` URL of a `Link` header.
pub fn next_link(link: &str) -> Option<String> {
    link.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        params
            .split(';')
            .any(|p| p.trim() == "rel=\"next\"")
            .then(|| {
                url.trim()
                    .trim_start_matches('<')
                    .trim_end_matches('>')
                    .to_owned()
            })
    })
}

/// A blob URL's query carries a signature: never print it.
pub(crate) fn redact_query(url: &str) -> String {
    match url.split_once('?') {
        Some((base, _)) => format!("{base}?…"),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_header() {
        let l = r#"<https://api.github.com/x?page=2&per_page=100>; rel="next", <https://api.github.com/x?page=5>; rel="last""#;
        assert_eq!(
            next_link(l).as_deref(),
            Some("https://api.github.com/x?page=2&per_page=100")
        );
        assert_eq!(next_link(r#"<https://a/x?page=1>; rel="prev""#), None);
    }

    /// octocrab compared hosts alone, so `http://api.github.com` (a scheme downgrade on the
    /// API's host) would have had the token in clear.
    #[test]
    fn a_scheme_or_port_change_on_the_apis_host_is_another_origin() {
        let api = Origin::of("https://api.github.com").unwrap();
        assert_eq!(
            Origin::of("https://api.github.com:443/repos/o/r"),
            Some(api.clone())
        );
        assert_eq!(Origin::of("https://API.github.com/x"), Some(api.clone()));
        for other in [
            "http://api.github.com/repos/o/r",
            "https://api.github.com:8443/repos/o/r",
            "https://api.github.com.evil.example/repos",
            "https://uploads.github.com/repos",
        ] {
            assert_ne!(Origin::of(other).as_ref(), Some(&api), "{other}");
        }
        assert_eq!(Origin::of("ftp://api.github.com/x"), None);
        assert_eq!(Origin::of("/relative"), None);
        assert_eq!(api.to_string(), "https://api.github.com:443");
    }
}

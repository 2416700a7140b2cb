//! The GitHub client against loopback stand-ins for the API and its blob store: the artifact
//! redirect read by our code, the token kept to the API, the outcomes of several downloads,
//! the idle timeout and the deadline, the token refused to any URL off the API's origin.

use std::time::{Duration, Instant};

use cell_fetch::Timeouts;
use cell_github::{Artifact, Github, GithubError, RetryPolicy, Settings};
use cell_schema::RunId;
use cell_testkit::http::{Request, Response, Server};
use cell_testkit::sha256;

const TOKEN: &str = "ghs_libraryTestToken";

fn quick(deadline: Option<Duration>, idle: Duration) -> Settings {
    Settings {
        retry: RetryPolicy {
            tries: 2,
            base: Duration::from_millis(10),
            max_wait: Duration::from_secs(5),
        },
        timeouts: Timeouts {
            idle,
            ..Timeouts::default()
        },
        deadline,
        verbose: false,
    }
}

fn artifact(api: &Server, id: u64, zip: &[u8], digest: Option<String>) -> Artifact {
    Artifact {
        id,
        name: format!("cell-x-a{id}"),
        size_in_bytes: zip.len() as u64,
        archive_download_url: api.url(&format!("/repos/o/r/actions/artifacts/{id}/zip")),
        expired: false,
        digest,
    }
}

#[test]
fn download_all_reads_the_redirect_keeps_the_token_home_and_reports_each_outcome() {
    let zip = b"PK-not-really-a-zip".to_vec();
    let blob_zip = zip.clone();
    let blob = Server::start(move |r: &Request| {
        if r.headers.contains_key("authorization") {
            return Response::status(400);
        }
        Response::ok(blob_zip.clone())
    });
    let blob_base = blob.base();
    let api = Server::start(move |r: &Request| {
        if r.header("authorization") != Some(&format!("Bearer {TOKEN}")) {
            return Response::status(401);
        }
        match r.path.as_str() {
            "/repos/o/r/actions/artifacts/2/zip" => Response::status(410),
            p => Response::redirect(&format!("{blob_base}/blob{p}?sig=secret")),
        }
    });
    let good = Some(format!("sha256:{}", sha256(&zip)));
    let bad = Some(format!("sha256:{}", "0".repeat(64)));
    let arts = [
        artifact(&api, 1, &zip, good.clone()),
        artifact(&api, 2, &zip, good),
        artifact(&api, 3, &zip, bad),
        artifact(&api, 4, &zip, None),
    ];
    let github = Github::with_settings(
        &api.base(),
        Some(TOKEN.into()),
        quick(None, Duration::from_secs(5)),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let got = github.download_all(&arts, dir.path(), 2);
    let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["cell-x-a1", "cell-x-a2", "cell-x-a3", "cell-x-a4"]);
    assert_eq!(got[0].1.as_ref().unwrap().as_str(), sha256(&zip).as_str());
    assert!(matches!(got[1].1, Err(GithubError::Expired { .. })));
    assert!(matches!(got[2].1, Err(GithubError::Digest { .. })));
    assert!(got[3].1.is_ok());
    assert_eq!(std::fs::read(dir.path().join("1.zip")).unwrap(), zip);
    assert_eq!(blob.requests().len(), 3, "one blob fetch per redirect");
    assert!(
        blob.requests()
            .iter()
            .all(|r| r.header("authorization").is_none())
    );
}

#[test]
fn a_request_that_stays_silent_hits_the_idle_timeout_and_is_retried() {
    let api = Server::start(|_| Response::status(200).delayed(Duration::from_secs(30)));
    let github = Github::with_settings(
        &api.base(),
        Some(TOKEN.into()),
        quick(None, Duration::from_millis(300)),
    )
    .unwrap();
    let started = Instant::now();
    let err = github.run("o/r", RunId(7)).unwrap_err();
    assert!(
        matches!(&err, GithubError::Transport { url, .. } if url.ends_with("/actions/runs/7")),
        "{err}"
    );
    assert!(!err.to_string().contains(TOKEN));
    assert_eq!(api.hits("/repos/o/r/actions/runs/7"), 2, "tried twice");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn the_deadline_ends_a_stalled_body_naming_the_request() {
    let api = Server::start(|_| Response::ok("{\"jobs\": [").stalled(3));
    let github = Github::with_settings(
        &api.base(),
        None,
        quick(Some(Duration::from_millis(800)), Duration::from_mins(1)),
    )
    .unwrap();
    let started = Instant::now();
    let err = github.jobs("o/r", RunId(7)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "GET {}/repos/o/r/actions/runs/7/jobs?per_page=100: no answer within the 0.8 s \
             deadline of cell collect",
            api.base()
        )
    );
    assert!(!err.is_integrity());
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

fn jobs_page(link: &str) -> Response {
    Response::json(200, &serde_json::json!({"total_count": 1, "jobs": []})).header("link", link)
}

/// octocrab attached the token by host alone: a `Link` to the API's host under another
/// scheme or port would have carried it there (in clear, for `http://`).
#[test]
fn a_link_to_another_port_is_refused_by_name_and_never_gets_the_token() {
    let other = Server::start(|_| Response::json(200, &serde_json::json!({"jobs": []})));
    let next = other.url("/repos/o/r/actions/runs/7/jobs?per_page=100&page=2");
    let link = format!("<{next}>; rel=\"next\"");
    let api = Server::start(move |_| jobs_page(&link));
    let github = Github::with_settings(
        &api.base(),
        Some(TOKEN.into()),
        quick(None, Duration::from_secs(5)),
    )
    .unwrap();
    let err = github.jobs("o/r", RunId(7)).unwrap_err();
    assert!(matches!(err, GithubError::ForeignUrl { .. }), "{err}");
    let shown = next.split('?').next().unwrap();
    assert!(
        err.to_string()
            .starts_with(&format!("GET {shown}?…: refused")),
        "{err}"
    );
    assert!(!err.to_string().contains(TOKEN));
    assert!(
        other.requests().is_empty(),
        "nothing was sent to the other origin"
    );
    assert_eq!(api.requests().len(), 1);
}

/// The same port under another host name is another origin too (the scheme case is the
/// unit test of `Origin`, and the `https` one below).
#[test]
fn a_link_to_the_apis_port_under_another_host_name_is_refused() {
    let api = Server::new();
    let link = format!(
        "<http://localhost:{}/repos/o/r/actions/runs/7/jobs?page=2>; rel=\"next\"",
        api.port()
    );
    api.handle(move |_| jobs_page(&link));
    let github = Github::with_settings(
        &api.base(),
        Some(TOKEN.into()),
        quick(None, Duration::from_secs(5)),
    )
    .unwrap();
    let err = github.jobs("o/r", RunId(7)).unwrap_err();
    assert!(
        err.to_string().contains(&format!(
            "http://localhost:{}/repos/o/r/actions/runs/7/jobs?…: refused: not on the API's origin http://127.0.0.1:{}",
            api.port(),
            api.port()
        )),
        "{err}"
    );
    assert_eq!(api.requests().len(), 1, "only the first page was asked for");
}

/// An `archive_download_url` from a payload is sent the token as well: on an `https` API, an
/// `http://` one on the API's own host is refused before a byte is sent.
#[test]
fn an_http_download_url_under_an_https_api_is_refused_before_anything_is_sent() {
    let github = Github::with_settings(
        "https://api.github.com",
        Some(TOKEN.into()),
        quick(None, Duration::from_secs(5)),
    )
    .unwrap();
    let a = Artifact {
        id: 1,
        name: "cell-x-a1".into(),
        size_in_bytes: 10,
        archive_download_url: "http://api.github.com/repos/o/r/actions/artifacts/1/zip".into(),
        expired: false,
        digest: None,
    };
    let dir = tempfile::tempdir().unwrap();
    let err = github.download(&a, &dir.path().join("1.zip")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "GET http://api.github.com/repos/o/r/actions/artifacts/1/zip: refused: not on the API's \
         origin https://api.github.com:443 (the scheme, host and port must be the API's: the \
         token goes nowhere else)"
    );
}

/// Same-origin `Link`s are followed, each page with the token.
#[test]
fn same_origin_pages_are_followed_with_the_token() {
    let rest = cell_testkit::github::Rest::start(TOKEN);
    let github = Github::with_settings(
        &rest.base(),
        Some(TOKEN.into()),
        quick(None, Duration::from_secs(5)),
    )
    .unwrap();
    for i in 0..150 {
        github
            .create_issue_comment("o/r", 3, &format!("comment {i}"))
            .unwrap();
    }
    let all = github.list_issue_comments("o/r", 3).unwrap();
    assert_eq!(all.len(), 150);
    assert_eq!(all[149].body, "comment 149");
    let gets: Vec<_> = rest
        .server
        .requests()
        .into_iter()
        .filter(|r| r.method == "GET")
        .collect();
    assert_eq!(gets.len(), 2, "two pages of 100");
    assert!(gets[1].path.contains("page=2"), "{}", gets[1].path);
    assert!(
        gets.iter()
            .all(|r| r.header("authorization") == Some(&format!("Bearer {TOKEN}")))
    );
}

/// The download cap was `size * 2 + 1 GiB`: a stated size of 2^63 or more overflowed it (a
/// panic in a debug build), and a huge stated size left the write effectively unbounded.
#[test]
fn an_artifact_stated_over_the_ceiling_is_refused_by_name_before_a_byte_is_written() {
    let api = Server::start(|_| Response::ok(b"PK".to_vec()));
    let github = Github::with_settings(
        &api.base(),
        Some(TOKEN.into()),
        quick(None, Duration::from_secs(5)),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    for size in [u64::MAX, 1 << 63, cell_github::MAX_ARTIFACT_BYTES + 1] {
        let mut a = artifact(&api, 3, b"", None);
        a.size_in_bytes = size;
        let to = dir.path().join("3.zip");
        let err = github.download(&a, &to).unwrap_err();
        assert!(matches!(err, GithubError::TooLarge { .. }), "{err}");
        assert!(
            err.to_string().starts_with(&format!(
                "artifact `cell-x-a3` is {size} bytes, over the 4 GiB a download may write"
            )),
            "{err}"
        );
        assert!(!to.exists(), "nothing written for {size}");
        let all = github.download_all([&a], dir.path(), 4);
        assert!(matches!(all[0].1, Err(GithubError::TooLarge { .. })));
    }
    assert!(api.requests().is_empty(), "nothing was asked for");
    let fine = artifact(&api, 4, b"PK", None);
    github.download(&fine, &dir.path().join("4.zip")).unwrap();
}

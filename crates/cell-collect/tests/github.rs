//! The GitHub client against loopback stand-ins for the API and its blob store: the artifact
//! redirect read by our code, the token kept to the API, the outcomes of several downloads,
//! the idle timeout and the deadline.

use std::time::{Duration, Instant};

use cell_collect::github::{Artifact, Github, GithubError, RetryPolicy, Settings};
use cell_fetch::Timeouts;
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

//! The writes against the loopback stand-in of GitHub's write endpoints: what lands there, and
//! which failures are tried again (GET, PATCH, PUT; a POST only when it surely never arrived).

use std::time::Duration;

use cell_fetch::Timeouts;
use cell_github::{
    ACTIONS_BOT, CheckOutput, CheckRunUpdate, Github, GithubError, NewCheckRun, RetryPolicy,
    Settings,
};
use cell_testkit::github::{Rest, Writes};
use cell_testkit::http::{Response, Server};
use serde_json::json;

const TOKEN: &str = "ghs_writeTestToken";

fn quick(idle: Duration) -> Settings {
    Settings {
        retry: RetryPolicy {
            tries: 3,
            base: Duration::from_millis(10),
            max_wait: Duration::from_secs(5),
        },
        timeouts: Timeouts {
            idle,
            ..Timeouts::default()
        },
        deadline: None,
        verbose: false,
    }
}

fn client(base: &str) -> Github {
    Github::with_settings(base, Some(TOKEN.into()), quick(Duration::from_secs(10))).unwrap()
}

fn posts(server: &Server) -> usize {
    server
        .writes()
        .iter()
        .filter(|w| w.method == "POST")
        .count()
}

#[test]
fn a_comment_is_created_then_updated_in_place_by_its_marker() {
    let rest = Rest::start(TOKEN);
    let github = client(&rest.base());
    let marker = "<!-- cell-gate -->";
    let first = github
        .upsert_issue_comment(
            "o/r",
            5,
            ACTIONS_BOT,
            marker,
            &format!("{marker}\nok: 3 cells"),
        )
        .unwrap();
    let second = github
        .upsert_issue_comment(
            "o/r",
            5,
            ACTIONS_BOT,
            marker,
            &format!("{marker}\nfailed: 1 cell"),
        )
        .unwrap();
    assert_eq!(first.id, second.id);
    let held = rest.writes.comments_on("o/r", 5);
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(held[0].body, format!("{marker}\nfailed: 1 cell"));
    let writes = rest.server.writes();
    let methods: Vec<&str> = writes.iter().map(|w| w.method.as_str()).collect();
    assert_eq!(methods, ["POST", "PATCH"]);
    assert_eq!(writes[0].path, "/repos/o/r/issues/5/comments");
    assert_eq!(
        writes[1].path,
        format!("/repos/o/r/issues/comments/{}", first.id)
    );
    assert_eq!(
        writes[1].json,
        Some(json!({"body": format!("{marker}\nfailed: 1 cell")}))
    );
    assert!(
        writes
            .iter()
            .all(|w| w.authorization.as_deref() == Some(&format!("Bearer {TOKEN}")))
    );
    let err = github
        .upsert_issue_comment("o/r", 5, ACTIONS_BOT, marker, "no marker")
        .unwrap_err();
    assert!(
        err.to_string().contains("does not contain its marker"),
        "{err}"
    );
}

/// The upsert took the first comment of any author holding the marker: anyone able to
/// comment could plant the marker and have the gate's report written into (or over) their
/// comment. Only the token's own comments are ours.
#[test]
fn a_strangers_comment_with_the_marker_is_left_alone_and_ours_is_made_then_updated() {
    let rest = Rest::start(TOKEN);
    let github = client(&rest.base());
    let marker = "<!-- cell-gate -->";
    rest.writes.set_author("mallory");
    let planted = github
        .create_issue_comment("o/r", 5, &format!("{marker} see https://evil.example"))
        .unwrap();
    assert!(planted.is_by("mallory"), "{planted:?}");
    rest.writes.set_author(ACTIONS_BOT);
    let ours = github
        .upsert_issue_comment(
            "o/r",
            5,
            ACTIONS_BOT,
            marker,
            &format!("{marker}\nok: 3 cells"),
        )
        .unwrap();
    assert_ne!(ours.id, planted.id, "a comment of our own was created");
    assert!(ours.is_by(ACTIONS_BOT), "{ours:?}");
    let again = github
        .upsert_issue_comment(
            "o/r",
            5,
            ACTIONS_BOT,
            marker,
            &format!("{marker}\nfailed: 1"),
        )
        .unwrap();
    assert_eq!(again.id, ours.id, "ours updated in place");
    let held = rest.writes.comments_on("o/r", 5);
    assert_eq!(held.len(), 2, "{held:?}");
    assert_eq!(held[0].body, format!("{marker} see https://evil.example"));
    assert_eq!(held[0].author, "mallory");
    assert_eq!(held[1].body, format!("{marker}\nfailed: 1"));
    let patched: Vec<String> = rest
        .server
        .writes()
        .iter()
        .filter(|w| w.method == "PATCH")
        .map(|w| w.path.clone())
        .collect();
    assert_eq!(patched, [format!("/repos/o/r/issues/comments/{}", ours.id)]);
}

/// A POST retried after a lost answer would post the comment twice.
#[test]
fn a_post_whose_connection_is_dropped_is_not_repeated_and_says_the_write_may_have_happened() {
    let rest = Rest::start(TOKEN);
    rest.server
        .once("/repos/o/r/issues/5/comments", Response::hang_up());
    let err = client(&rest.base())
        .create_issue_comment("o/r", 5, "hello")
        .unwrap_err();
    assert!(err.may_have_written(), "{err}");
    assert!(
        err.to_string()
            .ends_with("the write may have happened: read it back before trying again"),
        "{err}"
    );
    assert_eq!(posts(&rest.server), 1, "sent once");
}

#[test]
fn a_post_answered_502_is_not_repeated() {
    let rest = Rest::start(TOKEN);
    rest.server
        .once("/repos/o/r/check-runs", Response::status(502));
    let run = NewCheckRun {
        name: "cell".into(),
        head_sha: "a".repeat(40),
        status: None,
        conclusion: None,
        details_url: None,
        external_id: None,
        output: None,
    };
    let err = client(&rest.base())
        .create_check_run("o/r", &run)
        .unwrap_err();
    assert!(
        matches!(&err, GithubError::MaybeWritten { msg, .. } if msg == "HTTP 502"),
        "{err}"
    );
    assert_eq!(posts(&rest.server), 1);
}

/// The comment landed but its answer never came: the upsert finds it by its marker and does
/// not post it again.
#[test]
fn a_comment_whose_answer_was_lost_is_found_by_its_marker_not_doubled() {
    let server = Server::new();
    let writes = std::sync::Arc::new(Writes::default());
    let (held, base) = (std::sync::Arc::clone(&writes), server.base());
    let answered = std::sync::atomic::AtomicBool::new(false);
    server.handle(move |req| {
        let r = held.answer(req, &base).unwrap_or_else(Response::not_found);
        // The first POST is stored, then its answer is late past the idle timeout.
        if req.method == "POST" && !answered.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return r.delayed(Duration::from_secs(3));
        }
        r
    });
    let github = Github::with_settings(
        &server.base(),
        Some(TOKEN.into()),
        quick(Duration::from_millis(300)),
    )
    .unwrap();
    let c = github
        .upsert_issue_comment("o/r", 9, ACTIONS_BOT, "<!-- m -->", "<!-- m --> body")
        .unwrap();
    assert_eq!(c.body, "<!-- m --> body");
    assert_eq!(writes.comments_on("o/r", 9).len(), 1);
    assert_eq!(posts(&server), 1, "not posted again");
    let gets = server
        .requests()
        .iter()
        .filter(|r| r.method == "GET")
        .count();
    assert_eq!(
        gets, 2,
        "listed before the post and again after its unclear end"
    );
}

/// A rate limit refuses a POST before it is acted on: waiting it out and sending again is
/// safe.
#[test]
fn a_post_refused_by_a_rate_limit_is_sent_again_after_the_wait() {
    let rest = Rest::start(TOKEN);
    rest.server
        .once("/repos/o/r/issues/5/comments", Response::rate_limited(0));
    let c = client(&rest.base())
        .create_issue_comment("o/r", 5, "after the wait")
        .unwrap();
    assert_eq!(c.body, "after the wait");
    assert_eq!(posts(&rest.server), 2);
    assert_eq!(rest.writes.comments().len(), 1);
}

/// A connection never made carried no request, so a POST may go again: the error after the
/// tries is a transport one, not "may have happened".
#[test]
fn a_post_to_a_port_nobody_listens_on_is_tried_again_and_fails_as_transport() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let err = client(&format!("http://127.0.0.1:{port}"))
        .create_issue_comment("o/r", 5, "x")
        .unwrap_err();
    assert!(matches!(err, GithubError::Transport { .. }), "{err}");
    assert!(
        err.to_string().starts_with("POST http://127.0.0.1:"),
        "{err}"
    );
}

#[test]
fn a_patch_answered_502_is_retried() {
    let rest = Rest::start(TOKEN);
    let github = client(&rest.base());
    let c = github.create_issue_comment("o/r", 5, "one").unwrap();
    rest.server
        .once("/repos/o/r/issues/comments/", Response::status(502));
    let c2 = github.update_issue_comment("o/r", c.id, "two").unwrap();
    assert_eq!(c2.body, "two");
    let patches = rest
        .server
        .writes()
        .iter()
        .filter(|w| w.method == "PATCH")
        .count();
    assert_eq!(patches, 2);
}

#[test]
fn a_check_run_is_created_and_completed() {
    let rest = Rest::start(TOKEN);
    let github = client(&rest.base());
    let made = github
        .create_check_run(
            "o/r",
            &NewCheckRun {
                name: "cell gate".into(),
                head_sha: "b".repeat(40),
                status: Some("in_progress".into()),
                conclusion: None,
                details_url: None,
                external_id: Some("run-42".into()),
                output: None,
            },
        )
        .unwrap();
    assert_eq!(made.status, "in_progress");
    let done = github
        .update_check_run(
            "o/r",
            made.id,
            &CheckRunUpdate {
                status: Some("completed".into()),
                conclusion: Some("success".into()),
                output: Some(CheckOutput {
                    title: "3 cells ok".into(),
                    summary: "all within bounds".into(),
                    text: None,
                }),
            },
        )
        .unwrap();
    assert_eq!(done.conclusion.as_deref(), Some("success"));
    assert_eq!(done.external_id.as_deref(), Some("run-42"));
    let writes = rest.server.writes();
    assert_eq!(
        writes[0].json,
        Some(
            json!({"name": "cell gate", "head_sha": "b".repeat(40), "status": "in_progress", "external_id": "run-42"})
        ),
        "fields left unset are not sent"
    );
    let held = rest.writes.check_runs();
    assert_eq!(held[0].fields["output"]["title"], "3 cells ok");
}

/// A PUT answered 204 reads as `()`; a route for PUT does not answer a GET.
#[test]
fn a_put_with_an_empty_answer_reads_as_unit_and_its_route_refuses_a_get() {
    let server = Server::routes([("PUT /repos/o/r/thing", Response::status(204))]);
    let github = client(&server.base());
    let () = github
        .put("/repos/o/r/thing", &json!({"on": true}))
        .unwrap();
    let err = github
        .get::<serde_json::Value>("/repos/o/r/thing")
        .unwrap_err();
    assert!(
        err.to_string().ends_with("/repos/o/r/thing: HTTP 405"),
        "{err}"
    );
    assert_eq!(server.writes()[0].json, Some(json!({"on": true})));
}

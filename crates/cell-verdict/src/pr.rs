//! A pull request's verdict in one word, and what the reporter does with it: the check run's
//! conclusion and whether a comment is posted.

use cell_schema::{GateReport, GateStatus};

/// The pull request's headline: FAIL when the gate would exit 1 (a FAIL verdict, time, code
/// or same-job, or a failure: a wrong answer, the tooth, a missing row) or a job's result
/// could not be used; else INCONCLUSIVE when any verdict is; else PASS.
pub fn headline(report: &GateReport, unusable_jobs: usize) -> GateStatus {
    let s = &report.summary;
    if report.exit != 0 || unusable_jobs > 0 {
        GateStatus::Fail
    } else if s.inconclusive + s.code_inconclusive + s.same_job_inconclusive > 0 {
        GateStatus::Inconclusive
    } else {
        GateStatus::Pass
    }
}

/// The check run's conclusion for a headline: `success`, `failure` or `neutral`.
pub fn check_conclusion(headline: GateStatus) -> &'static str {
    match headline {
        GateStatus::Pass => "success",
        GateStatus::Fail => "failure",
        GateStatus::Inconclusive => "neutral",
    }
}

/// When the reporter writes its comment: `[workflow.pull_requests] comment`, or the flag.
pub use cell_model::CommentPolicy;

/// Whether to write the comment, given the policy, the headline and whether the pull request
/// already has one of ours: a comment that exists is always brought up to date, so an old FAIL
/// never stays beside a PASS.
pub fn writes_comment(policy: CommentPolicy, headline: GateStatus, exists: bool) -> bool {
    exists
        || match policy {
            CommentPolicy::Always => true,
            CommentPolicy::OnChange => headline != GateStatus::Pass,
            CommentPolicy::OnFail => headline == GateStatus::Fail,
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_comment_is_always_updated() {
        use GateStatus::{Fail, Inconclusive, Pass};
        for p in [
            CommentPolicy::Always,
            CommentPolicy::OnChange,
            CommentPolicy::OnFail,
        ] {
            for h in [Pass, Inconclusive, Fail] {
                assert!(writes_comment(p, h, true));
            }
        }
        assert!(writes_comment(CommentPolicy::Always, Pass, false));
        assert!(!writes_comment(CommentPolicy::OnChange, Pass, false));
        assert!(writes_comment(CommentPolicy::OnChange, Inconclusive, false));
        assert!(!writes_comment(CommentPolicy::OnFail, Inconclusive, false));
        assert!(writes_comment(CommentPolicy::OnFail, Fail, false));
        assert_eq!(check_conclusion(Inconclusive), "neutral");
    }
}

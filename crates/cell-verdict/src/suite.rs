//! The gate of the http and soak suites: server failures and leaks are failures; median
//! req/s is judged three-way against the newest run that measured the same server and tool.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use cell_schema::{
    CellHttpServer, CellResult, CellSoakServer, Clock, Combo, ConcurrencyModel, Drift, GateRatio,
    GateStatus, GateVerdict, HttpToolResult, Phase, RowName, ServerName, ShapeName, SoakConfig,
    WorkloadName,
};

use crate::GateConfig;
use crate::rules::{band, three_way};

/// What the suites add to one cell's gate.
#[derive(Debug, Default)]
pub struct SuiteFindings {
    /// Failures (exit 1).
    pub failures: Vec<String>,
    /// Notices: printed and summarised, never a failure.
    pub notices: Vec<String>,
    /// Per server and load tool.
    pub verdicts: Vec<GateVerdict>,
}

/// Gates the suites of `cell` against `history` (older runs of the same cell, oldest first,
/// each with its name). `tolerance` is `HTTP_TOLERANCE`; `soak` is the repository's `[soak]`
/// (its drift rule and `fail_on_drift` are applied again), `None` to judge with what each
/// job recorded.
pub fn gate_suites(
    cell: &CellResult,
    history: &[(&str, &CellResult)],
    tolerance: f64,
    soak: Option<&SoakConfig>,
) -> SuiteFindings {
    gate_with(cell, history, tolerance, soak, None)
}

/// [`gate_suites`] with the configuration's thresholds and rules, each http baseline
/// recomputed from its runs when it is found (a stated figure of it that disagrees a notice).
pub(crate) fn gate_suites_of(
    cell: &CellResult,
    history: &[(&str, &CellResult)],
    config: &GateConfig,
) -> SuiteFindings {
    gate_with(
        cell,
        history,
        config.http_tolerance,
        config.soak.as_ref(),
        Some(config),
    )
}

fn gate_with(
    cell: &CellResult,
    history: &[(&str, &CellResult)],
    tolerance: f64,
    soak: Option<&SoakConfig>,
    recompute: Option<&GateConfig>,
) -> SuiteFindings {
    let mut f = SuiteFindings::default();
    for (name, s) in &cell.http {
        if let Some(e) = &s.result.error {
            f.failures
                .push(format!("http server {name} (job {}): {e}", s.job));
            continue;
        }
        for w in s.result.workloads.values() {
            if let Some(e) = &w.error {
                f.failures
                    .push(format!("http server {name} (job {}): {e}", s.job));
            }
        }
    }
    if let Some(config) = recompute {
        for (name, s) in &cell.http {
            unmeasured_failures(&mut f, name, s, config);
        }
    }
    for (name, s, combo, t) in http_combos(cell) {
        gate_http_tool(
            &mut f,
            cell,
            history,
            (name.as_str(), s),
            (&combo, t),
            (tolerance, recompute),
        );
    }
    for (name, s) in &cell.soak {
        soak_findings(&mut f, name.as_str(), s, soak);
    }
    f
}

/// What a job measured must be all its session asked of the server, less what the config
/// says it does not serve and what its model's rule leaves out: a job that claims more left
/// out hides measurements, one whose results are missing hides a failure. A recorded model
/// other than the config's is a notice (it only groups the tables). A server that failed is
/// a failure already; results written before workloads existed are not checked.
fn unmeasured_failures(
    f: &mut SuiteFindings,
    name: &ServerName,
    s: &CellHttpServer,
    config: &GateConfig,
) {
    let r = &s.result;
    if r.error.is_some() || !r.tools.is_empty() || s.settings.workloads.is_empty() {
        return;
    }
    let at = format!("http server {name} (job {})", s.job);
    let terms = config.http_servers.get(name);
    if terms.is_none() {
        f.notices.push(format!(
            "{at}: not a server of cell/cell.toml: what it left out is checked against its own record"
        ));
    }
    let model = terms.map_or(r.model, |t| t.model);
    if let Some(t) = terms.filter(|t| t.model != r.model) {
        let name_of = |m: Option<ConcurrencyModel>| m.map_or("none", ConcurrencyModel::as_str);
        f.notices.push(format!(
            "{at}: recorded model {}, its config says {}",
            name_of(r.model),
            name_of(t.model)
        ));
    }
    let session: BTreeSet<&str> = s
        .settings
        .workloads
        .keys()
        .map(WorkloadName::as_str)
        .collect();
    let not_served: BTreeSet<&str> = r.not_served.iter().map(WorkloadName::as_str).collect();
    let expected = terms.map_or_else(
        || not_served.clone(),
        |t| {
            let served: BTreeSet<&str> = t.workloads.iter().map(WorkloadName::as_str).collect();
            session.difference(&served).copied().collect()
        },
    );
    let mismatch = |what: &str, got: &BTreeSet<&str>, want: &BTreeSet<&str>| {
        let list = |x: &BTreeSet<&str>| x.iter().copied().collect::<Vec<_>>().join(", ");
        format!(
            "{at}: recorded {what} [{}], but [{}] by its config and model",
            list(got),
            list(want)
        )
    };
    if not_served != expected {
        f.failures
            .push(mismatch("as not serving", &not_served, &expected));
    }
    let left_out: BTreeSet<&str> = s
        .settings
        .shapes
        .iter()
        .filter(|x| model.and_then(|m| m.left_out_of(x.connections)).is_some())
        .map(|x| x.name.as_str())
        .collect();
    let recorded: BTreeSet<&str> = r.shapes_left_out.keys().map(ShapeName::as_str).collect();
    if recorded != left_out {
        f.failures
            .push(mismatch("shapes left out", &recorded, &left_out));
    }
    let measured: Vec<&ShapeName> = s
        .settings
        .shapes
        .iter()
        .filter(|x| !left_out.contains(x.name.as_str()))
        .map(|x| &x.name)
        .collect();
    // Left out of every shape, the server answered nothing: no workload has a result.
    if measured.is_empty() {
        return;
    }
    for w in session.difference(&not_served) {
        let Some(wr) = r.workloads.get(*w) else {
            f.failures
                .push(format!("{at}: workload {w} of the session has no result"));
            continue;
        };
        if wr.error.is_some() {
            continue;
        }
        for shape in &measured {
            for tool in &s.settings.tools {
                if wr.shapes.get(*shape).and_then(|m| m.get(tool)).is_none() {
                    f.failures
                        .push(format!("{at}: {w} over {shape} under {tool} has no result"));
                }
            }
        }
    }
}

/// One server's combination (workload, shape, tool) against the newest run that measured
/// the same.
fn gate_http_tool(
    f: &mut SuiteFindings,
    cell: &CellResult,
    history: &[(&str, &CellResult)],
    (name, server): (&str, &CellHttpServer),
    (combo, t): (&Combo, &HttpToolResult),
    (tolerance, recompute): (f64, Option<&GateConfig>),
) {
    let id = &cell.cell.id;
    let (base, unlike) = match http_baseline(history, name, server, combo) {
        HttpBaseline::Found { run, server, old } => (Some((run, server, old)), None),
        HttpBaseline::None { unlike } => (None, unlike),
    };
    let Some((base_name, b, old)) = base else {
        let why = unlike.map_or_else(String::new, |(run, why)| {
            format!(" (none measured as this one: {run} was {why})")
        });
        f.notices.push(format!(
            "http server {name}, {combo}: first run, baseline recorded ({:.0} req/s){why}",
            t.rps
        ));
        return;
    };
    // The baseline too is judged by its runs; a stated figure of it that disagrees is named.
    let again = recompute.map(|c| {
        let at = format!("baseline {base_name}: http server {name}, {combo}");
        crate::recompute::suites::baseline_tool(&at, old, c)
    });
    if let Some(r) = &again {
        f.notices.extend(
            crate::recompute::summarize(&r.disagreements)
                .into_iter()
                .map(|d| format!("{d} (judged on its runs)")),
        );
        f.notices.extend(r.notes.iter().cloned());
    }
    let old = again.as_ref().map_or(old, |r| &r.value);
    let (lo, hi) = band(old.rps, tolerance);
    let unclean = |x: &HttpToolResult| x.clean_runs == 0;
    let noisy = if unclean(t) {
        Some("every run of this one was contaminated")
    } else if unclean(old) {
        Some("every run of the baseline was contaminated")
    } else {
        None
    };
    let mut status = if noisy.is_some() {
        GateStatus::Inconclusive
    } else {
        three_way(old.rps, t.rps_range[0], t.rps_range[1], tolerance)
    };
    // docs/http-and-soak.md: HTTP variants are judged in one interleaved session, never
    // only against a stored number (Go alone moved 37k ↔ 70k req/s with no change), so a
    // stored baseline can say PASS but not FAIL.
    let stored = (status == GateStatus::Fail).then(|| {
        status = GateStatus::Inconclusive;
        "outside the band against a stored baseline, which alone cannot fail an HTTP run: compare the two in one session (cell local --suite http) to decide"
    });
    let mut message = format!(
        "{} {id} http {name}, {combo}: {:.0} req/s (runs {:.0}–{:.0}) vs {:.0} req/s (runs {:.0}–{:.0}) in {base_name}; band {lo:.0}–{hi:.0}",
        status.word(),
        t.rps,
        t.rps_range[0],
        t.rps_range[1],
        old.rps,
        old.rps_range[0],
        old.rps_range[1],
    );
    for n in noisy.into_iter().chain(stored) {
        let _ = write!(message, "; {n}");
    }
    // p99 is read only for changes of 2× or more (its run-to-run spread is that wide).
    if old.p99_ms > 0.0 && t.p99_ms > 0.0 {
        let r = t.p99_ms / old.p99_ms;
        if !(0.5..=2.0).contains(&r) {
            f.notices.push(format!(
                "http server {name}, {combo}: p99 {:.2} ms vs {:.2} ms in {base_name} ({r:.1}×)",
                t.p99_ms, old.p99_ms
            ));
        }
    }
    machine_notice(f, name, server, b, base_name);
    f.verdicts.push(GateVerdict {
        row: RowName::from(format!("http-{name}").as_str()),
        phase: Phase::from(format!("{}.{}.{}", combo.workload, combo.shape, combo.tool).as_str()),
        clock: Clock::Wall,
        status,
        old: GateRatio {
            median: old.rps,
            lo: old.rps_range[0],
            hi: old.rps_range[1],
        },
        new: GateRatio {
            median: t.rps,
            lo: t.rps_range[0],
            hi: t.rps_range[1],
        },
        band: [lo, hi],
        message,
        against_imported_point: false,
        change: None,
    });
}

/// The baseline of one combination of a server, or why there is none.
pub(crate) enum HttpBaseline<'a> {
    /// The newest run that measured it as this run did.
    Found {
        /// The run's name.
        run: &'a str,
        /// The server as that run measured it.
        server: &'a CellHttpServer,
        /// Its figures for the combination.
        old: &'a HttpToolResult,
    },
    /// No run measured it as this run did; `unlike` is the newest run that measured it
    /// otherwise, with how.
    None {
        /// That run and how it measured.
        unlike: Option<(String, String)>,
    },
}

/// The one rule of an http baseline: among `history` (older runs of the cell, oldest first)
/// the newest run whose server `name` did not fail and measured `combo` in a comparable way
/// ([`incomparable`]). The verdict reads it, and so does the walk of the history that stops
/// once every combination has one.
pub(crate) fn http_baseline<'a>(
    history: &[(&'a str, &'a CellResult)],
    name: &str,
    server: &CellHttpServer,
    combo: &Combo,
) -> HttpBaseline<'a> {
    let mut unlike: Option<(String, String)> = None;
    for (run, c) in history.iter().rev() {
        let Some(b) = c.http.get(name) else {
            continue;
        };
        if b.result.error.is_some() {
            continue;
        }
        let Some(old) = b.result.get(&b.settings, combo) else {
            continue;
        };
        match incomparable(server, b, combo) {
            Some(why) => {
                unlike.get_or_insert(((*run).to_owned(), why));
            }
            None => {
                return HttpBaseline::Found {
                    run,
                    server: b,
                    old,
                };
            }
        }
    }
    HttpBaseline::None { unlike }
}

/// One combination a server of the judged cell measured, with the server and its figures.
pub(crate) type HttpCombo<'a> = (
    &'a ServerName,
    &'a CellHttpServer,
    Combo,
    &'a HttpToolResult,
);

/// Every combination of every server of `cell` the suite gate compares with a stored run:
/// each server that did not fail, with each combination it measured.
pub(crate) fn http_combos(cell: &CellResult) -> Vec<HttpCombo<'_>> {
    cell.http
        .iter()
        .filter(|(_, s)| s.result.error.is_none())
        .flat_map(|(name, s)| {
            s.result
                .measured(&s.settings)
                .into_iter()
                .map(move |(combo, t)| (name, s, combo, t))
        })
        .collect()
}

/// Why a stored run of a combination is no baseline for this one, when it is not: another
/// mode, another shape under the same name (connections, keep-alive, threads) or other
/// CPU sets measure something else.
fn incomparable(now: &CellHttpServer, base: &CellHttpServer, combo: &Combo) -> Option<String> {
    let (a, b) = (&now.settings, &base.settings);
    if a.mode != b.mode {
        return Some(format!("measured {}", b.mode.name()));
    }
    let shape = |s: &cell_schema::HttpSettings| {
        s.shape(&combo.shape)
            .map_or((s.connections, s.keep_alive, s.threads), |x| {
                (x.connections, x.keep_alive, x.threads)
            })
    };
    let (sa, sb) = (shape(a), shape(b));
    if sa != sb {
        // The tools that take a thread count, as the load tool table says.
        let threaded: Vec<&str> = cell_model::LOAD_TOOLS
            .iter()
            .filter(|t| t.threads)
            .map(|t| t.name)
            .collect();
        return Some(format!(
            "shape {} with {} connections, keep-alive {}, {} {} threads",
            combo.shape,
            sb.0,
            sb.1,
            sb.2,
            threaded.join(" and ")
        ));
    }
    let cpus = |s: &cell_schema::HttpSettings| -> [Vec<u32>; 2] {
        if s.server_cpus.is_empty() {
            [
                s.server_cpu.into_iter().collect(),
                s.load_cpu.into_iter().collect(),
            ]
        } else {
            [s.server_cpus.clone(), s.load_cpus.clone()]
        }
    };
    let (ca, cb) = (cpus(a), cpus(b));
    (ca != cb).then(|| {
        format!(
            "pinned to server CPUs {:?} and load CPUs {:?}",
            cb[0], cb[1]
        )
    })
}

/// A failed soak server is a failure; a drift (by the drift rule read with `rules`) is one
/// when `fail_on_drift` says so, else a notice; an unknown drift is a notice.
fn soak_findings(
    f: &mut SuiteFindings,
    name: &str,
    s: &CellSoakServer,
    rules: Option<&SoakConfig>,
) {
    let r = &s.result;
    if let Some(e) = &r.error {
        f.failures
            .push(format!("soak server {name} (job {}): {e}", s.job));
        return;
    }
    let rules = rules.unwrap_or(&s.settings.config);
    let verdict = crate::job::drift(r.fit.as_ref(), r.fit_minima.as_ref(), rules);
    match (verdict, &r.fit) {
        (Drift::Drifted, Some(fit)) => {
            let line = format!(
                "soak server {name} drifted: RSS {:+.1} KiB/min, R² {:.3}, {:+.1} KiB ({:+.1}% of the window mean) over the window; minima fit {}",
                fit.slope_kib_per_min,
                fit.r2,
                fit.projected_kib,
                fit.projected_share * 100.0,
                r.fit_minima.as_ref().map_or("n/a".into(), |m| format!(
                    "{:+.1} KiB/min, R² {:.3}",
                    m.slope_kib_per_min, m.r2
                ))
            );
            if rules.fail_on_drift {
                f.failures.push(line);
            } else {
                f.notices.push(line);
            }
        }
        (Drift::Unknown, _) => f.notices.push(format!(
            "soak server {name}: too few samples in the fit window to call flat or drifted"
        )),
        _ => {}
    }
}

fn machine_notice(
    f: &mut SuiteFindings,
    name: &str,
    now: &CellHttpServer,
    base: &CellHttpServer,
    base_name: &str,
) {
    if now.machine.cpu_model != base.machine.cpu_model {
        let line = format!(
            "http server {name}: CPU model changed from {} ({base_name}) to {}",
            base.machine.cpu_model, now.machine.cpu_model
        );
        if !f.notices.contains(&line) {
            f.notices.push(line);
        }
    }
}

//! `[http.servers]`: each server's toolchain, argv, port and the workloads it serves.

use std::collections::BTreeMap;
use std::path::Path;

use cell_schema::{ConcurrencyModel, ServerName, ToolchainName, WorkloadName};

use super::{Expect, RawServer, Server, Workload, names_in, resolve_expect};
use crate::error::FieldError;
use crate::template::{Arg, Piece};
use crate::{Toolchain, check_name, check_tools, existing_dir, join};

/// Resolves `[http.servers]`: at least one server, each on a port of its own.
pub(super) fn resolve_servers(
    source_dir: &Path,
    raw: BTreeMap<String, RawServer>,
    workloads: &BTreeMap<WorkloadName, Workload>,
    legacy: bool,
    toolchains: &BTreeMap<ToolchainName, Toolchain>,
) -> Result<BTreeMap<ServerName, Server>, FieldError> {
    let mut servers = BTreeMap::new();
    let mut ports: BTreeMap<u16, String> = BTreeMap::new();
    for (name, s) in raw {
        let answers = served_workloads(&name, &s, workloads, legacy)?;
        let server = resolve_server(source_dir, &name, s, answers, toolchains, &mut ports)?;
        servers.insert(server.name.clone(), server);
    }
    if servers.is_empty() {
        return Err(FieldError::new(
            "http.servers",
            "no servers: add a [http.servers.<name>] table",
        ));
    }
    Ok(servers)
}

/// The workloads a server serves (all by default) with what it must answer to each: the
/// workload's `expect`, or without `[[http.workloads]]` the server's own `expect` over
/// `[http.expect]`.
fn served_workloads(
    name: &str,
    raw: &RawServer,
    workloads: &BTreeMap<WorkloadName, Workload>,
    legacy: bool,
) -> Result<BTreeMap<WorkloadName, Expect>, FieldError> {
    let f = |x: &str| format!("http.servers.{name}.{x}");
    if !legacy && raw.expect.is_some() {
        return Err(FieldError::new(
            f("expect"),
            "with [[http.workloads]] each workload says what it expects: remove it, or drop the workload from this server's `workloads`",
        ));
    }
    let chosen: Vec<&str> = match &raw.workloads {
        None => workloads.keys().map(WorkloadName::as_str).collect(),
        Some(l) => names_in(
            &f("workloads"),
            l,
            &workloads
                .keys()
                .map(WorkloadName::as_str)
                .collect::<Vec<_>>(),
        )?,
    };
    chosen
        .into_iter()
        .map(|w| {
            let wl = &workloads[w];
            let e = if legacy {
                resolve_expect(&f("expect"), &wl.expect, raw.expect.clone())?
            } else {
                wl.expect.clone()
            };
            Ok((wl.name.clone(), e))
        })
        .collect()
}

/// Resolves one server; `ports` holds the ports of the servers before it.
fn resolve_server(
    source_dir: &Path,
    name: &str,
    raw: RawServer,
    workloads: BTreeMap<WorkloadName, Expect>,
    toolchains: &BTreeMap<ToolchainName, Toolchain>,
    ports: &mut BTreeMap<u16, String>,
) -> Result<Server, FieldError> {
    let f = |x: &str| format!("http.servers.{name}.{x}");
    check_server_name(name)?;
    let Some(tc) = toolchains.get(raw.toolchain.as_str()) else {
        return Err(FieldError::new(
            f("toolchain"),
            format!(
                "unknown toolchain `{}`: toolchains are {}",
                raw.toolchain,
                join(toolchains.keys())
            ),
        ));
    };
    let build = server_argv(&f("build"), raw.build.as_deref().unwrap_or_default())?;
    let run = server_argv(&f("run"), &raw.run)?;
    check_server_run(&f("run"), &run)?;
    for (which, args) in [("build", &build), ("run", &run)] {
        check_server_args(&f(which), tc, args)?;
    }
    claim_port(&f("port"), name, raw.port, ports)?;
    let source = existing_dir(&f("source"), source_dir.join(&raw.source))?;
    let model = raw
        .model
        .as_deref()
        .map(|m| model(&f("model"), m))
        .transpose()?;
    let sname = ServerName::from(name);
    Ok(Server {
        name: sname,
        toolchain: tc.name.clone(),
        label: raw.label.unwrap_or_else(|| name.to_owned()),
        source,
        build,
        run,
        port: raw.port,
        workloads,
        keep_alive: raw.keep_alive.unwrap_or(true),
        model,
    })
}

/// A concurrency model by its name; the error lists them all.
fn model(field: &str, name: &str) -> Result<ConcurrencyModel, FieldError> {
    ConcurrencyModel::parse(name).ok_or_else(|| {
        FieldError::new(
            field,
            format!(
                "unknown model `{name}`: models are {}",
                join(ConcurrencyModel::ALL.iter().map(|m| m.as_str()))
            ),
        )
    })
}

fn check_server_name(name: &str) -> Result<(), FieldError> {
    let field = || format!("http.servers.{name}");
    check_name(name).map_err(|e| FieldError::new(field(), e.to_string()))?;
    if name == "overlay" {
        // soak/overlay.svg is the chart of every server together.
        return Err(FieldError::new(
            field(),
            "`overlay` is reserved (soak/overlay.svg): pick another name",
        ));
    }
    Ok(())
}

/// A server's build or run argv, parsed (an empty build is allowed: nothing to build).
fn server_argv(field: &str, args: &[String]) -> Result<Vec<Arg>, FieldError> {
    args.iter()
        .map(|a| Arg::parse(a).map_err(|e| FieldError::new(field, e.to_string())))
        .collect()
}

/// A server's run starts something and tells it its port.
fn check_server_run(field: &str, run: &[Arg]) -> Result<(), FieldError> {
    if run.is_empty() {
        return Err(FieldError::new(
            field,
            "empty: write the command that starts the server",
        ));
    }
    if !run.iter().any(|a| a.has(&Piece::Port)) {
        return Err(FieldError::new(
            field,
            "the run never names {port}: the server must be told where to listen",
        ));
    }
    Ok(())
}

/// No `{phase}`, and only tools of the server's toolchain, checked argument by argument.
fn check_server_args(field: &str, tc: &Toolchain, args: &[Arg]) -> Result<(), FieldError> {
    for a in args {
        if a.has(&Piece::Phase) {
            return Err(FieldError::new(
                field,
                "{phase} belongs to workload rows, not servers",
            ));
        }
        check_tools(field, tc, std::iter::once(a))?;
    }
    Ok(())
}

/// A port of 1024 or above that no server before this one has.
fn claim_port(
    field: &str,
    name: &str,
    port: u16,
    ports: &mut BTreeMap<u16, String>,
) -> Result<(), FieldError> {
    if port < 1024 {
        return Err(FieldError::new(
            field,
            format!("{port}: use a port of 1024 or above"),
        ));
    }
    if let Some(other) = ports.insert(port, name.to_owned()) {
        return Err(FieldError::new(
            field,
            format!("{port} is also the port of server `{other}`: give each its own"),
        ));
    }
    Ok(())
}

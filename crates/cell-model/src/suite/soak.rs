//! `[soak]`: the servers soaked and the soak every one of them gets.

use cell_schema::{ServerName, SoakConfig};

use super::{HttpDef, RawSoak, SoakDef, positive};
use crate::error::FieldError;

impl SoakDef {
    /// What the soak settings must satisfy (config and command line alike).
    pub fn validate(&self) -> Result<(), FieldError> {
        let c = &self.config;
        positive("soak.duration", c.duration_s)?;
        positive("soak.interval", c.interval_s)?;
        positive("soak.minima_window", c.minima_window_s)?;
        window_start("soak.window_start", c.window_start_s, c.duration_s)?;
        // At least three minima windows, or the sawtooth guard has nothing to fit.
        if (c.duration_s - c.window_start_s) / c.minima_window_s < 3.0 {
            return Err(FieldError::new(
                "soak.minima_window",
                format!(
                    "{} s windows over the {} s fit window give fewer than 3 minima: shorten it or start the fit earlier",
                    c.minima_window_s,
                    c.duration_s - c.window_start_s
                ),
            ));
        }
        Ok(())
    }
}

/// The start of the soak's fit window: from 0 up to (not including) the duration.
fn window_start(field: &str, v: f64, duration_s: f64) -> Result<f64, FieldError> {
    if v.is_finite() && v >= 0.0 && v < duration_s {
        Ok(v)
    } else {
        Err(FieldError::new(
            field,
            format!("{v}: write a number of seconds from 0 up to the duration ({duration_s})"),
        ))
    }
}

/// Resolves `[soak]` against the resolved `[http]` (its servers are soaked).
pub(crate) fn resolve_soak(raw: &RawSoak, http: Option<&HttpDef>) -> Result<SoakDef, FieldError> {
    let Some(http) = http else {
        return Err(FieldError::new(
            "soak",
            "the soak suite soaks the servers of [http]: add an [http] table with servers",
        ));
    };
    let servers = soak_servers(raw.servers.as_deref(), http)?;
    let secs = |f: &str, v: Option<f64>, d: f64| positive(&format!("soak.{f}"), v.unwrap_or(d));
    let duration_s = secs("duration", raw.duration, 3600.0)?;
    let window_start_s = window_start(
        "soak.window_start",
        raw.window_start.unwrap_or(600.0),
        duration_s,
    )?;
    let drift_share = secs("drift_share", raw.drift_share, 0.05)?;
    let min_r2 = raw.min_r2.unwrap_or(0.5);
    if !(0.0..=1.0).contains(&min_r2) {
        return Err(FieldError::new(
            "soak.min_r2",
            format!("{min_r2}: write a number from 0 to 1"),
        ));
    }
    let rate = raw.rate.unwrap_or(200);
    if rate == 0 {
        return Err(FieldError::new(
            "soak.rate",
            "0: write requests per second above 0",
        ));
    }
    let connections = raw.connections.unwrap_or(4);
    if connections == 0 {
        return Err(FieldError::new(
            "soak.connections",
            "0: write a whole number above 0",
        ));
    }
    let def = SoakDef {
        servers,
        config: SoakConfig {
            rate,
            connections,
            duration_s,
            interval_s: raw.interval.unwrap_or(1.0),
            window_start_s,
            minima_window_s: raw.minima_window.unwrap_or(60.0),
            drift_share,
            min_r2,
            fail_on_drift: raw.fail_on_drift.unwrap_or(true),
            keep_alive: raw.keep_alive.unwrap_or(true),
        },
    };
    def.validate()?;
    Ok(def)
}

/// The servers `[soak]` names, each a server of `[http]`; none named: all of them.
fn soak_servers(raw: Option<&[String]>, http: &HttpDef) -> Result<Vec<ServerName>, FieldError> {
    let Some(list) = raw else {
        return Ok(http.servers.keys().cloned().collect());
    };
    list.iter()
        .enumerate()
        .map(|(i, s)| {
            http.server(s)
                .map(|server| server.name.clone())
                .map_err(|e| FieldError::new(format!("soak.servers[{i}]"), e.to_string()))
        })
        .collect()
}

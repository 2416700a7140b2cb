//! The host as the report's header states it: when the run started, its load average then,
//! its CPUs.

use serde::Serialize;

/// What the header says of the host, read once before anything is timed.
#[derive(Clone, Debug, Serialize)]
pub struct Host {
    /// UTC start, `YYYY-MM-DDTHH:MM:SSZ`.
    pub started: String,
    /// The 1, 5 and 15 minute load averages at the start (`/proc/loadavg`), when readable.
    pub loadavg: Option<[f64; 3]>,
    /// CPUs this process may use.
    pub nproc: usize,
    /// The first `model name` of `/proc/cpuinfo`, when there is one.
    pub cpu: Option<String>,
}

impl Host {
    /// Reads them now.
    pub fn now() -> Self {
        let read = |p: &str| std::fs::read_to_string(p).ok();
        Self {
            started: cell_schema::time::format_utc(cell_schema::time::now_secs()),
            loadavg: read("/proc/loadavg").as_deref().and_then(loadavg),
            nproc: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
            cpu: read("/proc/cpuinfo").as_deref().and_then(cpu_model),
        }
    }

    /// One line: start, load, machine.
    pub fn line(&self) -> String {
        let load = self.loadavg.map_or_else(
            || "unknown".into(),
            |[a, b, c]| format!("{a:.2} {b:.2} {c:.2} (1, 5, 15 min)"),
        );
        format!(
            "started {}, load average {load}, {} CPUs ({})",
            self.started,
            self.nproc,
            self.cpu.as_deref().unwrap_or("CPU model unknown")
        )
    }
}

/// The three load averages of `/proc/loadavg`'s text.
fn loadavg(text: &str) -> Option<[f64; 3]> {
    let mut it = text.split_whitespace().map(str::parse::<f64>);
    Some([it.next()?.ok()?, it.next()?.ok()?, it.next()?.ok()?])
}

/// The first `model name` of `/proc/cpuinfo`'s text.
fn cpu_model(text: &str) -> Option<String> {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim() == "model name")
        .map(|(_, v)| v.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_load_and_the_model_are_read_from_procs_text() {
        assert_eq!(
            loadavg("1.01 1.53 1.60 3/103 25998\n"),
            Some([1.01, 1.53, 1.60])
        );
        assert_eq!(loadavg("1.0"), None);
        let info = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n";
        assert_eq!(cpu_model(info).as_deref(), Some("AMD EPYC 7B13"));
        assert_eq!(cpu_model("processor : 0\n"), None);
    }
}

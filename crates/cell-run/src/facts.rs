//! Host facts: what the machine is, never who it is (no hostname).

use std::process::Command;

use cell_schema::{Machine, RunnerImage};

/// Reads the facts of this machine. `pinned_cpu` is what the timing engine pinned to.
pub fn machine(pinned_cpu: Option<u32>) -> Machine {
    Machine {
        cpu_model: cpu_model(),
        nproc: std::thread::available_parallelism()
            .map_or(1, |n| u32::try_from(n.get()).unwrap_or(u32::MAX)),
        memory_bytes: memory_bytes(),
        kernel: kernel(),
        os_release: os_release(),
        runner_image: runner_image(),
        pinned_cpu,
        timing: None,
    }
}

fn runner_image() -> Option<RunnerImage> {
    let os = std::env::var("ImageOS").ok().filter(|s| !s.is_empty())?;
    let version = std::env::var("ImageVersion").unwrap_or_default();
    Some(RunnerImage { os, version })
}

fn capture(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// `key : value` lines (cpuinfo, lscpu, meminfo, os-release with `=`).
fn field<'a>(text: &'a str, key: &str, sep: char) -> Option<&'a str> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(sep)?;
        (k.trim() == key).then(|| v.trim().trim_matches('"'))
    })
}

/// The `sysctl` keys a macOS cell reads, in one call.
const SYSCTL_KEYS: &[&str] = &["machdep.cpu.brand_string", "hw.memsize"];

/// One key of `sysctl`'s output (`name: value` lines, as `sysctl NAME…` prints them).
pub fn sysctl_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    field(text, key, ':').filter(|v| !v.is_empty())
}

/// `sw_vers` output (`ProductName:\tmacOS`, `ProductVersion:\t15.1`, `BuildVersion:\t24B83`)
/// as one line: `macOS 15.1 (24B83)`.
pub fn sw_vers_line(text: &str) -> Option<String> {
    let name = field(text, "ProductName", ':')?;
    let version = field(text, "ProductVersion", ':')?;
    Some(match field(text, "BuildVersion", ':') {
        Some(b) if !b.is_empty() => format!("{name} {version} ({b})"),
        _ => format!("{name} {version}"),
    })
}

/// `sysctl` of [`SYSCTL_KEYS`], run once per process.
fn sysctl() -> &'static str {
    static OUT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    OUT.get_or_init(|| capture("sysctl", SYSCTL_KEYS).unwrap_or_default())
}

fn cpu_model() -> String {
    if cfg!(target_os = "macos") {
        return sysctl_value(sysctl(), "machdep.cpu.brand_string")
            .unwrap_or("unknown")
            .to_owned();
    }
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    cpu_model_from(&info, || capture("lscpu", &[]))
}

/// The model from `/proc/cpuinfo`; arm64 Linux has no `model name`, so fall back to
/// implementer/part, then to `lscpu`'s `Model name`.
pub fn cpu_model_from(cpuinfo: &str, lscpu: impl FnOnce() -> Option<String>) -> String {
    if let Some(m) = field(cpuinfo, "model name", ':') {
        return m.to_owned();
    }
    if let (Some(imp), Some(part)) = (
        field(cpuinfo, "CPU implementer", ':'),
        field(cpuinfo, "CPU part", ':'),
    ) {
        let name = arm_part_name(imp, part);
        return match name {
            Some(n) => format!("{n} (implementer {imp}, part {part})"),
            None => format!("arm64 implementer {imp}, part {part}"),
        };
    }
    lscpu()
        .and_then(|t| field(&t, "Model name", ':').map(str::to_owned))
        .unwrap_or_else(|| "unknown".into())
}

/// Arm cores seen on hosted runners and common clouds.
fn arm_part_name(implementer: &str, part: &str) -> Option<&'static str> {
    let part = u32::from_str_radix(part.trim_start_matches("0x"), 16).ok()?;
    let imp = u32::from_str_radix(implementer.trim_start_matches("0x"), 16).ok()?;
    Some(match (imp, part) {
        (0x41, 0xd0c) => "Arm Neoverse-N1",
        (0x41, 0xd40) => "Arm Neoverse-V1",
        (0x41, 0xd49) => "Arm Neoverse-N2",
        (0x41, 0xd4f) => "Arm Neoverse-V2",
        (0x41, 0xd8e) => "Arm Neoverse-N3",
        (0x41, 0xd84) => "Arm Neoverse-V3",
        (0x41, 0xd08) => "Arm Cortex-A72",
        (0x41, 0xd0b) => "Arm Cortex-A76",
        (0xc0, 0xac3) => "Ampere-1",
        (0xc0, 0xac4) => "Ampere-1a",
        _ => return None,
    })
}

fn memory_bytes() -> u64 {
    if cfg!(target_os = "macos") {
        return sysctl_value(sysctl(), "hw.memsize")
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
    }
    let info = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    field(&info, "MemTotal", ':')
        .and_then(|v| v.trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}

fn kernel() -> String {
    // SAFETY: uname fills a zeroed struct of C strings; nodename (the hostname) is never read.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&raw mut u) } != 0 {
        return "unknown".into();
    }
    let s = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|c| **c != 0)
            .map(|c| c.to_ne_bytes()[0])
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    format!(
        "{} {} {} {}",
        s(&u.sysname),
        s(&u.release),
        s(&u.version),
        s(&u.machine)
    )
}

fn os_release() -> String {
    if cfg!(target_os = "macos") {
        return capture("sw_vers", &[])
            .and_then(|t| sw_vers_line(&t))
            .unwrap_or_else(|| "unknown".into());
    }
    let text = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
    field(&text, "PRETTY_NAME", '=')
        .unwrap_or("unknown")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x86_model_name() {
        let info = "processor\t: 0\nmodel name\t: AMD EPYC 7763 64-Core Processor\n";
        assert_eq!(
            cpu_model_from(info, || None),
            "AMD EPYC 7763 64-Core Processor"
        );
    }

    #[test]
    fn arm64_falls_back_to_implementer_part() {
        let info =
            "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n";
        assert_eq!(
            cpu_model_from(info, || None),
            "Arm Neoverse-N1 (implementer 0x41, part 0xd0c)"
        );
        let unknown = "CPU implementer\t: 0x61\nCPU part\t: 0x022\n";
        assert_eq!(
            cpu_model_from(unknown, || None),
            "arm64 implementer 0x61, part 0x022"
        );
    }

    #[test]
    fn falls_back_to_lscpu() {
        let got = cpu_model_from("processor : 0\n", || {
            Some("Architecture: aarch64\nModel name:  Neoverse-V2\n".into())
        });
        assert_eq!(got, "Neoverse-V2");
    }

    /// `sysctl machdep.cpu.brand_string hw.memsize` on an M-series runner, as documented
    /// in `sysctl(8)`: one `name: value` line per key.
    #[test]
    fn sysctl_output_is_read_by_key() {
        let out = "machdep.cpu.brand_string: Apple M1 (Virtual)\nhw.memsize: 7516192768\n";
        assert_eq!(
            sysctl_value(out, "machdep.cpu.brand_string"),
            Some("Apple M1 (Virtual)")
        );
        assert_eq!(sysctl_value(out, "hw.memsize"), Some("7516192768"));
        assert_eq!(sysctl_value(out, "hw.ncpu"), None);
        assert_eq!(sysctl_value("hw.memsize:\n", "hw.memsize"), None);
    }

    /// `sw_vers` as documented in `sw_vers(1)`, tab-separated.
    #[test]
    fn sw_vers_output_is_one_line() {
        let out = "ProductName:\t\tmacOS\nProductVersion:\t\t15.1\nBuildVersion:\t\t24B83\n";
        assert_eq!(sw_vers_line(out).as_deref(), Some("macOS 15.1 (24B83)"));
        assert_eq!(
            sw_vers_line("ProductName: macOS\nProductVersion: 14.7\n").as_deref(),
            Some("macOS 14.7")
        );
        assert_eq!(sw_vers_line("nonsense"), None);
    }

    #[test]
    fn kernel_has_no_hostname() {
        let k = kernel();
        let host = capture("uname", &["-n"]).unwrap_or_default();
        assert!(k.split(' ').count() >= 4, "{k}");
        // Short names ("x") could occur in any kernel string by chance; real hostnames do not.
        if host.len() >= 4 {
            assert!(!k.contains(&host), "{k}");
        }
    }
}

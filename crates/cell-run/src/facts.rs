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

fn cpu_model() -> String {
    if cfg!(target_os = "macos") {
        return capture("sysctl", &["-n", "machdep.cpu.brand_string"])
            .unwrap_or_else(|| "unknown".into());
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
        return capture("sysctl", &["-n", "hw.memsize"])
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
        let name = capture("sw_vers", &["-productName"]).unwrap_or_default();
        let ver = capture("sw_vers", &["-productVersion"]).unwrap_or_default();
        return format!("{name} {ver}").trim().to_owned();
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

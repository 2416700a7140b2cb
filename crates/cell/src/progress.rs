//! Progress on stderr: a bar when stderr is a terminal, plain lines otherwise, nothing with -q.

use std::io::IsTerminal as _;

use cell_run::Event;
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::Cli;

/// Reports a job's events.
pub struct Progress {
    job: String,
    bar: Option<ProgressBar>,
    quiet: bool,
    verbose: bool,
}

impl Progress {
    /// A reporter for one job.
    pub fn new(cli: &Cli, job: &str) -> Self {
        let tty = std::io::stderr().is_terminal();
        let bar = (tty && !cli.quiet).then(|| {
            let b = ProgressBar::new(0);
            b.set_style(
                ProgressStyle::with_template("{prefix:>8} [{bar:30}] {pos}/{len} rounds {msg}")
                    .expect("static template")
                    .progress_chars("=> "),
            );
            b.set_prefix(job.to_owned());
            b
        });
        Self {
            job: job.to_owned(),
            bar,
            quiet: cli.quiet,
            verbose: cli.verbose,
        }
    }

    /// Shows one event.
    pub fn event(&mut self, e: &Event) {
        // A cached tree that was not what its install left is said even under -q.
        if let Event::Reinstalled {
            toolchain,
            dir,
            why,
        } = e
        {
            let line = format!(
                "[{}] the cached tree of {toolchain} ({}) differs from its manifest: {why}; removed and installed again",
                self.job,
                dir.display()
            );
            let line = cell_schema::escape::terminal(&line);
            match &self.bar {
                Some(b) => b.println(line),
                None => eprintln!("{line}"),
            }
            return;
        }
        if self.quiet {
            return;
        }
        match (e, &self.bar) {
            (Event::Building(r), Some(b)) => b.set_message(format!("building {r}")),
            (Event::Building(r), None) => {
                if self.verbose {
                    eprintln!("[{}] building {r}", self.job);
                }
            }
            (Event::Skipped(s), Some(b)) => {
                b.println(format!("[{}] skipped {}: {}", self.job, s.row, s.message));
            }
            (Event::Skipped(s), None) => {
                eprintln!("[{}] skipped {}: {}", self.job, s.row, s.message);
            }
            (Event::Timing { units }, Some(b)) => b.set_message(format!("timing {units} binaries")),
            (Event::Timing { units }, None) => eprintln!("[{}] timing {units} binaries", self.job),
            (Event::Round(r), Some(b)) => {
                b.set_length(u64::from(r.planned));
                b.set_position(u64::from(r.done));
            }
            (Event::Round(r), None) => {
                if self.verbose {
                    eprintln!("[{}] round {}/{}", self.job, r.done, r.planned);
                }
            }
            (Event::Reinstalled { .. }, _) => {}
        }
    }

    /// Clears the bar.
    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}
